/* fuzz_gql.c - a GraphQL document (common/gql.h): what fails has an EINVAL
 * message in valid UTF-8; what parses prints, parses back and prints the
 * same, finds each named operation by its name, and collects the fields of
 * every operation (variables none, and a fixed set coerced) down to a
 * bounded depth: response keys and field names are names, keys unique per
 * level, arguments objects that serialise. */
#include "common/compat.h"

#include "common/buf.h"
#include "common/gql.h"
#include "common/utf8.h"
#include "fuzz.h"

#define DEPTH  8   /* levels collected */
#define BUDGET 256 /* collections per input */

static const char *const also_types[] = { "Node", "T", NULL };

static bool valid_utf8(const char *s)
{
        size_t n = strlen(s);

        for (size_t i = 0, k; i < n; i += k)
                if ((k = utf8_seq_len((const unsigned char *)s + i, n - i)) == 0)
                        return false;
        return true;
}

static bool is_name(const char *s)
{
        if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
                return false;
        for (s++; *s; s++)
                if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
                        return false;
        return true;
}

static void check_error(struct tess_error *err)
{
        FUZZ_ASSERT(err && err->code == EINVAL && err->msg && *err->msg && valid_utf8(err->msg));
        tess_error_free(err);
}

static void collect(const struct gql_doc *doc, const struct gql_selection_set *set, const char *type,
                    const json_t *vars, int depth, int *budget)
{
        struct gql_fields f = GQL_FIELDS_INIT;
        struct tess_error *err = NULL;

        if (depth == 0 || (*budget)-- <= 0)
                return;
        if (gql_collect_fields(doc, set, type, also_types, vars, &f, &err) < 0) {
                FUZZ_ASSERT(f.v == NULL && f.n == 0);
                check_error(err);
                return;
        }
        FUZZ_ASSERT(err == NULL && (f.n > 0 || f.v != NULL));
        for (size_t i = 0; i < f.n; i++) {
                const struct gql_field *x = &f.v[i];
                char *args = json_dumps(x->args, JSON_COMPACT);
                FUZZ_ASSERT(is_name(x->key) && is_name(x->name) && json_is_object(x->args) && args);
                free(args);
                for (size_t j = 0; j < i; j++)
                        FUZZ_ASSERT(!streq(f.v[j].key, x->key));
                if (x->selection)
                        collect(doc, x->selection, "T", vars, depth - 1, budget);
        }
        gql_fields_release(&f);
}

static void check_operations(const struct gql_doc *doc)
{
        json_t *given = json_pack("{s:s, s:i, s:b, s:[i,i], s:{s:n}, s:s, s:f}", "id", "x", "n", 3, "flag", 1, "list",
                                  1, 2, "obj", "a", "s", "str", "f", 1.5);
        const struct gql_operation *op;
        struct tess_error *err = NULL;
        int budget = BUDGET;

        FUZZ_ASSERT(given);
        if (gql_doc_operation(doc, NULL, &op, &err) < 0)
                check_error(err), err = NULL;
        else
                FUZZ_ASSERT(gql_doc_n_operations(doc) == 1 && op == gql_doc_operation_at(doc, 0));
        for (size_t i = 0; i < gql_doc_n_operations(doc); i++) {
                const struct gql_operation *o = gql_doc_operation_at(doc, i);
                const json_t *const sets[] = { NULL, given };
                if (gql_operation_name(o))
                        FUZZ_ASSERT(gql_doc_operation(doc, gql_operation_name(o), &op, NULL) == 0 && op == o);
                FUZZ_ASSERT(gql_op_type_to_string(gql_operation_type(o)) != NULL);
                collect(doc, gql_operation_selection(o), "Query", NULL, DEPTH, &budget);
                for (size_t k = 0; k < ARRAY_SIZE(sets); k++) {
                        json_t *vars = NULL;
                        if (gql_coerce_variables(o, sets[k], &vars, &err) < 0) {
                                FUZZ_ASSERT(vars == NULL);
                                check_error(err), err = NULL;
                                continue;
                        }
                        FUZZ_ASSERT(json_is_object(vars));
                        collect(doc, gql_operation_selection(o), "Query", vars, DEPTH, &budget);
                        json_decref(vars);
                }
        }
        json_decref(given);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct gql_doc *doc = NULL, *again = NULL;
        struct tess_error *err = NULL;
        struct buf printed = BUF_INIT, reprinted = BUF_INIT;

        if (gql_parse((const char *)data, size, &doc, &err) < 0) {
                FUZZ_ASSERT(doc == NULL);
                check_error(err);
                return 0;
        }
        gql_doc_print(doc, &printed);
        if (printed.len <= GQL_DOC_MAX) {
                if (gql_parse(printed.data, printed.len, &again, &err) < 0) {
                        fprintf(stderr, "printed:\n%s\ndoes not parse: %s\n", printed.data, err->msg);
                        FUZZ_ASSERT(!"the printed document parses");
                }
                gql_doc_print(again, &reprinted);
                FUZZ_ASSERT(reprinted.len == printed.len && memcmp(reprinted.data, printed.data, printed.len) == 0);
                FUZZ_ASSERT(gql_doc_n_operations(again) == gql_doc_n_operations(doc));
                gql_doc_free(again);
        }
        check_operations(doc);
        buf_release(&printed);
        buf_release(&reprinted);
        gql_doc_free(doc);
        return 0;
}
