/* admin_users.c - /admin/users.
 *
 * Creating a user also joins it to its projects (default: the domain's
 * "default" project when there is one) and creates its main keypair, whose
 * secret is shown in the create answer only.  Only a superadmin may grant
 * the superadmin role, or change or delete a superadmin.  Deleting a user
 * removes its keypairs and memberships (the foreign keys cascade).
 * Emails and usernames are one namespace (model_check_login_names).  A new
 * password or status inactive ends the user's web logins at once; an
 * inactive user's sessions end by the scheduler's reaper when
 * conf.terminate_inactive_users says so (docs/admin-accounts.md). */
#include "common/compat.h"

#include "common/crypto.h"
#include "manager/accounts/model.h"
#include "manager/admin/admin-internal.h"
#include "manager/api/web_session.h"
#include "manager/core/manager.h"

static const char *const user_roles[] = { "superadmin", "admin", "user", "monitor", NULL };
static const char *const user_statuses[] = { "active", "inactive", NULL };

static const struct field user_fields[] = {
        { "id", "id", FT_TEXT, FF_RO },
        { "email", "email", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 254, .valid = api_valid_email,
          .hint = "must be a valid e-mail address" },
        { "username", "username", FT_TEXT, 0, .min = 1, .max = 64 },
        { "password", "password_hash", FT_TEXT, FF_WO | FF_REQUIRED, .min = 8, .max = 256, .encode = password_hash },
        { "full_name", "full_name", FT_TEXT, 0, .max = 256 },
        { "description", "description", FT_TEXT, 0, .max = 1024 },
        { "role", "role", FT_TEXT, 0, .choices = user_roles },
        { "status", "status", FT_TEXT, 0, .choices = user_statuses },
        { "domain", "domain_name", FT_TEXT, FF_CREATE | FF_DOMAIN, .max = 64, .ref = ADMIN_SQL_DOMAIN },
        { "need_password_change", "need_password_change", FT_BOOL },
        { "total_resource_slots", "total_resource_slots", FT_SLOTS },
        { "projects", NULL, FT_LIST, FF_CREATE | FF_VIRTUAL, .min = 1, .max = 64 },
        { "resource_policy", NULL, FT_TEXT, FF_CREATE | FF_VIRTUAL | FF_WO, .max = 64, .ref = ADMIN_SQL_POLICY },
        { "main_access_key", NULL, FT_TEXT, FF_RO,
          .expr = "(SELECT k.access_key FROM keypairs k WHERE k.user_id = u.id AND k.is_main = 1"
                  " ORDER BY k.created_at LIMIT 1)" },
        { "created_at", "created_at", FT_TIME, FF_RO },
        { "modified_at", "modified_at", FT_TIME, FF_RO },
        {},
};

static const struct filter user_filters[] = {
        { "id", " AND u.id = ?" },
        { "email", " AND u.email = ?" },
        { "project", " AND EXISTS (SELECT 1 FROM project_members pm WHERE pm.user_id = u.id AND pm.project_id = ?)" },
        { "domain", " AND u.domain_name = ?" },
        { "role", " AND u.role = ?" },
        { "status", " AND u.status = ?" },
        {},
};

static const struct in_use user_in_use[] = {
        { "SELECT 1 FROM sessions WHERE user_id = ? AND " ADMIN_LIVE_SESSIONS " LIMIT 1",
          "has sessions that are not terminated" },
        {},
};

static int user_check_write(struct api_ctx *c, const struct db_rows *rows, int row, const struct admin_values *v,
                            struct tess_error **err)
{
        if (rows && !v && streq(admin_row_get(&admin_users, rows, row, "_pk"), c->who.user_id))
                return tess_err(err, EEXIST, "you cannot delete yourself");
        if (rows && v && admin_value_text(v, "username")) {
                int r = model_check_login_names(c->m, admin_row_get(&admin_users, rows, row, "email"),
                                                admin_value_text(v, "username"),
                                                admin_row_get(&admin_users, rows, row, "_pk"), err);
                if (r < 0)
                        return r;
        }
        if (c->who.role == ROLE_SUPERADMIN)
                return 0;
        if (rows && streq(admin_row_get(&admin_users, rows, row, "role"), "superadmin"))
                return tess_err(err, EACCES, "only a superadmin may change or delete a superadmin");
        if (v && streq_ptr(admin_value_text(v, "role"), "superadmin"))
                return tess_err(err, EACCES, "only a superadmin may grant the superadmin role");
        return 0;
}

/* Join the projects named in `list` (NULL: "default" if the domain has it). */
static int join_projects(struct api_ctx *c, const char *user_id, const char *domain, const json_t *list,
                         struct tess_error **err)
{
        char pid[UUID_STR_LEN];
        size_t i;
        json_t *v;
        int r;

        if (!list) {
                r = model_project_id(c->m, domain, "default", pid, err);
                return r <= 0 ? r : model_add_member(c->m, pid, user_id, err);
        }
        json_array_foreach(list, i, v) {
                r = model_project_id(c->m, domain, json_string_value(v), pid, err);
                if (r < 0)
                        return r;
                if (r == 0)
                        return tess_err(err, EINVAL, "project '%s' does not exist in domain '%s'",
                                        json_string_value(v), domain);
                r = model_add_member(c->m, pid, user_id, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int user_create(struct api_ctx *c, const struct admin_values *v, char *ret_pk, size_t pk_len, json_t *extra,
                       struct tess_error **err)
{
        /* what model_create_user does not take (columns named as the fields) */
        static const char *const written_after[] = { "description", "total_resource_slots" };
        const char *policy = admin_value_text(v, "resource_policy");
        struct new_user u = {
                .email = admin_value_text(v, "email"),
                .username = admin_value_text(v, "username"),
                .password = admin_value_text(v, "password"),
                .password_hash = v->encoded,
                .domain = admin_value_text(v, "domain"),
                .role = admin_value_text(v, "role"),
                .full_name = admin_value_text(v, "full_name"),
                .status = admin_value_text(v, "status"),
                .need_password_change = json_is_true(admin_value(v, "need_password_change")),
        };
        char id[UUID_STR_LEN], ak[21], sk[41];
        int r;

        r = model_create_user(c->m, &u, id, err);
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(written_after); i++) {
                if (!admin_value_given(v, written_after[i]))
                        continue;
                _cleanup_free_ char *owned = NULL;
                _cleanup_free_ char *sql = xasprintf("UPDATE users SET %s = ? WHERE id = ?", written_after[i]);
                r = DBQ(c->m->db, sql, NULL, err, admin_value_arg_of(v, written_after[i], &owned), DB_TEXT(id));
        }
        if (r >= 0)
                r = join_projects(c, id, u.domain, admin_value(v, "projects"), err);
        if (r >= 0)
                r = model_create_keypair(c->m, id, policy ? policy : "default", true, NULL, NULL, ak, sk, err);
        if (r < 0)
                return r;
        json_object_set_new(extra, "keypair", json_pack("{s:s, s:s}", "access_key", ak, "secret_key", sk));
        snprintf(ret_pk, pk_len, "%s", id);
        return 0;
}

/* A deactivation logs the user out everywhere, a new password too (but
 * for the login that set its own). */
static int user_after_write(struct api_ctx *c, const char *pk, const struct admin_values *v,
                            struct tess_error **err)
{
        if (streq_ptr(admin_value_text(v, "status"), "inactive"))
                return web_sessions_end(c->m, pk, NULL, err);
        if (admin_value_given(v, "password"))
                return web_sessions_end(c->m, pk, streq(pk, c->who.user_id) ? c : NULL, err);
        return 0;
}

static int user_projects(struct api_ctx *c, const struct db_rows *rows, int row, json_t *obj,
                         struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *p = NULL;
        int r = DBQ(c->m->db,
                    "SELECT p.name FROM project_members m JOIN projects p ON p.id = m.project_id"
                    " WHERE m.user_id = ? ORDER BY p.name",
                    &p, err, DB_TEXT(admin_row_get(&admin_users, rows, row, "_pk")));
        if (r < 0)
                return r;
        json_t *names = json_array();
        for (int i = 0; i < p->nrows; i++)
                json_array_append_new(names, json_string(db_get(p, i, 0)));
        json_object_set_new(obj, "projects", names);
        return 0;
}

const struct entity admin_users = {
        .path = "/admin/users",
        .noun = "user",
        .table = "users",
        .alias = "u",
        .pk = "id",
        .key = "email",
        .label = "email",
        .order = "u.email",
        .fields = user_fields,
        .filters = user_filters,
        .in_use = user_in_use,
        .domain_scope = "u.domain_name = ? AND u.role <> 'superadmin'",
        .create_roles = ROLES_ADMINS,
        .update_roles = ROLES_ADMINS,
        .delete_roles = ROLES_ADMINS,
        .modified_at = true,
        .check_write = user_check_write,
        .create = user_create,
        .after_write = user_after_write,
        .decorate = user_projects,
};
