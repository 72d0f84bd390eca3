/* main.c - `tessera sim`: options, sub-commands, and the runs they ask for.
 *
 *   tessera sim [run] [options]          simulate; print the figures, write --out
 *   tessera sim generate [options] OUT   write a synthetic workload as a trace
 *   tessera sim convert --from philly|helios IN OUT
 *
 * Every option is one row of `opts[]` (name, which sub-commands take it,
 * help, the function that stores it); --help is printed from the table.
 * Exit codes: 0 success, 1 error (`error: ...`), 2 usage. */
#include "common/compat.h"

#include <getopt.h>
#include <inttypes.h>

#include "common/fs.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "sim/sim-internal.h"

#define EXIT_USAGE 2
#define INPUT_MAX ((size_t)4 << 30)

enum {
        CMD_RUN = 1u << 0,
        CMD_GEN = 1u << 1,
        CMD_CONV = 1u << 2,
};

enum compare {
        COMPARE_NONE,
        COMPARE_ALL,
        COMPARE_POLICIES,
        COMPARE_MODES,
};

struct args {
        struct sim_cluster cluster;
        enum sim_gpu_mode mode;
        enum sched_order order;
        enum sched_select select;
        int retries_to_skip, reserve_after; /* -1: the policy's default */
        bool allow_fragmentation;
        int64_t pending_timeout, half_life, pass_interval, kick_delay, sample_interval, user_gpu_limit;
        struct sim_gen gen;
        struct sim_convert_opts conv;
        int from; /* enum sim_source, -1 unset */
        const char *trace, *out;
        enum compare compare;
        bool help;
};

/* ---- option values ---- */

static int int_arg(const char *opt, const char *v, int64_t min, int64_t max, int64_t *ret, struct tess_error **err)
{
        if (sim_parse_int(v, min, max, ret) < 0)
                return tess_err(err, EINVAL, "--%s: '%s' is not a whole number from %" PRId64 " to %" PRId64, opt, v,
                                min, max);
        return 0;
}

static int fixed_arg(const char *opt, const char *v, int64_t scale, int64_t max, int64_t *ret,
                     struct tess_error **err)
{
        if (sim_parse_fixed(v, scale, max, ret) < 0)
                return tess_err(err, EINVAL, "--%s: '%s' is not a number from 0 to %" PRId64 " (at most %s decimals)",
                                opt, v, max / scale, scale == 1000 ? "3" : scale == 100 ? "2" : "0");
        return 0;
}

static int duration_arg(const char *opt, const char *v, int64_t *ret, struct tess_error **err)
{
        size_t n = strlen(v);
        int r;

        if (n > 2 && streq(v + n - 2, "ms")) { /* duration_parse's "m" is minutes */
                _cleanup_free_ char *num = xstrndup(v, n - 2);
                r = sim_parse_fixed(num, 1000, SIM_TIME_MAX, ret);
        } else {
                r = duration_parse(v, ret);
        }
        if (r < 0 || *ret < 0 || *ret > SIM_TIME_MAX)
                return tess_err(err, EINVAL, "--%s: '%s' is not a duration (5ms, 90s, 30m, 2h, 7d)", opt, v);
        return 0;
}

static int double_arg(const char *opt, const char *v, double min, double max, double *ret, struct tess_error **err)
{
        char *end;
        double d = strtod(v, &end);

        if (!*v || *end || !(d >= min && d <= max))
                return tess_err(err, EINVAL, "--%s: '%s' is not a number from %g to %g", opt, v, min, max);
        *ret = d;
        return 0;
}

static int mem_arg(const char *opt, const char *v, int64_t *ret, struct tess_error **err)
{
        struct tess_error *e = NULL;

        if (slot_parse_string("mem", v, ret, &e) < 0 || *ret > ((int64_t)1 << 60)) {
                tess_error_free(e);
                return tess_err(err, EINVAL, "--%s: '%s' is not a memory size (512g, 1t, bytes)", opt, v);
        }
        return 0;
}

#define SETTER(fn) static int fn(struct args *a, const char *opt, const char *v, struct tess_error **err)

SETTER(set_agents)
{
        int64_t n;
        int r = int_arg(opt, v, 0, 1000000, &n, err);
        a->cluster.nagents = (int)n;
        return r;
}

SETTER(set_gpus)
{
        int64_t n;
        int r = int_arg(opt, v, 0, SCHED_MAX_DEVICES, &n, err);
        a->cluster.gpus = (int)n;
        return r;
}

SETTER(set_fgpu)
{
        int r = fixed_arg(opt, v, 100, 10000, &a->cluster.fgpu, err);
        if (r == 0 && a->cluster.fgpu == 0)
                r = tess_err(err, EINVAL, "--%s: must be positive", opt);
        return r;
}

SETTER(set_cpus)
{
        return fixed_arg(opt, v, 1000, (int64_t)1000000 * 1000, &a->cluster.cpu, err);
}

SETTER(set_mem)
{
        return mem_arg(opt, v, &a->cluster.mem, err);
}

SETTER(set_mode)
{
        if (streq(v, "whole") || streq(v, "fractional")) {
                a->mode = streq(v, "whole") ? SIM_WHOLE : SIM_FRACTIONAL;
                return 0;
        }
        return tess_err(err, EINVAL, "--%s: '%s' is neither whole nor fractional", opt, v);
}

SETTER(set_policy)
{
        struct sched_policy p;
        struct tess_error *e = NULL;

        if (sched_policy_parse(v, NULL, &p, &e) < 0) {
                tess_error_free(e);
                return tess_err(err, EINVAL, "--%s: '%s' is not fifo, lifo, drf or fair-share", opt, v);
        }
        a->order = p.order;
        return 0;
}

SETTER(set_select)
{
        for (int s = SCHED_CONCENTRATED; s <= SCHED_ROUNDROBIN; s++) {
                if (streq(v, sched_select_name((enum sched_select)s))) {
                        a->select = (enum sched_select)s;
                        return 0;
                }
        }
        return tess_err(err, EINVAL, "--%s: '%s' is not concentrated, dispersed or roundrobin", opt, v);
}

SETTER(set_retries)
{
        int64_t n;
        int r = int_arg(opt, v, 0, 1000000, &n, err);
        if (streq(opt, "retries-to-skip"))
                a->retries_to_skip = (int)n;
        else
                a->reserve_after = (int)n;
        return r;
}

SETTER(set_frag)
{
        (void)opt, (void)v, (void)err;
        a->allow_fragmentation = true;
        return 0;
}

SETTER(set_duration)
{
        int64_t *dst = streq(opt, "pending-timeout") ? &a->pending_timeout
                       : streq(opt, "half-life")     ? &a->half_life
                       : streq(opt, "pass-interval") ? &a->pass_interval
                       : streq(opt, "kick-delay")    ? &a->kick_delay
                                                     : &a->sample_interval;
        int r = duration_arg(opt, v, dst, err);
        if (r == 0 && dst == &a->half_life && *dst == 0)
                r = tess_err(err, EINVAL, "--%s: must be positive", opt);
        return r;
}

SETTER(set_user_limit)
{
        return fixed_arg(opt, v, 100, (int64_t)1000000 * 100, &a->user_gpu_limit, err);
}

SETTER(set_trace)
{
        (void)opt, (void)err;
        a->trace = v;
        return 0;
}

SETTER(set_jobs)
{
        return int_arg(opt, v, 0, SIM_MAX_JOBS, &a->gen.jobs, err);
}

SETTER(set_rate)
{
        return double_arg(opt, v, 1e-9, 1e9, &a->gen.rate, err);
}

SETTER(set_load)
{
        return double_arg(opt, v, 1e-6, 1000, &a->gen.load, err);
}

SETTER(set_mix)
{
        (void)opt;
        return sim_gen_parse_mix(&a->gen, v, err);
}

SETTER(set_dist)
{
        (void)opt;
        return sim_gen_parse_dist(&a->gen, v, err);
}

SETTER(set_users)
{
        int64_t n;
        int r = int_arg(opt, v, 1, 1000000, &n, err);
        if (streq(opt, "users"))
                a->gen.users = (int)n;
        else
                a->gen.projects = (int)n;
        return r;
}

SETTER(set_skew)
{
        return double_arg(opt, v, 0, 10, &a->gen.user_skew, err);
}

SETTER(set_seed)
{
        int64_t n;
        int r = int_arg(opt, v, 0, INT64_MAX, &n, err);
        a->gen.seed = (uint64_t)n;
        return r;
}

SETTER(set_out)
{
        (void)opt, (void)err;
        a->out = v;
        return 0;
}

SETTER(set_compare)
{
        static const char *const names[] = { [COMPARE_ALL] = "all", [COMPARE_POLICIES] = "policies",
                                             [COMPARE_MODES] = "modes" };
        if (!v) {
                a->compare = COMPARE_ALL;
                return 0;
        }
        for (int i = COMPARE_ALL; i <= COMPARE_MODES; i++) {
                if (streq(v, names[i])) {
                        a->compare = (enum compare)i;
                        return 0;
                }
        }
        return tess_err(err, EINVAL, "--%s: '%s' is not all, policies or modes", opt, v);
}

SETTER(set_from)
{
        a->from = sim_source_from_string(v);
        return a->from < 0 ? tess_err(err, EINVAL, "--%s: '%s' is neither philly nor helios", opt, v) : 0;
}

SETTER(set_conv_cpu)
{
        return fixed_arg(opt, v, 1000, (int64_t)1000000 * 1000, &a->conv.cpu_per_gpu, err);
}

SETTER(set_conv_mem)
{
        return mem_arg(opt, v, streq(opt, "mem-per-gpu") ? &a->conv.mem_per_gpu : &a->conv.mem_per_cpu, err);
}

SETTER(set_help)
{
        (void)opt, (void)v, (void)err;
        a->help = true;
        return 0;
}

static const struct sim_opt {
        const char *name; /* NULL: a heading */
        int has_arg;
        unsigned cmds;
        const char *metavar;
        const char *help;
        int (*set)(struct args *a, const char *opt, const char *v, struct tess_error **err);
} opts[] = {
        { NULL, 0, CMD_RUN | CMD_GEN, NULL, "cluster:", NULL },
        { "agents", required_argument, CMD_RUN | CMD_GEN, "N", "virtual agents (default 100)", set_agents },
        { "gpus-per-agent", required_argument, CMD_RUN | CMD_GEN, "G", "GPUs on each agent (default 8, at most 32)",
          set_gpus },
        { "fgpu-per-gpu", required_argument, CMD_RUN, "F", "fGPU each GPU offers in fractional mode (default 1)",
          set_fgpu },
        { "cpus", required_argument, CMD_RUN | CMD_GEN, "C", "cores on each agent (default 64)", set_cpus },
        { "mem", required_argument, CMD_RUN | CMD_GEN, "SIZE", "memory on each agent (default 512g)", set_mem },
        { "gpu-mode", required_argument, CMD_RUN, "MODE",
          "fractional (cuda.shares) or whole (cuda.device, requests rounded up to whole GPUs); default fractional",
          set_mode },
        { NULL, 0, CMD_RUN, NULL, "scheduler:", NULL },
        { "policy", required_argument, CMD_RUN, "ORDER", "fifo, lifo, drf or fair-share (default fifo)", set_policy },
        { "select", required_argument, CMD_RUN, "HOW", "concentrated, dispersed or roundrobin (default concentrated)",
          set_select },
        { "retries-to-skip", required_argument, CMD_RUN, "N", "fifo/lifo head-of-line skipping after N failures (5)",
          set_retries },
        { "reserve-after", required_argument, CMD_RUN, "N",
          "a session that failed N times blocks the queue until it fits (50; 0 = never)", set_retries },
        { "allow-fragmentation", no_argument, CMD_RUN, NULL, "let a request of <= 1 GPU span devices", set_frag },
        { "pending-timeout", required_argument, CMD_RUN, "DUR", "cancel sessions that waited this long (default none)",
          set_duration },
        { "half-life", required_argument, CMD_RUN, "DUR", "fair-share usage half-life (default 7d)", set_duration },
        { "pass-interval", required_argument, CMD_RUN, "DUR",
          "also pass periodically while sessions wait (default: only after events)", set_duration },
        { "kick-delay", required_argument, CMD_RUN, "DUR",
          "pass this long after an event, one pass for all events until then (default 0; the manager: 5ms)",
          set_duration },
        { "user-gpu-limit", required_argument, CMD_RUN, "GPUS", "each user's GPU quota (default unlimited)",
          set_user_limit },
        { NULL, 0, CMD_RUN | CMD_GEN, NULL, "workload (without --trace, a synthetic one):", NULL },
        { "trace", required_argument, CMD_RUN, "FILE", "replay a CSV trace (docs/sim.md)", set_trace },
        { "jobs", required_argument, CMD_RUN | CMD_GEN, "N", "jobs to generate (default 1000)", set_jobs },
        { "rate", required_argument, CMD_RUN | CMD_GEN, "R", "arrivals per second (default: from --load)", set_rate },
        { "load", required_argument, CMD_RUN | CMD_GEN, "L",
          "offered GPU load as a share of the cluster's GPUs (default 0.9)", set_load },
        { "mix", required_argument, CMD_RUN | CMD_GEN, "C:F:W",
          "weights of cpu-only, fractional and whole-GPU jobs (default 20:50:30)", set_mix },
        { "duration", required_argument, CMD_RUN | CMD_GEN, "DIST",
          "D, exp:MEAN, uniform:MIN:MAX or lognormal:MEDIAN:SIGMA (default lognormal:30m:1.5)", set_dist },
        { "users", required_argument, CMD_RUN | CMD_GEN, "N", "users (default 20)", set_users },
        { "projects", required_argument, CMD_RUN | CMD_GEN, "N", "projects (default 4)", set_users },
        { "user-skew", required_argument, CMD_RUN | CMD_GEN, "S", "Zipf exponent of users' activity (default 1)",
          set_skew },
        { "seed", required_argument, CMD_RUN | CMD_GEN, "N", "random seed (default 1)", set_seed },
        { NULL, 0, CMD_RUN, NULL, "output:", NULL },
        { "out", required_argument, CMD_RUN, "DIR",
          "write timeseries.csv, jobs.csv, summary.csv, chart.svg (per run under --compare)", set_out },
        { "sample", required_argument, CMD_RUN, "DUR", "time-series spacing (default: about 1,000 samples)",
          set_duration },
        { "compare", optional_argument, CMD_RUN, "WHAT",
          "run every policy (policies), both GPU modes (modes) or both (all, the default) on the same workload",
          set_compare },
        { NULL, 0, CMD_CONV, NULL, "convert:", NULL },
        { "from", required_argument, CMD_CONV, "LOG", "philly (cluster_job_log) or helios (cluster_log.csv)",
          set_from },
        { "cpu-per-gpu", required_argument, CMD_CONV, "C", "cores per GPU for Philly jobs (default 4)",
          set_conv_cpu },
        { "mem-per-gpu", required_argument, CMD_CONV, "SIZE", "memory per GPU (default 32g)", set_conv_mem },
        { "mem-per-cpu", required_argument, CMD_CONV, "SIZE", "memory per core (default 4g)", set_conv_mem },
        { NULL, 0, CMD_RUN | CMD_GEN | CMD_CONV, NULL, "", NULL },
        { "help", no_argument, CMD_RUN | CMD_GEN | CMD_CONV, NULL, "show this help", set_help },
};

static void usage(FILE *f, unsigned cmd)
{
        if (cmd == CMD_RUN)
                fputs("usage: tessera sim [run] [options]\n"
                      "       tessera sim generate [options] OUT.csv\n"
                      "       tessera sim convert --from philly|helios IN OUT.csv\n\n"
                      "Run the scheduler (the manager's own sched_pass) on virtual agents and a workload, on a\n"
                      "virtual clock; print queueing delay, completion time, utilization, fairness and\n"
                      "fragmentation, and write them with --out.  See docs/sim.md.\n",
                      f);
        else if (cmd == CMD_GEN)
                fputs("usage: tessera sim generate [options] OUT.csv\n\n"
                      "Write a synthetic workload in the trace format (docs/sim.md).\n",
                      f);
        else
                fputs("usage: tessera sim convert --from philly|helios [options] IN OUT.csv\n\n"
                      "Convert a Microsoft Philly cluster_job_log or a SenseTime Helios cluster_log.csv into\n"
                      "the trace format (docs/sim.md).\n",
                      f);
        for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
                const struct sim_opt *o = &opts[i];
                char left[64];
                if (!(o->cmds & cmd))
                        continue;
                if (!o->name) {
                        fprintf(f, "\n%s%s", o->help, *o->help ? "\n" : "");
                        continue;
                }
                snprintf(left, sizeof(left), "--%s%s%s%s", o->name,
                         o->has_arg == optional_argument ? "[=" : o->has_arg ? " " : "", o->metavar ? o->metavar : "",
                         o->has_arg == optional_argument ? "]" : "");
                fprintf(f, "  %-26s %s\n", left, o->help);
        }
}

static int usage_error(unsigned cmd, const char *msg)
{
        fprintf(stderr, "error: %s\nTry 'tessera sim%s --help'.\n", msg,
                cmd == CMD_GEN ? " generate" : cmd == CMD_CONV ? " convert" : "");
        return EXIT_USAGE;
}

static void args_default(struct args *a)
{
        *a = (struct args){
                .cluster = { .nagents = 100, .gpus = 8, .fgpu = 100, .cpu = 64000, .mem = (int64_t)512 << 30 },
                .mode = SIM_FRACTIONAL,
                .order = SCHED_FIFO,
                .select = SCHED_CONCENTRATED,
                .retries_to_skip = -1,
                .reserve_after = -1,
                .half_life = 7 * 86400 * USEC_PER_SEC,
                .user_gpu_limit = -1,
                .from = -1,
        };
        sim_gen_default(&a->gen);
        sim_convert_opts_default(&a->conv);
}

/* Parse argv into a; returns the index of the first positional argument,
 * or -1 after printing a usage error (*ret_exit set). */
static int parse(int argc, char **argv, unsigned cmd, struct args *a, int *ret_exit)
{
        struct option lo[ARRAY_SIZE(opts) + 1];
        size_t n = 0;
        int c;

        for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
                if (opts[i].name && (opts[i].cmds & cmd))
                        lo[n++] = (struct option){ opts[i].name, opts[i].has_arg, NULL, 256 + (int)i };
        lo[n] = (struct option){ 0 };
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
                struct tess_error *err = NULL;
                if (c == 'h') {
                        a->help = true;
                        continue;
                }
                if (c < 256) {
                        _cleanup_free_ char *msg =
                                optopt >= 256 ? xasprintf("option '--%s' needs a value", opts[optopt - 256].name)
                                : optopt > 0  ? xasprintf("unknown option '-%c'", optopt)
                                              : xasprintf("unknown option '%s'", argv[optind - 1]);
                        *ret_exit = usage_error(cmd, msg);
                        return -1;
                }
                const struct sim_opt *o = &opts[c - 256];
                if (o->set(a, o->name, optarg, &err) < 0) {
                        *ret_exit = usage_error(cmd, err->msg);
                        tess_error_free(err);
                        return -1;
                }
        }
        return optind;
}

static void build_config(const struct args *a, enum sched_order order, enum sim_gpu_mode mode, struct sim_config *c)
{
        struct sched_policy p;

        sched_policy_parse(sched_order_name(order), NULL, &p, NULL);
        p.select = a->select;
        if (a->retries_to_skip >= 0)
                p.retries_to_skip = a->retries_to_skip;
        if (a->reserve_after >= 0)
                p.reserve_after = a->reserve_after;
        p.allow_fragmentation = a->allow_fragmentation;
        p.pending_timeout = a->pending_timeout;
        p.fair_share_half_life = a->half_life;
        *c = (struct sim_config){
                .cluster = a->cluster,
                .mode = mode,
                .policy = p,
                .pass_interval = a->pass_interval,
                .kick_delay = a->kick_delay,
                .sample_interval = a->sample_interval,
                .user_gpu_limit = a->user_gpu_limit,
        };
}

static int fail(struct tess_error *err)
{
        fprintf(stderr, "error: %s\n", err->msg);
        tess_error_free(err);
        return 1;
}

/* ---- sub-commands ---- */

struct one_run {
        char label[48];
        struct sim_config cfg;
        struct sim_result res;
        struct sim_metrics m;
};

static int cmd_run(int argc, char **argv)
{
        _cleanup_(sim_workload_release) struct sim_workload w;
        struct one_run *runs = NULL;
        struct tess_error *err = NULL;
        struct args a;
        int first, r, n = 0, rc = 0;

        sim_workload_init(&w);
        args_default(&a);
        first = parse(argc, argv, CMD_RUN, &a, &rc);
        if (first < 0)
                return rc;
        if (a.help) {
                usage(stdout, CMD_RUN);
                return 0;
        }
        if (first < argc)
                return usage_error(CMD_RUN, "tessera sim takes no positional arguments (the trace is --trace FILE)");

        double t0 = monotonic_usec() / 1e6;
        r = a.trace ? sim_trace_load(a.trace, &w, &err) : sim_generate(&a.gen, &a.cluster, &w, &err);
        if (r < 0)
                return fail(err);
        sim_workload_sort(&w);
        double load_wall = monotonic_usec() / 1e6 - t0;
        fprintf(stderr, "workload: %zu jobs, %d users, %d projects (%s in %.2f s)\n", w.n, w.users.n, w.projects.n,
                a.trace ? a.trace : "generated", load_wall);

        static const enum sched_order all_orders[] = { SCHED_FIFO, SCHED_LIFO, SCHED_DRF, SCHED_FAIR_SHARE };
        static const enum sim_gpu_mode all_modes[] = { SIM_WHOLE, SIM_FRACTIONAL };
        runs = xcalloc(ARRAY_SIZE(all_orders) * ARRAY_SIZE(all_modes), sizeof(*runs));
        for (size_t o = 0; o < ARRAY_SIZE(all_orders); o++) {
                for (size_t m = 0; m < ARRAY_SIZE(all_modes); m++) {
                        bool order_ok = all_orders[o] == a.order || a.compare == COMPARE_ALL ||
                                        a.compare == COMPARE_POLICIES;
                        bool mode_ok = all_modes[m] == a.mode || a.compare == COMPARE_ALL || a.compare == COMPARE_MODES;
                        if (!order_ok || !mode_ok)
                                continue;
                        struct one_run *run = &runs[n++];
                        snprintf(run->label, sizeof(run->label), "%s-%s", sched_order_name(all_orders[o]),
                                 sim_gpu_mode_name(all_modes[m]));
                        build_config(&a, all_orders[o], all_modes[m], &run->cfg);
                }
        }

        _cleanup_free_ struct sim_run *views = xcalloc((size_t)n, sizeof(*views));
        for (int i = 0; i < n && rc == 0; i++) {
                struct one_run *run = &runs[i];
                views[i] = (struct sim_run){ run->label, &run->cfg, &run->res, &run->m };
                r = sim_engine_run(&run->cfg, &w, &run->res, &err);
                if (r < 0) {
                        rc = fail(err);
                        break;
                }
                sim_metrics_compute(&w, &run->res, &run->m);
                sim_report_print(stdout, &w, &views[i]);
                if (a.out) {
                        _cleanup_free_ char *dir = a.compare ? xasprintf("%s/%s", a.out, run->label)
                                                             : xstrdup(a.out);
                        r = sim_report_write(dir, &w, &views[i], &err);
                        if (r < 0)
                                rc = fail(err);
                }
                fflush(stdout);
        }
        if (rc == 0 && a.compare) {
                r = sim_report_compare(stdout, a.out, views, n, &err);
                if (r < 0)
                        rc = fail(err);
        }
        if (rc == 0 && a.out)
                printf("wrote %s/%s\n", a.out, a.compare ? "compare.csv, compare.svg and one directory per run"
                                                         : "{timeseries,jobs,summary}.csv and chart.svg");
        for (int i = 0; i < n; i++)
                sim_result_release(&runs[i].res);
        free(runs);
        return rc;
}

static int cmd_generate(int argc, char **argv)
{
        _cleanup_(sim_workload_release) struct sim_workload w;
        struct tess_error *err = NULL;
        struct args a;
        int first, rc = 0;

        sim_workload_init(&w);
        args_default(&a);
        first = parse(argc, argv, CMD_GEN, &a, &rc);
        if (first < 0)
                return rc;
        if (a.help) {
                usage(stdout, CMD_GEN);
                return 0;
        }
        if (argc - first != 1)
                return usage_error(CMD_GEN, "give one output file");
        if (sim_generate(&a.gen, &a.cluster, &w, &err) < 0 || sim_trace_write(argv[first], &w, &err) < 0)
                return fail(err);
        printf("wrote %zu jobs of %d users to %s\n", w.n, w.users.n, argv[first]);
        return 0;
}

static int cmd_convert(int argc, char **argv)
{
        _cleanup_(sim_workload_release) struct sim_workload w;
        _cleanup_free_ char *data = NULL;
        struct tess_error *err = NULL;
        struct args a;
        size_t len, skipped = 0;
        int first, rc = 0;

        sim_workload_init(&w);
        args_default(&a);
        first = parse(argc, argv, CMD_CONV, &a, &rc);
        if (first < 0)
                return rc;
        if (a.help) {
                usage(stdout, CMD_CONV);
                return 0;
        }
        if (a.from < 0)
                return usage_error(CMD_CONV, "say which log with --from philly or --from helios");
        if (argc - first != 2)
                return usage_error(CMD_CONV, "give an input and an output file");
        if (fs_read_file(argv[first], INPUT_MAX, &data, &len, &err) < 0 ||
            sim_convert((enum sim_source)a.from, argv[first], data, len, &a.conv, &w, &skipped, &err) < 0 ||
            sim_trace_write(argv[first + 1], &w, &err) < 0)
                return fail(err);
        printf("converted %zu jobs (%zu skipped: no complete run recorded) of %d users to %s\n", w.n, skipped,
               w.users.n, argv[first + 1]);
        return 0;
}

int sim_main(int argc, char **argv)
{
        if (argc >= 2 && streq(argv[1], "generate"))
                return cmd_generate(argc - 1, argv + 1);
        if (argc >= 2 && streq(argv[1], "convert"))
                return cmd_convert(argc - 1, argv + 1);
        if (argc >= 2 && streq(argv[1], "run"))
                return cmd_run(argc - 1, argv + 1);
        if (argc >= 2 && streq(argv[1], "help")) {
                usage(stdout, CMD_RUN);
                return 0;
        }
        if (argc >= 2 && argv[1][0] != '-')
                return usage_error(CMD_RUN, "unknown sub-command (run, generate, convert)");
        return cmd_run(argc, argv);
}
