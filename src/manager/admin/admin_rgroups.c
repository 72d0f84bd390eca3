/* admin_rgroups.c - /admin/resource-groups with their access lists, and
 * /admin/presets.
 *
 * A resource group may be used through its domains, projects and keypairs
 * (model_rg_allowed).  Admins and monitors see the groups open to their
 * domain (directly, or through one of its projects or keypairs), and only
 * the entries of the access lists that belong to their domain. */
#include "common/compat.h"

#include "common/crypto.h"
#include "manager/accounts/model.h"
#include "manager/admin/admin-internal.h"
#include "manager/core/manager.h"
#include "sched/sched.h"

static const char *const schedulers[] = { "fifo", "lifo", "drf", "fair-share", NULL };

/* scheduler_opts must parse under any scheduler (sched_policy_parse). */
static int check_scheduler_opts(const json_t *v, struct tess_error **err)
{
        struct sched_policy p;
        return sched_policy_parse("fifo", v, &p, err);
}

static const struct field rgroup_fields[] = {
        { "id", "id", FT_TEXT, FF_RO },
        { "name", "name", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 64, .valid = api_valid_name,
          .hint = ADMIN_NAME_HINT },
        { "description", "description", FT_TEXT, 0, .max = 1024 },
        { "is_active", "is_active", FT_BOOL },
        { "is_public", "is_public", FT_BOOL },
        { "scheduler", "scheduler", FT_TEXT, 0, .choices = schedulers },
        { "scheduler_opts", "scheduler_opts", FT_OBJECT, .check = check_scheduler_opts },
        { "wsproxy_addr", "wsproxy_addr", FT_TEXT, 0, .max = 1024 },
        { "created_at", "created_at", FT_TIME, FF_RO },
        {},
};

static const struct in_use rgroup_in_use[] = {
        { "SELECT 1 FROM sessions WHERE resource_group = ? AND " ADMIN_LIVE_SESSIONS " LIMIT 1",
          "has sessions that are not terminated" },
        { "SELECT 1 FROM agents WHERE resource_group = ? AND status <> 'LOST' LIMIT 1", "still has agents that are not LOST" },
        {},
};

/* One access list: how to show it, and how to change it. */
struct access_list {
        const char *name;  /* "domains" */
        const char *table; /* resource_group_domains */
        const char *column;
        const char *show;  /* rows of the list, one ? = the group */
        const char *mine;  /* appended for admins and monitors, one ? = their domain */
        const char *noun;  /* "domain" */
        /* An entry named in a request is stored as is if `exists` (one ?
         * = the entry) finds it, or as resolve() translates it: 1 found,
         * 0 not, < 0 error. */
        const char *exists;
        int (*resolve)(struct api_ctx *c, const char *entry, char *ret, size_t n, struct tess_error **err);
};

/* "domain/project", or a project id */
static int resolve_project(struct api_ctx *c, const char *entry, char *ret, size_t n, struct tess_error **err)
{
        const char *slash = strchr(entry, '/');
        char id[UUID_STR_LEN];

        if (!slash) {
                snprintf(ret, n, "%s", entry);
                return admin_exists(c, "SELECT 1 FROM projects WHERE id = ?", entry, err);
        }
        _cleanup_free_ char *domain = xstrndup(entry, (size_t)(slash - entry));
        int r = model_project_id(c->m, domain, slash + 1, id, err);
        snprintf(ret, n, "%s", r > 0 ? id : "");
        return r;
}

static const struct access_list access_lists[] = {
        { "domains", "resource_group_domains", "domain_name",
          "SELECT x.domain_name FROM resource_group_domains x WHERE x.resource_group = ?", " AND x.domain_name = ?",
          "domain", ADMIN_SQL_DOMAIN },
        { "projects", "resource_group_projects", "project_id",
          "SELECT p.domain_name || '/' || p.name FROM resource_group_projects x JOIN projects p ON p.id = x.project_id"
          " WHERE x.resource_group = ?",
          " AND p.domain_name = ?", "project", .resolve = resolve_project },
        { "keypairs", "resource_group_keypairs", "access_key",
          "SELECT x.access_key FROM resource_group_keypairs x JOIN keypairs k ON k.access_key = x.access_key"
          " JOIN users u ON u.id = k.user_id WHERE x.resource_group = ?",
          " AND u.domain_name = ?", "keypair", "SELECT 1 FROM keypairs WHERE access_key = ?" },
};

static int rgroup_access_json(struct api_ctx *c, const struct db_rows *rows, int row, json_t *obj,
                              struct tess_error **err)
{
        const char *name = admin_row_get(&admin_rgroups, rows, row, "name");
        bool all = c->who.role == ROLE_SUPERADMIN;

        for (size_t l = 0; l < ARRAY_SIZE(access_lists); l++) {
                const struct access_list *a = &access_lists[l];
                _cleanup_rows_ struct db_rows *entries = NULL;
                _cleanup_free_ char *q = xasprintf("%s%s ORDER BY 1", a->show, all ? "" : a->mine);
                int r = all ? DBQ(c->m->db, q, &entries, err, DB_TEXT(name))
                            : DBQ(c->m->db, q, &entries, err, DB_TEXT(name), DB_TEXT(c->who.domain));
                if (r < 0)
                        return r;
                json_t *list = json_array();
                for (int i = 0; i < entries->nrows; i++)
                        json_array_append_new(list, json_string(db_get(entries, i, 0)));
                json_object_set_new(obj, a->name, list);
        }
        return 0;
}

static const struct filter rgroup_filters[] = {
        { "name", " AND g.name = ?" },
        { "is_active", " AND g.is_active = ?", FT_BOOL },
        {},
};

const struct entity admin_rgroups = {
        .path = "/admin/resource-groups",
        .noun = "resource group",
        .table = "resource_groups",
        .alias = "g",
        .pk = "name",
        .key = "name",
        .label = "name",
        .order = "g.name",
        .fields = rgroup_fields,
        .filters = rgroup_filters,
        .in_use = rgroup_in_use,
        .domain_scope =
                "EXISTS (SELECT 1 FROM resource_group_domains x WHERE x.resource_group = g.name AND x.domain_name = ?)"
                " OR EXISTS (SELECT 1 FROM resource_group_projects x JOIN projects p ON p.id = x.project_id"
                " WHERE x.resource_group = g.name AND p.domain_name = ?)"
                " OR EXISTS (SELECT 1 FROM resource_group_keypairs x JOIN keypairs k ON k.access_key = x.access_key"
                " JOIN users u ON u.id = k.user_id WHERE x.resource_group = g.name AND u.domain_name = ?)",
        .create_roles = ROLES_SUPER,
        .update_roles = ROLES_SUPER,
        .delete_roles = ROLES_SUPER,
        .gen_id = true,
        .created_at = true,
        .decorate = rgroup_access_json,
};

/* ---- POST /admin/resource-groups/{name}/access ---- */

static int change_list(struct api_ctx *c, const char *group, const struct access_list *a, const json_t *entries,
                       bool add, struct tess_error **err)
{
        _cleanup_free_ char *q =
                add ? xasprintf("INSERT INTO %s(resource_group, %s) VALUES (?, ?) ON CONFLICT DO NOTHING", a->table,
                                a->column)
                    : xasprintf("DELETE FROM %s WHERE resource_group = ? AND %s = ?", a->table, a->column);
        size_t i;
        json_t *v;

        json_array_foreach(entries, i, v) {
                const char *entry = json_string_value(v);
                char value[128];
                int r;

                if (a->resolve) {
                        r = a->resolve(c, entry, value, sizeof(value), err);
                } else {
                        snprintf(value, sizeof(value), "%s", entry);
                        r = admin_exists(c, a->exists, entry, err);
                }
                if (r < 0)
                        return r;
                if (r == 0)
                        return tess_err(err, EINVAL, "%s '%s' does not exist", a->noun, entry);
                r = DBQ(c->m->db, q, NULL, err, DB_TEXT(group), DB_TEXT(value));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* One of "add" and "remove": {"domains": [...], "projects": [...], "keypairs": [...]} */
static int change_lists(struct api_ctx *c, const char *group, const char *op, struct tess_error **err)
{
        const json_t *changes = json_object_get(c->body, op);
        char where[32];
        int r;

        if (!changes)
                return 0;
        if (!json_is_object(changes))
                return tess_err(err, EINVAL, "'%s' must be an object of domains, projects and keypairs", op);
        snprintf(where, sizeof(where), "%s.", op);
        r = admin_only_keys(changes, NAMES("domains", "projects", "keypairs"), where, err);
        for (size_t l = 0; r >= 0 && l < ARRAY_SIZE(access_lists); l++) {
                const json_t *entries = json_object_get(changes, access_lists[l].name);
                char name[48];
                if (!entries)
                        continue;
                snprintf(name, sizeof(name), "%s.%s", op, access_lists[l].name);
                r = admin_string_list(entries, name, err);
                if (r >= 0)
                        r = change_list(c, group, &access_lists[l], entries, streq(op, "add"), err);
        }
        return r;
}

void admin_rgroup_access(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL, *fresh = NULL;
        struct tess_error *err = NULL;
        json_t *answer;
        int r;

        if (admin_find_for_change(c, &admin_rgroups, &rows, &err) < 0 || db_begin(c->m->db, &err) < 0)
                return api_fail(c, err);
        const char *group = admin_row_get(&admin_rgroups, rows, 0, "_pk");
        r = change_lists(c, group, "add", &err);
        if (r >= 0)
                r = change_lists(c, group, "remove", &err);
        if (r >= 0)
                r = db_commit(c->m->db, &err);
        else
                db_rollback(c->m->db);
        if (r < 0 || admin_load(c, &admin_rgroups, group, &fresh, &err) < 0 ||
            admin_show_json(c, &admin_rgroups, fresh, 0, &answer, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, answer);
}

/* ---- presets ---- */

static const struct field preset_fields[] = {
        { "name", "name", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 64, .valid = api_valid_name,
          .hint = ADMIN_NAME_HINT },
        { "resource_slots", "resource_slots", FT_SLOTS, FF_REQUIRED | FF_FINITE },
        { "shared_memory", "shared_memory", FT_SIZE, FF_NULL },
        { "resource_group", "resource_group", FT_TEXT, FF_NULL, .max = 64, .ref = ADMIN_SQL_RGROUP },
        { "created_at", "created_at", FT_TIME, FF_RO },
        {},
};

const struct entity admin_presets = {
        .path = "/admin/presets",
        .noun = "resource preset",
        .table = "resource_presets",
        .alias = "rp",
        .pk = "name",
        .key = "name",
        .label = "name",
        .order = "rp.name",
        .fields = preset_fields,
        .create_roles = ROLES_SUPER,
        .update_roles = ROLES_SUPER,
        .delete_roles = ROLES_SUPER,
        .created_at = true,
};
