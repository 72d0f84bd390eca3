/* sim.h - `tessera sim`: the scheduler simulator.
 *
 * Runs the production scheduler (src/sched, the same sched_pass() the
 * manager calls) against N virtual agents and a workload, on a virtual
 * clock, with no daemons and no database.  A workload is a list of jobs
 * (sessions): when each arrives, how long it runs once placed, who owns it
 * and what it asks for.  It comes from a CSV trace (trace.c, format in
 * docs/sim.md), from a converted public job log (convert.c: Microsoft
 * Philly, SenseTime Helios) or from the synthetic generator (generate.c).
 * The engine (engine.c) replays it event by event and records when each
 * job started and ended and how busy the cluster was; metrics.c turns that
 * into the figures, report.c and svg.c into files a person reads.
 *
 * Units: times are int64 microseconds since the trace's start; cpu is in
 * 1/1000 core, mem in bytes and gpu in 1/100 of a physical GPU, all per
 * kernel, as in src/common/slots.h.  Statistics (utilization, percentiles,
 * fairness) are doubles. */
#ifndef TESS_SIM_H
#define TESS_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "sched/sched.h"

/* `tessera sim ...`; exit 0 ok, 1 error, 2 usage. */
int sim_main(int argc, char **argv);

/* ---- workload.c: the jobs ---- */

#define SIM_NAME_MAX 128            /* user, project and job names */
#define SIM_MAX_JOBS 20000000       /* a trace of more is refused */
#define SIM_MAX_NODES 1024          /* kernels of one job */
#define SIM_TIME_MAX (100LL * 365 * 86400 * 1000000) /* usec: a century */
#define SIM_CPU_MAX ((int64_t)1000000 * 1000)  /* a million cores */
#define SIM_MEM_MAX ((int64_t)1 << 60)         /* an exbibyte */
#define SIM_GPU_MAX ((int64_t)100000 * 100)    /* 100,000 GPUs */

struct sim_job {
        int64_t arrival;  /* usec since the trace's start */
        int64_t duration; /* usec of running once placed */
        int64_t cpu;      /* per kernel: 1/1000 core */
        int64_t mem;      /* per kernel: bytes */
        int64_t gpu;      /* per kernel: 1/100 physical GPU (0.5 GPU = 50) */
        int64_t priority; /* higher first */
        int nodes;        /* kernels; more than 1: a multi-node cluster session */
        int user, project; /* indices into the workload's name tables */
        char *id;         /* owned */
};

/* Interned strings: index <-> name, O(1) lookups. */
struct sim_names {
        char **v;
        int n, cap;
        int *slot; /* open addressing over v, -1 = empty */
        int nslot;
};

struct sim_workload {
        struct sim_job *jobs;
        size_t n, cap;
        struct sim_names users, projects;
};

void sim_workload_init(struct sim_workload *w);
void sim_workload_release(struct sim_workload *w);
/* Intern name[0..len) (len < SIM_NAME_MAX); returns its index. */
int sim_names_intern(struct sim_names *t, const char *name, size_t len);
/* Append a job (the workload takes `id`, which may be NULL: then
 * "job-<n>"). */
struct sim_job *sim_workload_add(struct sim_workload *w, char *id);
/* Sort by arrival, stably (ties keep file order). */
void sim_workload_sort(struct sim_workload *w);

/* ---- trace.c: the CSV trace format (docs/sim.md) ---- */

/* Parse a CSV trace held in memory into w (appending).  `origin` names the
 * input in messages ("trace.csv:12: column 'gpu': ...").  Any malformed
 * line is -EINVAL with its line number; nothing is partially added to the
 * caller's view (w is still valid and may be released). */
int sim_trace_parse(const char *origin, const char *p, size_t len, struct sim_workload *w,
                    struct tess_error **err);
/* Read a trace file (at most 4 GiB) and sort it by arrival. */
int sim_trace_load(const char *path, struct sim_workload *w, struct tess_error **err);
/* Write w in the trace format: into a buffer, or a file. */
struct buf;
void sim_trace_format(struct buf *b, const struct sim_workload *w);
int sim_trace_write(const char *path, const struct sim_workload *w, struct tess_error **err);

/* ---- convert.c: public job logs into traces ---- */

enum sim_source {
        SIM_SOURCE_PHILLY, /* msr-fiddle/philly-traces cluster_job_log (JSON) */
        SIM_SOURCE_HELIOS, /* S-Lab-System-Group/HeliosData cluster_log.csv */
};

struct sim_convert_opts {
        int64_t cpu_per_gpu; /* 1/1000 core per GPU (Philly has no cpu column) */
        int64_t mem_per_gpu; /* bytes per GPU (neither log has memory) */
        int64_t mem_per_cpu; /* bytes per core, for jobs without GPUs */
};

void sim_convert_opts_default(struct sim_convert_opts *o);
int sim_source_from_string(const char *s); /* -1 if unknown */
/* Convert a job log held in memory into w.  Jobs the log cannot describe
 * (no recorded run, a missing time) are skipped and counted in
 * *ret_skipped; malformed input is -EINVAL naming the line or job. */
int sim_convert(enum sim_source src, const char *origin, const char *p, size_t len,
                const struct sim_convert_opts *o, struct sim_workload *w, size_t *ret_skipped,
                struct tess_error **err);

/* ---- engine.c: the cluster and the event loop ---- */

enum sim_gpu_mode {
        SIM_FRACTIONAL, /* agents offer cuda.shares; requests are fractions of a GPU */
        SIM_WHOLE,      /* agents offer cuda.device; requests are rounded up to whole GPUs */
};

const char *sim_gpu_mode_name(enum sim_gpu_mode m);

struct sim_cluster {
        int nagents;
        int gpus;     /* per agent, at most SCHED_MAX_DEVICES */
        int64_t fgpu; /* fGPU per physical GPU, in 1/100 (fractional mode) */
        int64_t cpu;  /* per agent, 1/1000 core */
        int64_t mem;  /* per agent, bytes */
};

struct sim_config {
        struct sim_cluster cluster;
        enum sim_gpu_mode mode;
        struct sched_policy policy;   /* order, selection, retries; its pending_timeout and
                                       * fair_share_half_life are applied here */
        int64_t pass_interval;        /* usec: also pass periodically while sessions wait; 0 = only on events */
        int64_t kick_delay;           /* usec from an event to its pass (events until then share it) */
        int64_t sample_interval;      /* usec between time-series samples; 0 = about 1,000 samples */
        int64_t user_gpu_limit;       /* per user, 1/100 GPU; -1 = unlimited */
};

enum sim_job_state {
        SIM_JOB_DONE,
        SIM_JOB_REJECTED,  /* larger than an empty agent or the user's limit: can never start */
        SIM_JOB_TIMED_OUT, /* waited longer than the pending timeout */
        SIM_JOB_NEVER,     /* still waiting when nothing was left to happen */
};

const char *sim_job_state_name(enum sim_job_state s);

struct sim_job_result {
        int64_t start, end; /* usec; -1 when it never started */
        enum sim_job_state state;
};

struct sim_sample {
        int64_t t;
        double gpu_util;  /* GPUs the running jobs asked for / GPUs (useful work) */
        double gpu_alloc; /* GPU quanta handed out / capacity (whole mode rounds up) */
        double cpu_util;  /* cores handed out / cores */
        double frag;      /* free GPUs no pending request can use (physical GPUs) */
        int64_t queue, running;
};

struct sim_result {
        struct sim_job_result *jobs; /* one per workload job */
        struct sim_sample *samples;
        size_t nsamples, cap;
        int64_t passes, placements;
        int64_t rejected, timed_out, never;
        int64_t makespan;       /* usec: when the last event happened */
        int64_t max_queue;
        double gpu_util_area;   /* integrals over [0, makespan] of the sample fields (x usec) */
        double gpu_alloc_area;
        double cpu_util_area;
        int64_t arrivals_end;   /* usec: the last arrival (-1: none yet) */
        double gpu_util_area_arr, gpu_alloc_area_arr, cpu_util_area_arr; /* the integrals up to it */
        double pass_wall;       /* seconds spent inside sched_pass() */
        double engine_wall;     /* seconds for the whole run */
        double engine_cpu;      /* CPU seconds for it (less than wall when others share the machine) */
        int64_t gpus_total;     /* physical GPUs */
};

/* Replay w (sorted by arrival) on the cluster.  The result is filled in
 * (the caller releases it) also when a pass fails. */
int sim_engine_run(const struct sim_config *cfg, const struct sim_workload *w, struct sim_result *ret,
                   struct tess_error **err);
void sim_result_release(struct sim_result *r);

/* ---- metrics.c: the figures ---- */

struct sim_metrics {
        int64_t jobs, done, rejected, timed_out, never;
        double makespan;                    /* seconds */
        double wait_mean, wait_p50, wait_p95, wait_p99; /* seconds, over jobs that started */
        double jct_mean, jct_p50, jct_p95;  /* seconds, arrival to end, over finished jobs */
        double gpu_util, gpu_alloc, cpu_util; /* time averages over the makespan, 0..1 */
        double arrivals_end;                /* seconds: the last arrival */
        double gpu_util_arr, gpu_alloc_arr, cpu_util_arr; /* time averages while jobs arrive */
        double frag_mean;                   /* GPUs, mean over samples */
        double frag_share;                  /* frag_mean / GPUs */
        double jain;                        /* of per-user mean bounded slowdown, 0..1 */
        int jain_users;
        double pass_rate;                   /* placements per second inside sched_pass() */
        double overall_rate;                /* placements per second of the whole run */
        int64_t passes, placements, max_queue;
        double pass_wall, engine_wall, engine_cpu;
};

/* Bounded slowdown: a job shorter than this counts as this long. */
#define SIM_SLOWDOWN_MIN_USEC (10 * 1000000LL)

void sim_metrics_compute(const struct sim_workload *w, const struct sim_result *r, struct sim_metrics *ret);
/* Nearest-rank percentile of sorted v[0..n) (0 when n is 0). */
double sim_percentile(const double *v, size_t n, double pct);
/* Jain's index of x[0..n): (sum x)^2 / (n sum x^2); 1 when n is 0. */
double sim_jain(const double *x, size_t n);

/* ---- generate.c: synthetic workloads ---- */

enum sim_dist {
        SIM_DIST_FIXED,     /* a */
        SIM_DIST_EXP,       /* mean a */
        SIM_DIST_UNIFORM,   /* a .. b */
        SIM_DIST_LOGNORMAL, /* median a, sigma b */
};

struct sim_gen {
        int64_t jobs;
        double rate;           /* arrivals per second; 0: from load */
        double load;           /* offered GPU load as a share of the cluster's GPUs */
        int mix_cpu, mix_frac, mix_whole; /* relative weights of the three sizes */
        enum sim_dist dist;
        double dist_a, dist_b; /* seconds (sigma is unitless) */
        int users, projects;
        double user_skew;      /* Zipf exponent of how often each user submits */
        uint64_t seed;
};

void sim_gen_default(struct sim_gen *g);
/* "30m", "exp:1h", "uniform:1m:2h", "lognormal:30m:1.5" */
int sim_gen_parse_dist(struct sim_gen *g, const char *s, struct tess_error **err);
/* "CPU:FRAC:WHOLE" weights, e.g. "20:50:30" */
int sim_gen_parse_mix(struct sim_gen *g, const char *s, struct tess_error **err);
/* Fill w with g->jobs jobs sized for the cluster (whole-GPU jobs never ask
 * more GPUs than one agent has). */
int sim_generate(const struct sim_gen *g, const struct sim_cluster *c, struct sim_workload *w,
                 struct tess_error **err);

#endif
