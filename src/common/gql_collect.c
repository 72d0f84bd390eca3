/* gql_collect.c - CollectFields (spec §6.3.2): the fields of a selection set
 * for an object type, @skip and @include honoured, fragments followed, fields
 * of the same response key merged (gql_collect_fields, gql_fields_release). */
#include "common/compat.h"

#include <jansson.h>

#include "common/gql-internal.h"
#include "common/strmap.h"

struct group {
        const struct selection *first;
        json_t *args;
        const struct gql_selection_set **sets;
        size_t n_sets, cap_sets;
};

struct collector {
        const char *type_name;
        const char *const *also_types;
        const json_t *vars;
        struct group *groups;
        size_t n, cap;
        struct strmap keys; /* response key -> group */
        unsigned char *visited;
        struct tess_error **err;
};

static bool type_applies(const struct collector *c, const char *type_cond)
{
        if (!type_cond || streq(type_cond, c->type_name))
                return true;
        for (const char *const *t = c->also_types; t && *t; t++)
                if (streq(type_cond, *t))
                        return true;
        return false;
}

/* Whether @skip and @include let a selection in. */
static int included(const struct collector *c, struct directive *const *dirs, size_t n, bool *ret)
{
        *ret = true;
        for (size_t i = 0; i < n; i++) {
                const struct directive *d = dirs[i];
                const struct value *v = NULL;
                const json_t *j;
                bool skip = streq(d->name, "skip");
                if (!skip && !streq(d->name, "include"))
                        continue;
                for (size_t k = 0; k < d->n_args; k++)
                        if (streq(d->args[k]->name, "if"))
                                v = d->args[k]->value;
                if (!v)
                        return gql_err_at(c->err, d->line, d->column, "@%s needs the argument \"if\"", d->name);
                if (v->kind == VAL_BOOLEAN) {
                        if (v->b == skip)
                                *ret = false;
                        continue;
                }
                j = v->kind == VAL_VARIABLE && c->vars ? json_object_get(c->vars, v->text) : NULL;
                if (!json_is_boolean(j))
                        return gql_err_at(c->err, v->line, v->column, "@%s(if:) must be a Boolean", d->name);
                if (json_is_true(j) == skip)
                        *ret = false;
        }
        return 0;
}

static void group_add_set(struct group *g, const struct gql_selection_set *set)
{
        if (g->n_sets == g->cap_sets) {
                g->cap_sets = g->cap_sets ? 2 * g->cap_sets : 2;
                g->sets = xrealloc(g->sets, g->cap_sets * sizeof(*g->sets));
        }
        g->sets[g->n_sets++] = set;
}

static int add_field(struct collector *c, const struct selection *s)
{
        const char *key = s->alias ? s->alias : s->name;
        json_t *args = gql_args_json(s->args, s->n_args, c->vars);
        int k = strmap_get(&c->keys, key);
        struct group *g;
        int r = 0;

        if (k < 0) {
                if (c->n == c->cap) {
                        c->cap = c->cap ? 2 * c->cap : 8;
                        c->groups = xrealloc(c->groups, c->cap * sizeof(*c->groups));
                }
                g = &c->groups[c->n];
                *g = (struct group){ .first = s, .args = args };
                if (s->set)
                        group_add_set(g, s->set);
                strmap_put(&c->keys, key, (int)c->n++);
                return 0;
        }
        g = &c->groups[k];
        if (!streq(g->first->name, s->name))
                r = gql_err_at(c->err, s->line, s->column,
                               "fields \"%s\" conflict: \"%s\" and \"%s\" are different fields", key, g->first->name,
                               s->name);
        else if (!json_equal(g->args, args))
                r = gql_err_at(c->err, s->line, s->column, "fields \"%s\" conflict: they have different arguments",
                               key);
        else if (!g->first->set != !s->set)
                r = gql_err_at(c->err, s->line, s->column,
                               "fields \"%s\" conflict: one has a selection set and the other not", key);
        else if (s->set)
                group_add_set(g, s->set);
        json_decref(args);
        return r;
}

static int collect_set(struct collector *c, const struct gql_selection_set *set)
{
        int r = 0;

        for (size_t i = 0; i < set->n && r >= 0; i++) {
                const struct selection *s = set->v[i];
                bool in;
                if ((r = included(c, s->dirs, s->n_dirs, &in)) < 0 || !in)
                        continue;
                switch (s->kind) {
                case SEL_FIELD:
                        r = add_field(c, s);
                        break;
                case SEL_SPREAD:
                        if (c->visited[s->frag->index])
                                break;
                        c->visited[s->frag->index] = 1;
                        if (type_applies(c, s->frag->type_cond))
                                r = collect_set(c, s->frag->set);
                        break;
                case SEL_INLINE:
                        if (type_applies(c, s->type_cond))
                                r = collect_set(c, s->set);
                        break;
                }
        }
        return r;
}

int gql_collect_fields(const struct gql_doc *doc, const struct gql_selection_set *set, const char *type_name,
                       const char *const *also_types, const json_t *vars, struct gql_fields *ret,
                       struct tess_error **err)
{
        struct collector c = { .type_name = type_name, .also_types = also_types, .vars = vars, .err = err };
        struct gql_fields out = GQL_FIELDS_INIT;
        int r;

        strmap_init(&c.keys);
        c.visited = xcalloc(doc->n_frags + 1, 1);
        r = collect_set(&c, set);
        if (r >= 0) {
                out.v = xcalloc(c.n + 1, sizeof(*out.v));
                out.merged = xcalloc(c.n + 1, sizeof(*out.merged));
        }
        for (size_t i = 0; i < c.n; i++) {
                struct group *g = &c.groups[i];
                if (r < 0) {
                        json_decref(g->args);
                        free(g->sets);
                        continue;
                }
                struct gql_field *f = &out.v[out.n++];
                *f = (struct gql_field){ .key = g->first->alias ? g->first->alias : g->first->name,
                                         .name = g->first->name,
                                         .args = g->args,
                                         .line = g->first->line,
                                         .column = g->first->column };
                if (g->n_sets == 1) {
                        f->selection = g->sets[0];
                } else if (g->n_sets > 1) {
                        struct gql_selection_set *m = xcalloc(1, sizeof(*m));
                        for (size_t k = 0; k < g->n_sets; k++)
                                m->n += g->sets[k]->n;
                        m->v = xmalloc(m->n * sizeof(*m->v));
                        for (size_t k = 0, at = 0; k < g->n_sets; at += g->sets[k]->n, k++)
                                memcpy(m->v + at, g->sets[k]->v, g->sets[k]->n * sizeof(*m->v));
                        m->line = g->sets[0]->line;
                        m->column = g->sets[0]->column;
                        out.merged[out.n_merged++] = m;
                        f->selection = m;
                }
                free(g->sets);
        }
        free(c.groups);
        free(c.visited);
        strmap_free(&c.keys);
        if (r < 0)
                return r;
        *ret = out;
        return 0;
}

void gql_fields_release(struct gql_fields *f)
{
        for (size_t i = 0; i < f->n; i++)
                json_decref(f->v[i].args);
        for (size_t i = 0; i < f->n_merged; i++) {
                free(f->merged[i]->v);
                free(f->merged[i]);
        }
        free(f->v);
        free(f->merged);
        *f = (struct gql_fields)GQL_FIELDS_INIT;
}
