/* pass.c - one scheduling pass over a resource group's queue.
 *
 * For each session in queue order (order.c): the predicates (predicates.c),
 * then room on the agents (select.c).  A session that finds no room counts
 * a retry.  Under fifo and lifo it then blocks the sessions behind it until
 * it has failed more than `retries_to_skip` times (head-of-line skipping);
 * under any policy it blocks them again once it has failed `reserve_after`
 * times, so the group drains until it fits: no session waits forever
 * behind a stream of smaller ones.  Only a session that would fit some
 * candidate agent were that agent empty blocks: one that never can (larger
 * than any agent, or its designated agents are gone) must not hold the
 * queue.  Blocked sessions are still checked, so their status says the most
 * specific reason they wait.
 *
 * Agents only fill up during a pass, so a request that found no room makes
 * every request at least as large (same GPU part, same shape) fail too:
 * those are answered from a small cache without searching the agents.
 *
 * A pass scans the agents for its first few searches and builds the agent
 * index (index.c) when more follow: a pass that places one arrival, or
 * stops at a blocked head of the queue, never pays for the index. */
#include "common/compat.h"

#include "sched/sched-internal.h"

#define FAIL_CACHE 64
/* Up to this many searches, or below this many agents, scanning is cheaper
 * than building the index (bench/sched-pass.c measures both). */
#define INDEX_AFTER_SEARCHES 4
#define INDEX_MIN_AGENTS 32

struct failed_shape {
        struct sched_vec req;
        int cluster_size, arch;
        bool multi_node;
        int gen;                 /* placements in the pass when msg was written */
        char msg[SCHED_MSG_MAX]; /* why this very request found no room */
};

struct fail_cache {
        int n, next;
        struct failed_shape e[FAIL_CACHE];
};

static bool same_shape(const struct failed_shape *f, const struct sched_session *s)
{
        return f->cluster_size == s->cluster_size && f->multi_node == s->multi_node && f->arch == s->arch &&
               f->req.v[SCHED_GPU_DEVICE] == s->req.v[SCHED_GPU_DEVICE] &&
               f->req.v[SCHED_GPU_SHARES] == s->req.v[SCHED_GPU_SHARES];
}

/* A failed request that s's is at least as large as (same shape), or NULL. */
static struct failed_shape *cache_find(struct fail_cache *c, const struct sched_session *s)
{
        if (s->ndesignated > 0)
                return NULL;
        for (int i = 0; i < c->n; i++) {
                struct failed_shape *f = &c->e[i];
                bool ge = same_shape(f, s);
                for (int k = 0; k < SCHED_NSLOTS && ge; k++)
                        ge = s->req.v[k] >= f->req.v[k];
                if (ge)
                        return f;
        }
        return NULL;
}

static void cache_add(struct fail_cache *c, const struct sched_session *s, int gen, const char *msg)
{
        if (s->ndesignated > 0)
                return;
        struct failed_shape *f = &c->e[c->next];
        f->req = s->req;
        f->cluster_size = s->cluster_size;
        f->arch = s->arch;
        f->multi_node = s->multi_node;
        f->gen = gen;
        memcpy(f->msg, msg, SCHED_MSG_MAX);
        c->next = (c->next + 1) % FAIL_CACHE;
        if (c->n < FAIL_CACHE)
                c->n++;
}

/* The message for s, which failed like f: f's own when s asks exactly the
 * same and nothing was placed since (the agents are as they were), else
 * written afresh. */
static void cached_msg(const struct sched_input *in, const struct sched_index *ix, struct failed_shape *f,
                       const struct sched_session *s, int gen, char msg[SCHED_MSG_MAX])
{
        bool same = !memcmp(&f->req, &s->req, sizeof(s->req));

        if (same && f->gen == gen) {
                memcpy(msg, f->msg, SCHED_MSG_MAX);
                return;
        }
        sched_explain(in, ix, s, msg);
        if (same) {
                f->gen = gen;
                memcpy(f->msg, msg, SCHED_MSG_MAX);
        }
}

static void charge_scopes(struct sched_input *in, const struct sched_session *s)
{
        for (int kind = 0; kind < _SCHED_SCOPE_KINDS; kind++) {
                if (s->scope[kind] < 0)
                        continue;
                struct sched_scope *sc = &in->scopes[s->scope[kind]];
                for (int k = 0; k < SCHED_NSLOTS; k++)
                        sc->used.v[k] += s->req.v[k] * s->cluster_size;
                sc->sessions++;
        }
}

static bool blocks_queue(const struct sched_input *in, const struct sched_session *s)
{
        const struct sched_policy *p = &in->policy;
        bool blocks = (p->reserve_after > 0 && s->retries >= p->reserve_after) ||
                      ((p->order == SCHED_FIFO || p->order == SCHED_LIFO) && s->retries <= p->retries_to_skip);

        return blocks && sched_fits_empty(in, s);
}

/* The caller's input, checked before anything is touched. */
static int check_input(const struct sched_input *in, struct tess_error **err)
{
        if (!in->slots || in->nagents < 0 || in->npending < 0 || in->nscopes < 0 ||
            (in->nagents > 0 && !in->agents) || (in->npending > 0 && !in->pending) || (in->nscopes > 0 && !in->scopes))
                return tess_err(err, EINVAL, "scheduler input is incomplete");
        for (int a = 0; a < in->nagents; a++) {
                const struct sched_agent *ag = &in->agents[a];
                if (ag->ndev < 0 || ag->ndev > SCHED_MAX_DEVICES ||
                    (ag->ndev > 0 && ag->gpu_slot != SCHED_GPU_DEVICE && ag->gpu_slot != SCHED_GPU_SHARES))
                        return tess_err(err, EINVAL, "agent '%s': bad GPU devices (%d in slot %d)",
                                        ag->id ? ag->id : "?", ag->ndev, ag->gpu_slot);
        }
        for (int i = 0; i < in->npending; i++) {
                const struct sched_session *s = &in->pending[i];
                if (s->cluster_size < 1 || s->cluster_size > 1024)
                        return tess_err(err, EINVAL, "session '%s': cluster size %d", s->name ? s->name : "?",
                                        s->cluster_size);
                if (s->ndesignated < 0 || (s->ndesignated > 0 && !s->designated))
                        return tess_err(err, EINVAL, "session '%s': bad designated agents", s->name ? s->name : "?");
                for (int k = 0; k < _SCHED_SCOPE_KINDS; k++)
                        if (s->scope[k] >= in->nscopes)
                                return tess_err(err, EINVAL, "session '%s': %s scope %d out of range",
                                                s->name ? s->name : "?", sched_scope_kind_name(k), s->scope[k]);
                for (int k = 0; k < SCHED_NSLOTS; k++)
                        if (s->req.v[k] < 0 || s->req.v[k] > SLOT_INFINITY / 1024)
                                return tess_err(err, EINVAL, "session '%s': bad request", s->name ? s->name : "?");
        }
        return 0;
}

int sched_pass_search(struct sched_input *in, enum sched_search how, struct sched_output *out,
                      struct tess_error **err)
{
        struct sched_queue q;
        struct fail_cache cache; /* only cache.n entries are ever read */
        struct sched_index ix, *index = NULL;
        struct sched_kernel_alloc few[4], *scratch;
        const struct sched_session *blocker = NULL;
        int i, r, maxk = 1, searches = 0;

        *out = (struct sched_output){ 0 }; /* sched_output_free() is safe even after an error */
        cache.n = cache.next = 0;
        r = check_input(in, err);
        if (r < 0)
                return r;
        for (i = 0; i < in->npending; i++)
                if (in->pending[i].cluster_size > maxk)
                        maxk = in->pending[i].cluster_size;
        scratch = maxk <= (int)ARRAY_SIZE(few) ? few : xmalloc(sizeof(*scratch) * (size_t)maxk);
        *out = (struct sched_output){ .d = xcalloc((size_t)(in->npending ? in->npending : 1), sizeof(*out->d)) };
        sched_queue_init(&q, in);
        while ((i = sched_queue_next(&q)) >= 0) {
                struct sched_session *s = &in->pending[i];
                struct sched_decision *d = &out->d[out->n++];
                char *msg = in->no_messages ? NULL : d->msg; /* NULL: no reasons wanted */
                const char *pred = NULL;

                d->session = i;
                d->outcome = sched_check(in, s, &pred, msg);
                if (d->outcome != SCHED_PLACED) {
                        d->predicate = pred;
                        continue;
                }
                if (blocker) {
                        d->outcome = SCHED_WAITING;
                        d->predicate = "queue_order";
                        if (msg)
                                snprintf(msg, SCHED_MSG_MAX, "waiting behind session '%.100s' (%s order)",
                                         blocker->name ? blocker->name : "?", sched_order_name(in->policy.order));
                        continue;
                }
                struct failed_shape *known = cache_find(&cache, s);
                if (!known && !index &&
                    (how == SCHED_SEARCH_INDEX || (how == SCHED_SEARCH_AUTO && searches >= INDEX_AFTER_SEARCHES &&
                                                   in->nagents >= INDEX_MIN_AGENTS))) {
                        sched_index_build(&ix, in);
                        index = &ix;
                }
                searches += !known;
                if (!known && sched_place(in, index, s, scratch, msg)) {
                        d->kernels = xmalloc(sizeof(*scratch) * (size_t)s->cluster_size);
                        memcpy(d->kernels, scratch, sizeof(*scratch) * (size_t)s->cluster_size);
                        charge_scopes(in, s);
                        out->placed++;
                        continue;
                }
                if (known && msg)
                        cached_msg(in, index, known, s, out->placed, msg);
                else if (!known)
                        cache_add(&cache, s, out->placed, d->msg);
                d->outcome = SCHED_WAITING;
                d->predicate = "agent_resources";
                s->retries++;
                if (blocks_queue(in, s))
                        blocker = s;
        }
        sched_queue_free(&q);
        if (index)
                sched_index_free(index);
        if (scratch != few)
                free(scratch);
        return 0;
}

int sched_pass(struct sched_input *in, struct sched_output *out, struct tess_error **err)
{
        return sched_pass_search(in, SCHED_SEARCH_AUTO, out, err);
}

void sched_output_free(struct sched_output *out)
{
        for (int i = 0; i < out->n; i++)
                free(out->d[i].kernels);
        free(out->d);
        *out = (struct sched_output){ 0 };
}
