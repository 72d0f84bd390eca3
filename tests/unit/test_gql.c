/* test_gql.c - GraphQL documents as Backend.AI's client and admins write
 * them: parsing, errors with their places, variables, CollectFields. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/buf.h"
#include "common/gql.h"

static struct gql_doc *parse(const char *text)
{
        struct tess_error *err = NULL;
        struct gql_doc *doc = NULL;

        if (gql_parse(text, strlen(text), &doc, &err) < 0) {
                test_fail(__FILE__, __LINE__, "parsing '%s': %s", text, err->msg);
                tess_error_free(err);
                return NULL;
        }
        CHECK(err == NULL && doc != NULL);
        return doc;
}

/* The error message of parsing len bytes of text, in a static buffer. */
static const char *parse_error_n(const char *text, size_t len)
{
        static char msg[512];
        struct tess_error *err = NULL;
        struct gql_doc *doc = NULL;

        if (gql_parse(text, len, &doc, &err) == 0) {
                gql_doc_free(doc);
                return "(parsed)";
        }
        CHECK(err && err->code == EINVAL && doc == NULL);
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "(no error)");
        tess_error_free(err);
        return msg;
}

static const char *parse_error(const char *text)
{
        return parse_error_n(text, strlen(text));
}

static const struct gql_operation *only_op(const struct gql_doc *doc)
{
        const struct gql_operation *op = NULL;
        struct tess_error *err = NULL;

        CHECK(gql_doc_operation(doc, NULL, &op, &err) == 0 && err == NULL);
        tess_error_free(err);
        return op;
}

/* Coerce the variables given as JSON text (NULL: none); NULL on error. */
static json_t *coerce(const struct gql_operation *op, const char *json, char *errmsg, size_t n)
{
        json_t *given = json ? json_loads(json, 0, NULL) : NULL;
        json_t *vars = NULL;
        struct tess_error *err = NULL;

        CHECK(!json || given);
        if (gql_coerce_variables(op, given, &vars, &err) < 0) {
                CHECK(err && err->code == EINVAL && vars == NULL);
                snprintf(errmsg, n, "%s", err->msg);
                tess_error_free(err);
        } else {
                CHECK(err == NULL && json_is_object(vars));
                snprintf(errmsg, n, "(ok)");
        }
        json_decref(given);
        return vars;
}

static void coerce_dump(const struct gql_operation *op, const char *json, struct buf *out)
{
        char msg[512];
        json_t *vars = coerce(op, json, msg, sizeof(msg));
        char *s = vars ? json_dumps(vars, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

        buf_reset(out);
        buf_puts(out, s ? s : msg);
        free(s);
        json_decref(vars);
}

/* Collected fields, recursively, with the same type at every level, as
 * `key:name(args){sub}`: alias shown only when it differs, arguments as
 * sorted compact JSON when there are any. */
static int render(const struct gql_doc *doc, const struct gql_selection_set *set, const char *type,
                  const char *const *also, const json_t *vars, struct buf *out)
{
        struct gql_fields f = GQL_FIELDS_INIT;
        struct tess_error *err = NULL;
        int r = gql_collect_fields(doc, set, type, also, vars, &f, &err);

        if (r < 0) {
                CHECK(err && err->code == EINVAL && f.n == 0 && f.v == NULL);
                buf_printf(out, "error: %s", err->msg);
                tess_error_free(err);
                return r;
        }
        for (size_t i = 0; i < f.n && r >= 0; i++) {
                const struct gql_field *x = &f.v[i];
                CHECK(x->key && *x->key && x->name && *x->name && json_is_object(x->args));
                if (i > 0)
                        buf_putc(out, ' ');
                if (!streq(x->key, x->name))
                        buf_printf(out, "%s:", x->key);
                buf_puts(out, x->name);
                if (json_object_size(x->args) > 0) {
                        char *a = json_dumps(x->args, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
                        buf_printf(out, "(%s)", a);
                        free(a);
                }
                if (x->selection) {
                        buf_putc(out, '{');
                        r = render(doc, x->selection, type, also, vars, out);
                        buf_putc(out, '}');
                }
        }
        gql_fields_release(&f);
        CHECK(f.v == NULL && f.n == 0 && f.merged == NULL);
        return r;
}

/* Parse text, pick its only operation, coerce vars_json and render it. */
static const char *run(const char *text, const char *vars_json, const char *type, const char *const *also)
{
        static struct buf out = BUF_INIT;
        struct gql_doc *doc = parse(text);
        const struct gql_operation *op;
        char msg[512];
        json_t *vars;

        buf_release(&out);
        if (!doc)
                return "(no document)";
        op = only_op(doc);
        vars = op ? coerce(op, vars_json, msg, sizeof(msg)) : NULL;
        if (!vars)
                buf_printf(&out, "variables: %s", op ? msg : "(no operation)");
        else
                render(doc, gql_operation_selection(op), type, also, vars, &out);
        json_decref(vars);
        gql_doc_free(doc);
        return out.data;
}

/* Backend.AI's client ------------------------------------------------------ */

static const char q_session_list[] =
        "query($limit:Int!, $offset:Int!, $ak:String, $group_id:String, $status:String) { "
        "compute_session_list(limit:$limit, offset:$offset, access_key:$ak, group_id:$group_id, status:$status) { "
        "items { name session_id: id group_name status status_info } total_count } }";

static void test_client_session_list(void)
{
        struct gql_doc *doc = parse(q_session_list);
        struct buf b = BUF_INIT;

        if (!doc)
                return;
        const struct gql_operation *op = only_op(doc);
        CHECK(gql_doc_n_operations(doc) == 1 && gql_doc_operation_at(doc, 0) == op && !gql_doc_operation_at(doc, 1));
        CHECK(gql_operation_name(op) == NULL);
        CHECK(gql_operation_type(op) == GQL_QUERY);
        CHECK_STREQ(gql_op_type_to_string(gql_operation_type(op)), "query");
        coerce_dump(op, "{\"limit\": 20, \"offset\": 0, \"ak\": null, \"status\": \"RUNNING\", \"extra\": 1}", &b);
        CHECK_STREQ(b.data, "{\"ak\":null,\"limit\":20,\"offset\":0,\"status\":\"RUNNING\"}");
        coerce_dump(op, "{\"limit\": 20}", &b);
        CHECK_STREQ(b.data, "1:20: variable \"$offset\" of required type \"Int!\" was not provided");
        coerce_dump(op, "{\"limit\": \"20\", \"offset\": 0}", &b);
        CHECK_STREQ(b.data, "1:7: variable \"$limit\" of type \"Int!\": expected an Int, found a string");
        coerce_dump(op, "{\"limit\": null, \"offset\": 0}", &b);
        CHECK_STREQ(b.data, "1:7: variable \"$limit\" of type \"Int!\": expected a value, found null");
        buf_release(&b);
        gql_doc_free(doc);

        /* ak given as null stays null; group_id not given is left out */
        CHECK_STREQ(run(q_session_list, "{\"limit\": 20, \"offset\": 40, \"ak\": null, \"status\": \"RUNNING\"}",
                        "Query", NULL),
                    "compute_session_list({\"access_key\":null,\"limit\":20,\"offset\":40,\"status\":\"RUNNING\"})"
                    "{items{name session_id:id group_name status status_info} total_count}");
        CHECK_STREQ(run(q_session_list, "{\"limit\": 1, \"offset\": 0, \"ak\": \"AKIA\", \"group_id\": \"g1\"}",
                        "Query", NULL),
                    "compute_session_list({\"access_key\":\"AKIA\",\"group_id\":\"g1\",\"limit\":1,\"offset\":0})"
                    "{items{name session_id:id group_name status status_info} total_count}");
}

static void test_client_keypair(void)
{
        CHECK_STREQ(run("query { keypair { user_id access_key secret_key is_active is_admin } }", NULL, "Query", NULL),
                    "keypair{user_id access_key secret_key is_active is_admin}");
        CHECK_STREQ(run("query { keypair { user_id access_key secret_key is_active is_admin } }", "{}", "Query", NULL),
                    "keypair{user_id access_key secret_key is_active is_admin}");
}

static const char q_session[] = "query($id: UUID!) { compute_session(id: $id) { id name containers { container_id "
                                "agent } dependencies { name } } }";

static void test_client_compute_session(void)
{
        CHECK_STREQ(run(q_session, "{\"id\": \"0b3d4a1e-0000-4000-8000-000000000001\"}", "Query", NULL),
                    "compute_session({\"id\":\"0b3d4a1e-0000-4000-8000-000000000001\"})"
                    "{id name containers{container_id agent} dependencies{name}}");
        /* UUID is not a built-in scalar: it passes through as given */
        CHECK_STREQ(run(q_session, "{\"id\": 7}", "Query", NULL), "compute_session({\"id\":7}){id name "
                                                                  "containers{container_id agent} dependencies{name}}");
        CHECK_STREQ(run(q_session, "{}", "Query", NULL),
                    "variables: 1:7: variable \"$id\" of required type \"UUID!\" was not provided");
        CHECK_STREQ(run(q_session, NULL, "Query", NULL),
                    "variables: 1:7: variable \"$id\" of required type \"UUID!\" was not provided");
}

static const char q_create_user[] =
        "mutation($email: String!, $input: UserInput!) { create_user(email: $email, props: $input) "
        "{ ok msg user { id email } } }";

static void test_client_create_user(void)
{
        struct gql_doc *doc = parse(q_create_user);

        if (doc) {
                CHECK(gql_operation_type(only_op(doc)) == GQL_MUTATION);
                CHECK_STREQ(gql_op_type_to_string(GQL_MUTATION), "mutation");
                gql_doc_free(doc);
        }
        CHECK_STREQ(run(q_create_user,
                        "{\"email\": \"a@b.c\", \"input\": {\"username\": \"a\", \"password\": \"x\", "
                        "\"need_password_change\": false, \"full_name\": \"A\", \"role\": \"user\"}}",
                        "Mutation", NULL),
                    "create_user({\"email\":\"a@b.c\",\"props\":{\"full_name\":\"A\",\"need_password_change\":false,"
                    "\"password\":\"x\",\"role\":\"user\",\"username\":\"a\"}}){ok msg user{id email}}");
        CHECK_STREQ(run(q_create_user, "{\"email\": 5, \"input\": {}}", "Mutation", NULL),
                    "variables: 1:10: variable \"$email\" of type \"String!\": expected a String, found a number");
}

/* Operations ---------------------------------------------------------------------- */

static void test_operation_selection(void)
{
        struct gql_doc *doc = parse("query A { a } mutation B($x: Int) { b(x: $x) } subscription C { c }");
        const struct gql_operation *op = NULL;
        struct tess_error *err = NULL;

        if (!doc)
                return;
        CHECK(gql_doc_n_operations(doc) == 3);
        CHECK(gql_doc_operation(doc, NULL, &op, &err) == -EINVAL && op == NULL);
        CHECK_STREQ(err->msg, "operationName is required when the document has several operations");
        err = tess_error_free(err);
        CHECK(gql_doc_operation(doc, "D", &op, &err) == -EINVAL && op == NULL);
        CHECK_STREQ(err->msg, "the document has no operation named \"D\"");
        err = tess_error_free(err);
        CHECK(gql_doc_operation(doc, "B", &op, &err) == 0 && op != NULL);
        CHECK_STREQ(gql_operation_name(op), "B");
        CHECK(gql_operation_type(op) == GQL_MUTATION && op == gql_doc_operation_at(doc, 1));
        CHECK(gql_doc_operation(doc, "C", &op, &err) == 0 && gql_operation_type(op) == GQL_SUBSCRIPTION);
        CHECK_STREQ(gql_op_type_to_string(gql_operation_type(op)), "subscription");
        CHECK(err == NULL);
        gql_doc_free(doc);

        /* only fragments: it parses, but there is nothing to run */
        doc = parse("fragment F on T { a }");
        if (doc) {
                CHECK(gql_doc_operation(doc, NULL, &op, &err) == -EINVAL);
                CHECK_STREQ(err->msg, "the document has no operation");
                err = tess_error_free(err);
                gql_doc_free(doc);
        }
        CHECK(gql_doc_free(NULL) == NULL);
}

/* Fragments, directives, aliases ----------------------------------------------------- */

static const char q_fragments[] =
        "query Q($withAgent: Boolean!, $skipStats: Boolean = true) {\n"
        "  compute_session(id: \"s1\") {\n"
        "    ...Basic\n"
        "    ... on ComputeSession { status }\n"
        "    ... on Other { never }\n"
        "    ... @include(if: $withAgent) { containers { agent } }\n"
        "    stats @skip(if: $skipStats)\n"
        "  }\n"
        "}\n"
        "fragment Basic on ComputeSession { id name ...More }\n"
        "fragment More on Node { id created_at @skip(if: false) terminated_at @include(if: false) }\n";

static void test_fragments(void)
{
        static const char *const node[] = { "Node", NULL };

        CHECK_STREQ(run(q_fragments, "{\"withAgent\": true}", "ComputeSession", node),
                    "compute_session({\"id\":\"s1\"}){id name created_at status containers{agent}}");
        /* More applies to Node only; include false, skip given false */
        CHECK_STREQ(run(q_fragments, "{\"withAgent\": false, \"skipStats\": false}", "ComputeSession", NULL),
                    "compute_session({\"id\":\"s1\"}){id name status stats}");
        /* the operation's only type: a type condition must equal the type */
        CHECK_STREQ(run(q_fragments, "{\"withAgent\": true, \"skipStats\": null}", "Other", NULL),
                    "compute_session({\"id\":\"s1\"}){error: 7:21: @skip(if:) must be a Boolean}");
        CHECK_STREQ(run(q_fragments, "{\"withAgent\": true}", "Other", NULL),
                    "compute_session({\"id\":\"s1\"}){never containers{agent}}");
        CHECK_STREQ(run(q_fragments, "{}", "Other", NULL),
                    "variables: 1:9: variable \"$withAgent\" of required type \"Boolean!\" was not provided");
}

static void test_fragment_spread_once_and_nested(void)
{
        /* a fragment spread twice is collected once; nested inline fragments */
        CHECK_STREQ(run("{ ...F a ...F ... { ... on T { b ... { c } } } } fragment F on T { a x: a }", NULL, "T", NULL),
                    "a x:a b c");
        /* fragments nest through fields: each collect starts afresh */
        CHECK_STREQ(
                run("{ u { ...F } v { ...F } } fragment F on T { id ...G } fragment G on T { name }", NULL, "T", NULL),
                "u{id name} v{id name}");
}

static void test_skip_include(void)
{
        static const char q[] = "query($a: Boolean!, $b: Boolean!) { x @skip(if: $a) y @include(if: $b) "
                                "z @skip(if: $a) @include(if: $b) w @skip(if: true) v @include(if: true) }";

        CHECK_STREQ(run(q, "{\"a\": false, \"b\": false}", "Q", NULL), "x v");
        CHECK_STREQ(run(q, "{\"a\": false, \"b\": true}", "Q", NULL), "x y z v");
        CHECK_STREQ(run(q, "{\"a\": true, \"b\": true}", "Q", NULL), "y v");
        CHECK_STREQ(run("query($a: Boolean) { x @skip(if: $a) }", "{}", "Q", NULL),
                    "error: 1:34: @skip(if:) must be a Boolean");
        CHECK_STREQ(run("query($a: String) { x @include(if: $a) }", "{\"a\": \"yes\"}", "Q", NULL),
                    "error: 1:36: @include(if:) must be a Boolean");
        CHECK_STREQ(run("{ x @skip(if: 1) }", NULL, "Q", NULL), "error: 1:15: @skip(if:) must be a Boolean");
        CHECK_STREQ(run("{ x @skip }", NULL, "Q", NULL), "error: 1:5: @skip needs the argument \"if\"");
        /* other directives are the executor's business */
        CHECK_STREQ(run("{ x @deprecated(reason: \"r\") @skip(if: false) }", NULL, "Q", NULL), "x");
}

static void test_aliases_and_merging(void)
{
        CHECK_STREQ(run("{ me: user(id: 1) { id } you: user(id: 2) { id } }", NULL, "Q", NULL),
                    "me:user({\"id\":1}){id} you:user({\"id\":2}){id}");
        /* same key, same field and arguments: sub-selections merge */
        CHECK_STREQ(run("{ a: f(x: 1) { b } ... { a: f(x: 1) { c b } } d a: f(x: 1) { e { g } e { h } } }", NULL, "Q",
                        NULL),
                    "a:f({\"x\":1}){b c e{g h}} d");
        CHECK_STREQ(run("{ a: f b: f a: g }", NULL, "Q", NULL),
                    "error: 1:13: fields \"a\" conflict: \"f\" and \"g\" are different fields");
        CHECK_STREQ(run("{ f(x: 1) f(x: 2) }", NULL, "Q", NULL),
                    "error: 1:11: fields \"f\" conflict: they have different arguments");
        CHECK_STREQ(run("{ f f { a } }", NULL, "Q", NULL),
                    "error: 1:5: fields \"f\" conflict: one has a selection set and the other not");
        /* the same value written two ways is the same argument */
        CHECK_STREQ(run("query($v: Int = 3) { f(x: 3) f(x: $v) }", NULL, "Q", NULL), "f({\"x\":3})");
        /* conflicts in sub-selections show when those are collected */
        CHECK_STREQ(run("{ a { x: b } a { x: c } }", NULL, "Q", NULL),
                    "a{error: 1:18: fields \"x\" conflict: \"b\" and \"c\" are different fields}");
        CHECK_STREQ(run("{ __typename t: __typename }", NULL, "Q", NULL), "__typename t:__typename");
}

static void test_merged_selection_recollects(void)
{
        /* a merged selection set is owned by the list and collects again */
        struct gql_doc *doc = parse("{ a { x ...F } a { y ...F } } fragment F on T { z }");
        struct gql_fields top = GQL_FIELDS_INIT, sub = GQL_FIELDS_INIT, again = GQL_FIELDS_INIT;
        struct tess_error *err = NULL;

        if (!doc)
                return;
        CHECK(gql_collect_fields(doc, gql_operation_selection(only_op(doc)), "T", NULL, NULL, &top, &err) == 0);
        CHECK(top.n == 1 && top.v[0].selection != NULL && top.n_merged == 1);
        CHECK(top.v[0].line == 1 && top.v[0].column == 3);
        CHECK(gql_collect_fields(doc, top.v[0].selection, "T", NULL, NULL, &sub, &err) == 0);
        CHECK(sub.n == 3 && sub.n_merged == 0);
        CHECK_STREQ(sub.v[0].key, "x");
        CHECK_STREQ(sub.v[1].key, "z");
        CHECK_STREQ(sub.v[2].key, "y");
        CHECK(sub.v[2].line == 1 && sub.v[2].column == 20 && sub.v[2].selection == NULL);
        CHECK(gql_collect_fields(doc, top.v[0].selection, "U", NULL, NULL, &again, &err) == 0);
        CHECK(again.n == 2); /* F is on T */
        gql_fields_release(&again);
        gql_fields_release(&sub);
        gql_fields_release(&top);
        gql_fields_release(&top); /* released twice is harmless */
        CHECK(err == NULL);
        gql_doc_free(doc);
}

/* Values ------------------------------------------------------------------------------ */

static void test_values(void)
{
        CHECK_STREQ(run("{ f(i: -12, z: 0, m: -0, f: 1.5e3, g: -0.25, h: 2E-2, s: \"x\", t: true, u: false, n: null, "
                        "e: RUNNING, l: [1, [2], []], o: {a: {b: [BIG]}, c: null}, emp: {}) }",
                        NULL, "Q", NULL),
                    "f({\"e\":\"RUNNING\",\"emp\":{},\"f\":1500.0,\"g\":-0.25,\"h\":0.02,\"i\":-12,\"l\":[1,[2],[]],"
                    "\"m\":0,\"n\":null,\"o\":{\"a\":{\"b\":[\"BIG\"]},\"c\":null},\"s\":\"x\",\"t\":true,"
                    "\"u\":false,\"z\":0})");
        CHECK_STREQ(run("{ f(big: 9223372036854775807, small: -9223372036854775808) }", NULL, "Q", NULL),
                    "f({\"big\":9223372036854775807,\"small\":-9223372036854775808})");
        /* variables absent: left out of objects and arguments, null in lists */
        CHECK_STREQ(run("query($a: Int, $b: [Int]) { f(a: $a, o: {a: $a, k: 1}, l: [$a, 2], b: $b) }", "{\"b\": 4}",
                        "Q", NULL),
                    "f({\"b\":[4],\"l\":[null,2],\"o\":{\"k\":1}})");
        /* ignored tokens: commas, comments, a BOM, CR LF */
        CHECK_STREQ(run("\xef\xbb\xbf# comment\r\n{,,f(a:1,,b:2)\t# another\r\n,g\xef\xbb\xbf}", NULL, "Q", NULL),
                    "f({\"a\":1,\"b\":2}) g");
}

static void test_strings(void)
{
        CHECK_STREQ(run("{ f(s: \"q\\\"b\\\\s\\/ \\b\\f\\n\\r\\t\") }", NULL, "Q", NULL),
                    "f({\"s\":\"q\\\"b\\\\s/ \\b\\f\\n\\r\\t\"})");
        CHECK_STREQ(run("{ f(e: \"\\u00e9\\u00E9\", g: \"\\u{1F600}\", p: \"\\uD83D\\uDE00\", z: \"\\u{0000041}\", "
                        "raw: \"\xc3\xa9\xf0\x9f\x98\x80\") }",
                        NULL, "Q", NULL),
                    "f({\"e\":\"\xc3\xa9\xc3\xa9\",\"g\":\"\xf0\x9f\x98\x80\",\"p\":\"\xf0\x9f\x98\x80\","
                    "\"raw\":\"\xc3\xa9\xf0\x9f\x98\x80\",\"z\":\"A\"})");
        CHECK_STREQ(run("{ f(s: \"\", t: \"\"\"\"\"\") }", NULL, "Q", NULL), "f({\"s\":\"\",\"t\":\"\"})");
}

static void test_block_strings(void)
{
        /* common indentation and blank first and last lines go */
        CHECK_STREQ(run("{ f(s: \"\"\"\n    Hello,\n      World!\n\n    Yours,\n      GraphQL.\n  \"\"\") }", NULL, "Q",
                        NULL),
                    "f({\"s\":\"Hello,\\n  World!\\n\\nYours,\\n  GraphQL.\"})");
        /* the first line keeps its indent; CR LF and CR end lines; \\\"\"\" escapes */
        CHECK_STREQ(run("{ f(s: \"\"\"  first\r\n    second\r      third \\\"\"\" \\n\"\"\") }", NULL, "Q", NULL),
                    "f({\"s\":\"  first\\nsecond\\n  third \\\"\\\"\\\" \\\\n\"})");
        CHECK_STREQ(run("{ f(s: \"\"\"\n \t \n\"\"\", t: \"\"\"a\"b\"\"c\"\"\") }", NULL, "Q", NULL),
                    "f({\"s\":\"\",\"t\":\"a\\\"b\\\"\\\"c\"})");
}

/* Variables ------------------------------------------------------------------------------ */

static void test_variable_coercion(void)
{
        static const char q[] = "query($i: Int, $f: Float, $s: String, $b: Boolean, $id: ID, $l: [Int!], "
                                "$ll: [[Int]], $e: Status, $d: Int = 7, $dl: [String] = \"one\", $dn: Int = null) "
                                "{ f }";
        struct gql_doc *doc = parse(q);
        struct buf b = BUF_INIT;

        if (!doc)
                return;
        const struct gql_operation *op = only_op(doc);
        coerce_dump(op,
                    "{\"i\": 2.0, \"f\": 3, \"s\": \"x\", \"b\": true, \"id\": 42, \"l\": 5, \"ll\": [[1], 2], "
                    "\"e\": \"RUNNING\"}",
                    &b);
        CHECK_STREQ(b.data, "{\"b\":true,\"d\":7,\"dl\":[\"one\"],\"dn\":null,\"e\":\"RUNNING\",\"f\":3.0,\"i\":2,"
                            "\"id\":\"42\",\"l\":[5],\"ll\":[[1],[2]],\"s\":\"x\"}");
        coerce_dump(op, "{\"d\": null, \"l\": null, \"e\": {\"any\": [1]}}", &b);
        CHECK_STREQ(b.data, "{\"d\":null,\"dl\":[\"one\"],\"dn\":null,\"e\":{\"any\":[1]},\"l\":null}");
        coerce_dump(op, "{\"i\": 2.5}", &b);
        CHECK_STREQ(b.data, "1:7: variable \"$i\" of type \"Int\": expected an Int, found 2.5");
        coerce_dump(op, "{\"i\": 2147483648}", &b);
        CHECK_STREQ(b.data, "1:7: variable \"$i\" of type \"Int\": expected an Int, found 2147483648 (Int is 32 bits)");
        coerce_dump(op, "{\"i\": -2147483648}", &b);
        CHECK_STREQ(b.data, "{\"d\":7,\"dl\":[\"one\"],\"dn\":null,\"i\":-2147483648}");
        coerce_dump(op, "{\"f\": \"1.5\"}", &b);
        CHECK_STREQ(b.data, "1:16: variable \"$f\" of type \"Float\": expected a Float, found a string");
        coerce_dump(op, "{\"s\": [\"x\"]}", &b);
        CHECK_STREQ(b.data, "1:27: variable \"$s\" of type \"String\": expected a String, found a list");
        coerce_dump(op, "{\"b\": 1}", &b);
        CHECK_STREQ(b.data, "1:39: variable \"$b\" of type \"Boolean\": expected a Boolean, found a number");
        coerce_dump(op, "{\"id\": true}", &b);
        CHECK_STREQ(b.data, "1:52: variable \"$id\" of type \"ID\": expected an ID (a string or an integer), found a "
                            "Boolean");
        coerce_dump(op, "{\"l\": [1, null]}", &b);
        CHECK_STREQ(b.data, "1:61: variable \"$l\" of type \"[Int!]\": element 1: expected a value, found null");
        coerce_dump(op, "{\"ll\": [[1], [2, \"x\"]]}", &b);
        CHECK_STREQ(b.data,
                    "1:73: variable \"$ll\" of type \"[[Int]]\": element 1: element 1: expected an Int, found a "
                    "string");
        coerce_dump(op, "[1]", &b);
        CHECK_STREQ(b.data, "variables must be a JSON object, found a list");
        gql_doc_free(doc);

        /* a default that does not fit its type is an error when used */
        doc = parse("query($n: Int = \"ten\", $m: [Int!]! = [1, null]) { f }");
        if (doc) {
                coerce_dump(only_op(doc), "{\"m\": []}", &b);
                CHECK_STREQ(b.data, "1:7: variable \"$n\" of type \"Int\" has a default value that does not fit: "
                                    "expected an Int, found a string");
                coerce_dump(only_op(doc), "{\"n\": 1}", &b);
                CHECK_STREQ(b.data, "1:24: variable \"$m\" of type \"[Int!]!\" has a default value that does not "
                                    "fit: element 1: expected a value, found null");
                gql_doc_free(doc);
        }
        buf_release(&b);
}

/* Errors ------------------------------------------------------------------------------------ */

static void test_syntax_errors(void)
{
        static const struct {
                const char *text, *msg;
        } cases[] = {
                { "",
                  "1:1: expected \"query\", \"mutation\", \"subscription\", \"fragment\" or \"{\", found the end of "
                  "the document" },
                { "  # only a comment\n", "2:1: expected \"query\", \"mutation\", \"subscription\", \"fragment\" or "
                                          "\"{\", found the end of the document" },
                { "query Q($id: ID) {", "1:19: expected a field or \"...\", found the end of the document" },
                { "query Q($id: ID) {}", "1:19: expected a field or \"...\", found \"}\"" },
                { "query($id: ID) { a(id: {) }", "1:25: expected a name, found \")\"" },
                { "query { a(id:) }", "1:14: expected a value, found \")\"" },
                { "query { a() }", "1:11: expected a name, found \")\"" },
                { "query { a(x: 1 x: 2) }", "1:16: argument \"x\" is given twice" },
                { "{ a(o: {k: 1, k: 2}) }", "1:15: field \"k\" is given twice in an object" },
                { "query query { a }", "(parsed)" },
                { "query Q { ...on }", "1:17: expected a name, found \"}\"" },
                { "query Q { ... }", "1:15: expected \"{\", found \"}\"" },
                { "query Q { a: }", "1:14: expected a name, found \"}\"" },
                { "query Q($a Int) { a }", "1:12: expected \":\", found \"Int\"" },
                { "query Q(a: Int) { a }", "1:9: expected a variable, found \"a\"" },
                { "query Q($a: ) { a }", "1:13: expected a type, found \")\"" },
                { "query Q($a: [Int) { a }", "1:17: expected \"]\", found \")\"" },
                { "query Q($a: Int = $b) { a }", "1:19: expected a constant value, found \"$\"" },
                { "query Q($a: Int, $a: ID) { a(x: $a) }", "1:18: variable \"$a\" is defined twice" },
                { "query Q() { a }", "1:9: expected a variable, found \")\"" },
                { "fragment on on T { a }", "1:10: expected a fragment name, found \"on\"" },
                { "fragment F T { a }", "1:12: expected \"on\", found \"T\"" },
                { "fragment F on T", "1:16: expected \"{\", found the end of the document" },
                { "{ a } }", "1:7: expected \"query\", \"mutation\", \"subscription\", \"fragment\" or \"{\", found "
                             "\"}\"" },
                { "{ a } foo", "1:7: expected \"query\", \"mutation\", \"subscription\", \"fragment\" or \"{\", found "
                               "\"foo\"" },
                { "{ a(s: \"x\" }", "1:12: expected a name, found \"}\"" },
                { "type Query { a: Int }", "1:1: only executable definitions are supported, found \"type\"" },
                { "{ a }\nschema { query: Q }", "2:1: only executable definitions are supported, found \"schema\"" },
                { "extend type Q { b: Int }", "1:1: only executable definitions are supported, found \"extend\"" },
                { "\"\"\"doc\"\"\" type Q { a: Int }", "1:1: only executable definitions are supported, found a "
                                                       "description" },
                { "{ a(x: [1, 2) }", "1:13: expected a value, found \")\"" },
                { "{ aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: }", "1:51: expected a name, found \"}\"" },
                { "{ a(x: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1:54: expected a name, found the end of "
                                                                           "the document" },
                { "{ a } query Q bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb { b }",
                  "1:15: expected \"{\", found \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...\"" },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const char *msg = parse_error(cases[i].text);
                if (!streq(msg, cases[i].msg))
                        test_fail(__FILE__, __LINE__, "'%s': \"%s\", expected \"%s\"", cases[i].text, msg,
                                  cases[i].msg);
        }
}

static void test_lexical_errors(void)
{
        static const struct {
                const char *text, *msg;
        } cases[] = {
                { "{ a(x: 01) }", "1:8: invalid number \"01\": unexpected digit after 0" },
                { "{ a(x: -01) }", "1:8: invalid number \"-01\": unexpected digit after 0" },
                { "{ a(x: 1.) }", "1:8: invalid number \"1.\": expected a digit after \".\"" },
                { "{ a(x: .5) }", "1:8: unexpected character \".\"" },
                { "{ a(x: 1.5.2) }", "1:8: invalid number \"1.5.\": unexpected \".\" after a number" },
                { "{ a(x: 1e) }", "1:8: invalid number \"1e\": expected a digit in the exponent" },
                { "{ a(x: 1e+) }", "1:8: invalid number \"1e+\": expected a digit in the exponent" },
                { "{ a(x: 12abc) }", "1:8: invalid number \"12a\": unexpected \"a\" after a number" },
                { "{ a(x: 0x1F) }", "1:8: invalid number \"0x\": unexpected \"x\" after a number" },
                { "{ a(x: 1_000) }", "1:8: invalid number \"1_\": unexpected \"_\" after a number" },
                { "{ a(x: -) }", "1:8: invalid number \"-\": expected a digit after \"-\"" },
                { "{ a(x: 1e5.0) }", "1:8: invalid number \"1e5.\": unexpected \".\" after a number" },
                { "{ a(x: 99999999999999999999) }", "1:8: integer \"99999999999999999999\" is out of range" },
                { "{ a(x: 1e999) }", "1:8: float \"1e999\" is out of range" },
                { "{ a(x: \"abc) }", "1:8: unterminated string" },
                { "{ a(x: \"ab\nc\") }", "1:8: unterminated string" },
                { "{ a(x: \"a\\x\") }", "1:10: invalid escape sequence \"\\x\"" },
                { "{ a(x: \"a\\\xc3\xa9\") }", "1:10: invalid escape sequence: \"\\\" before U+00E9" },
                { "{ a(x: \"\\u12G4\") }", "1:9: invalid Unicode escape \"\\u12G4\": expected 4 hexadecimal digits" },
                { "{ a(x: \"\\u12\") }", "1:9: invalid Unicode escape \"\\u12\": expected 4 hexadecimal digits" },
                { "{ a(x: \"\\uD800\") }", "1:9: invalid Unicode escape \"\\uD800\": a leading surrogate without a "
                                           "trailing one" },
                { "{ a(x: \"\\uD800\\u0041\") }", "1:9: invalid Unicode escape \"\\uD800\": a leading surrogate "
                                                  "without a trailing one" },
                { "{ a(x: \"\\uD800\\u{DC00}\") }", "1:9: invalid Unicode escape \"\\uD800\": a leading surrogate "
                                                    "without a trailing one" },
                { "{ a(x: \"\\uDC00\") }", "1:9: invalid Unicode escape \"\\uDC00\": a trailing surrogate without a "
                                           "leading one" },
                { "{ a(x: \"\\u{110000}\") }", "1:9: invalid Unicode escape \"\\u{110000}\": not a Unicode scalar "
                                               "value" },
                { "{ a(x: \"\\u{D800}\") }", "1:9: invalid Unicode escape \"\\u{D800}\": not a Unicode scalar value" },
                { "{ a(x: \"\\u{}\") }", "1:9: invalid Unicode escape \"\\u{}\": expected hexadecimal digits and "
                                         "\"}\"" },
                { "{ a(x: \"\\u{41\") }", "1:9: invalid Unicode escape \"\\u{41\": expected hexadecimal digits "
                                          "and \"}\"" },
                { "{ a(x: \"\\u0000\") }", "1:9: invalid Unicode escape: U+0000 is not allowed in a string" },
                { "{ a(x: \"\"\"abc) }", "1:8: unterminated block string" },
                { "{ a(x: \"\"\"abc\\\"\"\") }", "1:8: unterminated block string" },
                { "{ a ? }", "1:5: unexpected character \"?\"" },
                { "{ a \x01 }", "1:5: unexpected character U+0001" },
                { "{ a \xc3\xa9 }", "1:5: unexpected character U+00E9" },
                { "{\n\ta\r\n\tb\r\t\xe2\x82\xac }", "4:2: unexpected character U+20AC" },
                { "{ a .. }", "1:5: unexpected character \".\"" },
                { "{ a(s: \"\xc3\xa9\xf0\x9f\x98\x80\") ? }",
                  "1:14: unexpected character \"?\"" }, /* columns count characters */
                { "{ a(x: \"\xff\") }", "1:9: invalid UTF-8" },
                { "{ a(x: \"\xed\xa0\x80\") }", "1:9: invalid UTF-8" },  /* an encoded surrogate */
                { "{ a(x: \"\xc0\xaf\") }", "1:9: invalid UTF-8" },      /* overlong */
                { "{ \xc3\xa9\xc3\xa9 \xe2\x82", "1:6: invalid UTF-8" }, /* cut off */
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const char *msg = parse_error(cases[i].text);
                if (!streq(msg, cases[i].msg))
                        test_fail(__FILE__, __LINE__, "'%s': \"%s\", expected \"%s\"", cases[i].text, msg,
                                  cases[i].msg);
        }
        CHECK_STREQ(parse_error_n("{ a\0 }", 6), "1:4: unexpected NUL byte");
        CHECK_STREQ(parse_error_n("{ a(x: \"\0\") }", 13), "1:9: unexpected NUL byte");
}

static void test_validation_errors(void)
{
        static const struct {
                const char *text, *msg;
        } cases[] = {
                { "query A { a } query A { b }", "1:15: there are two operations named \"A\"" },
                { "{ a } query A { b }", "1:1: an anonymous operation must be the only operation in the document" },
                { "query A { a } { b }", "1:15: an anonymous operation must be the only operation in the document" },
                { "{ ...F } fragment F on T { a } fragment F on T { b }", "1:32: there are two fragments named \"F\"" },
                { "{ a ...G }", "1:5: unknown fragment \"G\"" },
                { "{ a } fragment F on T { ... on T { ...G } }", "1:36: unknown fragment \"G\"" },
                { "{ ...A } fragment A on T { ...B } fragment B on T { x ...A }",
                  "1:55: fragment \"A\" spreads itself: A -> B -> A" },
                { "{ a } fragment A on T { b { ...A } }", "1:29: fragment \"A\" spreads itself: A -> A" },
                { "{ a } fragment A on T { ...B } fragment B on T { ...C } fragment C on T { ... { ...B } }",
                  "1:81: fragment \"B\" spreads itself: B -> C -> B" },
                { "query Q { a(x: $x) }", "1:16: variable \"$x\" is not defined by operation \"Q\"" },
                { "{ a(x: [{y: $x}]) }", "1:13: variable \"$x\" is not defined by the operation" },
                { "query Q($y: Int) { ...F } fragment F on T { a(x: $y) b @include(if: $z) }",
                  "1:69: variable \"$z\" is not defined by operation \"Q\"" },
                { "query Q @dir(x: $x) { a }", "1:17: variable \"$x\" is not defined by operation \"Q\"" },
                { "query A($x: Int) { ...F } query B { ...F } fragment F on T { a(x: $x) }",
                  "1:67: variable \"$x\" is not defined by operation \"B\"" },
                { "query Q($a: Int) { ...F } fragment F on T { ... on T { x { ...G } } } "
                  "fragment G on T { ...H y(v: {k: [$a, $b]}) } fragment H on T { z(a: $a) }",
                  "1:108: variable \"$b\" is not defined by operation \"Q\"" },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const char *msg = parse_error(cases[i].text);
                if (!streq(msg, cases[i].msg))
                        test_fail(__FILE__, __LINE__, "'%s': \"%s\", expected \"%s\"", cases[i].text, msg,
                                  cases[i].msg);
        }
        /* unused variables and fragments are fine */
        CHECK_STREQ(parse_error("query($x: Int) { a } fragment F on T { b(y: $y) }"), "(parsed)");
}

/* Limits ---------------------------------------------------------------------------------------- */

/* "{ a { a { ... a } } }": depth selection sets. */
static char *nested(int depth)
{
        struct buf b = BUF_INIT;

        for (int i = 0; i < depth; i++)
                buf_puts(&b, i == 0 ? "{" : " a {");
        buf_puts(&b, " a");
        for (int i = 0; i < depth; i++)
                buf_puts(&b, " }");
        return buf_detach(&b, NULL);
}

static void test_limits(void)
{
        char *ok = nested(GQL_DEPTH_MAX), *deep = nested(GQL_DEPTH_MAX + 1);
        struct buf b = BUF_INIT;
        struct gql_doc *doc;

        doc = parse(ok);
        gql_doc_free(doc);
        CHECK_STREQ(parse_error(deep), "1:257: nested more than 64 levels deep");
        free(ok);
        free(deep);

        /* lists and list types count too */
        buf_puts(&b, "{ a(x: ");
        for (int i = 0; i < GQL_DEPTH_MAX; i++)
                buf_putc(&b, '[');
        CHECK_STREQ(parse_error(b.data), "1:71: nested more than 64 levels deep");
        buf_reset(&b);
        buf_puts(&b, "query($x: ");
        for (int i = 0; i < GQL_DEPTH_MAX + 1; i++)
                buf_putc(&b, '[');
        buf_puts(&b, "Int");
        CHECK_STREQ(parse_error(b.data), "1:75: nested more than 64 levels deep");

        /* fragments deepen what spreads them: F0 holds 40 levels, the query 30;
         * the error points at the first selection set too deep, in F0 */
        buf_reset(&b);
        buf_puts(&b, "query { ");
        for (int i = 1; i < 30; i++)
                buf_puts(&b, "a { ");
        buf_puts(&b, "...F0");
        for (int i = 1; i < 30; i++)
                buf_puts(&b, " }");
        buf_puts(&b, " } fragment F0 on T { ");
        for (int i = 1; i < 40; i++)
                buf_puts(&b, "b { ");
        buf_puts(&b, "c");
        for (int i = 1; i < 40; i++)
                buf_puts(&b, " }");
        buf_puts(&b, " }");
        CHECK_STREQ(parse_error(b.data), "1:344: selection sets nest more than 64 levels deep (fragments included)");

        /* a chain of 70 fragments, each one level */
        buf_reset(&b);
        buf_puts(&b, "{ ...F0 }");
        for (int i = 0; i < 70; i++)
                buf_printf(&b, " fragment F%d on T { ...F%d }", i, i + 1);
        buf_puts(&b, " fragment F70 on T { x }");
        CHECK(strstr(parse_error(b.data), "selection sets nest more than 64 levels deep (fragments included)"));
        buf_reset(&b);
        buf_puts(&b, "{ ...F0 }");
        for (int i = 0; i < 60; i++)
                buf_printf(&b, " fragment F%d on T { ...F%d }", i, i + 1);
        buf_puts(&b, " fragment F60 on T { x }");
        CHECK_STREQ(run(b.data, NULL, "T", NULL), "x");

        /* size */
        buf_reset(&b);
        buf_puts(&b, "{ a }");
        while (b.len <= GQL_DOC_MAX)
                buf_puts(&b, "                                                                ");
        CHECK_STREQ(parse_error_n(b.data, GQL_DOC_MAX), "(parsed)");
        CHECK_STREQ(parse_error_n(b.data, GQL_DOC_MAX + 1), "the document is longer than 262144 bytes");

        /* nodes */
        buf_reset(&b);
        buf_puts(&b, "{ a(x: [");
        for (int i = 0; i < GQL_NODES_MAX; i++)
                buf_puts(&b, "0 ");
        buf_puts(&b, "]) }");
        CHECK_STREQ(parse_error(b.data), "1:99999: the document has more than 50000 nodes");

        /* operations */
        buf_reset(&b);
        for (int i = 0; i <= GQL_OPERATIONS_MAX; i++)
                buf_printf(&b, "query Q%d { a }\n", i);
        CHECK_STREQ(parse_error(b.data), "101:1: the document has more than 100 operations");
        buf_release(&b);
}

/* Printing ---------------------------------------------------------------------------------------- */

static void check_print(const char *text, const char *want)
{
        struct gql_doc *doc = parse(text), *again;
        struct buf b = BUF_INIT, b2 = BUF_INIT;

        if (!doc)
                return;
        gql_doc_print(doc, &b);
        CHECK_STREQ(b.data, want);
        again = parse(b.data);
        if (again) {
                gql_doc_print(again, &b2);
                CHECK_STREQ(b2.data, b.data);
        }
        gql_doc_free(again);
        gql_doc_free(doc);
        buf_release(&b);
        buf_release(&b2);
}

static void test_print(void)
{
        check_print(q_session_list,
                    "query($limit: Int!, $offset: Int!, $ak: String, $group_id: String, $status: String) { "
                    "compute_session_list(limit: $limit, offset: $offset, access_key: $ak, group_id: $group_id, "
                    "status: $status) { items { name session_id: id group_name status status_info } total_count } }");
        check_print("{a}", "{ a }");
        check_print("query { a }", "{ a }");
        check_print("subscription { a }", "subscription { a }");
        check_print("query Q($a: [Int!]! = [1, 2] @d, $o: In = {k: {}, l: [], e: E}) @x(y: 1.50e3) "
                    "{ ...F @skip(if: $a) ... on T @include(if: true) { b } ... { c } ... @d { e } }\n"
                    "fragment F on T @f { g(s: \"\"\"  x\n  \"y\"\"\", t: \"\\u0001\\u007f\\t\\\\\\\"\xc3\xa9\", n: "
                    "null) }",
                    "query Q($a: [Int!]! = [1, 2] @d, $o: In = {k: {}, l: [], e: E}) @x(y: 1.50e3) "
                    "{ ...F @skip(if: $a) ... on T @include(if: true) { b } ... { c } ... @d { e } }\n"
                    "fragment F on T @f { g(s: \"  x\\n\\\"y\", t: \"\\u0001\\u007F\\t\\\\\\\"\xc3\xa9\", n: null) }");
}

static const struct test tests[] = {
        TEST(test_client_session_list),
        TEST(test_client_keypair),
        TEST(test_client_compute_session),
        TEST(test_client_create_user),
        TEST(test_operation_selection),
        TEST(test_fragments),
        TEST(test_fragment_spread_once_and_nested),
        TEST(test_skip_include),
        TEST(test_aliases_and_merging),
        TEST(test_merged_selection_recollects),
        TEST(test_values),
        TEST(test_strings),
        TEST(test_block_strings),
        TEST(test_variable_coercion),
        TEST(test_syntax_errors),
        TEST(test_lexical_errors),
        TEST(test_validation_errors),
        TEST(test_limits),
        TEST(test_print),
        {},
};

int main(void)
{
        return test_main(tests);
}
