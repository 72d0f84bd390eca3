/* image_gc.c - garbage collection: mark what the images in index.json
 * reach (manifests, configs, layer blobs, unpacked layers by diff_id) and
 * what containers use, then sweep blobs/sha256 and layers/sha256 of
 * everything else, used/ of the records of images no longer tagged, and
 * tmp/ of the entries of dead processes.  gc takes the gc lock (it waits
 * for the holds: pulls and container starts) and the store lock. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>

#include "common/strmap.h"
#include "image/image-internal.h"

/* A blob that is gone is nothing to keep; any other failure stops the gc
 * rather than risk deleting what an unreadable image needs. */
static int absent_is_fine(int r, struct tess_error **err)
{
        if (r != -ENOENT)
                return r;
        if (err)
                *err = tess_error_free(*err);
        return 0;
}

static int reach_config(struct image_store *st, const char *digest, image_reach_fn visit, void *data,
                        struct tess_error **err)
{
        struct image_config c;
        int r;

        visit(data, false, digest);
        r = image_config_load(st, digest, &c, err);
        if (r < 0)
                return absent_is_fine(r, err);
        for (size_t i = 0; i < c.n_diff_ids; i++)
                visit(data, true, c.diff_ids[i] + strlen("sha256:"));
        image_config_release(&c);
        return 0;
}

static int reach_manifest(struct image_store *st, const char *digest, bool in_index, image_reach_fn visit,
                          void *data, struct tess_error **err)
{
        struct image_manifest m;
        int r;

        visit(data, false, digest);
        r = image_manifest_load(st, digest, &m, err);
        if (r < 0)
                return absent_is_fine(r, err);
        if (!m.is_index) {
                for (size_t i = 0; i < m.n_layers; i++)
                        visit(data, false, m.layers[i].digest);
                r = reach_config(st, m.config.digest, visit, data, err);
        }
        for (size_t i = 0; r >= 0 && !in_index && i < m.n_manifests; i++)
                r = reach_manifest(st, m.manifests[i].digest, true, visit, data, err);
        image_manifest_release(&m);
        return r;
}

int image_reach(struct image_store *st, const char *digest, image_reach_fn visit, void *data,
                struct tess_error **err)
{
        return reach_manifest(st, digest, false, visit, data, err);
}

const char *image_layer_dir_key(const struct image_store *st, const char *dir)
{
        size_t n = strlen(st->dir);

        if (strncmp(dir, st->dir, n) != 0 || strncmp(dir + n, "/layers/sha256/", 15) != 0)
                return NULL;
        return dir + n + 15;
}

struct keep {
        struct strmap blobs;  /* digests */
        struct strmap layers; /* diff_id hexes */
};

static void keep_reached(void *data, bool layer, const char *key)
{
        struct keep *k = data;
        strmap_put(layer ? &k->layers : &k->blobs, key, 1);
}

/* Remove the entries of dirfd whose key (prefix + name) is not kept. */
static int sweep(int dirfd, const char *what, const struct strmap *keep, const char *prefix, int64_t *freed,
                 struct tess_error **err)
{
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (fd < 0 || !(d = fdopendir(fd))) {
                r = tess_err(err, errno, "reading %s: %s", what, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return r;
        }
        rewinddir(d);
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *key = xasprintf("%s%s", prefix, de->d_name);
                if (streq(de->d_name, ".") || streq(de->d_name, "..") || strmap_get(keep, key) >= 0)
                        continue;
                r = layer_remove(dirfd, de->d_name, freed);
                if (r < 0)
                        r = tess_err(err, -r, "removing %s/%s: %s", what, de->d_name, strerror(-r));
        }
        closedir(d);
        return r;
}

static int mark_and_sweep(struct image_store *st, struct keep *k, const char *const *in_use, int64_t *freed,
                          struct tess_error **err)
{
        _cleanup_free_ char *blobs_dir = image_store_path(st, "blobs/sha256");
        _cleanup_close_ int blobsfd = -1;
        struct image_descriptor *d;
        size_t n;
        int r;

        r = image_index_load(st, &d, &n, err);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = image_reach(st, d[i].digest, keep_reached, k, err);
        image_descriptors_free(d, n);
        if (r < 0)
                return r;
        for (const char *const *p = in_use; p && *p; p++) {
                const char *key = image_layer_dir_key(st, *p);
                if (key)
                        strmap_put(&k->layers, key, 1);
        }

        blobsfd = open(blobs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (blobsfd < 0)
                return tess_err(err, errno, "opening '%s': %s", blobs_dir, strerror(errno));
        r = sweep(blobsfd, "blobs/sha256", &k->blobs, "sha256:", freed, err);
        if (r >= 0)
                r = sweep(st->layersfd, "layers/sha256", &k->layers, "", freed, err);
        if (r >= 0) /* the records of manifests no longer tagged (nor reached) */
                r = sweep(st->usedfd, "used", &k->blobs, "sha256:", NULL, err);
        if (r >= 0)
                r = image_store_clean_tmp(st, err);
        return r;
}

int image_gc_locked(struct image_store *st, const char *const *in_use, int64_t *freed, struct tess_error **err)
{
        struct keep k;
        int r;

        strmap_init(&k.blobs);
        strmap_init(&k.layers);
        r = mark_and_sweep(st, &k, in_use, freed, err);
        strmap_free(&k.blobs);
        strmap_free(&k.layers);
        return r;
}

int image_store_gc(struct image_store *st, const char *const *in_use, int64_t *freed_bytes, struct tess_error **err)
{
        int64_t freed = 0;
        int gc_fd = -1;
        int r;

        r = image_gc_lock(st, true, &gc_fd, err);
        if (r >= 0) {
                r = image_store_lock(st, err);
                if (r >= 0) {
                        r = image_gc_locked(st, in_use, &freed, err);
                        image_store_unlock(st);
                }
                image_gc_unlock(gc_fd);
        }
        if (r < 0)
                return tess_err_wrap(err, "collecting garbage in '%s'", st->dir);
        if (freed_bytes)
                *freed_bytes = freed;
        return 0;
}
