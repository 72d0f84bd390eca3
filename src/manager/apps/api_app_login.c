/* api_app_login.c - the web UI's half of opening an app (docs/app-proxy.md):
 *
 *   GET /server/app-login?token=T&state=S     on the API's and web UI's
 *                                             origin, where the browser's
 *                                             login cookie is
 *
 * The app origin's GET /apps/_/open?token=T sends the browser here with
 * the state S it set as a cookie there (api_apps.c).  When this browser is
 * logged in to the web UI as the user the link T was given to (and that
 * user and keypair may still use the session), the answer is a 302 back
 * to the app origin with a one-time code, good for APP_CODE_TTL and only
 * together with S (app_token.h): the app cookie is set in the browser
 * whose login was seen, never in one that was merely sent the link.
 * Otherwise a small page says what is missing (log in, then continue; or
 * the link is someone else's).
 *
 * A GET: nothing changes but a code made for the logged-in user's own
 * link, so it needs no CSRF token; a page of another site that sends a
 * browser here gets it a code for a link it holds already. */
#include "common/compat.h"

#include "manager/api/api.h"
#include "manager/api/web_session.h"
#include "manager/apps/app_access.h"
#include "manager/apps/app_origin.h"
#include "manager/apps/app_proxy.h"
#include "manager/apps/app_token.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"
#include "manager/sessions/session_apps.h"

/* A page of the manager's own: text and links only, nothing runs. */
static void page(struct api_ctx *c, unsigned status, const char *title, const char *text, const char *links)
{
        _cleanup_free_ char *html = xasprintf(
                "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s - Tessera</title>"
                "<meta name=\"viewport\" content=\"width=device-width\"></head>\n<body><main><h1>%s</h1>\n<p>%s</p>\n"
                "<p>%s</p></main></body></html>\n",
                title, title, text, links);
        http_add_header(c->req, "Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; form-action 'none'");
        http_reply(c->req, status, "text/html; charset=utf-8", html, strlen(html));
}

void api_app_login(struct api_ctx *c)
{
        const char *token = http_query(c->req, "token"), *state = http_query(c->req, "state");
        struct tess_error *err = NULL;
        struct app_grant g;
        struct app_target t;
        char code[APP_TOKEN_LEN + 1];

        http_add_header(c->req, "Cache-Control", "no-store");
        http_add_header(c->req, "Referrer-Policy", "no-referrer");
        http_add_header(c->req, "X-Content-Type-Options", "nosniff");
        if (!app_token_well_formed(token) || !app_token_well_formed(state))
                return page(c, 400, "Not an app link", "Open the app again from the web UI.", "<a href=\"/\">Tessera</a>");
        if (app_token_check(c->m, APP_TOKEN_OPEN, token, NULL, &g, &err) < 0) {
                tess_error_free(err);
                return page(c, 403, "This app link has expired",
                            "App links work for a few minutes. Open the app again from the web UI.",
                            "<a href=\"/\">Tessera</a>");
        }
        int r = web_session_auth(c, &err);
        tess_error_free(err);
        if (r < 0 && r != -ENOENT && r != -EACCES)
                return page(c, 503, "Try again", "The manager cannot check your login now.", "");
        if (r < 0) {
                _cleanup_free_ char *again =
                        xasprintf("<a href=\"/\">Log in</a> &middot; <a href=\"/server/app-login?token=%s&amp;state=%s\">"
                                  "Continue to the app</a>",
                                  token, state);
                return page(c, 401, "Log in to open this app",
                            "An app opens only in a browser logged in to Tessera's web UI as the user who asked "
                            "for its link. Log in (in another tab), then continue.",
                            again);
        }
        if (!streq(c->who.user_id, g.user))
                return page(c, 403, "This app link is someone else's",
                            "It was made for another user: links to apps work only for the user who asked for "
                            "them. Open the app from your own session list.",
                            "<a href=\"/\">Tessera</a>");
        if (!app_access(c, &g, &t, false))
                return;
        json_t *labels = NULL;
        _cleanup_free_ char *group_addr = NULL;
        char user[40];
        if (session_app_facts(c->m, g.session, &labels, &group_addr, user, sizeof(user), &err) < 0)
                return api_fail(c, err);
        json_decref(labels);
        if (app_token_issue(c->m, APP_TOKEN_CODE, &g, APP_CODE_TTL, state, code, &err) < 0)
                return api_fail(c, err);
        _cleanup_free_ char *origin = app_origin(c, g.session, group_addr);
        _cleanup_free_ char *to = xasprintf("%s/apps/_/open?code=%s", origin, code);
        explicit_bzero(code, sizeof(code));
        http_add_header(c->req, "Location", to);
        api_json(c, 302, json_pack("{s:s}", "location", to));
}
