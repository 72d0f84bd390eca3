/* model.c - see model.h. */
#include "common/compat.h"

#include <strings.h>

#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/accounts/model.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"

static bool key_chars_ok(const char *s, size_t want)
{
        if (strlen(s) != want)
                return false;
        for (; *s; s++)
                if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '+' ||
                      *s == '/'))
                        return false;
        return true;
}

/* -EEXIST when a user other than except_id logs in by `name`: as its
 * email or its username, letters' case ignored. */
static int login_name_free(struct manager *m, const char *name, const char *except_id, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db,
                    "SELECT email FROM users WHERE (LOWER(email) = LOWER(?) OR LOWER(username) = LOWER(?)) AND id <> ?",
                    &rows, err, DB_TEXT(name), DB_TEXT(name), DB_TEXT(except_id ? except_id : ""));
        if (r < 0)
                return r;
        if (rows->nrows)
                return tess_err(err, EEXIST, "'%s' is already another user's email or username", name);
        return 0;
}

int model_check_login_names(struct manager *m, const char *email, const char *username, const char *except_id,
                            struct tess_error **err)
{
        bool own_email = username && email && strcasecmp(username, email) == 0;
        int r = 0;

        if (email)
                r = login_name_free(m, email, except_id, err);
        if (r >= 0 && username && !own_email)
                r = login_name_free(m, username, except_id, err);
        if (r >= 0 && username && !own_email && strchr(username, '@'))
                r = tess_err(err, EINVAL, "a username with '@' in it must be the user's own email");
        return r < 0 ? r : 0;
}

int model_create_user(struct manager *m, const struct new_user *u, char ret_id[37], struct tess_error **err)
{
        const char *role = u->role ? u->role : "user", *status = u->status ? u->status : "active";
        int64_t now = now_usec();
        int r;

        if (!u->email || !api_valid_email(u->email))
                return tess_err(err, EINVAL, "'email' must be a valid e-mail address");
        if (u->username && (strlen(u->username) < 1 || strlen(u->username) > 64))
                return tess_err(err, EINVAL, "'username' must be 1 to 64 characters");
        if (!u->password || strlen(u->password) < 8 || strlen(u->password) > 256)
                return tess_err(err, EINVAL, "'password' must be 8 to 256 characters");
        if (role_from_string(role) < 0)
                return tess_err(err, EINVAL, "'role' must be one of superadmin, admin, user, monitor");
        if (!streq(status, "active") && !streq(status, "inactive"))
                return tess_err(err, EINVAL, "'status' must be active or inactive");
        if ((r = model_check_login_names(m, u->email, u->username, NULL, err)) < 0)
                return r;
        _cleanup_free_ char *hash = u->password_hash ? xstrdup(u->password_hash) : password_hash(u->password);
        uuid_generate_str(ret_id);
        r = DBQ(m->db,
                "INSERT INTO users(id, email, username, password_hash, need_password_change, full_name, status,"
                " domain_name, role, created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                NULL, err, DB_TEXT(ret_id), DB_TEXT(u->email), DB_TEXT(u->username ? u->username : u->email),
                DB_TEXT(hash), DB_BOOL(u->need_password_change), DB_TEXT(u->full_name ? u->full_name : ""),
                DB_TEXT(status), DB_TEXT(u->domain), DB_TEXT(role), DB_INT(now), DB_INT(now));
        if (r == -EEXIST)
                return tess_err(err, EEXIST, "a user with email '%s' or that username already exists", u->email);
        if (r == -ENOENT)
                return tess_err(err, ENOENT, "domain '%s' does not exist", u->domain);
        return r < 0 ? r : 0;
}

int model_create_keypair(struct manager *m, const char *user_id, const char *policy, bool is_main,
                         const char *access_key, const char *secret_key, char ret_access[21], char ret_secret[41],
                         struct tess_error **err)
{
        int r;

        if (access_key) {
                if (!key_chars_ok(access_key, 20))
                        return tess_err(err, EINVAL, "an access key must be 20 letters and digits");
                memcpy(ret_access, access_key, 21);
        } else {
                generate_access_key(ret_access);
        }
        if (secret_key) {
                if (!key_chars_ok(secret_key, 40))
                        return tess_err(err, EINVAL, "a secret key must be 40 characters of [A-Za-z0-9+/]");
                memcpy(ret_secret, secret_key, 41);
        } else {
                generate_secret_key(ret_secret);
        }
        _cleanup_free_ char *sealed = secret_seal(m->master_key, ret_secret);
        r = DBQ(m->db,
                "INSERT INTO keypairs(access_key, secret_key_sealed, user_id, is_active, is_main, resource_policy,"
                " created_at) VALUES (?, ?, ?, 1, ?, ?, ?)",
                NULL, err, DB_TEXT(ret_access), DB_TEXT(sealed), DB_TEXT(user_id), DB_BOOL(is_main),
                DB_TEXT(policy ? policy : "default"), DB_INT(now_usec()));
        if (r == -EEXIST)
                return tess_err(err, EEXIST, "access key '%s' already exists", ret_access);
        if (r == -ENOENT)
                return tess_err(err, ENOENT, "the user or resource policy '%s' does not exist",
                                policy ? policy : "default");
        return r < 0 ? r : 0;
}

int model_add_member(struct manager *m, const char *project_id, const char *user_id, struct tess_error **err)
{
        int r = DBQ(m->db, "INSERT INTO project_members(project_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    NULL, err, DB_TEXT(project_id), DB_TEXT(user_id));
        return r < 0 ? r : 0;
}

int model_is_member(struct manager *m, const char *project_id, const char *user_id, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db, "SELECT 1 FROM project_members WHERE project_id = ? AND user_id = ?", &rows, err,
                    DB_TEXT(project_id), DB_TEXT(user_id));
        if (r < 0)
                return r;
        return rows->nrows > 0;
}

static const char allowed_rgs_sql[] =
        "SELECT g.name FROM resource_groups g WHERE g.is_active = 1 AND ("
        " EXISTS (SELECT 1 FROM resource_group_domains x WHERE x.resource_group = g.name AND x.domain_name = ?)"
        " OR EXISTS (SELECT 1 FROM resource_group_projects x WHERE x.resource_group = g.name AND x.project_id = ?)"
        " OR EXISTS (SELECT 1 FROM resource_group_keypairs x WHERE x.resource_group = g.name AND x.access_key = ?))"
        " ORDER BY g.name";

int model_rg_list(struct manager *m, const char *domain, const char *project_id, const char *access_key,
                  struct db_rows **ret, struct tess_error **err)
{
        return DBQ(m->db, allowed_rgs_sql, ret, err, DB_TEXT(domain), DB_TEXT(project_id), DB_TEXT(access_key));
}

int model_rg_allowed(struct manager *m, const char *rg, const char *domain, const char *project_id,
                     const char *access_key, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = model_rg_list(m, domain, project_id, access_key, &rows, err);
        if (r < 0)
                return r;
        for (int i = 0; i < rows->nrows; i++)
                if (streq(db_get(rows, i, 0), rg))
                        return 1;
        return 0;
}

int model_rg_default(struct manager *m, const char *domain, const char *project_id, const char *access_key,
                     char *ret, size_t n, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = model_rg_list(m, domain, project_id, access_key, &rows, err);
        if (r < 0)
                return r;
        if (rows->nrows == 0)
                return tess_err(err, ENOENT, "no resource group is allowed for this project and keypair");
        /* prefer "default" when allowed */
        for (int i = 0; i < rows->nrows; i++) {
                if (streq(db_get(rows, i, 0), "default")) {
                        snprintf(ret, n, "default");
                        return 0;
                }
        }
        snprintf(ret, n, "%s", db_get(rows, 0, 0));
        return 0;
}

static int project_id(struct manager *m, const char *domain, const char *name, bool active_only, char ret_id[37],
                      struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db,
                    active_only ? "SELECT id FROM projects WHERE domain_name = ? AND (name = ? OR id = ?) AND is_active = 1"
                                : "SELECT id FROM projects WHERE domain_name = ? AND (name = ? OR id = ?)",
                    &rows, err, DB_TEXT(domain), DB_TEXT(name), DB_TEXT(name));
        if (r < 0)
                return r;
        if (rows->nrows == 0)
                return 0;
        snprintf(ret_id, 37, "%s", db_get(rows, 0, 0));
        return 1;
}

int model_project_id(struct manager *m, const char *domain, const char *name, char ret_id[37],
                     struct tess_error **err)
{
        return project_id(m, domain, name, false, ret_id, err);
}

int model_active_project_id(struct manager *m, const char *domain, const char *name, char ret_id[37],
                            struct tess_error **err)
{
        return project_id(m, domain, name, true, ret_id, err);
}

int model_remove_member(struct manager *m, const char *project_id, const char *user_id, struct tess_error **err)
{
        int r = DBQ(m->db, "DELETE FROM project_members WHERE project_id = ? AND user_id = ?", NULL, err,
                    DB_TEXT(project_id), DB_TEXT(user_id));
        return r < 0 ? r : 0;
}
