/* image_index.c - the store's index.json, which lists the tagged images
 * (reference in the annotation org.opencontainers.image.ref.name): tag,
 * get, list, remove, and the image_info built from manifest and config.
 * Every change is made under the store lock and written atomically (a tmp
 * file, fsync, rename).
 *
 * When an image was last used is not in index.json: a container start
 * would then rewrite it under the store lock, which a tag holds while it
 * unpacks layers (minutes for a large image).  It is the mtime of an empty
 * file per image manifest, used/<manifest hex>, set (utimensat, no lock:
 * cheap) when the manifest is tagged (a pull, an import) and when a
 * container is created from it (image_store_use()).  It survives restarts;
 * a crash may lose the last seconds' updates, which only makes those images
 * look a little older.  Tags of the same manifest share it; gc removes the
 * records of manifests no longer tagged. */
#include "common/compat.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>

#include "common/fs.h"
#include "image/image-internal.h"

#define REF_MAX 255

/* ---- last use ---- */

void image_use_record(struct image_store *st, const char *digest)
{
        const char *hex = digest + strlen("sha256:");
        int fd;

        if (!image_digest_valid(digest) || utimensat(st->usedfd, hex, NULL, 0) == 0 || errno != ENOENT)
                return;
        fd = openat(st->usedfd, hex, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd); /* new: its mtime is now */
}

static int64_t mtime_usec(const struct stat *s)
{
        return (int64_t)s->st_mtim.tv_sec * 1000000 + s->st_mtim.tv_nsec / 1000;
}

int64_t image_last_used(struct image_store *st, const char *digest)
{
        _cleanup_free_ char *blob = NULL;
        struct stat s;

        if (!image_digest_valid(digest))
                return 0;
        if (fstatat(st->usedfd, digest + strlen("sha256:"), &s, 0) == 0)
                return mtime_usec(&s);
        blob = image_blob_path(st, digest); /* not recorded (an older store): when it came */
        return blob && stat(blob, &s) == 0 ? mtime_usec(&s) : 0;
}

/* ---- reading ---- */

int image_index_load(struct image_store *st, struct image_descriptor **ret, size_t *ret_n, struct tess_error **err)
{
        _cleanup_free_ char *path = image_store_path(st, "index.json"), *data = NULL;
        struct image_manifest m;
        size_t len;
        int r;

        r = fs_read_file(path, IMAGE_INDEX_MAX, &data, &len, err);
        if (r >= 0)
                r = image_manifest_parse(data, len, &m, err);
        if (r < 0)
                return tess_err_wrap(err, "reading '%s'", path);
        if (!m.is_index) {
                image_manifest_release(&m);
                return tess_err(err, EINVAL, "'%s' is not an OCI image index", path);
        }
        *ret = TAKE_PTR(m.manifests);
        *ret_n = m.n_manifests;
        m.n_manifests = 0;
        image_manifest_release(&m);
        return 0;
}

/* "name" without a tag or digest also means "name:latest". */
static bool ref_has_tag(const char *ref)
{
        const char *slash = strrchr(ref, '/');
        return strchr(slash ? slash + 1 : ref, ':') || strchr(ref, '@');
}

static bool ref_matches(const char *want, const char *have)
{
        size_t n = strlen(want);

        if (!have)
                return false;
        if (streq(want, have))
                return true;
        return !ref_has_tag(want) && strncmp(have, want, n) == 0 && streq(have + n, ":latest");
}

static const struct image_descriptor *find_ref(const struct image_descriptor *d, size_t n, const char *ref)
{
        for (size_t i = 0; i < n; i++) {
                if (streq_ptr(d[i].ref_name, ref))
                        return &d[i];
        }
        for (size_t i = 0; i < n; i++) {
                if (ref_matches(ref, d[i].ref_name))
                        return &d[i];
        }
        return NULL;
}

static char **strv_dup_layer_dirs(const struct image_store *st, const struct image_config *c)
{
        char **dirs = xcalloc(c->n_diff_ids + 1, sizeof(char *));

        for (size_t i = 0; i < c->n_diff_ids; i++)
                dirs[i] = image_layer_dir(st, c->diff_ids[i]);
        return dirs;
}

int image_info_load(struct image_store *st, const char *ref, const char *manifest_digest, struct image_info *ret,
                    struct tess_error **err)
{
        struct image_manifest m;
        struct image_config c;
        struct image_info info = { 0 };
        int r;

        r = image_manifest_load(st, manifest_digest, &m, err);
        if (r < 0)
                return r;
        if (m.is_index) {
                image_manifest_release(&m);
                return tess_err(err, EINVAL, "%s is an index, not an image manifest", manifest_digest);
        }
        r = image_config_load(st, m.config.digest, &c, err);
        if (r < 0) {
                image_manifest_release(&m);
                return r;
        }
        info.ref = xstrdup(ref);
        info.manifest_digest = xstrdup(manifest_digest);
        info.config_digest = TAKE_PTR(m.config.digest);
        for (size_t i = 0; i < m.n_layers; i++)
                info.size += m.layers[i].size;
        info.architecture = TAKE_PTR(c.architecture);
        info.labels = TAKE_PTR(c.labels);
        info.env = TAKE_PTR(c.env);
        info.entrypoint = TAKE_PTR(c.entrypoint);
        info.cmd = TAKE_PTR(c.cmd);
        info.working_dir = TAKE_PTR(c.working_dir);
        info.user = TAKE_PTR(c.user);
        info.created = TAKE_PTR(c.created);
        info.layer_dirs = strv_dup_layer_dirs(st, &c);
        info.last_used = image_last_used(st, manifest_digest);
        image_manifest_release(&m);
        image_config_release(&c);
        *ret = info;
        return 0;
}

void image_info_free(struct image_info *info)
{
        if (!info)
                return;
        free(info->ref);
        free(info->manifest_digest);
        free(info->config_digest);
        free(info->architecture);
        image_strv_free(info->labels);
        image_strv_free(info->env);
        image_strv_free(info->entrypoint);
        image_strv_free(info->cmd);
        free(info->working_dir);
        free(info->user);
        image_strv_free(info->layer_dirs);
        free(info->created);
        *info = (struct image_info){ 0 };
}

int image_store_get(struct image_store *st, const char *ref, struct image_info *ret, struct tess_error **err)
{
        struct image_descriptor *d;
        const struct image_descriptor *found;
        size_t n;
        int r;

        r = image_index_load(st, &d, &n, err);
        if (r < 0)
                return r;
        found = find_ref(d, n, ref);
        if (!found)
                r = tess_err(err, ENOENT, "no image '%s' in the store", ref);
        else
                r = image_info_load(st, found->ref_name, found->digest, ret, err);
        image_descriptors_free(d, n);
        return r;
}

int image_store_use(struct image_store *st, const char *ref, struct image_info *ret, struct tess_error **err)
{
        int r = image_store_get(st, ref, ret, err);

        if (r >= 0) {
                image_use_record(st, ret->manifest_digest);
                ret->last_used = image_last_used(st, ret->manifest_digest);
        }
        return r;
}

int image_store_list(struct image_store *st, struct image_info **ret, int *ret_n, struct tess_error **err)
{
        struct image_descriptor *d;
        struct image_info *infos;
        size_t n;
        int k = 0, r;

        r = image_index_load(st, &d, &n, err);
        if (r < 0)
                return r;
        infos = xcalloc(n + 1, sizeof(*infos));
        for (size_t i = 0; i < n; i++) {
                struct tess_error *e = NULL;
                if (!d[i].ref_name)
                        continue;
                if (image_info_load(st, d[i].ref_name, d[i].digest, &infos[k], &e) < 0) {
                        infos[k] = (struct image_info){ .ref = xstrdup(d[i].ref_name),
                                                        .manifest_digest = xstrdup(d[i].digest),
                                                        .last_used = image_last_used(st, d[i].digest) };
                        tess_error_free(e);
                }
                k++;
        }
        image_descriptors_free(d, n);
        *ret = infos;
        *ret_n = k;
        return 0;
}

/* ---- changing ---- */

static int index_read_json(struct image_store *st, json_t **ret, struct tess_error **err)
{
        _cleanup_free_ char *path = image_store_path(st, "index.json"), *data = NULL;
        json_error_t jerr;
        size_t len;
        json_t *j;
        int r;

        r = fs_read_file(path, IMAGE_INDEX_MAX, &data, &len, err);
        if (r < 0)
                return r;
        j = json_loadb(data, len, 0, &jerr);
        if (!j || !json_is_array(json_object_get(j, "manifests"))) {
                json_decref(j);
                return tess_err(err, EINVAL, "'%s' is not an OCI image index", path);
        }
        *ret = j;
        return 0;
}

static int index_write_json(struct image_store *st, json_t *j, struct tess_error **err)
{
        _cleanup_free_ char *path = image_store_path(st, "index.json");
        _cleanup_free_ char *text = json_dumps(j, JSON_INDENT(2));

        if (!text)
                abort(); /* out of memory */
        return fs_write_file_atomic(path, text, strlen(text), 0644, err);
}

/* Drop the entries tagged `ref` (exactly); how many there were. */
static size_t index_drop_ref(json_t *manifests, const char *ref)
{
        size_t dropped = 0;

        for (size_t i = 0; i < json_array_size(manifests);) {
                json_t *ann = json_object_get(json_array_get(manifests, i), "annotations");
                if (streq_ptr(json_string_value(json_object_get(ann, IMAGE_ANNOTATION_REF)), ref)) {
                        json_array_remove(manifests, i);
                        dropped++;
                } else {
                        i++;
                }
        }
        return dropped;
}

static int index_set_ref(struct image_store *st, const char *ref, const char *media_type, const char *digest,
                         int64_t size, struct tess_error **err)
{
        json_t *idx, *manifests;
        int r;

        r = index_read_json(st, &idx, err);
        if (r < 0)
                return r;
        manifests = json_object_get(idx, "manifests");
        index_drop_ref(manifests, ref);
        json_array_append_new(manifests, json_pack("{s:s, s:s, s:I, s:{s:s}}", "mediaType", media_type, "digest",
                                                   digest, "size", (json_int_t)size, "annotations",
                                                   IMAGE_ANNOTATION_REF, ref));
        r = index_write_json(st, idx, err);
        json_decref(idx);
        return r;
}

static bool ref_valid(const char *ref)
{
        size_t n = strlen(ref);

        if (n == 0 || n > REF_MAX)
                return false;
        for (const char *p = ref; *p; p++) {
                if (*p <= ' ' || *p > '~')
                        return false;
        }
        return true;
}

/* A manifest blob, parsed, and its size. */
static int manifest_load_sized(struct image_store *st, const char *digest, struct image_manifest *ret,
                               int64_t *ret_size, struct tess_error **err)
{
        _cleanup_free_ char *path = image_blob_path(st, digest);
        struct stat s;

        if (!path || stat(path, &s) < 0)
                return tess_err(err, ENOENT, "manifest %s is not in the store", digest);
        *ret_size = s.st_size;
        return image_manifest_load(st, digest, ret, err);
}

/* The image manifest `digest` names, or its linux/<host arch> entry if it
 * is an index; ret_digest and ret_size describe the manifest blob. */
static int resolve_manifest(struct image_store *st, const char *digest, struct image_manifest *ret,
                            char ret_digest[IMAGE_DIGEST_SIZE], int64_t *ret_size, struct tess_error **err)
{
        const struct image_descriptor *d;
        struct image_manifest m;
        int r;

        r = manifest_load_sized(st, digest, &m, ret_size, err);
        if (r < 0)
                return r;
        if (m.is_index) {
                d = image_manifest_pick_platform(&m);
                if (!d) {
                        image_manifest_release(&m);
                        return tess_err(err, ENOENT, "index %s has no image for linux/%s", digest,
                                        image_host_arch());
                }
                memcpy(ret_digest, d->digest, strlen(d->digest) + 1);
                image_manifest_release(&m);
                r = manifest_load_sized(st, ret_digest, &m, ret_size, err);
                if (r < 0)
                        return r;
                if (m.is_index) {
                        image_manifest_release(&m);
                        return tess_err(err, EINVAL, "index %s names another index", digest);
                }
        } else {
                memcpy(ret_digest, digest, strlen(digest) + 1);
        }
        *ret = m;
        return 0;
}

static int tag_locked(struct image_store *st, const char *ref, const char *manifest_digest, struct tess_error **err)
{
        struct image_manifest m = { 0 };
        struct image_config c = { 0 };
        char digest[IMAGE_DIGEST_SIZE];
        int64_t size;
        int r;

        r = resolve_manifest(st, manifest_digest, &m, digest, &size, err);
        if (r >= 0)
                r = image_config_load(st, m.config.digest, &c, err);
        if (r >= 0 && c.n_diff_ids != m.n_layers)
                r = tess_err(err, EINVAL, "the manifest has %zu layers, the config %zu diff_ids", m.n_layers,
                             c.n_diff_ids);
        for (size_t i = 0; r >= 0 && i < m.n_layers; i++) {
                if (st->policy.unpack)
                        r = image_layer_unpack(st, m.layers[i].digest, c.diff_ids[i], err);
                else if (!image_blob_exists(st, m.layers[i].digest))
                        r = tess_err(err, ENOENT, "layer %s is missing", m.layers[i].digest);
        }
        if (r >= 0)
                r = index_set_ref(st, ref, m.media_type ? m.media_type : IMAGE_MEDIA_OCI_MANIFEST, digest, size, err);
        if (r >= 0)
                image_use_record(st, digest);
        image_manifest_release(&m);
        image_config_release(&c);
        return r;
}

int image_store_tag(struct image_store *st, const char *ref, const char *manifest_digest, struct tess_error **err)
{
        int r;

        if (!ref_valid(ref))
                return tess_err(err, EINVAL, "'%s' is not an image reference", ref);
        if (!image_digest_valid(manifest_digest))
                return tess_err(err, EINVAL, "'%s' is not a sha256 digest", manifest_digest);
        r = image_store_lock(st, err);
        if (r < 0)
                return r;
        r = tag_locked(st, ref, manifest_digest, err);
        image_store_unlock(st);
        if (r < 0)
                return tess_err_wrap(err, "tagging '%s'", ref);
        return 0;
}

int image_index_untag_locked(struct image_store *st, char *const *refs, struct tess_error **err)
{
        json_t *idx;
        int r;

        r = index_read_json(st, &idx, err);
        if (r < 0)
                return r;
        for (char *const *ref = refs; *ref; ref++)
                index_drop_ref(json_object_get(idx, "manifests"), *ref);
        r = index_write_json(st, idx, err);
        json_decref(idx);
        return r;
}

static int remove_locked(struct image_store *st, const char *ref, struct tess_error **err)
{
        struct image_descriptor *d;
        _cleanup_free_ char *name = NULL;
        const struct image_descriptor *found;
        size_t n;
        int r;

        r = image_index_load(st, &d, &n, err);
        if (r < 0)
                return r;
        found = find_ref(d, n, ref);
        name = found ? xstrdup(found->ref_name) : NULL;
        image_descriptors_free(d, n);
        if (!name)
                return tess_err(err, ENOENT, "no image '%s' in the store", ref);
        return image_index_untag_locked(st, (char *const[]){ name, NULL }, err);
}

int image_store_remove(struct image_store *st, const char *ref, struct tess_error **err)
{
        int r = image_store_lock(st, err);

        if (r < 0)
                return r;
        r = remove_locked(st, ref, err);
        image_store_unlock(st);
        return r;
}
