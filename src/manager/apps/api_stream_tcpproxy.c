/* api_stream_tcpproxy.c - GET /stream/session/{name}/tcpproxy?app=NAME
 * [&port=N] (Backend.AI's, what `backend.ai app SESSION APP -b PORT`
 * connects each local connection to): a WebSocket whose binary messages
 * are the bytes of one TCP connection to an app of the session's image
 * (its ai.backend.service-ports label, any protocol), at its first port
 * or port N of its ports.
 *
 * The bytes go through a tunnel that the kernel's agent opens into the
 * container's network (agent_socket.h, as the app proxy's).  When nothing
 * listens there yet and the image says how to start the app
 * (app_start.h), the agent's runner starts it, as start-service does, and
 * the tunnel is tried again.  Who may open the session's terminal may
 * open this (stream_ws.h); the client's messages count as the owner's
 * activity.  Ends: the app closing the connection closes the WebSocket
 * (1000); the client closing it closes the connection; an app that cannot
 * be reached is a close with 1011 and the reason. */
#include "common/compat.h"

#include <poll.h>
#include <sys/socket.h>

#include "common/log.h"
#include "common/relay.h"
#include "common/service_ports.h"
#include "common/timeutil.h"
#include "common/ws.h"
#include "manager/agent_link/agent_call.h"
#include "manager/agent_link/agent_socket.h"
#include "manager/api/api.h"
#include "manager/apps/app_start.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/sessions/session_apps.h"
#include "manager/sessions/stream_ws.h"

#define START_TIMEOUT_S 90
#define CHUNK           65536
#define CLOSE_GRACE_MS  2000

struct tcpproxy {
        char app[SERVICE_PORT_NAME_MAX + 1];
        int port;
        char *start; /* the agent's start-service body, or NULL: the image says no command */
        int tunnel;  /* the connection, once open */
        struct stream_ws *r;
};

static void tcpproxy_free(void *data)
{
        struct tcpproxy *p = data;
        free(p->start);
        free(p);
}

/* ---- the thread ---- */

/* Ask the agent's runner to start the app and wait for its port. */
static int start_app(struct stream_ws *r, const struct tcpproxy *p, struct tess_error **err)
{
        struct agent_call call = { .agent_id = r->t.agent, .address = r->t.address, .answer = BUF_INIT };
        _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/start-service", r->t.kernel);

        snprintf(call.secret, sizeof(call.secret), "%s", r->secret);
        int rc = agent_call_request(&call, "POST", target, p->start, strlen(p->start), "application/json",
                                    START_TIMEOUT_S);
        buf_release(&call.answer);
        if (rc < 0) {
                *err = call.err;
                return tess_err_wrap(err, "starting app '%s'", p->app);
        }
        return 0;
}

static int open_tunnel(struct stream_ws *r, struct tcpproxy *p, struct buf *leftover, struct tess_error **err)
{
        _cleanup_free_ char *target = xasprintf("/v1/kernels/%s/tunnel?port=%d", r->t.kernel, p->port);
        struct agent_endpoint e = { .secret = r->secret, .agent_id = r->t.agent, .address = r->t.address };
        int fd = agent_socket_open(&e, target, AGENT_SOCKET_TUNNEL, leftover, err);

        if (fd != -ECONNREFUSED || !p->start)
                return fd;
        *err = tess_error_free(*err);
        if (start_app(r, p, err) < 0)
                return -EIO;
        return agent_socket_open(&e, target, AGENT_SOCKET_TUNNEL, leftover, err);
}

/* The client's binary messages are the connection's bytes. */
static int from_client(struct ws *w, int opcode, const uint8_t *msg, size_t len, void *data)
{
        struct tcpproxy *p = data;

        if (opcode != WS_BINARY) {
                ws_close(w, 1003, "binary messages only: the TCP connection's bytes");
                return 0;
        }
        stream_ws_touch(p->r);
        if (relay_send_all(p->tunnel, msg, len, NULL) < 0)
                ws_close(w, 1011, "the connection to the app failed");
        return 0;
}

/* Pump both until one ends or access is revoked. */
static void pump(struct stream_ws *r, struct tcpproxy *p, struct ws *client)
{
        uint8_t buf[CHUNK];
        bool app_open = true;
        int64_t closing_since = 0;

        ws_pump(client, 0);
        while (!ws_done(client)) {
                struct pollfd fds[2] = { { .fd = ws_fd(client), .events = ws_poll_events(client) },
                                         { .fd = app_open ? p->tunnel : -1, .events = POLLIN } };
                if (poll(fds, 2, 500) < 0 && errno != EINTR)
                        break;
                if (fds[0].revents)
                        ws_pump(client, fds[0].revents);
                if (fds[1].revents) {
                        ssize_t n = recv(p->tunnel, buf, sizeof(buf), 0);
                        if (n > 0) {
                                ws_send(client, WS_BINARY, buf, (size_t)n);
                        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                                app_open = false;
                                ws_close(client, n == 0 ? 1000 : 1011, n == 0 ? NULL : "the app's connection failed");
                                closing_since = monotonic_usec();
                        }
                }
                if (!closing_since && stream_ws_revoked(r)) {
                        ws_close(client, 1008, "access revoked");
                        closing_since = monotonic_usec();
                }
                if (closing_since && monotonic_usec() - closing_since > CLOSE_GRACE_MS * USEC_PER_MSEC)
                        break;
        }
        shutdown(p->tunnel, SHUT_RDWR);
}

static void relay(struct stream_ws *r)
{
        struct tcpproxy *p = r->data;
        struct tess_error *err = NULL;
        struct buf leftover = BUF_INIT;

        p->r = r;
        p->tunnel = -1;
        struct ws *client = ws_new(r->fd, true, r->extra.data, r->extra.len, from_client, p);
        if (client)
                p->tunnel = open_tunnel(r, p, &leftover, &err);
        if (client && p->tunnel >= 0) {
                if (leftover.len) /* the app's first bytes came with the tunnel's answer */
                        ws_send(client, WS_BINARY, leftover.data, leftover.len);
                pump(r, p, client);
        } else if (client) {
                char reason[120];
                snprintf(reason, sizeof(reason), "%.119s", err ? err->msg : "the app cannot be reached");
                ws_close(client, 1011, reason);
                for (int i = 0; i < 20 && !ws_done(client); i++) {
                        struct pollfd pf = { .fd = r->fd, .events = ws_poll_events(client) };
                        if (poll(&pf, 1, 100) > 0)
                                ws_pump(client, pf.revents);
                }
        }
        if (err)
                log_info("tcpproxy to app %s of session %s: %s", p->app, r->t.session, err->msg);
        tess_error_free(err);
        ws_free(client);
        if (p->tunnel >= 0)
                close(p->tunnel);
        buf_release(&leftover);
}

/* ---- the request ---- */

/* The app, its port and how to start it, from the session's image. */
static int plan(struct api_ctx *c, const char *session, struct tcpproxy *p, struct tess_error **err)
{
        const char *port_text = http_query(c->req, "port");
        json_t *labels = NULL;
        struct service_ports sp;
        char user[40], *wsproxy = NULL;
        int r = session_app_facts(c->m, session, &labels, &wsproxy, user, sizeof(user), err);

        free(wsproxy);
        if (r >= 0)
                r = session_apps_of_labels(labels, &sp, err);
        const struct service_port *sport = r >= 0 ? service_ports_find(&sp, p->app) : NULL;
        if (r >= 0 && !sport)
                r = tess_err(err, EINVAL, "the session's image declares no app '%s'", p->app);
        if (r >= 0) {
                char *end;
                long want = port_text ? strtol(port_text, &end, 10) : sport->ports[0];
                bool known = false;
                for (int i = 0; i < sport->nports; i++)
                        known = known || sport->ports[i] == want;
                if (port_text && (*end || !known))
                        r = tess_err(err, EINVAL, "app '%s' does not open port %.16s", p->app, port_text);
                p->port = (int)want;
        }
        if (r >= 0) {
                json_t *body = NULL;
                int a = app_start_request(labels, p->app, p->app, p->port, "/", NULL, NULL, &body, err);
                if (a == -ENOENT) {
                        *err = tess_error_free(*err); /* no command: it must run already */
                } else if (a < 0) {
                        r = a;
                } else {
                        p->start = json_dumps(body, JSON_COMPACT);
                        json_decref(body);
                }
        }
        json_decref(labels);
        return r;
}

void api_stream_tcpproxy(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        const char *app = http_query(c->req, "app");

        if (!app || !service_port_name_valid(app))
                return api_problem(c, 400, "invalid-api-params", "app: the name of one of the session's apps");
        if (api_find_session(c, c->param[0], api_owner_access_key(c), true, &rows, &err) < 0)
                return api_fail(c, err);
        struct tcpproxy *p = xcalloc(1, sizeof(*p));
        snprintf(p->app, sizeof(p->app), "%s", app);
        if (plan(c, db_getn(rows, 0, "id"), p, &err) < 0) {
                tcpproxy_free(p);
                return api_fail(c, err);
        }
        stream_ws_accept(c, "the app", relay, p, tcpproxy_free);
}
