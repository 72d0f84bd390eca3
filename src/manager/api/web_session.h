/* web_session.h - browser sessions: the web UI's way to call the API, a
 * cookie instead of a request signature (docs/web-ui.md).
 *
 *   POST /server/login {email, password} -> 200 {email, user_id, role,
 *        domain, access_key, csrf_token} and Set-Cookie: tessera_session=...
 *   GET  /server/session                 -> the same, for a page reload; 401
 *   POST /server/logout                  -> 204, the cookie cleared
 *
 * A session is a row of web_sessions named by the SHA-256 of its random
 * token (the cookie's value: what the database holds cannot be replayed);
 * it acts as the user's main keypair.  It ends WEB_SESSION_IDLE after its
 * last use, WEB_SESSION_MAX after the login, at logout, when the user or
 * keypair is deactivated, or when the user's password changes (all but
 * the login that changed it).  The cookie is HttpOnly, SameSite=Strict
 * (and Secure behind https).
 *
 * Cross-site requests: a request authenticated by the cookie that changes
 * anything (not GET/HEAD) must carry X-Tessera-CSRF with the session's
 * csrf_token, which only the manager's own pages can read; any request
 * with an Origin header (browsers send it on WebSockets and cross-site
 * requests) must come from the manager's own origin.
 *
 * Backend.AI's clients in webserver mode (BACKEND_ENDPOINT_TYPE=session)
 * log in with {username, password} (the answer has their "authenticated":
 * true), keep the cookie, and call every route but those under /server as
 * FUNC_PREFIX/<route>.  There only the cookie authenticates, and a
 * request that changes something needs no X-Tessera-CSRF when it is not a
 * browser's: no Origin and no Sec-Fetch-Site header (a browser sends one
 * of them with every request that changes something, and a page of
 * another origin is refused by them).
 *
 * Guessing: 5 failed logins for one email within 15 minutes block that
 * email for 15 minutes, 20 from one address block the address (429 with
 * Retry-After); the counts live in the manager's memory. */
#ifndef TESS_WEB_SESSION_H
#define TESS_WEB_SESSION_H

#include "common/error.h"
#include "common/timeutil.h"

#define WEB_SESSION_COOKIE "tessera_session"
#define FUNC_PREFIX        "/func"
#define WEB_SESSION_IDLE   (12 * 3600 * USEC_PER_SEC)
#define WEB_SESSION_MAX    (7 * 24 * 3600 * USEC_PER_SEC)

struct api_ctx;
struct login_guard;
struct manager;

/* Authenticate a request by its cookie: c->who becomes the session's
 * keypair.  RET 0; -ENOENT no cookie (try the signature); -EACCES. */
int web_session_auth(struct api_ctx *c, struct tess_error **err);

/* A user who must change its password (users.need_password_change) may,
 * through a web login, call nothing but WEB_SESSION_PASSWORD_ROUTE (and
 * /server/session, /server/logout): RET 0, or -EKEYEXPIRED, which the
 * dispatcher answers 403 password-change-required.  Signed requests are
 * not held to it (docs/admin-accounts.md). */
#define WEB_SESSION_PASSWORD_ROUTE "/auth/update-password"
int web_session_password_gate(struct api_ctx *c, struct tess_error **err);

/* Whether web login id (web_sessions.id, api_ctx.web_login) has not
 * ended: RET 1; 0 ended; -errno. */
int web_session_alive(struct manager *m, const char *id, struct tess_error **err);

/* End the web logins of user_id (a password change, a deactivation),
 * all but the one of request `keep` when it is not NULL. */
int web_sessions_end(struct manager *m, const char *user_id, struct api_ctx *keep, struct tess_error **err);

struct login_guard *login_guard_new(void);
struct login_guard *login_guard_free(struct login_guard *g);

void api_web_login(struct api_ctx *c);
void api_web_session(struct api_ctx *c);
void api_web_logout(struct api_ctx *c);

#endif
