/* api_apps.c - the app proxy's routes (docs/app-proxy.md):
 *
 *   GET /apps/_/open?token=T       the token that start-service gave the
 *                                  session's owner: 302 to the app's prefix,
 *                                  with the app's cookie (Path=the prefix)
 *   ANY /apps/{session}/{app}/...  with that cookie: forwarded to the app,
 *                                  HTTP (app_proxy_http.c) or WebSocket
 *                                  (app_proxy_ws.c)
 *
 * Neither is signed: the token, then the cookie, is the app's
 * authentication (app_token.h).  The manager's own cookies never reach
 * the app (app_proxy.c).  With conf.app_listen both are served on that
 * listener only, an origin apart from the API's and the web UI's
 * (ROUTE_APP, api/dispatch.c). */
#include "common/compat.h"

#include <strings.h>

#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/agent_link/agent_call.h"
#include "manager/api/api.h"
#include "manager/apps/app_proxy.h"
#include "manager/apps/app_token.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/http/http_cookie.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session.h"

/* The session of g RUNNING with its main kernel, as t.  Answers c (404,
 * 409) and returns false when not. */
static bool running_target(struct api_ctx *c, const struct app_grant *g, struct app_target *t)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (DBQ(c->m->db, "SELECT status FROM sessions WHERE id = ?", &rows, &err, DB_TEXT(g->session)) < 0) {
                api_fail(c, err);
                return false;
        }
        if (rows->nrows == 0) {
                api_problem(c, 404, "session-not-found", "the app's session is gone");
                return false;
        }
        if (!streq(db_getn(rows, 0, "status"), "RUNNING")) {
                api_problem(c, 409, "session-not-running", "the app's session is %s, not RUNNING",
                            db_getn(rows, 0, "status"));
                return false;
        }
        *t = (struct app_target){ .port = g->port };
        snprintf(t->s.session, sizeof(t->s.session), "%s", g->session);
        if (session_main_kernel(c->m, &t->s, &err) < 0) {
                if (err->code == ENOENT) {
                        api_problem(c, 409, "session-not-running", "the app's session has no reachable kernel");
                        tess_error_free(err);
                } else {
                        api_fail(c, err);
                }
                return false;
        }
        return true;
}

static bool behind_https(struct api_ctx *c)
{
        const char *proto = http_header(c->req, "X-Forwarded-Proto");
        return proto && strcasecmp(proto, "https") == 0;
}

void api_apps_open(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct app_grant g;
        struct app_target t;
        char cookie[APP_TOKEN_LEN + 1], prefix[160];

        if (app_token_check(c->m, APP_TOKEN_OPEN, http_query(c->req, "token"), &g, &err) < 0) {
                api_problem(c, 403, "forbidden", "%s: ask for a new one (start-service)", err->msg);
                return (void)tess_error_free(err);
        }
        if (!running_target(c, &g, &t))
                return;
        if (app_token_issue(c->m, APP_TOKEN_COOKIE, &g, c->m->conf.app_cookie_ttl, cookie, &err) < 0)
                return api_fail(c, err);
        app_prefix(g.session, g.app, prefix, sizeof(prefix));
        _cleanup_free_ char *set =
                xasprintf("%s=%s; Path=%s; Max-Age=%lld; HttpOnly; SameSite=Lax%s", APP_COOKIE, cookie, prefix,
                          (long long)(c->m->conf.app_cookie_ttl / USEC_PER_SEC), behind_https(c) ? "; Secure" : "");
        explicit_bzero(cookie, sizeof(cookie));
        http_add_header(c->req, "Set-Cookie", set);
        http_add_header(c->req, "Location", prefix);
        http_add_header(c->req, "Cache-Control", "no-store");
        http_add_header(c->req, "Referrer-Policy", "no-referrer");
        session_touch(c->m, g.session, now_usec());
        api_json(c, 302, json_pack("{s:s}", "location", prefix));
}

void api_apps_proxy(struct api_ctx *c)
{
        const char *session = c->param[0], *rest = c->param[1];
        size_t seg_len = strcspn(rest, "/");
        struct tess_error *err = NULL;
        struct app_grant g;
        struct app_target t;
        char value[APP_TOKEN_LEN + 8], prefix[160];

        if (!uuid_valid(session) || seg_len == 0 || seg_len > APP_SEGMENT_MAX)
                return api_problem(c, 404, "not-found", "no such app");
        if (rest[seg_len] != '/') { /* the prefix without its slash: the cookie's path would not match */
                char seg[APP_SEGMENT_MAX + 1];
                snprintf(seg, sizeof(seg), "%.*s", (int)seg_len, rest);
                app_prefix(session, seg, prefix, sizeof(prefix));
                const char *q = http_query_raw(c->req);
                _cleanup_free_ char *to = xasprintf("%s%s%s", prefix, *q ? "?" : "", q);
                http_add_header(c->req, "Location", to);
                return api_json(c, 301, json_pack("{s:s}", "location", to));
        }
        if (http_cookie_get(http_header(c->req, "Cookie"), APP_COOKIE, value, sizeof(value)) < 0 ||
            app_token_check(c->m, APP_TOKEN_COOKIE, value, &g, &err) < 0 || !streq(g.session, session) ||
            strlen(g.app) != seg_len || strncmp(g.app, rest, seg_len) != 0) {
                tess_error_free(err);
                return api_problem(c, 403, "forbidden",
                                   "no valid app cookie: open the app with the link start-service gives");
        }
        if (!running_target(c, &g, &t))
                return;
        session_touch(c->m, g.session, now_usec());
        const char *upgrade = http_header(c->req, "Upgrade");
        if (upgrade && strcasecmp(upgrade, "websocket") == 0)
                app_proxy_ws(c, &t);
        else
                app_proxy_http(c, &t);
}
