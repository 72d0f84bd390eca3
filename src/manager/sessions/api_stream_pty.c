/* api_stream_pty.c - GET /stream/session/{name}/pty[?rows=R&cols=C&terminal=ID]:
 * a terminal in a running session, as a WebSocket in Backend.AI's terminal
 * protocol (src/agent/agent_pty.c speaks it).  The manager relays the
 * messages between the client and a second WebSocket to the agent that
 * runs the session's main kernel, signed like every manager-to-agent
 * request (src/common/sign.h).
 *
 * terminal=ID (src/common/terminal_id.h; a malformed one is a 400) names
 * a terminal the agent keeps between sockets: the same ID on the same
 * session attaches to the same shell again.  Only who may open the
 * session's terminal reaches it, and the agent looks IDs up per kernel.
 * The agent's close code goes on to the client (1000: the shell ended;
 * 4001: another socket took the terminal over); an agent that drops the
 * connection without one closes the client's with 1011.
 *
 * One thread per terminal moves the bytes; the loop only answers the
 * upgrade, records the owner's activity (keystrokes and pings keep the
 * session from the idle timeout) and closes the client's connection when
 * the thread is done, both through one pipe.  A terminal is held
 * (held_conn.h): when the credential that opened it is revoked, the
 * client's socket closes with 1008 and the agent's ends. */
#include "common/compat.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/crypto.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/terminal_id.h"
#include "common/timeutil.h"
#include "common/ws.h"
#include "manager/agent_link/agent_call.h"
#include "manager/agent_link/agent_socket.h"
#include "manager/api/api.h"
#include "manager/api/held_conn.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session.h"

#define TOUCH_EVERY_USEC (5 * USEC_PER_SEC)
#define CLOSE_GRACE_MS   2000

struct relay {
        struct manager *m;
        struct session_target t;
        char secret[160];
        unsigned rows, cols;
        char terminal[TERMINAL_ID_MAX + 1]; /* "": a shell for this socket only */
        /* the client's side, once upgraded */
        int fd;
        struct buf extra;
        struct http_upgraded *u;
        int64_t last_touch;
        struct held_cred cred;
        uint64_t held;
        int revoked; /* __atomic: set by the loop, read by the thread */
};

enum relay_note {
        NOTE_TOUCH,
        NOTE_DONE
};

struct note {
        enum relay_note kind;
        struct relay *r;
};

static int note_pipe[2] = { -1, -1 };

static void relay_free(void *data)
{
        struct relay *r = data;
        buf_release(&r->extra);
        free(r);
}

static void post(struct relay *r, enum relay_note kind)
{
        struct note n = { kind, r };
        if (write(note_pipe[1], &n, sizeof(n)) != (ssize_t)sizeof(n))
                log_error("terminal relay: cannot reach the loop: %s", strerror(errno));
}

static void on_note(struct loop *l UNUSED, int fd, uint32_t events UNUSED, void *data UNUSED)
{
        struct note n;

        while (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n)) {
                if (n.kind == NOTE_TOUCH) {
                        session_touch(n.r->m, n.r->t.session, now_usec());
                } else {
                        held_conn_drop(n.r->m, n.r->held);
                        http_upgraded_close(n.r->u);
                        relay_free(n.r);
                }
        }
}

static int open_agent(struct relay *r, struct buf *leftover, struct tess_error **err)
{
        _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/pty?rows=%u&cols=%u%s%s", r->t.kernel, r->rows, r->cols,
                                                r->terminal[0] ? "&terminal=" : "", r->terminal);
        struct agent_endpoint e = { .secret = r->secret, .agent_id = r->t.agent, .address = r->t.address };

        return agent_socket_open(&e, target, AGENT_SOCKET_WEBSOCKET, leftover, err);
}

struct side {
        struct ws *peer; /* set once both ends are open */
        struct relay *r;
        bool from_client;
};

static void send_error(struct ws *w, const char *msg)
{
        json_t *j = json_pack("{s:s, s:s}", "type", "error", "data", msg);
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        ws_send(w, WS_TEXT, text, strlen(text));
        free(text);
}

/* A message from one side goes to the other as is; the client's must be
 * JSON objects with a type, and keystrokes count as the owner's activity. */
static int forward(struct ws *w, int opcode, const uint8_t *msg, size_t len, void *data)
{
        struct side *s = data;

        if (s->from_client) {
                json_t *j = opcode == WS_TEXT ? json_loadb((const char *)msg, len, 0, NULL) : NULL;
                bool ok = json_is_string(json_object_get(j, "type"));
                json_decref(j);
                if (!ok) {
                        send_error(w, "messages are JSON objects with a type: stdin, resize, ping or restart");
                        return 0;
                }
                int64_t now = monotonic_usec();
                if (now - s->r->last_touch >= TOUCH_EVERY_USEC) {
                        s->r->last_touch = now;
                        post(s->r, NOTE_TOUCH);
                }
        }
        return s->peer ? ws_send(s->peer, opcode, msg, len) : 0;
}

/* The agent closed first: the client hears its code and reason (1000 the
 * shell ended, 1011 a failure, 4xxx the terminal's own, as 4001 taken
 * over); a connection that dropped without a close frame is a failure. */
static void close_as_agent(struct ws *client, struct ws *agent)
{
        const char *reason = NULL;
        uint16_t code = ws_close_received(agent, &reason);

        if (code == 0)
                ws_close(client, 1011, "the connection to the agent was lost");
        else if (code == 1000 || code == 1011 || (code >= 3000 && code <= 4999))
                ws_close(client, code, reason);
        else
                ws_close(client, 1000, NULL);
}

/* Pump both WebSockets until one ends or access is revoked, then close
 * the other (for at most CLOSE_GRACE_MS). */
static void relay_run(struct relay *r, struct ws *client, struct ws *agent)
{
        int64_t closing_since = 0;

        ws_pump(client, 0); /* what came with either handshake */
        ws_pump(agent, 0);
        while (!(ws_done(client) && ws_done(agent))) {
                struct pollfd p[2] = { { .fd = ws_fd(client), .events = ws_poll_events(client) },
                                       { .fd = ws_fd(agent), .events = ws_poll_events(agent) } };
                if (poll(p, 2, 500) < 0 && errno != EINTR)
                        break;
                if (p[0].revents)
                        ws_pump(client, p[0].revents);
                if (p[1].revents)
                        ws_pump(agent, p[1].revents);
                if (!closing_since && __atomic_load_n(&r->revoked, __ATOMIC_ACQUIRE)) {
                        closing_since = monotonic_usec();
                        ws_close(client, 1008, "access revoked");
                        ws_close(agent, 1000, NULL);
                }
                if (!closing_since && (ws_done(client) || ws_done(agent))) {
                        closing_since = monotonic_usec();
                        if (ws_done(client))
                                ws_close(agent, 1000, NULL);
                        else
                                close_as_agent(client, agent);
                }
                if (closing_since && monotonic_usec() - closing_since > CLOSE_GRACE_MS * USEC_PER_MSEC)
                        break;
        }
}

static void *relay_thread(void *data)
{
        struct relay *r = data;
        struct tess_error *err = NULL;
        struct buf leftover = BUF_INIT;
        struct side cs = { .r = r, .from_client = true }, as = { .r = r, .from_client = false };
        struct ws *client = ws_new(r->fd, true, r->extra.data, r->extra.len, forward, &cs);
        int afd = client ? open_agent(r, &leftover, &err) : -1;
        struct ws *agent = afd >= 0 ? ws_new(afd, false, leftover.data, leftover.len, forward, &as) : NULL;

        if (client && agent) {
                cs.peer = agent;
                as.peer = client;
                relay_run(r, client, agent);
        } else if (client) {
                send_error(client, err ? err->msg : "cannot reach the session's agent");
                ws_close(client, 1011, "agent unreachable");
                for (int i = 0; i < 20 && !ws_done(client); i++) {
                        struct pollfd p = { .fd = r->fd, .events = ws_poll_events(client) };
                        if (poll(&p, 1, 100) > 0)
                                ws_pump(client, p.revents);
                }
        }
        if (err)
                log_info("terminal of session %s: %s", r->t.session, err->msg);
        tess_error_free(err);
        ws_free(client);
        ws_free(agent);
        if (afd >= 0)
                close(afd);
        buf_release(&leftover);
        post(r, NOTE_DONE);
        return NULL;
}

static void revoke_access(void *data)
{
        struct relay *r = data;
        __atomic_store_n(&r->revoked, 1, __ATOMIC_RELEASE);
}

static void on_upgraded(void *data, int fd, const char *extra, size_t extra_len, struct http_upgraded *u)
{
        struct relay *r = data;
        pthread_attr_t attr;
        pthread_t t;

        r->fd = fd;
        r->u = u;
        buf_append(&r->extra, extra, extra_len);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, (size_t)256 << 10);
        if (pthread_create(&t, &attr, relay_thread, r) != 0) {
                log_error("terminal of session %s: cannot start a thread", r->t.session);
                http_upgraded_close(u);
                relay_free(r);
        } else {
                r->held = held_conn_add(r->m, &r->cred, revoke_access, r);
        }
        pthread_attr_destroy(&attr);
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

static unsigned dimension(struct api_ctx *c, const char *key, unsigned def)
{
        const char *v = http_query(c->req, key);
        char *end;
        unsigned long n = v ? strtoul(v, &end, 10) : 0;
        return v && !*end && n >= 1 && n <= 1000 ? (unsigned)n : def;
}

void api_stream_pty(struct api_ctx *c)
{
        const char *upgrade = http_header(c->req, "Upgrade");
        const char *key = http_header(c->req, "Sec-WebSocket-Key");
        const char *version = http_header(c->req, "Sec-WebSocket-Version");
        struct tess_error *err = NULL;
        char accept[WS_ACCEPT_LEN + 1];

        if (!upgrade || strcasecmp(upgrade, "websocket") != 0 || !key || !*key)
                return api_problem(c, 400, "invalid-api-params",
                                   "the terminal is a WebSocket: send Upgrade: websocket and Sec-WebSocket-Key");
        if (!version || !streq(version, "13")) {
                http_add_header(c->req, "Sec-WebSocket-Version", "13");
                return api_problem(c, 426, "upgrade-required", "only WebSocket version 13 is spoken");
        }
        const char *terminal = http_query(c->req, "terminal");
        if (terminal && !terminal_id_valid(terminal))
                return api_problem(c, 400, "invalid-api-params",
                                   "terminal: a terminal id is 8-64 letters, digits, '_' or '-'");
        struct relay *r = xcalloc(1, sizeof(*r));
        r->m = c->m;
        snprintf(r->terminal, sizeof(r->terminal), "%s", terminal ? terminal : "");
        r->fd = -1;
        r->extra = (struct buf)BUF_INIT;
        r->rows = dimension(c, "rows", 24);
        r->cols = dimension(c, "cols", 80);
        snprintf(r->secret, sizeof(r->secret), "%s", c->m->cluster_secret);
        held_cred_of(c, &r->cred);
        if (!api_session_target(c, http_query(c->req, "owner_access_key"), &r->t)) {
                relay_free(r);
                return;
        }
        if (ensure_pipe(c->m, &err) < 0) {
                relay_free(r);
                return api_fail(c, err);
        }
        ws_accept_key(key, accept);
        http_add_header(c->req, "Upgrade", "websocket");
        http_add_header(c->req, "Sec-WebSocket-Accept", accept);
        http_upgrade(c->req, on_upgraded, r, relay_free);
}
