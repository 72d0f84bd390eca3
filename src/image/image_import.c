/* image_import.c - images from files: an OCI image layout (a directory, or
 * a tar of one) and `docker save` archives, whose manifest.json names a
 * config and layers (`<id>/layer.tar`, or since Docker 25 the blobs of an
 * OCI layout written beside it).
 *
 * A directory is read on demand.  A tar (compressed or not) is read once:
 * its blobs go into the store as they come (blobs/sha256/<hex> and
 * <hex>.json checked against their names, layer.tar and skopeo's <hex>.tar
 * named after their bytes), index.json and manifest.json are kept in memory, links are
 * remembered; blobs that no imported image uses wait for the next gc.
 * Then the images are tagged: from index.json when it names them (or
 * ref_override does), else from manifest.json, for which an OCI manifest
 * is written. */
#include "common/compat.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/fs.h"
#include "image/image-internal.h"

#define LINK_HOPS_MAX 8

/* A blob or link found in a tar. */
struct import_file {
        char *path;                     /* cleaned path in the archive */
        char *link;                     /* a link: the path it names; else NULL */
        char digest[IMAGE_DIGEST_SIZE]; /* a blob: committed to the store */
        int64_t size;
};

struct import {
        struct image_store *st;
        const char *source;
        const char *ref_override;
        int dirfd; /* a directory source, else -1 */
        struct import_file *files;
        size_t n_files;
        char *index_json, *manifest_json; /* NULL when absent */
        size_t index_len, manifest_len;
        char **refs; /* tagged, NULL-terminated */
        size_t n_refs;
};

/* ---- paths ---- */

/* "sha256:<hex>" for a path that names its digest (blobs/sha256/<hex>,
 * <hex>.json), else NULL; caller frees. */
static char *digest_of_path(const char *path)
{
        _cleanup_free_ char *d = NULL;

        if (strncmp(path, "blobs/sha256/", 13) == 0)
                d = xasprintf("sha256:%s", path + 13);
        else if (strlen(path) == 64 + 5 && streq(path + 64, ".json"))
                d = xasprintf("sha256:%.64s", path);
        return d && image_digest_valid(d) ? TAKE_PTR(d) : NULL;
}

static bool is_blob_path(const char *path)
{
        _cleanup_free_ char *d = digest_of_path(path);
        const char *slash = strrchr(path, '/');

        /* layers: <id>/layer.tar (docker save), <hex>.tar (skopeo's docker-archive) */
        return d || (slash && streq(slash + 1, "layer.tar")) ||
               (!slash && strlen(path) == 64 + 4 && streq(path + 64, ".tar"));
}

/* A link's target as a path from the archive's root: relative targets
 * start from the link's directory; NULL when ".." climbs above the root. */
static char *link_resolve(const char *link_path, const char *target, bool relative)
{
        _cleanup_free_ char *joined = NULL;
        struct buf out = BUF_INIT;
        const char *slash = strrchr(link_path, '/');
        char *p, *save = NULL;

        if (relative && target[0] != '/' && slash)
                joined = xasprintf("%.*s/%s", (int)(slash - link_path), link_path, target);
        else
                joined = xstrdup(target);
        for (p = strtok_r(joined, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
                if (streq(p, "."))
                        continue;
                if (streq(p, "..")) {
                        char *up;
                        if (!out.len) {
                                buf_release(&out);
                                return NULL;
                        }
                        up = strrchr(out.data, '/');
                        out.len = up ? (size_t)(up - out.data) : 0;
                        out.data[out.len] = '\0';
                        continue;
                }
                if (out.len)
                        buf_putc(&out, '/');
                buf_puts(&out, p);
        }
        return buf_detach(&out, NULL);
}

/* Whether the store has the blob already (checked when it was committed),
 * and its size. */
static bool stored_size(struct image_store *st, const char *digest, int64_t *ret_size)
{
        _cleanup_free_ char *path = image_blob_path(st, digest);
        struct stat s;

        if (!path || stat(path, &s) < 0)
                return false;
        *ret_size = s.st_size;
        return true;
}

/* ---- reading a tar ---- */

static struct import_file *add_file(struct import *im, char *path)
{
        struct import_file *f;

        im->files = xrealloc(im->files, (im->n_files + 1) * sizeof(*im->files));
        f = &im->files[im->n_files++];
        *f = (struct import_file){ .path = path };
        return f;
}

static int tar_fail(struct archive *a, struct tess_error **err)
{
        const char *why = archive_error_string(a);
        return tess_err(err, EBADMSG, "reading the archive: %s", why ? why : "unknown error");
}

static int tar_read_small(struct archive *a, struct archive_entry *e, const char *path, char **ret, size_t *ret_len,
                          struct tess_error **err)
{
        struct buf b = BUF_INIT;
        char chunk[16384];
        la_ssize_t n;

        if (archive_entry_size(e) > (la_int64_t)IMAGE_INDEX_MAX)
                return tess_err(err, EFBIG, "'%s' is larger than %zu bytes", path, IMAGE_INDEX_MAX);
        while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0)
                buf_append(&b, chunk, (size_t)n);
        if (n < 0) {
                buf_release(&b);
                return tar_fail(a, err);
        }
        free(*ret); /* a later copy in the tar wins, as tar does */
        *ret = buf_detach(&b, ret_len);
        return 0;
}

static int tar_read_blob(struct import *im, struct archive *a, struct import_file *f, struct tess_error **err)
{
        _cleanup_free_ char *expected = digest_of_path(f->path);
        struct image_blob_writer *w;
        const void *buf;
        size_t n;
        la_int64_t off;
        int64_t next = 0;
        int r;

        if (expected && stored_size(im->st, expected, &f->size)) {
                memcpy(f->digest, expected, IMAGE_DIGEST_SIZE);
                return 0; /* libarchive skips the data */
        }
        r = image_blob_begin(im->st, expected, -1, &w, err);
        if (r < 0)
                return r;
        while ((r = archive_read_data_block(a, &buf, &n, &off)) != ARCHIVE_EOF) {
                if (r < ARCHIVE_WARN || off != next) {
                        image_blob_abort(w);
                        return r < ARCHIVE_WARN ? tar_fail(a, err) : tess_err(err, EBADMSG, "a sparse blob");
                }
                r = image_blob_write(w, buf, n, err);
                if (r < 0) {
                        image_blob_abort(w);
                        return r;
                }
                next += (int64_t)n;
        }
        f->size = next;
        r = image_blob_commit_digest(w, f->digest, err);
        return r < 0 ? tess_err_wrap(err, "'%s'", f->path) : 0;
}

static int tar_entry(struct import *im, struct archive *a, struct archive_entry *e, struct tess_error **err)
{
        const char *raw = archive_entry_pathname(e), *hardlink = archive_entry_hardlink(e);
        char *path = NULL;

        if (!raw || beneath_clean(raw, &path) < 0)
                return 0; /* nothing an image would name */
        if (streq(path, "index.json") || streq(path, "manifest.json")) {
                bool index = streq(path, "index.json");
                free(path);
                return tar_read_small(a, e, raw, index ? &im->index_json : &im->manifest_json,
                                      index ? &im->index_len : &im->manifest_len, err);
        }
        if (!is_blob_path(path)) {
                free(path);
                return 0;
        }
        if (hardlink || archive_entry_filetype(e) == AE_IFLNK) {
                const char *target = hardlink ? hardlink : archive_entry_symlink(e);
                char *resolved = target ? link_resolve(path, target, !hardlink) : NULL;
                if (resolved)
                        add_file(im, path)->link = resolved;
                else
                        free(path);
                return 0;
        }
        if (archive_entry_filetype(e) != AE_IFREG) {
                free(path);
                return 0;
        }
        return tar_read_blob(im, a, add_file(im, path), err);
}

static int read_tar(struct import *im, struct tess_error **err)
{
        struct archive *a = archive_read_new();
        struct archive_entry *e;
        int r;

        if (!a)
                abort();
        archive_read_support_filter_gzip(a);
        archive_read_support_filter_zstd(a);
        archive_read_support_format_tar(a);
        if (archive_read_open_filename(a, im->source, 1 << 16) != ARCHIVE_OK) {
                r = tar_fail(a, err);
                archive_read_free(a);
                return r;
        }
        while ((r = archive_read_next_header(a, &e)) != ARCHIVE_EOF) {
                r = r < ARCHIVE_WARN ? tar_fail(a, err) : tar_entry(im, a, e, err);
                if (r < 0)
                        break;
        }
        archive_read_free(a);
        return r < 0 ? r : 0;
}

/* ---- reading a directory ---- */

static int dir_read_small(struct import *im, const char *name, char **ret, size_t *ret_len, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", im->source, name);

        if (faccessat(im->dirfd, name, F_OK, 0) < 0)
                return 0;
        return fs_read_file(path, IMAGE_INDEX_MAX, ret, ret_len, err);
}

static int dir_copy_blob(struct import *im, const char *path, const char *expected, char ret_digest[IMAGE_DIGEST_SIZE],
                         int64_t *ret_size, struct tess_error **err)
{
        _cleanup_close_ int fd = openat(im->dirfd, path, O_RDONLY | O_CLOEXEC);
        struct image_blob_writer *w;
        char chunk[65536];
        ssize_t n;
        int64_t size = 0;
        int r;

        if (fd < 0)
                return tess_err(err, errno, "opening '%s': %s", path, strerror(errno));
        if (expected && stored_size(im->st, expected, ret_size)) {
                memcpy(ret_digest, expected, IMAGE_DIGEST_SIZE);
                return 0;
        }
        r = image_blob_begin(im->st, expected, -1, &w, err);
        if (r < 0)
                return r;
        while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                r = n < 0 ? tess_err(err, errno, "reading '%s': %s", path, strerror(errno))
                          : image_blob_write(w, chunk, (size_t)n, err);
                if (r < 0) {
                        image_blob_abort(w);
                        return r;
                }
                size += n;
        }
        *ret_size = size;
        return image_blob_commit_digest(w, ret_digest, err);
}

/* ---- blobs, whichever the source ---- */

static const struct import_file *find_file(const struct import *im, const char *path)
{
        for (size_t i = im->n_files; i-- > 0;) {
                if (streq(im->files[i].path, path))
                        return &im->files[i];
        }
        return NULL;
}

/* Put the blob at `path` of the source into the store; its digest must be
 * `expected` when that is not NULL. */
static int import_blob(struct import *im, const char *path, const char *expected, char ret_digest[IMAGE_DIGEST_SIZE],
                       int64_t *ret_size, struct tess_error **err)
{
        _cleanup_free_ char *clean = NULL;
        const struct import_file *f;
        int r;

        if (beneath_clean(path, &clean) < 0)
                return tess_err(err, EINVAL, "'%s' is not a path inside the archive", path);
        if (im->dirfd >= 0) {
                r = dir_copy_blob(im, clean, expected, ret_digest, ret_size, err);
                return r < 0 ? tess_err_wrap(err, "'%s'", clean) : 0;
        }
        f = find_file(im, clean);
        for (int hops = 0; f && f->link && hops < LINK_HOPS_MAX; hops++)
                f = find_file(im, f->link);
        if (!f || f->link)
                return tess_err(err, ENOENT, "'%s' is not in the archive", clean);
        if (expected && !streq(f->digest, expected))
                return tess_err(err, EBADMSG, "'%s' is %s, not %s", clean, f->digest, expected);
        memcpy(ret_digest, f->digest, IMAGE_DIGEST_SIZE);
        *ret_size = f->size;
        return 0;
}

static int import_by_digest(struct import *im, const char *digest, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("blobs/sha256/%s", digest + strlen("sha256:"));
        char got[IMAGE_DIGEST_SIZE];
        int64_t size;

        return import_blob(im, path, digest, got, &size, err);
}

static void add_ref(struct import *im, const char *ref)
{
        im->refs = xrealloc(im->refs, (im->n_refs + 2) * sizeof(char *));
        im->refs[im->n_refs++] = xstrdup(ref);
        im->refs[im->n_refs] = NULL;
}

static int tag(struct import *im, const char *ref, const char *digest, struct tess_error **err)
{
        int r = image_store_tag(im->st, ref, digest, err);

        if (r < 0)
                return r;
        add_ref(im, ref);
        return 0;
}

/* ---- OCI image layout ---- */

/* Copy the manifest `digest` (resolving an index to this host's entry),
 * its config and its layers; ret_digest: the image manifest. */
static int import_oci_image(struct import *im, const char *digest, char ret_digest[IMAGE_DIGEST_SIZE],
                            struct tess_error **err)
{
        struct image_manifest m;
        int r;

        r = import_by_digest(im, digest, err);
        if (r >= 0)
                r = image_manifest_load(im->st, digest, &m, err);
        if (r < 0)
                return r;
        if (m.is_index) {
                const struct image_descriptor *d = image_manifest_pick_platform(&m);
                _cleanup_free_ char *child = d ? xstrdup(d->digest) : NULL;
                image_manifest_release(&m);
                if (!child)
                        return tess_err(err, ENOENT, "index %s has no image for linux/%s", digest,
                                        image_host_arch());
                r = import_by_digest(im, child, err);
                if (r >= 0)
                        r = image_manifest_load(im->st, child, &m, err);
                if (r >= 0 && m.is_index) {
                        image_manifest_release(&m);
                        r = tess_err(err, EINVAL, "index %s names another index", digest);
                }
                if (r < 0)
                        return r;
                memcpy(ret_digest, child, IMAGE_DIGEST_SIZE);
        } else {
                memcpy(ret_digest, digest, IMAGE_DIGEST_SIZE);
        }
        r = import_by_digest(im, m.config.digest, err);
        for (size_t i = 0; r >= 0 && i < m.n_layers; i++)
                r = import_by_digest(im, m.layers[i].digest, err);
        image_manifest_release(&m);
        return r;
}

static int import_oci(struct import *im, struct tess_error **err)
{
        struct image_manifest idx;
        int r;

        r = image_manifest_parse(im->index_json, im->index_len, &idx, err);
        if (r >= 0 && !idx.is_index) {
                image_manifest_release(&idx);
                r = tess_err(err, EINVAL, "not an image index");
        }
        if (r < 0)
                return tess_err_wrap(err, "index.json");
        if (im->ref_override && idx.n_manifests != 1)
                r = tess_err(err, EINVAL, "index.json names %zu images, a reference names one", idx.n_manifests);
        for (size_t i = 0; r >= 0 && i < idx.n_manifests; i++) {
                const struct image_descriptor *d = &idx.manifests[i];
                const char *ref = im->ref_override ? im->ref_override : d->image_name ? d->image_name : d->ref_name;
                char digest[IMAGE_DIGEST_SIZE];

                if (!ref)
                        continue;
                r = import_oci_image(im, d->digest, digest, err);
                if (r >= 0)
                        r = tag(im, ref, digest, err);
        }
        image_manifest_release(&idx);
        return r;
}

/* ---- docker save ---- */

/* The OCI media type of a layer blob, from its first bytes. */
static const char *layer_media_type(struct import *im, const char *digest)
{
        _cleanup_free_ char *path = image_blob_path(im->st, digest);
        _cleanup_close_ int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        unsigned char magic[4] = { 0 };

        if (fd >= 0 && read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic)) {
                if (magic[0] == 0x1f && magic[1] == 0x8b)
                        return IMAGE_MEDIA_OCI_LAYER "+gzip";
                if (magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd)
                        return IMAGE_MEDIA_OCI_LAYER "+zstd";
        }
        return IMAGE_MEDIA_OCI_LAYER;
}

static json_t *descriptor_json(const char *media_type, const char *digest, int64_t size)
{
        return json_pack("{s:s, s:s, s:I}", "mediaType", media_type, "digest", digest, "size", (json_int_t)size);
}

/* Copy one manifest.json entry's config and layers, and write an OCI
 * manifest for them: ret_digest. */
static int docker_manifest(struct import *im, const json_t *item, char ret_digest[IMAGE_DIGEST_SIZE],
                           struct tess_error **err)
{
        const char *config = json_string_value(json_object_get(item, "Config"));
        const json_t *layers = json_object_get(item, "Layers"), *l;
        _cleanup_free_ char *expected = NULL, *text = NULL;
        struct image_blob_writer *w;
        char digest[IMAGE_DIGEST_SIZE];
        json_t *m, *mlayers;
        int64_t size;
        size_t i;
        int r;

        if (!config || !json_is_array(layers))
                return tess_err(err, EINVAL, "an entry without Config or Layers");
        expected = digest_of_path(config);
        r = import_blob(im, config, expected, digest, &size, err);
        if (r < 0)
                return r;
        m = json_pack("{s:i, s:s, s:o, s:[]}", "schemaVersion", 2, "mediaType", IMAGE_MEDIA_OCI_MANIFEST, "config",
                      descriptor_json(IMAGE_MEDIA_OCI_CONFIG, digest, size), "layers");
        mlayers = json_object_get(m, "layers");
        json_array_foreach (layers, i, l) {
                _cleanup_free_ char *lexpected = NULL;
                if (!json_is_string(l)) {
                        r = tess_err(err, EINVAL, "Layers[%zu] is not a string", i);
                        break;
                }
                lexpected = digest_of_path(json_string_value(l));
                r = import_blob(im, json_string_value(l), lexpected, digest, &size, err);
                if (r < 0)
                        break;
                json_array_append_new(mlayers, descriptor_json(layer_media_type(im, digest), digest, size));
        }
        text = r >= 0 ? json_dumps(m, JSON_COMPACT) : NULL;
        json_decref(m);
        if (r < 0)
                return r;
        r = image_blob_begin(im->st, NULL, (int64_t)strlen(text), &w, err);
        if (r < 0)
                return r;
        r = image_blob_write(w, text, strlen(text), err);
        if (r < 0) {
                image_blob_abort(w);
                return r;
        }
        return image_blob_commit_digest(w, ret_digest, err);
}

static int import_docker(struct import *im, struct tess_error **err)
{
        json_error_t jerr;
        const json_t *item, *tags, *t;
        json_t *j = json_loadb(im->manifest_json, im->manifest_len, 0, &jerr);
        size_t i, k;
        int r = 0;

        if (!json_is_array(j)) {
                json_decref(j);
                return tess_err(err, EINVAL, "manifest.json is not an array of images");
        }
        if (im->ref_override && json_array_size(j) != 1)
                r = tess_err(err, EINVAL, "manifest.json names %zu images, a reference names one", json_array_size(j));
        json_array_foreach (j, i, item) {
                char digest[IMAGE_DIGEST_SIZE];
                if (r < 0)
                        break;
                tags = json_object_get(item, "RepoTags");
                if (!im->ref_override && json_array_size(tags) == 0)
                        continue;
                r = docker_manifest(im, item, digest, err);
                if (r < 0) {
                        r = tess_err_wrap(err, "manifest.json[%zu]", i);
                        break;
                }
                if (im->ref_override) {
                        r = tag(im, im->ref_override, digest, err);
                        continue;
                }
                json_array_foreach (tags, k, t) {
                        if (r >= 0)
                                r = json_is_string(t) ? tag(im, json_string_value(t), digest, err)
                                                      : tess_err(err, EINVAL, "a RepoTags entry is not a string");
                }
        }
        json_decref(j);
        return r;
}

/* ---- entry point ---- */

static int import_images(struct import *im, struct tess_error **err)
{
        struct stat s;
        int r = 0;

        if (stat(im->source, &s) < 0)
                return tess_err(err, errno, "%s", strerror(errno));
        if (S_ISDIR(s.st_mode)) {
                im->dirfd = open(im->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (im->dirfd < 0)
                        return tess_err(err, errno, "%s", strerror(errno));
                r = dir_read_small(im, "index.json", &im->index_json, &im->index_len, err);
                if (r >= 0)
                        r = dir_read_small(im, "manifest.json", &im->manifest_json, &im->manifest_len, err);
        } else {
                r = read_tar(im, err);
        }
        if (r >= 0 && im->index_json)
                r = import_oci(im, err);
        if (r >= 0 && im->n_refs == 0 && im->manifest_json)
                r = import_docker(im, err);
        if (r >= 0 && im->n_refs == 0)
                r = tess_err(err, EINVAL,
                             im->index_json || im->manifest_json
                                     ? "no image in it has a name: give it one"
                                     : "neither an OCI image layout nor a docker save archive");
        return r;
}

int image_import(struct image_store *st, const char *path, const char *ref_override, char ***refs,
                 struct tess_error **err)
{
        struct import im = { .st = st, .source = path, .ref_override = ref_override, .dirfd = -1 };
        int r;

        r = import_images(&im, err);
        if (im.dirfd >= 0)
                close(im.dirfd);
        for (size_t i = 0; i < im.n_files; i++) {
                free(im.files[i].path);
                free(im.files[i].link);
        }
        free(im.files);
        free(im.index_json);
        free(im.manifest_json);
        if (r < 0) {
                image_strv_free(im.refs);
                return tess_err_wrap(err, "importing '%s'", path);
        }
        if (refs)
                *refs = im.refs;
        else
                image_strv_free(im.refs);
        return 0;
}
