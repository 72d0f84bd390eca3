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
 * Mutations (gql_mutations.c) run the /admin REST routes for the caller,
 * one root field after another. */
#include "common/compat.h"

#include "common/gql.h"
#include "common/log.h"
#include "manager/api/api.h"
#include "manager/gql_mutations.h"
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

/* One request: its document and where its execution stands.  Queries
 * run at once; a mutation's root fields run one after another, as
 * GraphQL says, each perhaps waiting for a password to be hashed. */
struct gql_request {
        struct gql_exec x;
        struct gql_doc *doc;
        struct gql_fields fields;
        json_t *data, *path;
        size_t next; /* the mutation field to run */
        bool in_call, answered;
};

static void request_free(void *state)
{
        struct gql_request *q = state;
        gql_fields_release(&q->fields);
        json_decref(q->data);
        json_decref(q->path);
        json_decref(q->x.errors);
        json_decref(q->x.vars);
        gql_doc_free(q->doc);
        free(q);
}

static void answer(struct gql_request *q)
{
        struct api_ctx *c = q->x.c;
        json_t *body = json_pack("{s:O}", "data", q->data);
        if (json_array_size(q->x.errors))
                json_object_set(body, "errors", q->x.errors);
        api_json(c, 200, body);
        api_resume(c); /* when a mutation waited */
}

static void run_mutations(struct gql_request *q);

static void mutation_done(struct api_ctx *c UNUSED, json_t *payload, struct tess_error *err, void *data)
{
        struct gql_request *q = data;
        const struct gql_field *f = &q->fields.v[q->next];

        if (err) {
                add_error(&q->x, f, q->path, "%s", err->msg);
                tess_error_free(err);
                json_object_set_new(q->data, f->key, json_null());
        } else {
                json_object_set_new(q->data, f->key, project(&q->x, payload, f, q->path));
                json_decref(payload);
        }
        json_array_remove(q->path, json_array_size(q->path) - 1);
        q->next++;
        q->answered = true;
        if (!q->in_call) /* answered later: go on from here */
                run_mutations(q);
}

static void run_mutations(struct gql_request *q)
{
        while (q->next < q->fields.n) {
                const struct gql_field *f = &q->fields.v[q->next];
                if (streq(f->name, "__typename")) {
                        json_object_set_new(q->data, f->key, json_string("Mutations"));
                        q->next++;
                        continue;
                }
                json_array_append_new(q->path, json_string(f->key));
                q->in_call = true;
                q->answered = false;
                gql_mutate(q->x.c, f, mutation_done, q);
                q->in_call = false;
                if (!q->answered)
                        return; /* mutation_done goes on */
        }
        answer(q);
}

/* The root fields of a query, each resolved and projected into data. */
static void run_query(struct gql_request *q)
{
        struct gql_exec *x = &q->x;
        struct tess_error *err = NULL;

        for (size_t i = 0; i < q->fields.n; i++) {
                const struct gql_field *f = &q->fields.v[i];
                json_t *src = NULL;
                json_array_append_new(q->path, json_string(f->key));
                if (streq(f->name, "__typename")) {
                        json_object_set_new(q->data, f->key, json_string("Queries"));
                } else if (gql_resolve_root(x->c, f, &src, &err) < 0) {
                        add_error(x, f, q->path, "%s", err->msg);
                        err = tess_error_free(err);
                        json_object_set_new(q->data, f->key, json_null());
                } else {
                        json_object_set_new(q->data, f->key, project(x, src, f, q->path));
                        json_decref(src);
                }
                json_array_remove(q->path, json_array_size(q->path) - 1);
        }
        answer(q);
}

static void execute(struct gql_request *q, const struct gql_operation *op)
{
        struct tess_error *err = NULL;
        bool mutation = gql_operation_type(op) == GQL_MUTATION;

        q->data = json_object();
        q->path = json_array();
        if (gql_operation_type(op) == GQL_SUBSCRIPTION) {
                add_error(&q->x, NULL, NULL, "subscriptions are not served: use GET /events/session");
                json_decref(q->data);
                q->data = json_null();
                return answer(q);
        }
        if (gql_collect_fields(q->doc, gql_operation_selection(op), mutation ? "Mutations" : "Queries", NULL,
                               q->x.vars, &q->fields, &err) < 0) {
                add_error(&q->x, NULL, NULL, "%s", err->msg);
                tess_error_free(err);
                json_decref(q->data);
                q->data = json_null();
                return answer(q);
        }
        if (mutation)
                run_mutations(q);
        else
                run_query(q);
}

void api_admin_gql(struct api_ctx *c)
{
        const char *query = json_string_value(json_object_get(c->body, "query"));
        json_t *given = json_object_get(c->body, "variables"), *opname = json_object_get(c->body, "operationName");
        const struct gql_operation *op = NULL;
        struct tess_error *err = NULL;

        if (!query)
                return api_problem(c, 400, "invalid-api-params", "query: a GraphQL document (string) is required");
        if (given && !json_is_object(given) && !json_is_null(given))
                return api_problem(c, 400, "invalid-api-params", "variables: must be an object");
        if (opname && !json_is_string(opname) && !json_is_null(opname))
                return api_problem(c, 400, "invalid-api-params", "operationName: must be a string");
        struct gql_request *q = xcalloc(1, sizeof(*q));
        q->x = (struct gql_exec){ .c = c, .errors = json_array(), .budget = GQL_FIELDS_BUDGET };
        q->fields = (struct gql_fields)GQL_FIELDS_INIT;
        c->state = q;
        c->state_free = request_free;
        if (gql_parse(query, strlen(query), &q->doc, &err) < 0 ||
            gql_doc_operation(q->doc, json_string_value(opname), &op, &err) < 0 ||
            gql_coerce_variables(op, json_is_object(given) ? given : NULL, &q->x.vars, &err) < 0) {
                /* a document that cannot run: no data, as GraphQL servers answer it */
                add_error(&q->x, NULL, NULL, "%s", err->msg);
                tess_error_free(err);
                return api_json(c, 400, json_pack("{s:n, s:O}", "data", "errors", q->x.errors));
        }
        q->x.doc = q->doc;
        execute(q, op);
}
