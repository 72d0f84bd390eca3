/* api_registry.c - the manager as an OCI distribution (v2) registry of
 * the images imported into it (api_image_import.c) and of the sessions
 * agents commit (src/agent/commit.c), for agents only: requests are signed
 * with the cluster secret like every agent request (api_agent.c), so the
 * agent's registry client pulls and pushes with its own signature
 * (src/agent/image_from_manager.c).
 *
 *   GET|HEAD /v2/<name>/manifests/<tag or digest>   the manifest, with its
 *                                          media type and Docker-Content-Digest
 *   GET|HEAD /v2/<name>/blobs/<digest>     a blob, streamed from its file
 *   POST /v2/<name>/blobs/uploads/         start an upload: 202, Location
 *   PATCH <location>                       a chunk at the upload's offset
 *                                          (Content-Range start must be it)
 *   PUT <location>?digest=D                the last chunk (may be empty):
 *                                          checked against D and kept
 *   PUT /v2/<name>/manifests/<tag>         a manifest whose blobs are here:
 *                                          kept as a blob; the images table
 *                                          names it once its commit is done
 *
 * A tag is looked up in the images table (registry "", a manifest digest
 * set), preferring the asking agent's architecture.  Errors are the
 * registry's JSON ({"errors": [{"code", "message"}]}), which registry
 * clients print. */
#include "common/compat.h"

#include <fcntl.h>

#include "common/crypto.h"
#include "common/log.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/http/http_range.h"
#include "manager/images/api_images.h"
#include "manager/images/blob_store.h"
#include "manager/images/import_manifest.h"

static void registry_error(struct api_ctx *c, unsigned status, const char *code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void registry_error(struct api_ctx *c, unsigned status, const char *code, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        msg = xvasprintf(fmt, ap);
        va_end(ap);
        api_json(c, status, json_pack("{s:[{s:s, s:s}]}", "errors", "code", code, "message", msg));
}

/* The manifest digest of name:tag for the asking agent, or NULL. */
static char *tag_digest(struct api_ctx *c, const char *name, const char *tag, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;

        if (DBQ(c->m->db,
                "SELECT i.digest FROM images i LEFT JOIN agents a ON a.id = ?"
                " WHERE i.name = ? AND i.tag = ? AND i.registry = '' AND i.digest LIKE 'sha256:%'"
                " ORDER BY CASE WHEN i.architecture = a.architecture THEN 0 ELSE 1 END, i.architecture LIMIT 1",
                &rows, err, DB_TEXT(c->who.user_id), DB_TEXT(name), DB_TEXT(tag)) < 0)
                return NULL;
        return rows->nrows ? xstrdup(db_getn(rows, 0, "digest")) : NULL;
}

static void serve_manifest(struct api_ctx *c, const char *name, const char *ref)
{
        struct tess_error *err = NULL;
        _cleanup_free_ char *digest = NULL, *text = NULL;
        size_t len;

        if (blob_digest_valid(ref)) {
                digest = xstrdup(ref);
        } else {
                digest = tag_digest(c, name, ref, &err);
                if (!digest && err) {
                        api_fail(c, err);
                        return;
                }
        }
        if (!digest || blob_store_read(c->m->blobs, digest, IMPORT_MANIFEST_MAX, &text, &len, &err) < 0) {
                tess_error_free(err);
                registry_error(c, 404, "MANIFEST_UNKNOWN", "%s:%s was not imported into the manager", name, ref);
                return;
        }
        json_t *j = json_loadb(text, len, 0, NULL);
        const char *mt = json_string_value(json_object_get(j, "mediaType"));
        _cleanup_free_ char *media_type = xstrdup(mt ? mt : "application/vnd.oci.image.manifest.v1+json");
        json_decref(j);
        http_add_header(c->req, "Docker-Content-Digest", digest);
        http_reply_take(c->req, 200, media_type, TAKE_PTR(text), len);
}

static void serve_blob(struct api_ctx *c, const char *digest)
{
        struct tess_error *err = NULL;
        int64_t size;
        int fd;

        if (blob_store_open_blob(c->m->blobs, digest, &fd, &size, &err) < 0) {
                tess_error_free(err);
                registry_error(c, 404, "BLOB_UNKNOWN", "blob %s is not in the manager", digest);
                return;
        }
        http_add_header(c->req, "Docker-Content-Digest", digest);
        http_reply_fd(c->req, 200, "application/octet-stream", fd, (uint64_t)size);
}

void api_registry_get(struct api_ctx *c)
{
        const char *path = c->param[0];
        const char *m = strstr(path, "/manifests/"), *b = strstr(path, "/blobs/");

        if (m && (!b || m > b)) {
                _cleanup_free_ char *name = xstrndup(path, (size_t)(m - path));
                serve_manifest(c, name, m + 11);
        } else if (b) {
                serve_blob(c, b + 7);
        } else {
                registry_error(c, 404, "NAME_UNKNOWN", "no such registry route");
        }
}

/* The upload id of ".../blobs/uploads/<id>", or NULL. */
static const char *upload_id(const char *path)
{
        const char *u = strstr(path, "/blobs/uploads/");
        return u && u[15] ? u + 15 : NULL;
}

static void upload_answer(struct api_ctx *c, const char *name, const char *id, int64_t offset, unsigned status)
{
        _cleanup_free_ char *loc = xasprintf("/v2/%s/blobs/uploads/%s", name, id);
        _cleanup_free_ char *range = xasprintf("0-%lld", (long long)(offset > 0 ? offset - 1 : 0));

        http_add_header(c->req, "Location", loc);
        http_add_header(c->req, "Docker-Upload-UUID", id);
        http_add_header(c->req, "Range", range);
        http_reply(c->req, status, "application/json", "{}", 2);
}

static void upload_chunk(struct api_ctx *c, const char *name, const char *id, const char *digest)
{
        struct tess_error *err = NULL;
        const struct buf *body = http_body(c->req);
        int64_t offset = 0, at;

        if (blob_store_upload_id_offset(c->m->blobs, id, &offset) < 0)
                return registry_error(c, 404, "BLOB_UPLOAD_UNKNOWN", "no upload '%.64s'", id);
        const char *range = http_header(c->req, "Content-Range");
        uint64_t start = 0, end;
        if (range && http_chunk_range_parse(range, &start, &end) < 0)
                return registry_error(c, 400, "BLOB_UPLOAD_INVALID", "Content-Range must be START-END");
        if (range && body && end - start + 1 != body->len)
                return registry_error(c, 400, "BLOB_UPLOAD_INVALID", "Content-Range does not match the body's size");
        at = range ? (int64_t)start : -1;
        if (at >= 0 && at != offset) {
                _cleanup_free_ char *range = xasprintf("0-%lld", (long long)(offset > 0 ? offset - 1 : 0));
                http_add_header(c->req, "Range", range);
                return registry_error(c, 416, "BLOB_UPLOAD_INVALID", "the upload is at byte %lld, not %lld",
                                      (long long)offset, (long long)at);
        }
        if (blob_store_upload_id(c->m->blobs, id, offset, body ? body->data : "", body ? body->len : 0, digest,
                                 &offset, &err) < 0) {
                int e = err->code;
                _cleanup_free_ char *msg = xstrdup(err->msg);
                tess_error_free(err);
                if (e == EBADMSG || e == EINVAL)
                        return registry_error(c, 400, "DIGEST_INVALID", "%s", msg);
                if (e == EFBIG)
                        return registry_error(c, 413, "SIZE_INVALID", "%s", msg);
                return registry_error(c, 500, "UNKNOWN", "%s", msg);
        }
        if (!digest)
                return upload_answer(c, name, id, offset, 202);
        _cleanup_free_ char *loc = xasprintf("/v2/%s/blobs/%s", name, digest);
        http_add_header(c->req, "Location", loc);
        http_add_header(c->req, "Docker-Content-Digest", digest);
        http_reply(c->req, 201, "application/json", "{}", 2);
}

/* PUT of a manifest: its blobs must be here already. */
static void put_manifest(struct api_ctx *c, const char *name, const char *ref)
{
        struct import_image img = { 0 };
        struct tess_error *err = NULL;
        const struct buf *body = http_body(c->req);
        char hex[65];
        int64_t size;

        if (!body || body->len == 0 || body->len > IMPORT_MANIFEST_MAX)
                return registry_error(c, 400, "MANIFEST_INVALID", "a manifest of 1 byte to 4 MiB is required");
        if (import_parse_manifest(body->data, body->len, &img, &err) < 0) {
                registry_error(c, 400, "MANIFEST_INVALID", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        bool have = blob_store_size(c->m->blobs, img.config.digest, &size) == 0;
        for (size_t i = 0; have && i < img.n_layers; i++)
                have = blob_store_size(c->m->blobs, img.layers[i].digest, &size) == 0;
        import_image_release(&img);
        if (!have)
                return registry_error(c, 400, "MANIFEST_BLOB_UNKNOWN", "the manifest names a blob not pushed");
        sha256_hex(body->data, body->len, hex);
        _cleanup_free_ char *digest = xasprintf("sha256:%s", hex);
        if (blob_digest_valid(ref) && !streq(ref, digest))
                return registry_error(c, 400, "DIGEST_INVALID", "the manifest is %s, not %s", digest, ref);
        if (blob_store_upload(c->m->blobs, digest, 0, body->data, body->len, true, &size, &err) < 0) {
                registry_error(c, 500, "UNKNOWN", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        _cleanup_free_ char *loc = xasprintf("/v2/%s/manifests/%s", name, digest);
        http_add_header(c->req, "Location", loc);
        http_add_header(c->req, "Docker-Content-Digest", digest);
        http_reply(c->req, 201, "application/json", "{}", 2);
}

void api_registry_push(struct api_ctx *c)
{
        const char *path = c->param[0], *method = http_method(c->req);
        const char *m = strstr(path, "/manifests/"), *u = strstr(path, "/blobs/uploads/");
        const char *id = upload_id(path);
        char new_id[UUID_STR_LEN];
        struct tess_error *err = NULL;

        if (m && streq(method, "PUT")) {
                _cleanup_free_ char *name = xstrndup(path, (size_t)(m - path));
                return put_manifest(c, name, m + 11);
        }
        if (!u)
                return registry_error(c, 404, "NAME_UNKNOWN", "no such registry route");
        _cleanup_free_ char *name = xstrndup(path, (size_t)(u - path));
        if (streq(method, "POST") && !id) {
                if (blob_store_upload_id_start(c->m->blobs, new_id, &err) < 0) {
                        registry_error(c, 500, "UNKNOWN", "%s", err->msg);
                        tess_error_free(err);
                        return;
                }
                return upload_answer(c, name, new_id, 0, 202);
        }
        if (id && streq(method, "PATCH"))
                return upload_chunk(c, name, id, NULL);
        if (id && streq(method, "PUT")) {
                const char *digest = http_query(c->req, "digest");
                if (!digest || !blob_digest_valid(digest))
                        return registry_error(c, 400, "DIGEST_INVALID", "PUT needs ?digest=sha256:<hex>");
                return upload_chunk(c, name, id, digest);
        }
        registry_error(c, 405, "UNSUPPORTED", "%s is not supported here", method);
}
