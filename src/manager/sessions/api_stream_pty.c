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
 * One thread per terminal moves the bytes (stream_ws.h); keystrokes and
 * pings are the owner's activity.  When the credential that opened it is
 * revoked, the client's socket closes with 1008 and the agent's ends. */
#include "common/compat.h"

#include <poll.h>

#include "common/log.h"
#include "common/terminal_id.h"
#include "common/timeutil.h"
#include "common/ws.h"
#include "manager/agent_link/agent_socket.h"
#include "manager/api/api.h"
#include "manager/http/http.h"
#include "manager/sessions/stream_ws.h"

#define CLOSE_GRACE_MS 2000

struct terminal {
        unsigned rows, cols;
        char id[TERMINAL_ID_MAX + 1]; /* "": a shell for this socket only */
};

static int open_agent(struct stream_ws *r, struct buf *leftover, struct tess_error **err)
{
        const struct terminal *term = r->data;
        _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/pty?rows=%u&cols=%u%s%s", r->t.kernel, term->rows,
                                                term->cols, term->id[0] ? "&terminal=" : "", term->id);
        struct agent_endpoint e = { .secret = r->secret, .agent_id = r->t.agent, .address = r->t.address };

        return agent_socket_open(&e, target, AGENT_SOCKET_WEBSOCKET, leftover, err);
}

struct side {
        struct ws *peer; /* set once both ends are open */
        struct stream_ws *r;
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
                stream_ws_touch(s->r);
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
static void relay_run(struct stream_ws *r, struct ws *client, struct ws *agent)
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
                if (!closing_since && stream_ws_revoked(r)) {
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

static void relay(struct stream_ws *r)
{
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
        const char *terminal = http_query(c->req, "terminal");
        if (terminal && !terminal_id_valid(terminal))
                return api_problem(c, 400, "invalid-api-params",
                                   "terminal: a terminal id is 8-64 letters, digits, '_' or '-'");
        struct terminal *term = xcalloc(1, sizeof(*term));
        snprintf(term->id, sizeof(term->id), "%s", terminal ? terminal : "");
        term->rows = dimension(c, "rows", 24);
        term->cols = dimension(c, "cols", 80);
        stream_ws_accept(c, "the terminal", relay, term, free);
}
