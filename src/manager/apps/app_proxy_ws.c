/* app_proxy_ws.c - a WebSocket of the app proxy (see app_proxy.h): the
 * client's upgrade request goes to the app as it came (its key, protocols
 * and extensions included), so the app's 101 answers the client as is;
 * then the two sockets are relayed raw until either side ends.  Frames
 * are never decoded: what the app and the browser agreed on passes.
 *
 *   1. a thread opens the tunnel, sends the request, reads the app's head
 *   2. the loop answers the client: 101 with the app's headers (the
 *      upgrade), or the app's refusal as a problem with its status
 *   3. once the 101 is sent, a thread relays; the owner's traffic counts
 *      as activity against the idle timeout
 *   4. the loop closes the client's connection
 * From 3 on the WebSocket is held (held_conn.h): revoking the app cookie's
 * credential shuts both sockets down, which ends the relay. */
#include "common/compat.h"

#include <strings.h>
#include <sys/socket.h>

#include "common/buf.h"
#include "common/http_head.h"
#include "common/log.h"
#include "common/relay.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/api/held_conn.h"
#include "manager/apps/app_proxy.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"
#include "manager/sessions/session.h"

#define TOUCH_EVERY_USEC (5 * USEC_PER_SEC)

struct wsx {
        int refs; /* __atomic */
        struct manager *m;
        struct api_ctx *c; /* NULL once the request ended */
        struct app_target t;
        char secret[160];
        char *request; /* the upgrade request for the app */
        /* step 1 */
        int tunnel;
        struct buf in; /* the app's head and what followed it */
        int head_len;
        struct tess_error *err;
        /* step 3 */
        int client;
        struct buf extra; /* read from the client after its request */
        struct http_upgraded *u;
        int64_t last_touch;
        struct held_cred cred;
        uint64_t held;
};

static struct wsx *wsx_ref(struct wsx *w)
{
        __atomic_add_fetch(&w->refs, 1, __ATOMIC_SEQ_CST);
        return w;
}

static void wsx_unref(void *data)
{
        struct wsx *w = data;

        if (__atomic_sub_fetch(&w->refs, 1, __ATOMIC_SEQ_CST) > 0)
                return;
        if (w->tunnel >= 0)
                close(w->tunnel);
        free(w->request);
        buf_release(&w->in);
        buf_release(&w->extra);
        tess_error_free(w->err);
        free(w);
}

/* ---- 4 ---- */

static void on_relayed(void *data)
{
        struct wsx *w = data;

        held_conn_drop(w->m, w->held);
        http_upgraded_close(w->u);
        wsx_unref(w);
}

static void touch(void *data)
{
        struct wsx *w = data;

        session_touch(w->m, w->t.s.session, now_usec());
        wsx_unref(w);
}

static void moved(void *data)
{
        struct wsx *w = data;
        int64_t now = monotonic_usec();

        if (now - w->last_touch >= TOUCH_EVERY_USEC) {
                w->last_touch = now;
                app_proxy_post(touch, wsx_ref(w));
        }
}

/* ---- 3 ---- */

static void *relay_thread(void *data)
{
        struct wsx *w = data;
        struct relay_side client = { .fd = w->client, .pending = w->extra.data, .pending_len = w->extra.len };
        struct relay_side app = { .fd = w->tunnel,
                                  .pending = w->in.data + w->head_len,
                                  .pending_len = w->in.len - (size_t)w->head_len };

        w->last_touch = monotonic_usec();
        int r = relay_run(&client, &app, moved, w);
        if (r < 0 && r != -ECONNRESET && r != -EPIPE)
                log_info("app proxy: session %s port %d: WebSocket: %s", w->t.s.session, w->t.port, strerror(-r));
        app_proxy_post(on_relayed, w); /* the thread's reference */
        app_proxy_thread_exit();
        return NULL;
}

/* (on the loop, before on_relayed: both sockets are still open) */
static void revoke_access(void *data)
{
        struct wsx *w = data;

        shutdown(w->client, SHUT_RDWR);
        shutdown(w->tunnel, SHUT_RDWR);
}

static void on_upgraded(void *data, int fd, const char *extra, size_t extra_len, struct http_upgraded *u)
{
        struct wsx *w = data; /* http_upgrade's reference, now the relay's */

        w->client = fd;
        w->u = u;
        buf_append(&w->extra, extra, extra_len);
        if (!app_proxy_thread(relay_thread, w)) {
                log_warn("app proxy: session %s: no thread for a WebSocket, closing it", w->t.s.session);
                http_upgraded_close(u);
                wsx_unref(w);
                return;
        }
        w->held = held_conn_add(w->m, &w->cred, revoke_access, w);
}

/* ---- 2 ---- */

static void answer(struct wsx *w)
{
        struct api_ctx *c = w->c;
        struct http_head h;
        struct tess_error *err = NULL;

        if (w->err) {
                int code = w->err->code;
                return api_problem(c,
                                   code == ECONNREFUSED ? 502
                                   : code == ENOENT     ? 404
                                                        : 502,
                                   code == ECONNREFUSED ? "app-not-listening" : "app-unreachable", "%s", w->err->msg);
        }
        if (http_head_parse(w->in.data, (size_t)w->head_len, &h, &err) < 0) {
                api_problem(c, 502, "app-failed", "the app's answer to the WebSocket: %s", err->msg);
                return (void)tess_error_free(err);
        }
        if (h.status != 101)
                return api_problem(c, h.status >= 400 ? (unsigned)h.status : 502, "app-refused",
                                   "the app refused the WebSocket: %d %.*s", h.status, (int)h.reason.len, h.reason.p);
        const struct str *up = http_head_get(&h, "Upgrade");
        _cleanup_free_ char *up_value = up ? xstrndup(up->p, up->len) : xstrdup("websocket");
        http_add_header(c->req, "Upgrade", up_value);
        for (int i = 0; i < h.nfields; i++) {
                const struct http_head_field *f = &h.fields[i];
                if (!app_proxy_answer_header(f->name.p, f->name.len, f->value.p, f->value.len))
                        continue;
                _cleanup_free_ char *name = xstrndup(f->name.p, f->name.len);
                _cleanup_free_ char *value = xstrndup(f->value.p, f->value.len);
                http_add_header(c->req, name, value);
        }
        http_upgrade(c->req, on_upgraded, wsx_ref(w), wsx_unref);
}

static void on_head(void *data)
{
        struct wsx *w = data;

        if (w->c) {
                w->c->on_shutdown = NULL;
                answer(w);
                http_resume(w->c->req);
        }
        wsx_unref(w); /* the thread's */
}

/* ---- 1 ---- */

static void *head_thread(void *data)
{
        struct wsx *w = data;
        struct buf leftover = BUF_INIT;
        _cleanup_free_ char *target = app_proxy_tunnel_target(&w->t);
        struct agent_endpoint e = app_proxy_endpoint(&w->t, w->secret);
        int fd = agent_socket_open(&e, target, AGENT_SOCKET_TUNNEL, &leftover, &w->err);

        if (fd >= 0) {
                w->tunnel = fd;
                buf_append(&w->in, leftover.data, leftover.len);
                if (relay_send_all(fd, w->request, strlen(w->request), &w->err) >= 0)
                        w->head_len = http_head_read(fd, APP_PROXY_HEAD_WAIT_MS, &w->in, &w->err);
                if (w->err)
                        tess_err_wrap(&w->err, "the app (port %d)", w->t.port);
        }
        buf_release(&leftover);
        app_proxy_post(on_head, w);
        app_proxy_thread_exit();
        return NULL;
}

static void released(void *state)
{
        struct wsx *w = state;

        w->c = NULL;
        wsx_unref(w);
}

static void on_shutdown(struct api_ctx *c)
{
        struct wsx *w = c->state;

        w->c = NULL; /* the head, when it comes, is not wanted */
        api_problem(c, 503, "unavailable", "the manager is stopping");
        http_resume(c->req);
}

void app_proxy_ws(struct api_ctx *c, const struct app_target *t, const struct held_cred *cred)
{
        struct tess_error *err = NULL;
        struct buf req = BUF_INIT;

        if (app_proxy_start(c, &err) < 0)
                return api_fail(c, err);
        if (!streq(http_method(c->req), "GET"))
                return api_problem(c, 400, "invalid-api-params", "a WebSocket opens with GET");
        char **headers = app_proxy_request_headers(c->req, true);
        buf_printf(&req, "GET %s HTTP/1.1\r\n", http_raw_target(c->req));
        for (char **l = headers; *l; l++)
                buf_printf(&req, "%s\r\n", *l);
        buf_puts(&req, "\r\n");
        app_proxy_strv_free(headers);
        struct wsx *w = xcalloc(1, sizeof(*w));
        w->refs = 2; /* the request's and the thread's */
        w->m = c->m;
        w->c = c;
        w->t = *t;
        w->cred = *cred;
        snprintf(w->secret, sizeof(w->secret), "%s", c->m->cluster_secret);
        w->request = buf_detach(&req, NULL);
        w->tunnel = w->client = -1;
        w->in = (struct buf)BUF_INIT;
        w->extra = (struct buf)BUF_INIT;
        if (!app_proxy_thread(head_thread, w)) {
                w->refs = 1;
                wsx_unref(w);
                return api_problem(c, 503, "too-busy", "the app proxy forwards %d requests already",
                                   APP_PROXY_THREADS_MAX);
        }
        c->state = w;
        c->state_free = released;
        c->on_shutdown = on_shutdown;
}
