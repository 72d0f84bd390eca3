/* engine.c - the simulator's virtual cluster and event loop.
 *
 * The cluster is what the manager would hand sched_pass(): N agents with
 * their GPU devices (cuda.shares of fgpu x 100 quanta each in fractional
 * mode, cuda.device of 1 in whole mode), one quota scope per user and per
 * project, and the queue of pending sessions.  The clock jumps from event
 * to event:
 *
 *     t = the earliest of: next arrival, next completion (a heap), the
 *         pass an event asked for, the next periodic pass (only with
 *         --pass-interval and a queue)
 *     samples of the time series for every tick before t
 *     completions at t: free the agents' slots and devices, the scopes
 *     arrivals at t: a job that no empty agent (or the user's limit) could
 *         ever hold is rejected; the others join the queue
 *     one sched_pass() over the whole queue, if any, right after the events
 *         (or --kick-delay later, so that the events until then make one
 *         pass, as the manager's kick timer does); each placed job runs
 *         until t + duration (pushed on the heap)
 *     sessions waiting longer than the pending timeout leave the queue
 *
 * Each event costs O(log n) here (the heap) besides the pass itself; the
 * queue is compacted after each pass (O(queue), the pass's own sort is
 * O(queue log queue)).  Fair-share usage is decayed per user as
 * 2^(-age / half_life) of what the user's running jobs occupy (the
 * dominant share of one agent, per second), brought up to date for the
 * users in the queue before each pass.  Fragmentation is the free GPU of
 * devices that no waiting GPU request can use: on agents without the cores
 * or memory of the smallest waiting request, or in pieces smaller than its
 * per-device need (a lower bound: the minima are taken per dimension). */
#include "common/compat.h"

#include <math.h>
#include <time.h>

#include "sim/sim-internal.h"

#define SAMPLES_TARGET 1000

struct completion {
        int64_t t;
        size_t job;
};

struct fs_user {
        double usage; /* decayed agent-seconds at `t` */
        double rate;  /* agents' worth running now */
        int64_t t;
        int64_t stamp; /* pass that last refreshed it */
};

struct engine {
        const struct sim_config *cfg;
        const struct sim_workload *w;
        struct sim_result *res;
        struct sched_slots slots;
        int gslot;       /* the GPU slot the agents offer */
        int64_t dev_cap; /* its quanta per device */
        struct sched_agent *agents;
        char (*agent_ids)[24];
        struct sched_scope *scopes;
        int nscopes;
        struct sched_session *pending;
        size_t *pending_job;
        bool *drop;
        size_t npending, cap;
        struct sched_kernel_alloc **kernels; /* per job, while it runs */
        struct completion *heap;
        size_t nheap;
        struct fs_user *fs;
        int rr_cursor;
        int64_t gpu_work, gpu_alloc, cpu_used, running; /* handed out now */
        int64_t gpu_work_cap, gpu_alloc_cap, cpu_cap;
        int64_t last_t;
        int64_t sample_every, next_sample;
        bool auto_samples;
        bool frag_valid;
        double frag;
};

const char *sim_gpu_mode_name(enum sim_gpu_mode m)
{
        return m == SIM_WHOLE ? "whole" : "fractional";
}

const char *sim_job_state_name(enum sim_job_state s)
{
        static const char *const names[] = {
                [SIM_JOB_DONE] = "done",
                [SIM_JOB_REJECTED] = "rejected",
                [SIM_JOB_TIMED_OUT] = "timed-out",
                [SIM_JOB_NEVER] = "never-started",
        };
        return s >= 0 && (size_t)s < ARRAY_SIZE(names) ? names[s] : "?";
}

static double clock_now(clockid_t id)
{
        struct timespec ts;
        clock_gettime(id, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
        return clock_now(CLOCK_MONOTONIC);
}

static int64_t ceil_div(int64_t a, int64_t b)
{
        return (a + b - 1) / b;
}

/* ---- the completion heap ---- */

static bool before(const struct completion *a, const struct completion *b)
{
        return a->t < b->t || (a->t == b->t && a->job < b->job);
}

static void heap_push(struct engine *e, int64_t t, size_t job)
{
        size_t i = e->nheap++;

        e->heap[i] = (struct completion){ t, job };
        while (i > 0 && before(&e->heap[i], &e->heap[(i - 1) / 2])) {
                struct completion tmp = e->heap[i];
                e->heap[i] = e->heap[(i - 1) / 2];
                e->heap[(i - 1) / 2] = tmp;
                i = (i - 1) / 2;
        }
}

static struct completion heap_pop(struct engine *e)
{
        struct completion top = e->heap[0];
        size_t i = 0;

        e->heap[0] = e->heap[--e->nheap];
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < e->nheap && before(&e->heap[l], &e->heap[m]))
                        m = l;
                if (r < e->nheap && before(&e->heap[r], &e->heap[m]))
                        m = r;
                if (m == i)
                        break;
                struct completion tmp = e->heap[i];
                e->heap[i] = e->heap[m];
                e->heap[m] = tmp;
                i = m;
        }
        return top;
}

/* ---- the cluster ---- */

static void job_req(const struct engine *e, const struct sim_job *j, struct sched_vec *v)
{
        memset(v, 0, sizeof(*v));
        v->v[SCHED_CPU] = j->cpu;
        v->v[SCHED_MEM] = j->mem;
        if (j->gpu > 0)
                v->v[e->gslot] = e->cfg->mode == SIM_WHOLE ? ceil_div(j->gpu, 100)
                                                           : ceil_div(j->gpu * e->cfg->cluster.fgpu, 100);
}

/* Could the job ever start: does each kernel fit an empty agent, and the
 * whole job the user's limit? */
static bool placeable(const struct engine *e, const struct sim_job *j, const struct sched_vec *req)
{
        const struct sim_cluster *c = &e->cfg->cluster;
        int64_t g = req->v[e->gslot];

        if (c->nagents == 0 || req->v[SCHED_CPU] > c->cpu || req->v[SCHED_MEM] > c->mem)
                return false;
        if (g > 0 && g > (int64_t)c->gpus * e->dev_cap)
                return false;
        if (g > 0 && e->cfg->user_gpu_limit >= 0 && g * j->nodes > e->scopes[j->user].limit.v[e->gslot])
                return false;
        return true;
}

/* What one job weighs for fair-share: its dominant share of one agent. */
static double fs_weight(const struct engine *e, const struct sim_job *j)
{
        const struct sim_cluster *c = &e->cfg->cluster;
        double w = 0;

        if (c->cpu > 0)
                w = fmax(w, (double)j->cpu / (double)c->cpu);
        if (c->mem > 0)
                w = fmax(w, (double)j->mem / (double)c->mem);
        if (c->gpus > 0)
                w = fmax(w, (double)j->gpu / (100.0 * c->gpus));
        return w * j->nodes;
}

static void fs_advance(struct engine *e, int u, int64_t now)
{
        struct fs_user *f = &e->fs[u];

        if (now <= f->t)
                return;
        double h = (double)e->cfg->policy.fair_share_half_life / 1e6;
        double d = exp2(-((double)(now - f->t) / 1e6) / h);
        f->usage = f->usage * d + f->rate * h / M_LN2 * (1 - d);
        f->t = now;
}

static bool fair_share(const struct engine *e)
{
        return e->cfg->policy.order == SCHED_FAIR_SHARE && e->cfg->policy.fair_share_half_life > 0;
}

static void account(struct engine *e, size_t jid, int sign, int64_t now)
{
        const struct sim_job *j = &e->w->jobs[jid];
        struct sched_vec req;

        job_req(e, j, &req);
        e->gpu_work += sign * j->gpu * j->nodes;
        e->gpu_alloc += sign * req.v[e->gslot] * j->nodes;
        e->cpu_used += sign * j->cpu * j->nodes;
        e->running += sign;
        if (fair_share(e)) {
                fs_advance(e, j->user, now);
                e->fs[j->user].rate += sign * fs_weight(e, j);
                if (e->fs[j->user].rate < 1e-9)
                        e->fs[j->user].rate = 0; /* no drift below zero */
        }
        e->frag_valid = false;
}

static void start_job(struct engine *e, size_t jid, struct sched_kernel_alloc *k, int64_t now)
{
        const struct sim_job *j = &e->w->jobs[jid];

        e->kernels[jid] = k;
        e->res->jobs[jid].start = now;
        e->res->placements++;
        heap_push(e, now + j->duration, jid);
        account(e, jid, +1, now);
}

static void finish_job(struct engine *e, size_t jid, int64_t now)
{
        const struct sim_job *j = &e->w->jobs[jid];
        struct sched_kernel_alloc *k = e->kernels[jid];
        struct sched_vec req;

        job_req(e, j, &req);
        for (int i = 0; i < j->nodes; i++) {
                struct sched_agent *a = &e->agents[k[i].agent];
                for (int s = 0; s < SCHED_NSLOTS; s++)
                        a->used.v[s] -= req.v[s];
                for (int d = 0; d < k[i].ndev; d++)
                        a->dev[k[i].dev[d].dev].used -= k[i].dev[d].amount;
        }
        int scope[2] = { j->user, e->w->users.n + j->project };
        for (int i = 0; i < 2; i++) {
                struct sched_scope *sc = &e->scopes[scope[i]];
                for (int s = 0; s < SCHED_NSLOTS; s++)
                        sc->used.v[s] -= req.v[s] * j->nodes;
                sc->sessions--;
        }
        free(k);
        e->kernels[jid] = NULL;
        e->res->jobs[jid].end = now;
        e->res->jobs[jid].state = SIM_JOB_DONE;
        account(e, jid, -1, now);
}

static void enqueue(struct engine *e, size_t jid)
{
        const struct sim_job *j = &e->w->jobs[jid];
        struct sched_vec req;

        job_req(e, j, &req);
        if (!placeable(e, j, &req)) {
                e->res->jobs[jid].state = SIM_JOB_REJECTED;
                e->res->rejected++;
                return;
        }
        if (e->npending == e->cap) {
                e->cap = e->cap ? e->cap * 2 : 1024;
                e->pending = xrealloc(e->pending, sizeof(*e->pending) * e->cap);
                e->pending_job = xrealloc(e->pending_job, sizeof(*e->pending_job) * e->cap);
                e->drop = xrealloc(e->drop, sizeof(*e->drop) * e->cap);
        }
        e->pending_job[e->npending] = jid;
        e->pending[e->npending++] = (struct sched_session){
                .id = j->id,
                .name = j->id,
                .priority = j->priority,
                .enqueued_at = j->arrival,
                .req = req,
                .cluster_size = j->nodes,
                .multi_node = j->nodes > 1,
                .scope = { [SCHED_KEYPAIR] = -1, [SCHED_USER] = j->user,
                           [SCHED_PROJECT] = e->w->users.n + j->project, [SCHED_DOMAIN] = -1 },
                .deps = SCHED_DEPS_OK,
                .rg_allowed = true,
        };
        if ((int64_t)e->npending > e->res->max_queue)
                e->res->max_queue = (int64_t)e->npending;
        e->frag_valid = false;
}

static int pass(struct engine *e, int64_t now, struct tess_error **err)
{
        struct sched_input in = {
                .slots = &e->slots,
                .policy = e->cfg->policy,
                .agents = e->agents,
                .nagents = e->cfg->cluster.nagents,
                .scopes = e->scopes,
                .nscopes = e->nscopes,
                .pending = e->pending,
                .npending = (int)e->npending,
                .now = now,
                .rr_cursor = e->rr_cursor,
                .no_messages = true, /* nobody reads why a virtual session waits */
        };
        struct sched_output out;
        size_t keep = 0;
        int r;

        if (fair_share(e)) {
                for (size_t i = 0; i < e->npending; i++) {
                        int u = e->pending[i].scope[SCHED_USER];
                        if (e->fs[u].stamp == e->res->passes + 1)
                                continue;
                        fs_advance(e, u, now);
                        e->fs[u].stamp = e->res->passes + 1;
                        e->scopes[u].fair_share_usage = e->fs[u].usage;
                }
        }
        double t0 = wall_now();
        r = sched_pass(&in, &out, err);
        e->res->pass_wall += wall_now() - t0;
        e->res->passes++;
        if (r < 0)
                return tess_err_wrap(err, "scheduling pass at %.3f s", (double)now / 1e6);
        e->rr_cursor = in.rr_cursor;
        memset(e->drop, 0, sizeof(*e->drop) * e->npending);
        for (int i = 0; i < out.n; i++) {
                struct sched_decision *d = &out.d[i];
                size_t jid = e->pending_job[d->session];
                if (d->outcome == SCHED_PLACED) {
                        start_job(e, jid, TAKE_PTR(d->kernels), now);
                        e->drop[d->session] = true;
                } else if (d->outcome == SCHED_CANCEL) {
                        e->drop[d->session] = true;
                }
        }
        sched_output_free(&out);
        int64_t timeout = e->cfg->policy.pending_timeout;
        for (size_t i = 0; i < e->npending; i++) {
                if (!e->drop[i] && timeout > 0 && now - e->pending[i].enqueued_at >= timeout) {
                        e->drop[i] = true;
                        e->res->jobs[e->pending_job[i]].state = SIM_JOB_TIMED_OUT;
                        e->res->timed_out++;
                }
                if (e->drop[i])
                        continue;
                if (keep != i) {
                        e->pending[keep] = e->pending[i];
                        e->pending_job[keep] = e->pending_job[i];
                }
                keep++;
        }
        if (keep != e->npending)
                e->frag_valid = false;
        e->npending = keep;
        return 0;
}

/* ---- the time series ---- */

static double fragmentation(struct engine *e)
{
        int64_t dmin = INT64_MAX, cmin = INT64_MAX, mmin = INT64_MAX, frag = 0;

        if (e->frag_valid)
                return e->frag;
        for (size_t i = 0; i < e->npending; i++) {
                const struct sched_vec *q = &e->pending[i].req;
                int64_t g = q->v[e->gslot];
                if (g == 0)
                        continue;
                int64_t per = g <= e->dev_cap ? g : ceil_div(g, ceil_div(g, e->dev_cap));
                if (e->cfg->policy.allow_fragmentation)
                        per = 1;
                dmin = per < dmin ? per : dmin;
                cmin = q->v[SCHED_CPU] < cmin ? q->v[SCHED_CPU] : cmin;
                mmin = q->v[SCHED_MEM] < mmin ? q->v[SCHED_MEM] : mmin;
        }
        if (dmin != INT64_MAX) {
                for (int a = 0; a < e->cfg->cluster.nagents; a++) {
                        const struct sched_agent *ag = &e->agents[a];
                        bool starved = ag->cap.v[SCHED_CPU] - ag->used.v[SCHED_CPU] < cmin ||
                                       ag->cap.v[SCHED_MEM] - ag->used.v[SCHED_MEM] < mmin;
                        for (int d = 0; d < ag->ndev; d++) {
                                int64_t f = ag->dev[d].cap - ag->dev[d].used;
                                if (f > 0 && (starved || f < dmin))
                                        frag += f;
                        }
                }
        }
        e->frag = (double)frag / (double)e->dev_cap;
        e->frag_valid = true;
        return e->frag;
}

static void add_sample(struct engine *e, int64_t t)
{
        struct sim_result *r = e->res;

        if (r->nsamples == r->cap) {
                r->cap = r->cap ? r->cap * 2 : 1024;
                r->samples = xrealloc(r->samples, sizeof(*r->samples) * r->cap);
        }
        r->samples[r->nsamples++] = (struct sim_sample){
                .t = t,
                .gpu_util = e->gpu_work_cap ? (double)e->gpu_work / (double)e->gpu_work_cap : 0,
                .gpu_alloc = e->gpu_alloc_cap ? (double)e->gpu_alloc / (double)e->gpu_alloc_cap : 0,
                .cpu_util = e->cpu_cap ? (double)e->cpu_used / (double)e->cpu_cap : 0,
                .frag = fragmentation(e),
                .queue = (int64_t)e->npending,
                .running = e->running,
        };
        /* automatic spacing: keep between 1x and 2x the target */
        if (e->auto_samples && r->nsamples >= 2 * SAMPLES_TARGET) {
                size_t k = 0;
                for (size_t i = 0; i < r->nsamples; i += 2)
                        r->samples[k++] = r->samples[i];
                r->nsamples = k;
                e->sample_every *= 2;
                e->next_sample = r->samples[k - 1].t + e->sample_every;
        }
}

/* Samples for the ticks before t (the state has not changed since last_t). */
static void samples_until(struct engine *e, int64_t t, bool inclusive)
{
        while (e->next_sample < t || (inclusive && e->next_sample == t)) {
                int64_t tick = e->next_sample;
                e->next_sample += e->sample_every;
                add_sample(e, tick);
        }
}

static void integrate(struct engine *e, int64_t t)
{
        double dt = (double)(t - e->last_t);

        if (dt <= 0)
                return;
        if (e->gpu_work_cap)
                e->res->gpu_util_area += dt * (double)e->gpu_work / (double)e->gpu_work_cap;
        if (e->gpu_alloc_cap)
                e->res->gpu_alloc_area += dt * (double)e->gpu_alloc / (double)e->gpu_alloc_cap;
        if (e->cpu_cap)
                e->res->cpu_util_area += dt * (double)e->cpu_used / (double)e->cpu_cap;
        e->last_t = t;
}

/* ---- set-up ---- */

static int setup(struct engine *e, const struct sim_config *cfg, const struct sim_workload *w,
                 struct sim_result *res, struct tess_error **err)
{
        const struct sim_cluster *c = &cfg->cluster;

        if (c->nagents < 0 || c->nagents > 1000000)
                return tess_err(err, EINVAL, "the number of agents must be from 0 to 1000000");
        if (c->gpus < 0 || c->gpus > SCHED_MAX_DEVICES)
                return tess_err(err, EINVAL, "GPUs per agent must be from 0 to %d", SCHED_MAX_DEVICES);
        if (c->fgpu < 1 || c->fgpu > 10000)
                return tess_err(err, EINVAL, "fGPU per GPU must be from 0.01 to 100");
        if (c->cpu < 0 || c->mem < 0)
                return tess_err(err, EINVAL, "cores and memory per agent must not be negative");

        e->cfg = cfg;
        e->w = w;
        e->res = res;
        sched_slots_init(&e->slots);
        e->gslot = cfg->mode == SIM_WHOLE ? SCHED_GPU_DEVICE : SCHED_GPU_SHARES;
        e->dev_cap = cfg->mode == SIM_WHOLE ? 1 : c->fgpu;
        e->agents = xcalloc((size_t)c->nagents + 1, sizeof(*e->agents));
        e->agent_ids = xcalloc((size_t)c->nagents + 1, sizeof(*e->agent_ids));
        for (int i = 0; i < c->nagents; i++) {
                struct sched_agent *a = &e->agents[i];
                snprintf(e->agent_ids[i], sizeof(e->agent_ids[i]), "agent-%04d", i + 1);
                a->id = e->agent_ids[i];
                a->schedulable = true;
                a->cap.v[SCHED_CPU] = c->cpu;
                a->cap.v[SCHED_MEM] = c->mem;
                sched_agent_set_gpus(a, e->gslot, c->gpus, e->dev_cap);
        }
        e->nscopes = w->users.n + w->projects.n;
        e->scopes = xcalloc((size_t)e->nscopes + 1, sizeof(*e->scopes));
        for (int i = 0; i < e->nscopes; i++) {
                struct sched_scope *sc = &e->scopes[i];
                sc->kind = i < w->users.n ? SCHED_USER : SCHED_PROJECT;
                sched_vec_unlimited(&sc->limit);
                sc->max_sessions = -1;
                sc->max_containers = -1;
                if (sc->kind == SCHED_USER && cfg->user_gpu_limit >= 0)
                        sc->limit.v[e->gslot] = cfg->mode == SIM_WHOLE ? cfg->user_gpu_limit / 100
                                                                       : cfg->user_gpu_limit * c->fgpu / 100;
        }
        e->fs = xcalloc((size_t)w->users.n + 1, sizeof(*e->fs));
        e->kernels = xcalloc(w->n + 1, sizeof(*e->kernels));
        e->heap = xmalloc(sizeof(*e->heap) * (w->n + 1));
        e->gpu_work_cap = (int64_t)c->nagents * c->gpus * 100;
        e->gpu_alloc_cap = (int64_t)c->nagents * c->gpus * e->dev_cap;
        e->cpu_cap = (int64_t)c->nagents * c->cpu;

        *res = (struct sim_result){ .gpus_total = (int64_t)c->nagents * c->gpus, .arrivals_end = -1 };
        res->jobs = xmalloc(sizeof(*res->jobs) * (w->n + 1));
        for (size_t i = 0; i < w->n; i++)
                res->jobs[i] = (struct sim_job_result){ .start = -1, .end = -1, .state = SIM_JOB_NEVER };
        e->auto_samples = cfg->sample_interval <= 0;
        e->sample_every = cfg->sample_interval;
        if (e->auto_samples) {
                int64_t span = w->n ? w->jobs[w->n - 1].arrival : 0;
                e->sample_every = span / SAMPLES_TARGET > 1000000 ? span / SAMPLES_TARGET : 1000000;
        }
        return 0;
}

static void teardown(struct engine *e)
{
        if (e->kernels)
                for (size_t i = 0; i < e->w->n; i++)
                        free(e->kernels[i]);
        free(e->kernels);
        free(e->agents);
        free(e->agent_ids);
        free(e->scopes);
        free(e->pending);
        free(e->pending_job);
        free(e->drop);
        free(e->heap);
        free(e->fs);
}

int sim_engine_run(const struct sim_config *cfg, const struct sim_workload *w, struct sim_result *ret,
                   struct tess_error **err)
{
        struct engine e = { 0 };
        int64_t due = INT64_MAX; /* the next pass asked for by an event */
        size_t next = 0;
        double t0 = wall_now(), c0 = clock_now(CLOCK_PROCESS_CPUTIME_ID);
        int r;

        r = setup(&e, cfg, w, ret, err);
        if (r < 0) {
                *ret = (struct sim_result){ 0 };
                teardown(&e);
                return r;
        }
        for (;;) {
                int64_t t = INT64_MAX, tick = INT64_MAX;
                bool event = false;
                if (next < w->n)
                        t = w->jobs[next].arrival;
                if (e.nheap && e.heap[0].t < t)
                        t = e.heap[0].t;
                if (due < t)
                        t = due;
                if (cfg->pass_interval > 0 && e.npending) {
                        tick = (e.last_t / cfg->pass_interval + 1) * cfg->pass_interval;
                        if (tick < t)
                                t = tick;
                }
                if (t == INT64_MAX)
                        break;
                samples_until(&e, t, false);
                integrate(&e, t);
                while (e.nheap && e.heap[0].t == t) {
                        finish_job(&e, heap_pop(&e).job, t);
                        event = true;
                }
                while (next < w->n && w->jobs[next].arrival == t) {
                        enqueue(&e, next++);
                        event = true;
                }
                if (event && t + cfg->kick_delay < due)
                        due = t + cfg->kick_delay; /* the manager's kick timer: a burst makes one pass */
                if (next == w->n && ret->arrivals_end < 0) {
                        ret->arrivals_end = t;
                        ret->gpu_util_area_arr = ret->gpu_util_area;
                        ret->gpu_alloc_area_arr = ret->gpu_alloc_area;
                        ret->cpu_util_area_arr = ret->cpu_util_area;
                }
                if (due > t && tick != t)
                        continue;
                if (due <= t)
                        due = INT64_MAX;
                if (e.npending) {
                        r = pass(&e, t, err);
                        if (r < 0)
                                break;
                }
        }
        samples_until(&e, e.last_t, true);
        for (size_t i = 0; i < e.npending; i++)
                ret->never++;
        ret->makespan = e.last_t;
        teardown(&e);
        ret->engine_wall = wall_now() - t0;
        ret->engine_cpu = clock_now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        return r < 0 ? r : 0;
}

void sim_result_release(struct sim_result *r)
{
        free(r->jobs);
        free(r->samples);
        *r = (struct sim_result){ 0 };
}
