/* index.c - the pass's agent index (see sched-internal.h).
 *
 * The schedulable agents are split into classes by architecture and GPU
 * kind (no GPU, cuda.device, cuda.shares): a session only ever fits agents
 * of its own architecture and GPU kind, and a session asking no GPU looks
 * at the GPU classes only when no agent without GPUs fits.  Each class
 * keeps
 *   - a max-tree over its agents in index order: per node, the most of each
 *     slot and the most on one device that any agent below has free.  Its
 *     root rejects a request nothing can hold at once; roundrobin descends
 *     it to the first agent after the cursor that may fit.
 *   - under concentrated and dispersed, its agents sorted by their free
 *     amounts (GPU, cpu, memory, the rest: the order the selection scores
 *     agents in).  Every agent that can hold a request sorts at or after
 *     the request itself, so concentrated scans up from a binary search and
 *     takes the first that fits; dispersed scans down from the top.
 * An agent that takes a kernel is taken out of the sorted array and put
 * back at its new place (a memmove of a few KiB at most) and its tree path
 * is recomputed: O(log n) per change. */
#include "common/compat.h"

#include "sched/sched-internal.h"

/* The slots in the order the selection compares them. */
static const int key_order[SCHED_NSLOTS] = {
        SCHED_GPU_SHARES, SCHED_GPU_DEVICE, SCHED_CPU, SCHED_MEM, 4, 5, 6, 7,
};

static void agent_key(const struct sched_agent *a, struct sched_vec *ret)
{
        for (int k = 0; k < SCHED_NSLOTS; k++)
                ret->v[k] = a->cap.v[k] - a->used.v[k];
}

static void agent_node(const struct sched_agent *a, struct sched_node *ret)
{
        int64_t dev = 0;

        for (int k = 0; k < SCHED_NSLOTS; k++)
                ret->free[k] = a->cap.v[k] - a->used.v[k];
        for (int d = 0; d < a->ndev; d++)
                if (a->dev[d].cap - a->dev[d].used > dev)
                        dev = a->dev[d].cap - a->dev[d].used;
        ret->dev_free = dev;
}

static void node_empty(struct sched_node *nd)
{
        for (int k = 0; k < SCHED_NSLOTS; k++)
                nd->free[k] = INT64_MIN;
        nd->dev_free = INT64_MIN;
}

static void node_join(struct sched_node *nd, const struct sched_node *l, const struct sched_node *r)
{
        for (int k = 0; k < SCHED_NSLOTS; k++)
                nd->free[k] = l->free[k] > r->free[k] ? l->free[k] : r->free[k];
        nd->dev_free = l->dev_free > r->dev_free ? l->dev_free : r->dev_free;
}

static int key_cmp(const struct sched_vec *a, const struct sched_vec *b)
{
        for (int i = 0; i < SCHED_NSLOTS; i++) {
                int k = key_order[i];
                if (a->v[k] != b->v[k])
                        return a->v[k] < b->v[k] ? -1 : 1;
        }
        return 0;
}

int sched_index_cmp(const struct sched_index *ix, int a, int b)
{
        int c = key_cmp(&ix->key[a], &ix->key[b]);

        if (c)
                return c;
        if (a == b)
                return 0;
        return (a < b) == !ix->dispersed ? -1 : 1;
}

static int cmp_qsort(const void *pa, const void *pb, void *ix)
{
        return sched_index_cmp(ix, *(const int *)pa, *(const int *)pb);
}

struct sched_class *sched_index_class(const struct sched_index *ix, int arch, int kind)
{
        for (int c = 0; c < ix->nclass; c++)
                if (ix->cls[c].arch == arch && ix->cls[c].kind == kind)
                        return &ix->cls[c];
        return NULL;
}

static void tree_set_leaf(struct sched_class *c, int pos, const struct sched_agent *a)
{
        int i = c->size + pos;

        agent_node(a, &c->tree[i]);
        for (i /= 2; i >= 1; i /= 2)
                node_join(&c->tree[i], &c->tree[2 * i], &c->tree[2 * i + 1]);
}

static void class_build(struct sched_index *ix, struct sched_class *c)
{
        const struct sched_input *in = ix->in;

        c->min_maxcap = INT64_MAX;
        for (int k = 0; k < SCHED_NSLOTS; k++)
                c->min_free.v[k] = INT64_MAX;
        for (int p = 0; p < c->size; p++) {
                if (p >= c->n) {
                        node_empty(&c->tree[c->size + p]);
                        continue;
                }
                const struct sched_agent *a = &in->agents[c->byidx[p]];
                int64_t maxcap = 0;
                agent_node(a, &c->tree[c->size + p]);
                for (int k = 0; k < SCHED_NSLOTS; k++)
                        if (c->tree[c->size + p].free[k] < c->min_free.v[k])
                                c->min_free.v[k] = c->tree[c->size + p].free[k];
                for (int d = 0; d < a->ndev; d++)
                        if (a->dev[d].cap > maxcap)
                                maxcap = a->dev[d].cap;
                if (maxcap < c->min_maxcap)
                        c->min_maxcap = maxcap;
        }
        for (int i = c->size - 1; i >= 1; i--)
                node_join(&c->tree[i], &c->tree[2 * i], &c->tree[2 * i + 1]);
        if (!ix->sorted)
                return;
        memcpy(c->sorted, c->byidx, sizeof(int) * (size_t)c->n);
        qsort_r(c->sorted, (size_t)c->n, sizeof(int), cmp_qsort, ix);
}

/* Everything lives in one allocation (ix->arena):
 *   key[nagents]  dev_free[nagents]  tree nodes of every class  classes
 *   class_of[nagents]  leaf_of[nagents]  byidx[nagents]  sorted[nagents]
 * the ints partitioned between the classes in class order. */
void sched_index_build(struct sched_index *ix, const struct sched_input *in)
{
        size_t n = (size_t)(in->nagents > 0 ? in->nagents : 0);
        struct sched_class small[8], *cls = small;
        int nclass = 0, capclass = (int)ARRAY_SIZE(small);
        size_t nodes = 0;
        int *class_of = xmalloc(sizeof(int) * (n ? n : 1));

        /* the classes, and how many agents each */
        for (size_t a = 0; a < n; a++) {
                const struct sched_agent *ag = &in->agents[a];
                int c;
                class_of[a] = -1;
                if (!ag->schedulable)
                        continue;
                for (c = 0; c < nclass; c++)
                        if (cls[c].arch == ag->arch && cls[c].kind == sched_agent_kind(ag))
                                break;
                if (c == nclass) {
                        if (nclass == capclass) {
                                struct sched_class *more = xmalloc(sizeof(*more) * (size_t)capclass * 2);
                                memcpy(more, cls, sizeof(*more) * (size_t)nclass);
                                if (cls != small)
                                        free(cls);
                                cls = more;
                                capclass *= 2;
                        }
                        cls[nclass++] = (struct sched_class){ .arch = ag->arch, .kind = sched_agent_kind(ag) };
                }
                class_of[a] = c;
                cls[c].n++;
        }
        for (int c = 0; c < nclass; c++) {
                cls[c].size = 1;
                while (cls[c].size < cls[c].n)
                        cls[c].size *= 2;
                nodes += 2 * (size_t)cls[c].size;
        }

        size_t off_dev = sizeof(struct sched_vec) * n;
        size_t off_tree = off_dev + sizeof(int64_t) * n;
        size_t off_cls = off_tree + sizeof(struct sched_node) * nodes;
        size_t off_ints = off_cls + sizeof(struct sched_class) * (size_t)nclass;
        char *arena = xmalloc(off_ints + sizeof(int) * 4 * n + 1);

        *ix = (struct sched_index){
                .in = in,
                .sorted = in->policy.select != SCHED_ROUNDROBIN,
                .dispersed = in->policy.select == SCHED_DISPERSED,
                .arena = arena,
                .key = (struct sched_vec *)arena,
                .dev_free = (int64_t *)(arena + off_dev),
                .cls = (struct sched_class *)(arena + off_cls),
                .nclass = nclass,
                .class_of = (int *)(arena + off_ints),
                .leaf_of = (int *)(arena + off_ints) + n,
        };
        memcpy(ix->class_of, class_of, sizeof(int) * n);
        free(class_of);
        struct sched_node *tree = (struct sched_node *)(arena + off_tree);
        int *byidx = ix->leaf_of + n, *sorted = byidx + n;
        for (int c = 0; c < nclass; c++) {
                struct sched_class *cl = &ix->cls[c];
                *cl = cls[c];
                cl->tree = tree;
                cl->byidx = byidx;
                cl->sorted = sorted;
                tree += 2 * (size_t)cl->size;
                byidx += cl->n;
                sorted += cl->n;
                cl->n = 0;
        }
        if (cls != small)
                free(cls);
        for (size_t a = 0; a < n; a++) {
                struct sched_node nd;
                agent_node(&in->agents[a], &nd);
                agent_key(&in->agents[a], &ix->key[a]);
                ix->dev_free[a] = nd.dev_free;
                if (ix->class_of[a] < 0)
                        continue;
                struct sched_class *cl = &ix->cls[ix->class_of[a]];
                ix->leaf_of[a] = cl->n;
                cl->byidx[cl->n++] = (int)a;
        }
        for (int c = 0; c < nclass; c++)
                class_build(ix, &ix->cls[c]);
}

void sched_index_free(struct sched_index *ix)
{
        free(ix->arena);
        *ix = (struct sched_index){ 0 };
}

/* Position of agent a in c->sorted (by its stored key), or where it goes. */
static int sorted_find(const struct sched_index *ix, const struct sched_class *c, int a)
{
        int lo = 0, hi = c->n;

        while (lo < hi) {
                int mid = lo + (hi - lo) / 2;
                if (sched_index_cmp(ix, c->sorted[mid], a) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

void sched_index_remove(struct sched_index *ix, int a)
{
        if (ix->class_of[a] < 0 || !ix->sorted)
                return;
        struct sched_class *c = &ix->cls[ix->class_of[a]];
        int p = sorted_find(ix, c, a);
        if (p < c->n && c->sorted[p] == a) {
                memmove(&c->sorted[p], &c->sorted[p + 1], sizeof(int) * (size_t)(c->n - p - 1));
                c->sorted[c->n - 1] = -1;
        }
}

void sched_index_insert(struct sched_index *ix, int a)
{
        if (ix->class_of[a] < 0)
                return;
        struct sched_class *c = &ix->cls[ix->class_of[a]];
        agent_key(&ix->in->agents[a], &ix->key[a]);
        for (int k = 0; k < SCHED_NSLOTS; k++)
                if (ix->key[a].v[k] < c->min_free.v[k])
                        c->min_free.v[k] = ix->key[a].v[k];
        tree_set_leaf(c, ix->leaf_of[a], &ix->in->agents[a]);
        ix->dev_free[a] = c->tree[c->size + ix->leaf_of[a]].dev_free;
        if (!ix->sorted)
                return;
        /* the slot freed by sched_index_remove() is the last one */
        int len = c->n - 1, lo = 0, hi = len;
        while (lo < hi) {
                int mid = lo + (hi - lo) / 2;
                if (sched_index_cmp(ix, c->sorted[mid], a) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        memmove(&c->sorted[lo + 1], &c->sorted[lo], sizeof(int) * (size_t)(len - lo));
        c->sorted[lo] = a;
}
