/* metrics.c - the simulator's figures from a run (see sim.h).
 *
 * Queueing delay is start - arrival over the jobs that started; job
 * completion time (JCT) is end - arrival over the jobs that finished.
 * Percentiles are nearest-rank.  Utilization is the time average over
 * [0, makespan] and over [0, last arrival] (the tail of a trace, when the
 * last long jobs run alone, dilutes the first).  Jain's fairness index is taken over users of each
 * user's mean bounded slowdown, max(1, JCT / max(duration, 10 s)): 1 when
 * every user's jobs are slowed down alike, 1/n when one user bears it all. */
#include "common/compat.h"

#include <math.h>

#include "sim/sim.h"

static int cmp_double(const void *pa, const void *pb)
{
        double a = *(const double *)pa, b = *(const double *)pb;
        return a < b ? -1 : a > b;
}

double sim_percentile(const double *v, size_t n, double pct)
{
        if (n == 0)
                return 0;
        double rank = ceil(pct / 100.0 * (double)n);
        size_t i = rank < 1 ? 0 : (size_t)rank - 1;
        return v[i < n ? i : n - 1];
}

double sim_jain(const double *x, size_t n)
{
        double sum = 0, sq = 0;

        for (size_t i = 0; i < n; i++) {
                sum += x[i];
                sq += x[i] * x[i];
        }
        return n == 0 || sq == 0 ? 1 : sum * sum / ((double)n * sq);
}

void sim_metrics_compute(const struct sim_workload *w, const struct sim_result *r, struct sim_metrics *m)
{
        _cleanup_free_ double *wait = xmalloc(sizeof(double) * (w->n + 1));
        _cleanup_free_ double *jct = xmalloc(sizeof(double) * (w->n + 1));
        _cleanup_free_ double *slow = xcalloc((size_t)w->users.n + 1, sizeof(double));
        _cleanup_free_ int64_t *count = xcalloc((size_t)w->users.n + 1, sizeof(int64_t));
        size_t nwait = 0, njct = 0;
        double wsum = 0, jsum = 0, span;

        *m = (struct sim_metrics){
                .jobs = (int64_t)w->n,
                .rejected = r->rejected,
                .timed_out = r->timed_out,
                .never = r->never,
                .makespan = (double)r->makespan / 1e6,
                .passes = r->passes,
                .placements = r->placements,
                .max_queue = r->max_queue,
                .pass_wall = r->pass_wall,
                .engine_wall = r->engine_wall,
                .engine_cpu = r->engine_cpu,
        };
        for (size_t i = 0; i < w->n; i++) {
                const struct sim_job *j = &w->jobs[i];
                const struct sim_job_result *jr = &r->jobs[i];
                if (jr->start < 0)
                        continue;
                wait[nwait] = (double)(jr->start - j->arrival) / 1e6;
                wsum += wait[nwait++];
                if (jr->state != SIM_JOB_DONE)
                        continue;
                m->done++;
                jct[njct] = (double)(jr->end - j->arrival) / 1e6;
                jsum += jct[njct];
                double base = (double)(j->duration > SIM_SLOWDOWN_MIN_USEC ? j->duration : SIM_SLOWDOWN_MIN_USEC) / 1e6;
                slow[j->user] += fmax(1.0, jct[njct] / base);
                count[j->user]++;
                njct++;
        }
        qsort(wait, nwait, sizeof(double), cmp_double);
        qsort(jct, njct, sizeof(double), cmp_double);
        m->wait_mean = nwait ? wsum / (double)nwait : 0;
        m->wait_p50 = sim_percentile(wait, nwait, 50);
        m->wait_p95 = sim_percentile(wait, nwait, 95);
        m->wait_p99 = sim_percentile(wait, nwait, 99);
        m->jct_mean = njct ? jsum / (double)njct : 0;
        m->jct_p50 = sim_percentile(jct, njct, 50);
        m->jct_p95 = sim_percentile(jct, njct, 95);

        size_t nu = 0;
        for (int u = 0; u < w->users.n; u++)
                if (count[u] > 0)
                        slow[nu++] = slow[u] / (double)count[u];
        m->jain = sim_jain(slow, nu);
        m->jain_users = (int)nu;

        span = (double)r->makespan;
        if (span > 0) {
                m->gpu_util = r->gpu_util_area / span;
                m->gpu_alloc = r->gpu_alloc_area / span;
                m->cpu_util = r->cpu_util_area / span;
        }
        if (r->arrivals_end > 0) {
                double t = (double)r->arrivals_end;
                m->arrivals_end = t / 1e6;
                m->gpu_util_arr = r->gpu_util_area_arr / t;
                m->gpu_alloc_arr = r->gpu_alloc_area_arr / t;
                m->cpu_util_arr = r->cpu_util_area_arr / t;
        }
        double fsum = 0;
        for (size_t i = 0; i < r->nsamples; i++)
                fsum += r->samples[i].frag;
        m->frag_mean = r->nsamples ? fsum / (double)r->nsamples : 0;
        m->frag_share = r->gpus_total ? m->frag_mean / (double)r->gpus_total : 0;
        m->pass_rate = r->pass_wall > 0 ? (double)r->placements / r->pass_wall : 0;
        m->overall_rate = r->engine_wall > 0 ? (double)r->placements / r->engine_wall : 0;
}
