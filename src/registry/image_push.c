/* image_push.c - push an image of an OCI layout to a registry; see
 * image_push.h.  One request at a time through the pull's registry client
 * (registry-internal.h): its curl handle, base URL, credentials and the
 * answer to a 401 (registry_auth_challenge); the requests with bodies
 * (POST, PATCH, PUT) and HEAD are made here.  A chunk is read into memory
 * whole: its hash is signed before it is sent. */
#include "common/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <strings.h>
#include <sys/stat.h>

#include <jansson.h>

#include "common/crypto.h"
#include "common/fs.h"
#include "common/version.h"
#include "registry/image_push.h"
#include "registry/registry-internal.h"

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

/* A request body: bytes in memory (mem, size). */
struct body {
        const char *mem;
        int64_t size, off;
};

static size_t on_read(char *p, size_t size, size_t nitems, void *data)
{
        struct body *b = data;
        size_t want = size * nitems;

        if ((int64_t)want > b->size - b->off)
                want = (size_t)(b->size - b->off);
        memcpy(p, b->mem + b->off, want);
        b->off += (int64_t)want;
        return want;
}

/* One push: the registry client, the options, what was done. */
struct push {
        struct registry_client c;
        const struct image_push_opts *o;
        const char *layout;
        struct image_push_result res;
        int64_t sent; /* bytes uploaded, for progress */
};

/* "Name: value" lines of the sign hook for a request to `url`. */
static int add_signature(struct push *p, const char *method, const char *url, const struct body *body,
                         struct curl_slist **h, struct tess_error **err)
{
        char *lines[REGISTRY_SIGN_LINES] = { 0 }, hash[65];
        const char *path = url;
        int r;

        if (!p->o->sign)
                return 0;
        if (strncmp(path, p->c.base, strlen(p->c.base)) == 0)
                path += strlen(p->c.base);
        _cleanup_free_ char *bare = xstrndup(path, strcspn(path, "?"));
        sha256_hex(body ? body->mem : "", body ? (size_t)body->size : 0, hash);
        r = p->o->sign(p->o->sign_data, method, bare, hash, lines, err);
        for (int i = 0; i < REGISTRY_SIGN_LINES; i++) {
                struct curl_slist *t = lines[i] && r >= 0 ? curl_slist_append(*h, lines[i]) : NULL;
                if (t)
                        *h = t;
                free(lines[i]);
        }
        return r;
}

/* One request, answering 401s with the registry's challenge. */
static int request(struct push *p, const char *method, const char *url, const char *const *extra,
                   struct body *body, struct answer *a, struct tess_error **err)
{
        struct registry_client *c = &p->c;

        for (int tries = 0;;) {
                _cleanup_free_ char *auth = c->bearer ? xasprintf("Authorization: Bearer %s", c->bearer) : NULL;
                struct curl_slist *h = NULL, *t;
                CURL *k = c->curl;
                CURLcode rc;

                answer_release(a);
                *a = (struct answer){ .location = BUF_INIT, .www_auth = BUF_INIT, .body = BUF_INIT };
                if (auth && (t = curl_slist_append(h, auth)))
                        h = t;
                for (; extra && *extra; extra++)
                        if ((t = curl_slist_append(h, *extra)))
                                h = t;
                if ((t = curl_slist_append(h, "Expect:")))
                        h = t;
                if (add_signature(p, method, url, body, &h, err) < 0) {
                        curl_slist_free_all(h);
                        return -EIO;
                }
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

/* The absolute URL of the Location of the last answer. */
static char *location_url(const struct push *p, const struct answer *a)
{
        const char *loc = a->location.data;
        return xasprintf("%s%s", loc[0] == '/' ? p->c.base : "", loc);
}

/* Read up to n bytes at off of fd into buf; RET bytes read or -errno. */
static ssize_t read_at(int fd, char *buf, size_t n, int64_t off)
{
        size_t done = 0;
        while (done < n) {
                ssize_t k = pread(fd, buf + done, n - done, off + (int64_t)done);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                done += (size_t)k;
        }
        return (ssize_t)done;
}

/* Where a blob's bytes come from: a file that holds them all from the
 * start, or one still being written, `size` growing until `complete`
 * (then `digest` is the blob's).  The writer's side is image_push_stream. */
struct source {
        const char *path;
        int fd; /* opened once there are bytes */
        pthread_mutex_t lock;
        pthread_cond_t grown;
        int64_t size, awaited; /* awaited: what source_wait waits for */
        bool complete, cancelled;
        char digest[72];
};

static void source_init(struct source *s, const char *path)
{
        *s = (struct source){ .path = path, .fd = -1 };
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->grown, NULL);
}

static void source_release(struct source *s)
{
        if (s->fd >= 0)
                close(s->fd);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->grown);
}

/* Wait until the bytes from `off` fill a chunk of `max`, or the blob is
 * complete.  RET the bytes there are from off, up to max (0: the end), or
 * -ECANCELED when the writer gave up. */
static int64_t source_wait(struct source *s, int64_t off, int64_t max)
{
        int64_t n;

        pthread_mutex_lock(&s->lock);
        s->awaited = off + max;
        while (!s->complete && !s->cancelled && s->size - off < max)
                pthread_cond_wait(&s->grown, &s->lock);
        n = s->cancelled ? -ECANCELED : s->size - off < max ? s->size - off : max;
        pthread_mutex_unlock(&s->lock);
        return n;
}

/* One attempt at uploading the blob: POST for a location, a PATCH per
 * chunk, PUT with the digest.  *ret_transient: whether another may help. */
static int upload_once(struct push *p, struct source *src, char *chunk, bool *ret_transient, struct tess_error **err)
{
        _cleanup_free_ char *post = xasprintf("%s/v2/%s/blobs/uploads/", p->c.base, p->c.repository), *url = NULL;
        struct answer a = { .location = BUF_INIT, .www_auth = BUF_INIT, .body = BUF_INIT };
        int64_t off = 0, sent_before = p->sent, want;
        int r;

        *ret_transient = true;
        r = request(p, "POST", post, NULL, NULL, &a, err);
        if (r == 0 && a.status != 202)
                r = status_error("starting an upload", &a, err);
        if (r == 0 && !a.location.len)
                r = tess_err(err, EIO, "starting an upload: the registry gave no Location");
        while (r == 0 && (want = source_wait(src, off, p->o->chunk)) != 0) {
                if (want < 0) {
                        *ret_transient = false;
                        r = tess_err(err, ECANCELED, "the blob was never finished");
                        break;
                }
                if (src->fd < 0)
                        src->fd = open(src->path, O_RDONLY | O_CLOEXEC);
                ssize_t n = src->fd < 0 ? -errno : read_at(src->fd, chunk, (size_t)want, off);
                if (n < want) {
                        *ret_transient = false;
                        r = tess_err(err, EIO, "reading %s: %s", src->path, n < 0 ? strerror((int)-n) : "short");
                        break;
                }
                free(url);
                url = location_url(p, &a);
                char range[64], length[64];
                snprintf(range, sizeof(range), "Content-Range: %lld-%lld", (long long)off, (long long)(off + n - 1));
                snprintf(length, sizeof(length), "Content-Length: %zd", n);
                const char *extra[] = { "Content-Type: application/octet-stream", range, length, NULL };
                struct body b = { .mem = chunk, .size = n };
                r = request(p, "PATCH", url, extra, &b, &a, err);
                if (r == 0 && a.status != 202)
                        r = status_error("uploading a chunk", &a, err);
                if (r == 0 && !a.location.len)
                        r = tess_err(err, EIO, "uploading a chunk: the registry gave no Location");
                if (r == 0) {
                        off += n;
                        p->sent += n;
                        if (p->o->progress)
                                p->o->progress(p->o->progress_data, p->sent);
                }
        }
        if (r == 0) {
                _cleanup_free_ char *loc = location_url(p, &a);
                char *esc = curl_easy_escape(p->c.curl, src->digest, 0);
                free(url);
                url = xasprintf("%s%sdigest=%s", loc, strchr(loc, '?') ? "&" : "?", esc ? esc : src->digest);
                curl_free(esc);
                r = request(p, "PUT", url, NULL, &(struct body){ .mem = "" }, &a, err);
                if (r == 0 && a.status != 201)
                        r = status_error("finishing the upload", &a, err);
        }
        if (r < 0 && a.status >= 400 && a.status < 500 && a.status != 408 && a.status != 429)
                *ret_transient = false;
        if (r < 0)
                p->sent = sent_before;
        answer_release(&a);
        return r;
}

/* Upload src's blob, again from its start after a failure that another
 * attempt may get past. */
static int upload_blob(struct push *p, struct source *src, struct tess_error **err)
{
        _cleanup_free_ char *chunk = xmalloc((size_t)p->o->chunk);
        bool transient = false;
        int r;

        for (int attempt = 0;; attempt++) {
                r = upload_once(p, src, chunk, &transient, err);
                if (r == 0 || !transient || attempt >= p->o->retries)
                        break;
                if (p->o->verbose)
                        fprintf(stderr, "  %s: %s; again\n", src->path, (*err)->msg);
                *err = tess_error_free(*err);
                registry_backoff(&p->c, attempt);
        }
        if (r == 0) {
                p->res.sent++;
                p->res.bytes_sent += src->size;
        }
        return r;
}

/* Upload the layout's blob `digest`. */
static int upload_file(struct push *p, const char *digest, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/blobs/sha256/%s", p->layout, digest + 7);
        struct source src;
        struct stat st;
        int r;

        source_init(&src, path);
        src.fd = open(path, O_RDONLY | O_CLOEXEC);
        if (src.fd < 0 || fstat(src.fd, &st) < 0) {
                r = tess_err(err, errno, "%s: %s", path, strerror(errno));
        } else {
                src.size = st.st_size;
                src.complete = true;
                snprintf(src.digest, sizeof(src.digest), "%s", digest);
                if (p->o->verbose)
                        fprintf(stderr, "  %s: uploading %.1f MiB\n", digest, st.st_size / 1048576.0);
                r = upload_blob(p, &src, err);
        }
        source_release(&src);
        return r;
}

/* A blob the registry lacks (HEAD) is uploaded. */
static int push_blob(struct push *p, const char *digest, struct tess_error **err)
{
        _cleanup_free_ char *head = NULL;
        struct answer a = { .location = BUF_INIT, .www_auth = BUF_INIT, .body = BUF_INIT };
        int r;

        if (!digest_ok(digest))
                return tess_err(err, EINVAL, "the manifest names a blob without a sha256 digest");
        p->res.blobs++;
        head = xasprintf("%s/v2/%s/blobs/%s", p->c.base, p->c.repository, digest);
        r = request(p, "HEAD", head, NULL, NULL, &a, err);
        if (r == 0 && a.status == 200) {
                if (p->o->verbose)
                        fprintf(stderr, "  %s: the registry has it\n", digest);
        } else if (r == 0) {
                r = upload_file(p, digest, err);
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

/* The blobs of the manifest `manifest`, then the manifest, under `tag_or_digest`. */
static int push_manifest(struct push *p, const char *manifest, const char *tag_or_digest, struct tess_error **err)
{
        _cleanup_free_ char *mpath = xasprintf("%s/blobs/sha256/%s", p->layout, manifest + 7), *mtext = NULL;
        _cleanup_free_ char *url = xasprintf("%s/v2/%s/manifests/%s", p->c.base, p->c.repository, tag_or_digest);
        struct answer a = { .location = BUF_INIT, .www_auth = BUF_INIT, .body = BUF_INIT };
        json_t *m = NULL, *l;
        size_t mlen, i;
        int r;

        r = read_json(mpath, &m, &mtext, &mlen, err);
        if (r < 0)
                return r;
        r = push_blob(p, json_string_value(json_object_get(json_object_get(m, "config"), "digest")), err);
        json_array_foreach(json_object_get(m, "layers"), i, l) {
                if (r < 0)
                        break;
                r = push_blob(p, json_string_value(json_object_get(l, "digest")), err);
        }
        if (r == 0) {
                const char *mt = json_string_value(json_object_get(m, "mediaType"));
                _cleanup_free_ char *ct = xasprintf("Content-Type: %s", mt ? mt : MEDIA_OCI_MANIFEST);
                const char *extra[] = { ct, NULL };
                struct body b = { .mem = mtext, .size = (int64_t)mlen };
                r = request(p, "PUT", url, extra, &b, &a, err);
                if (r == 0 && a.status != 201)
                        r = status_error("putting the manifest", &a, err);
        }
        answer_release(&a);
        json_decref(m);
        return r;
}

/* The options' defaults filled in, `ref` parsed into ir and the client
 * made for its registry. */
static int push_open(struct push *p, struct image_push_opts *o, const char *ref, struct image_ref *ir,
                     struct tess_error **err)
{
        int r;

        if (!o->username && !o->password) {
                o->username = getenv("TESSERA_REGISTRY_USER");
                o->password = getenv("TESSERA_REGISTRY_PASSWORD");
        }
        if (o->chunk <= 0)
                o->chunk = IMAGE_PUSH_CHUNK;
        if (o->retries == 0)
                o->retries = 3;
        p->o = o;
        r = image_ref_parse(ref, NULL, ir, err);
        if (r < 0)
                return tess_err_wrap(err, "pushing to '%s' (a reference needs its registry: HOST[:PORT]/NAME:TAG)",
                                     ref);
        r = registry_client_init(
                &p->c, ir, &(struct registry_opts){ .insecure = o->insecure, .username = o->username, .password = o->password },
                err);
        if (r < 0)
                image_ref_release(ir);
        return r;
}

int image_push(const char *layout, const char *ref, const struct image_push_opts *opts, struct image_push_result *ret,
               struct tess_error **err)
{
        struct image_push_opts o = opts ? *opts : (struct image_push_opts){ 0 };
        struct image_ref ir = { 0 };
        struct push p = { .layout = layout };
        char *manifest = NULL;
        int r;

        r = push_open(&p, &o, ref, &ir, err);
        if (r < 0)
                return r;
        if (o.manifest && !digest_ok(o.manifest))
                r = tess_err(err, EINVAL, "'%s' is not a manifest digest", o.manifest);
        else if (o.manifest)
                manifest = xstrdup(o.manifest);
        else
                r = pick_manifest(layout, &manifest, err);
        if (r == 0)
                r = push_manifest(&p, manifest, ir.digest ? ir.digest : ir.tag, err);
        if (r == 0) {
                snprintf(p.res.manifest, sizeof(p.res.manifest), "%s", manifest);
                *ret = p.res;
        }
        free(manifest);
        registry_client_release(&p.c);
        image_ref_release(&ir);
        if (r < 0)
                return tess_err_wrap(err, "pushing %s to %s", layout, ref);
        return 0;
}

struct image_push_stream {
        char *path;
        struct image_push_opts o;
        struct image_ref ir;
        struct push p;
        struct source src;
        pthread_t thread;
        int rc;
        struct tess_error *err;
};

static void *stream_main(void *data)
{
        struct image_push_stream *s = data;

        s->rc = upload_blob(&s->p, &s->src, &s->err);
        return NULL;
}

static void stream_free(struct image_push_stream *s)
{
        source_release(&s->src);
        registry_client_release(&s->p.c);
        image_ref_release(&s->ir);
        tess_error_free(s->err);
        free(s->path);
        free(s);
}

int image_push_stream_start(const char *ref, const struct image_push_opts *opts, const char *path,
                            struct image_push_stream **ret, struct tess_error **err)
{
        struct image_push_stream *s = xcalloc(1, sizeof(*s));
        int r;

        s->o = opts ? *opts : (struct image_push_opts){ 0 };
        s->o.progress = NULL; /* called from this upload's thread: not the caller's to hear */
        s->o.verbose = false;
        s->path = xstrdup(path);
        source_init(&s->src, s->path);
        r = push_open(&s->p, &s->o, ref, &s->ir, err);
        if (r < 0) {
                source_release(&s->src);
                free(s->path);
                free(s);
                return r;
        }
        r = pthread_create(&s->thread, NULL, stream_main, s);
        if (r != 0) {
                stream_free(s);
                return tess_err(err, r, "starting a thread: %s", strerror(r));
        }
        *ret = s;
        return 0;
}

void image_push_stream_grow(struct image_push_stream *s, int64_t size)
{
        pthread_mutex_lock(&s->src.lock);
        s->src.size = size;
        if (size >= s->src.awaited)
                pthread_cond_signal(&s->src.grown);
        pthread_mutex_unlock(&s->src.lock);
}

int image_push_stream_finish(struct image_push_stream *s, const char *digest, int64_t size, struct tess_error **err)
{
        int r;

        pthread_mutex_lock(&s->src.lock);
        if (digest && digest_ok(digest)) {
                s->src.size = size;
                s->src.complete = true;
                snprintf(s->src.digest, sizeof(s->src.digest), "%s", digest);
        } else {
                s->src.cancelled = true;
        }
        pthread_cond_signal(&s->src.grown);
        pthread_mutex_unlock(&s->src.lock);
        pthread_join(s->thread, NULL);
        r = s->src.cancelled ? 0 : s->rc; /* given up: how the upload ended does not matter */
        if (r < 0) {
                *err = TAKE_PTR(s->err);
                r = tess_err_wrap(err, "uploading %s", s->path);
        }
        stream_free(s);
        return r;
}
