/* admin.c - the admin REST routes (docs/design/admin-api.md): the route
 * table and the generic list, show, create, update and delete handlers,
 * which work on any entity table (admin-internal.h).  A handler finds its
 * entity by the path prefix of its route. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/admin/admin-internal.h"
#include "manager/admin/admin.h"
#include "manager/api/password_check.h"
#include "manager/core/manager.h"

static void admin_list(struct api_ctx *c);
static void admin_show(struct api_ctx *c);
static void admin_create(struct api_ctx *c);
static void admin_update(struct api_ctx *c);
static void admin_delete(struct api_ctx *c);

#define RD (ROUTE_READ | ROUTE_ADMIN)
/* CRUD("/admin/users", "email", "a user", "users", read flags, write flags) */
#define CRUD(path, key, one, many, read, write)                                                      \
        { "GET", path, admin_list, ROUTE_READ | (read), "List " many, "admin" },                     \
                { "POST", path, admin_create, (write), "Create " one, "admin" },                     \
                { "GET", path "/{" key "}", admin_show, ROUTE_READ | (read), "Show " one, "admin" }, \
                { "PATCH", path "/{" key "}", admin_update, (write), "Change " one, "admin" },       \
        {                                                                                            \
                "DELETE", path "/{" key "}", admin_delete, (write), "Delete " one, "admin"           \
        }

const struct route admin_routes[] = {
        CRUD("/admin/domains", "name", "a domain", "domains", RD, ROUTE_SUPERADMIN),
        { "GET", "/admin/projects/{project}/members", admin_members_list, RD, "List a project's members", "admin" },
        { "POST", "/admin/projects/{project}/members", admin_members_change, ROUTE_ADMIN,
          "Add and remove project members", "admin" },
        CRUD("/admin/projects", "project", "a project", "projects", RD, ROUTE_ADMIN),
        CRUD("/admin/users", "email", "a user", "users", RD, ROUTE_ADMIN),
        /* users manage their own keypairs: the role is checked inside */
        CRUD("/admin/keypairs", "access_key", "a keypair", "keypairs", ROUTE_READ, 0),
        CRUD("/admin/keypair-policies", "name", "a keypair resource policy", "keypair resource policies", RD,
             ROUTE_SUPERADMIN),
        { "POST", "/admin/resource-groups/{name}/access", admin_rgroup_access, ROUTE_SUPERADMIN,
          "Change who may use a resource group", "admin" },
        CRUD("/admin/resource-groups", "name", "a resource group", "resource groups", RD, ROUTE_SUPERADMIN),
        CRUD("/admin/presets", "name", "a resource preset", "resource presets", RD, ROUTE_SUPERADMIN),
        CRUD("/admin/images", "image", "an image", "images", RD, ROUTE_SUPERADMIN),
        { "GET", "/admin/image-aliases", admin_list, RD, "List image aliases", "admin" },
        { "POST", "/admin/image-aliases", admin_create, ROUTE_SUPERADMIN, "Create an image alias", "admin" },
        { "GET", "/admin/image-aliases/{alias}", admin_show, RD, "Show an image alias", "admin" },
        { "DELETE", "/admin/image-aliases/{alias}", admin_delete, ROUTE_SUPERADMIN, "Delete an image alias", "admin" },
        { "POST", "/admin/container-registries/{name}/rescan", admin_registry_rescan, ROUTE_SUPERADMIN,
          "Rescan a registry's catalog for images (a background task)", "admin" },
        CRUD("/admin/container-registries", "name", "a container registry", "container registries", ROUTE_SUPERADMIN,
             ROUTE_SUPERADMIN),
        { "GET", "/admin/agents", admin_list, RD, "List agents", "admin" },
        { "GET", "/admin/agents/{id}", admin_show, RD, "Show an agent", "admin" },
        { "PATCH", "/admin/agents/{id}", admin_update, ROUTE_SUPERADMIN, "Change an agent", "admin" },
        { "DELETE", "/admin/agents/{id}", admin_delete, ROUTE_SUPERADMIN, "Forget a lost agent", "admin" },
        { "GET", "/admin/audit-log", admin_list, RD | ROUTE_AUDIT, "The audit log, newest first", "admin" },
        {},
};

static const struct entity *const entities[] = {
        &admin_domains, &admin_projects, &admin_users,         &admin_keypairs,   &admin_policies, &admin_rgroups,
        &admin_presets, &admin_images,   &admin_image_aliases, &admin_registries, &admin_agents,   &admin_audit,
};

static const struct entity *entity_of(const struct api_ctx *c)
{
        const char *p = c->route->pattern;

        for (size_t i = 0; i < ARRAY_SIZE(entities); i++) {
                size_t n = strlen(entities[i]->path);
                if (strncmp(p, entities[i]->path, n) == 0 && (p[n] == '\0' || p[n] == '/'))
                        return entities[i];
        }
        abort(); /* a route of admin_routes[] without an entity */
}

int admin_list_of(struct api_ctx *c, const char *path, const json_t *filters, int64_t limit, int64_t offset,
                  json_t **ret_items, int64_t *ret_total, struct tess_error **err)
{
        const struct route *r = admin_routes, *asked = c->route;
        while (r->method && !(streq(r->method, "GET") && streq(r->pattern, path)))
                r++;
        if (!r->method)
                abort(); /* a path that is not a list route of the table */
        if (!api_role_may_use(c, r))
                return tess_err(err, EACCES, "your role (%s) may not list %s", role_to_string(c->who.role), path + 7);
        c->route = r; /* the list's own rules (entity_of, its filters) */
        int ret = admin_list_rows(c, entity_of(c), filters, limit, offset, ret_items, ret_total, err);
        c->route = asked;
        return ret;
}

/* ---- the generic handlers ---- */

static void forbidden(struct api_ctx *c, const struct entity *e, const char *what)
{
        api_problem(c, 403, "forbidden", "your role (%s) may not %s this %s", role_to_string(c->who.role), what,
                    e->noun);
}

static void admin_list(struct api_ctx *c)
{
        const struct entity *e = entity_of(c);
        struct tess_error *err = NULL;
        int64_t limit, offset, total;
        json_t *items;

        if (api_page(c, &limit, &offset, &err) < 0 ||
            admin_list_rows(c, e, NULL, limit, offset, &items, &total, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200,
                 json_pack("{s:o, s:I, s:I, s:I}", "items", items, "total", (json_int_t)total, "limit",
                           (json_int_t)limit, "offset", (json_int_t)offset));
}

/* Answer with the row `pk` (and `extra`, stolen, shown this once). */
static void answer_row(struct api_ctx *c, const struct entity *e, const char *pk, unsigned status, json_t *extra)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        json_t *o;

        if (admin_load(c, e, pk, &rows, &err) < 0 || admin_show_json(c, e, rows, 0, &o, &err) < 0) {
                json_decref(extra);
                return api_fail(c, err);
        }
        admin_audit_target(c, e, admin_row_get(e, rows, 0, e->label));
        if (extra)
                json_object_update(o, extra);
        json_decref(extra);
        api_json(c, status, o);
}

static void admin_show(struct api_ctx *c)
{
        const struct entity *e = entity_of(c);
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        json_t *o;

        if (admin_find(c, e, c->param[0], &rows, &err) < 0 || admin_show_json(c, e, rows, 0, &o, &err) < 0)
                return api_fail(c, err);
        api_json(c, 200, o);
}

/* The value of the field stored in the primary key column. */
static const char *pk_value(const struct entity *e, const struct admin_values *v)
{
        for (const struct field *f = e->fields; f->name; f++)
                if (f->column && streq(f->column, e->pk))
                        return admin_value_text(v, f->name);
        return NULL;
}

static int insert_row(struct api_ctx *c, const struct entity *e, const struct admin_values *v, char *ret_pk,
                      size_t pk_len, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf cols = BUF_INIT, marks = BUF_INIT, q = BUF_INIT;
        struct db_arg args[ADMIN_MAX_FIELDS + 3];
        char *owned[ADMIN_MAX_FIELDS] = { NULL };
        char id[UUID_STR_LEN];
        int64_t now = now_usec();
        int n = 0, r;

        if (e->gen_id) {
                uuid_generate_str(id);
                buf_puts(&cols, "id");
                args[n++] = DB_TEXT(id);
        }
        for (int i = 0; e->fields[i].name; i++) {
                const struct field *f = &e->fields[i];
                if (!f->column || (f->flags & (FF_VIRTUAL | FF_RO)) || !(v->given[i] || (f->flags & FF_DOMAIN)))
                        continue;
                buf_printf(&cols, "%s%s", n ? ", " : "", f->column);
                args[n++] = admin_value_arg(v, i, &owned[i]);
        }
        if (e->created_at) {
                buf_printf(&cols, "%screated_at", n ? ", " : "");
                args[n++] = DB_INT(now);
        }
        if (e->modified_at) {
                buf_printf(&cols, "%smodified_at", n ? ", " : "");
                args[n++] = DB_INT(now);
        }
        for (int i = 0; i < n; i++)
                buf_puts(&marks, i ? ", ?" : "?");
        buf_printf(&q, "INSERT INTO %s(%s) VALUES (%s)", e->table, cols.data, marks.data);
        r = db_query(c->m->db, q.data, args, n, NULL, err);
        for (int i = 0; i < ADMIN_MAX_FIELDS; i++)
                free(owned[i]);
        if (r == -EEXIST) {
                *err = tess_error_free(*err);
                const char *label = admin_value_text(v, e->label);
                if (e->conflict || !label)
                        return tess_err(err, EEXIST, "%s", e->conflict ? e->conflict : "it already exists");
                return tess_err(err, EEXIST, "%s '%s' already exists", e->noun, label);
        }
        if (r == -ENOENT) {
                *err = tess_error_free(*err);
                return tess_err(err, EINVAL, "the %s refers to something that does not exist", e->noun);
        }
        if (r < 0)
                return r;
        snprintf(ret_pk, pk_len, "%s", e->gen_id && streq(e->pk, "id") ? id : pk_value(e, v));
        return 0;
}

static int update_row(struct api_ctx *c, const struct entity *e, const char *pk, const struct admin_values *v,
                      struct tess_error **err)
{
        _cleanup_(buf_release) struct buf q = BUF_INIT;
        struct db_arg args[ADMIN_MAX_FIELDS + 2];
        char *owned[ADMIN_MAX_FIELDS] = { NULL };
        int n = 0, r;

        buf_printf(&q, "UPDATE %s SET ", e->table);
        for (int i = 0; e->fields[i].name; i++) {
                const struct field *f = &e->fields[i];
                if (!f->column || (f->flags & FF_VIRTUAL) || !v->given[i])
                        continue;
                buf_printf(&q, "%s%s = ?", n ? ", " : "", f->column);
                args[n++] = admin_value_arg(v, i, &owned[i]);
        }
        if (n == 0)
                return 0;
        if (e->modified_at) {
                buf_puts(&q, ", modified_at = ?");
                args[n++] = DB_INT(now_usec());
        }
        buf_printf(&q, " WHERE %s = ?", e->pk);
        args[n++] = DB_TEXT(pk);
        r = db_query(c->m->db, q.data, args, n, NULL, err);
        for (int i = 0; i < ADMIN_MAX_FIELDS; i++)
                free(owned[i]);
        if (r == -EEXIST) {
                *err = tess_error_free(*err);
                return tess_err(err, EEXIST, "another %s already has one of these values", e->noun);
        }
        if (r == -ENOENT) {
                *err = tess_error_free(*err);
                return tess_err(err, EINVAL, "the %s would refer to something that does not exist", e->noun);
        }
        return r < 0 ? r : 0;
}

/* Create (extra: fields shown once) or update row pk in a transaction,
 * with the entity's after_write hook. */
static int write_tx(struct api_ctx *c, const struct entity *e, const struct admin_values *v, bool creating, char *pk,
                    size_t pk_len, json_t *extra, struct tess_error **err)
{
        int r = db_begin(c->m->db, err);
        if (r < 0)
                return r;
        if (!creating)
                r = update_row(c, e, pk, v, err);
        else if (e->create)
                r = e->create(c, v, pk, pk_len, extra, err);
        else
                r = insert_row(c, e, v, pk, pk_len, err);
        if (r >= 0 && e->after_write)
                r = e->after_write(c, pk, v, err);
        if (r >= 0)
                return db_commit(c->m->db, err);
        db_rollback(c->m->db);
        if (r == -ENOENT) { /* something the body names does not exist: a 400 */
                (*err)->code = EINVAL;
                return -EINVAL;
        }
        return r;
}

/* The value of e's field with an encode() (a password), when v gives it. */
static const char *to_encode(const struct entity *e, const struct admin_values *v)
{
        for (int i = 0; e->fields[i].name; i++)
                if (e->fields[i].encode && v->given[i] && json_is_string(v->json[i]))
                        return json_string_value(v->json[i]);
        return NULL;
}

static void encoded(struct api_ctx *c, bool ok UNUSED, char *hash, void *data UNUSED)
{
        c->password_hash = hash;
        c->route->fn(c); /* again, with the hash */
}

/* A password to store is hashed (scrypt) on a worker thread, never on the
 * loop: the request is suspended and its handler runs again with the hash
 * (RET true: wait for it). */
static bool encode_off_loop(struct api_ctx *c, const struct entity *e, struct admin_values *v)
{
        const char *plain = to_encode(e, v);

        if (!plain)
                return false;
        if (c->password_hash) {
                v->encoded = c->password_hash;
                return false;
        }
        password_hash_off_loop(c, plain, encoded, NULL, NULL);
        return true;
}

static void admin_create(struct api_ctx *c)
{
        const struct entity *e = entity_of(c);
        struct tess_error *err = NULL;
        struct admin_values v;
        char pk[256];

        if (!(e->create_roles & ROLE_BIT(c->who.role)))
                return forbidden(c, e, "create");
        if (admin_parse(c, e, c->body, true, &v, &err) < 0 ||
            (e->check_write && e->check_write(c, NULL, 0, &v, &err) < 0))
                return api_fail(c, err);
        if (encode_off_loop(c, e, &v))
                return;
        if (admin_value_text(&v, e->label))
                admin_audit_target(c, e, admin_value_text(&v, e->label));
        json_t *extra = json_object();
        if (write_tx(c, e, &v, true, pk, sizeof(pk), extra, &err) < 0) {
                json_decref(extra);
                return api_fail(c, err);
        }
        answer_row(c, e, pk, 201, extra);
}

static void admin_update(struct api_ctx *c)
{
        const struct entity *e = entity_of(c);
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        struct admin_values v;
        char pk[256];

        if (admin_find(c, e, c->param[0], &rows, &err) < 0)
                return api_fail(c, err);
        admin_audit_target(c, e, admin_row_get(e, rows, 0, e->label));
        if (!(e->update_roles & ROLE_BIT(c->who.role)))
                return forbidden(c, e, "change");
        if (admin_parse(c, e, c->body, false, &v, &err) < 0)
                return api_fail(c, err);
        if (v.n == 0)
                return api_problem(c, 400, "invalid-api-params", "give at least one field to change");
        if (e->check_write && e->check_write(c, rows, 0, &v, &err) < 0)
                return api_fail(c, err);
        if (encode_off_loop(c, e, &v))
                return;
        snprintf(pk, sizeof(pk), "%s", admin_row_get(e, rows, 0, "_pk"));
        if (write_tx(c, e, &v, false, pk, sizeof(pk), NULL, &err) < 0)
                return api_fail(c, err);
        answer_row(c, e, pk, 200, NULL);
}

static int check_in_use(struct api_ctx *c, const struct entity *e, const char *pk, const char *key,
                        struct tess_error **err)
{
        for (const struct in_use *u = e->in_use; u && u->sql; u++) {
                int r = admin_exists(c, u->sql, pk, err);
                if (r < 0)
                        return r;
                if (r > 0)
                        return tess_err(err, EEXIST, "%s '%.128s' %s", e->noun, key, u->reason);
        }
        return 0;
}

static void admin_delete(struct api_ctx *c)
{
        const struct entity *e = entity_of(c);
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *q = NULL;
        struct tess_error *err = NULL;
        int r;

        if (admin_find(c, e, c->param[0], &rows, &err) < 0)
                return api_fail(c, err);
        const char *pk = admin_row_get(e, rows, 0, "_pk");
        admin_audit_target(c, e, admin_row_get(e, rows, 0, e->label));
        if (!(e->delete_roles & ROLE_BIT(c->who.role)))
                return forbidden(c, e, "delete");
        if ((e->check_write && e->check_write(c, rows, 0, NULL, &err) < 0) ||
            check_in_use(c, e, pk, c->param[0], &err) < 0) {
                if (err->code != EEXIST)
                        return api_fail(c, err);
                api_problem(c, 409, "conflict", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        q = xasprintf("DELETE FROM %s WHERE %s = ?", e->table, e->pk);
        r = DBQ(c->m->db, q, NULL, &err, DB_TEXT(pk));
        if (r == -ENOENT) {
                tess_error_free(err);
                return api_problem(c, 409, "conflict", "%s '%.128s' is still in use", e->noun, c->param[0]);
        }
        if (r < 0)
                return api_fail(c, err);
        api_json(c, 200, json_pack("{s:s}", "deleted", c->param[0]));
}
