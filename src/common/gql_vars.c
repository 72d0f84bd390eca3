/* gql_vars.c - values meet JSON: a document's values (arguments, variables'
 * defaults) as JSON with variables substituted, and the variables a request
 * gives coerced to an operation's definitions (spec §6.1.2). */
#include "common/compat.h"

#include <jansson.h>

#include "common/gql-internal.h"

/* Values as JSON --------------------------------------------------------------- */

/* jansson returns NULL only when out of memory here: abort, as xmalloc. */
static json_t *jnew(json_t *j)
{
        if (!j) {
                fputs("fatal: out of memory\n", stderr);
                abort();
        }
        return j;
}

/* The JSON of a value, NULL for a variable absent from vars. */
static json_t *value_json(const struct value *v, const json_t *vars)
{
        json_t *j;

        switch (v->kind) {
        case VAL_VARIABLE:
                j = vars ? json_object_get(vars, v->text) : NULL;
                return j ? json_incref(j) : NULL;
        case VAL_INT:
                return jnew(json_integer(v->i));
        case VAL_FLOAT:
                return jnew(json_real(v->f));
        case VAL_STRING:
                return jnew(json_stringn(v->text, v->len));
        case VAL_BOOLEAN:
                return json_boolean(v->b);
        case VAL_NULL:
                return json_null();
        case VAL_ENUM:
                return jnew(json_string(v->text));
        case VAL_LIST:
                j = jnew(json_array());
                for (size_t i = 0; i < v->n; i++) {
                        json_t *item = value_json(v->items[i], vars);
                        json_array_append_new(j, item ? item : json_null());
                }
                return j;
        case VAL_OBJECT:
                j = jnew(json_object());
                for (size_t i = 0; i < v->n; i++) {
                        json_t *item = value_json(v->fields[i]->value, vars);
                        if (item)
                                json_object_set_new(j, v->fields[i]->name, item);
                }
                return j;
        }
        return json_null();
}

json_t *gql_args_json(struct arg *const *args, size_t n, const json_t *vars)
{
        json_t *o = jnew(json_object());

        for (size_t i = 0; i < n; i++) {
                json_t *v = value_json(args[i]->value, vars);
                if (v)
                        json_object_set_new(o, args[i]->name, v);
        }
        return o;
}

/* Variables (spec §6.1.2) ----------------------------------------------------- */

static const char *json_desc(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "a list";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
        case JSON_REAL:
                return "a number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a Boolean";
        case JSON_NULL:
                break;
        }
        return "null";
}

static int coerce_scalar(const char *type, const json_t *v, json_t **ret, struct tess_error **err)
{
        if (streq(type, "Int")) {
                if (json_is_real(v)) { /* 2.0 is 2, as JSON does not tell them apart */
                        double d = json_real_value(v);
                        if (!(d >= INT32_MIN && d <= INT32_MAX && d == (double)(int32_t)d))
                                return tess_err(err, EINVAL, "expected an Int, found %g", d);
                        *ret = jnew(json_integer((json_int_t)d));
                        return 0;
                }
                if (!json_is_integer(v))
                        return tess_err(err, EINVAL, "expected an Int, found %s", json_desc(v));
                if (json_integer_value(v) < INT32_MIN || json_integer_value(v) > INT32_MAX)
                        return tess_err(err, EINVAL, "expected an Int, found %" JSON_INTEGER_FORMAT " (Int is 32 bits)",
                                        json_integer_value(v));
        } else if (streq(type, "Float")) {
                if (!json_is_number(v))
                        return tess_err(err, EINVAL, "expected a Float, found %s", json_desc(v));
                *ret = jnew(json_real(json_number_value(v)));
                return 0;
        } else if (streq(type, "String")) {
                if (!json_is_string(v))
                        return tess_err(err, EINVAL, "expected a String, found %s", json_desc(v));
        } else if (streq(type, "Boolean")) {
                if (!json_is_boolean(v))
                        return tess_err(err, EINVAL, "expected a Boolean, found %s", json_desc(v));
        } else if (streq(type, "ID")) {
                if (json_is_integer(v)) {
                        *ret = jnew(json_sprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v)));
                        return 0;
                }
                if (!json_is_string(v))
                        return tess_err(err, EINVAL, "expected an ID (a string or an integer), found %s", json_desc(v));
        }
        *ret = json_incref((json_t *)v);
        return 0;
}

static int coerce_value(const struct type *t, const json_t *v, json_t **ret, struct tess_error **err)
{
        json_t *list, *item;
        int r;

        if (t->kind == TYPE_NON_NULL) {
                if (json_is_null(v))
                        return tess_err(err, EINVAL, "expected a value, found null");
                return coerce_value(t->of, v, ret, err);
        }
        if (json_is_null(v)) {
                *ret = json_null();
                return 0;
        }
        if (t->kind == TYPE_NAMED)
                return coerce_scalar(t->name, v, ret, err);
        list = jnew(json_array());
        if (!json_is_array(v)) { /* a single value is a list of one */
                if ((r = coerce_value(t->of, v, &item, err)) < 0) {
                        json_decref(list);
                        return r;
                }
                json_array_append_new(list, item);
                *ret = list;
                return 0;
        }
        for (size_t i = 0; i < json_array_size(v); i++) {
                if ((r = coerce_value(t->of, json_array_get(v, i), &item, err)) < 0) {
                        json_decref(list);
                        return tess_err_wrap(err, "element %zu", i);
                }
                json_array_append_new(list, item);
        }
        *ret = list;
        return 0;
}

int gql_coerce_variables(const struct gql_operation *op, const json_t *given, json_t **ret_vars,
                         struct tess_error **err)
{
        json_t *out;

        if (given && !json_is_object(given))
                return tess_err(err, EINVAL, "variables must be a JSON object, found %s", json_desc(given));
        out = jnew(json_object());
        for (size_t i = 0; i < op->n_vars; i++) {
                const struct vardef *d = op->vars[i];
                const json_t *v = given ? json_object_get(given, d->name) : NULL;
                json_t *def = NULL, *c = NULL;
                bool from_default = !v;
                struct buf type = BUF_INIT;
                int r;

                if (!v && !d->def && d->type->kind != TYPE_NON_NULL)
                        continue;
                gql_type_print(&type, d->type);
                if (!v && !d->def) {
                        r = gql_err_at(err, d->line, d->column,
                                       "variable \"$%s\" of required type \"%s\" was not provided", d->name, type.data);
                } else {
                        if (!v)
                                v = def = value_json(d->def, NULL);
                        r = coerce_value(d->type, v, &c, err);
                        json_decref(def);
                        if (r < 0)
                                r = tess_err_wrap(err, "%u:%u: variable \"$%s\" of type \"%s\"%s", d->line, d->column,
                                                  d->name, type.data,
                                                  from_default ? " has a default value that does not fit" : "");
                }
                buf_release(&type);
                if (r < 0) {
                        json_decref(out);
                        return r;
                }
                json_object_set_new(out, d->name, c);
        }
        *ret_vars = out;
        return 0;
}
