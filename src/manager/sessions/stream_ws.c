/* stream_ws.c - a thread per WebSocket into a session; the loop hears
 * from the threads through one pipe. */
#include "common/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <strings.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "common/ws.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"
#include "manager/sessions/session.h"
#include "manager/sessions/stream_ws.h"

#define TOUCH_EVERY_USEC (5 * USEC_PER_SEC)

enum note_kind {
        NOTE_TOUCH,
        NOTE_DONE
};

struct note {
        enum note_kind kind;
        struct stream_ws *s;
};

static int note_pipe[2] = { -1, -1 };

static void stream_ws_free(void *data)
{
        struct stream_ws *s = data;
        if (s->data_free)
                s->data_free(s->data);
        buf_release(&s->extra);
        free(s);
}

static void post(struct stream_ws *s, enum note_kind kind)
{
        struct note n = { kind, s };
        if (write(note_pipe[1], &n, sizeof(n)) != (ssize_t)sizeof(n))
                log_error("session stream: cannot reach the loop: %s", strerror(errno));
}

static void on_note(struct loop *l UNUSED, int fd, uint32_t events UNUSED, void *data UNUSED)
{
        struct note n;

        while (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n)) {
                if (n.kind == NOTE_TOUCH) {
                        session_touch(n.s->m, n.s->t.session, now_usec());
                } else {
                        held_conn_drop(n.s->m, n.s->held);
                        http_upgraded_close(n.s->u);
                        stream_ws_free(n.s);
                }
        }
}

static int ensure_pipe(struct manager *m, struct tess_error **err)
{
        if (note_pipe[0] >= 0)
                return 0;
        if (pipe2(note_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return tess_err(err, errno, "pipe: %s", strerror(errno));
        fcntl(note_pipe[1], F_SETFL, 0);
        return loop_add_fd(m->loop, note_pipe[0], 0x001 /* EPOLLIN */, on_note, NULL, err);
}

void stream_ws_touch(struct stream_ws *s)
{
        int64_t now = monotonic_usec();
        if (now - s->last_touch >= TOUCH_EVERY_USEC) {
                s->last_touch = now;
                post(s, NOTE_TOUCH);
        }
}

bool stream_ws_revoked(struct stream_ws *s)
{
        return __atomic_load_n(&s->revoked, __ATOMIC_ACQUIRE);
}

static void revoke_access(void *data)
{
        struct stream_ws *s = data;
        __atomic_store_n(&s->revoked, 1, __ATOMIC_RELEASE);
}

static void *stream_thread(void *data)
{
        struct stream_ws *s = data;
        s->run(s);
        post(s, NOTE_DONE);
        return NULL;
}

static void on_upgraded(void *data, int fd, const char *extra, size_t extra_len, struct http_upgraded *u)
{
        struct stream_ws *s = data;
        pthread_attr_t attr;
        pthread_t t;

        s->fd = fd;
        s->u = u;
        buf_append(&s->extra, extra, extra_len);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, (size_t)256 << 10);
        if (pthread_create(&t, &attr, stream_thread, s) != 0) {
                log_error("stream of session %s: cannot start a thread", s->t.session);
                http_upgraded_close(u);
                stream_ws_free(s);
        } else {
                s->held = held_conn_add(s->m, &s->cred, revoke_access, s);
        }
        pthread_attr_destroy(&attr);
}

void stream_ws_accept(struct api_ctx *c, const char *what, void (*run)(struct stream_ws *s), void *data,
                      void (*data_free)(void *data))
{
        const char *upgrade = http_header(c->req, "Upgrade");
        const char *key = http_header(c->req, "Sec-WebSocket-Key");
        const char *version = http_header(c->req, "Sec-WebSocket-Version");
        struct tess_error *err = NULL;
        char accept[WS_ACCEPT_LEN + 1];
        struct stream_ws *s = xcalloc(1, sizeof(*s));

        s->m = c->m;
        s->fd = -1;
        s->extra = (struct buf)BUF_INIT;
        s->run = run;
        s->data = data;
        s->data_free = data_free;
        if (!upgrade || strcasecmp(upgrade, "websocket") != 0 || !key || !*key) {
                api_problem(c, 400, "invalid-api-params",
                            "%s is a WebSocket: send Upgrade: websocket and Sec-WebSocket-Key", what);
                return stream_ws_free(s);
        }
        if (!version || !streq(version, "13")) {
                http_add_header(c->req, "Sec-WebSocket-Version", "13");
                api_problem(c, 426, "upgrade-required", "only WebSocket version 13 is spoken");
                return stream_ws_free(s);
        }
        snprintf(s->secret, sizeof(s->secret), "%s", c->m->cluster_secret);
        held_cred_of(c, &s->cred);
        if (!api_session_target(c, http_query(c->req, "owner_access_key"), &s->t))
                return stream_ws_free(s);
        if (ensure_pipe(c->m, &err) < 0) {
                stream_ws_free(s);
                return api_fail(c, err);
        }
        ws_accept_key(key, accept);
        http_add_header(c->req, "Upgrade", "websocket");
        http_add_header(c->req, "Sec-WebSocket-Accept", accept);
        http_upgrade(c->req, on_upgraded, s, stream_ws_free);
}
