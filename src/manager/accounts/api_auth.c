/* api_auth.c - /auth routes: password login returning the main keypair,
 * the caller's role, and password change. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "manager/accounts/model.h"
#include "manager/api/api.h"
#include "manager/api/auth.h"
#include "manager/api/web_session.h"
#include "manager/api/login_guard.h"
#include "manager/api/password_check.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"

static void authorize_checked(struct api_ctx *c, bool ok, char *new_hash UNUSED, void *data)
{
        struct login_try *s = data;
        struct db_rows *rows = s->rows;
        _cleanup_free_ char *secret = NULL;
        struct tess_error *err = NULL;
        struct principal p;

        if (!rows->nrows || !ok || !streq(db_getn(rows, 0, "status"), "active")) {
                login_guard_failed(c->m->login_guard, c, s->keys, s->nkeys);
                return api_problem(c, 401, "auth-failed", "wrong email or password, or inactive user");
        }
        login_guard_succeeded(c->m->login_guard, s->keys, s->nkeys);
        /* the password was set by an admin: it yields no secret key until changed */
        if (db_get_int(rows, 0, "need_password_change"))
                return api_problem(c, 403, "password-change-required",
                                   "you must change your password first: log in to the web UI, or POST /server/login"
                                   " and then " WEB_SESSION_PASSWORD_ROUTE);
        const char *ak = db_getn(rows, 0, "access_key");
        if (!ak)
                return api_problem(c, 401, "auth-failed", "the user has no active main keypair");
        int r = auth_lookup_keypair(c->m, ak, &p, &secret, &err);
        if (r < 0)
                return api_fail(c, err);
        c->who = p;
        c->authenticated = true;
        api_audit_target(c, "user:%s", p.email);
        api_json(c, 200,
                 json_pack("{s:{s:s, s:s, s:s, s:s, s:s}}", "data", "access_key", p.access_key, "secret_key", secret,
                           "role", role_to_string(p.role), "status", "active", "user_id", p.user_id));
}

/* POST /auth/authorize: the guessing limit first, the password checked on
 * a worker (password_check.h). */
void api_auth_authorize(struct api_ctx *c)
{
        const char *type = "keypair", *domain = "default", *username = NULL, *password = NULL;
        struct tess_error *err = NULL;
        int r;

        if (!c->body)
                return api_problem(c, 400, "invalid-api-params", "a JSON body is required");
        if (api_get_string(c->body, NAMES("type"), 32, &type, &err) < 0 ||
            api_get_string(c->body, NAMES("domain"), 128, &domain, &err) < 0 ||
            api_get_string(c->body, NAMES("username", "email"), 256, &username, &err) < 0 ||
            api_get_string(c->body, NAMES("password"), 256, &password, &err) < 0)
                return api_fail(c, err);
        if (!streq(type, "keypair"))
                return api_problem(c, 400, "invalid-api-params", "'type' must be 'keypair'");
        if (!username || !password)
                return api_problem(c, 400, "invalid-api-params", "'username' and 'password' are required");
        struct login_try *s = xcalloc(1, sizeof(*s));
        r = DBQ(c->m->db,
                "SELECT u.id, u.password_hash, u.status, u.need_password_change, k.access_key FROM users u"
                " JOIN domains d ON d.name = u.domain_name"
                " LEFT JOIN keypairs k ON k.user_id = u.id AND k.is_main = 1 AND k.is_active = 1"
                " WHERE (u.email = ? OR u.username = ?) AND u.domain_name = ? AND d.is_active = 1"
                " ORDER BY CASE WHEN u.email = ? THEN 0 ELSE 1 END LIMIT 1", /* an email names its owner */
                &s->rows, &err, DB_TEXT(username), DB_TEXT(username), DB_TEXT(domain), DB_TEXT(username));
        if (r < 0) {
                login_try_free(s);
                return api_fail(c, err);
        }
        if (login_try_guard(c->m->login_guard, c, s, username)) {
                login_try_free(s);
                return;
        }
        /* checked even for unknown users, so that timing does not reveal them */
        const char *stored = s->rows->nrows ? db_getn(s->rows, 0, "password_hash") : NULL;
        password_check(c, password, stored ? stored : PASSWORD_DUMMY_HASH, NULL, authorize_checked, s, login_try_free);
}

void api_auth_role(struct api_ctx *c)
{
        enum role r = c->who.role;
        api_json(c, 200,
                 json_pack("{s:s, s:s, s:s, s:s}", "global_role", r == ROLE_SUPERADMIN ? "superadmin" : "user",
                           "domain_role", r == ROLE_ADMIN || r == ROLE_SUPERADMIN ? "admin" : "user", "role",
                           role_to_string(r), "domain", c->who.domain));
}

static void password_changed(struct api_ctx *c, bool ok, char *new_hash, void *data)
{
        struct login_try *s = data;
        _cleanup_free_ char *hash = new_hash;
        struct tess_error *err = NULL;

        if (!ok || !hash) {
                login_guard_failed(c->m->login_guard, c, s->keys, s->nkeys);
                return api_problem(c, 401, "auth-failed", "the old password is wrong");
        }
        login_guard_succeeded(c->m->login_guard, s->keys, s->nkeys);
        int r = DBQ(c->m->db, "UPDATE users SET password_hash = ?, need_password_change = 0, modified_at = ? WHERE id = ?",
                    NULL, &err, DB_TEXT(hash), DB_INT(now_usec()), DB_TEXT(c->who.user_id));
        /* whoever knew the old password is logged out; this login stays */
        if (r >= 0)
                r = web_sessions_end(c->m, c->who.user_id, c, &err);
        if (r < 0)
                return api_fail(c, err);
        api_audit_target(c, "user:%s", c->who.email);
        api_json(c, 200, json_pack("{s:s}", "result", "password updated"));
}

/* POST /auth/update-password: the old password is a password route too
 * (a stolen keypair must not guess it freely): the guard, then the check
 * and the new hash on a worker. */
void api_auth_update_password(struct api_ctx *c)
{
        const char *old = NULL, *new1 = NULL, *new2 = NULL;
        struct tess_error *err = NULL;
        int r;

        if (api_get_string(c->body, NAMES("old_password"), 256, &old, &err) < 0 ||
            api_get_string(c->body, NAMES("new_password"), 256, &new1, &err) < 0 ||
            api_get_string(c->body, NAMES("new_password2"), 256, &new2, &err) < 0)
                return api_fail(c, err);
        if (!old || !new1)
                return api_problem(c, 400, "invalid-api-params", "'old_password' and 'new_password' are required");
        if (new2 && !streq(new1, new2))
                return api_problem(c, 400, "invalid-api-params", "the new passwords do not match");
        if (strlen(new1) < 8)
                return api_problem(c, 400, "invalid-api-params", "the new password must be at least 8 characters");
        if (streq(new1, old))
                return api_problem(c, 400, "invalid-api-params", "the new password must differ from the old one");
        struct login_try *s = xcalloc(1, sizeof(*s));
        r = DBQ(c->m->db, "SELECT id, password_hash FROM users WHERE id = ?", &s->rows, &err, DB_TEXT(c->who.user_id));
        if (r < 0) {
                login_try_free(s);
                return api_fail(c, err);
        }
        if (login_try_guard(c->m->login_guard, c, s, c->who.email)) {
                login_try_free(s);
                return;
        }
        const char *stored = s->rows->nrows ? db_getn(s->rows, 0, "password_hash") : NULL;
        password_check(c, old, stored ? stored : PASSWORD_DUMMY_HASH, new1, password_changed, s, login_try_free);
}
