/* api_apps.c - the app proxy's routes, on the app listener only
 * (conf.app_listen, an origin apart from the API's and the web UI's:
 * ROUTE_APP, api/dispatch.c; docs/app-proxy.md):
 *
 *   GET /apps/_/open?token=T       the link start-service gave its caller:
 *                                  a state cookie for this browser, then
 *                                  302 to the web UI's origin, which checks
 *                                  that the browser's login is the link's
 *                                  user (api_app_login.c) and sends it back
 *                                  with a one-time code
 *   GET /apps/_/open?code=C        that code, good with this browser's
 *                                  state cookie only: 302 to the app's
 *                                  prefix with the app's cookie
 *   ANY /apps/{session}/{app}/...  with that cookie: forwarded to the app,
 *                                  HTTP (app_proxy_http.c) or WebSocket
 *                                  (app_proxy_ws.c)
 *
 * None is signed: the link, the code, then the cookie are the app's
 * authentication (app_token.h), each checked again at every use
 * (app_access.h).  The manager's own cookies never reach the app
 * (app_proxy.c); its own answers here carry a CSP that runs nothing. */
#include "common/compat.h"

#include <strings.h>

#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/api/held_conn.h"
#include "manager/apps/app_access.h"
#include "manager/apps/app_origin.h"
#include "manager/apps/app_proxy.h"
#include "manager/apps/app_token.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"
#include "manager/http/http_cookie.h"
#include "manager/sessions/session.h"

#define STATE_MAX_AGE_S 300 /* the state cookie: one trip to the web UI and back */

static bool behind_https(struct api_ctx *c)
{
        const char *proto = http_header(c->req, "X-Forwarded-Proto");
        return proto && strcasecmp(proto, "https") == 0;
}

static void redirect(struct api_ctx *c, const char *to)
{
        http_add_header(c->req, "Location", to);
        api_json(c, 302, json_pack("{s:s}", "location", to));
}

/* The link: remember this browser (the state cookie), then ask the web
 * UI's origin whose login it carries. */
static void open_link(struct api_ctx *c, const char *token)
{
        struct tess_error *err = NULL;
        struct app_grant g;
        struct app_target t;
        char state[APP_TOKEN_LEN + 1];

        if (app_token_check(c->m, APP_TOKEN_OPEN, token, NULL, &g, &err) < 0) {
                api_problem(c, 403, "forbidden", "%s: ask for a new one (start-service)", err->msg);
                return (void)tess_error_free(err);
        }
        if (!app_host_is_sessions(c, g.session))
                return api_problem(c, 421, "misdirected-request", "this app link belongs to another host name");
        if (!app_access(c, &g, &t, false))
                return;
        if (app_token_random(state, &err) < 0)
                return api_fail(c, err);
        _cleanup_free_ char *set = xasprintf("%s=%s; Path=/apps/_/; Max-Age=%d; HttpOnly; SameSite=Lax%s",
                                             APP_STATE_COOKIE, state, STATE_MAX_AGE_S,
                                             behind_https(c) ? "; Secure" : "");
        _cleanup_free_ char *web = app_web_origin(c);
        _cleanup_free_ char *to = xasprintf("%s/server/app-login?token=%s&state=%s", web, token, state);
        explicit_bzero(state, sizeof(state));
        http_add_header(c->req, "Set-Cookie", set);
        redirect(c, to);
}

/* The code the web UI's origin sent back: with this browser's state
 * cookie, the app's cookie. */
static void open_code(struct api_ctx *c, const char *code)
{
        struct tess_error *err = NULL;
        struct app_grant g;
        struct app_target t;
        char state[APP_TOKEN_LEN + 8], cookie[APP_TOKEN_LEN + 1], prefix[160];

        if (http_cookie_get(http_header(c->req, "Cookie"), APP_STATE_COOKIE, state, sizeof(state)) < 0 ||
            !app_token_well_formed(state))
                return api_problem(c, 403, "forbidden",
                                   "this browser did not open the app's link (no state cookie): open the link "
                                   "again, in this browser");
        if (app_token_check(c->m, APP_TOKEN_CODE, code, state, &g, &err) < 0) {
                api_problem(c, 403, "forbidden", "%s, or was made for another browser: open the link again",
                            err->msg);
                return (void)tess_error_free(err);
        }
        if (!app_host_is_sessions(c, g.session))
                return api_problem(c, 421, "misdirected-request", "this app code belongs to another host name");
        if (!app_access(c, &g, &t, false))
                return;
        if (app_token_issue(c->m, APP_TOKEN_COOKIE, &g, c->m->conf.app_cookie_ttl, NULL, cookie, &err) < 0)
                return api_fail(c, err);
        app_prefix(g.session, g.app, prefix, sizeof(prefix));
        _cleanup_free_ char *set =
                xasprintf("%s=%s; Path=%s; Max-Age=%lld; HttpOnly; SameSite=Lax%s", APP_COOKIE, cookie, prefix,
                          (long long)(c->m->conf.app_cookie_ttl / USEC_PER_SEC), behind_https(c) ? "; Secure" : "");
        explicit_bzero(cookie, sizeof(cookie));
        _cleanup_free_ char *clear = xasprintf("%s=; Path=/apps/_/; Max-Age=0; HttpOnly; SameSite=Lax%s",
                                               APP_STATE_COOKIE, behind_https(c) ? "; Secure" : "");
        http_add_header(c->req, "Set-Cookie", set);
        http_add_header(c->req, "Set-Cookie", clear);
        session_touch(c->m, g.session, now_usec());
        redirect(c, prefix);
}

void api_apps_open(struct api_ctx *c)
{
        const char *token = http_query(c->req, "token"), *code = http_query(c->req, "code");

        app_own_answer_headers(c);
        if (code && !token)
                return open_code(c, code);
        open_link(c, token);
}

void api_apps_proxy(struct api_ctx *c)
{
        const char *session = c->param[0], *rest = c->param[1];
        size_t seg_len = strcspn(rest, "/");
        struct tess_error *err = NULL;
        struct app_grant g;
        struct app_target t;
        char value[APP_TOKEN_LEN + 8], prefix[160], cookie_row[65];

        if (!uuid_valid(session) || seg_len == 0 || seg_len > APP_SEGMENT_MAX) {
                app_own_answer_headers(c);
                return api_problem(c, 404, "not-found", "no such app");
        }
        if (!app_host_is_sessions(c, session)) {
                app_own_answer_headers(c);
                return api_problem(c, 421, "misdirected-request",
                                   "this session's apps are served on its own host name");
        }
        if (rest[seg_len] != '/') { /* the prefix without its slash: the cookie's path would not match */
                char seg[APP_SEGMENT_MAX + 1];
                snprintf(seg, sizeof(seg), "%.*s", (int)seg_len, rest);
                app_prefix(session, seg, prefix, sizeof(prefix));
                const char *q = http_query_raw(c->req);
                _cleanup_free_ char *to = xasprintf("%s%s%s", prefix, *q ? "?" : "", q);
                app_own_answer_headers(c);
                http_add_header(c->req, "Location", to);
                return api_json(c, 301, json_pack("{s:s}", "location", to));
        }
        if (http_cookie_get(http_header(c->req, "Cookie"), APP_COOKIE, value, sizeof(value)) < 0 ||
            app_token_check(c->m, APP_TOKEN_COOKIE, value, NULL, &g, &err) < 0 || !streq(g.session, session) ||
            strlen(g.app) != seg_len || strncmp(g.app, rest, seg_len) != 0) {
                tess_error_free(err);
                app_own_answer_headers(c);
                return api_problem(c, 403, "forbidden",
                                   "no valid app cookie: open the app with the link start-service gives");
        }
        app_token_row(value, cookie_row);
        explicit_bzero(value, sizeof(value));
        if (!app_access(c, &g, &t, true))
                return;
        session_touch(c->m, g.session, now_usec());
        const char *upgrade = http_header(c->req, "Upgrade");
        if (upgrade && strcasecmp(upgrade, "websocket") == 0) {
                struct held_cred cred;
                held_cred_of(c, &cred);
                cred.check = app_cookie_alive;
                snprintf(cred.check_arg, sizeof(cred.check_arg), "%s", cookie_row);
                app_proxy_ws(c, &t, &cred);
        } else {
                app_proxy_http(c, &t);
        }
}
