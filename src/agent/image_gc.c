/* image_gc.c - garbage collection: mark what the images in index.json
 * reach (manifests, configs, layer blobs, unpacked layers by diff_id) and
 * what running containers use, then sweep blobs/sha256 and layers/sha256
 * of everything else, and tmp/ of the entries of dead processes. */
#include "../common/compat.h"

#include <dirent.h>
#include <fcntl.h>

#include "../common/strmap.h"
#include "image-internal.h"

struct gc {
        struct image_store *st;
        struct strmap blobs;  /* digests to keep */
        struct strmap layers; /* diff_id hexes to keep */
};

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

static int mark_config(struct gc *g, const char *digest, struct tess_error **err)
{
        struct image_config c;
        int r;

        strmap_put(&g->blobs, digest, 1);
        r = image_config_load(g->st, digest, &c, err);
        if (r < 0)
                return absent_is_fine(r, err);
        for (size_t i = 0; i < c.n_diff_ids; i++)
                strmap_put(&g->layers, c.diff_ids[i] + strlen("sha256:"), 1);
        image_config_release(&c);
        return 0;
}

static int mark_manifest(struct gc *g, const char *digest, bool in_index, struct tess_error **err)
{
        struct image_manifest m;
        int r;

        strmap_put(&g->blobs, digest, 1);
        r = image_manifest_load(g->st, digest, &m, err);
        if (r < 0)
                return absent_is_fine(r, err);
        if (!m.is_index) {
                for (size_t i = 0; i < m.n_layers; i++)
                        strmap_put(&g->blobs, m.layers[i].digest, 1);
                r = mark_config(g, m.config.digest, err);
        }
        for (size_t i = 0; r >= 0 && !in_index && i < m.n_manifests; i++)
                r = mark_manifest(g, m.manifests[i].digest, true, err);
        image_manifest_release(&m);
        return r;
}

static void mark_in_use(struct gc *g, const char *const *in_use)
{
        _cleanup_free_ char *prefix = image_store_path(g->st, "layers/sha256/");
        size_t n = strlen(prefix);

        for (const char *const *p = in_use; p && *p; p++) {
                if (strncmp(*p, prefix, n) == 0)
                        strmap_put(&g->layers, *p + n, 1);
        }
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

static int gc_locked(struct gc *g, const char *const *in_use, int64_t *freed, struct tess_error **err)
{
        _cleanup_free_ char *blobs_dir = image_store_path(g->st, "blobs/sha256");
        _cleanup_close_ int blobsfd = -1;
        struct image_descriptor *d;
        size_t n;
        int r;

        r = image_index_load(g->st, &d, &n, err);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = mark_manifest(g, d[i].digest, false, err);
        image_descriptors_free(d, n);
        if (r < 0)
                return r;
        mark_in_use(g, in_use);

        blobsfd = open(blobs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (blobsfd < 0)
                return tess_err(err, errno, "opening '%s': %s", blobs_dir, strerror(errno));
        r = sweep(blobsfd, "blobs/sha256", &g->blobs, "sha256:", freed, err);
        if (r >= 0)
                r = sweep(g->st->layersfd, "layers/sha256", &g->layers, "", freed, err);
        if (r >= 0)
                r = image_store_clean_tmp(g->st, err);
        return r;
}

int image_store_gc(struct image_store *st, const char *const *in_use, int64_t *freed_bytes, struct tess_error **err)
{
        struct gc g = { .st = st };
        int64_t freed = 0;
        int r;

        strmap_init(&g.blobs);
        strmap_init(&g.layers);
        r = image_store_lock(st, err);
        if (r >= 0) {
                r = gc_locked(&g, in_use, &freed, err);
                image_store_unlock(st);
        }
        strmap_free(&g.blobs);
        strmap_free(&g.layers);
        if (r < 0)
                return tess_err_wrap(err, "collecting garbage in '%s'", st->dir);
        if (freed_bytes)
                *freed_bytes = freed;
        return 0;
}
