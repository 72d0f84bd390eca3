/* gql.h - the executable part of GraphQL (October 2021 spec): parse a
 * document a client sends, pick its operation, coerce its variables and
 * collect the fields of each selection set, so that an executor (the
 * manager's POST /admin/gql) only has to resolve fields.
 *
 * gql_parse() reads queries, mutations, subscriptions and fragments (a
 * type-system definition is an error) and validates what execution needs:
 * unique operation and fragment names, a lone anonymous operation, known
 * fragments without cycles, every variable an operation uses defined by it.
 * The schema is not known here, so types are checked only as far as the
 * built-in scalars go.  Errors are EINVAL with messages that start with
 * "LINE:COLUMN: " (1-based, columns in characters) where there is a place
 * to point at, e.g. `1:17: expected a name, found "{"`.
 *
 * Hostile documents are bounded: GQL_DOC_MAX bytes, GQL_NODES_MAX nodes,
 * GQL_OPERATIONS_MAX operations, and selection sets, lists, objects and
 * list types nested at most GQL_DEPTH_MAX deep (selection sets also counted
 * through fragment spreads), so no recursion here or in an executor that
 * follows selection sets goes deeper.  A parsed document is immutable: any
 * number of threads may read it at once.  Names and strings are valid
 * UTF-8 without NUL bytes. */
#ifndef TESS_GQL_H
#define TESS_GQL_H

#include <stddef.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/error.h"

#define GQL_DOC_MAX        (256 * 1024) /* bytes of a document */
#define GQL_DEPTH_MAX      64           /* nesting, see above */
#define GQL_NODES_MAX      50000        /* values, selections, arguments, ... of a document */
#define GQL_OPERATIONS_MAX 100          /* operations of a document */

enum gql_op_type {
        GQL_QUERY,
        GQL_MUTATION,
        GQL_SUBSCRIPTION,
};

struct gql_doc;           /* a parsed document; gql_doc_free() */
struct gql_operation;     /* an operation of a document, borrowed from it */
struct gql_selection_set; /* a selection set of a document or a merged one of a gql_fields */

/* Parse len bytes of text (text[len] need not be NUL; a NUL byte inside is
 * an error).  RET 0 with *ret_doc set (caller owns, gql_doc_free()), or
 * -EINVAL with *err set. */
int gql_parse(const char *text, size_t len, struct gql_doc **ret_doc, struct tess_error **err);

/* Free a document; accepts NULL, returns NULL.  Everything borrowed from it
 * (operations, selection sets, field names) goes with it. */
struct gql_doc *gql_doc_free(struct gql_doc *doc);

/* The operation to execute: the one called name, or with name NULL the only
 * operation of the document.  RET 0 with *ret_op set (borrowed from doc);
 * -EINVAL with "operationName is required when the document has several
 * operations", "the document has no operation named \"X\"" or "the
 * document has no operation". */
int gql_doc_operation(const struct gql_doc *doc, const char *name, const struct gql_operation **ret_op,
                      struct tess_error **err);

/* The operations in document order, for tools that look at them all. */
size_t gql_doc_n_operations(const struct gql_doc *doc);
const struct gql_operation *gql_doc_operation_at(const struct gql_doc *doc, size_t i);

/* An operation's name (NULL when anonymous), type and root selection set. */
const char *gql_operation_name(const struct gql_operation *op);
enum gql_op_type gql_operation_type(const struct gql_operation *op);
const struct gql_selection_set *gql_operation_selection(const struct gql_operation *op);

/* "query", "mutation", "subscription". */
const char *gql_op_type_to_string(enum gql_op_type t);

/* Coerce the variables a request gives (a JSON object, or NULL for none)
 * to the operation's variable definitions (spec §6.1.2): defaults fill in
 * what is not given, a missing non-null variable without a default is an
 * error, a missing nullable one stays absent, an explicit null stays null.
 * Int (32-bit; a JSON 2.0 is 2), Float (JSON numbers, as reals), String,
 * Boolean and ID (a string, or an integer made a string) are checked; a
 * list type takes a single value as a one-element list; other named types
 * (enums, input objects, custom scalars) pass through as given.  Variables
 * the operation does not define are dropped.
 * OUT ret_vars - caller owns (json_decref); values may be shared with given.
 * RET 0, or -EINVAL, e.g. "1:7: variable \"$limit\" of type \"Int!\":
 * expected an Int, found a string". */
int gql_coerce_variables(const struct gql_operation *op, const json_t *given, json_t **ret_vars,
                         struct tess_error **err);

/* One field of a collected selection set: all the fields with the same
 * response key (alias, or name), merged. */
struct gql_field {
        const char *key;  /* response key, borrowed from the document */
        const char *name; /* the field's name ("__typename" too) */
        json_t *args;     /* object of the arguments' values, variables substituted; owned by the list */
        const struct gql_selection_set *selection; /* merged sub-selection, NULL for a leaf */
        unsigned line, column;                     /* where the first of the merged fields is */
};

/* The result of gql_collect_fields(); release with gql_fields_release(). */
struct gql_fields {
        struct gql_field *v; /* in the order of the response */
        size_t n;
        struct gql_selection_set **merged; /* private: selection sets made by merging */
        size_t n_merged;
};
/* clang-format off */
#define GQL_FIELDS_INIT { NULL, 0, NULL, 0 }
/* clang-format on */

/* CollectFields (spec §6.3.2) of set, for an object of type type_name:
 * @skip(if:) and @include(if:) are honoured (literals or variables, which
 * must be Booleans), fragment spreads and inline fragments are followed when
 * they have no type condition or one equal to type_name or to one of the
 * NULL-terminated also_types (e.g. the interfaces the type implements; may
 * be NULL), each fragment once.  Fields with the same response key merge;
 * they must have the same name, equal arguments and both or neither a
 * selection set ("3:9: fields \"a\" conflict: \"x\" and \"y\" are different
 * fields").  Arguments become JSON: enum values strings, null JSON null, lists
 * and objects recursively; a variable absent from vars leaves its argument
 * (or object field) out and is null inside a list.
 * IN doc - the document set comes from (for its fragments)
 * IN vars - gql_coerce_variables()'s result, or NULL for none
 * OUT ret - caller owns, gql_fields_release(); borrows from doc, and a
 *           field's selection may be owned by ret: collect a sub-selection
 *           before releasing the list it came from
 * RET 0, or -EINVAL with *ret untouched. */
int gql_collect_fields(const struct gql_doc *doc, const struct gql_selection_set *set, const char *type_name,
                       const char *const *also_types, const json_t *vars, struct gql_fields *ret,
                       struct tess_error **err);

/* Release a list (fields, arguments, merged selection sets) and reset it to
 * GQL_FIELDS_INIT. */
void gql_fields_release(struct gql_fields *f);

/* Append the document in a canonical one-line-per-definition form that
 * parses back to the same document (for logs, audit records and tests):
 * block strings become quoted strings, ignored tokens single spaces. */
void gql_doc_print(const struct gql_doc *doc, struct buf *out);

#endif
