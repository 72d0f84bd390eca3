/* admin_projects.c - /admin/projects and their members.
 *
 * A project is addressed by id, or by name within ?domain= (default: the
 * caller's domain).  Members must be users of the project's domain. */
#include "common/compat.h"

#include "common/crypto.h"
#include "manager/accounts/model.h"
#include "manager/admin/admin-internal.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"

static const struct field project_fields[] = {
        { "id", "id", FT_TEXT, FF_RO },
        { "name", "name", FT_TEXT, FF_REQUIRED, .max = 64, .valid = api_valid_name, .hint = ADMIN_NAME_HINT },
        { "domain", "domain_name", FT_TEXT, FF_CREATE | FF_DOMAIN, .max = 64, .ref = ADMIN_SQL_DOMAIN },
        { "description", "description", FT_TEXT, 0, .max = 1024 },
        { "is_active", "is_active", FT_BOOL },
        { "total_resource_slots", "total_resource_slots", FT_SLOTS },
        { "allowed_vfolder_hosts", "allowed_vfolder_hosts", FT_OBJECT, .check = vf_allowed_hosts_check },
        { "max_vfolder_count", "max_vfolder_count", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "max_quota_scope_size", "max_quota_scope_size", FT_SIZE },
        { "members_count", NULL, FT_INT, FF_RO,
          .expr = "(SELECT COUNT(*) FROM project_members m WHERE m.project_id = p.id)" },
        { "created_at", "created_at", FT_TIME, FF_RO },
        { "modified_at", "modified_at", FT_TIME, FF_RO },
        {},
};

static const struct filter project_filters[] = {
        { "id", " AND p.id = ?" },
        { "name", " AND p.name = ?" },
        { "domain", " AND p.domain_name = ?" },
        { "is_active", " AND p.is_active = ?", FT_BOOL },
        {},
};

static const struct in_use project_in_use[] = {
        { "SELECT 1 FROM sessions WHERE project_id = ? AND " ADMIN_LIVE_SESSIONS " LIMIT 1",
          "has sessions that are not terminated" },
        {},
};

static int project_key(struct api_ctx *c, const char *key, struct buf *where, struct db_arg *args, int *nargs,
                       struct tess_error **err UNUSED)
{
        const char *domain = http_query(c->req, "domain");

        admin_where(where, args, nargs, "p.id = ? OR (p.name = ?", DB_TEXT(key));
        admin_where(where, args, nargs, " AND p.domain_name = ?)", DB_TEXT(domain ? domain : c->who.domain));
        return 0;
}

const struct entity admin_projects = {
        .path = "/admin/projects",
        .noun = "project",
        .table = "projects",
        .alias = "p",
        .pk = "id",
        .label = "id",
        .order = "p.domain_name, p.name",
        .conflict = "a project of that name already exists in the domain",
        .fields = project_fields,
        .filters = project_filters,
        .in_use = project_in_use,
        .domain_scope = "p.domain_name = ?",
        .create_roles = ROLES_ADMINS,
        .update_roles = ROLES_ADMINS,
        .delete_roles = ROLES_ADMINS,
        .gen_id = true,
        .created_at = true,
        .modified_at = true,
        .key_filter = project_key,
};

/* ---- members ---- */

static int members_json(struct api_ctx *c, const char *project_id, json_t **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(c->m->db,
                    "SELECT u.id, u.email, u.role FROM project_members m JOIN users u ON u.id = m.user_id"
                    " WHERE m.project_id = ? ORDER BY u.email",
                    &rows, err, DB_TEXT(project_id));
        if (r < 0)
                return r;
        json_t *items = json_array();
        for (int i = 0; i < rows->nrows; i++)
                json_array_append_new(items, json_pack("{s:s, s:s, s:s}", "user_id", db_get(rows, i, 0), "email",
                                                       db_get(rows, i, 1), "role", db_get(rows, i, 2)));
        *ret = json_pack("{s:o}", "items", items);
        return 0;
}

void admin_members_list(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *proj = NULL;
        struct tess_error *err = NULL;
        json_t *answer;

        if (admin_find(c, &admin_projects, c->param[0], &proj, &err) < 0 ||
            members_json(c, admin_row_get(&admin_projects, proj, 0, "_pk"), &answer, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, answer);
}

/* Add (or remove) the users named in `list`, each by e-mail or id. */
static int change_members(struct api_ctx *c, const char *project_id, const char *domain, const json_t *list,
                          bool add, struct tess_error **err)
{
        size_t i;
        json_t *v;

        json_array_foreach(list, i, v) {
                _cleanup_rows_ struct db_rows *user = NULL;
                const char *who = json_string_value(v);
                int r = DBQ(c->m->db, "SELECT id FROM users WHERE (email = ? OR id = ?) AND domain_name = ?", &user,
                            err, DB_TEXT(who), DB_TEXT(who), DB_TEXT(domain));
                if (r < 0)
                        return r;
                if (user->nrows == 0)
                        return tess_err(err, EINVAL, "user '%s' does not exist in domain '%s'", who, domain);
                r = add ? model_add_member(c->m, project_id, db_get(user, 0, 0), err)
                        : model_remove_member(c->m, project_id, db_get(user, 0, 0), err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int members_apply(struct api_ctx *c, const char *pid, const char *domain, struct tess_error **err)
{
        const json_t *add = json_object_get(c->body, "add"), *remove = json_object_get(c->body, "remove");
        int r;

        if ((add && admin_string_list(add, "add", err) < 0) || (remove && admin_string_list(remove, "remove", err) < 0))
                return -EINVAL;
        r = db_begin(c->m->db, err);
        if (r < 0)
                return r;
        if (add)
                r = change_members(c, pid, domain, add, true, err);
        if (r >= 0 && remove)
                r = change_members(c, pid, domain, remove, false, err);
        if (r >= 0)
                return db_commit(c->m->db, err);
        db_rollback(c->m->db);
        return r;
}

void admin_members_change(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *proj = NULL;
        struct tess_error *err = NULL;
        json_t *answer;

        if (admin_find_for_change(c, &admin_projects, &proj, &err) < 0)
                return api_fail(c, err);
        const char *pid = admin_row_get(&admin_projects, proj, 0, "_pk");
        if (members_apply(c, pid, admin_row_get(&admin_projects, proj, 0, "domain"), &err) < 0 ||
            members_json(c, pid, &answer, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, answer);
}
