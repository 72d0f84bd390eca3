/* test_sched_random.c - the scheduler against random clusters and queues.
 *
 * For thousands of seeds: a random cluster (agents with and without GPUs,
 * fractional and whole-GPU devices, several fgpu_per_gpu values, another
 * architecture, unschedulable agents, load the scheduler did not place,
 * sometimes beyond an agent's capacity), random quota scopes (keypairs,
 * users, projects, domains with random limits), a random queue (priorities,
 * cluster sessions, fractional and whole GPUs, CPU only, batch start times,
 * dependencies, designated agents) and a random policy.  Passes run on a
 * virtual clock, one per tick; placed sessions run for a while and end.
 * After every pass, from the test's own record of every allocation (never
 * the library's counters):
 *   - no agent slot and no GPU device is over-committed (only load the
 *     scheduler did not place may exceed a capacity, and then nothing is
 *     placed that asks for that slot or device);
 *   - no quota scope is over its limit, no keypair over its concurrency;
 *   - every kernel's devices are distinct, of the agent's GPU kind, and sum
 *     to the request; a request of at most one device is on one device and
 *     a larger one spread evenly over the fewest, unless fragmentation is
 *     allowed; single-node kernels share one agent; designated agents and
 *     architectures are honoured; placed sessions pass every predicate;
 *   - the library's counters (agent used, scope used) equal the recount;
 *   - under fifo/lifo, a session that found no room and would fit an empty
 *     agent blocks everything behind it while it has failed no more than
 *     num_retries_to_skip times; under any policy once it has failed
 *     reserve_after_retries times;
 *   - the scan and the agent index decide exactly the same (every fourth
 *     seed and every wide one run both; the others alternate).
 * Arrivals then stop and the passes go on until the cluster is idle: every
 * session that fits an empty agent (and its quotas) must have been placed,
 * within a bound that grows with the queue, the longest run and
 * reserve_after_retries.
 *
 * SCHED_RANDOM_SEEDS=n runs n small seeds (default 2000),
 * SCHED_RANDOM_WIDE_SEEDS=n n wide ones (default 6); SCHED_RANDOM_SEED=s
 * runs only seed s of each (to replay a failure), SCHED_RANDOM_VERBOSE=1
 * prints the world and every decision, SCHED_RANDOM_STATS=1 the passes. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/buf.h"
#include "common/splitmix.h"
#include "sched/sched-internal.h"

#define MAXA 256 /* the wide worlds; most have at most 12 agents */
#define MAXS 320
#define MAXSC 16
#define MAXK 4
#define TICK 1000000LL /* one virtual second */

enum { R_FUTURE, R_PENDING, R_RUNNING, R_DONE };

struct rs {
        struct sched_session s;
        int state;
        int arrive, dur, end, deps_ok_at;
        bool external;  /* not the scheduler's: load already on an agent at tick 0 */
        int placeable; /* 1: fits an empty cluster and its quotas; 0: never; -1: not known */
        bool fits_agent; /* fits one empty candidate agent (the library's "could ever fit") */
        int designated[2];
        struct sched_kernel_alloc k[MAXK];
};

struct world {
        uint64_t rng;
        unsigned seed;
        struct sched_slots slots;
        struct sched_policy pol;
        struct sched_agent agents[MAXA];
        char ids[MAXA][16];
        int na;
        struct sched_scope scopes[MAXSC];
        int nsc;
        struct rs ss[MAXS];
        char names[MAXS][16];
        int ns;
        int rr;
        int tick;
        bool wide;
        bool failed;
        /* scratch for a pass */
        struct sched_agent agents1[MAXA], agents2[MAXA], agents3[MAXA];
        struct sched_scope scopes1[MAXSC], scopes2[MAXSC], scopes3[MAXSC];
        struct sched_session pending1[MAXS], pending2[MAXS];
};

/* Uniform in [lo, hi]. */
static int64_t rnd(struct world *w, int64_t lo, int64_t hi)
{
        return splitmix_uniform(&w->rng, lo, hi);
}

static bool chance(struct world *w, int percent)
{
        return rnd(w, 0, 99) < percent;
}

#define FAIL(w, ...)                                                                           \
        do {                                                                                   \
                char _m_[512];                                                                 \
                snprintf(_m_, sizeof(_m_), __VA_ARGS__);                                       \
                test_fail(__FILE__, __LINE__, "seed %u tick %d: %s", (w)->seed, (w)->tick, _m_); \
                (w)->failed = true;                                                            \
        } while (0)

/* ---- building a world ---- */

static void make_agents(struct world *w)
{
        static const int64_t fgpu_quanta[] = { 50, 100, 100, 200, 400 };

        w->na = w->wide ? (int)rnd(w, 64, MAXA) : (int)rnd(w, 1, 12);
        for (int i = 0; i < w->na; i++) {
                struct sched_agent *a = &w->agents[i];
                snprintf(w->ids[i], sizeof(w->ids[i]), "a%d", i);
                *a = (struct sched_agent){ .id = w->ids[i], .gpu_slot = -1 };
                a->arch = chance(w, 8) ? 1 : 0;
                a->schedulable = !chance(w, 8);
                a->cap.v[SCHED_CPU] = rnd(w, 2, 32) * 1000;
                a->cap.v[SCHED_MEM] = rnd(w, 4, 64) << 30;
                if (chance(w, 20))
                        a->cap.v[SCHED_FIRST_EXTRA] = rnd(w, 1, 4) * 1000;
                int kind = (int)rnd(w, 0, 9);
                if (kind < 4)
                        sched_agent_set_gpus(a, SCHED_GPU_SHARES, (int)rnd(w, 1, 8),
                                             fgpu_quanta[rnd(w, 0, ARRAY_SIZE(fgpu_quanta) - 1)]);
                else if (kind < 7)
                        sched_agent_set_gpus(a, SCHED_GPU_DEVICE, (int)rnd(w, 1, 8), 1);
        }
}

static void make_scopes(struct world *w)
{
        /* 0-3 keypairs, 4-7 users, 8-10 projects, 11-12 domains */
        static const int kinds[MAXSC] = { 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3 };

        w->nsc = 13;
        for (int i = 0; i < w->nsc; i++) {
                struct sched_scope *sc = &w->scopes[i];
                *sc = (struct sched_scope){ .kind = (enum sched_scope_kind)kinds[i], .max_sessions = -1,
                                            .max_containers = -1 };
                sched_vec_unlimited(&sc->limit);
                if (chance(w, 30))
                        sc->limit.v[SCHED_CPU] = rnd(w, 1, 24) * 1000;
                if (chance(w, 20))
                        sc->limit.v[SCHED_MEM] = rnd(w, 2, 64) << 30;
                if (chance(w, 30))
                        sc->limit.v[SCHED_GPU_SHARES] = rnd(w, 1, 40) * 25;
                if (chance(w, 20))
                        sc->limit.v[SCHED_GPU_DEVICE] = rnd(w, 1, 8);
                if (sc->kind == SCHED_KEYPAIR && chance(w, 30))
                        sc->max_sessions = chance(w, 10) ? 0 : rnd(w, 1, 4);
                if (sc->kind == SCHED_KEYPAIR && chance(w, 20))
                        sc->max_containers = rnd(w, 1, 3);
                /* keypair i belongs to user 4 + i (make_sessions): its limits
                 * may count the user's sessions, as the manager's do */
                if (sc->kind == SCHED_KEYPAIR && chance(w, 50))
                        sc->per_owner = true;
                if (sc->kind == SCHED_USER)
                        sc->fair_share_usage = (double)rnd(w, 0, 1000);
        }
}

static void make_sessions(struct world *w, int arrivals)
{
        w->ns = w->wide ? (int)rnd(w, 100, MAXS) : (int)rnd(w, 4, 32);
        for (int i = 0; i < w->ns; i++) {
                struct rs *r = &w->ss[i];
                struct sched_session *s = &r->s;
                snprintf(w->names[i], sizeof(w->names[i]), "s%d", i);
                memset(r, 0, sizeof(*r));
                s->id = s->name = w->names[i];
                s->priority = chance(w, 70) ? 0 : rnd(w, 0, 2) * 5;
                r->arrive = (int)rnd(w, 0, arrivals);
                s->enqueued_at = r->arrive * TICK + rnd(w, 0, 3); /* ties happen */
                s->req.v[SCHED_CPU] = rnd(w, 1, 32) * 250;
                s->req.v[SCHED_MEM] = rnd(w, 1, 32) << 29;
                int gpu = (int)rnd(w, 0, 99);
                if (gpu < 35)
                        s->req.v[SCHED_GPU_SHARES] = chance(w, 70) ? rnd(w, 1, 20) * 5 : rnd(w, 1, 30) * 10;
                else if (gpu < 60)
                        s->req.v[SCHED_GPU_DEVICE] = chance(w, 70) ? 1 : rnd(w, 2, 4);
                if (chance(w, 5))
                        s->req.v[SCHED_FIRST_EXTRA] = rnd(w, 1, 2) * 1000;
                s->cluster_size = chance(w, 75) ? 1 : (int)rnd(w, 2, MAXK);
                s->multi_node = s->cluster_size > 1 && chance(w, 50);
                s->arch = chance(w, 5) ? 1 : 0;
                s->scope[SCHED_KEYPAIR] = chance(w, 90) ? (int)rnd(w, 0, 3) : -1;
                s->scope[SCHED_USER] = chance(w, 90) ? (int)rnd(w, 4, 7) : -1;
                if (s->scope[SCHED_KEYPAIR] >= 0 && w->scopes[s->scope[SCHED_KEYPAIR]].per_owner)
                        s->scope[SCHED_USER] = 4 + s->scope[SCHED_KEYPAIR]; /* as in the manager: its user's */
                s->scope[SCHED_PROJECT] = chance(w, 80) ? (int)rnd(w, 8, 10) : -1;
                s->scope[SCHED_DOMAIN] = chance(w, 80) ? (int)rnd(w, 11, 12) : -1;
                if (chance(w, 8))
                        s->starts_at = (r->arrive + rnd(w, 1, 10)) * TICK;
                s->deps = SCHED_DEPS_OK;
                if (chance(w, 6)) {
                        s->deps = SCHED_DEPS_WAITING;
                        r->deps_ok_at = r->arrive + (int)rnd(w, 1, 10);
                } else if (chance(w, 3)) {
                        s->deps = SCHED_DEPS_FAILED;
                }
                s->deps_detail = "dep";
                s->rg_allowed = !chance(w, 3);
                if (chance(w, 10))
                        s->image_min.v[SCHED_MEM] = chance(w, 80) ? s->req.v[SCHED_MEM] : s->req.v[SCHED_MEM] + 1;
                if (chance(w, 6)) {
                        s->ndesignated = (int)rnd(w, 1, 2);
                        for (int d = 0; d < s->ndesignated; d++)
                                r->designated[d] = (int)rnd(w, 0, w->na - 1);
                        s->designated = r->designated;
                }
                r->dur = (int)rnd(w, 1, 12);
                r->state = R_FUTURE;
        }
}

/* Load the scheduler did not place, running from tick 0 for a while: now
 * and then more than the agent has (its capacity shrank under running
 * containers), so that free amounts go negative. */
static void make_externals(struct world *w)
{
        for (int a = 0; a < w->na && w->ns < MAXS; a++) {
                const struct sched_agent *ag = &w->agents[a];
                if (!chance(w, 10))
                        continue;
                struct rs *r = &w->ss[w->ns];
                memset(r, 0, sizeof(*r));
                snprintf(w->names[w->ns], sizeof(w->names[w->ns]), "x%d", a);
                r->s.id = r->s.name = w->names[w->ns++];
                r->external = true;
                r->state = R_RUNNING;
                r->end = (int)rnd(w, 1, 15);
                r->s.cluster_size = 1;
                for (int k = 0; k < _SCHED_SCOPE_KINDS; k++)
                        r->s.scope[k] = -1;
                r->s.req.v[SCHED_CPU] = rnd(w, 0, ag->cap.v[SCHED_CPU] / 1000) * 1000;
                r->s.req.v[SCHED_MEM] = rnd(w, 0, ag->cap.v[SCHED_MEM] >> 30) << 30;
                if (chance(w, 30))
                        r->s.req.v[chance(w, 50) ? SCHED_CPU : SCHED_MEM] += ag->cap.v[SCHED_MEM] + 1000;
                r->k[0].agent = a;
                bool gpus_over = chance(w, 20); /* every device full, one beyond */
                for (int d = 0; d < ag->ndev; d++) {
                        int64_t q = gpus_over ? ag->dev[d].cap + (d == 0)
                                    : chance(w, 50) ? 0 : rnd(w, 0, ag->dev[d].cap) + (chance(w, 15) ? 1 : 0);
                        if (q == 0)
                                continue;
                        r->k[0].dev[r->k[0].ndev++] = (struct sched_device_alloc){ .dev = (int16_t)d, .amount = q };
                        r->s.req.v[ag->gpu_slot] += q;
                }
        }
}

static void make_policy(struct world *w)
{
        w->pol = (struct sched_policy){
                .order = (enum sched_order)rnd(w, 0, 3),
                .select = (enum sched_select)rnd(w, 0, 2),
                .retries_to_skip = (int)rnd(w, 0, 5),
                .reserve_after = chance(w, 25) ? 0 : (int)rnd(w, 1, 12),
                .allow_fragmentation = chance(w, 30),
        };
}

/* ---- the test's own view: what fits an empty agent ---- */

static int gpu_of(const struct sched_vec *req)
{
        return req->v[SCHED_GPU_SHARES] > 0 ? SCHED_GPU_SHARES : req->v[SCHED_GPU_DEVICE] > 0 ? SCHED_GPU_DEVICE : -1;
}

static int64_t maxcap(const struct sched_agent *a)
{
        int64_t m = 0;
        for (int d = 0; d < a->ndev; d++)
                m = a->dev[d].cap > m ? a->dev[d].cap : m;
        return m;
}

/* How many kernels of s an empty agent a certainly holds (n at most), or
 * -1 when this test cannot tell. */
static int empty_holds(const struct world *w, const struct sched_agent *a, const struct sched_session *s, int n)
{
        int g = gpu_of(&s->req), fit = n;

        if (!a->schedulable || a->arch != s->arch)
                return 0;
        for (int k = 0; k < SCHED_NSLOTS; k++)
                if (s->req.v[k] > 0)
                        fit = (int)(a->cap.v[k] / s->req.v[k] < fit ? a->cap.v[k] / s->req.v[k] : fit);
        if (g < 0 || fit == 0)
                return fit;
        if (a->ndev == 0 || a->gpu_slot != g)
                return 0;
        int64_t amount = s->req.v[g], c = maxcap(a);
        if (w->pol.allow_fragmentation || g == SCHED_GPU_DEVICE) {
                /* whole GPUs take whole devices; fragments fill any device */
                int64_t per = g == SCHED_GPU_DEVICE ? a->ndev / amount : a->cap.v[g] / amount;
                return (int)(per < fit ? per : fit);
        }
        if (amount <= c) {
                int64_t per = a->ndev * (c / amount); /* devices are all alike */
                return (int)(per < fit ? per : fit);
        }
        int kmin = (int)((amount + c - 1) / c);
        if (kmin > a->ndev)
                return 0;
        return fit == 1 ? 1 : -1;
}

static void classify(struct world *w, struct rs *r)
{
        const struct sched_session *s = &r->s;
        int ncand = s->ndesignated ? s->ndesignated : w->na, agents = 0, unknown = 0;
        bool ok = s->deps != SCHED_DEPS_FAILED && s->rg_allowed;

        for (int k = 0; k < SCHED_NSLOTS; k++)
                ok = ok && s->req.v[k] >= s->image_min.v[k];
        for (int kind = 0; kind < _SCHED_SCOPE_KINDS; kind++) {
                if (s->scope[kind] < 0)
                        continue;
                const struct sched_scope *sc = &w->scopes[s->scope[kind]];
                for (int k = 0; k < SCHED_NSLOTS; k++)
                        ok = ok && (sc->limit.v[k] == SLOT_INFINITY || s->req.v[k] * s->cluster_size <= sc->limit.v[k]);
                if (kind == SCHED_KEYPAIR)
                        ok = ok && sc->max_sessions != 0 &&
                             (sc->max_containers < 0 || s->cluster_size <= sc->max_containers);
        }
        r->fits_agent = false;
        for (int c = 0; c < ncand; c++) {
                int i = s->ndesignated ? s->designated[c] : c;
                bool dup = false;
                for (int e = 0; e < c; e++)
                        dup = dup || (s->ndesignated && s->designated[e] == i);
                if (dup)
                        continue;
                int h = empty_holds(w, &w->agents[i], s, s->multi_node ? 1 : s->cluster_size);
                if (h < 0)
                        unknown++;
                else if (h >= (s->multi_node ? 1 : s->cluster_size))
                        agents++;
        }
        r->fits_agent = agents > 0;
        if (!ok)
                r->placeable = 0;
        else if (s->multi_node ? agents >= s->cluster_size : agents > 0)
                r->placeable = 1;
        else
                r->placeable = unknown || s->multi_node ? -1 : 0;
        /* a multi-node session "fits" (may block) only when the library's
         * own count says so; this test cannot always tell: leave it out of
         * the blocking checks unless it certainly fits */
        if (s->multi_node)
                r->fits_agent = r->placeable == 1;
}

/* ---- recounting from the allocations ---- */

static void recount(struct world *w, struct sched_agent *agents, struct sched_scope *scopes)
{
        for (int a = 0; a < w->na; a++) {
                agents[a] = w->agents[a];
                memset(&agents[a].used, 0, sizeof(agents[a].used));
                for (int d = 0; d < agents[a].ndev; d++)
                        agents[a].dev[d].used = 0;
        }
        for (int i = 0; i < w->nsc; i++) {
                scopes[i] = w->scopes[i];
                memset(&scopes[i].used, 0, sizeof(scopes[i].used));
                scopes[i].sessions = 0;
        }
        for (int i = 0; i < w->ns; i++) {
                const struct rs *r = &w->ss[i];
                if (r->state != R_RUNNING)
                        continue;
                for (int k = 0; k < r->s.cluster_size; k++) {
                        struct sched_agent *a = &agents[r->k[k].agent];
                        for (int j = 0; j < SCHED_NSLOTS; j++)
                                a->used.v[j] += r->s.req.v[j];
                        for (int j = 0; j < r->k[k].ndev; j++)
                                a->dev[r->k[k].dev[j].dev].used += r->k[k].dev[j].amount;
                }
                for (int kind = 0; kind < _SCHED_SCOPE_KINDS; kind++) {
                        if (r->s.scope[kind] < 0)
                                continue;
                        for (int j = 0; j < SCHED_NSLOTS; j++)
                                scopes[r->s.scope[kind]].used.v[j] += r->s.req.v[j] * r->s.cluster_size;
                        scopes[r->s.scope[kind]].sessions++;
                }
        }
}

/* ---- the invariants ---- */

static void check_kernel(struct world *w, const struct rs *r, const struct sched_kernel_alloc *k,
                         const struct sched_agent *agents)
{
        const struct sched_session *s = &r->s;
        int g = gpu_of(&s->req);

        if (k->agent < 0 || k->agent >= w->na) {
                FAIL(w, "%s: kernel on agent %d", s->name, k->agent);
                return;
        }
        const struct sched_agent *a = &agents[k->agent];
        if (!a->schedulable || a->arch != s->arch)
                FAIL(w, "%s: placed on %s (schedulable %d, arch %d, wants %d)", s->name, a->id, a->schedulable, a->arch,
                     s->arch);
        if (s->ndesignated) {
                bool in = false;
                for (int d = 0; d < s->ndesignated; d++)
                        in = in || s->designated[d] == k->agent;
                if (!in)
                        FAIL(w, "%s: placed on %s, not a designated agent", s->name, a->id);
        }
        if (g < 0) {
                if (k->ndev != 0)
                        FAIL(w, "%s: no GPU asked, %d devices given", s->name, k->ndev);
                return;
        }
        if (a->gpu_slot != g || a->ndev == 0) {
                FAIL(w, "%s: asks GPU slot %d, agent %s offers %d", s->name, g, a->id, a->gpu_slot);
                return;
        }
        int64_t sum = 0, lo = INT64_MAX, hi = 0;
        for (int j = 0; j < k->ndev; j++) {
                if (k->dev[j].dev < 0 || k->dev[j].dev >= a->ndev || k->dev[j].amount <= 0)
                        FAIL(w, "%s: bad device allocation %d:%lld", s->name, k->dev[j].dev, (long long)k->dev[j].amount);
                for (int e = 0; e < j; e++)
                        if (k->dev[e].dev == k->dev[j].dev)
                                FAIL(w, "%s: device %d given twice", s->name, k->dev[j].dev);
                sum += k->dev[j].amount;
                lo = k->dev[j].amount < lo ? k->dev[j].amount : lo;
                hi = k->dev[j].amount > hi ? k->dev[j].amount : hi;
        }
        if (sum != s->req.v[g])
                FAIL(w, "%s: devices sum to %lld, asked %lld", s->name, (long long)sum, (long long)s->req.v[g]);
        if (w->pol.allow_fragmentation)
                return;
        int64_t c = maxcap(a);
        if (s->req.v[g] <= c && k->ndev != 1)
                FAIL(w, "%s: %lld quanta (one device holds %lld) split over %d devices", s->name,
                     (long long)s->req.v[g], (long long)c, k->ndev);
        if (s->req.v[g] > c && (k->ndev != (int)((s->req.v[g] + c - 1) / c) || hi - lo > 1))
                FAIL(w, "%s: %lld quanta over %d devices (%lld..%lld), not evenly over the fewest", s->name,
                     (long long)s->req.v[g], k->ndev, (long long)lo, (long long)hi);
}

static void check_state(struct world *w, const struct sched_agent *lib_agents, const struct sched_scope *lib_scopes)
{
        struct sched_agent *agents = w->agents3;
        struct sched_scope *scopes = w->scopes3;

        /* what the scheduler's own kernels ask of each agent slot and device:
         * only load it did not place may exceed a capacity */
        static bool asks[MAXA][SCHED_NSLOTS], on_dev[MAXA][SCHED_MAX_DEVICES];
        memset(asks, 0, sizeof(asks[0]) * (size_t)w->na);
        memset(on_dev, 0, sizeof(on_dev[0]) * (size_t)w->na);
        for (int i = 0; i < w->ns; i++) {
                const struct rs *r = &w->ss[i];
                if (r->state != R_RUNNING || r->external)
                        continue;
                for (int k = 0; k < r->s.cluster_size; k++) {
                        for (int j = 0; j < SCHED_NSLOTS; j++)
                                asks[r->k[k].agent][j] |= r->s.req.v[j] > 0;
                        for (int j = 0; j < r->k[k].ndev; j++)
                                on_dev[r->k[k].agent][r->k[k].dev[j].dev] = true;
                }
        }
        recount(w, agents, scopes);
        for (int a = 0; a < w->na; a++) {
                for (int k = 0; k < SCHED_NSLOTS; k++) {
                        if (agents[a].used.v[k] > agents[a].cap.v[k] && asks[a][k])
                                FAIL(w, "agent %s slot %d over-committed: %lld of %lld", agents[a].id, k,
                                     (long long)agents[a].used.v[k], (long long)agents[a].cap.v[k]);
                        if (agents[a].used.v[k] != lib_agents[a].used.v[k])
                                FAIL(w, "agent %s slot %d: library counts %lld, allocations %lld", agents[a].id, k,
                                     (long long)lib_agents[a].used.v[k], (long long)agents[a].used.v[k]);
                }
                for (int d = 0; d < agents[a].ndev; d++) {
                        if (agents[a].dev[d].used > agents[a].dev[d].cap && on_dev[a][d])
                                FAIL(w, "agent %s device %d over-committed: %lld of %lld", agents[a].id, d,
                                     (long long)agents[a].dev[d].used, (long long)agents[a].dev[d].cap);
                        if (agents[a].dev[d].used != lib_agents[a].dev[d].used)
                                FAIL(w, "agent %s device %d: library counts %lld, allocations %lld", agents[a].id, d,
                                     (long long)lib_agents[a].dev[d].used, (long long)agents[a].dev[d].used);
                }
        }
        for (int i = 0; i < w->nsc; i++) {
                const struct sched_scope *sc = &scopes[i];
                for (int k = 0; k < SCHED_NSLOTS; k++) {
                        if (sc->limit.v[k] != SLOT_INFINITY && sc->used.v[k] > sc->limit.v[k])
                                FAIL(w, "%s scope %d slot %d over its limit: %lld of %lld", sched_scope_kind_name(sc->kind),
                                     i, k, (long long)sc->used.v[k], (long long)sc->limit.v[k]);
                        if (sc->used.v[k] != lib_scopes[i].used.v[k])
                                FAIL(w, "scope %d slot %d: library counts %lld, allocations %lld", i, k,
                                     (long long)lib_scopes[i].used.v[k], (long long)sc->used.v[k]);
                }
                if (sc->max_sessions >= 0 && sc->sessions > sc->max_sessions)
                        FAIL(w, "keypair scope %d runs %lld sessions of %lld", i, (long long)sc->sessions,
                             (long long)sc->max_sessions);
        }
        for (int i = 0; i < w->ns; i++) {
                const struct rs *r = &w->ss[i];
                if (r->state != R_RUNNING || r->external)
                        continue;
                for (int k = 0; k < r->s.cluster_size; k++) {
                        check_kernel(w, r, &r->k[k], agents);
                        if (!r->s.multi_node && r->k[k].agent != r->k[0].agent)
                                FAIL(w, "%s: single-node kernels on %d and %d", r->s.name, r->k[0].agent, r->k[k].agent);
                }
        }
}

/* ---- one pass ---- */

/* b ran with no_messages when quiet: then its messages must be empty. */
static bool same_decisions(const struct sched_output *a, const struct sched_output *b, const struct sched_session *pa,
                           const struct sched_session *pb, bool quiet)
{
        if (a->n != b->n || a->placed != b->placed)
                return false;
        for (int i = 0; i < a->n; i++) {
                const struct sched_decision *x = &a->d[i], *y = &b->d[i];
                if (x->session != y->session || x->outcome != y->outcome ||
                    (quiet ? y->msg[0] != '\0' : !streq(x->msg, y->msg)) ||
                    (x->predicate != y->predicate && (!x->predicate || !y->predicate || !streq(x->predicate, y->predicate))) ||
                    pa[x->session].retries != pb[y->session].retries)
                        return false;
                for (int k = 0; x->kernels && k < pa[x->session].cluster_size; k++) {
                        if (x->kernels[k].agent != y->kernels[k].agent || x->kernels[k].ndev != y->kernels[k].ndev)
                                return false;
                        for (int j = 0; j < x->kernels[k].ndev; j++)
                                if (x->kernels[k].dev[j].dev != y->kernels[k].dev[j].dev ||
                                    x->kernels[k].dev[j].amount != y->kernels[k].dev[j].amount)
                                        return false;
                }
        }
        return true;
}

/* Returns how many sessions were placed. */
static long stat_passes, stat_pending;

static int pass(struct world *w)
{
        struct sched_agent *agents = w->agents1, *agents2 = w->agents2;
        struct sched_scope *scopes = w->scopes1, *scopes2 = w->scopes2;
        struct sched_session *pending = w->pending1, *pending2 = w->pending2;
        int map[MAXS], n = 0;
        struct sched_output out, out2;
        struct tess_error *err = NULL;
        int64_t now = w->tick * TICK;

        recount(w, agents, scopes);
        /* the pending queue, in a random order (the library sorts it) */
        for (int i = 0; i < w->ns; i++)
                if (w->ss[i].state == R_PENDING)
                        map[n++] = i;
        for (int i = n - 1; i > 0; i--) {
                int j = (int)rnd(w, 0, i), t = map[i];
                map[i] = map[j];
                map[j] = t;
        }
        for (int i = 0; i < n; i++)
                pending[i] = w->ss[map[i]].s;
        stat_passes++;
        stat_pending += n;
        if (w->wide || w->seed % 4 == 0) {
                memcpy(agents2, agents, sizeof(*agents) * (size_t)w->na);
                memcpy(scopes2, scopes, sizeof(*scopes) * (size_t)w->nsc);
                memcpy(pending2, pending, sizeof(*pending) * (size_t)n);
        }
        struct sched_input in = {
                .slots = &w->slots, .policy = w->pol, .agents = agents, .nagents = w->na, .scopes = scopes,
                .nscopes = w->nsc, .pending = pending, .npending = n, .now = now, .rr_cursor = w->rr,
        };
        struct sched_input in2 = in;
        in2.agents = agents2;
        in2.scopes = scopes2;
        in2.pending = pending2;
        /* odd seeds check the scan, even ones the index; every fourth seed
         * (and every wide one) runs both and compares them, every eighth
         * with the second run asking for no messages */
        bool both = w->wide || w->seed % 4 == 0, quiet = !w->wide && w->seed % 8 == 0;
        in2.no_messages = quiet;
        out2 = (struct sched_output){ 0 };
        if (sched_pass_search(&in, w->seed % 2 ? SCHED_SEARCH_SCAN : SCHED_SEARCH_INDEX, &out, &err) < 0 ||
            (both && sched_pass_search(&in2, w->seed % 2 ? SCHED_SEARCH_INDEX : SCHED_SEARCH_SCAN, &out2, &err) < 0)) {
                FAIL(w, "sched_pass: %s", err->msg);
                tess_error_free(err);
                sched_output_free(&out);
                return 0;
        }
        if (both && (!same_decisions(&out, &out2, pending, pending2, quiet) || in.rr_cursor != in2.rr_cursor ||
                     memcmp(scopes, scopes2, sizeof(*scopes) * (size_t)w->nsc) != 0))
                FAIL(w, "the scan and the agent index decided differently");
        for (int a = 0; both && a < w->na; a++)
                if (memcmp(&agents[a].used, &agents2[a].used, sizeof(agents[a].used)) != 0 ||
                    memcmp(agents[a].dev, agents2[a].dev, sizeof(agents[a].dev)) != 0)
                        FAIL(w, "the scan and the agent index left agent %d differently", a);
        w->rr = in.rr_cursor;

        if (getenv("SCHED_RANDOM_VERBOSE")) {
                for (int i = 0; i < out.n; i++) {
                        const struct sched_decision *d = &out.d[i];
                        printf("# t=%d %s prio=%lld enq=%lld retries=%d %s %s%s", w->tick, pending[d->session].name,
                               (long long)pending[d->session].priority, (long long)pending[d->session].enqueued_at,
                               pending[d->session].retries, d->outcome == SCHED_PLACED ? "PLACED" : d->predicate,
                               d->msg, d->outcome == SCHED_PLACED ? " on" : "");
                        for (int k = 0; d->kernels && k < pending[d->session].cluster_size; k++)
                                printf(" %s", agents[d->kernels[k].agent].id);
                        printf("\n");
                }
        }
        /* every pending session decided once */
        int seen[MAXS] = { 0 };
        for (int i = 0; i < out.n; i++)
                if (out.d[i].session < 0 || out.d[i].session >= n || seen[out.d[i].session]++)
                        FAIL(w, "decision %d is for session %d", i, out.d[i].session);
        if (out.n != n)
                FAIL(w, "%d decisions for %d pending sessions", out.n, n);

        /* blocking: nothing behind a session that blocks is placed */
        int blocker = -1;
        for (int i = 0; i < out.n; i++) {
                const struct sched_decision *d = &out.d[i];
                const struct rs *r = &w->ss[map[d->session]];
                const struct sched_session *after = &pending[d->session];
                if (d->outcome == SCHED_PLACED && blocker >= 0)
                        FAIL(w, "%s placed behind %s, which found no room after %d tries (%s, skip after %d, reserve "
                                "after %d)",
                             after->name, pending[blocker].name, pending[blocker].retries, sched_order_name(w->pol.order),
                             w->pol.retries_to_skip, w->pol.reserve_after);
                if (d->outcome != SCHED_WAITING || !d->predicate || !streq(d->predicate, "agent_resources") ||
                    !r->fits_agent || blocker >= 0)
                        continue;
                bool fifo = w->pol.order == SCHED_FIFO || w->pol.order == SCHED_LIFO;
                if ((fifo && after->retries <= w->pol.retries_to_skip) ||
                    (w->pol.reserve_after > 0 && after->retries >= w->pol.reserve_after))
                        blocker = d->session;
        }

        /* apply: the library's per-decision facts, then our records */
        int placed = 0;
        for (int i = 0; i < out.n; i++) {
                const struct sched_decision *d = &out.d[i];
                struct rs *r = &w->ss[map[d->session]];
                const struct sched_session *after = &pending[d->session];
                bool room = d->outcome == SCHED_WAITING && d->predicate && streq(d->predicate, "agent_resources");
                if (after->retries != r->s.retries + room)
                        FAIL(w, "%s: retries went from %d to %d (%s)", r->s.name, r->s.retries, after->retries,
                             d->predicate ? d->predicate : "placed");
                r->s.retries = after->retries;
                if (d->outcome == SCHED_CANCEL && r->s.deps != SCHED_DEPS_FAILED)
                        FAIL(w, "%s cancelled: %s", r->s.name, d->msg);
                if (d->outcome != SCHED_CANCEL && r->s.deps == SCHED_DEPS_FAILED)
                        FAIL(w, "%s has a failed dependency but was not cancelled", r->s.name);
                if (d->outcome == SCHED_WAITING && (!d->predicate || !d->msg[0]))
                        FAIL(w, "%s waits with no reason", r->s.name);
                if (d->outcome == SCHED_CANCEL) {
                        r->state = R_DONE;
                } else if (d->outcome == SCHED_PLACED) {
                        const struct sched_session *s = &r->s;
                        if (s->starts_at > now || s->deps != SCHED_DEPS_OK || !s->rg_allowed)
                                FAIL(w, "%s placed before its time, dependencies or access allowed it", s->name);
                        for (int k = 0; k < SCHED_NSLOTS; k++)
                                if (s->req.v[k] < s->image_min.v[k])
                                        FAIL(w, "%s placed below the image minimum", s->name);
                        const struct sched_scope *kp = s->scope[SCHED_KEYPAIR] >= 0 ? &w->scopes[s->scope[SCHED_KEYPAIR]] : NULL;
                        if (kp && kp->max_containers >= 0 && s->cluster_size > kp->max_containers)
                                FAIL(w, "%s placed with %d containers, %lld allowed", s->name, s->cluster_size,
                                     (long long)kp->max_containers);
                        memcpy(r->k, d->kernels, sizeof(r->k[0]) * (size_t)s->cluster_size);
                        r->state = R_RUNNING;
                        r->end = w->tick + r->dur;
                        placed++;
                }
        }
        check_state(w, agents, scopes);
        sched_output_free(&out);
        sched_output_free(&out2);
        return placed;
}

/* Returns false when the seed failed. */
static bool run_seed(unsigned seed, bool wide)
{
        static struct world world; /* large: allocated once, not per seed */
        struct world *w = &world;
        int arrivals, stop = 0, bound = 0, queue = 0, longest = 0, placed;

        w->seed = seed;
        w->wide = wide;
        w->rr = 0;
        w->failed = false;
        w->rng = seed * 0x2545f4914f6cdd1dULL + 1;
        sched_slots_init(&w->slots);
        sched_slots_intern(&w->slots, "tpu.device", NULL);
        arrivals = (int)rnd(w, 0, 20);
        make_policy(w);
        make_agents(w);
        make_scopes(w);
        make_sessions(w, arrivals);
        make_externals(w);
        for (int i = 0; i < w->ns; i++)
                if (!w->ss[i].external)
                        classify(w, &w->ss[i]);
        if (getenv("SCHED_RANDOM_VERBOSE")) {
                printf("# policy %s/%s skip %d reserve %d frag %d\n", sched_order_name(w->pol.order),
                       sched_select_name(w->pol.select), w->pol.retries_to_skip, w->pol.reserve_after,
                       w->pol.allow_fragmentation);
                for (int a = 0; a < w->na; a++) {
                        char v[160];
                        printf("# agent %s arch %d sched %d gpu %d x %d of %lld: %s\n", w->agents[a].id, w->agents[a].arch,
                               w->agents[a].schedulable, w->agents[a].gpu_slot, w->agents[a].ndev,
                               (long long)(w->agents[a].ndev ? w->agents[a].dev[0].cap : 0),
                               sched_vec_format(&w->slots, &w->agents[a].cap, v, sizeof(v)));
                }
                for (int i = 0; i < w->ns; i++) {
                        char v[160];
                        const struct rs *r = &w->ss[i];
                        printf("# session %s x%d%s arch %d des %d:%d,%d placeable %d fits %d: %s\n", r->s.name,
                               r->s.cluster_size, r->s.multi_node ? " multi" : "", r->s.arch, r->s.ndesignated,
                               r->designated[0], r->designated[1], r->placeable, r->fits_agent,
                               sched_vec_format(&w->slots, &r->s.req, v, sizeof(v)));
                }
        }

        for (w->tick = 0; !w->failed; w->tick++) {
                bool busy = false;
                for (int i = 0; i < w->ns; i++) {
                        struct rs *r = &w->ss[i];
                        if (r->state == R_RUNNING && r->end <= w->tick)
                                r->state = R_DONE;
                        if (r->state == R_FUTURE && r->arrive <= w->tick)
                                r->state = R_PENDING;
                        if (r->s.deps == SCHED_DEPS_WAITING && r->deps_ok_at <= w->tick)
                                r->s.deps = SCHED_DEPS_OK;
                        busy = busy || r->state == R_RUNNING;
                }
                if (w->tick == arrivals + 10) {
                        /* arrivals, start times and dependencies are all settled */
                        stop = w->tick;
                        for (int i = 0; i < w->ns; i++) {
                                queue += w->ss[i].state == R_PENDING;
                                longest = w->ss[i].dur > longest ? w->ss[i].dur : longest;
                        }
                        bound = (queue + 1) * (longest + 2 + (w->pol.reserve_after ? w->pol.reserve_after
                                                                                   : w->pol.retries_to_skip + 1));
                }
                placed = pass(w);
                if (w->tick > arrivals + 10 && !busy && placed == 0)
                        break; /* idle: what still waits can never start */
                if (w->tick > arrivals + 10 && w->tick - stop > bound) {
                        FAIL(w, "still busy %d ticks after arrivals stopped (bound %d)", w->tick - stop, bound);
                        break;
                }
        }
        for (int i = 0; i < w->ns && !w->failed; i++) {
                const struct rs *r = &w->ss[i];
                if (r->state == R_PENDING && r->placeable == 1)
                        FAIL(w, "%s starved: fits an empty cluster and its quotas but never placed (%d tries)",
                             r->s.name, r->s.retries);
        }
        return !w->failed;
}

static void run_seeds(const char *count_var, unsigned dflt, bool wide)
{
        const char *one = getenv("SCHED_RANDOM_SEED"), *many = getenv(count_var);
        unsigned n = many ? (unsigned)strtoul(many, NULL, 10) : dflt;
        int failures = 0;

        if (one) {
                run_seed((unsigned)strtoul(one, NULL, 10), wide);
                return;
        }
        for (unsigned seed = 1; seed <= n && failures < 5; seed++)
                failures += !run_seed(seed, wide);
        if (getenv("SCHED_RANDOM_STATS"))
                printf("# %u seeds: %ld passes, %.1f pending per pass\n", n, stat_passes,
                       stat_passes ? (double)stat_pending / (double)stat_passes : 0.0);
}

/* Small clusters (1-12 agents, 4-48 sessions): every corner often. */
static void test_sched_random(void)
{
        run_seeds("SCHED_RANDOM_SEEDS", 2000, false);
}

/* Wide ones (64-256 agents, 100-320 sessions), so that the agent index's
 * tree and sorted arrays go deep. */
static void test_sched_random_wide(void)
{
        run_seeds("SCHED_RANDOM_WIDE_SEEDS", 6, true);
}

static const struct test tests[] = {
        TEST(test_sched_random),
        TEST(test_sched_random_wide),
        {},
};

int main(void)
{
        return test_main(tests);
}
