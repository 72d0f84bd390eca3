/* report.c - what the simulator prints and writes (see sim-internal.h).
 *
 *   DIR/timeseries.csv  time_s,gpu_util,gpu_alloc,cpu_util,queue,running,frag_gpus
 *   DIR/jobs.csv        id,user,project,arrival_s,start_s,end_s,wait_s,jct_s,gpu,nodes,state
 *   DIR/summary.csv     one row of the figures (the columns of compare.csv)
 *   DIR/chart.svg       utilization and queue length over time
 *   DIR/compare.csv, DIR/compare.svg   with --compare: one row / line per run */
#include "common/compat.h"

#include <inttypes.h>

#include "common/fs.h"
#include "sim/sim-internal.h"

static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf" };

char *sim_format_duration(double s, char *buf, size_t len)
{
        if (s < 1)
                snprintf(buf, len, "%.0f ms", s * 1000);
        else if (s < 60)
                snprintf(buf, len, "%.1f s", s);
        else if (s < 3600)
                snprintf(buf, len, "%dm %02ds", (int)(s / 60), (int)s % 60);
        else if (s < 86400 * 3)
                snprintf(buf, len, "%dh %02dm", (int)(s / 3600), (int)(s / 60) % 60);
        else
                snprintf(buf, len, "%.1f days", s / 86400);
        return buf;
}

void sim_report_print(FILE *f, const struct sim_workload *w, const struct sim_run *run)
{
        const struct sim_config *c = run->cfg;
        const struct sim_metrics *m = run->m;
        char a[32], b[32], d[32], e[32];

        fprintf(f, "%s: %" PRId64 " jobs, %d users; %d agents x %d GPUs (%s", run->label, m->jobs, w->users.n,
                c->cluster.nagents, c->cluster.gpus, sim_gpu_mode_name(c->mode));
        if (c->mode == SIM_FRACTIONAL)
                fprintf(f, ", %g fGPU per GPU", (double)c->cluster.fgpu / 100);
        fprintf(f, "), %s order, %s selection\n", sched_order_name(c->policy.order),
                sched_select_name(c->policy.select));
        fprintf(f,
                "  jobs              %" PRId64 " done, %" PRId64 " rejected (larger than an agent or the limit), "
                "%" PRId64 " timed out, %" PRId64 " never started\n",
                m->done, m->rejected, m->timed_out, m->never);
        fprintf(f, "  simulated time    %s (makespan)\n", sim_format_duration(m->makespan, a, sizeof(a)));
        fprintf(f, "  scheduler         %" PRId64 " passes, %" PRId64 " placements, longest queue %" PRId64 "\n",
                m->passes, m->placements, m->max_queue);
        fprintf(f, "  wall time         %.3f s in sched_pass (%.0f placements/s), %.3f s in all (%.0f placements/s;"
                   " %.3f s of CPU)\n",
                m->pass_wall, m->pass_rate, m->engine_wall, m->overall_rate, m->engine_cpu);
        fprintf(f,
                "  utilization       while jobs arrive (%s): GPU %.1f %% used by jobs, %.1f %% allocated;"
                " CPU %.1f %%\n",
                sim_format_duration(m->arrivals_end, a, sizeof(a)), m->gpu_util_arr * 100, m->gpu_alloc_arr * 100,
                m->cpu_util_arr * 100);
        fprintf(f, "                    over the makespan: GPU %.1f %% used by jobs, %.1f %% allocated; CPU %.1f %%\n",
                m->gpu_util * 100, m->gpu_alloc * 100, m->cpu_util * 100);
        fprintf(f, "  queueing delay    p50 %s, p95 %s, p99 %s, mean %s\n",
                sim_format_duration(m->wait_p50, a, sizeof(a)),
                sim_format_duration(m->wait_p95, b, sizeof(b)), sim_format_duration(m->wait_p99, d, sizeof(d)),
                sim_format_duration(m->wait_mean, e, sizeof(e)));
        fprintf(f, "  completion time   mean %s, p50 %s, p95 %s\n", sim_format_duration(m->jct_mean, a, sizeof(a)),
                sim_format_duration(m->jct_p50, b, sizeof(b)), sim_format_duration(m->jct_p95, d, sizeof(d)));
        fprintf(f, "  Jain's fairness   %.3f over %d users (of each user's mean bounded slowdown)\n", m->jain,
                m->jain_users);
        fprintf(f, "  fragmentation     %.2f GPUs (%.2f %%) free on average that no waiting request can use\n",
                m->frag_mean, m->frag_share * 100);
}

/* ---- files ---- */

static int write_buf(const char *dir, const char *name, const struct buf *b, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
        FILE *f = fopen(path, "we");

        if (!f)
                return tess_err(err, errno, "creating '%s': %s", path, strerror(errno));
        size_t n = fwrite(b->data, 1, b->len, f);
        bool failed = n != b->len || ferror(f);
        if (fclose(f) != 0 || failed)
                return tess_err(err, EIO, "writing '%s': %s", path, strerror(errno ? errno : EIO));
        return 0;
}

static void put_time(struct buf *b, int64_t usec)
{
        if (usec < 0)
                return; /* empty field */
        buf_printf(b, "%" PRId64 ".%06" PRId64, usec / 1000000, usec % 1000000);
}

static const char summary_header[] =
        "run,policy,select,mode,jobs,done,rejected,timed_out,never_started,makespan_s,passes,placements,max_queue,"
        "pass_wall_s,placements_per_s,wall_s,cpu_s,gpu_util,gpu_alloc,cpu_util,arrivals_end_s,gpu_util_arrivals,"
        "gpu_alloc_arrivals,cpu_util_arrivals,wait_p50_s,wait_p95_s,wait_p99_s,"
        "wait_mean_s,jct_mean_s,jct_p50_s,jct_p95_s,jain_slowdown,frag_gpus,frag_share\n";

static void summary_row(struct buf *b, const struct sim_run *run)
{
        const struct sim_metrics *m = run->m;

        buf_printf(b,
                   "%s,%s,%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%.3f,%" PRId64 ",%" PRId64
                   ",%" PRId64 ",%.6f,%.1f,%.6f,%.6f,%.5f,%.5f,%.5f,%.3f,%.5f,%.5f,%.5f,%.3f,%.3f,%.3f,%.3f,%.3f,"
                   "%.3f,%.3f,%.5f,%.3f,%.6f\n",
                   run->label, sched_order_name(run->cfg->policy.order), sched_select_name(run->cfg->policy.select),
                   sim_gpu_mode_name(run->cfg->mode), m->jobs, m->done, m->rejected, m->timed_out, m->never,
                   m->makespan, m->passes, m->placements, m->max_queue, m->pass_wall, m->pass_rate, m->engine_wall,
                   m->engine_cpu, m->gpu_util, m->gpu_alloc, m->cpu_util, m->arrivals_end, m->gpu_util_arr,
                   m->gpu_alloc_arr, m->cpu_util_arr, m->wait_p50, m->wait_p95, m->wait_p99, m->wait_mean,
                   m->jct_mean, m->jct_p50, m->jct_p95, m->jain, m->frag_mean, m->frag_share);
}

int sim_report_write(const char *dir, const struct sim_workload *w, const struct sim_run *run,
                     struct tess_error **err)
{
        _cleanup_(buf_release) struct buf b = BUF_INIT;
        const struct sim_result *r = run->res;
        int rc;

        rc = fs_mkdir_p(dir, 0755, err);
        if (rc < 0)
                return rc;

        buf_puts(&b, "time_s,gpu_util,gpu_alloc,cpu_util,queue,running,frag_gpus\n");
        for (size_t i = 0; i < r->nsamples; i++) {
                const struct sim_sample *s = &r->samples[i];
                put_time(&b, s->t);
                buf_printf(&b, ",%.5f,%.5f,%.5f,%" PRId64 ",%" PRId64 ",%.2f\n", s->gpu_util, s->gpu_alloc, s->cpu_util,
                           s->queue, s->running, s->frag);
        }
        rc = write_buf(dir, "timeseries.csv", &b, err);
        if (rc < 0)
                return rc;

        buf_reset(&b);
        buf_puts(&b, "id,user,project,arrival_s,start_s,end_s,wait_s,jct_s,gpu,nodes,state\n");
        for (size_t i = 0; i < w->n; i++) {
                const struct sim_job *j = &w->jobs[i];
                const struct sim_job_result *jr = &r->jobs[i];
                buf_printf(&b, "%s,%s,%s,", j->id, w->users.v[j->user], w->projects.v[j->project]);
                put_time(&b, j->arrival);
                buf_putc(&b, ',');
                put_time(&b, jr->start);
                buf_putc(&b, ',');
                put_time(&b, jr->end);
                buf_putc(&b, ',');
                put_time(&b, jr->start >= 0 ? jr->start - j->arrival : -1);
                buf_putc(&b, ',');
                put_time(&b, jr->end >= 0 ? jr->end - j->arrival : -1);
                buf_printf(&b, ",%" PRId64 ".%02" PRId64 ",%d,%s\n", j->gpu / 100, j->gpu % 100, j->nodes,
                           sim_job_state_name(jr->state));
        }
        rc = write_buf(dir, "jobs.csv", &b, err);
        if (rc < 0)
                return rc;

        buf_reset(&b);
        buf_puts(&b, summary_header);
        summary_row(&b, run);
        rc = write_buf(dir, "summary.csv", &b, err);
        if (rc < 0)
                return rc;

        const struct sim_series util[] = {
                { "GPU used by jobs", colors[0], r->samples, r->nsamples, SIM_SERIES_GPU_UTIL },
                { "GPU allocated", colors[3], r->samples, r->nsamples, SIM_SERIES_GPU_ALLOC },
                { "CPU allocated", colors[2], r->samples, r->nsamples, SIM_SERIES_CPU_UTIL },
        };
        const struct sim_series queue[] = {
                { "waiting sessions", colors[1], r->samples, r->nsamples, SIM_SERIES_QUEUE },
        };
        const struct sim_series frag[] = {
                { "unusable free GPUs", colors[4], r->samples, r->nsamples, SIM_SERIES_FRAG },
        };
        const struct sim_panel panels[] = {
                { "Utilization", "%", util, (int)ARRAY_SIZE(util) },
                { "Queue length", NULL, queue, 1 },
                { "Fragmentation: free GPUs no waiting request can use", NULL, frag, 1 },
        };
        _cleanup_free_ char *title = xasprintf("tessera sim: %s, %zu jobs on %d agents x %d GPUs", run->label, w->n,
                                               run->cfg->cluster.nagents, run->cfg->cluster.gpus);
        buf_reset(&b);
        sim_svg_chart(&b, title, panels, (int)ARRAY_SIZE(panels));
        return write_buf(dir, "chart.svg", &b, err);
}

int sim_report_compare(FILE *f, const char *dir, const struct sim_run *runs, int n, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf b = BUF_INIT;
        char w50[32], w95[32], w99[32], jm[32], j95[32];
        int rc;

        fprintf(f, "\n%-22s %6s %7s %7s %6s %10s %10s %10s %10s %10s %6s %8s %10s\n", "run", "done", "GPU use",
                "GPU alc", "CPU", "wait p50", "wait p95", "wait p99", "JCT mean", "JCT p95", "Jain", "frag",
                "placed/s");
        for (int i = 0; i < n; i++) {
                const struct sim_metrics *m = runs[i].m;
                fprintf(f, "%-22s %6" PRId64 " %6.1f%% %6.1f%% %5.1f%% %10s %10s %10s %10s %10s %6.3f %8.2f %10.0f\n",
                        runs[i].label, m->done, m->gpu_util_arr * 100, m->gpu_alloc_arr * 100, m->cpu_util_arr * 100,
                        sim_format_duration(m->wait_p50, w50, sizeof(w50)),
                        sim_format_duration(m->wait_p95, w95, sizeof(w95)),
                        sim_format_duration(m->wait_p99, w99, sizeof(w99)),
                        sim_format_duration(m->jct_mean, jm, sizeof(jm)),
                        sim_format_duration(m->jct_p95, j95, sizeof(j95)), m->jain, m->frag_mean, m->pass_rate);
        }
        fputs("(utilization while jobs arrive; GPU use: GPUs the running jobs asked for; GPU alc: GPUs handed\n"
              " out, whole mode rounds up; Jain: of per-user mean bounded slowdown; frag: mean free GPUs no\n"
              " waiting request can use; placed/s: placements per second of wall time inside sched_pass)\n",
              f);
        if (!dir)
                return 0;
        rc = fs_mkdir_p(dir, 0755, err);
        if (rc < 0)
                return rc;
        buf_puts(&b, summary_header);
        for (int i = 0; i < n; i++)
                summary_row(&b, &runs[i]);
        rc = write_buf(dir, "compare.csv", &b, err);
        if (rc < 0)
                return rc;

        _cleanup_free_ struct sim_series *util = xcalloc((size_t)n, sizeof(*util));
        _cleanup_free_ struct sim_series *queue = xcalloc((size_t)n, sizeof(*queue));
        for (int i = 0; i < n; i++) {
                const struct sim_result *r = runs[i].res;
                const char *color = colors[i % ARRAY_SIZE(colors)];
                util[i] = (struct sim_series){ runs[i].label, color, r->samples, r->nsamples, SIM_SERIES_GPU_UTIL };
                queue[i] = (struct sim_series){ runs[i].label, color, r->samples, r->nsamples, SIM_SERIES_QUEUE };
        }
        const struct sim_panel panels[] = {
                { "GPU used by jobs", "%", util, n },
                { "Queue length", NULL, queue, n },
        };
        buf_reset(&b);
        sim_svg_chart(&b, "tessera sim --compare: the same workload under each policy and GPU mode", panels, 2);
        return write_buf(dir, "compare.svg", &b, err);
}
