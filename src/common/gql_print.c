/* gql_print.c - a document in a canonical one-line-per-definition form
 * (gql_doc_print), and types as written (for gql_vars.c's messages too). */
#include "common/compat.h"

#include "common/buf.h"
#include "common/gql-internal.h"

void gql_type_print(struct buf *b, const struct type *t)
{
        switch (t->kind) {
        case TYPE_NAMED:
                buf_puts(b, t->name);
                break;
        case TYPE_LIST:
                buf_putc(b, '[');
                gql_type_print(b, t->of);
                buf_putc(b, ']');
                break;
        case TYPE_NON_NULL:
                gql_type_print(b, t->of);
                buf_putc(b, '!');
                break;
        }
}

static void print_string(struct buf *b, const char *s, size_t n)
{
        buf_putc(b, '"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                const char *e = c && c != '/' ? strchr(gql_escaped, c) : NULL;
                if (e)
                        buf_printf(b, "\\%c", gql_escapes[e - gql_escaped]);
                else if (c < 0x20 || c == 0x7f)
                        buf_printf(b, "\\u%04X", c);
                else
                        buf_putc(b, (char)c);
        }
        buf_putc(b, '"');
}

static void print_args(struct buf *b, struct arg *const *args, size_t n, char open, char close);

static void print_value(struct buf *b, const struct value *v)
{
        switch (v->kind) {
        case VAL_VARIABLE:
                buf_printf(b, "$%s", v->text);
                break;
        case VAL_STRING:
                print_string(b, v->text, v->len);
                break;
        case VAL_LIST:
                buf_putc(b, '[');
                for (size_t i = 0; i < v->n; i++) {
                        if (i > 0)
                                buf_puts(b, ", ");
                        print_value(b, v->items[i]);
                }
                buf_putc(b, ']');
                break;
        case VAL_OBJECT:
                if (v->n == 0)
                        buf_puts(b, "{}");
                print_args(b, v->fields, v->n, '{', '}');
                break;
        default: /* numbers as written, true, false, null, enum values */
                buf_puts(b, v->text);
        }
}

static void print_args(struct buf *b, struct arg *const *args, size_t n, char open, char close)
{
        for (size_t i = 0; i < n; i++) {
                buf_puts(b, i == 0 ? (char[]){ open, 0 } : ", ");
                buf_printf(b, "%s: ", args[i]->name);
                print_value(b, args[i]->value);
        }
        if (n > 0)
                buf_putc(b, close);
}

static void print_directives(struct buf *b, struct directive *const *dirs, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                buf_printf(b, " @%s", dirs[i]->name);
                print_args(b, dirs[i]->args, dirs[i]->n_args, '(', ')');
        }
}

static void print_set(struct buf *b, const struct gql_selection_set *set)
{
        buf_putc(b, '{');
        for (size_t i = 0; i < set->n; i++) {
                const struct selection *s = set->v[i];
                buf_putc(b, ' ');
                if (s->kind == SEL_FIELD) {
                        if (s->alias)
                                buf_printf(b, "%s: ", s->alias);
                        buf_puts(b, s->name);
                        print_args(b, s->args, s->n_args, '(', ')');
                } else if (s->kind == SEL_SPREAD) {
                        buf_printf(b, "...%s", s->name);
                } else {
                        buf_puts(b, "...");
                        if (s->type_cond)
                                buf_printf(b, " on %s", s->type_cond);
                }
                print_directives(b, s->dirs, s->n_dirs);
                if (s->set) {
                        buf_putc(b, ' ');
                        print_set(b, s->set);
                }
        }
        buf_puts(b, " }");
}

static void print_operation(struct buf *b, const struct gql_operation *op)
{
        if (op->type == GQL_QUERY && !op->name && op->n_vars == 0 && op->n_dirs == 0) {
                print_set(b, op->set);
                return;
        }
        buf_puts(b, gql_op_type_to_string(op->type));
        if (op->name)
                buf_printf(b, " %s", op->name);
        for (size_t i = 0; i < op->n_vars; i++) {
                const struct vardef *d = op->vars[i];
                buf_printf(b, "%s$%s: ", i == 0 ? "(" : ", ", d->name);
                gql_type_print(b, d->type);
                if (d->def) {
                        buf_puts(b, " = ");
                        print_value(b, d->def);
                }
                print_directives(b, d->dirs, d->n_dirs);
        }
        if (op->n_vars > 0)
                buf_putc(b, ')');
        print_directives(b, op->dirs, op->n_dirs);
        buf_putc(b, ' ');
        print_set(b, op->set);
}

void gql_doc_print(const struct gql_doc *doc, struct buf *out)
{
        size_t o = 0, f = 0;

        while (o < doc->n_ops || f < doc->n_frags) {
                if (o + f > 0)
                        buf_putc(out, '\n');
                if (f == doc->n_frags || (o < doc->n_ops && doc->ops[o]->def_index < doc->frags[f]->def_index)) {
                        print_operation(out, doc->ops[o++]);
                        continue;
                }
                const struct fragment *fr = doc->frags[f++];
                buf_printf(out, "fragment %s on %s", fr->name, fr->type_cond);
                print_directives(out, fr->dirs, fr->n_dirs);
                buf_putc(out, ' ');
                print_set(out, fr->set);
        }
}
