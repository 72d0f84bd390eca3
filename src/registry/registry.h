/* registry.h - the registry client: image references, and pulling an image
 * from an OCI / Docker v2 registry into the image store (image.h).
 *
 * A pull (registry_pull) fetches the manifest of a tag or digest (choosing
 * the linux/<host arch> entry of an index or manifest list), stores the
 * manifest bytes as a blob under their sha256, then the config and every
 * layer the store does not have yet, streamed into image_blob_write (never
 * whole in memory; the store verifies each digest), and finally tags the
 * image with image_store_tag.  Authentication: anonymous, HTTP Basic, or
 * the Bearer token flow (WWW-Authenticate: Bearer realm=... -> a token from
 * the realm, with the Basic credentials if configured).  https by default;
 * registries in `insecure` and loopback ones use http.  Transient failures
 * (5xx, 429, dropped connections) are retried with backoff, and a blob whose
 * transfer broke off resumes with a Range request.
 *
 * The pull blocks (libcurl easy interface) and keeps no global state: run
 * it in a thread or a helper process.  Call curl_global_init() once at
 * program start before pulling from several threads. */
#ifndef TESSERA_REGISTRY_H
#define TESSERA_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct image_store;

/* ---- references ---- */

/* A parsed reference, Docker's grammar: [host[:port]/]path[:tag][@digest]. */
struct image_ref {
        char *registry;   /* "127.0.0.1:5000", "registry.example.com", "[::1]:5000" */
        char *repository; /* "busybox", "team/app"; "library/x" on docker.io */
        char *tag;        /* "latest" when neither tag nor digest is given; NULL with a digest alone */
        char *digest;     /* "sha256:<64 hex>" or NULL */
};

/* Parse `s` strictly (lowercase path components of [a-z0-9] joined by '.',
 * '_', '__' or dashes; tag [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}; digest
 * sha256:[a-f0-9]{64}; a name of at most 255 characters).  The first
 * component is the registry when it holds a '.' or a ':', is "localhost",
 * or is a bracketed IPv6 address; otherwise the registry is
 * `default_registry` (EINVAL when that is NULL).  On docker.io a one-component
 * repository gets "library/".
 * IN  s, default_registry - borrowed
 * OUT ret - caller owns; release with image_ref_release()
 * RET 0, or -EINVAL with a message that quotes s */
int image_ref_parse(const char *s, const char *default_registry, struct image_ref *ret, struct tess_error **err);
void image_ref_release(struct image_ref *r);
/* "registry/repository@digest" when there is a digest, else
 * "registry/repository:tag" (caller frees): the name a pull tags. */
char *image_ref_format(const struct image_ref *r);

/* ---- pulling ---- */

#define REGISTRY_SIGN_LINES 4

struct registry_opts {
        const char *default_registry;   /* for references without one; NULL: they fail */
        const char *const *insecure;    /* NULL-terminated "host:port" reached over http */
        const char *username, *password; /* Basic credentials, also sent to the token realm */
        const char *arch;                /* platform to pick from an index; NULL: the host's */
        long timeout_s;                  /* connect, and stall of a transfer; 0: 30 */
        int retries;                     /* more attempts after a transient failure; 0: 3, <0: none */
        long backoff_ms;                 /* first retry delay, doubling; 0: 500 */
        /* Called as a config or layer blob arrives (never for blobs the
         * store already has): done bytes of total (the descriptor's size),
         * once with done == total at the end.  Optional. */
        void (*progress)(void *data, const char *digest, int64_t done, int64_t total);
        void *progress_data;
        /* The name the store tags the image under (NULL: image_ref_format()
         * of the reference): the manager's images keep their own names. */
        const char *tag_as;
        /* Extra headers for each GET of `path` ("/v2/...") from the
         * registry itself, never from a token realm: fills up to
         * REGISTRY_SIGN_LINES "Name: value" lines (malloc'd, freed by the
         * client).  The agent signs its requests to the manager this way.
         * Optional; < 0 fails the pull with *err. */
        int (*sign)(void *data, const char *path, char *ret_lines[REGISTRY_SIGN_LINES], struct tess_error **err);
        void *sign_data;
};

/* Pull `ref` into `st` and tag it there under image_ref_format() of the
 * parsed reference.
 * IN  st - the store; ref - a reference (image_ref_parse); o - options (NULL: defaults)
 * OUT ret_manifest_digest - optional; caller frees: the image manifest's digest
 *     (the platform's manifest when the reference names an index)
 * RET 0; -EINVAL bad reference or manifest; -ENOENT unknown repository,
 *     tag or digest; -EACCES authentication failed or access denied;
 *     -EBADMSG digest mismatch; -EIO network or registry failure.  Messages
 *     read "pulling <ref>: manifest unknown (404)". */
int registry_pull(struct image_store *st, const char *ref, const struct registry_opts *o, char **ret_manifest_digest,
                  struct tess_error **err);

#endif
