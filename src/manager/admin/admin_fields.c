/* admin_fields.c - the field tables at work: parsing and validating request
 * bodies, turning rows into JSON, and the SQL both build (see
 * admin-internal.h). */
#include "common/compat.h"

#include <assert.h>

#include "common/slots.h"
#include "common/timeutil.h"
#include "manager/admin/admin-internal.h"
#include "manager/core/manager.h"

#define LIST_MAX_ITEMS 256

static bool readable(const struct field *f)
{
        return !(f->flags & (FF_WO | FF_VIRTUAL)) && (f->column || f->expr);
}

static int field_index(const struct entity *e, const char *name)
{
        for (int i = 0; e->fields[i].name; i++)
                if (streq(e->fields[i].name, name))
                        return i;
        return -1;
}

static size_t text_max(const struct field *f)
{
        return f->max ? (size_t)f->max : 256;
}

static int check_choice(const struct field *f, const char *s, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf list = BUF_INIT;

        for (const char *const *ch = f->choices; *ch; ch++) {
                if (streq(*ch, s))
                        return 0;
                buf_printf(&list, "%s%s", list.len ? ", " : "", *ch);
        }
        return tess_err(err, EINVAL, "'%s' must be one of %s", f->name, list.data);
}

static int check_length(const struct field *f, const char *what, size_t len, struct tess_error **err)
{
        if (len >= (size_t)f->min && len <= text_max(f))
                return 0;
        if (f->min > 0 && (size_t)f->min == text_max(f))
                return tess_err(err, EINVAL, "'%s'%s must be exactly %zu characters", f->name, what, text_max(f));
        if (f->min > 0)
                return tess_err(err, EINVAL, "'%s'%s must be %lld to %zu characters", f->name, what,
                                (long long)f->min, text_max(f));
        return tess_err(err, EINVAL, "'%s'%s must be at most %zu characters", f->name, what, text_max(f));
}

static int check_text(const struct field *f, const json_t *v, struct tess_error **err)
{
        const char *s;
        int r;

        if (!json_is_string(v))
                return tess_err(err, EINVAL, "'%s' must be a string", f->name);
        s = json_string_value(v);
        if (strlen(s) != json_string_length(v))
                return tess_err(err, EINVAL, "'%s' contains a NUL character", f->name);
        r = check_length(f, "", json_string_length(v), err);
        if (r < 0)
                return r;
        if (f->choices)
                return check_choice(f, s, err);
        if (f->valid && !f->valid(s))
                return tess_err(err, EINVAL, "'%s' %s", f->name, f->hint ? f->hint : "is not valid");
        return 0;
}

static int check_int(const struct field *f, const json_t *v, struct tess_error **err)
{
        if (!json_is_integer(v))
                return tess_err(err, EINVAL, "'%s' must be an integer", f->name);
        json_int_t x = json_integer_value(v);
        if (x >= f->min && x <= f->max)
                return 0;
        if (f->max == INT64_MAX)
                return tess_err(err, EINVAL, "'%s' must be at least %lld", f->name, (long long)f->min);
        return tess_err(err, EINVAL, "'%s' must be between %lld and %lld", f->name, (long long)f->min,
                        (long long)f->max);
}

static int check_slots(const struct field *f, const json_t *v, struct tess_error **err)
{
        struct slots s;
        int r = slots_from_json(&s, v, true, err);
        if (r < 0)
                return tess_err_wrap(err, "'%s'", f->name);
        for (int i = 0; (f->flags & FF_FINITE) && i < s.n; i++)
                if (s.s[i].value == SLOT_INFINITY)
                        return tess_err(err, EINVAL, "'%s': slot '%s' cannot be unlimited", f->name, s.s[i].name);
        return 0;
}

static int check_list(const struct field *f, const json_t *v, struct tess_error **err)
{
        size_t i;
        json_t *x;

        if (!json_is_array(v) || json_array_size(v) > LIST_MAX_ITEMS)
                return tess_err(err, EINVAL, "'%s' must be a list of at most %d strings", f->name, LIST_MAX_ITEMS);
        json_array_foreach(v, i, x) {
                if (!json_is_string(x) || strlen(json_string_value(x)) != json_string_length(x))
                        return tess_err(err, EINVAL, "'%s[%zu]' must be a string", f->name, i);
                int r = check_length(f, " items", json_string_length(x), err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int check_size(const struct field *f, const json_t *v, struct tess_error **err)
{
        int64_t n;
        if (slot_parse_value("mem", v, &n, NULL) < 0 || n == SLOT_INFINITY)
                return tess_err(err, EINVAL, "'%s' must be a size like \"64m\" or a number of bytes", f->name);
        if (n != 0 && n < f->min)
                return tess_err(err, EINVAL, "'%s' must be 0 (none) or at least %lld bytes", f->name,
                                (long long)f->min);
        return 0;
}

static int check_type(const struct field *f, const json_t *v, struct tess_error **err)
{
        switch (f->type) {
        case FT_TEXT: return check_text(f, v, err);
        case FT_INT: return check_int(f, v, err);
        case FT_BOOL:
                return json_is_boolean(v) ? 0 : tess_err(err, EINVAL, "'%s' must be true or false", f->name);
        case FT_SLOTS: return check_slots(f, v, err);
        case FT_OBJECT:
                return json_is_object(v) ? 0 : tess_err(err, EINVAL, "'%s' must be an object", f->name);
        case FT_LIST: return check_list(f, v, err);
        case FT_SIZE: return check_size(f, v, err);
        case FT_TIME: break;
        }
        return tess_err(err, EINVAL, "'%s' is read-only", f->name);
}

/* A value naming something (a domain, a policy) must exist and be visible. */
static int check_ref(struct api_ctx *c, const struct field *f, const char *s, struct tess_error **err)
{
        if ((f->flags & FF_DOMAIN) && !api_sees_domain(c, s))
                return tess_err(err, EINVAL, "%s '%s' does not exist", f->name, s);
        if (!f->ref)
                return 0;
        int r = admin_exists(c, f->ref, s, err);
        if (r < 0)
                return r;
        return r ? 0 : tess_err(err, EINVAL, "%s '%s' does not exist", f->name, s);
}

static int parse_one(struct api_ctx *c, const struct field *f, const json_t *v, bool creating,
                     struct tess_error **err)
{
        int r;

        if (f->flags & FF_RO)
                return tess_err(err, EINVAL, "'%s' is read-only", f->name);
        if (!creating && (f->flags & FF_CREATE))
                return tess_err(err, EINVAL, "'%s' can only be set on create", f->name);
        if (json_is_null(v))
                return (f->flags & FF_NULL) ? 0 : tess_err(err, EINVAL, "'%s' may not be null", f->name);
        r = check_type(f, v, err);
        if (r >= 0 && f->check)
                r = f->check(v, err);
        if (r >= 0 && json_is_string(v))
                r = check_ref(c, f, json_string_value(v), err);
        return r;
}

int admin_parse(struct api_ctx *c, const struct entity *e, const json_t *body, bool creating,
                struct admin_values *ret, struct tess_error **err)
{
        const char *key;
        json_t *v;
        int r;

        memset(ret, 0, sizeof(*ret));
        ret->e = e;
        if (body) {
                json_object_foreach((json_t *)body, key, v) {
                        int i = field_index(e, key);
                        if (i < 0)
                                return tess_err(err, EINVAL, "unknown field '%.64s'", key);
                        r = parse_one(c, &e->fields[i], v, creating, err);
                        if (r < 0)
                                return r;
                        ret->given[i] = true;
                        ret->json[i] = json_is_null(v) ? NULL : v;
                        ret->n++;
                        if (e->fields[i].flags & FF_DOMAIN)
                                ret->domain = json_string_value(v);
                }
        }
        for (int i = 0; creating && e->fields[i].name; i++) {
                const struct field *f = &e->fields[i];
                if ((f->flags & FF_REQUIRED) && !ret->given[i])
                        return tess_err(err, EINVAL, "'%s' is required", f->name);
                if ((f->flags & FF_DOMAIN) && !ret->domain)
                        ret->domain = c->who.domain;
        }
        return 0;
}

const json_t *admin_value(const struct admin_values *v, const char *name)
{
        int i = field_index(v->e, name);
        return i >= 0 ? v->json[i] : NULL;
}

const char *admin_value_text(const struct admin_values *v, const char *name)
{
        int i = field_index(v->e, name);
        if (i >= 0 && (v->e->fields[i].flags & FF_DOMAIN))
                return v->domain;
        return i >= 0 ? json_string_value(v->json[i]) : NULL;
}

bool admin_value_given(const struct admin_values *v, const char *name)
{
        int i = field_index(v->e, name);
        return i >= 0 && v->given[i];
}

struct db_arg admin_value_arg(const struct admin_values *v, int i, char **ret_owned)
{
        const struct field *f = &v->e->fields[i];
        const json_t *j = v->json[i];
        struct slots s;
        int64_t n = 0;

        *ret_owned = NULL;
        if (f->flags & FF_DOMAIN)
                return DB_TEXT(v->domain);
        if (!j)
                return DB_NULLARG;
        switch (f->type) {
        case FT_TEXT:
                if (!f->encode)
                        return DB_TEXT(json_string_value(j));
                if (v->encoded)
                        return DB_TEXT(v->encoded);
                *ret_owned = f->encode(json_string_value(j));
                return DB_TEXT(*ret_owned);
        case FT_INT: return DB_INT(json_integer_value(j));
        case FT_BOOL: return DB_BOOL(json_is_true(j));
        case FT_SLOTS:
                slots_from_json(&s, j, true, NULL);
                *ret_owned = slots_to_text(&s);
                return DB_TEXT(*ret_owned);
        case FT_OBJECT:
        case FT_LIST:
                *ret_owned = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
                if (!*ret_owned)
                        abort();
                return DB_TEXT(*ret_owned);
        case FT_SIZE:
                slot_parse_value("mem", j, &n, NULL);
                return DB_INT(n);
        case FT_TIME: break;
        }
        return DB_NULLARG;
}

void admin_select_sql(const struct entity *e, struct buf *b)
{
        buf_printf(b, "SELECT %s.%s", e->alias, e->pk);
        for (const struct field *f = e->fields; f->name; f++) {
                if (!readable(f))
                        continue;
                if (f->expr)
                        buf_printf(b, ", %s", f->expr);
                else
                        buf_printf(b, ", %s.%s", e->alias, f->column);
        }
        admin_from_sql(e, b);
}

void admin_from_sql(const struct entity *e, struct buf *b)
{
        if (e->from)
                buf_printf(b, " FROM %s", e->from);
        else
                buf_printf(b, " FROM %s %s", e->table, e->alias);
}

const char *admin_row_get(const struct entity *e, const struct db_rows *rows, int row, const char *name)
{
        int col = 1;

        if (streq(name, "_pk"))
                return db_get(rows, row, 0);
        for (const struct field *f = e->fields; f->name; f++) {
                if (!readable(f))
                        continue;
                if (streq(f->name, name))
                        return db_get(rows, row, col);
                col++;
        }
        return NULL;
}

static json_t *cell_json(const struct field *f, const char *s)
{
        struct slots slots;
        char when[48];
        json_t *j;

        if (!s)
                return json_null();
        switch (f->type) {
        case FT_TEXT:
        case FT_SIZE: return json_string(s);
        case FT_INT: return json_integer(strtoll(s, NULL, 10));
        case FT_BOOL: return json_boolean(strcmp(s, "0") != 0 && strcmp(s, "f") != 0);
        case FT_SLOTS:
                if (slots_from_text(&slots, s, NULL) < 0)
                        return json_object();
                return slots_to_json(&slots);
        case FT_OBJECT:
        case FT_LIST:
                j = json_loads(s, 0, NULL);
                return j ? j : (f->type == FT_LIST ? json_array() : json_object());
        case FT_TIME: return json_string(time_format_iso(strtoll(s, NULL, 10), when, sizeof(when)));
        }
        return json_null();
}

json_t *admin_row_json(const struct entity *e, const struct db_rows *rows, int row)
{
        json_t *o = json_object();
        int col = 1;

        for (const struct field *f = e->fields; f->name; f++)
                if (readable(f))
                        json_object_set_new(o, f->name, cell_json(f, db_get(rows, row, col++)));
        return o;
}

void admin_where(struct buf *where, struct db_arg *args, int *nargs, const char *sql, struct db_arg value)
{
        buf_puts(where, sql);
        for (const char *p = sql; *p; p++) {
                if (*p != '?')
                        continue;
                if (*nargs >= ADMIN_MAX_ARGS)
                        abort();
                args[(*nargs)++] = value;
        }
}


int admin_exists(struct api_ctx *c, const char *sql, const char *value, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf q = BUF_INIT;
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct db_arg args[ADMIN_MAX_ARGS];
        int nargs = 0;

        admin_where(&q, args, &nargs, sql, DB_TEXT(value));
        int r = db_query(c->m->db, q.data, args, nargs, &rows, err);
        if (r < 0)
                return r;
        return rows->nrows > 0;
}

struct db_arg admin_value_arg_of(const struct admin_values *v, const char *name, char **ret_owned)
{
        int i = field_index(v->e, name);
        assert(i >= 0);
        return admin_value_arg(v, i, ret_owned);
}
