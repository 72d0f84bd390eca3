/* api_registry.c - the manager as an OCI distribution (v2) registry of
 * the images imported into it (api_image_import.c), read-only and for
 * agents only: requests are signed with the cluster secret like every
 * agent request (api_agent.c), so the agent's registry client pulls with
 * its own signature (src/agent/image_from_manager.c).
 *
 *   GET /v2/<name>/manifests/<tag or digest>   the manifest, with its media
 *                                              type and Docker-Content-Digest
 *   GET /v2/<name>/blobs/<digest>              a blob, streamed from its file
 *
 * A tag is looked up in the images table (registry "", a manifest digest
 * set), preferring the asking agent's architecture.  Errors are the
 * registry's JSON ({"errors": [{"code", "message"}]}), which registry
 * clients print. */
#include "../common/compat.h"

#include <fcntl.h>

#include "../common/log.h"
#include "api.h"
#include "blob_store.h"
#include "db.h"
#include "http.h"
#include "import_manifest.h"
#include "manager.h"

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
