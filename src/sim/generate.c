/* generate.c - synthetic workloads for the simulator.
 *
 * Jobs arrive as a Poisson process (exponential gaps) at `rate` per second,
 * or at the rate that offers `load` times the cluster's GPUs on average
 * (rate = load x GPUs / (mean GPUs per job x mean duration)).  Each job is
 * one of three sizes, drawn by the mix weights:
 *   cpu-only    1, 2, 4 or 8 cores, 4 GiB per core
 *   fractional  0.1, 0.25, 0.5 or 0.75 of a GPU, 2 cores, 16 GiB
 *   whole       1 (50 %), 2 (25 %), 4 (15 %) or 8 (10 %) GPUs, at most an
 *               agent's; 4 cores and 32 GiB per GPU
 * (cores and memory never above one agent's).  Durations follow the chosen
 * distribution, clamped to [1 s, 30 days].  Users submit with Zipf weights
 * 1/k^skew; user k belongs to project k mod projects.  The generator is
 * its own xoshiro256** seeded from `seed`, so a seed gives the same
 * workload on every machine. */
#include "common/compat.h"

#include <math.h>

#include "common/splitmix.h"
#include "common/timeutil.h"
#include "sim/sim-internal.h"

#define GIB ((int64_t)1 << 30)

struct rng {
        uint64_t s[4];
};

static void rng_seed(struct rng *r, uint64_t seed)
{
        for (int i = 0; i < 4; i++)
                r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
        return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
        uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return out;
}

/* Uniform in [0, 1). */
static double rng_unit(struct rng *r)
{
        return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static double rng_normal(struct rng *r)
{
        double u = 1.0 - rng_unit(r), v = rng_unit(r);
        return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static double rng_exp(struct rng *r, double mean)
{
        return -mean * log(1.0 - rng_unit(r));
}

void sim_gen_default(struct sim_gen *g)
{
        *g = (struct sim_gen){
                .jobs = 1000,
                .load = 0.9,
                .mix_cpu = 20,
                .mix_frac = 50,
                .mix_whole = 30,
                .dist = SIM_DIST_LOGNORMAL,
                .dist_a = 1800,
                .dist_b = 1.5,
                .users = 20,
                .projects = 4,
                .user_skew = 1.0,
                .seed = 1,
        };
}

static int seconds_of(const char *s, double *ret)
{
        int64_t us;
        if (duration_parse(s, &us) < 0 || us <= 0)
                return -EINVAL;
        *ret = (double)us / 1e6;
        return 0;
}

int sim_gen_parse_dist(struct sim_gen *g, const char *s, struct tess_error **err)
{
        _cleanup_free_ char *copy = xstrdup(s);
        char *parts[4] = { copy }, *save = NULL;
        int n = 0;
        char *tok = strtok_r(copy, ":", &save);

        for (; tok && n < 4; tok = strtok_r(NULL, ":", &save))
                parts[n++] = tok;
        if (tok || n == 0)
                goto bad;
        if (n == 1 && seconds_of(parts[0], &g->dist_a) == 0) {
                g->dist = SIM_DIST_FIXED;
                return 0;
        }
        if (streq(parts[0], "fixed") && n == 2 && seconds_of(parts[1], &g->dist_a) == 0) {
                g->dist = SIM_DIST_FIXED;
                return 0;
        }
        if (streq(parts[0], "exp") && n == 2 && seconds_of(parts[1], &g->dist_a) == 0) {
                g->dist = SIM_DIST_EXP;
                return 0;
        }
        if (streq(parts[0], "uniform") && n == 3 && seconds_of(parts[1], &g->dist_a) == 0 &&
            seconds_of(parts[2], &g->dist_b) == 0 && g->dist_a <= g->dist_b) {
                g->dist = SIM_DIST_UNIFORM;
                return 0;
        }
        if (streq(parts[0], "lognormal") && n == 3 && seconds_of(parts[1], &g->dist_a) == 0) {
                char *end;
                g->dist_b = strtod(parts[2], &end);
                if (*end == '\0' && g->dist_b >= 0 && g->dist_b <= 5) {
                        g->dist = SIM_DIST_LOGNORMAL;
                        return 0;
                }
        }
bad:
        return tess_err(err, EINVAL,
                        "bad duration distribution '%s' (DURATION, fixed:D, exp:MEAN, uniform:MIN:MAX, "
                        "lognormal:MEDIAN:SIGMA with SIGMA from 0 to 5; durations like 90s, 30m, 2h)",
                        s);
}

int sim_gen_parse_mix(struct sim_gen *g, const char *s, struct tess_error **err)
{
        unsigned a, b, c;
        int n = -1;

        if (sscanf(s, "%u:%u:%u%n", &a, &b, &c, &n) != 3 || n < 0 || s[n] || a > 1000000 || b > 1000000 ||
            c > 1000000 || a + b + c == 0)
                return tess_err(err, EINVAL,
                                "bad size mix '%s': CPU:FRACTIONAL:WHOLE weights, e.g. 20:50:30", s);
        g->mix_cpu = (int)a;
        g->mix_frac = (int)b;
        g->mix_whole = (int)c;
        return 0;
}

static const double frac_sizes[] = { 0.1, 0.25, 0.5, 0.75 };
static const struct {
        int gpus;
        double p;
} whole_sizes[] = { { 1, 0.50 }, { 2, 0.25 }, { 4, 0.15 }, { 8, 0.10 } };
static const int cpu_sizes[] = { 1, 2, 4, 8 };

static double mean_duration(const struct sim_gen *g)
{
        switch (g->dist) {
        case SIM_DIST_FIXED:
        case SIM_DIST_EXP:
                return g->dist_a;
        case SIM_DIST_UNIFORM:
                return (g->dist_a + g->dist_b) / 2;
        case SIM_DIST_LOGNORMAL:
                return g->dist_a * exp(g->dist_b * g->dist_b / 2);
        }
        return g->dist_a;
}

static double draw_duration(const struct sim_gen *g, struct rng *r)
{
        double d = g->dist_a;

        switch (g->dist) {
        case SIM_DIST_FIXED:
                break;
        case SIM_DIST_EXP:
                d = rng_exp(r, g->dist_a);
                break;
        case SIM_DIST_UNIFORM:
                d = g->dist_a + (g->dist_b - g->dist_a) * rng_unit(r);
                break;
        case SIM_DIST_LOGNORMAL:
                d = g->dist_a * exp(g->dist_b * rng_normal(r));
                break;
        }
        return fmin(fmax(d, 1.0), 30.0 * 86400);
}

/* Mean GPUs and cores of one job, for the rate that gives `load`. */
static void mean_size(const struct sim_gen *g, int gpus_per_agent, double *ret_gpu, double *ret_cpu)
{
        double total = g->mix_cpu + g->mix_frac + g->mix_whole, frac = 0, whole = 0, cpu = 0;

        for (size_t i = 0; i < ARRAY_SIZE(frac_sizes); i++)
                frac += frac_sizes[i] / (double)ARRAY_SIZE(frac_sizes);
        for (size_t i = 0; i < ARRAY_SIZE(whole_sizes); i++)
                whole += whole_sizes[i].p *
                         (whole_sizes[i].gpus < gpus_per_agent ? whole_sizes[i].gpus : gpus_per_agent);
        for (size_t i = 0; i < ARRAY_SIZE(cpu_sizes); i++)
                cpu += cpu_sizes[i] / (double)ARRAY_SIZE(cpu_sizes);
        *ret_gpu = (g->mix_frac * frac + g->mix_whole * whole) / total;
        *ret_cpu = (g->mix_cpu * cpu + g->mix_frac * 2 + g->mix_whole * 4 * whole) / total;
}

static int64_t cap(int64_t v, int64_t max)
{
        return v < max ? v : max;
}

int sim_generate(const struct sim_gen *g, const struct sim_cluster *c, struct sim_workload *w,
                 struct tess_error **err)
{
        struct rng r;
        double mgpu, mcpu, rate = g->rate, t = 0, total = g->mix_cpu + g->mix_frac + g->mix_whole;
        _cleanup_free_ double *cum = NULL;

        if (g->jobs < 0 || g->jobs > SIM_MAX_JOBS)
                return tess_err(err, EINVAL, "--jobs must be from 0 to %d", SIM_MAX_JOBS);
        if (g->users < 1 || g->users > 1000000 || g->projects < 1 || g->projects > 1000000)
                return tess_err(err, EINVAL, "--users and --projects must be from 1 to 1000000");
        if (c->gpus == 0 && g->mix_frac + g->mix_whole > 0)
                return tess_err(err, EINVAL,
                                "the agents have no GPUs but the size mix asks for GPU jobs (--mix 1:0:0)");
        mean_size(g, c->gpus, &mgpu, &mcpu);
        if (rate <= 0) {
                if (g->load <= 0)
                        return tess_err(err, EINVAL, "give a positive --rate or --load");
                double cluster = mgpu > 0 ? (double)c->gpus * c->nagents : (double)c->cpu / 1000 * c->nagents;
                rate = g->load * cluster / ((mgpu > 0 ? mgpu : mcpu) * mean_duration(g));
        }
        if (!(rate > 0 && rate < 1e12) && g->jobs > 0)
                return tess_err(err, EINVAL, "no arrival rate follows from --load on this cluster (no GPUs or cores): "
                                             "give --rate");
        cum = xmalloc(sizeof(double) * (size_t)g->users);
        for (int k = 0; k < g->users; k++)
                cum[k] = (k ? cum[k - 1] : 0) + 1.0 / pow(k + 1, g->user_skew);
        for (int k = 0; k < g->users; k++) {
                char name[32];
                int n = snprintf(name, sizeof(name), "user-%02d", k + 1);
                sim_names_intern(&w->users, name, (size_t)n);
        }
        for (int k = 0; k < g->projects; k++) {
                char name[32];
                int n = snprintf(name, sizeof(name), "project-%d", k + 1);
                sim_names_intern(&w->projects, name, (size_t)n);
        }

        rng_seed(&r, g->seed);
        for (int64_t i = 0; i < g->jobs; i++) {
                struct sim_job *j = sim_workload_add(w, NULL);
                double kind = rng_unit(&r) * total, u = rng_unit(&r) * cum[g->users - 1];
                int lo = 0, hi = g->users - 1;

                t += rng_exp(&r, 1.0 / rate);
                j->arrival = t * 1e6 < (double)SIM_TIME_MAX ? (int64_t)(t * 1e6) : SIM_TIME_MAX;
                j->duration = (int64_t)(draw_duration(g, &r) * 1e6);
                while (lo < hi) {
                        int mid = (lo + hi) / 2;
                        if (cum[mid] > u)
                                hi = mid;
                        else
                                lo = mid + 1;
                }
                j->user = lo;
                j->project = lo % g->projects;
                if (kind < g->mix_cpu) {
                        int cores = cpu_sizes[rng_next(&r) % ARRAY_SIZE(cpu_sizes)];
                        j->cpu = cores * 1000;
                        j->mem = cores * 4 * GIB;
                } else if (kind < g->mix_cpu + g->mix_frac) {
                        j->gpu = (int64_t)(frac_sizes[rng_next(&r) % ARRAY_SIZE(frac_sizes)] * 100 + 0.5);
                        j->cpu = 2000;
                        j->mem = 16 * GIB;
                } else {
                        double p = rng_unit(&r);
                        size_t s = 0;
                        while (s + 1 < ARRAY_SIZE(whole_sizes) && p >= whole_sizes[s].p) {
                                p -= whole_sizes[s].p;
                                s++;
                        }
                        int gpus = whole_sizes[s].gpus < c->gpus ? whole_sizes[s].gpus : c->gpus;
                        j->gpu = gpus * 100;
                        j->cpu = gpus * 4000;
                        j->mem = gpus * 32 * GIB;
                }
                j->cpu = cap(j->cpu, c->cpu);
                j->mem = cap(j->mem, c->mem);
        }
        return 0;
}
