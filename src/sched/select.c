/* select.c - choosing agents and GPU devices for a session's kernels.
 *
 * An agent fits a kernel when every slot of the request fits what it has
 * free and its GPU devices can hold the GPU part:
 *   - a request of at most one device's worth goes on one device (the
 *     fullest one that fits, or the emptiest under `dispersed`), or, when
 *     the group allows fragmentation, over several;
 *   - a larger request is spread evenly over the fewest devices that can
 *     hold it (3 fGPU with 2 fGPU per GPU: 1.5 on each of two); with
 *     fragmentation allowed, over more devices or unevenly when it must;
 *   - cuda.device and cuda.shares never mix: an agent offers one of them.
 * Among the agents that fit, a session asking no GPU prefers agents without
 * GPUs; then `concentrated` takes the one left fullest, `dispersed` the one
 * left emptiest (GPU, then cpu, then memory, then the rest; ties to the
 * lowest index), `roundrobin` the next one after the previous choice.
 * Cluster sessions are all-or-nothing: every kernel is placed or none is.
 *
 * Two ways to find the agent give the same answer: scanning every candidate
 * (designated agents, small passes) and the pass's index (index.c). */
#include "common/compat.h"

#include "sched/sched-internal.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

static inline int64_t dev_free(const struct sched_device *d)
{
        return d->cap - d->used;
}

static int gpu_slot_of(const struct sched_vec *req)
{
        if (req->v[SCHED_GPU_SHARES] > 0)
                return SCHED_GPU_SHARES;
        if (req->v[SCHED_GPU_DEVICE] > 0)
                return SCHED_GPU_DEVICE;
        return -1;
}

/* Devices by free quanta, most free first, ties by device number
 * (insertion sort: ndev is small). */
static void devices_by_free(const struct sched_agent *a, int idx[SCHED_MAX_DEVICES])
{
        for (int i = 0; i < a->ndev; i++) {
                int j = i;
                while (j > 0 && dev_free(&a->dev[idx[j - 1]]) < dev_free(&a->dev[i])) {
                        idx[j] = idx[j - 1];
                        j--;
                }
                idx[j] = i;
        }
}

static bool spread_greedy(const struct sched_agent *a, int64_t amount, const int idx[SCHED_MAX_DEVICES],
                          struct sched_kernel_alloc *out)
{
        out->ndev = 0;
        for (int j = 0; j < a->ndev && amount > 0; j++) {
                int64_t take = MIN(dev_free(&a->dev[idx[j]]), amount);
                if (take <= 0)
                        break;
                out->dev[out->ndev++] = (struct sched_device_alloc){ .dev = (int16_t)idx[j], .amount = take };
                amount -= take;
        }
        return amount == 0;
}

/* Plan `amount` quanta of the agent's GPU slot over its devices. */
static bool plan_devices(const struct sched_agent *a, int64_t amount, const struct sched_policy *p,
                         struct sched_kernel_alloc *out)
{
        int64_t maxcap = 0, total_free = 0;
        int idx[SCHED_MAX_DEVICES];

        out->ndev = 0;
        if (amount == 0)
                return true;
        for (int d = 0; d < a->ndev; d++) {
                maxcap = MAX(maxcap, a->dev[d].cap);
                total_free += dev_free(&a->dev[d]);
        }
        if (total_free < amount || maxcap == 0)
                return false;
        if (amount <= maxcap) {
                int best = -1;
                for (int d = 0; d < a->ndev; d++) {
                        int64_t f = dev_free(&a->dev[d]);
                        if (f < amount)
                                continue;
                        if (best < 0 || (p->select == SCHED_DISPERSED ? f > dev_free(&a->dev[best])
                                                                       : f < dev_free(&a->dev[best])))
                                best = d;
                }
                if (best >= 0) {
                        out->dev[0] = (struct sched_device_alloc){ .dev = (int16_t)best, .amount = amount };
                        out->ndev = 1;
                        return true;
                }
                if (!p->allow_fragmentation)
                        return false;
                devices_by_free(a, idx);
                return spread_greedy(a, amount, idx, out);
        }
        devices_by_free(a, idx);
        int kmin = (int)((amount + maxcap - 1) / maxcap);
        int kmax = p->allow_fragmentation ? a->ndev : kmin;
        for (int k = kmin; k <= kmax && k <= a->ndev; k++) {
                int64_t share = amount / k, rem = amount % k;
                bool ok = true;
                for (int j = 0; j < k && ok; j++)
                        ok = dev_free(&a->dev[idx[j]]) >= share + (j < rem);
                if (!ok)
                        continue;
                for (int j = 0; j < k; j++)
                        out->dev[j] = (struct sched_device_alloc){ .dev = (int16_t)idx[j], .amount = share + (j < rem) };
                out->ndev = k;
                return true;
        }
        return p->allow_fragmentation && spread_greedy(a, amount, idx, out);
}

static void apply(struct sched_agent *a, const struct sched_vec *req, const struct sched_kernel_alloc *k, int sign)
{
        for (int s = 0; s < SCHED_NSLOTS; s++)
                a->used.v[s] += sign * req->v[s];
        for (int j = 0; j < k->ndev; j++)
                a->dev[k->dev[j].dev].used += sign * k->dev[j].amount;
}

/* Can agent a take n kernels of req?  Fills kernels[0..n) when it can. */
static bool agent_fits(struct sched_agent *a, const struct sched_session *s, int n, const struct sched_policy *p,
                       struct sched_kernel_alloc *kernels)
{
        if (!a->schedulable || a->arch != s->arch)
                return false;
        for (int k = 0; k < SCHED_NSLOTS; k++)
                if (s->req.v[k] && a->used.v[k] + s->req.v[k] * n > a->cap.v[k])
                        return false;
        int g = gpu_slot_of(&s->req);
        if (g < 0) {
                for (int i = 0; i < n; i++)
                        kernels[i].ndev = 0;
                return true;
        }
        if (g != sched_agent_kind(a))
                return false;
        if (n == 1)
                return plan_devices(a, s->req.v[g], p, &kernels[0]);
        /* several kernels on one agent: plan each on top of the previous */
        int i;
        bool ok = true;
        for (i = 0; i < n && ok; i++) {
                ok = plan_devices(a, s->req.v[g], p, &kernels[i]);
                if (ok)
                        for (int j = 0; j < kernels[i].ndev; j++)
                                a->dev[kernels[i].dev[j].dev].used += kernels[i].dev[j].amount;
        }
        for (int m = 0; m < i - !ok; m++)
                for (int j = 0; j < kernels[m].ndev; j++)
                        a->dev[kernels[m].dev[j].dev].used -= kernels[m].dev[j].amount;
        return ok;
}

static bool is_better(const struct sched_index *ix, int a, int b)
{
        int c = sched_index_cmp(ix, a, b);
        return ix->dispersed ? c > 0 : c < 0;
}

/* ---- scanning every candidate ---- */

/* Lexicographic score of what an agent keeps free after taking n kernels:
 * GPU, cpu, memory, the rest.  Lower is better; `dispersed` negates. */
#define SCORE_LEN (SCHED_NSLOTS + 1)
static void score_agent(const struct sched_agent *a, const struct sched_session *s, int n, bool dispersed,
                        int64_t score[SCORE_LEN])
{
        static const int order[SCHED_NSLOTS] = { SCHED_GPU_SHARES, SCHED_GPU_DEVICE, SCHED_CPU, SCHED_MEM, 4, 5, 6, 7 };

        score[0] = gpu_slot_of(&s->req) < 0 && a->ndev > 0; /* GPU node for a non-GPU session */
        for (int i = 0; i < SCHED_NSLOTS; i++) {
                int k = order[i];
                int64_t left = a->cap.v[k] - a->used.v[k] - s->req.v[k] * n;
                score[i + 1] = dispersed ? -left : left;
        }
}

static bool score_less(const int64_t a[SCORE_LEN], const int64_t b[SCORE_LEN])
{
        for (int i = 0; i < SCORE_LEN; i++)
                if (a[i] != b[i])
                        return a[i] < b[i];
        return false;
}

static int rr_start(const struct sched_input *in)
{
        return in->nagents > 0 ? ((in->rr_cursor % in->nagents) + in->nagents) % in->nagents : 0;
}

static int scan_agents(struct sched_input *in, const struct sched_session *s, int n, struct sched_kernel_alloc *out,
                       struct sched_kernel_alloc *trial)
{
        int ncand = s->ndesignated > 0 ? s->ndesignated : in->nagents;
        int best = -1;
        int64_t best_score[SCORE_LEN], score[SCORE_LEN];

        if (in->policy.select == SCHED_ROUNDROBIN) {
                int fallback = -1, start = rr_start(in);
                for (int c = 0; c < ncand && best < 0; c++) {
                        int i = s->ndesignated > 0 ? s->designated[c] : (start + c) % in->nagents;
                        if (i < 0 || i >= in->nagents || !agent_fits(&in->agents[i], s, n, &in->policy, trial))
                                continue;
                        score_agent(&in->agents[i], s, n, false, score);
                        if (score[0] == 0) {
                                best = i;
                                memcpy(out, trial, sizeof(*trial) * (size_t)n);
                        } else if (fallback < 0) {
                                fallback = i;
                        }
                }
                if (best < 0 && fallback >= 0) {
                        best = fallback;
                        agent_fits(&in->agents[best], s, n, &in->policy, out);
                }
                return best;
        }
        for (int c = 0; c < ncand; c++) {
                int i = s->ndesignated > 0 ? s->designated[c] : c;
                if (i < 0 || i >= in->nagents || !agent_fits(&in->agents[i], s, n, &in->policy, trial))
                        continue;
                score_agent(&in->agents[i], s, n, in->policy.select == SCHED_DISPERSED, score);
                if (best < 0 || score_less(score, best_score)) {
                        best = i;
                        memcpy(best_score, score, sizeof(score));
                        memcpy(out, trial, sizeof(*trial) * (size_t)n);
                }
        }
        return best;
}

/* ---- through the index ---- */

struct want {
        struct sched_vec need; /* per slot, n kernels */
        int64_t need_dev;      /* free on one device that any fitting agent has */
};

static void want_init(const struct sched_class *c, const struct sched_input *in, const struct sched_session *s,
                      int n, struct want *w)
{
        int g = gpu_slot_of(&s->req);

        for (int k = 0; k < SCHED_NSLOTS; k++)
                w->need.v[k] = s->req.v[k] * n;
        w->need_dev = 0;
        if (g >= 0 && !in->policy.allow_fragmentation && s->req.v[g] <= c->min_maxcap)
                w->need_dev = s->req.v[g];
}

/* The first position in c->sorted whose free amounts are at least `need`
 * in key order: every agent that can hold need sorts there or after. */
static int sorted_lower_bound(const struct sched_index *ix, const struct sched_class *c, const struct sched_vec *need)
{
        static const int order[SCHED_NSLOTS] = { SCHED_GPU_SHARES, SCHED_GPU_DEVICE, SCHED_CPU, SCHED_MEM, 4, 5, 6, 7 };
        int lo = 0, hi = c->n;

        while (lo < hi) {
                int mid = lo + (hi - lo) / 2, cmp = 0;
                const struct sched_vec *k = &ix->key[c->sorted[mid]];
                for (int i = 0; i < SCHED_NSLOTS && !cmp; i++) {
                        /* a slot not asked for: no agent has less than min_free */
                        int64_t lim = need->v[order[i]] > 0 ? need->v[order[i]] : c->min_free.v[order[i]];
                        cmp = k->v[order[i]] < lim ? -1 : k->v[order[i]] > lim;
                }
                if (cmp < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* From the index alone (compact, no agent touched): may agent a fit? */
static inline bool quick_fit(const struct sched_index *ix, int a, const struct want *w, int nreq,
                             const int req_slots[SCHED_NSLOTS])
{
        const struct sched_vec *k = &ix->key[a];

        for (int i = 0; i < nreq; i++)
                if (k->v[req_slots[i]] < w->need.v[req_slots[i]])
                        return false;
        return w->need_dev <= 0 || ix->dev_free[a] >= w->need_dev;
}

/* concentrated / dispersed: the best agent of class c that fits and is
 * better than `bound` (an agent of another class, or -1). */
static int class_best(struct sched_input *in, struct sched_index *ix, struct sched_class *c,
                      const struct sched_session *s, int n, int bound, struct sched_kernel_alloc *out)
{
        struct want w;
        int req_slots[SCHED_NSLOTS], nreq = 0;

        want_init(c, in, s, n, &w);
        if (c->n == 0 || !sched_node_may_fit(&c->tree[1], &w.need, w.need_dev))
                return -1;
        for (int k = 0; k < SCHED_NSLOTS; k++)
                if (w.need.v[k] > 0)
                        req_slots[nreq++] = k;
        int lb = sorted_lower_bound(ix, c, &w.need);
        if (ix->dispersed) {
                for (int p = c->n - 1; p >= lb; p--) {
                        int a = c->sorted[p];
                        if (bound >= 0 && !is_better(ix, a, bound))
                                break;
                        if (quick_fit(ix, a, &w, nreq, req_slots) && agent_fits(&in->agents[a], s, n, &in->policy, out))
                                return a;
                }
        } else {
                for (int p = lb; p < c->n; p++) {
                        int a = c->sorted[p];
                        if (bound >= 0 && !is_better(ix, a, bound))
                                break;
                        if (quick_fit(ix, a, &w, nreq, req_slots) && agent_fits(&in->agents[a], s, n, &in->policy, out))
                                return a;
                }
        }
        return -1;
}

/* The first agent of class c at leaf position lo..hi-1 that fits. */
static int tree_first(struct sched_input *in, struct sched_class *c, int node, int nlo, int nhi, int lo, int hi,
                      const struct want *w, const struct sched_session *s, int n, struct sched_kernel_alloc *out)
{
        if (nhi <= lo || hi <= nlo || nlo >= c->n || !sched_node_may_fit(&c->tree[node], &w->need, w->need_dev))
                return -1;
        if (nhi - nlo == 1) {
                int a = c->byidx[nlo];
                return agent_fits(&in->agents[a], s, n, &in->policy, out) ? a : -1;
        }
        int mid = nlo + (nhi - nlo) / 2;
        int a = tree_first(in, c, 2 * node, nlo, mid, lo, hi, w, s, n, out);
        return a >= 0 ? a : tree_first(in, c, 2 * node + 1, mid, nhi, lo, hi, w, s, n, out);
}

/* roundrobin: the first agent of class c at or after agent `start`,
 * wrapping around. */
static int class_next(struct sched_input *in, struct sched_class *c, int start, const struct sched_session *s, int n,
                      struct sched_kernel_alloc *out)
{
        struct want w;
        int lo = 0, hi = c->n, a;

        want_init(c, in, s, n, &w);
        if (c->n == 0 || !sched_node_may_fit(&c->tree[1], &w.need, w.need_dev))
                return -1;
        while (lo < hi) {
                int mid = lo + (hi - lo) / 2;
                if (c->byidx[mid] < start)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        a = tree_first(in, c, 1, 0, c->size, lo, c->n, &w, s, n, out);
        if (a < 0)
                a = tree_first(in, c, 1, 0, c->size, 0, lo, &w, s, n, out);
        return a;
}

static int index_agents(struct sched_input *in, struct sched_index *ix, const struct sched_session *s, int n,
                        struct sched_kernel_alloc *out, struct sched_kernel_alloc *trial)
{
        int g = gpu_slot_of(&s->req), best = -1;
        bool rr = in->policy.select == SCHED_ROUNDROBIN;
        int start = rr_start(in);
        struct sched_class *c;

        if (g >= 0 || (c = sched_index_class(ix, s->arch, -1)) == NULL || c->n == 0) {
                /* a GPU session, or the GPU classes for one that asks none */
        } else if ((best = rr ? class_next(in, c, start, s, n, out) : class_best(in, ix, c, s, n, -1, out)) >= 0) {
                return best;
        }
        static const int kinds[] = { SCHED_GPU_DEVICE, SCHED_GPU_SHARES };
        for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
                if (g >= 0 && kinds[i] != g)
                        continue;
                c = sched_index_class(ix, s->arch, kinds[i]);
                if (!c)
                        continue;
                int a = rr ? class_next(in, c, start, s, n, trial) : class_best(in, ix, c, s, n, best, trial);
                if (a < 0)
                        continue;
                bool better = best < 0;
                if (!better && rr)
                        better = (a - start + in->nagents) % in->nagents < (best - start + in->nagents) % in->nagents;
                else if (!better)
                        better = is_better(ix, a, best);
                if (better) {
                        best = a;
                        memcpy(out, trial, sizeof(*trial) * (size_t)n);
                }
        }
        return best;
}

/* Pick the agent for n kernels of s among the candidates; -1 if none fits. */
static int choose_agent(struct sched_input *in, struct sched_index *ix, const struct sched_session *s, int n,
                        struct sched_kernel_alloc *out)
{
        struct sched_kernel_alloc few[4], *trial = n <= 4 ? few : xmalloc(sizeof(*trial) * (size_t)n);
        int best;

        if (ix && s->ndesignated == 0)
                best = index_agents(in, ix, s, n, out, trial);
        else
                best = scan_agents(in, s, n, out, trial);
        if (best >= 0 && s->ndesignated == 0 && in->policy.select == SCHED_ROUNDROBIN)
                in->rr_cursor = (best + 1) % in->nagents;
        if (trial != few)
                free(trial);
        return best;
}

/* ---- why nothing fits ---- */

static void most_free_scan(const struct sched_input *in, const struct sched_session *s, int g,
                           struct sched_node *most, int *usable, int *offers)
{
        int ncand = s->ndesignated > 0 ? s->ndesignated : in->nagents;

        for (int c = 0; c < ncand; c++) {
                int i = s->ndesignated > 0 ? s->designated[c] : c;
                if (i < 0 || i >= in->nagents)
                        continue;
                const struct sched_agent *a = &in->agents[i];
                if (!a->schedulable || a->arch != s->arch)
                        continue;
                (*usable)++;
                if (g >= 0 && sched_agent_kind(a) != g)
                        continue;
                (*offers)++;
                for (int k = 0; k < SCHED_NSLOTS; k++)
                        most->free[k] = MAX(most->free[k], a->cap.v[k] - a->used.v[k]);
                for (int d = 0; d < a->ndev; d++)
                        most->dev_free = MAX(most->dev_free, dev_free(&a->dev[d]));
        }
}

static void most_free_index(const struct sched_index *ix, const struct sched_session *s, int g,
                            struct sched_node *most, int *usable, int *offers)
{
        for (int c = 0; c < ix->nclass; c++) {
                const struct sched_class *cl = &ix->cls[c];
                if (cl->arch != s->arch || cl->n == 0)
                        continue;
                *usable += cl->n;
                if (g >= 0 && cl->kind != g)
                        continue;
                *offers += cl->n;
                for (int k = 0; k < SCHED_NSLOTS; k++)
                        most->free[k] = MAX(most->free[k], cl->tree[1].free[k]);
                most->dev_free = MAX(most->dev_free, cl->tree[1].dev_free);
        }
}

/* Append to a message, truncating at its end. */
static void __attribute__((format(printf, 3, 4))) msg_add(char *msg, size_t *off, const char *fmt, ...)
{
        va_list ap;
        int w;

        if (*off + 1 >= SCHED_MSG_MAX)
                return;
        va_start(ap, fmt);
        w = vsnprintf(msg + *off, SCHED_MSG_MAX - *off, fmt, ap);
        va_end(ap);
        if (w > 0)
                *off = MIN(*off + (size_t)w, SCHED_MSG_MAX - 1);
}

/* "cpu 1, mem 1 GiB, 1 fGPU": the slots s asks for, with amounts v. */
static void add_requested(const struct sched_input *in, const struct sched_session *s, const int64_t *v, char *msg,
                          size_t *off)
{
        static const int order[SCHED_NSLOTS] = { SCHED_CPU, SCHED_MEM, SCHED_GPU_DEVICE, SCHED_GPU_SHARES, 4, 5, 6, 7 };
        bool first = true;

        for (int i = 0; i < SCHED_NSLOTS; i++) {
                int k = order[i];
                char amount[48];
                if (k >= in->slots->n || s->req.v[k] == 0)
                        continue;
                if (k == SCHED_GPU_DEVICE || k == SCHED_GPU_SHARES)
                        msg_add(msg, off, "%s%s", first ? "" : ", ",
                                sched_amount_format(in->slots, k, MAX(v[k], 0), amount, sizeof(amount)));
                else
                        msg_add(msg, off, "%s%s %s", first ? "" : ", ", in->slots->name[k],
                                slot_format_human(in->slots->name[k], MAX(v[k], 0), amount, sizeof(amount)));
                first = false;
        }
        if (first)
                msg_add(msg, off, "nothing");
}

/* Why nothing fits: the largest free amount of each requested slot on any
 * one candidate agent (of the GPU kind asked for), and on any one GPU. */
void sched_explain(const struct sched_input *in, const struct sched_index *ix, const struct sched_session *s,
                   char *msg)
{
        if (!msg)
                return;
        struct sched_node most = { 0 };
        int usable = 0, offers = 0, g = gpu_slot_of(&s->req);

        if (ix && s->ndesignated == 0)
                most_free_index(ix, s, g, &most, &usable, &offers);
        else
                most_free_scan(in, s, g, &most, &usable, &offers);
        if (usable == 0) {
                snprintf(msg, SCHED_MSG_MAX, "%s", s->ndesignated > 0 ? "none of the designated agents is available"
                                                                        : "no agent of this architecture is available");
                return;
        }
        if (offers == 0) {
                snprintf(msg, SCHED_MSG_MAX, "no %sagent offers %s", s->ndesignated > 0 ? "designated " : "",
                         g == SCHED_GPU_SHARES ? "fractional GPUs (cuda.shares)" : "whole GPUs (cuda.device)");
                return;
        }
        struct sched_vec want_v = s->req;
        for (int k = 0; k < SCHED_NSLOTS; k++)
                want_v.v[k] *= s->multi_node ? 1 : s->cluster_size;
        size_t off = 0;
        msg[0] = '\0';
        if (s->cluster_size > 1 && s->multi_node) {
                msg_add(msg, &off, "not enough agents have room for %d kernels of ", s->cluster_size);
                add_requested(in, s, want_v.v, msg, &off);
                msg_add(msg, &off, " each");
        } else {
                msg_add(msg, &off, "no agent has room for ");
                add_requested(in, s, want_v.v, msg, &off);
        }
        msg_add(msg, &off, " (most free on one agent: ");
        add_requested(in, s, most.free, msg, &off);
        if (g >= 0) {
                char dev[48];
                msg_add(msg, &off, "; on one GPU: %s",
                        sched_amount_format(in->slots, g, MAX(most.dev_free, 0), dev, sizeof(dev)));
        }
        msg_add(msg, &off, ")");
}

/* ---- placing ---- */

static void place_kernel(struct sched_input *in, struct sched_index *ix, const struct sched_session *s,
                         const struct sched_kernel_alloc *k, int sign)
{
        if (ix)
                sched_index_remove(ix, k->agent);
        apply(&in->agents[k->agent], &s->req, k, sign);
        if (ix)
                sched_index_insert(ix, k->agent);
}

bool sched_place(struct sched_input *in, struct sched_index *ix, const struct sched_session *s,
                 struct sched_kernel_alloc *kernels, char *msg)
{
        if (!s->multi_node || s->cluster_size == 1) {
                int a = choose_agent(in, ix, s, s->cluster_size, kernels);
                if (a < 0) {
                        sched_explain(in, ix, s, msg);
                        return false;
                }
                if (ix)
                        sched_index_remove(ix, a);
                for (int i = 0; i < s->cluster_size; i++) {
                        kernels[i].agent = a;
                        apply(&in->agents[a], &s->req, &kernels[i], +1);
                }
                if (ix)
                        sched_index_insert(ix, a);
                return true;
        }
        int cursor = in->rr_cursor;
        for (int i = 0; i < s->cluster_size; i++) {
                int a = choose_agent(in, ix, s, 1, &kernels[i]);
                if (a < 0) {
                        while (i-- > 0)
                                place_kernel(in, ix, s, &kernels[i], -1);
                        in->rr_cursor = cursor;
                        sched_explain(in, ix, s, msg);
                        return false;
                }
                kernels[i].agent = a;
                place_kernel(in, ix, s, &kernels[i], +1);
        }
        return true;
}

/* How many kernels of s fit on agent a when it is empty (at most max). */
static int fits_when_empty(const struct sched_input *in, const struct sched_agent *a, const struct sched_session *s,
                           int max)
{
        struct sched_agent e;
        struct sched_kernel_alloc k;
        int n = 0;

        if (!a->schedulable || a->arch != s->arch)
                return 0;
        for (int i = 0; i < SCHED_NSLOTS; i++)
                if (s->req.v[i] > a->cap.v[i])
                        return 0;
        e = *a;
        memset(&e.used, 0, sizeof(e.used));
        for (int d = 0; d < e.ndev; d++)
                e.dev[d].used = 0;
        while (n < max && agent_fits(&e, s, 1, &in->policy, &k)) {
                apply(&e, &s->req, &k, +1);
                n++;
        }
        return n;
}

bool sched_fits_empty(const struct sched_input *in, const struct sched_session *s)
{
        int ncand = s->ndesignated > 0 ? s->ndesignated : in->nagents;
        int need = s->cluster_size, got = 0;

        for (int c = 0; c < ncand; c++) {
                int i = s->ndesignated > 0 ? s->designated[c] : c;
                bool dup = false;
                for (int e = 0; e < c && s->ndesignated > 0 && !dup; e++)
                        dup = s->designated[e] == i; /* an agent listed twice holds no more */
                if (i < 0 || i >= in->nagents || dup)
                        continue;
                int n = fits_when_empty(in, &in->agents[i], s, s->multi_node ? need - got : need);
                if (s->multi_node ? (got += n) >= need : n >= need)
                        return true;
        }
        return false;
}
