/* registry_http.c - the registry client's HTTP: one GET through libcurl
 * (headers kept, body to a sink or an error buffer), and registry_get(),
 * which adds authentication (registry_auth.c) and retries with backoff.
 * See registry-internal.h. */
#include "common/compat.h"

#include <arpa/inet.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "common/version.h"
#include "registry/registry-internal.h"

#define ERROR_BODY_MAX (64u << 10)
#define WWW_AUTH_KEEP_MAX 32768
#define BACKOFF_MAX_MS 8000L
#define RECV_BUFFER (256L << 10) /* layers arrive in fewer, larger pieces than curl's 16 KiB */

/* ---- the client ---- */

static bool is_loopback(const char *registry)
{
        _cleanup_free_ char *host = NULL;
        unsigned char addr[16];
        const char *end;

        if (registry[0] == '[') {
                end = strchr(registry, ']');
                host = xstrndup(registry + 1, end ? (size_t)(end - registry - 1) : 0);
                return inet_pton(AF_INET6, host, addr) == 1 && streq(host, "::1");
        }
        end = strchr(registry, ':');
        host = end ? xstrndup(registry, (size_t)(end - registry)) : xstrdup(registry);
        if (streq(host, "localhost"))
                return true;
        return inet_pton(AF_INET, host, addr) == 1 && addr[0] == 127;
}

static bool is_insecure(const char *registry, const char *const *insecure)
{
        for (size_t i = 0; insecure && insecure[i]; i++)
                if (strcasecmp(insecure[i], registry) == 0)
                        return true;
        return is_loopback(registry);
}

int registry_client_init(struct registry_client *c, const struct image_ref *ref, const struct registry_opts *o,
                         struct tess_error **err)
{
        /* docker.io is a name: its API lives elsewhere */
        const char *host = streq(ref->registry, "docker.io") ? "registry-1.docker.io" : ref->registry;

        *c = (struct registry_client){ 0 };
        c->https = !is_insecure(ref->registry, o->insecure);
        c->base = xasprintf("%s://%s", c->https ? "https" : "http", host);
        c->repository = xstrdup(ref->repository);
        c->username = o->username;
        c->password = o->password;
        c->timeout_s = o->timeout_s > 0 ? o->timeout_s : 30;
        c->retries = o->retries < 0 ? 0 : o->retries > 0 ? o->retries : 3;
        c->backoff_ms = o->backoff_ms > 0 ? o->backoff_ms : 500;
        c->sign = o->sign;
        c->sign_data = o->sign_data;
        c->curl = curl_easy_init();
        if (!c->curl) {
                registry_client_release(c);
                return tess_err(err, ENOMEM, "cannot start a libcurl session");
        }
        return 0;
}

void registry_client_release(struct registry_client *c)
{
        if (c->curl)
                curl_easy_cleanup(c->curl);
        free(c->base);
        free(c->repository);
        free(c->bearer);
        for (int i = 0; i < REGISTRY_SIGN_LINES; i++)
                free(c->sign_lines[i]);
        *c = (struct registry_client){ 0 };
}

void registry_response_release(struct registry_response *r)
{
        free(r->content_type);
        free(r->docker_digest);
        *r = (struct registry_response){ 0 };
}

/* ---- the memory sink ---- */

static int buf_sink_start(void *data, long status UNUSED, int64_t range_start UNUSED, struct tess_error **err UNUSED)
{
        struct registry_buf_sink *s = data;
        buf_reset(&s->buf);
        return 0;
}

static int buf_sink_write(void *data, const void *p, size_t n, struct tess_error **err)
{
        struct registry_buf_sink *s = data;

        if (n > s->max - s->buf.len)
                return tess_err(err, EFBIG, "%s larger than %zu bytes", s->what, s->max);
        buf_append(&s->buf, p, n);
        return 0;
}

void registry_buf_sink_init(struct registry_buf_sink *s, size_t max, const char *what, struct registry_sink *ret)
{
        *s = (struct registry_buf_sink){ .buf = BUF_INIT, .max = max, .what = what };
        *ret = (struct registry_sink){ .start = buf_sink_start, .write = buf_sink_write, .data = s };
}

/* ---- one transfer ---- */

struct xfer {
        const struct registry_sink *sink;
        struct registry_response *resp;
        struct buf *error_body;
        struct buf www_auth;
        long status; /* of the answer being received (redirects come first) */
        int64_t range_start;
        bool started;
        int sink_r;
        struct tess_error *sink_err;
};

static char *trimmed(const char *p, size_t n)
{
        while (n > 0 && (*p == ' ' || *p == '\t'))
                p++, n--;
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r' || p[n - 1] == '\n'))
                n--;
        return xstrndup(p, n);
}

static size_t on_header(char *p, size_t size, size_t nitems, void *data)
{
        struct xfer *x = data;
        size_t n = size * nitems;
        const char *colon;

        if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
                /* a new answer (after a redirect or a 1xx): forget the last one's headers */
                const char *sp = memchr(p, ' ', n);
                x->status = 0;
                for (const char *q = sp ? sp + 1 : p + n; q < p + n && *q >= '0' && *q <= '9' && x->status < 1000; q++)
                        x->status = x->status * 10 + (*q - '0');
                free(x->resp->content_type);
                free(x->resp->docker_digest);
                x->resp->content_type = x->resp->docker_digest = NULL;
                buf_reset(&x->www_auth);
                x->range_start = -1;
                return n;
        }
        colon = memchr(p, ':', n);
        if (!colon)
                return n;
        size_t name_len = (size_t)(colon - p), vlen = n - name_len - 1;
        const char *v = colon + 1;
        if (name_len == 12 && strncasecmp(p, "content-type", 12) == 0) {
                const char *semi = memchr(v, ';', vlen);
                free(x->resp->content_type);
                x->resp->content_type = trimmed(v, semi ? (size_t)(semi - v) : vlen);
        } else if (name_len == 21 && strncasecmp(p, "docker-content-digest", 21) == 0) {
                free(x->resp->docker_digest);
                x->resp->docker_digest = trimmed(v, vlen);
        } else if (name_len == 16 && strncasecmp(p, "www-authenticate", 16) == 0) {
                _cleanup_free_ char *t = trimmed(v, vlen);
                if (x->www_auth.len + strlen(t) < WWW_AUTH_KEEP_MAX) {
                        if (x->www_auth.len)
                                buf_puts(&x->www_auth, ", ");
                        buf_puts(&x->www_auth, t);
                }
        } else if (name_len == 13 && strncasecmp(p, "content-range", 13) == 0) {
                _cleanup_free_ char *t = trimmed(v, vlen);
                long long start;
                if (sscanf(t, "bytes %lld-", &start) == 1 && start >= 0)
                        x->range_start = start;
        }
        return n;
}

static int start_sink(struct xfer *x)
{
        x->started = true;
        if (!x->sink || !x->sink->start)
                return 0;
        x->sink_r = x->sink->start(x->sink->data, x->status, x->range_start, &x->sink_err);
        return x->sink_r;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *data)
{
        struct xfer *x = data;
        size_t n = size * nmemb;

        if (x->status < 200 || (x->status >= 300 && x->status < 400))
                return n; /* the body of a redirect being followed */
        if (x->status >= 400) {
                if (x->error_body && x->error_body->len < ERROR_BODY_MAX)
                        buf_append(x->error_body, p, n < ERROR_BODY_MAX - x->error_body->len ? n : ERROR_BODY_MAX - x->error_body->len);
                return n;
        }
        if (!x->started && start_sink(x) < 0)
                return 0;
        if (x->sink && x->sink->write) {
                x->sink_r = x->sink->write(x->sink->data, p, n, &x->sink_err);
                if (x->sink_r < 0)
                        return 0;
        }
        return n;
}

static bool curl_transient(CURLcode rc)
{
        switch (rc) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
                return true;
        default:
                return false;
        }
}

static void setup(struct registry_client *c, const char *url, long max_time_s, struct curl_slist *headers,
                  struct xfer *x, bool basic)
{
        CURL *h = c->curl;
        int64_t offset = x->sink && x->sink->offset ? x->sink->offset(x->sink->data) : 0;
        char range[32];

        curl_easy_reset(h);
        c->errbuf[0] = '\0';
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        /* storage redirects may not downgrade an https registry */
        curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, c->https ? "https" : "http,https");
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, c->timeout_s);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->timeout_s);
        if (max_time_s > 0)
                curl_easy_setopt(h, CURLOPT_TIMEOUT, max_time_s);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "tessera/" TESSERA_VERSION);
        curl_easy_setopt(h, CURLOPT_BUFFERSIZE, RECV_BUFFER);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
        if (basic && c->username) {
                curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
                curl_easy_setopt(h, CURLOPT_USERNAME, c->username);
                curl_easy_setopt(h, CURLOPT_PASSWORD, c->password ? c->password : "");
        }
        if (offset > 0) {
                snprintf(range, sizeof(range), "%lld-", (long long)offset);
                curl_easy_setopt(h, CURLOPT_RANGE, range);
        }
}

/* Append "Name: value" (none when line is NULL); false on OOM. */
static bool append_header(struct curl_slist **list, const char *line)
{
        struct curl_slist *l;

        if (!line)
                return true;
        l = curl_slist_append(*list, line);
        if (!l)
                return false;
        *list = l;
        return true;
}

static int take_sink_error(struct xfer *x, struct tess_error **err)
{
        if (err) {
                tess_error_free(*err);
                *err = TAKE_PTR(x->sink_err);
        }
        x->sink_err = tess_error_free(x->sink_err);
        return x->sink_r;
}

int registry_http_get(struct registry_client *c, const char *url, const char *accept, const char *bearer, bool basic,
                      long max_time_s, const struct registry_sink *sink, struct registry_response *resp,
                      struct buf *error_body, char **ret_www_auth, bool *ret_transient, struct tess_error **err)
{
        struct xfer x = { .sink = sink, .resp = resp, .error_body = error_body, .www_auth = BUF_INIT,
                          .range_start = -1 };
        _cleanup_free_ char *accept_h = accept ? xasprintf("Accept: %s", accept) : NULL;
        _cleanup_free_ char *auth_h = bearer ? xasprintf("Authorization: Bearer %s", bearer) : NULL;
        struct curl_slist *headers = NULL;
        CURLcode rc;
        int r = 0;

        *ret_transient = false;
        bool ok = append_header(&headers, accept_h) && append_header(&headers, auth_h);
        for (int i = 0; ok && i < REGISTRY_SIGN_LINES; i++)
                ok = append_header(&headers, c->sign_lines[i]);
        if (!ok) {
                curl_slist_free_all(headers);
                return tess_err(err, ENOMEM, "GET %s: out of memory", url);
        }
        setup(c, url, max_time_s, headers, &x, basic);
        rc = curl_easy_perform(c->curl);
        curl_slist_free_all(headers);
        if (x.sink_r < 0) {
                r = take_sink_error(&x, err);
        } else if (rc != CURLE_OK) {
                *ret_transient = curl_transient(rc);
                r = tess_err(err, EIO, "GET %s: %s", url, c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
        } else {
                curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &resp->status);
                /* an empty 2xx body still starts the sink (a retry may have to reset it) */
                if (resp->status >= 200 && resp->status < 300 && !x.started && start_sink(&x) < 0)
                        r = take_sink_error(&x, err);
                if (ret_www_auth && resp->status == 401)
                        *ret_www_auth = buf_detach(&x.www_auth, NULL);
        }
        buf_release(&x.www_auth);
        return r;
}

/* ---- error answers ---- */

static const char *reason(long status)
{
        switch (status) {
        case 400: return "bad request";
        case 401: return "unauthorized";
        case 403: return "denied";
        case 404: return "not found";
        case 405: return "method not allowed";
        case 408: return "request timeout";
        case 429: return "too many requests";
        case 500: return "internal server error";
        case 502: return "bad gateway";
        case 503: return "service unavailable";
        case 504: return "gateway timeout";
        default: return "unexpected answer";
        }
}

/* A registry's text in our message: printable ASCII, bounded. */
static void put_printable(struct buf *b, const char *s)
{
        for (size_t i = 0; s[i] && i < 200; i++)
                buf_putc(b, s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
}

char *registry_error_message(long status, const char *body, size_t len)
{
        json_t *j = len ? json_loadb(body, len, 0, NULL) : NULL;
        const char *msg = NULL;
        struct buf b = BUF_INIT;

        if (json_is_object(j)) {
                json_t *e0 = json_array_get(json_object_get(j, "errors"), 0);
                msg = json_string_value(json_object_get(e0, "message"));
                if (!msg || !*msg)
                        msg = json_string_value(json_object_get(e0, "code"));
                if (!msg || !*msg)
                        msg = json_string_value(json_object_get(j, "details"));
                if (!msg || !*msg)
                        msg = json_string_value(json_object_get(j, "error_description"));
                if (!msg || !*msg)
                        msg = json_string_value(json_object_get(j, "error"));
        }
        put_printable(&b, msg && *msg ? msg : reason(status));
        buf_printf(&b, " (%ld)", status);
        json_decref(j);
        return buf_detach(&b, NULL);
}

int registry_status_errno(long status)
{
        switch (status) {
        case 400: return EINVAL;
        case 401:
        case 403: return EACCES;
        case 404: return ENOENT;
        default: return EIO;
        }
}

/* ---- requests with authentication and retries ---- */

void registry_backoff(const struct registry_client *c, int attempt)
{
        long ms = c->backoff_ms;
        for (int i = 0; i < attempt && ms < BACKOFF_MAX_MS; i++)
                ms *= 2;
        if (ms > BACKOFF_MAX_MS)
                ms = BACKOFF_MAX_MS;
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static bool status_transient(long status)
{
        return status == 408 || status == 429 || status >= 500;
}

static void clear_sign_lines(struct registry_client *c)
{
        for (int i = 0; i < REGISTRY_SIGN_LINES; i++) {
                free(c->sign_lines[i]);
                c->sign_lines[i] = NULL;
        }
}

/* The extra headers of one attempt (signatures hold a time: each attempt
 * signs anew). */
static int sign_request(struct registry_client *c, const char *path, struct tess_error **err)
{
        clear_sign_lines(c);
        if (!c->sign)
                return 0;
        int r = c->sign(c->sign_data, path, c->sign_lines, err);
        if (r < 0)
                clear_sign_lines(c);
        return r;
}

int registry_get(struct registry_client *c, const char *path, const char *accept, long max_time_s,
                 const struct registry_sink *sink, struct registry_response *resp, struct tess_error **err)
{
        _cleanup_free_ char *url = xasprintf("%s%s", c->base, path);
        int attempt = 0, auth_tries = 0, r;

        for (;;) {
                _cleanup_(buf_release) struct buf body = BUF_INIT;
                _cleanup_free_ char *www = NULL, *msg = NULL;
                bool transient;

                registry_response_release(resp);
                r = sign_request(c, path, err);
                if (r < 0)
                        return r;
                r = registry_http_get(c, url, accept, c->bearer, c->send_basic, max_time_s, sink, resp, &body, &www,
                                      &transient, err);
                clear_sign_lines(c);
                if (r < 0) {
                        if (!transient || attempt >= c->retries)
                                return attempt ? tess_err(err, -r, "%s, after %d attempts", (*err)->msg, attempt + 1)
                                               : r;
                        *err = tess_error_free(*err);
                        registry_backoff(c, attempt++);
                        continue;
                }
                if (resp->status >= 200 && resp->status < 300)
                        return 0;
                msg = registry_error_message(resp->status, body.data, body.len);
                if (resp->status == 401) {
                        r = registry_auth_challenge(c, www ? www : "", msg, ++auth_tries, err);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (status_transient(resp->status) && attempt < c->retries) {
                        registry_backoff(c, attempt++);
                        continue;
                }
                if (attempt)
                        return tess_err(err, registry_status_errno(resp->status), "%s, after %d attempts", msg,
                                        attempt + 1);
                return tess_err(err, registry_status_errno(resp->status), "%s", msg);
        }
}
