/* image_push.h - push an image of an OCI image layout to a registry
 * through the OCI distribution API: `tessera image push`, `tessera image
 * build --push`, and the agent's session commits (to the manager, whose
 * registry takes pushes from agents, src/manager/images/api_registry.c).
 *
 * For the image (a manifest digest given, else the layout's index.json's
 * one entry, or the linux/<host arch> manifest of an index it names): each
 * blob, config and layers first, is looked up with HEAD
 * /v2/<name>/blobs/<digest> and, when the registry lacks it, uploaded in
 * chunks (POST /v2/<name>/blobs/uploads/, PATCH <location> with
 * Content-Range for each chunk, PUT <location>?digest=...); a blob whose
 * upload fails on the way (network, 5xx) starts again, a few times with
 * backoff.  Then the manifest is PUT under the reference's tag (or
 * digest).  Authentication is the pull client's (registry_auth.c: Basic,
 * or the Bearer token flow; a push asks for the scope the registry's
 * challenge names, "repository:<name>:pull,push"), or a `sign` hook that
 * adds headers to every request (the agent's signature for its manager).
 * Loopback registries and those in `insecure` are reached over http.  A
 * blob can also be uploaded while it is still being written (a session
 * commit's new layer, image_push_stream_*). */
#ifndef TESS_IMAGE_PUSH_H
#define TESS_IMAGE_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "registry/registry.h"

#define IMAGE_PUSH_CHUNK ((int64_t)16 << 20)

struct image_push_opts {
        const char *manifest;           /* the image's manifest digest; NULL: the layout's one image */
        const char *const *insecure;    /* NULL-terminated registries reached over http */
        const char *username, *password; /* NULL: TESSERA_REGISTRY_USER / TESSERA_REGISTRY_PASSWORD */
        int64_t chunk;                  /* bytes per PATCH; 0: IMAGE_PUSH_CHUNK */
        int retries;                    /* more attempts per blob; 0: 3, < 0: none */
        bool verbose;                   /* a line per blob on stderr */
        /* headers for one request: method, the URL's path (no query) and
         * the hex SHA-256 of its body; up to REGISTRY_SIGN_LINES lines,
         * malloc'd, freed by the caller.  Optional. */
        int (*sign)(void *data, const char *method, const char *path, const char *body_sha256,
                    char *ret_lines[REGISTRY_SIGN_LINES], struct tess_error **err);
        void *sign_data;
        /* bytes uploaded so far of the blobs the registry lacked; optional */
        void (*progress)(void *data, int64_t sent);
        void *progress_data;
};

struct image_push_result {
        char manifest[72];  /* the manifest's digest */
        size_t blobs, sent; /* blobs of the image; those uploaded */
        long long bytes_sent;
};

/* IN layout - an OCI layout directory (an agent's image store is one);
 *    ref - "host[:port]/name[:tag]"; o - options (NULL: defaults)
 * OUT ret - what was pushed */
int image_push(const char *layout, const char *ref, const struct image_push_opts *o, struct image_push_result *ret,
               struct tess_error **err);

/* A blob uploaded while it is being written to a file: a thread of its
 * own POSTs for an upload at once, then PATCHes each chunk of `o->chunk`
 * bytes as soon as the writer says the file holds it, and PUTs the digest
 * when the writer says the blob is complete.  A later image_push() of an
 * image naming the blob finds it there (HEAD) and sends nothing again; if
 * the upload failed, it uploads the blob as any other.  `o->progress` is
 * not called.
 *
 * image_push_stream_start: `path` is the file the blob is being written
 *   to (it may not exist until grow is first called)
 * image_push_stream_grow: the file now holds `size` bytes of the blob
 * image_push_stream_finish: the blob is complete, `digest` over its `size`
 *   bytes (NULL: the writer gave up; the upload stops, left unfinished);
 *   waits for the upload's end and frees s.
 *   RET 0 (uploaded, or given up), or negative errno: the upload failed */
struct image_push_stream;
int image_push_stream_start(const char *ref, const struct image_push_opts *o, const char *path,
                            struct image_push_stream **ret, struct tess_error **err);
void image_push_stream_grow(struct image_push_stream *s, int64_t size);
int image_push_stream_finish(struct image_push_stream *s, const char *digest, int64_t size, struct tess_error **err);

#endif
