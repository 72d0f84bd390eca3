/* api_scopes.c - where the caller may start sessions, for launchers:
 *
 *   GET /projects                     {"projects": [{id, name, description}]}:
 *                                     the projects of the caller's domain it
 *                                     belongs to (admins and monitors: all of
 *                                     them)
 *   GET /scaling-groups?group=NAME    {"scaling_groups": [{name, description}]}:
 *                                     the resource groups the caller's keypair
 *                                     may use in project NAME (default
 *                                     "default"): those of its domain, the
 *                                     project and the keypair (Backend.AI's
 *                                     route and shape)
 *
 * Only active projects and resource groups are listed; a project the
 * caller does not belong to is a 404, as one that does not exist. */
#include "common/compat.h"

#include "manager/accounts/model.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"

static bool sees_all_projects(const struct api_ctx *c)
{
        return c->who.role != ROLE_USER;
}

void api_projects_list(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        json_t *items = json_array();

        if (DBQ(c->m->db,
                "SELECT p.id, p.name, p.description FROM projects p WHERE p.domain_name = ? AND p.is_active = 1"
                " AND (? = 1 OR EXISTS (SELECT 1 FROM project_members pm WHERE pm.project_id = p.id"
                " AND pm.user_id = ?)) ORDER BY p.name",
                &rows, &err, DB_TEXT(c->who.domain), DB_BOOL(sees_all_projects(c)), DB_TEXT(c->who.user_id)) < 0) {
                json_decref(items);
                return api_fail(c, err);
        }
        for (int i = 0; i < rows->nrows; i++)
                json_array_append_new(items, json_pack("{s:s, s:s, s:s}", "id", db_get(rows, i, 0), "name",
                                                       db_get(rows, i, 1), "description", db_get(rows, i, 2)));
        api_json(c, 200, json_pack("{s:o}", "projects", items));
}

void api_scaling_groups(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *p = NULL, *rgs = NULL, *desc = NULL;
        struct tess_error *err = NULL;
        const char *group = http_query(c->req, "group");
        json_t *items;

        if (!group || !*group)
                group = "default";
        if (DBQ(c->m->db,
                "SELECT p.id FROM projects p WHERE p.domain_name = ? AND (p.name = ? OR p.id = ?) AND p.is_active = 1"
                " AND (? = 1 OR EXISTS (SELECT 1 FROM project_members pm WHERE pm.project_id = p.id"
                " AND pm.user_id = ?))",
                &p, &err, DB_TEXT(c->who.domain), DB_TEXT(group), DB_TEXT(group), DB_BOOL(sees_all_projects(c)),
                DB_TEXT(c->who.user_id)) < 0)
                return api_fail(c, err);
        if (p->nrows == 0)
                return api_problem(c, 404, "object-not-found", "project '%s' not found", group);
        if (model_rg_list(c->m, c->who.domain, db_get(p, 0, 0), c->who.access_key, &rgs, &err) < 0 ||
            DBQ(c->m->db, "SELECT name, description FROM resource_groups", &desc, &err) < 0)
                return api_fail(c, err);
        items = json_array();
        for (int i = 0; i < rgs->nrows; i++) {
                const char *d = "";
                for (int j = 0; j < desc->nrows; j++)
                        if (streq(db_get(desc, j, 0), db_get(rgs, i, 0)))
                                d = db_get(desc, j, 1);
                json_array_append_new(items,
                                      json_pack("{s:s, s:s}", "name", db_get(rgs, i, 0), "description", d ? d : ""));
        }
        api_json(c, 200, json_pack("{s:o}", "scaling_groups", items));
}
