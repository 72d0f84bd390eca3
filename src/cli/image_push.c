/* image_push.c - push an OCI layout to a registry; see image_push.h.
 * One request at a time through the agent's registry client
 * (registry-internal.h): its curl handle, base URL, credentials and the
 * answer to a 401 (registry_auth_challenge); the requests with bodies
 * (POST, PUT) and HEAD are made here. */
#include "../common/compat.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>

#include <jansson.h>

#include "../agent/registry-internal.h"
#include "../common/fs.h"
#include "../common/version.h"
#include "image_push.h"

#define ERROR_BODY_MAX  (64u << 10)
#define HEADER_KEEP_MAX 8192
#define JSON_MAX        ((size_t)4 << 20)

struct answer {
        long status;
        struct buf location, www_auth, body;
};

static void answer_release(struct answer *a)
{
        buf_release(&a->location);
        buf_release(&a->www_auth);
        buf_release(&a->body);
}

static void keep_header(struct buf *b, const char *v, size_t n, bool join)
{
        while (n > 0 && (*v == ' ' || *v == '\t'))
                v++, n--;
        while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
                n--;
        if (b->len + n + 2 > HEADER_KEEP_MAX)
                return;
        if (!join)
                buf_reset(b);
        else if (b->len)
                buf_puts(b, ", ");
        buf_append(b, v, n);
}

static size_t on_header(char *p, size_t size, size_t nitems, void *data)
{
        struct answer *a = data;
        size_t n = size * nitems;
        const char *colon = memchr(p, ':', n);

        if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
                buf_reset(&a->location);
                buf_reset(&a->www_auth);
        } else if (colon && colon - p == 8 && strncasecmp(p, "location", 8) == 0) {
                keep_header(&a->location, colon + 1, n - 9, false);
        } else if (colon && colon - p == 16 && strncasecmp(p, "www-authenticate", 16) == 0) {
                keep_header(&a->www_auth, colon + 1, n - 17, true);
        }
        return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *data)
{
        struct answer *a = data;
        size_t n = size * nmemb;

        if (a->body.len < ERROR_BODY_MAX)
                buf_append(&a->body, p, n < ERROR_BODY_MAX - a->body.len ? n : ERROR_BODY_MAX - a->body.len);
        return n;
}

/* A request body: a file (fd, size) or bytes in memory (mem, size). */
struct body {
        int fd;
        const char *mem;
        int64_t size, off;
};

static size_t on_read(char *p, size_t size, size_t nitems, void *data)
{
        struct body *b = data;
        size_t want = size * nitems;
        ssize_t n;

        if ((int64_t)want > b->size - b->off)
                want = (size_t)(b->size - b->off);
        if (want == 0)
                return 0;
        if (b->mem) {
                memcpy(p, b->mem + b->off, want);
                n = (ssize_t)want;
        } else {
                n = pread(b->fd, p, want, b->off);
                if (n <= 0)
                        return CURL_READFUNC_ABORT;
        }
        b->off += n;
        return (size_t)n;
}

/* One request, answering 401s with the registry's challenge. */
static int request(struct registry_client *c, const char *method, const char *url, const char *content_type,
                   struct body *body, struct answer *a, struct tess_error **err)
{
        for (int tries = 0;;) {
                _cleanup_free_ char *auth = c->bearer ? xasprintf("Authorization: Bearer %s", c->bearer) : NULL;
                _cleanup_free_ char *ct = content_type ? xasprintf("Content-Type: %s", content_type) : NULL;
                struct curl_slist *h = NULL, *t;
                CURL *k = c->curl;
                CURLcode rc;

                answer_release(a);
                *a = (struct answer){ .location = BUF_INIT, .www_auth = BUF_INIT, .body = BUF_INIT };
                if (auth && (t = curl_slist_append(h, auth)))
                        h = t;
                if (ct && (t = curl_slist_append(h, ct)))
                        h = t;
                if ((t = curl_slist_append(h, "Expect:")))
                        h = t;
                curl_easy_reset(k);
                c->errbuf[0] = '\0';
                curl_easy_setopt(k, CURLOPT_URL, url);
                curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
                curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http,https");
                curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT, c->timeout_s);
                curl_easy_setopt(k, CURLOPT_LOW_SPEED_LIMIT, 1L);
                curl_easy_setopt(k, CURLOPT_LOW_SPEED_TIME, c->timeout_s);
                curl_easy_setopt(k, CURLOPT_USERAGENT, "tessera/" TESSERA_VERSION);
                curl_easy_setopt(k, CURLOPT_ERRORBUFFER, c->errbuf);
                curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
                curl_easy_setopt(k, CURLOPT_HEADERFUNCTION, on_header);
                curl_easy_setopt(k, CURLOPT_HEADERDATA, a);
                curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
                curl_easy_setopt(k, CURLOPT_WRITEDATA, a);
                if (!c->bearer && c->send_basic && c->username) {
                        curl_easy_setopt(k, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
                        curl_easy_setopt(k, CURLOPT_USERNAME, c->username);
                        curl_easy_setopt(k, CURLOPT_PASSWORD, c->password ? c->password : "");
                }
                if (streq(method, "HEAD")) {
                        curl_easy_setopt(k, CURLOPT_NOBODY, 1L);
                } else if (body) {
                        body->off = 0;
                        curl_easy_setopt(k, CURLOPT_UPLOAD, 1L);
                        curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
                        curl_easy_setopt(k, CURLOPT_READFUNCTION, on_read);
                        curl_easy_setopt(k, CURLOPT_READDATA, body);
                        curl_easy_setopt(k, CURLOPT_INFILESIZE_LARGE, (curl_off_t)body->size);
                } else {
                        curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
                        curl_easy_setopt(k, CURLOPT_POSTFIELDS, "");
                        curl_easy_setopt(k, CURLOPT_POSTFIELDSIZE, 0L);
                }
                rc = curl_easy_perform(k);
                curl_slist_free_all(h);
                if (rc != CURLE_OK)
                        return tess_err(err, EIO, "%s %s: %s", method, url,
                                        c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
                curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &a->status);
                if (a->status != 401)
                        return 0;
                _cleanup_free_ char *msg = registry_error_message(401, a->body.data, a->body.len);
                int r = registry_auth_challenge(c, a->www_auth.data, msg, ++tries, err);
                if (r < 0)
                        return tess_err_wrap(err, "%s %s", method, url);
        }
}

static int status_error(const char *what, const struct answer *a, struct tess_error **err)
{
        _cleanup_free_ char *msg = registry_error_message(a->status, a->body.data, a->body.len);
        return tess_err(err, registry_status_errno(a->status), "%s: %s", what, msg);
}

static bool digest_ok(const char *d)
{
        return d && strncmp(d, "sha256:", 7) == 0 && strlen(d) == 71 && strspn(d + 7, "0123456789abcdef") == 64;
}

/* The blob's upload: POST for a location, then one PUT of the whole blob. */
static int upload_blob(struct registry_client *c, const char *layout, const char *digest, bool verbose,
                       struct image_push_result *res, struct answer *a, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/blobs/sha256/%s", layout, digest + 7);
        _cleanup_free_ char *post = xasprintf("%s/v2/%s/blobs/uploads/", c->base, c->repository), *put = NULL;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        char *esc;
        int r;

        if (fd < 0 || fstat(fd, &st) < 0)
                return tess_err(err, errno, "%s: %s", path, strerror(errno));
        r = request(c, "POST", post, NULL, NULL, a, err);
        if (r == 0 && a->status != 202)
                r = status_error("starting an upload", a, err);
        if (r == 0 && !a->location.len)
                r = tess_err(err, EIO, "starting an upload: the registry gave no Location");
        if (r < 0)
                return r;
        esc = curl_easy_escape(c->curl, digest, 0);
        const char *loc = a->location.data;
        put = xasprintf("%s%s%sdigest=%s", loc[0] == '/' ? c->base : "", loc, strchr(loc, '?') ? "&" : "?",
                        esc ? esc : digest);
        curl_free(esc);
        struct body b = { .fd = fd, .size = st.st_size };
        if (verbose)
                fprintf(stderr, "  %s: uploading %.1f MiB\n", digest, st.st_size / 1048576.0);
        r = request(c, "PUT", put, "application/octet-stream", &b, a, err);
        if (r == 0 && a->status != 201)
                r = status_error("uploading", a, err);
        if (r == 0) {
                res->sent++;
                res->bytes_sent += st.st_size;
        }
        return r;
}

/* A blob the registry lacks (HEAD) is uploaded. */
static int push_blob(struct registry_client *c, const char *layout, const char *digest, bool verbose,
                     struct image_push_result *res, struct tess_error **err)
{
        _cleanup_free_ char *head = NULL;
        struct answer a = { .location = BUF_INIT, .www_auth = BUF_INIT, .body = BUF_INIT };
        int r;

        if (!digest_ok(digest))
                return tess_err(err, EINVAL, "the manifest names a blob without a sha256 digest");
        res->blobs++;
        head = xasprintf("%s/v2/%s/blobs/%s", c->base, c->repository, digest);
        r = request(c, "HEAD", head, NULL, NULL, &a, err);
        if (r == 0 && a.status == 200) {
                if (verbose)
                        fprintf(stderr, "  %s: the registry has it\n", digest);
        } else if (r == 0) {
                r = upload_blob(c, layout, digest, verbose, res, &a, err);
        }
        answer_release(&a);
        if (r < 0)
                return tess_err_wrap(err, "pushing blob %s", digest);
        return 0;
}

static int read_json(const char *path, json_t **ret, char **ret_text, size_t *ret_len, struct tess_error **err)
{
        _cleanup_free_ char *text = NULL;
        json_error_t je;
        size_t len;

        if (fs_read_file(path, JSON_MAX, &text, &len, err) < 0)
                return -EIO;
        *ret = json_loadb(text, len, 0, &je);
        if (!json_is_object(*ret)) {
                json_decref(*ret);
                return tess_err(err, EINVAL, "%s: not a JSON object (%s)", path, je.text);
        }
        if (ret_text) {
                *ret_text = TAKE_PTR(text);
                *ret_len = len;
        }
        return 0;
}

/* The manifest index.json names: its one entry, or its linux/<arch> one. */
static int pick_manifest(const char *layout, char **ret_digest, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/index.json", layout);
        json_t *index = NULL, *e;
        size_t i;

        if (read_json(path, &index, NULL, NULL, err) < 0)
                return -EINVAL;
        json_t *ms = json_object_get(index, "manifests");
        json_array_foreach(ms, i, e) {
                const json_t *p = json_object_get(e, "platform");
                const char *arch = json_string_value(json_object_get(p, "architecture"));
                const char *d = json_string_value(json_object_get(e, "digest"));
                if ((json_array_size(ms) == 1 || (arch && streq(arch, image_host_arch()))) && digest_ok(d)) {
                        *ret_digest = xstrdup(d);
                        json_decref(index);
                        return 0;
                }
        }
        json_decref(index);
        return tess_err(err, EINVAL, "%s names no image manifest for linux/%s", path, image_host_arch());
}

/* The blobs of the manifest `manifest` of `layout`, then the manifest, under `tag_or_digest`. */
static int push_manifest(struct registry_client *c, const char *layout, const char *manifest, const char *tag_or_digest,
                         bool verbose, struct image_push_result *res, struct tess_error **err)
{
        _cleanup_free_ char *mpath = xasprintf("%s/blobs/sha256/%s", layout, manifest + 7), *mtext = NULL;
        _cleanup_free_ char *url = xasprintf("%s/v2/%s/manifests/%s", c->base, c->repository, tag_or_digest);
        struct answer a = { .location = BUF_INIT, .www_auth = BUF_INIT, .body = BUF_INIT };
        json_t *m = NULL, *l;
        size_t mlen, i;
        int r;

        r = read_json(mpath, &m, &mtext, &mlen, err);
        if (r < 0)
                return r;
        r = push_blob(c, layout, json_string_value(json_object_get(json_object_get(m, "config"), "digest")), verbose,
                      res, err);
        json_array_foreach(json_object_get(m, "layers"), i, l) {
                if (r < 0)
                        break;
                r = push_blob(c, layout, json_string_value(json_object_get(l, "digest")), verbose, res, err);
        }
        if (r == 0) {
                const char *mt = json_string_value(json_object_get(m, "mediaType"));
                struct body b = { .fd = -1, .mem = mtext, .size = (int64_t)mlen };
                r = request(c, "PUT", url, mt ? mt : MEDIA_OCI_MANIFEST, &b, &a, err);
                if (r == 0 && a.status != 201)
                        r = status_error("putting the manifest", &a, err);
        }
        answer_release(&a);
        json_decref(m);
        return r;
}

int image_push(const char *layout, const char *ref, const char *const *insecure, bool verbose,
               struct image_push_result *ret, struct tess_error **err)
{
        struct registry_opts o = { .insecure = insecure,
                                   .username = getenv("TESSERA_REGISTRY_USER"),
                                   .password = getenv("TESSERA_REGISTRY_PASSWORD") };
        struct image_ref ir = { 0 };
        struct registry_client c = { 0 };
        struct image_push_result res = { 0 };
        char *manifest = NULL;
        int r;

        r = image_ref_parse(ref, NULL, &ir, err);
        if (r < 0)
                return tess_err_wrap(err, "pushing to '%s' (a reference needs its registry: HOST[:PORT]/NAME:TAG)",
                                     ref);
        r = pick_manifest(layout, &manifest, err);
        if (r == 0)
                r = registry_client_init(&c, &ir, &o, err);
        if (r == 0)
                r = push_manifest(&c, layout, manifest, ir.digest ? ir.digest : ir.tag, verbose, &res, err);
        if (r == 0) {
                snprintf(res.manifest, sizeof(res.manifest), "%s", manifest);
                *ret = res;
        }
        free(manifest);
        registry_client_release(&c);
        image_ref_release(&ir);
        if (r < 0)
                return tess_err_wrap(err, "pushing %s to %s", layout, ref);
        return 0;
}
