/* client.c - endpoint and keys, signed requests over libcurl, server-sent
 * events (see client.h). */
#include "common/compat.h"

#include <ctype.h>
#include <stdarg.h>

#include <curl/curl.h>

#include "common/buf.h"
#include "common/sign.h"
#include "common/timeutil.h"
#include "common/version.h"
#include "cli/client.h"

#define DEFAULT_ENDPOINT "http://127.0.0.1:8090"
#define CONNECT_TIMEOUT_S 10L
#define MAX_ANSWER (256u << 20)

/* The process's one connection state. */
static struct {
        bool resolved;
        char *endpoint_override;
        char *endpoint; /* scheme://authority/prefix, no trailing '/' */
        char *host;     /* the Host header: authority less user info */
        char *prefix;   /* path of the endpoint ("" or "/api") */
        char *access_key, *secret_key;
        CURL *curl;
} client;

/* ---- endpoint and keys ---- */

static const char *env2(const char *a, const char *b)
{
        const char *v = secure_getenv(a);
        if (!v || !*v)
                v = secure_getenv(b);
        return v && *v ? v : NULL;
}

bool client_keys_from_env(void)
{
        return env2("BACKEND_ACCESS_KEY", "TESSERA_ACCESS_KEY") || env2("BACKEND_SECRET_KEY", "TESSERA_SECRET_KEY");
}

void client_set_endpoint(const char *endpoint)
{
        free(client.endpoint_override);
        client.endpoint_override = endpoint ? xstrdup(endpoint) : NULL;
}

/* Split the endpoint into host (for the Host header) and path prefix. */
static int parse_endpoint(const char *url, struct tess_error **err)
{
        _cleanup_free_ char *full = NULL;
        const char *p, *auth, *end, *at;

        if (!strstr(url, "://"))
                full = xasprintf("http://%s", url);
        else
                full = xstrdup(url);
        if (strncasecmp(full, "http://", 7) != 0 && strncasecmp(full, "https://", 8) != 0)
                return tess_err(err, EINVAL, "endpoint '%s' is not an http:// or https:// URL", url);
        size_t n = strlen(full);
        while (n > 0 && full[n - 1] == '/')
                full[--n] = '\0';
        auth = strstr(full, "://") + 3;
        end = auth + strcspn(auth, "/?#");
        if (*end == '?' || *end == '#')
                return tess_err(err, EINVAL, "endpoint '%s' must not have a query or fragment", url);
        at = memchr(auth, '@', (size_t)(end - auth));
        p = at ? at + 1 : auth;
        if (p == end)
                return tess_err(err, EINVAL, "endpoint '%s' has no host", url);
        for (const char *s = p; s < end; s++)
                if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
                        return tess_err(err, EINVAL, "endpoint '%s' has an invalid host", url);
        client.host = xstrndup(p, (size_t)(end - p));
        client.prefix = xstrdup(end);
        client.endpoint = TAKE_PTR(full);
        return 0;
}

static int client_resolve(struct tess_error **err)
{
        struct cli_config conf = { 0 };
        const char *endpoint;
        int r;

        if (client.resolved)
                return 0;
        endpoint = client.endpoint_override;
        if (!endpoint)
                endpoint = env2("BACKEND_ENDPOINT", "TESSERA_ENDPOINT");
        /* a broken config file matters only when something comes from it */
        bool env_only = endpoint && client_keys_from_env();
        r = config_load(&conf, env_only ? NULL : err);
        if (r < 0 && !env_only)
                return r;
        if (!endpoint)
                endpoint = conf.endpoint && *conf.endpoint ? conf.endpoint : DEFAULT_ENDPOINT;
        r = parse_endpoint(endpoint, err);
        if (r >= 0 && client_keys_from_env()) {
                const char *ak = env2("BACKEND_ACCESS_KEY", "TESSERA_ACCESS_KEY");
                const char *sk = env2("BACKEND_SECRET_KEY", "TESSERA_SECRET_KEY");
                if (!ak || !sk) {
                        r = tess_err(err, EINVAL, "set both BACKEND_ACCESS_KEY and BACKEND_SECRET_KEY (or neither)");
                } else {
                        client.access_key = xstrdup(ak);
                        client.secret_key = xstrdup(sk);
                }
        } else if (r >= 0 && conf.access_key && *conf.access_key && conf.secret_key && *conf.secret_key) {
                client.access_key = TAKE_PTR(conf.access_key);
                client.secret_key = TAKE_PTR(conf.secret_key);
        }
        config_release(&conf);
        if (r < 0)
                return r;
        client.resolved = true;
        return 0;
}

const char *client_endpoint(struct tess_error **err)
{
        return client_resolve(err) < 0 ? NULL : client.endpoint;
}

void client_close(void)
{
        if (client.curl)
                curl_easy_cleanup(client.curl);
        free(client.endpoint_override);
        free(client.endpoint);
        free(client.host);
        free(client.prefix);
        free(client.access_key);
        if (client.secret_key)
                explicit_bzero(client.secret_key, strlen(client.secret_key));
        free(client.secret_key);
        memset(&client, 0, sizeof(client));
}

/* ---- paths ---- */

static void query_value(struct buf *b, const json_t *v)
{
        size_t i;
        json_t *x;

        if (json_is_string(v)) {
                buf_percent_encode(b, json_string_value(v));
        } else if (json_is_integer(v)) {
                buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        } else if (json_is_boolean(v)) {
                buf_puts(b, json_is_true(v) ? "true" : "false");
        } else if (json_is_array(v)) {
                json_array_foreach(v, i, x) {
                        if (i)
                                buf_puts(b, "%2C");
                        query_value(b, x);
                }
        }
}

void client_query(struct buf *b, const json_t *query)
{
        const char *k;
        json_t *v;
        bool first = true;

        json_object_foreach((json_t *)query, k, v) {
                if (json_is_null(v))
                        continue;
                buf_putc(b, first ? '?' : '&');
                first = false;
                buf_percent_encode(b, k);
                buf_putc(b, '=');
                query_value(b, v);
        }
}

/* Encode the bytes an HTTP request line cannot carry; the rest as given. */
static void request_target(struct buf *b, const char *path_query)
{
        if (path_query[0] != '/')
                buf_putc(b, '/');
        for (const unsigned char *p = (const unsigned char *)path_query; *p; p++) {
                if (*p <= ' ' || *p >= 0x7f || *p == '#')
                        buf_printf(b, "%%%02X", *p);
                else
                        buf_putc(b, (char)*p);
        }
}

/* ---- requests ---- */

void client_response_release(struct client_response *r)
{
        buf_release(&r->headers);
        buf_release(&r->body);
        free(r->content_type);
        r->content_type = NULL;
        r->status = 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *userdata)
{
        struct client_response *r = userdata;
        buf_append(&r->headers, data, size * n);
        return size * n;
}

static size_t on_body(char *data, size_t size, size_t n, void *userdata)
{
        struct client_response *r = userdata;
        if (r->body.len + size * n > MAX_ANSWER)
                return 0;
        buf_append(&r->body, data, size * n);
        return size * n;
}

static struct curl_slist *add_header(struct curl_slist *list, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static struct curl_slist *add_header(struct curl_slist *list, const char *fmt, ...)
{
        _cleanup_free_ char *line = NULL;
        va_list ap;

        va_start(ap, fmt);
        line = xvasprintf(fmt, ap);
        va_end(ap);
        struct curl_slist *l = curl_slist_append(list, line);
        if (!l)
                abort();
        return l;
}

/* The headers of one request, signed when auth asks for it; a body held in
 * memory is signed too (SIGN_BODY_HASH_HEADER). */
static int request_headers(const char *method, const char *signed_path, const char *ctype, const char *body,
                           size_t body_len, enum client_auth auth, struct curl_slist **ret, struct tess_error **err)
{
        char date[48], ymd[9], sig[SIGN_HEX_MAX], body_hash[SIGN_HEX_MAX];
        struct curl_slist *h = NULL;
        bool sign = auth == CLIENT_SIGNED || (auth == CLIENT_IF_KEYS && client.access_key);

        if (sign && !client.access_key)
                return tess_err(err, EACCES, "no credentials: set BACKEND_ACCESS_KEY and BACKEND_SECRET_KEY, "
                                             "or run 'tessera login'");
        time_format_iso(now_usec(), date, sizeof(date));
        /* YYYYMMDD of the date as written: "2026-11-22T..." */
        snprintf(ymd, sizeof(ymd), "%.4s%.2s%.2s", date, date + 5, date + 8);
        h = add_header(h, "Host: %s", client.host);
        h = add_header(h, "Date: %s", date);
        h = add_header(h, "X-BackendAI-Version: %s", API_VERSION_NEWEST);
        h = add_header(h, "Content-Type: %s", ctype);
        h = add_header(h, "Accept: application/json, application/problem+json, text/event-stream, */*");
        h = add_header(h, "Expect:");
        if (sign) {
                int r = 0;
                if (body && (r = sign_body_hash("sha256", body, body_len, body_hash, err)) >= 0)
                        h = add_header(h, "%s: %s", SIGN_BODY_HASH_HEADER, body_hash);
                if (r >= 0)
                        r = sign_compute("sha256", client.secret_key, method, signed_path, date, ymd, client.host,
                                         ctype, API_VERSION_NEWEST, body ? body_hash : NULL, sig, err);
                if (r < 0) {
                        curl_slist_free_all(h);
                        return r;
                }
                h = add_header(h, "Authorization: BackendAI signMethod=HMAC-SHA256, credential=%s:%s",
                               client.access_key, sig);
        }
        *ret = h;
        return 0;
}

typedef size_t (*curl_write_fn)(char *, size_t, size_t, void *);

/* Set up the handle for one request; the caller runs curl_easy_perform. */
static int request_prepare(const char *method, const char *path_query, const char *body, size_t body_len,
                           const char *ctype, enum client_auth auth, curl_write_fn on_data, void *data_arg,
                           struct client_response *resp, struct curl_slist **ret_headers, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf target = BUF_INIT;
        _cleanup_free_ char *url = NULL;
        int r;

        r = client_resolve(err);
        if (r < 0)
                return r;
        if (!client.curl && !(client.curl = curl_easy_init()))
                return tess_err(err, ENOMEM, "cannot initialise libcurl");
        buf_puts(&target, client.prefix);
        request_target(&target, path_query);
        if (!ctype)
                ctype = body ? "application/json" : "text/plain";
        r = request_headers(method, target.data, ctype, body, body_len, auth, ret_headers, err);
        if (r < 0)
                return r;
        url = xasprintf("%.*s%s", (int)(strlen(client.endpoint) - strlen(client.prefix)), client.endpoint,
                        target.data);

        CURL *h = client.curl;
        curl_easy_reset(h);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "tessera/" TESSERA_VERSION);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, *ret_headers);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, resp);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, data_arg);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        if (body || streq(method, "POST") || streq(method, "PUT") || streq(method, "PATCH")) {
                /* body-less writes still say Content-Length: 0 */
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? body_len : 0));
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        }
        if (streq(method, "HEAD"))
                curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        else if (!(streq(method, "GET") && !body) && !streq(method, "POST"))
                curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        return 0;
}

static int request_finish(CURLcode rc, struct client_response *resp, struct tess_error **err)
{
        char *ctype = NULL;

        if (rc != CURLE_OK)
                return tess_err(err, EIO, "cannot reach '%s': %s", client.endpoint, curl_easy_strerror(rc));
        curl_easy_getinfo(client.curl, CURLINFO_RESPONSE_CODE, &resp->status);
        curl_easy_getinfo(client.curl, CURLINFO_CONTENT_TYPE, &ctype);
        free(resp->content_type);
        resp->content_type = ctype ? xstrdup(ctype) : NULL;
        return 0;
}

int client_send(const char *method, const char *path_query, const char *body, size_t body_len,
                enum client_auth auth, struct client_response *ret, struct tess_error **err)
{
        struct curl_slist *headers = NULL;
        int r;

        r = request_prepare(method, path_query, body, body_len, NULL, auth, on_body, ret, ret, &headers, err);
        if (r < 0)
                return r;
        CURLcode rc = curl_easy_perform(client.curl);
        curl_slist_free_all(headers);
        if (rc == CURLE_WRITE_ERROR) /* only on_body refuses data: too large */
                return tess_err(err, EFBIG, "the answer is larger than %u bytes", MAX_ANSWER);
        return request_finish(rc, ret, err);
}

int client_upload(const char *path_query, const char *const *local, const char *const *remote, size_t n,
                  struct client_response *ret, struct tess_error **err)
{
        struct curl_slist *headers = NULL;
        int r;

        r = request_prepare("POST", path_query, NULL, 0, "multipart/form-data", CLIENT_SIGNED, on_body, ret, ret,
                            &headers, err);
        if (r < 0)
                return r;
        curl_mime *mime = curl_mime_init(client.curl);
        for (size_t i = 0; i < n; i++) {
                curl_mimepart *part = curl_mime_addpart(mime);
                curl_mime_name(part, "src");
                if (curl_mime_filedata(part, local[i]) != CURLE_OK) {
                        curl_mime_free(mime);
                        curl_slist_free_all(headers);
                        return tess_err(err, ENOENT, "cannot read '%s'", local[i]);
                }
                curl_mime_filename(part, remote[i]);
                curl_mime_type(part, "application/octet-stream");
        }
        curl_easy_setopt(client.curl, CURLOPT_MIMEPOST, mime);
        CURLcode rc = curl_easy_perform(client.curl);
        curl_mime_free(mime);
        curl_slist_free_all(headers);
        if (rc == CURLE_WRITE_ERROR)
                return tess_err(err, EFBIG, "the answer is larger than %u bytes", MAX_ANSWER);
        return request_finish(rc, ret, err);
}

/* ---- transfers (vfolder tokens) ---- */

struct transfer_sink {
        struct client_response *resp;
        const struct client_transfer *t;
        int64_t written;
        int error; /* errno of a failed write */
};

static size_t on_transfer_data(char *data, size_t size, size_t n, void *userdata)
{
        struct transfer_sink *s = userdata;
        long status = 0;

        curl_easy_getinfo(client.curl, CURLINFO_RESPONSE_CODE, &status);
        if (s->t->out_fd < 0 || status / 100 != 2)
                return on_body(data, size, n, s->resp);
        for (size_t done = 0; done < size * n;) {
                ssize_t w = write(s->t->out_fd, data + done, size * n - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        s->error = errno;
                        return 0;
                }
                done += (size_t)w;
        }
        s->written += (int64_t)(size * n);
        return size * n;
}

static int on_transfer_progress(void *userdata, curl_off_t dltotal UNUSED, curl_off_t dlnow, curl_off_t ultotal UNUSED,
                                curl_off_t ulnow)
{
        const struct transfer_sink *s = userdata;
        s->t->progress(s->t->arg, (int64_t)ulnow, (int64_t)dlnow);
        return 0;
}

int client_transfer(const char *method, const char *url, const struct client_transfer *t,
                    struct client_response *ret, struct tess_error **err)
{
        struct transfer_sink sink = { .resp = ret, .t = t };
        struct curl_slist *headers = NULL;
        bool absolute = strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
        int r;

        r = request_prepare(method, absolute ? "/" : url, t->body, t->body_len, "application/offset+octet-stream",
                            CLIENT_UNSIGNED, on_transfer_data, &sink, ret, &headers, err);
        if (r < 0)
                return r;
        for (const char *const *h = t->headers; h && *h; h++)
                headers = add_header(headers, "%s", *h);
        curl_easy_setopt(client.curl, CURLOPT_HTTPHEADER, headers);
        if (absolute)
                curl_easy_setopt(client.curl, CURLOPT_URL, url);
        if (t->progress) {
                curl_easy_setopt(client.curl, CURLOPT_XFERINFOFUNCTION, on_transfer_progress);
                curl_easy_setopt(client.curl, CURLOPT_XFERINFODATA, &sink);
                curl_easy_setopt(client.curl, CURLOPT_NOPROGRESS, 0L);
        }
        CURLcode rc = curl_easy_perform(client.curl);
        curl_slist_free_all(headers);
        if (rc == CURLE_WRITE_ERROR && sink.error)
                return tess_err(err, sink.error, "writing the download: %s", strerror(sink.error));
        if (rc == CURLE_WRITE_ERROR)
                return tess_err(err, EFBIG, "the answer is larger than %u bytes", MAX_ANSWER);
        return request_finish(rc, ret, err);
}

char *client_response_header(const struct client_response *r, const char *name)
{
        size_t n = strlen(name);
        char *found = NULL;

        for (const char *line = r->headers.data; line && *line;) {
                const char *end = strpbrk(line, "\r\n");
                size_t len = end ? (size_t)(end - line) : strlen(line);
                if (len > n && line[n] == ':' && strncasecmp(line, name, n) == 0) {
                        const char *v = line + n + 1;
                        while (*v == ' ' || *v == '\t')
                                v++;
                        free(found);
                        found = xstrndup(v, len - (size_t)(v - line));
                }
                line += len;
                while (*line == '\r' || *line == '\n')
                        line++;
        }
        return found;
}

int client_status_error(const struct client_response *r, struct tess_error **err)
{
        _cleanup_free_ char *line = NULL;
        json_t *j = NULL;
        const char *title = NULL;
        int code;

        switch (r->status) {
        case 400: code = EINVAL; break;
        case 401:
        case 403: code = EACCES; break;
        case 404: code = ENOENT; break;
        case 409: code = EEXIST; break;
        default: code = EIO;
        }
        if (r->body.len)
                j = json_loadb(r->body.data, r->body.len, 0, NULL);
        title = json_string_value(json_object_get(j, "title"));
        if (!title)
                title = json_string_value(json_object_get(j, "msg"));
        if (!title && r->body.len && !j) {
                line = xstrndup(r->body.data, strcspn(r->body.data, "\r\n"));
                if (strlen(line) > 200)
                        line[200] = '\0';
                title = line;
        }
        if (!title || !*title)
                title = "request failed";
        int ret = tess_err(err, code, "%s (HTTP %ld)", title, r->status);
        json_decref(j);
        return ret;
}

int client_json(const char *method, const char *path_query, const json_t *body, enum client_auth auth,
                json_t **ret, struct tess_error **err)
{
        struct client_response resp = CLIENT_RESPONSE_INIT;
        _cleanup_free_ char *text = NULL;
        json_error_t jerr;
        int r;

        if (body && !(text = json_dumps(body, JSON_COMPACT)))
                return tess_err(err, EINVAL, "cannot encode the request body");
        r = client_send(method, path_query, text, text ? strlen(text) : 0, auth, &resp, err);
        if (r >= 0 && (resp.status < 200 || resp.status > 299))
                r = client_status_error(&resp, err);
        if (r >= 0 && ret) {
                if (resp.body.len == 0) {
                        *ret = json_null();
                } else if (!(*ret = json_loadb(resp.body.data, resp.body.len, JSON_DECODE_ANY, &jerr))) {
                        r = tess_err(err, EIO, "the server's answer is not JSON (%s): %s",
                                     resp.content_type ? resp.content_type : "no content type", jerr.text);
                }
        }
        client_response_release(&resp);
        return r;
}

/* ---- server-sent events ---- */

struct sse {
        client_event_fn fn;
        void *userdata;
        struct client_response *resp;
        struct buf line, event, data;
        bool stopped;
        int fn_result;
        struct tess_error *err;
};

/* One complete line of the stream (without its newline). */
static int sse_line(struct sse *s, char *line)
{
        size_t n = strlen(line);

        if (n && line[n - 1] == '\r')
                line[--n] = '\0';
        if (n == 0) {
                int r = 0;
                if (s->data.len || s->event.len)
                        r = s->fn(s->event.len ? s->event.data : "message", s->data.data, s->userdata, &s->err);
                buf_reset(&s->event);
                buf_reset(&s->data);
                return r;
        }
        if (line[0] == ':')
                return 0;
        char *colon = strchr(line, ':');
        const char *value = "";
        if (colon) {
                *colon = '\0';
                value = colon[1] == ' ' ? colon + 2 : colon + 1;
        }
        if (streq(line, "event")) {
                buf_reset(&s->event);
                buf_puts(&s->event, value);
        } else if (streq(line, "data")) {
                if (s->data.len)
                        buf_putc(&s->data, '\n');
                buf_puts(&s->data, value);
        }
        return 0;
}

static size_t on_sse(char *data, size_t size, size_t n, void *userdata)
{
        struct sse *s = userdata;
        size_t len = size * n;
        long status = 0;

        curl_easy_getinfo(client.curl, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200)
                return on_body(data, size, n, s->resp);
        for (size_t i = 0; i < len; i++) {
                if (data[i] != '\n') {
                        buf_putc(&s->line, data[i]);
                        continue;
                }
                int r = sse_line(s, s->line.data);
                buf_reset(&s->line);
                if (r != 0) {
                        s->stopped = true;
                        s->fn_result = r;
                        return 0;
                }
        }
        return len;
}

int client_events(const char *path_query, client_event_fn fn, void *userdata, struct tess_error **err)
{
        struct client_response resp = CLIENT_RESPONSE_INIT;
        struct sse s = { .fn = fn, .userdata = userdata, .resp = &resp, .line = BUF_INIT, .event = BUF_INIT,
                         .data = BUF_INIT };
        struct curl_slist *headers = NULL;
        int r;

        r = request_prepare("GET", path_query, NULL, 0, NULL, CLIENT_SIGNED, on_sse, &s, &resp, &headers, err);
        if (r >= 0) {
                CURLcode rc = curl_easy_perform(client.curl);
                if (s.stopped && s.fn_result < 0) {
                        r = s.err ? tess_err(err, s.err->code, "%s", s.err->msg)
                                  : tess_err(err, -s.fn_result, "reading the event stream failed");
                } else if (!s.stopped) {
                        r = request_finish(rc, &resp, err);
                        if (r >= 0 && resp.status != 200)
                                r = client_status_error(&resp, err);
                }
        }
        curl_slist_free_all(headers);
        tess_error_free(s.err);
        buf_release(&s.line);
        buf_release(&s.event);
        buf_release(&s.data);
        client_response_release(&resp);
        return r < 0 ? r : 0;
}
