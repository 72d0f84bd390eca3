/* api_gql.c - POST /admin/gql: Backend.AI's GraphQL endpoint, which its
 * SDK and CLI use for listings (`ps`, `session list`, `vfolder list`,
 * `admin image list`) and their admin commands (`admin agent`,
 * `admin keypair-resource-policy`, `admin storage` list and info ...).
 *
 * A request is {query, variables, operationName}; the answer is {"data":
 * {...}} with exactly the fields asked, plus {"errors": [{message,
 * locations, path}]} when some failed (the SDK raises on any).  The
 * document is parsed and its fields collected by src/common/gql.h; each
 * root field is resolved by gql_roots.c into a plain JSON value holding
 * every field its type has (objects name their type in "__typename"), and
 * the selection is then taken out of it here: a field the type does not
 * have is an error naming it, as a GraphQL server's validation says.
 * Authorization is the REST routes' own: the resolvers use the same
 * queries and rules as GET /sessions, /folders, /images, /admin/....
 *
 * Queries only for now: a mutation is answered with an error naming the
 * REST admin route to use instead. */
#include "common/compat.h"

#include "common/gql.h"
#include "common/log.h"
#include "manager/api/api.h"
#include "manager/gql_roots.h"
#include "manager/main.h"

#define GQL_FIELDS_BUDGET 200000 /* fields of one answer: fragments can multiply widths */

struct gql_exec {
        struct api_ctx *c;
        const struct gql_doc *doc;
        json_t *vars;
        json_t *errors;
        long budget;
};

static void add_error(struct gql_exec *x, const struct gql_field *f, json_t *path, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void add_error(struct gql_exec *x, const struct gql_field *f, json_t *path, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        json_t *e = json_pack("{s:s}", "message", msg);
        if (f)
                json_object_set_new(e, "locations", json_pack("[{s:i, s:i}]", "line", f->line, "column", f->column));
        if (path)
                json_object_set_new(e, "path", json_deep_copy(path));
        json_array_append_new(x->errors, e);
}

static json_t *project(struct gql_exec *x, const json_t *src, const struct gql_field *f, json_t *path);

/* An object's selected fields, in the order asked. */
static json_t *project_object(struct gql_exec *x, const json_t *src, const struct gql_field *f, json_t *path)
{
        const char *type = json_string_value(json_object_get(src, "__typename"));
        struct gql_fields fields = GQL_FIELDS_INIT;
        struct tess_error *err = NULL;

        if (gql_collect_fields(x->doc, f->selection, type ? type : "", NULL, x->vars, &fields, &err) < 0) {
                add_error(x, f, path, "%s", err->msg);
                tess_error_free(err);
                return json_null();
        }
        json_t *out = json_object();
        for (size_t i = 0; i < fields.n; i++) {
                const struct gql_field *sub = &fields.v[i];
                json_t *value = json_object_get(src, sub->name);
                json_array_append_new(path, json_string(sub->key));
                if (--x->budget < 0) {
                        if (x->budget == -1)
                                add_error(x, sub, path, "the answer would hold more than %d fields: ask for fewer",
                                          GQL_FIELDS_BUDGET);
                        json_object_set_new(out, sub->key, json_null());
                } else if (streq(sub->name, "__typename")) {
                        json_object_set_new(out, sub->key, json_string(type ? type : ""));
                } else if (!value) {
                        add_error(x, sub, path, "Cannot query field \"%s\" on type \"%s\".", sub->name,
                                  type ? type : "?");
                        json_object_set_new(out, sub->key, json_null());
                } else {
                        json_object_set_new(out, sub->key, project(x, value, sub, path));
                }
                json_array_remove(path, json_array_size(path) - 1);
        }
        gql_fields_release(&fields);
        return out;
}

static json_t *project(struct gql_exec *x, const json_t *src, const struct gql_field *f, json_t *path)
{
        bool is_object = json_is_object(src) && json_object_get(src, "__typename");
        size_t i;
        json_t *v;

        if (!src || json_is_null(src))
                return json_null();
        if (json_is_array(src)) {
                json_t *out = json_array();
                json_array_foreach(src, i, v) {
                        json_array_append_new(path, json_integer((json_int_t)i));
                        json_array_append_new(out, project(x, v, f, path));
                        json_array_remove(path, json_array_size(path) - 1);
                }
                return out;
        }
        if (f->selection && is_object)
                return project_object(x, src, f, path);
        if (f->selection)
                add_error(x, f, path, "Field \"%s\" must not have a selection since its type is a scalar.", f->name);
        else if (is_object)
                add_error(x, f, path, "Field \"%s\" of type \"%s\" must have a selection of subfields.", f->name,
                          json_string_value(json_object_get(src, "__typename")));
        else
                return json_deep_copy(src);
        return json_null();
}

/* The root fields of op, each resolved and projected into data. */
static json_t *execute(struct gql_exec *x, const struct gql_operation *op)
{
        struct gql_fields fields = GQL_FIELDS_INIT;
        struct tess_error *err = NULL;
        bool mutation = gql_operation_type(op) == GQL_MUTATION;

        if (gql_operation_type(op) == GQL_SUBSCRIPTION) {
                add_error(x, NULL, NULL, "subscriptions are not served: use GET /events/session");
                return json_null();
        }
        if (gql_collect_fields(x->doc, gql_operation_selection(op), mutation ? "Mutations" : "Queries", NULL, x->vars,
                               &fields, &err) < 0) {
                add_error(x, NULL, NULL, "%s", err->msg);
                tess_error_free(err);
                return json_null();
        }
        json_t *data = json_object(), *path = json_array();
        for (size_t i = 0; i < fields.n; i++) {
                const struct gql_field *f = &fields.v[i];
                json_t *src = NULL;
                json_array_append_new(path, json_string(f->key));
                if (streq(f->name, "__typename")) {
                        json_object_set_new(data, f->key, json_string(mutation ? "Mutations" : "Queries"));
                } else if (mutation) {
                        add_error(x, f, path,
                                  "mutation \"%s\": mutations are not served over GraphQL yet; use the REST admin "
                                  "routes (/admin/*, see /openapi.json)",
                                  f->name);
                        json_object_set_new(data, f->key, json_null());
                } else if (gql_resolve_root(x->c, f, &src, &err) < 0) {
                        add_error(x, f, path, "%s", err->msg);
                        err = tess_error_free(err);
                        json_object_set_new(data, f->key, json_null());
                } else {
                        json_object_set_new(data, f->key, project(x, src, f, path));
                        json_decref(src);
                }
                json_array_remove(path, json_array_size(path) - 1);
        }
        json_decref(path);
        gql_fields_release(&fields);
        return data;
}

void api_admin_gql(struct api_ctx *c)
{
        const char *query = json_string_value(json_object_get(c->body, "query"));
        json_t *given = json_object_get(c->body, "variables"), *opname = json_object_get(c->body, "operationName");
        struct gql_exec x = { .c = c, .errors = json_array(), .budget = GQL_FIELDS_BUDGET };
        struct gql_doc *doc = NULL;
        const struct gql_operation *op = NULL;
        struct tess_error *err = NULL;

        if (!query) {
                json_decref(x.errors);
                return api_problem(c, 400, "invalid-api-params", "query: a GraphQL document (string) is required");
        }
        if (given && !json_is_object(given) && !json_is_null(given)) {
                json_decref(x.errors);
                return api_problem(c, 400, "invalid-api-params", "variables: must be an object");
        }
        if (opname && !json_is_string(opname) && !json_is_null(opname)) {
                json_decref(x.errors);
                return api_problem(c, 400, "invalid-api-params", "operationName: must be a string");
        }
        if (gql_parse(query, strlen(query), &doc, &err) < 0 ||
            gql_doc_operation(doc, json_string_value(opname), &op, &err) < 0 ||
            gql_coerce_variables(op, json_is_object(given) ? given : NULL, &x.vars, &err) < 0) {
                /* a document that cannot run: no data, as GraphQL servers answer it */
                add_error(&x, NULL, NULL, "%s", err->msg);
                tess_error_free(err);
                gql_doc_free(doc);
                return api_json(c, 400, json_pack("{s:n, s:o}", "data", "errors", x.errors));
        }
        x.doc = doc;
        json_t *data = execute(&x, op);
        json_t *answer = json_pack("{s:o}", "data", data);
        if (json_array_size(x.errors))
                json_object_set(answer, "errors", x.errors);
        json_decref(x.errors);
        json_decref(x.vars);
        gql_doc_free(doc);
        api_json(c, 200, answer);
}
