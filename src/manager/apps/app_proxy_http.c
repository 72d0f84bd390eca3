/* app_proxy_http.c - one HTTP request of the app proxy, forwarded to the
 * app and its answer back (see app_proxy.h).
 *
 * A thread opens the tunnel and hands its socket to libcurl
 * (CURLOPT_OPENSOCKETFUNCTION, already connected), which sends the request
 * (the client's method, target and headers) and reads the answer.  Two
 * buffers of XFER_BUF bytes stand between the thread and the loop:
 *
 *   body in    filled by http_body_sink on the loop, drained by curl's
 *              read callback; full: the request is suspended until the
 *              thread has taken some
 *   answer     filled by curl's write callback, which waits while it is
 *              full; drained by the reader of http_reply_reader on the
 *              loop, which suspends the request while it is empty
 *
 * The thread tells the loop about changes through one note at a time
 * (note_pending): the head is in (the loop answers with the app's status
 * and headers), data or room came, the transfer ended or failed.  The
 * client going away cancels the transfer (the thread's waits and curl's
 * progress callback see it).
 *
 *   state       who writes it       meaning
 *   head_ready  thread              status and headers are known
 *   head_sent   loop                the answer has been queued
 *   out_end     thread              curl finished: what is buffered is all
 *   failed      thread              no (more) answer: err says why when !head_ready
 *   cancelled   loop                the client is gone, or the manager stops */
#include "common/compat.h"

#include <curl/curl.h>
#include <pthread.h>
#include <strings.h>

#include "common/buf.h"
#include "common/log.h"
#include "manager/api/api.h"
#include "manager/apps/app_proxy.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"

#define XFER_BUF (256u << 10)

struct xfer {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        int refs; /* __atomic */
        /* the loop's side: NULL once the request ended */
        struct api_ctx *c;
        struct http_req *req;
        /* fixed at the start */
        struct app_target t;
        char secret[160];
        char *method, *target;
        char **headers;
        bool has_body;
        int64_t body_size; /* -1: chunked */
        CURL *curl;        /* the thread's */
        /* under mu */
        struct buf in;
        size_t in_off;
        bool in_end, in_full;
        bool head_ready, head_sent, out_end, failed, cancelled, note_pending;
        long status;
        int64_t size;          /* the answer's Content-Length, -1 unknown */
        char **answer_headers; /* "Name\0value" pairs, the thread's until head_ready */
        size_t n_answer_headers;
        struct buf out;
        size_t out_off;
        struct tess_error *err;
};

static struct xfer *xfer_ref(struct xfer *x)
{
        __atomic_add_fetch(&x->refs, 1, __ATOMIC_SEQ_CST);
        return x;
}

static void xfer_unref(void *data)
{
        struct xfer *x = data;

        if (__atomic_sub_fetch(&x->refs, 1, __ATOMIC_SEQ_CST) > 0)
                return;
        pthread_mutex_destroy(&x->mu);
        pthread_cond_destroy(&x->cv);
        free(x->method);
        free(x->target);
        app_proxy_strv_free(x->headers);
        for (size_t i = 0; i < x->n_answer_headers; i++)
                free(x->answer_headers[i]);
        free(x->answer_headers);
        buf_release(&x->in);
        buf_release(&x->out);
        tess_error_free(x->err);
        free(x);
}

static void on_note(void *data);

/* With mu held: have the loop look at x (once until it has; so the pipe
 * holds at most one note per transfer and a write to it never blocks). */
static void note_locked(struct xfer *x)
{
        if (x->note_pending)
                return;
        x->note_pending = true;
        app_proxy_post(on_note, xfer_ref(x));
}

/* ---- the loop's side ---- */

static void answer_error(struct api_ctx *c, const struct app_target *t, const struct tess_error *err)
{
        switch (err ? err->code : EIO) {
        case ECONNREFUSED:
                return api_problem(c, 502, "app-not-listening",
                                   "nothing listens on port %d of the session (start the app again: start-service)",
                                   t->port);
        case ENOENT:
                return api_problem(c, 404, "session-not-found", "the session's kernel is gone");
        case ETIMEDOUT:
                return api_problem(c, 504, "app-timeout", "%s", err->msg);
        case ETXTBSY:
                return api_problem(c, 503, "too-busy", "%s", err->msg);
        default:
                return api_problem(c, 502, "app-unreachable", "%s", err ? err->msg : "the app is unreachable");
        }
}

static ssize_t read_answer(void *data, char *out, size_t max)
{
        struct xfer *x = data;
        ssize_t r;

        pthread_mutex_lock(&x->mu);
        size_t avail = x->out.len - x->out_off;
        if (avail > 0) {
                size_t n = avail < max ? avail : max;
                memcpy(out, x->out.data + x->out_off, n);
                x->out_off += n;
                if (x->out_off == x->out.len) {
                        buf_reset(&x->out);
                        x->out_off = 0;
                }
                pthread_cond_broadcast(&x->cv);
                r = (ssize_t)n;
        } else {
                r = x->out_end ? 0 : x->failed || x->cancelled ? -EIO : HTTP_READER_WAIT;
        }
        pthread_mutex_unlock(&x->mu);
        return r;
}

/* The app's status and headers as the answer to the client. */
static void send_head(struct xfer *x)
{
        for (size_t i = 0; i < x->n_answer_headers; i++) {
                const char *name = x->answer_headers[i];
                http_add_header(x->req, name, name + strlen(name) + 1);
        }
        if (x->status == 204 || x->status == 304)
                http_reply(x->req, (unsigned)x->status, NULL, "", 0);
        else
                http_reply_reader(x->req, (unsigned)x->status, NULL,
                                  x->size >= 0 ? (uint64_t)x->size : HTTP_SIZE_UNKNOWN, read_answer, xfer_ref(x),
                                  xfer_unref);
}

static void on_note(void *data)
{
        struct xfer *x = data;
        bool head = false, error = false;

        pthread_mutex_lock(&x->mu);
        x->note_pending = false;
        if (x->head_ready && !x->head_sent)
                head = x->head_sent = true;
        else if (x->failed && !x->head_ready && !x->head_sent)
                error = x->head_sent = true;
        pthread_mutex_unlock(&x->mu);
        if (x->req) {
                if (head)
                        send_head(x);
                else if (error)
                        answer_error(x->c, &x->t, x->err);
                http_resume(x->req);
        }
        xfer_unref(x);
}

static size_t take_body(void *data, const char *p, size_t n)
{
        struct xfer *x = data;
        size_t took = n;

        pthread_mutex_lock(&x->mu);
        if (!p) {
                x->in_end = true;
        } else if (!x->out_end && !x->failed && !x->cancelled) {
                size_t held = x->in.len - x->in_off, room = held < XFER_BUF ? XFER_BUF - held : 0;
                took = n < room ? n : room;
                buf_append(&x->in, p, took);
                x->in_full = took < n;
        }
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
        return took;
}

/* The request ended: answered, or the client went away. */
static void released(void *state)
{
        struct xfer *x = state;

        x->req = NULL;
        x->c = NULL;
        pthread_mutex_lock(&x->mu);
        if (!x->out_end)
                x->cancelled = true;
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
        xfer_unref(x);
}

static void on_shutdown(struct api_ctx *c)
{
        struct xfer *x = c->state;
        bool sent;

        pthread_mutex_lock(&x->mu);
        x->cancelled = true;
        sent = x->head_sent;
        x->head_sent = true;
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
        if (!sent)
                api_problem(c, 503, "unavailable", "the manager is stopping");
        http_resume(c->req);
}

/* ---- the thread's side: curl's callbacks ---- */

static size_t read_body(char *buf, size_t size, size_t nitems, void *data)
{
        struct xfer *x = data;
        size_t n = 0;

        pthread_mutex_lock(&x->mu);
        while (x->in.len == x->in_off && !x->in_end && !x->cancelled) {
                if (x->in_full) /* the loop holds the rest back until told there is room */
                        note_locked(x);
                pthread_cond_wait(&x->cv, &x->mu);
        }
        if (x->cancelled) {
                pthread_mutex_unlock(&x->mu);
                return CURL_READFUNC_ABORT;
        }
        n = x->in.len - x->in_off;
        if (n > size * nitems)
                n = size * nitems;
        memcpy(buf, x->in.data + x->in_off, n);
        x->in_off += n;
        if (x->in_off == x->in.len) {
                buf_reset(&x->in);
                x->in_off = 0;
        }
        if (x->in_full)
                note_locked(x);
        pthread_mutex_unlock(&x->mu);
        return n;
}

static int64_t content_length(const char *v, size_t len)
{
        int64_t n = 0;

        if (len == 0 || len > 18)
                return -1;
        for (size_t i = 0; i < len; i++) {
                if (v[i] < '0' || v[i] > '9')
                        return -1;
                n = n * 10 + (v[i] - '0');
        }
        return n;
}

static void forget_answer_headers(struct xfer *x)
{
        for (size_t i = 0; i < x->n_answer_headers; i++)
                free(x->answer_headers[i]);
        x->n_answer_headers = 0;
        x->size = -1;
}

static size_t on_header(char *p, size_t size, size_t n, void *data)
{
        struct xfer *x = data;
        size_t len = size * n, vlen;

        while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n'))
                len--;
        if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) { /* a status line: the headers of an answer follow */
                forget_answer_headers(x);
                return size * n;
        }
        if (len == 0) { /* their end */
                long status = 0;
                curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
                if (status < 200) /* 100 Continue and the like: another head follows */
                        return size * n;
                pthread_mutex_lock(&x->mu);
                x->status = status;
                x->head_ready = true;
                note_locked(x);
                pthread_mutex_unlock(&x->mu);
                return size * n;
        }
        const char *colon = memchr(p, ':', len);
        if (!colon || x->n_answer_headers >= 200)
                return size * n;
        size_t nlen = (size_t)(colon - p);
        const char *v = colon + 1;
        vlen = len - nlen - 1;
        while (vlen > 0 && (*v == ' ' || *v == '\t'))
                v++, vlen--;
        if (nlen == 14 && strncasecmp(p, "Content-Length", 14) == 0)
                x->size = content_length(v, vlen);
        if (!app_proxy_answer_header(p, nlen, v, vlen))
                return size * n;
        char *pair = xmalloc(nlen + vlen + 2);
        memcpy(pair, p, nlen);
        pair[nlen] = '\0';
        memcpy(pair + nlen + 1, v, vlen);
        pair[nlen + 1 + vlen] = '\0';
        x->answer_headers = xrealloc(x->answer_headers, (x->n_answer_headers + 1) * sizeof(char *));
        x->answer_headers[x->n_answer_headers++] = pair;
        return size * n;
}

static size_t on_data(char *p, size_t size, size_t n, void *data)
{
        struct xfer *x = data;
        size_t len = size * n;

        pthread_mutex_lock(&x->mu);
        while (x->out.len - x->out_off >= XFER_BUF && !x->cancelled)
                pthread_cond_wait(&x->cv, &x->mu);
        if (x->cancelled) {
                pthread_mutex_unlock(&x->mu);
                return 0;
        }
        if (x->out_off > 0) { /* keep the buffer from growing */
                memmove(x->out.data, x->out.data + x->out_off, x->out.len - x->out_off);
                x->out.len -= x->out_off;
                x->out_off = 0;
        }
        bool was_empty = x->out.len == 0;
        buf_append(&x->out, p, len);
        if (was_empty)
                note_locked(x);
        pthread_mutex_unlock(&x->mu);
        return len;
}

static int on_progress(void *data, curl_off_t dt UNUSED, curl_off_t dn UNUSED, curl_off_t ut UNUSED,
                       curl_off_t un UNUSED)
{
        struct xfer *x = data;
        return __atomic_load_n(&x->cancelled, __ATOMIC_RELAXED);
}

struct tunnel_socket {
        int fd;
};

static curl_socket_t open_socket(void *data, curlsocktype purpose UNUSED, struct curl_sockaddr *addr UNUSED)
{
        struct tunnel_socket *s = data;
        int fd = s->fd;

        s->fd = -1; /* curl's now, closed through close_socket */
        return fd >= 0 ? fd : CURL_SOCKET_BAD;
}

static int connected_already(void *data UNUSED, curl_socket_t fd UNUSED, curlsocktype purpose UNUSED)
{
        return CURL_SOCKOPT_ALREADY_CONNECTED;
}

static int close_socket(void *data UNUSED, curl_socket_t fd)
{
        return close(fd);
}

/* Send the request on the tunnel fd and read the answer. */
static int transfer(struct xfer *x, int fd, struct tess_error **err)
{
        struct tunnel_socket sock = { fd };
        struct curl_slist *h = NULL;
        _cleanup_free_ char *url = xasprintf("http://127.0.0.1:%d%s", x->t.port, x->target);

        x->curl = curl_easy_init();
        if (!x->curl) {
                close(fd);
                return tess_err(err, ENOMEM, "cannot create an HTTP client");
        }
        for (char **l = x->headers; l && *l; l++)
                h = curl_slist_append(h, *l);
        h = curl_slist_append(h, "Expect:");
        if (!x->has_body && (streq(x->method, "POST") || streq(x->method, "PUT") || streq(x->method, "PATCH")))
                h = curl_slist_append(h, "Content-Length: 0");
        curl_easy_setopt(x->curl, CURLOPT_URL, url);
        curl_easy_setopt(x->curl, CURLOPT_PATH_AS_IS, 1L);
        curl_easy_setopt(x->curl, CURLOPT_PROXY, "");
        curl_easy_setopt(x->curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        curl_easy_setopt(x->curl, CURLOPT_FORBID_REUSE, 1L);
        if (streq(x->method, "HEAD"))
                curl_easy_setopt(x->curl, CURLOPT_NOBODY, 1L);
        else
                curl_easy_setopt(x->curl, CURLOPT_CUSTOMREQUEST, x->method);
        if (x->has_body) {
                curl_easy_setopt(x->curl, CURLOPT_UPLOAD, 1L);
                curl_easy_setopt(x->curl, CURLOPT_READFUNCTION, read_body);
                curl_easy_setopt(x->curl, CURLOPT_READDATA, x);
                curl_easy_setopt(x->curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->body_size);
        }
        curl_easy_setopt(x->curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(x->curl, CURLOPT_OPENSOCKETFUNCTION, open_socket);
        curl_easy_setopt(x->curl, CURLOPT_OPENSOCKETDATA, &sock);
        curl_easy_setopt(x->curl, CURLOPT_SOCKOPTFUNCTION, connected_already);
        curl_easy_setopt(x->curl, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
        curl_easy_setopt(x->curl, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(x->curl, CURLOPT_HEADERDATA, x);
        curl_easy_setopt(x->curl, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(x->curl, CURLOPT_WRITEDATA, x);
        curl_easy_setopt(x->curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(x->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(x->curl, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(x->curl, CURLOPT_NOPROGRESS, 0L);
        CURLcode cc = curl_easy_perform(x->curl);
        curl_slist_free_all(h);
        curl_easy_cleanup(x->curl);
        x->curl = NULL;
        if (sock.fd >= 0) /* curl never took it */
                close(sock.fd);
        if (cc != CURLE_OK)
                return tess_err(err, cc == CURLE_OPERATION_TIMEDOUT ? ETIMEDOUT : EPROTO, "the app (port %d): %s",
                                x->t.port, curl_easy_strerror(cc));
        return 0;
}

static void *xfer_thread(void *data)
{
        struct xfer *x = data;
        struct tess_error *err = NULL;
        struct buf leftover = BUF_INIT;
        _cleanup_free_ char *target = app_proxy_tunnel_target(&x->t);
        struct agent_endpoint e = app_proxy_endpoint(&x->t, x->secret);
        int fd = agent_socket_open(&e, target, AGENT_SOCKET_TUNNEL, &leftover, &err);
        int r = fd < 0 ? fd : transfer(x, fd, &err);

        buf_release(&leftover);
        pthread_mutex_lock(&x->mu);
        if (r < 0) {
                x->failed = true;
                if (!x->head_ready) {
                        x->err = err;
                        err = NULL;
                }
        } else {
                x->out_end = true;
        }
        if (r < 0 && !x->cancelled && x->head_ready)
                log_info("app proxy: session %s port %d: %s %s: the answer broke off: %s", x->t.s.session, x->t.port,
                         x->method, x->target, err->msg);
        note_locked(x);
        pthread_mutex_unlock(&x->mu);
        tess_error_free(err);
        xfer_unref(x);
        app_proxy_thread_exit();
        return NULL;
}

void app_proxy_http(struct api_ctx *c, const struct app_target *t)
{
        struct tess_error *err = NULL;
        const char *cl = http_header(c->req, "Content-Length"), *te = http_header(c->req, "Transfer-Encoding");

        if (app_proxy_start(c, &err) < 0)
                return api_fail(c, err);
        struct xfer *x = xcalloc(1, sizeof(*x));
        pthread_mutex_init(&x->mu, NULL);
        pthread_cond_init(&x->cv, NULL);
        x->refs = 2; /* the request's and the thread's */
        x->c = c;
        x->req = c->req;
        x->t = *t;
        snprintf(x->secret, sizeof(x->secret), "%s", c->m->cluster_secret);
        x->method = xstrdup(http_method(c->req));
        x->target = xstrdup(http_raw_target(c->req));
        x->headers = app_proxy_request_headers(c->req, false);
        x->in = (struct buf)BUF_INIT;
        x->out = (struct buf)BUF_INIT;
        x->size = -1;
        x->body_size = cl ? strtoll(cl, NULL, 10) : -1;
        x->has_body = (cl && x->body_size > 0) || (!cl && te);
        if (!app_proxy_thread(xfer_thread, x)) {
                x->refs = 1;
                xfer_unref(x);
                return api_problem(c, 503, "too-busy", "the app proxy forwards %d requests already",
                                   APP_PROXY_THREADS_MAX);
        }
        c->state = x;
        c->state_free = released;
        c->on_shutdown = on_shutdown;
        if (x->has_body)
                http_body_sink(c->req, take_body, x);
}
