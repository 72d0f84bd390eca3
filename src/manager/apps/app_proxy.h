/* app_proxy.h - the app proxy's forwarding (docs/app-proxy.md): a
 * browser's request for an app in a session goes to the app through a
 * tunnel that the kernel's agent opens into the container
 * (agent_socket.h), streamed both ways, never whole in memory:
 *
 *   app_proxy_http.c   a request and its answer, through libcurl speaking
 *                      HTTP/1.1 on the tunnel; the request's body comes
 *                      from http_body_sink and the answer goes out through
 *                      http_reply_reader, each through a bounded buffer
 *                      (backpressure both ways)
 *   app_proxy_ws.c     a WebSocket upgrade, forwarded as it came; once the
 *                      app answers 101 the client's socket and the tunnel
 *                      are relayed raw (relay.h), frames untouched
 *   app_proxy.c        what both share: threads, the pipe back to the
 *                      loop, which headers pass
 *
 * Each forwarded request has a thread of its own (blocking I/O); the loop
 * meets it only through app_proxy_post().  Nothing is kept between
 * requests: a tunnel per request, so that a restarted manager or agent
 * reaches the app again at the next one. */
#ifndef TESS_APP_PROXY_H
#define TESS_APP_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "manager/agent_link/agent_socket.h"
#include "manager/sessions/api_session.h"

#define APP_PROXY_THREADS_MAX  1024  /* requests and WebSockets forwarded at once */
#define APP_PROXY_HEAD_WAIT_MS 60000 /* for the app's answer to a WebSocket upgrade */

struct api_ctx;
struct http_req;

/* Where a request goes: a port of a session's main kernel. */
struct app_target {
        struct session_target s;
        int port;
};

struct held_cred;

/* Forward c's request to t and answer it (routes: api_apps.c); a
 * WebSocket is cut when cred is revoked (held_conn.h). */
void app_proxy_http(struct api_ctx *c, const struct app_target *t);
void app_proxy_ws(struct api_ctx *c, const struct app_target *t, const struct held_cred *cred);

/* ---- shared by the two (app_proxy.c) ---- */

/* Run fn(data) in a new detached thread, which calls
 * app_proxy_thread_exit() last.  RET false (nothing started) when
 * APP_PROXY_THREADS_MAX run already or none can start. */
bool app_proxy_thread(void *(*fn)(void *), void *data);
void app_proxy_thread_exit(void);

/* Have fn(data) run on the manager's loop soon; from any thread.
 * app_proxy_start() must have run (on the loop) before. */
void app_proxy_post(void (*fn)(void *data), void *data);
int app_proxy_start(struct api_ctx *c, struct tess_error **err);

/* The tunnel's request target at the agent for t, and t as an endpoint
 * (its strings borrowed from t and secret). */
char *app_proxy_tunnel_target(const struct app_target *t);
struct agent_endpoint app_proxy_endpoint(const struct app_target *t, const char *secret);

/* The request's headers for the app, "Name: value" each (NULL-terminated;
 * caller frees each and the array): hop-by-hop headers, Content-Length
 * and Expect left out (upgrade: Upgrade and Connection kept), the
 * manager's cookies (the web UI's session, the app cookie) taken out of
 * Cookie, an Authorization of Backend.AI's signature dropped,
 * X-Forwarded-For added. */
char **app_proxy_request_headers(struct http_req *r, bool upgrade);
/* A Cookie header's value without the manager's cookies, appended to out
 * (nothing when none is left). */
void app_proxy_cookies(struct buf *out, const char *header);
void app_proxy_strv_free(char **v);

/* Whether a header of the app's answer goes to the client: not
 * hop-by-hop, not Content-Length, Transfer-Encoding or Date (the manager's
 * server writes those), not a Set-Cookie of the manager's cookies. */
bool app_proxy_answer_header(const char *name, size_t nlen, const char *value, size_t vlen);

/* The routes of apps: GET /apps/_/open and the proxy itself (api_apps.c),
 * POST /session/{name}/start-service and shutdown-service
 * (api_session_apps.c). */
void api_apps_open(struct api_ctx *c);
void api_apps_proxy(struct api_ctx *c);
/* GET /server/app-login: the web UI's origin checks an app link's user
 * (api_app_login.c). */
void api_app_login(struct api_ctx *c);
void api_session_start_service(struct api_ctx *c);
void api_session_shutdown_service(struct api_ctx *c);

#endif
