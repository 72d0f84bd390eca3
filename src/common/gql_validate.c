/* gql_validate.c - what execution needs of a parsed document (spec §5):
 * unique operation and fragment names, a lone anonymous operation, fragment
 * spreads resolved, without cycles and within GQL_DEPTH_MAX, and every
 * variable an operation uses (directly or through its fragments) defined
 * by it. */
#include "common/compat.h"

#include "common/gql-internal.h"
#include "common/strmap.h"

enum {
        WHITE, /* not visited yet */
        GRAY,  /* on the stack of fragments being walked */
        BLACK, /* done: depth known */
};

struct validator {
        struct gql_doc *doc;
        struct tess_error **err;
        struct strmap frag_index;
        unsigned char *color;
        unsigned *depth;                                 /* of a BLACK fragment's selection set */
        const struct fragment *stack[GQL_DEPTH_MAX + 1]; /* the GRAY fragments */
        size_t n_stack;
};

static int too_deep(struct validator *v, unsigned line, unsigned column)
{
        return gql_err_at(v->err, line, column, "selection sets nest more than %d levels deep (fragments included)",
                          GQL_DEPTH_MAX);
}

static int fragment_cycle(struct validator *v, const struct selection *spread, const struct fragment *f)
{
        struct buf path = BUF_INIT;
        size_t i = 0;
        int r;

        while (v->stack[i] != f)
                i++;
        for (; i < v->n_stack; i++)
                buf_printf(&path, "%.64s -> ", v->stack[i]->name);
        buf_printf(&path, "%.64s", f->name);
        r = gql_err_at(v->err, spread->line, spread->column, "fragment \"%s\" spreads itself: %s", f->name, path.data);
        buf_release(&path);
        return r;
}

static int walk_set(struct validator *v, struct gql_selection_set *set, unsigned level, unsigned *ret_max);

/* Walk a fragment first reached from a selection set at level (0 for a
 * fragment no operation spreads), at line:column. */
static int walk_fragment(struct validator *v, struct fragment *f, unsigned level, unsigned line, unsigned column)
{
        unsigned max;
        int r;

        if (level + 1 > GQL_DEPTH_MAX)
                return too_deep(v, line, column);
        v->color[f->index] = GRAY;
        v->stack[v->n_stack++] = f;
        r = walk_set(v, f->set, level + 1, &max);
        if (r < 0)
                return r;
        v->n_stack--;
        v->color[f->index] = BLACK;
        v->depth[f->index] = max - level;
        return 0;
}

/* Resolve the spreads of set (at nesting level), find cycles, and set
 * *ret_max to the deepest level reached through fields and fragments. */
static int walk_set(struct validator *v, struct gql_selection_set *set, unsigned level, unsigned *ret_max)
{
        unsigned max = level, m;
        int r;

        for (size_t i = 0; i < set->n; i++) {
                struct selection *s = set->v[i];
                if (s->kind != SEL_SPREAD) {
                        if (!s->set)
                                continue;
                        if (level + 1 > GQL_DEPTH_MAX)
                                return too_deep(v, s->set->line, s->set->column);
                        if ((r = walk_set(v, s->set, level + 1, &m)) < 0)
                                return r;
                        max = m > max ? m : max;
                        continue;
                }
                int k = strmap_get(&v->frag_index, s->name);
                if (k < 0)
                        return gql_err_at(v->err, s->line, s->column, "unknown fragment \"%s\"", s->name);
                s->frag = v->doc->frags[k];
                if (v->color[k] == GRAY)
                        return fragment_cycle(v, s, s->frag);
                if (v->color[k] == WHITE && (r = walk_fragment(v, s->frag, level, s->line, s->column)) < 0)
                        return r;
                if (level + v->depth[k] > GQL_DEPTH_MAX)
                        return too_deep(v, s->line, s->column);
                m = level + v->depth[k];
                max = m > max ? m : max;
        }
        *ret_max = max;
        return 0;
}

/* "All Variable Uses Defined" (spec §5.8.3).  Each definition's variable
 * uses and fragment spreads are gathered once, each name once, so checking
 * an operation costs what it and the fragments it reaches use, not their
 * size times the number of operations. */
struct uses {
        const struct value **vars; /* the first use of each variable */
        size_t n_vars;
        const struct fragment **spreads; /* each fragment spread, once */
        size_t n_spreads;
};

struct uses_builder {
        struct uses *u;
        struct strmap names;
        size_t *spread_mark; /* per fragment: mark+1 of the definition that spreads it */
        size_t mark;
};

static void uses_add_value(struct uses_builder *b, const struct value *v)
{
        if (v->kind == VAL_VARIABLE && strmap_get(&b->names, v->text) < 0) {
                strmap_put(&b->names, v->text, 0);
                b->u->vars = xrealloc(b->u->vars, (b->u->n_vars + 1) * sizeof(*b->u->vars));
                b->u->vars[b->u->n_vars++] = v;
        }
        for (size_t i = 0; v->kind == VAL_LIST && i < v->n; i++)
                uses_add_value(b, v->items[i]);
        for (size_t i = 0; v->kind == VAL_OBJECT && i < v->n; i++)
                uses_add_value(b, v->fields[i]->value);
}

static void uses_add_args(struct uses_builder *b, struct arg *const *args, size_t n)
{
        for (size_t i = 0; i < n; i++)
                uses_add_value(b, args[i]->value);
}

static void uses_add_dirs(struct uses_builder *b, struct directive *const *dirs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                uses_add_args(b, dirs[i]->args, dirs[i]->n_args);
}

static void uses_add_set(struct uses_builder *b, const struct gql_selection_set *set)
{
        for (size_t i = 0; i < set->n; i++) {
                const struct selection *s = set->v[i];
                uses_add_dirs(b, s->dirs, s->n_dirs);
                uses_add_args(b, s->args, s->n_args);
                if (s->kind == SEL_SPREAD && b->spread_mark[s->frag->index] != b->mark + 1) {
                        b->spread_mark[s->frag->index] = b->mark + 1;
                        b->u->spreads = xrealloc(b->u->spreads, (b->u->n_spreads + 1) * sizeof(*b->u->spreads));
                        b->u->spreads[b->u->n_spreads++] = s->frag;
                } else if (s->set) {
                        uses_add_set(b, s->set);
                }
        }
}

/* What the definition with these directives and set uses, into *u. */
static void uses_gather(struct uses_builder *b, struct uses *u, struct directive *const *dirs, size_t n_dirs,
                        const struct gql_selection_set *set)
{
        b->u = u;
        b->mark++;
        strmap_init(&b->names);
        uses_add_dirs(b, dirs, n_dirs);
        uses_add_set(b, set);
        strmap_free(&b->names);
}

static void uses_release(struct uses *u)
{
        free(u->vars);
        free(u->spreads);
}

static int check_uses(const struct gql_operation *op, const struct strmap *defined, const struct uses *u,
                      struct tess_error **err)
{
        for (size_t i = 0; i < u->n_vars; i++) {
                const struct value *v = u->vars[i];
                if (strmap_get(defined, v->text) >= 0)
                        continue;
                if (op->name)
                        return gql_err_at(err, v->line, v->column,
                                          "variable \"$%s\" is not defined by operation \"%s\"", v->text, op->name);
                return gql_err_at(err, v->line, v->column, "variable \"$%s\" is not defined by the operation", v->text);
        }
        return 0;
}

/* Check op against its own uses and those of every fragment it reaches;
 * seen and queue have room for every fragment. */
static int check_operation_vars(const struct gql_doc *doc, const struct gql_operation *op, const struct uses *frag_uses,
                                unsigned char *seen, const struct fragment **queue, struct tess_error **err)
{
        struct uses_builder b = { .spread_mark = NULL };
        struct uses own = { .vars = NULL };
        struct strmap defined;
        size_t head = 0, tail = 0;
        int r;

        b.spread_mark = xcalloc(doc->n_frags + 1, sizeof(*b.spread_mark));
        uses_gather(&b, &own, op->dirs, op->n_dirs, op->set);
        free(b.spread_mark);
        strmap_init(&defined);
        for (size_t i = 0; i < op->n_vars; i++)
                strmap_put(&defined, op->vars[i]->name, (int)i);
        memset(seen, 0, doc->n_frags + 1);
        r = check_uses(op, &defined, &own, err);
        for (const struct uses *u = &own; r >= 0 && u;) {
                for (size_t i = 0; i < u->n_spreads; i++) {
                        if (!seen[u->spreads[i]->index]) {
                                seen[u->spreads[i]->index] = 1;
                                queue[tail++] = u->spreads[i];
                        }
                }
                u = head < tail ? &frag_uses[queue[head++]->index] : NULL;
                if (u)
                        r = check_uses(op, &defined, u, err);
        }
        strmap_free(&defined);
        uses_release(&own);
        return r;
}

static int validate_variables(const struct gql_doc *doc, struct tess_error **err)
{
        struct uses *frag_uses = xcalloc(doc->n_frags + 1, sizeof(*frag_uses));
        struct uses_builder b = { .spread_mark = xcalloc(doc->n_frags + 1, sizeof(*b.spread_mark)) };
        unsigned char *seen = xmalloc(doc->n_frags + 1);
        const struct fragment **queue = xmalloc((doc->n_frags + 1) * sizeof(*queue));
        int r = 0;

        for (size_t i = 0; i < doc->n_frags; i++)
                uses_gather(&b, &frag_uses[i], doc->frags[i]->dirs, doc->frags[i]->n_dirs, doc->frags[i]->set);
        for (size_t i = 0; i < doc->n_ops && r >= 0; i++)
                r = check_operation_vars(doc, doc->ops[i], frag_uses, seen, queue, err);
        for (size_t i = 0; i < doc->n_frags; i++)
                uses_release(&frag_uses[i]);
        free(frag_uses);
        free(b.spread_mark);
        free(seen);
        free(queue);
        return r;
}

static int validate_names(struct validator *v)
{
        struct gql_doc *doc = v->doc;
        struct strmap ops;
        int r = 0;

        strmap_init(&ops);
        for (size_t i = 0; i < doc->n_ops && r >= 0; i++) {
                const struct gql_operation *op = doc->ops[i];
                if (!op->name && doc->n_ops > 1)
                        r = gql_err_at(v->err, op->line, op->column,
                                       "an anonymous operation must be the only operation in the document");
                else if (op->name && strmap_get(&ops, op->name) >= 0)
                        r = gql_err_at(v->err, op->line, op->column, "there are two operations named \"%s\"", op->name);
                else if (op->name)
                        strmap_put(&ops, op->name, (int)i);
        }
        strmap_free(&ops);
        for (size_t i = 0; i < doc->n_frags && r >= 0; i++) {
                const struct fragment *f = doc->frags[i];
                if (strmap_get(&v->frag_index, f->name) >= 0)
                        r = gql_err_at(v->err, f->line, f->column, "there are two fragments named \"%s\"", f->name);
                else
                        strmap_put(&v->frag_index, f->name, (int)i);
        }
        return r;
}

int gql_validate(struct gql_doc *doc, struct tess_error **err)
{
        struct validator v = { .doc = doc, .err = err };
        unsigned max;
        int r;

        strmap_init(&v.frag_index);
        v.color = xcalloc(doc->n_frags + 1, 1);
        v.depth = xcalloc(doc->n_frags + 1, sizeof(*v.depth));
        r = validate_names(&v);
        for (size_t i = 0; i < doc->n_ops && r >= 0; i++)
                r = walk_set(&v, doc->ops[i]->set, 1, &max);
        for (size_t i = 0; i < doc->n_frags && r >= 0; i++)
                if (v.color[i] == WHITE)
                        r = walk_fragment(&v, doc->frags[i], 0, doc->frags[i]->line, doc->frags[i]->column);
        if (r >= 0)
                r = validate_variables(doc, err);
        strmap_free(&v.frag_index);
        free(v.color);
        free(v.depth);
        return r;
}
