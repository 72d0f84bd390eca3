/* web_session.c - browser sessions; see web_session.h. */
#include "common/compat.h"

#include <ctype.h>
#include <strings.h>

#include "common/crypto.h"
#include "common/log.h"
#include "common/sign.h"
#include "manager/api/api.h"
#include "manager/api/auth.h"
#include "manager/api/login_guard.h"
#include "manager/api/password_check.h"
#include "manager/api/web_session.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/http/http_cookie.h"

#define TOKEN_BYTES     32
#define TOUCH_EVERY     (60 * USEC_PER_SEC) /* last_used is written at most this often */

/* ---- the cookie ---- */

static bool behind_https(struct api_ctx *c)
{
        const char *proto = http_header(c->req, "X-Forwarded-Proto");
        return proto && strcasecmp(proto, "https") == 0;
}

static void set_cookie(struct api_ctx *c, const char *token, int64_t max_age_s)
{
        _cleanup_free_ char *v = xasprintf(WEB_SESSION_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%lld%s",
                                           token, (long long)max_age_s, behind_https(c) ? "; Secure" : "");
        http_add_header(c->req, "Set-Cookie", v);
}

/* The request's Origin, when it has one, is the manager's own (its Host). */
static bool same_origin(struct api_ctx *c)
{
        const char *origin = http_header(c->req, "Origin"), *host = http_header(c->req, "Host");
        const char *sep = origin ? strstr(origin, "://") : NULL;
        const char *site = http_header(c->req, "Sec-Fetch-Site"), *mode = http_header(c->req, "Sec-Fetch-Mode");

        /* a browser's request that another origin's page made (an app's, on
         * another port of the same host: same-site, so the cookie goes
         * along) is refused even without Origin (a no-cors GET), but for a
         * navigation, whose answer no other page can read */
        if (site && !streq(site, "same-origin") && !streq(site, "none") && !(mode && streq(mode, "navigate")))
                return false;
        if (!origin)
                return true;
        return sep && host && strcasecmp(sep + 3, host) == 0;
}

/* Browsers send Origin or Sec-Fetch-Site with every request that changes
 * something; Backend.AI's client in webserver mode sends neither. */
static bool from_browser(struct api_ctx *c)
{
        return http_header(c->req, "Origin") || http_header(c->req, "Sec-Fetch-Site");
}

static bool changes_state(struct api_ctx *c)
{
        const char *m = http_method(c->req);
        return !streq(m, "GET") && !streq(m, "HEAD");
}

static int load(struct api_ctx *c, const char *token, struct db_rows **ret, struct tess_error **err)
{
        char hash[65];

        sha256_hex(token, strlen(token), hash);
        return DBQ(c->m->db,
                   "SELECT id, user_id, access_key, csrf_token, created_at, last_used FROM web_sessions WHERE id = ?",
                   ret, err, DB_TEXT(hash));
}

/* web_session_auth(); ret_csrf (optional, 33 bytes) gets the session's CSRF token. */
static int session_auth(struct api_ctx *c, char *ret_csrf, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        char token[128];
        int64_t now = now_usec();

        if (http_cookie_get(http_header(c->req, "Cookie"), WEB_SESSION_COOKIE, token, sizeof(token)) < 0)
                return -ENOENT;
        if (!same_origin(c))
                return tess_err(err, EACCES, "a cross-origin request with the session cookie");
        int r = load(c, token, &rows, err);
        if (r < 0)
                return r;
        if (rows->nrows == 0 || now - db_get_int(rows, 0, "last_used") > WEB_SESSION_IDLE ||
            now - db_get_int(rows, 0, "created_at") > WEB_SESSION_MAX)
                return tess_err(err, EACCES, "the login session has ended: log in again");
        if (changes_state(c) && !(c->func_prefix && !from_browser(c))) {
                const char *csrf = http_header(c->req, "X-Tessera-CSRF");
                if (!csrf || !sign_equal(csrf, db_getn(rows, 0, "csrf_token")))
                        return tess_err(err, EACCES, "X-Tessera-CSRF is missing or wrong");
        }
        r = auth_lookup_keypair(c->m, db_getn(rows, 0, "access_key"), &c->who, NULL, err);
        if (r == -ENOENT)
                return tess_err(err, EACCES, "the session's user or keypair is no longer active");
        if (r < 0)
                return r;
        if (now - db_get_int(rows, 0, "last_used") > TOUCH_EVERY)
                DBQ(c->m->db, "UPDATE web_sessions SET last_used = ? WHERE id = ?", NULL, NULL, DB_INT(now),
                    DB_TEXT(db_getn(rows, 0, "id")));
        if (ret_csrf)
                snprintf(ret_csrf, 33, "%s", db_getn(rows, 0, "csrf_token"));
        snprintf(c->web_login, sizeof(c->web_login), "%s", db_getn(rows, 0, "id"));
        return 0;
}

int web_session_alive(struct manager *m, const char *id, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db, "SELECT 1 FROM web_sessions WHERE id = ? AND created_at > ?", &rows, err, DB_TEXT(id),
                    DB_INT(now_usec() - WEB_SESSION_MAX));
        return r < 0 ? r : rows->nrows > 0;
}

int web_session_auth(struct api_ctx *c, struct tess_error **err)
{
        int r = session_auth(c, NULL, err);
        return r < 0 ? r : web_session_password_gate(c, err);
}

/* ---- routes ---- */

static json_t *whoami(const struct principal *p, const char *csrf)
{
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b}", "email", p->email, "user_id", p->user_id, "role",
                         role_to_string(p->role), "domain", p->domain, "access_key", p->access_key, "csrf_token",
                         csrf, "need_password_change", p->must_change_password);
}

static void login_checked(struct api_ctx *c, bool ok, char *new_hash UNUSED, void *data)
{
        struct login_try *l = data;
        struct db_rows *rows = l->rows;
        struct tess_error *err = NULL;
        struct principal p;
        int64_t now = now_usec();

        if (rows->nrows != 1 || !ok || !streq(db_getn(rows, 0, "status"), "active") || !db_getn(rows, 0, "access_key")) {
                login_guard_failed(c->m->login_guard, c, l->keys, l->nkeys);
                return api_problem(c, 401, "auth-failed", "wrong email or password, or inactive user");
        }
        login_guard_succeeded(c->m->login_guard, l->keys, l->nkeys);
        if (auth_lookup_keypair(c->m, db_getn(rows, 0, "access_key"), &p, NULL, &err) < 0)
                return api_fail(c, err);
        unsigned char raw[TOKEN_BYTES], craw[16];
        char token[2 * TOKEN_BYTES + 1], csrf[33], hash[65];
        if (random_bytes(raw, sizeof(raw), &err) < 0 || random_bytes(craw, sizeof(craw), &err) < 0)
                return api_fail(c, err);
        for (size_t i = 0; i < sizeof(raw); i++)
                snprintf(token + 2 * i, 3, "%02x", raw[i]);
        for (size_t i = 0; i < sizeof(craw); i++)
                snprintf(csrf + 2 * i, 3, "%02x", craw[i]);
        explicit_bzero(raw, sizeof(raw));
        sha256_hex(token, strlen(token), hash);
        int r = DBQ(c->m->db,
                    "INSERT INTO web_sessions(id, user_id, access_key, csrf_token, created_at, last_used)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    NULL, &err, DB_TEXT(hash), DB_TEXT(p.user_id), DB_TEXT(p.access_key), DB_TEXT(csrf), DB_INT(now),
                    DB_INT(now));
        if (r >= 0)
                r = DBQ(c->m->db, "DELETE FROM web_sessions WHERE last_used < ? OR created_at < ?", NULL, &err,
                        DB_INT(now - WEB_SESSION_IDLE), DB_INT(now - WEB_SESSION_MAX));
        if (r < 0)
                return api_fail(c, err);
        c->who = p;
        c->authenticated = true;
        api_audit_target(c, "user:%s", p.email);
        set_cookie(c, token, WEB_SESSION_MAX / USEC_PER_SEC);
        explicit_bzero(token, sizeof(token));
        json_t *me = whoami(&p, csrf);
        /* Backend.AI's clients read {authenticated, data} */
        json_object_set_new(me, "authenticated", json_true());
        json_object_set_new(me, "data", json_pack("{s:s, s:s, s:s}", "email", p.email, "role",
                                                  role_to_string(p.role), "domain", p.domain));
        api_json(c, 200, me);
}

/* POST /server/login: the guard (login_guard.h) before the password is
 * checked, the check on a worker (password_check.h), then the cookie. */
void api_web_login(struct api_ctx *c)
{
        const char *email = NULL, *password = NULL;
        struct tess_error *err = NULL;

        if (!c->body)
                return api_problem(c, 400, "invalid-api-params", "a JSON body {email, password} is required");
        if (api_get_string(c->body, NAMES("email", "username"), 256, &email, &err) < 0 ||
            api_get_string(c->body, NAMES("password"), 256, &password, &err) < 0)
                return api_fail(c, err);
        if (!email || !password)
                return api_problem(c, 400, "invalid-api-params", "'email' and 'password' are required");
        if (!same_origin(c))
                return api_problem(c, 403, "forbidden", "a login from another site");
        struct login_try *l = xcalloc(1, sizeof(*l));
        int r = DBQ(c->m->db,
                    "SELECT u.id, u.password_hash, u.status, k.access_key FROM users u"
                    " JOIN domains d ON d.name = u.domain_name"
                    " LEFT JOIN keypairs k ON k.user_id = u.id AND k.is_main = 1 AND k.is_active = 1"
                    " WHERE (u.email = ? OR u.username = ?) AND d.is_active = 1"
                    " ORDER BY CASE WHEN u.email = ? THEN 0 ELSE 1 END LIMIT 1", /* an email names its owner */
                    &l->rows, &err, DB_TEXT(email), DB_TEXT(email), DB_TEXT(email));
        if (r < 0) {
                login_try_free(l);
                return api_fail(c, err);
        }
        if (login_try_guard(c->m->login_guard, c, l, email)) {
                login_try_free(l);
                return;
        }
        /* checked even for unknown users, so that timing does not tell them apart */
        const char *stored = l->rows->nrows == 1 ? db_getn(l->rows, 0, "password_hash") : NULL;
        password_check(c, password, stored ? stored : PASSWORD_DUMMY_HASH, NULL, login_checked, l, login_try_free);
}

void api_web_session(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        char csrf[33];

        if (session_auth(c, csrf, &err) < 0) {
                tess_error_free(err);
                return api_problem(c, 401, "auth-failed", "not logged in");
        }
        c->authenticated = true;
        api_json(c, 200, whoami(&c->who, csrf));
}

void api_web_logout(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        char token[128], hash[65];

        if (http_cookie_get(http_header(c->req, "Cookie"), WEB_SESSION_COOKIE, token, sizeof(token)) == 0) {
                if (!same_origin(c))
                        return api_problem(c, 403, "forbidden", "a logout from another site");
                sha256_hex(token, strlen(token), hash);
                if (DBQ(c->m->db, "DELETE FROM web_sessions WHERE id = ?", NULL, &err, DB_TEXT(hash)) < 0)
                        return api_fail(c, err);
        }
        set_cookie(c, "", 0);
        http_reply(c->req, 204, "application/json", "", 0);
}

/* ---- a password to change; sessions that end ---- */

int web_session_password_gate(struct api_ctx *c, struct tess_error **err)
{
        if (!c->who.must_change_password || (c->route && streq(c->route->pattern, WEB_SESSION_PASSWORD_ROUTE)))
                return 0;
        return tess_err(err, EKEYEXPIRED,
                        "you must change your password first (POST " WEB_SESSION_PASSWORD_ROUTE "): nothing else is "
                        "allowed until then");
}

int web_sessions_end(struct manager *m, const char *user_id, struct api_ctx *keep, struct tess_error **err)
{
        char token[128], hash[65] = "";
        int r;

        if (keep && http_cookie_get(http_header(keep->req, "Cookie"), WEB_SESSION_COOKIE, token, sizeof(token)) == 0) {
                sha256_hex(token, strlen(token), hash);
                explicit_bzero(token, sizeof(token));
        }
        r = DBQ(m->db, "DELETE FROM web_sessions WHERE user_id = ? AND id <> ?", NULL, err, DB_TEXT(user_id),
                DB_TEXT(hash));
        if (r > 0)
                log_info("ended %d web login(s) of user %s", r, user_id);
        return r < 0 ? r : 0;
}
