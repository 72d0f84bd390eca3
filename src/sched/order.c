/* order.c - the order in which a pass tries pending sessions.
 *
 * Priority bands first (higher priority before lower), then the resource
 * group's policy inside a band:
 *   fifo        oldest first
 *   lifo        newest first
 *   fair-share  users with the least decayed historical usage first
 *   drf         dominant resource fairness: the next session is the oldest
 *               of the user whose dominant share (the largest fraction of
 *               any slot of this group's capacity that the user occupies)
 *               is smallest, recomputed after every try.
 * Ties fall back to arrival order, then to queue position, so a pass is
 * deterministic. */
#include "common/compat.h"

#include "sched/sched-internal.h"

struct drf_user {
        int scope; /* user scope index, -1 for sessions without one */
        int next, end; /* their sessions: order[next..end) */
        double share;
};

static int cmp_i64(int64_t a, int64_t b)
{
        return a < b ? -1 : a > b;
}

static int user_of(const struct sched_session *s)
{
        return s->scope[SCHED_USER];
}

static double usage_of(const struct sched_input *in, const struct sched_session *s)
{
        return user_of(s) >= 0 ? in->scopes[user_of(s)].fair_share_usage : 0;
}

static int cmp_sessions(const struct sched_input *in, int ia, int ib)
{
        const struct sched_session *a = &in->pending[ia], *b = &in->pending[ib];
        int c = cmp_i64(b->priority, a->priority);

        if (c)
                return c;
        switch (in->policy.order) {
        case SCHED_LIFO:
                c = cmp_i64(b->enqueued_at, a->enqueued_at);
                break;
        case SCHED_FAIR_SHARE: {
                double ua = usage_of(in, a), ub = usage_of(in, b);
                c = ua < ub ? -1 : ua > ub;
                break;
        }
        case SCHED_DRF:
                c = cmp_i64(user_of(a), user_of(b)); /* group by user; the heap interleaves them */
                break;
        case SCHED_FIFO:
                break;
        }
        if (c)
                return c;
        c = cmp_i64(a->enqueued_at, b->enqueued_at);
        return c ? c : cmp_i64(ia, ib);
}

static int cmp_sessions_qsort(const void *pa, const void *pb, void *in)
{
        return cmp_sessions(in, *(const int *)pa, *(const int *)pb);
}

static double dominant_share(const struct sched_queue *q, int scope)
{
        double best = 0;

        if (scope < 0)
                return 0;
        const struct sched_vec *used = &q->in->scopes[scope].used;
        for (int k = 0; k < SCHED_NSLOTS; k++)
                if (q->total[k] > 0 && (double)used->v[k] / q->total[k] > best)
                        best = (double)used->v[k] / q->total[k];
        return best;
}

/* Heap order: smaller share first, then the older head session. */
static bool user_before(const struct sched_queue *q, int a, int b)
{
        const struct drf_user *ua = &q->users[a], *ub = &q->users[b];

        if (ua->share != ub->share)
                return ua->share < ub->share;
        return cmp_sessions(q->in, q->order[ua->next], q->order[ub->next]) < 0;
}

static void heap_push(struct sched_queue *q, int u)
{
        int i = q->nheap++;

        q->heap[i] = u;
        while (i > 0 && user_before(q, q->heap[i], q->heap[(i - 1) / 2])) {
                int p = (i - 1) / 2, t = q->heap[p];
                q->heap[p] = q->heap[i];
                q->heap[i] = t;
                i = p;
        }
}

static int heap_pop(struct sched_queue *q)
{
        int top = q->heap[0], i = 0;

        q->heap[0] = q->heap[--q->nheap];
        for (;;) {
                int l = 2 * i + 1, r = l + 1, m = i;
                if (l < q->nheap && user_before(q, q->heap[l], q->heap[m]))
                        m = l;
                if (r < q->nheap && user_before(q, q->heap[r], q->heap[m]))
                        m = r;
                if (m == i)
                        break;
                int t = q->heap[m];
                q->heap[m] = q->heap[i];
                q->heap[i] = t;
                i = m;
        }
        return top;
}

/* Fill the heap with the users of the next priority band. */
static void drf_next_band(struct sched_queue *q)
{
        int start = q->pos;
        int64_t prio = q->in->pending[q->order[start]].priority;

        q->nusers = 0;
        while (q->pos < q->n && q->in->pending[q->order[q->pos]].priority == prio) {
                int scope = user_of(&q->in->pending[q->order[q->pos]]);
                if (q->nusers == 0 || q->users[q->nusers - 1].scope != scope)
                        q->users[q->nusers++] = (struct drf_user){ .scope = scope, .next = q->pos };
                q->users[q->nusers - 1].end = ++q->pos;
        }
        for (int u = 0; u < q->nusers; u++) {
                q->users[u].share = dominant_share(q, q->users[u].scope);
                heap_push(q, u);
        }
}

void sched_queue_init(struct sched_queue *q, struct sched_input *in)
{
        *q = (struct sched_queue){ .in = in, .n = in->npending, .last_user = -1 };
        q->order = xmalloc(sizeof(int) * (size_t)(in->npending ? in->npending : 1));
        for (int i = 0; i < in->npending; i++)
                q->order[i] = i;
        qsort_r(q->order, (size_t)in->npending, sizeof(int), cmp_sessions_qsort, in);
        if (in->policy.order != SCHED_DRF)
                return;
        q->users = xmalloc(sizeof(*q->users) * (size_t)(in->npending ? in->npending : 1));
        q->heap = xmalloc(sizeof(int) * (size_t)(in->npending ? in->npending : 1));
        for (int a = 0; a < in->nagents; a++)
                for (int k = 0; k < SCHED_NSLOTS; k++)
                        q->total[k] += (double)in->agents[a].cap.v[k];
}

int sched_queue_next(struct sched_queue *q)
{
        if (q->in->policy.order != SCHED_DRF)
                return q->pos < q->n ? q->order[q->pos++] : -1;
        if (q->last_user >= 0) {
                struct drf_user *u = &q->users[q->last_user];
                if (u->next < u->end) {
                        u->share = dominant_share(q, u->scope);
                        heap_push(q, q->last_user);
                }
                q->last_user = -1;
        }
        if (q->nheap == 0 && q->pos < q->n)
                drf_next_band(q);
        if (q->nheap == 0)
                return -1;
        int u = heap_pop(q);
        q->last_user = u;
        return q->order[q->users[u].next++];
}

void sched_queue_free(struct sched_queue *q)
{
        free(q->order);
        free(q->users);
        free(q->heap);
        *q = (struct sched_queue){ 0 };
}
