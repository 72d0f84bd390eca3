/* admin_rows.c - finding the rows of an entity that the caller may see,
 * and small helpers the entity files share (see admin-internal.h). */
#include "common/compat.h"

#include "common/timeutil.h"
#include "manager/admin/admin-internal.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"

/* Restrict `where` to the rows the caller sees; false if it sees none. */
static bool add_scope(const struct api_ctx *c, const struct entity *e, struct buf *where, struct db_arg *args,
                      int *nargs)
{
        const char *sql = NULL, *value = NULL;

        if (c->who.role == ROLE_ADMIN || c->who.role == ROLE_MONITOR) {
                sql = e->domain_scope;
                value = c->who.domain;
        } else if (c->who.role == ROLE_USER) {
                if (!e->user_scope)
                        return false;
                sql = e->user_scope;
                value = c->who.user_id;
        } else if (c->who.role != ROLE_SUPERADMIN) {
                return false;
        }
        if (sql) {
                buf_puts(where, " AND (");
                admin_where(where, args, nargs, sql, DB_TEXT(value));
                buf_puts(where, ")");
        }
        return true;
}

int admin_find(struct api_ctx *c, const struct entity *e, const char *key, struct db_rows **ret,
               struct tess_error **err)
{
        _cleanup_(buf_release) struct buf q = BUF_INIT;
        struct db_arg args[ADMIN_MAX_ARGS];
        int nargs = 0, r;

        admin_select_sql(e, &q);
        buf_puts(&q, " WHERE (");
        if (e->key_filter) {
                r = e->key_filter(c, key, &q, args, &nargs, err);
                if (r < 0)
                        return r;
        } else {
                buf_printf(&q, "%s.%s = ?", e->alias, e->key);
                args[nargs++] = DB_TEXT(key);
        }
        buf_puts(&q, ")");
        if (!add_scope(c, e, &q, args, &nargs))
                return tess_err(err, ENOENT, "%s '%.128s' not found", e->noun, key);
        buf_puts(&q, " LIMIT 2");
        r = db_query(c->m->db, q.data, args, nargs, ret, err);
        if (r < 0)
                return r;
        if ((*ret)->nrows == 1)
                return 0;
        bool many = (*ret)->nrows > 1;
        *ret = db_rows_free(*ret);
        if (many)
                return tess_err(err, EINVAL, "%s '%.128s' is ambiguous; use its id", e->noun, key);
        return tess_err(err, ENOENT, "%s '%.128s' not found", e->noun, key);
}

int admin_load(struct api_ctx *c, const struct entity *e, const char *pk, struct db_rows **ret,
               struct tess_error **err)
{
        _cleanup_(buf_release) struct buf q = BUF_INIT;

        admin_select_sql(e, &q);
        buf_printf(&q, " WHERE %s.%s = ?", e->alias, e->pk);
        int r = DBQ(c->m->db, q.data, ret, err, DB_TEXT(pk));
        if (r < 0)
                return r;
        if ((*ret)->nrows == 0) {
                *ret = db_rows_free(*ret);
                return tess_err(err, ENOENT, "%s '%.128s' not found", e->noun, pk);
        }
        return 0;
}

int admin_show_json(struct api_ctx *c, const struct entity *e, const struct db_rows *rows, int row, json_t **ret,
                    struct tess_error **err)
{
        json_t *o = admin_row_json(e, rows, row);

        if (e->decorate) {
                int r = e->decorate(c, rows, row, o, err);
                if (r < 0) {
                        json_decref(o);
                        return r;
                }
        }
        *ret = o;
        return 0;
}

int admin_only_keys(const json_t *obj, const char *const *allowed, const char *where, struct tess_error **err)
{
        const char *key;
        json_t *v;

        json_object_foreach((json_t *)obj, key, v) {
                const char *const *a = allowed;
                while (*a && !streq(*a, key))
                        a++;
                if (!*a)
                        return tess_err(err, EINVAL, "unknown field '%s%.64s'", where, key);
        }
        return 0;
}

int admin_string_list(const json_t *v, const char *name, struct tess_error **err)
{
        size_t i;
        json_t *x;

        if (!json_is_array(v))
                return tess_err(err, EINVAL, "'%s' must be a list of strings", name);
        json_array_foreach(v, i, x) {
                if (!json_is_string(x))
                        return tess_err(err, EINVAL, "'%s[%zu]' must be a string", name, i);
        }
        return 0;
}

/* "resource-group:gpu" */
void admin_audit_target(struct api_ctx *c, const struct entity *e, const char *label)
{
        char kind[64];
        size_t i;

        for (i = 0; e->noun[i] && i + 1 < sizeof(kind); i++)
                kind[i] = e->noun[i] == ' ' ? '-' : e->noun[i];
        kind[i] = '\0';
        api_audit_target(c, "%s:%s", kind, label ? label : "");
}

int admin_find_for_change(struct api_ctx *c, const struct entity *e, struct db_rows **ret, struct tess_error **err)
{
        int r = admin_find(c, e, c->param[0], ret, err);
        if (r < 0)
                return r;
        admin_audit_target(c, e, admin_row_get(e, *ret, 0, e->label));
        if (!c->body)
                return tess_err(err, EINVAL, "a JSON body with 'add' or 'remove' is required");
        return admin_only_keys(c->body, NAMES("add", "remove"), "", err);
}

/* The list's filters: from `given` (param -> string) when not NULL,
 * else the query string. */
static int add_filters(struct api_ctx *c, const struct entity *e, const json_t *given, struct buf *where,
                       struct db_arg *args, int *nargs, struct tess_error **err)
{
        const char *key;
        json_t *v;

        json_object_foreach((json_t *)given, key, v) { /* a filter the code names exists */
                const struct filter *f = e->filters;
                while (f && f->param && !streq(f->param, key))
                        f++;
                if (!f || !f->param)
                        return tess_err(err, EINVAL, "%s cannot be filtered by '%s'", e->path, key);
        }
        for (const struct filter *f = e->filters; f && f->param; f++) {
                const char *v = given ? json_string_value(json_object_get(given, f->param)) : http_query(c->req, f->param);
                int64_t t;

                if (!v)
                        continue;
                switch (f->type) {
                case FT_TIME:
                        if (time_parse(v, &t, NULL) < 0)
                                return tess_err(err, EINVAL, "'%s' must be an ISO 8601 time", f->param);
                        admin_where(where, args, nargs, f->sql, DB_INT(t));
                        break;
                case FT_BOOL:
                        if (!streq(v, "true") && !streq(v, "false"))
                                return tess_err(err, EINVAL, "'%s' must be true or false", f->param);
                        admin_where(where, args, nargs, f->sql, DB_INT(streq(v, "true")));
                        break;
                default: admin_where(where, args, nargs, f->sql, DB_TEXT(v));
                }
        }
        return 0;
}

int admin_list_rows(struct api_ctx *c, const struct entity *e, const json_t *filters, int64_t limit, int64_t offset,
                    json_t **ret_items, int64_t *ret_total, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf where = BUF_INIT, q = BUF_INIT, cq = BUF_INIT;
        _cleanup_rows_ struct db_rows *rows = NULL, *count = NULL;
        struct db_arg args[ADMIN_MAX_ARGS + 2]; /* + LIMIT, OFFSET */
        int nargs = 0, r;

        buf_puts(&where, " WHERE 1 = 1");
        if (!add_scope(c, e, &where, args, &nargs))
                return tess_err(err, EACCES, "your role may not list these");
        r = add_filters(c, e, filters, &where, args, &nargs, err);
        if (r < 0)
                return r;
        buf_puts(&cq, "SELECT COUNT(*)");
        admin_from_sql(e, &cq);
        buf_puts(&cq, where.data);
        r = db_query(c->m->db, cq.data, args, nargs, &count, err);
        if (r < 0)
                return r;
        admin_select_sql(e, &q);
        buf_printf(&q, "%s ORDER BY %s LIMIT ? OFFSET ?", where.data, e->order);
        args[nargs++] = DB_INT(limit);
        args[nargs++] = DB_INT(offset);
        r = db_query(c->m->db, q.data, args, nargs, &rows, err);
        if (r < 0)
                return r;
        json_t *items = json_array();
        for (int i = 0; i < rows->nrows; i++) {
                json_t *o;
                r = admin_show_json(c, e, rows, i, &o, err);
                if (r < 0) {
                        json_decref(items);
                        return r;
                }
                json_array_append_new(items, o);
        }
        *ret_items = items;
        *ret_total = strtoll(db_get(count, 0, 0), NULL, 10);
        return 0;
}
