/* gql_parse.c - the grammar of GraphQL's executable documents (spec
 * §2.2-2.12) into the nodes of gql-internal.h, one function per production,
 * in an arena the document owns; gql_parse(), gql_doc_free() and the
 * operations' accessors. */
#include "common/compat.h"

#include <jansson.h>

#include "common/gql-internal.h"
#include "common/strmap.h"

/* The arena ------------------------------------------------------------------ */

struct chunk {
        struct chunk *next;
        size_t used, cap;
        max_align_t data[];
};

#define CHUNK_SIZE 16384

/* Zeroed memory that lives as long as the document. */
static void *arena_alloc(struct gql_doc *d, size_t n)
{
        struct chunk *c = d->chunks;

        n = (n + 15) & ~(size_t)15;
        if (!c || c->cap - c->used < n) {
                size_t cap = n > CHUNK_SIZE / 4 ? n : CHUNK_SIZE;
                struct chunk *nc = xmalloc(sizeof(*nc) + cap);
                nc->used = 0;
                nc->cap = cap;
                if (c && cap != CHUNK_SIZE) { /* a big one: keep filling the current chunk */
                        nc->next = c->next;
                        c->next = nc;
                } else {
                        nc->next = c;
                        d->chunks = nc;
                }
                c = nc;
        }
        void *p = (char *)c->data + c->used;
        c->used += n;
        memset(p, 0, n);
        return p;
}

char *gql_arena_strndup(struct gql_doc *d, const char *s, size_t n)
{
        char *p = arena_alloc(d, n + 1);
        memcpy(p, s, n);
        return p;
}

struct gql_doc *gql_doc_free(struct gql_doc *doc)
{
        if (!doc)
                return NULL;
        for (struct chunk *c = doc->chunks, *next; c; c = next) {
                next = c->next;
                free(c);
        }
        free(doc);
        return NULL;
}

#define LIST_APPEND(head, tail, x)          \
        do {                                \
                if (tail)                   \
                        (tail)->next = (x); \
                else                        \
                        (head) = (x);       \
                (tail) = (x);               \
        } while (0)

/* ret = an arena array of the n nodes of the list at head. */
#define LIST_TO_ARRAY(doc, head, n, ret)                              \
        do {                                                          \
                size_t i_ = 0;                                        \
                (ret) = arena_alloc((doc), (n) * sizeof(*(ret)));     \
                for (__typeof__(head) x_ = (head); x_; x_ = x_->next) \
                        (ret)[i_++] = x_;                             \
        } while (0)

/* The parser (spec §2.2-2.12) ---------------------------------------------- */

/* The current token for a message: "{", "name", a string, ... */
static void token_desc(const struct token *t, char *out, size_t n)
{
        int shown;

        switch (t->kind) {
        case TOK_EOF:
                snprintf(out, n, "the end of the document");
                return;
        case TOK_STRING:
                snprintf(out, n, "a string");
                return;
        case TOK_BLOCK_STRING:
                snprintf(out, n, "a block string");
                return;
        default:
                shown = t->len > 40 ? 37 : (int)t->len;
                snprintf(out, n, "\"%.*s%s\"", shown, t->start, (size_t)shown < t->len ? "..." : "");
        }
}

static int unexpected(struct parser *p, const char *expected)
{
        char found[64];

        token_desc(&p->tok, found, sizeof(found));
        return gql_fail(p, p->tok.line, p->tok.column, "expected %s, found %s", expected, found);
}

static bool at_punct(const struct parser *p, char c)
{
        return p->tok.kind == TOK_PUNCT && p->tok.start[0] == c;
}

static bool at_name(const struct parser *p, const char *name)
{
        return p->tok.kind == TOK_NAME && p->tok.len == strlen(name) && memcmp(p->tok.start, name, p->tok.len) == 0;
}

static int expect_punct(struct parser *p, char c)
{
        char what[8];

        if (!at_punct(p, c)) {
                snprintf(what, sizeof(what), "\"%s\"", c == '.' ? "..." : (char[]){ c, 0 });
                return unexpected(p, what);
        }
        return gql_lex(p);
}

static int parse_name(struct parser *p, const char **ret)
{
        if (p->tok.kind != TOK_NAME)
                return unexpected(p, "a name");
        *ret = gql_arena_strndup(p->doc, p->tok.start, p->tok.len);
        return gql_lex(p);
}

/* A zeroed node at the current token, counted against GQL_NODES_MAX. */
static void *new_node(struct parser *p, size_t size)
{
        if (++p->nodes > GQL_NODES_MAX) {
                gql_fail(p, p->tok.line, p->tok.column, "the document has more than %d nodes", GQL_NODES_MAX);
                return NULL;
        }
        return arena_alloc(p->doc, size);
}

static int enter(struct parser *p)
{
        if (++p->depth > GQL_DEPTH_MAX)
                return gql_fail(p, p->tok.line, p->tok.column, "nested more than %d levels deep", GQL_DEPTH_MAX);
        return 0;
}

/* The index of the later of two equal names, or -1; frees names. */
static ssize_t duplicate_name(const char **names, size_t n)
{
        struct strmap seen;
        ssize_t dup = -1;

        if (n <= 16) {
                for (size_t i = 1; i < n; i++)
                        for (size_t j = 0; j < i; j++)
                                if (streq(names[i], names[j])) {
                                        free(names);
                                        return (ssize_t)i;
                                }
                free(names);
                return -1;
        }
        strmap_init(&seen);
        for (size_t i = 0; i < n && dup < 0; i++) {
                if (strmap_get(&seen, names[i]) >= 0)
                        dup = (ssize_t)i;
                strmap_put(&seen, names[i], 0);
        }
        strmap_free(&seen);
        free(names);
        return dup;
}

static int parse_value(struct parser *p, bool constant, struct value **ret);

/* Name : Value, for arguments and object fields; ends at `close`. */
static int parse_arg_list(struct parser *p, bool constant, char close, struct arg ***ret, size_t *ret_n)
{
        struct arg *head = NULL, *tail = NULL;
        size_t n = 0;
        int r;

        do {
                struct arg *a = new_node(p, sizeof(*a));
                if (!a)
                        return -EINVAL;
                a->line = p->tok.line;
                a->column = p->tok.column;
                if ((r = parse_name(p, &a->name)) < 0 || (r = expect_punct(p, ':')) < 0 ||
                    (r = parse_value(p, constant, &a->value)) < 0)
                        return r;
                LIST_APPEND(head, tail, a);
                n++;
        } while (!at_punct(p, close));
        LIST_TO_ARRAY(p->doc, head, n, *ret);
        *ret_n = n;
        const char **names = xmalloc((n + 1) * sizeof(*names));
        for (size_t i = 0; i < n; i++)
                names[i] = (*ret)[i]->name;
        ssize_t k = duplicate_name(names, n);
        if (k >= 0) {
                const struct arg *dup = (*ret)[k];
                return gql_fail(p, dup->line, dup->column,
                                close == ')' ? "argument \"%s\" is given twice"
                                             : "field \"%s\" is given twice in an object",
                                dup->name);
        }
        return gql_lex(p);
}

static int parse_value(struct parser *p, bool constant, struct value **ret)
{
        struct value *v = new_node(p, sizeof(*v));
        json_error_t jerr;
        int r;

        if (!v)
                return -EINVAL;
        v->line = p->tok.line;
        v->column = p->tok.column;
        *ret = v;
        switch (p->tok.kind) {
        case TOK_PUNCT:
                if (at_punct(p, '$') && !constant) {
                        v->kind = VAL_VARIABLE;
                        if ((r = gql_lex(p)) < 0)
                                return r;
                        return parse_name(p, &v->text);
                }
                if (at_punct(p, '[')) {
                        struct value *head = NULL, *tail = NULL;
                        v->kind = VAL_LIST;
                        if ((r = enter(p)) < 0 || (r = gql_lex(p)) < 0)
                                return r;
                        while (!at_punct(p, ']')) {
                                struct value *item = NULL;
                                if ((r = parse_value(p, constant, &item)) < 0)
                                        return r;
                                LIST_APPEND(head, tail, item);
                                v->n++;
                        }
                        LIST_TO_ARRAY(p->doc, head, v->n, v->items);
                        p->depth--;
                        return gql_lex(p);
                }
                if (at_punct(p, '{')) {
                        v->kind = VAL_OBJECT;
                        if ((r = enter(p)) < 0 || (r = gql_lex(p)) < 0)
                                return r;
                        if (at_punct(p, '}')) {
                                p->depth--;
                                return gql_lex(p);
                        }
                        if ((r = parse_arg_list(p, constant, '}', &v->fields, &v->n)) < 0)
                                return r;
                        p->depth--;
                        return 0;
                }
                break;
        case TOK_INT:
        case TOK_FLOAT: {
                /* The grammar of both is JSON's: let jansson convert them. */
                json_t *j = json_loadb(p->tok.start, p->tok.len, JSON_DECODE_ANY, &jerr);
                bool is_int = p->tok.kind == TOK_INT;
                if (!j || (is_int ? !json_is_integer(j) : !json_is_real(j))) {
                        json_decref(j);
                        int shown = p->tok.len > 40 ? 37 : (int)p->tok.len;
                        return gql_fail(p, v->line, v->column, "%s \"%.*s%s\" is out of range",
                                        is_int ? "integer" : "float", shown, p->tok.start,
                                        (size_t)shown < p->tok.len ? "..." : "");
                }
                v->kind = is_int ? VAL_INT : VAL_FLOAT;
                if (is_int)
                        v->i = json_integer_value(j);
                else
                        v->f = json_real_value(j);
                json_decref(j);
                v->text = gql_arena_strndup(p->doc, p->tok.start, p->tok.len);
                return gql_lex(p);
        }
        case TOK_STRING:
        case TOK_BLOCK_STRING:
                v->kind = VAL_STRING;
                v->text = p->tok.value;
                v->len = p->tok.value_len;
                return gql_lex(p);
        case TOK_NAME:
                if (at_name(p, "true") || at_name(p, "false")) {
                        v->kind = VAL_BOOLEAN;
                        v->b = at_name(p, "true");
                } else {
                        v->kind = at_name(p, "null") ? VAL_NULL : VAL_ENUM;
                }
                return parse_name(p, &v->text);
        default:
                break;
        }
        return unexpected(p, constant ? "a constant value" : "a value");
}

static int parse_args(struct parser *p, bool constant, struct arg ***ret, size_t *ret_n)
{
        int r;

        if (!at_punct(p, '('))
                return 0;
        if ((r = gql_lex(p)) < 0)
                return r;
        return parse_arg_list(p, constant, ')', ret, ret_n);
}

static int parse_directives(struct parser *p, bool constant, struct directive ***ret, size_t *ret_n)
{
        struct directive *head = NULL, *tail = NULL;
        size_t n = 0;
        int r;

        while (at_punct(p, '@')) {
                struct directive *d = new_node(p, sizeof(*d));
                if (!d)
                        return -EINVAL;
                d->line = p->tok.line;
                d->column = p->tok.column;
                if ((r = gql_lex(p)) < 0 || (r = parse_name(p, &d->name)) < 0 ||
                    (r = parse_args(p, constant, &d->args, &d->n_args)) < 0)
                        return r;
                LIST_APPEND(head, tail, d);
                n++;
        }
        LIST_TO_ARRAY(p->doc, head, n, *ret);
        *ret_n = n;
        return 0;
}

static int parse_selection_set(struct parser *p, struct gql_selection_set **ret);

/* "...": a fragment spread, or an inline fragment. */
static int parse_fragment_selection(struct parser *p, struct selection *s)
{
        int r;

        if ((r = gql_lex(p)) < 0)
                return r;
        if (p->tok.kind == TOK_NAME && !at_name(p, "on")) {
                s->kind = SEL_SPREAD;
                if ((r = parse_name(p, &s->name)) < 0)
                        return r;
                return parse_directives(p, false, &s->dirs, &s->n_dirs);
        }
        s->kind = SEL_INLINE;
        if (at_name(p, "on") && ((r = gql_lex(p)) < 0 || (r = parse_name(p, &s->type_cond)) < 0))
                return r;
        if ((r = parse_directives(p, false, &s->dirs, &s->n_dirs)) < 0)
                return r;
        return parse_selection_set(p, &s->set);
}

static int parse_selection(struct parser *p, struct selection **ret)
{
        struct selection *s;
        int r;

        if (!at_punct(p, '.') && p->tok.kind != TOK_NAME)
                return unexpected(p, "a field or \"...\"");
        s = new_node(p, sizeof(*s));
        if (!s)
                return -EINVAL;
        s->line = p->tok.line;
        s->column = p->tok.column;
        *ret = s;
        if (at_punct(p, '.'))
                return parse_fragment_selection(p, s);
        s->kind = SEL_FIELD;
        if ((r = parse_name(p, &s->name)) < 0)
                return r;
        if (at_punct(p, ':')) {
                s->alias = s->name;
                if ((r = gql_lex(p)) < 0 || (r = parse_name(p, &s->name)) < 0)
                        return r;
        }
        if ((r = parse_args(p, false, &s->args, &s->n_args)) < 0 ||
            (r = parse_directives(p, false, &s->dirs, &s->n_dirs)) < 0)
                return r;
        if (at_punct(p, '{'))
                return parse_selection_set(p, &s->set);
        return 0;
}

static int parse_selection_set(struct parser *p, struct gql_selection_set **ret)
{
        struct gql_selection_set *set;
        struct selection *head = NULL, *tail = NULL;
        int r;

        if (!at_punct(p, '{'))
                return unexpected(p, "\"{\"");
        set = new_node(p, sizeof(*set));
        if (!set)
                return -EINVAL;
        set->line = p->tok.line;
        set->column = p->tok.column;
        if ((r = enter(p)) < 0 || (r = gql_lex(p)) < 0)
                return r;
        do {
                struct selection *s = NULL;
                if ((r = parse_selection(p, &s)) < 0)
                        return r;
                LIST_APPEND(head, tail, s);
                set->n++;
        } while (!at_punct(p, '}'));
        LIST_TO_ARRAY(p->doc, head, set->n, set->v);
        p->depth--;
        *ret = set;
        return gql_lex(p);
}

static int parse_type(struct parser *p, struct type **ret)
{
        struct type *t = new_node(p, sizeof(*t));
        int r;

        if (!t)
                return -EINVAL;
        if (at_punct(p, '[')) {
                t->kind = TYPE_LIST;
                if ((r = enter(p)) < 0 || (r = gql_lex(p)) < 0 || (r = parse_type(p, &t->of)) < 0 ||
                    (r = expect_punct(p, ']')) < 0)
                        return r;
                p->depth--;
        } else if (p->tok.kind == TOK_NAME) {
                t->kind = TYPE_NAMED;
                if ((r = parse_name(p, &t->name)) < 0)
                        return r;
        } else {
                return unexpected(p, "a type");
        }
        if (at_punct(p, '!')) {
                struct type *nn = new_node(p, sizeof(*nn));
                if (!nn)
                        return -EINVAL;
                nn->kind = TYPE_NON_NULL;
                nn->of = t;
                t = nn;
                if ((r = gql_lex(p)) < 0)
                        return r;
        }
        *ret = t;
        return 0;
}

static int parse_variable_definitions(struct parser *p, struct gql_operation *op)
{
        struct vardef *head = NULL, *tail = NULL;
        int r;

        if (!at_punct(p, '('))
                return 0;
        if ((r = gql_lex(p)) < 0)
                return r;
        do {
                struct vardef *d = new_node(p, sizeof(*d));
                if (!d)
                        return -EINVAL;
                d->line = p->tok.line;
                d->column = p->tok.column;
                if (!at_punct(p, '$'))
                        return unexpected(p, "a variable");
                if ((r = gql_lex(p)) < 0 || (r = parse_name(p, &d->name)) < 0 || (r = expect_punct(p, ':')) < 0 ||
                    (r = parse_type(p, &d->type)) < 0)
                        return r;
                if (at_punct(p, '=') && ((r = gql_lex(p)) < 0 || (r = parse_value(p, true, &d->def)) < 0))
                        return r;
                if ((r = parse_directives(p, true, &d->dirs, &d->n_dirs)) < 0)
                        return r;
                LIST_APPEND(head, tail, d);
                op->n_vars++;
        } while (!at_punct(p, ')'));
        LIST_TO_ARRAY(p->doc, head, op->n_vars, op->vars);
        const char **names = xmalloc((op->n_vars + 1) * sizeof(*names));
        for (size_t i = 0; i < op->n_vars; i++)
                names[i] = op->vars[i]->name;
        ssize_t k = duplicate_name(names, op->n_vars);
        if (k >= 0)
                return gql_fail(p, op->vars[k]->line, op->vars[k]->column, "variable \"$%s\" is defined twice",
                                op->vars[k]->name);
        return gql_lex(p);
}

static int parse_operation(struct parser *p, struct gql_operation *op)
{
        int r;

        op->type = GQL_QUERY;
        if (at_punct(p, '{'))
                return parse_selection_set(p, &op->set);
        if (at_name(p, "mutation"))
                op->type = GQL_MUTATION;
        else if (at_name(p, "subscription"))
                op->type = GQL_SUBSCRIPTION;
        if ((r = gql_lex(p)) < 0)
                return r;
        if (p->tok.kind == TOK_NAME && (r = parse_name(p, &op->name)) < 0)
                return r;
        if ((r = parse_variable_definitions(p, op)) < 0 || (r = parse_directives(p, false, &op->dirs, &op->n_dirs)) < 0)
                return r;
        return parse_selection_set(p, &op->set);
}

static int parse_fragment(struct parser *p, struct fragment *f)
{
        int r;

        if ((r = gql_lex(p)) < 0)
                return r;
        if (p->tok.kind != TOK_NAME || at_name(p, "on"))
                return unexpected(p, "a fragment name");
        if ((r = parse_name(p, &f->name)) < 0)
                return r;
        if (!at_name(p, "on"))
                return unexpected(p, "\"on\"");
        if ((r = gql_lex(p)) < 0 || (r = parse_name(p, &f->type_cond)) < 0 ||
            (r = parse_directives(p, false, &f->dirs, &f->n_dirs)) < 0)
                return r;
        return parse_selection_set(p, &f->set);
}

static const char *const type_system_keywords[] = {
        "schema", "scalar", "type", "interface", "union", "enum", "input", "directive", "extend",
};

#define DEFINITION_EXPECTED "\"query\", \"mutation\", \"subscription\", \"fragment\" or \"{\""

static int parse_document(struct parser *p)
{
        struct gql_operation *ops = NULL, *ops_tail = NULL;
        struct fragment *frags = NULL, *frags_tail = NULL;
        size_t n_defs = 0;
        int r;

        if ((r = gql_lex(p)) < 0)
                return r;
        do {
                unsigned line = p->tok.line, column = p->tok.column;
                if (at_punct(p, '{') || at_name(p, "query") || at_name(p, "mutation") || at_name(p, "subscription")) {
                        struct gql_operation *op = new_node(p, sizeof(*op));
                        if (!op)
                                return -EINVAL;
                        if (p->doc->n_ops == GQL_OPERATIONS_MAX)
                                return gql_fail(p, line, column, "the document has more than %d operations",
                                                GQL_OPERATIONS_MAX);
                        op->line = line;
                        op->column = column;
                        op->def_index = n_defs++;
                        if ((r = parse_operation(p, op)) < 0)
                                return r;
                        LIST_APPEND(ops, ops_tail, op);
                        p->doc->n_ops++;
                        continue;
                }
                if (at_name(p, "fragment")) {
                        struct fragment *f = new_node(p, sizeof(*f));
                        if (!f)
                                return -EINVAL;
                        f->line = line;
                        f->column = column;
                        f->def_index = n_defs++;
                        f->index = p->doc->n_frags;
                        if ((r = parse_fragment(p, f)) < 0)
                                return r;
                        LIST_APPEND(frags, frags_tail, f);
                        p->doc->n_frags++;
                        continue;
                }
                for (size_t i = 0; i < ARRAY_SIZE(type_system_keywords); i++)
                        if (at_name(p, type_system_keywords[i]))
                                return gql_fail(p, line, column,
                                                "only executable definitions are supported, found \"%s\"",
                                                type_system_keywords[i]);
                if (p->tok.kind == TOK_STRING || p->tok.kind == TOK_BLOCK_STRING)
                        return gql_fail(p, line, column,
                                        "only executable definitions are supported, found a description");
                return unexpected(p, DEFINITION_EXPECTED);
        } while (p->tok.kind != TOK_EOF);
        LIST_TO_ARRAY(p->doc, ops, p->doc->n_ops, p->doc->ops);
        LIST_TO_ARRAY(p->doc, frags, p->doc->n_frags, p->doc->frags);
        return 0;
}

int gql_parse(const char *text, size_t len, struct gql_doc **ret_doc, struct tess_error **err)
{
        struct parser p = { .s = text, .len = len, .line = 1, .column = 1, .sbuf = BUF_INIT, .err = err };
        int r;

        r = gql_check_source(text, len, err);
        if (r < 0)
                return r;
        p.doc = xcalloc(1, sizeof(*p.doc));
        r = parse_document(&p);
        buf_release(&p.sbuf);
        if (r >= 0)
                r = gql_validate(p.doc, err);
        if (r < 0) {
                gql_doc_free(p.doc);
                return r;
        }
        *ret_doc = p.doc;
        return 0;
}

/* Operations ------------------------------------------------------------------ */

int gql_doc_operation(const struct gql_doc *doc, const char *name, const struct gql_operation **ret_op,
                      struct tess_error **err)
{
        if (!name) {
                if (doc->n_ops == 0)
                        return tess_err(err, EINVAL, "the document has no operation");
                if (doc->n_ops > 1)
                        return tess_err(err, EINVAL,
                                        "operationName is required when the document has several operations");
                *ret_op = doc->ops[0];
                return 0;
        }
        for (size_t i = 0; i < doc->n_ops; i++) {
                if (doc->ops[i]->name && streq(doc->ops[i]->name, name)) {
                        *ret_op = doc->ops[i];
                        return 0;
                }
        }
        return tess_err(err, EINVAL, "the document has no operation named \"%.64s\"", name);
}

size_t gql_doc_n_operations(const struct gql_doc *doc)
{
        return doc->n_ops;
}

const struct gql_operation *gql_doc_operation_at(const struct gql_doc *doc, size_t i)
{
        return i < doc->n_ops ? doc->ops[i] : NULL;
}

const char *gql_operation_name(const struct gql_operation *op)
{
        return op->name;
}

enum gql_op_type gql_operation_type(const struct gql_operation *op)
{
        return op->type;
}

const struct gql_selection_set *gql_operation_selection(const struct gql_operation *op)
{
        return op->set;
}

const char *gql_op_type_to_string(enum gql_op_type t)
{
        switch (t) {
        case GQL_QUERY:
                return "query";
        case GQL_MUTATION:
                return "mutation";
        case GQL_SUBSCRIPTION:
                return "subscription";
        }
        return NULL;
}
