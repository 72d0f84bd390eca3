/* api_image_import.c - `tessera image import`'s side of the API
 * (superadmins): upload an image's blobs into the manager's blob store
 * (blob_store.h), then register the image, which agents then pull from the
 * manager (api_registry.c).
 *
 *   GET /admin/image-blobs/{digest}      {"digest", "size", "complete": true}, or
 *                                        {"digest", "offset", "complete": false}:
 *                                        where an upload resumes
 *   PATCH /admin/image-blobs/{digest}?offset=N   raw bytes: a chunk at N
 *                                        -> {"digest", "offset", "complete": false}
 *   PUT /admin/image-blobs/{digest}?offset=N     the last chunk (maybe empty):
 *                                        verified and committed -> 201 {"digest", "size",
 *                                        "complete": true}; a mismatch is 400 and
 *                                        the upload is gone
 *   POST /admin/image-imports {"reference": "name:tag", "manifest": "sha256:..."}
 *                                        -> 201 the image: the manifest, its config
 *                                        and layers must be committed blobs of the
 *                                        sizes it says
 *
 * A chunk at another offset than the upload's is a 416 that names the
 * upload's offset.  Chunks are at most max_upload bytes.  An import
 * registers (or replaces) the images row name:tag for the config's
 * architecture with registry "" (served by the manager), its manifest
 * digest, labels and size, so that sessions may name it at once.  Each
 * import also removes uploads untouched for a day and blobs no image has
 * used for a day. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/images/api_images.h"
#include "manager/images/blob_store.h"
#include "manager/images/import_manifest.h"

static json_t *blob_state(const char *digest, bool complete, int64_t n)
{
        return json_pack("{s:s, s:I, s:b}", "digest", digest, complete ? "size" : "offset", (json_int_t)n, "complete",
                         complete);
}

void api_image_blob_show(struct api_ctx *c)
{
        const char *digest = c->param[0];
        int64_t size;

        if (!blob_digest_valid(digest)) {
                api_problem(c, 400, "invalid-api-params", "'%s' is not a sha256 digest", digest);
                return;
        }
        if (blob_store_size(c->m->blobs, digest, &size) == 0)
                api_json(c, 200, blob_state(digest, true, size));
        else
                api_json(c, 200, blob_state(digest, false, blob_store_upload_offset(c->m->blobs, digest)));
}

static void blob_upload(struct api_ctx *c, bool last)
{
        const char *digest = c->param[0], *off = http_query(c->req, "offset");
        const struct buf *body = http_body(c->req);
        struct tess_error *err = NULL;
        int64_t offset, at = 0;
        char *end;

        api_audit_target(c, "image-blob:%s", digest);
        errno = 0;
        offset = off ? strtoll(off, &end, 10) : -1;
        if (!off || !*off || *end || errno || offset < 0) {
                api_problem(c, 400, "invalid-api-params", "'offset' must be given, a non-negative integer");
                return;
        }
        int r = blob_store_upload(c->m->blobs, digest, offset, body->data, body->len, last, &at, &err);
        if (r == -ERANGE) {
                char range[48];
                snprintf(range, sizeof(range), "0-%lld", (long long)(at > 0 ? at - 1 : 0));
                http_add_header(c->req, "Range", range);
                api_problem(c, 416, "upload-offset-mismatch", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        if (r == -EBADMSG || r == -EFBIG) {
                log_notice("image import: %s", err->msg);
                api_problem(c, 400, "invalid-api-params", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, last ? 201 : 200, blob_state(digest, last, at));
}

void api_image_blob_append(struct api_ctx *c)
{
        blob_upload(c, false);
}

void api_image_blob_finish(struct api_ctx *c)
{
        blob_upload(c, true);
}

/* Every blob of the images the manager serves (registry ""), NULL-terminated. */
static char **blobs_in_use(struct manager *m, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        size_t n = 0, cap = 16;
        char **keep;

        if (DBQ(m->db, "SELECT DISTINCT digest FROM images WHERE registry = '' AND digest LIKE 'sha256:%'", &rows,
                err) < 0)
                return NULL;
        keep = xcalloc(cap, sizeof(*keep));
        for (int i = 0; i < rows->nrows; i++) {
                struct import_image img = { 0 };
                _cleanup_free_ char *text = NULL;
                const char *digest = db_getn(rows, i, "digest");
                size_t len;

                if (blob_store_read(m->blobs, digest, IMPORT_MANIFEST_MAX, &text, &len, NULL) < 0 ||
                    import_parse_manifest(text, len, &img, NULL) < 0) {
                        import_image_release(&img);
                        continue;
                }
                if (n + img.n_layers + 3 > cap) {
                        cap = 2 * (n + img.n_layers + 3);
                        keep = xrealloc(keep, cap * sizeof(*keep));
                }
                keep[n++] = xstrdup(digest);
                keep[n++] = xstrdup(img.config.digest);
                for (size_t k = 0; k < img.n_layers; k++)
                        keep[n++] = xstrdup(img.layers[k].digest);
                keep[n] = NULL;
                import_image_release(&img);
        }
        keep[n] = NULL;
        return keep;
}

static void collect_garbage(struct manager *m)
{
        struct tess_error *err = NULL;
        char **keep = blobs_in_use(m, &err);

        if (!keep) {
                log_warn("image blob store: not cleaned up: %s", err ? err->msg : "?");
                tess_error_free(err);
                return;
        }
        blob_store_gc(m->blobs, (const char *const *)keep, BLOB_STALE_SEC, NULL);
        for (char **p = keep; *p; p++)
                free(*p);
        free(keep);
}

static int check_blob(struct manager *m, const struct import_blob *b, const char *what, struct tess_error **err)
{
        int64_t size;

        if (blob_store_size(m->blobs, b->digest, &size) < 0)
                return tess_err(err, EINVAL, "the %s blob %s has not been uploaded", what, b->digest);
        if (size != b->size)
                return tess_err(err, EINVAL, "the %s blob %s has %lld bytes, the manifest says %lld", what, b->digest,
                                (long long)size, (long long)b->size);
        return 0;
}

/* Read and check what the import names. */
static int load_import(struct manager *m, const char *reference, const char *manifest, struct import_image *img,
                       struct tess_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = import_parse_reference(reference, img, err);
        if (r < 0)
                return r;
        if (!blob_digest_valid(manifest))
                return tess_err(err, EINVAL, "'manifest' must be a sha256 digest");
        r = blob_store_read(m->blobs, manifest, IMPORT_MANIFEST_MAX, &text, &len, err);
        if (r == -ENOENT) {
                *err = tess_error_free(*err);
                return tess_err(err, EINVAL, "the manifest %s has not been uploaded", manifest);
        }
        if (r == -EFBIG) {
                *err = tess_error_free(*err);
                return tess_err(err, EINVAL, "the manifest is larger than %zu bytes", IMPORT_MANIFEST_MAX);
        }
        if (r < 0)
                return r;
        r = import_parse_manifest(text, len, img, err);
        if (r < 0)
                return r;
        r = check_blob(m, &img->config, "config", err);
        for (size_t i = 0; r >= 0 && i < img->n_layers; i++)
                r = check_blob(m, &img->layers[i], "layer", err);
        if (r < 0)
                return r;
        free(text);
        text = NULL;
        r = blob_store_read(m->blobs, img->config.digest, IMPORT_CONFIG_MAX, &text, &len, err);
        if (r == -EFBIG) {
                *err = tess_error_free(*err);
                return tess_err(err, EINVAL, "the image config is larger than %zu bytes", IMPORT_CONFIG_MAX);
        }
        if (r < 0)
                return r;
        return import_parse_config(text, len, img, err);
}

void api_image_import(struct api_ctx *c)
{
        struct import_image img = { 0 };
        struct tess_error *err = NULL;
        const char *reference = NULL, *manifest = NULL, *key;
        _cleanup_free_ char *labels = NULL;
        json_t *v;
        char id[UUID_STR_LEN];

        json_object_foreach(c->body, key, v) {
                if (!streq(key, "reference") && !streq(key, "manifest")) {
                        api_problem(c, 400, "invalid-api-params", "unknown field '%s'", key);
                        return;
                }
        }
        if (api_get_string(c->body, NAMES("reference"), 512, &reference, &err) < 0 ||
            api_get_string(c->body, NAMES("manifest"), 80, &manifest, &err) < 0) {
                api_fail(c, err);
                return;
        }
        if (!reference || !*reference) {
                api_problem(c, 400, "invalid-api-params",
                            "'reference' is missing: the image has no reference name (org.opencontainers.image.ref.name"
                            " or a docker save RepoTag); give one (NAME:TAG)");
                return;
        }
        if (!manifest) {
                api_problem(c, 400, "invalid-api-params", "'manifest' is missing: the image manifest's digest");
                return;
        }
        api_audit_target(c, "image:%s", reference);
        if (load_import(c->m, reference, manifest, &img, &err) < 0) {
                import_image_release(&img);
                api_fail(c, err);
                return;
        }
        labels = json_dumps(img.labels, JSON_COMPACT | JSON_SORT_KEYS);
        uuid_generate_str(id);
        if (DBQ(c->m->db,
                "INSERT INTO images(id, name, tag, registry, architecture, digest, labels, size_bytes, created_at)"
                " VALUES (?, ?, ?, '', ?, ?, ?, ?, ?) ON CONFLICT (name, tag, architecture) DO UPDATE SET"
                " registry = '', digest = excluded.digest, labels = excluded.labels, size_bytes = excluded.size_bytes",
                NULL, &err, DB_TEXT(id), DB_TEXT(img.name), DB_TEXT(img.tag), DB_TEXT(img.architecture),
                DB_TEXT(manifest), DB_TEXT(labels), DB_INT(img.size_bytes), DB_INT(now_usec())) < 0) {
                import_image_release(&img);
                api_fail(c, err);
                return;
        }
        log_notice("image import: %s:%s (%s, %s, %lld bytes)", img.name, img.tag, img.architecture, manifest,
                   (long long)img.size_bytes);
        json_t *ans = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:O}", "name", img.name, "tag", img.tag, "architecture",
                                img.architecture, "registry", "", "digest", manifest, "size_bytes",
                                (json_int_t)img.size_bytes, "labels", img.labels);
        import_image_release(&img);
        collect_garbage(c->m);
        api_json(c, 201, ans);
}
