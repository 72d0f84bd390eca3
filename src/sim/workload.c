/* workload.c - the simulator's list of jobs and its interned user and
 * project names (see sim.h). */
#include "common/compat.h"

#include "sim/sim.h"

static uint64_t hash_mem(const char *p, size_t len)
{
        uint64_t h = 1469598103934665603ULL;
        for (size_t i = 0; i < len; i++)
                h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
        return h;
}

static void names_release(struct sim_names *t)
{
        for (int i = 0; i < t->n; i++)
                free(t->v[i]);
        free(t->v);
        free(t->slot);
        *t = (struct sim_names){ 0 };
}

static void names_rehash(struct sim_names *t, int nslot)
{
        free(t->slot);
        t->nslot = nslot;
        t->slot = xmalloc(sizeof(int) * (size_t)nslot);
        for (int i = 0; i < nslot; i++)
                t->slot[i] = -1;
        for (int i = 0; i < t->n; i++) {
                size_t h = hash_mem(t->v[i], strlen(t->v[i])) & (size_t)(nslot - 1);
                while (t->slot[h] >= 0)
                        h = (h + 1) & (size_t)(nslot - 1);
                t->slot[h] = i;
        }
}

int sim_names_intern(struct sim_names *t, const char *name, size_t len)
{
        if (t->nslot == 0 || (t->n + 1) * 2 > t->nslot)
                names_rehash(t, t->nslot ? t->nslot * 2 : 64);
        size_t h = hash_mem(name, len) & (size_t)(t->nslot - 1);
        for (; t->slot[h] >= 0; h = (h + 1) & (size_t)(t->nslot - 1)) {
                const char *s = t->v[t->slot[h]];
                if (strlen(s) == len && memcmp(s, name, len) == 0)
                        return t->slot[h];
        }
        if (t->n == t->cap) {
                t->cap = t->cap ? t->cap * 2 : 16;
                t->v = xrealloc(t->v, sizeof(char *) * (size_t)t->cap);
        }
        t->v[t->n] = xstrndup(name, len);
        t->slot[h] = t->n;
        return t->n++;
}

void sim_workload_init(struct sim_workload *w)
{
        *w = (struct sim_workload){ 0 };
}

void sim_workload_release(struct sim_workload *w)
{
        for (size_t i = 0; i < w->n; i++)
                free(w->jobs[i].id);
        free(w->jobs);
        names_release(&w->users);
        names_release(&w->projects);
        *w = (struct sim_workload){ 0 };
}

struct sim_job *sim_workload_add(struct sim_workload *w, char *id)
{
        if (w->n == w->cap) {
                w->cap = w->cap ? w->cap * 2 : 256;
                w->jobs = xrealloc(w->jobs, sizeof(*w->jobs) * w->cap);
        }
        struct sim_job *j = &w->jobs[w->n++];
        *j = (struct sim_job){ .nodes = 1, .id = id ? id : xasprintf("job-%zu", w->n) };
        return j;
}

static int cmp_arrival(const void *pa, const void *pb)
{
        const struct sim_job *a = pa, *b = pb;
        return a->arrival < b->arrival ? -1 : a->arrival > b->arrival;
}

void sim_workload_sort(struct sim_workload *w)
{
        bool sorted = true;

        for (size_t i = 1; i < w->n && sorted; i++)
                sorted = w->jobs[i - 1].arrival <= w->jobs[i].arrival;
        if (sorted)
                return;
        /* stable: merge sort through a scratch array */
        struct sim_job *tmp = xmalloc(sizeof(*tmp) * w->n);
        for (size_t width = 1; width < w->n; width *= 2) {
                for (size_t lo = 0; lo < w->n; lo += 2 * width) {
                        size_t mid = lo + width < w->n ? lo + width : w->n;
                        size_t hi = lo + 2 * width < w->n ? lo + 2 * width : w->n;
                        size_t i = lo, j = mid, k = lo;
                        while (i < mid && j < hi)
                                tmp[k++] = cmp_arrival(&w->jobs[j], &w->jobs[i]) < 0 ? w->jobs[j++] : w->jobs[i++];
                        while (i < mid)
                                tmp[k++] = w->jobs[i++];
                        while (j < hi)
                                tmp[k++] = w->jobs[j++];
                }
                memcpy(w->jobs, tmp, sizeof(*tmp) * w->n);
        }
        free(tmp);
}
