/* registry-internal.h - the registry client's parts, shared by registry.c
 * (the pull), registry_http.c (one request, retries), registry_auth.c (the
 * answer to a 401) and registry_manifest.c (manifest and index JSON).
 * Not an API: see registry.h. */
#ifndef TESSERA_REGISTRY_INTERNAL_H
#define TESSERA_REGISTRY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "common/buf.h"
#include "common/error.h"
#include "image/image.h"
#include "registry/registry.h"

#define REGISTRY_MANIFEST_MAX (4u << 20) /* as Docker and containerd */
#define REGISTRY_CONFIG_MAX (16u << 20)   /* as the store reads them */
#define REGISTRY_LAYERS_MAX 256
#define REGISTRY_INDEX_MAX 1024

/* ---- HTTP (registry_http.c) ---- */

/* One pull's connection to one registry repository. */
struct registry_client {
        CURL *curl;
        char *base;       /* "https://host:port", no trailing '/' */
        char *repository; /* "team/app" */
        const char *username, *password;
        long timeout_s, backoff_ms;
        int retries;
        bool https;
        bool send_basic;    /* the registry asked for Basic: send the credentials */
        char *bearer;       /* the token of the last Bearer challenge answered */
        /* registry_opts.sign, and the lines it gave for the request in flight */
        int (*sign)(void *data, const char *path, char *ret_lines[REGISTRY_SIGN_LINES], struct tess_error **err);
        void *sign_data;
        char *sign_lines[REGISTRY_SIGN_LINES];
        char errbuf[CURL_ERROR_SIZE];
};

/* Where a successful (2xx) answer's body goes.  start() is called before
 * the first body byte of each attempt, with the status (200 or 206) and the
 * first byte offset of a 206 (Content-Range); write() gets the bytes.
 * offset() is how many bytes the sink already has: a retry asks for the
 * rest with a Range request.  Each returns a negative errno (with *err set)
 * to stop: such a failure is never retried. */
struct registry_sink {
        int (*start)(void *data, long status, int64_t range_start, struct tess_error **err);
        int (*write)(void *data, const void *p, size_t n, struct tess_error **err);
        int64_t (*offset)(void *data);
        void *data;
};

/* A sink into memory for small bodies (manifests, tokens): more than
 * `max` bytes fail with EFBIG, naming `what`. */
struct registry_buf_sink {
        struct buf buf;
        size_t max;
        const char *what;
};
/* OUT ret - a sink writing into s (release s->buf after use) */
void registry_buf_sink_init(struct registry_buf_sink *s, size_t max, const char *what, struct registry_sink *ret);

/* Headers of the final answer that a pull looks at. */
struct registry_response {
        long status;
        char *content_type;  /* without parameters */
        char *docker_digest; /* Docker-Content-Digest */
};
void registry_response_release(struct registry_response *r);

/* IN o - the options (defaults applied); ref - the parsed reference.  The
 * client borrows o's credentials: they must outlive it. */
int registry_client_init(struct registry_client *c, const struct image_ref *ref, const struct registry_opts *o,
                         struct tess_error **err);
void registry_client_release(struct registry_client *c);

/* GET base + path (path starts with "/v2/"), answering a 401 through
 * registry_auth_challenge() and retrying transient failures; the body of a
 * 2xx answer goes to sink.  Any other answer fails: ENOENT (404), EACCES
 * (401, 403), EINVAL (400), else EIO, with the registry's own message:
 * "manifest unknown (404)".
 * IN  max_time_s - a limit on the whole transfer (0: only the stall timeout)
 * OUT resp - headers of the answer (on success; release it either way) */
int registry_get(struct registry_client *c, const char *path, const char *accept, long max_time_s,
                 const struct registry_sink *sink, struct registry_response *resp, struct tess_error **err);

/* One GET of an absolute url with no retries, for registry_get() and the
 * token request.  A 2xx body goes to sink; any other body, up to 64 KiB,
 * to *error_body.  Authorization is `bearer` when set, else Basic with
 * the client's credentials when `basic`.  *ret_www_auth (optional) gets
 * the WWW-Authenticate headers of a 401, joined with ", ".
 * RET 0 with resp->status set for any HTTP answer; a curl failure is EIO, and
 * *ret_transient says whether a retry may help. */
int registry_http_get(struct registry_client *c, const char *url, const char *accept, const char *bearer, bool basic,
                      long max_time_s, const struct registry_sink *sink, struct registry_response *resp,
                      struct buf *error_body, char **ret_www_auth, bool *ret_transient, struct tess_error **err);

/* Sleep before retry number attempt + 1: backoff_ms doubling, at most 8 s. */
void registry_backoff(const struct registry_client *c, int attempt);

/* The message of a registry error answer: "manifest unknown (404)" from
 * {"errors": [{"code": ..., "message": ...}]}, else the status's reason. */
char *registry_error_message(long status, const char *body, size_t len);
/* The errno of an HTTP error status. */
int registry_status_errno(long status);

/* ---- authentication (registry_auth.c) ---- */

/* Answer a 401 whose WWW-Authenticate headers are `www_auth`: for Bearer,
 * fetch a token from the realm (with the Basic credentials if any) into
 * c->bearer; for Basic, start sending the credentials.  `tries` counts the
 * 401s of this request: the second is final.
 * RET 0 to retry the request; -EACCES (with the registry's message
 * `message`) when there is nothing more to try. */
int registry_auth_challenge(struct registry_client *c, const char *www_auth, const char *message, int tries,
                            struct tess_error **err);

/* ---- manifests (registry_manifest.c) ---- */

enum manifest_kind {
        MANIFEST_IMAGE, /* OCI image manifest, Docker v2 schema 2 */
        MANIFEST_INDEX, /* OCI image index, Docker manifest list */
};

struct registry_descriptor {
        char *media_type;
        char *digest; /* "sha256:<64 hex>" */
        int64_t size;
        char *os, *architecture, *variant; /* index entries only; may be NULL */
        char *diff_id; /* layers: the config's rootfs.diff_ids entry, once read; may be NULL */
};

struct registry_manifest {
        enum manifest_kind kind;
        char *media_type;
        struct registry_descriptor config; /* image */
        struct registry_descriptor *entries; /* image: layers; index: manifests */
        size_t n_entries;
};

#define MEDIA_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MEDIA_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MEDIA_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MEDIA_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MEDIA_MANIFESTS_ACCEPTED MEDIA_OCI_INDEX ", " MEDIA_OCI_MANIFEST ", " MEDIA_DOCKER_LIST ", " MEDIA_DOCKER_MANIFEST

/* Parse and check a manifest or an index: its kind from its mediaType
 * field, else the Content-Type `content_type` (may be NULL), else its
 * fields; every descriptor's digest a sha256 one and its size >= 0; an
 * image's config an image config.
 * OUT ret - caller owns; release with registry_manifest_release()
 * RET 0, -EINVAL (schema 1, not JSON, a bad descriptor, too many entries) */
int registry_manifest_parse(const char *p, size_t len, const char *content_type, struct registry_manifest *ret,
                            struct tess_error **err);
void registry_manifest_release(struct registry_manifest *m);
/* Give each layer of image manifest m its diff_id from the image config
 * `config` (JSON): false, and none, unless its rootfs.diff_ids holds a
 * sha256 digest for every layer (tagging then says what is wrong). */
bool registry_manifest_set_diff_ids(struct registry_manifest *m, const char *config, size_t len);
/* The entry of an index for linux/`platform` ("amd64", "arm64/v8"), or NULL. */
const struct registry_descriptor *registry_manifest_pick(const struct registry_manifest *index, const char *platform);

/* ---- what a registry holds, for scans (registry_catalog.c) ---- */

#define REGISTRY_LIST_PAGE 100               /* names asked for per page (?n=) */
#define REGISTRY_LIST_PAGE_MAX (4u << 20)    /* bytes of one page */
#define REGISTRY_LIST_MAX 100000             /* names of one listing */
#define REGISTRY_DIGEST_LEN 72               /* "sha256:<64 hex>" and NUL */

/* A client of the registry API at `url` ("http://host:port", "https://host";
 * a path is ignored), for no repository yet. */
int registry_client_init_url(struct registry_client *c, const char *url, const struct registry_opts *o,
                             struct tess_error **err);
/* Make later requests (and token scopes) about `repository`. */
void registry_client_set_repository(struct registry_client *c, const char *repository);
/* Append the names of one listing page (`key` "repositories" of
 * /v2/_catalog, or "tags" of tags/list; null or absent: none) to the JSON
 * array `names`, each checked against Docker's grammar.
 * RET the number appended, or -EINVAL */
int registry_list_parse(const char *p, size_t len, const char *key, json_t *names, struct tess_error **err);
/* The path of the next page from the Link header value `link` (may be
 * NULL): the target of rel="next", a "/v2/..." path or a URL under `base`.
 * OUT ret_path - caller frees; NULL when there is no next page
 * RET 0, or -EINVAL for a header that does not parse or a target elsewhere */
int registry_link_next(const char *link, const char *base, char **ret_path, struct tess_error **err);
/* GET every page of the listing at `path` ("/v2/_catalog",
 * "/v2/<name>/tags/list"): the names under `key`.
 * OUT ret - a JSON array of strings; caller owns */
int registry_list(struct registry_client *c, const char *path, const char *key, json_t **ret, struct tess_error **err);
/* GET and parse the manifest `reference` (a tag or a digest) of the
 * client's repository; its bytes' digest goes to ret_digest and must equal
 * `expected` (when given) and the answer's Docker-Content-Digest.
 * OUT ret - release with registry_manifest_release() */
int registry_manifest_get(struct registry_client *c, const char *reference, const char *expected,
                          char ret_digest[REGISTRY_DIGEST_LEN], struct registry_manifest *ret, struct tess_error **err);
/* GET the blob `digest` (a config) whole, at most max bytes, checked
 * against its digest.  OUT ret - release it */
int registry_blob_get(struct registry_client *c, const char *digest, size_t max, struct buf *ret,
                      struct tess_error **err);

#endif
