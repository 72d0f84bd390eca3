/* test_fgpu_limiter.c - the fGPU SM limiter (src/fgpu/limiter.c) against a
 * virtual clock and a simulated GPU: a compute-bound launch loop, limited
 * to 25, 50 and 75 %, gets that share of the GPU's throughput within 2
 * points
 *   - with utilization feedback that is exact whenever it is asked,
 *   - with the agent's measurement in the region, refreshed once a second,
 *   - with NVML-like feedback, refreshed once per sample period (1/6 s
 *     and 1 s), whatever the limiter asks in between,
 *   - open loop (no measurement at all),
 * also after a long spell of launches that leave the GPU idle, after a
 * calibration on one-thread kernels followed by compute-bound ones (open
 * and closed loop), and, closed loop, after the kernels' cost per GPU time
 * changes; an unlimited device is never held back.
 *
 * The simulated GPU runs queued work at SPEED units per ns; a launch
 * blocks while MAX_QUEUE kernels wait (as CUDA's launch queue does). */
#include "common/compat.h"

#include <math.h>

#include "../lib/test.h"
#include "fgpu/limiter.h"

#define SPEED     1.0     /* work units per ns */
#define KERNEL    200000. /* work of one launch: 200 us of GPU time */
#define MAX_QUEUE 8.0
#define LAUNCH_NS 2000 /* CPU time of one launch call */
#define SECOND    1000000000LL

/* Where the limiter's utilization measurement comes from. */
enum source {
        NONE,  /* nowhere: open loop */
        ASKED, /* the util callback: the busy share since it was last asked */
        NVML,  /* the util callback: the busy share of the last complete sample period (NVML's device utilization) */
        AGENT, /* the region: util and util_ns written at the end of each period with its busy share, as the agent does */
};

struct sim {
        int64_t now;
        double queue; /* work waiting */
        double done;  /* work executed */
        enum source src;
        int64_t busy; /* ASKED: ns busy since the utilization was last read */
        int64_t util_since;
        int64_t period, period_end; /* NVML, AGENT: the sample period, the end of the current one */
        double period_busy;         /* ns busy in the current period */
        int latched;                /* NVML: the busy share of the last complete period */
        struct fgpu_region *r;
};

/* Run the GPU for ns, within one sample period. */
static void run_within_period(struct sim *s, int64_t ns)
{
        double can = (double)ns * SPEED;
        double w = s->queue < can ? s->queue : can;
        s->queue -= w;
        s->done += w;
        s->busy += (int64_t)(w / SPEED);
        s->period_busy += w / SPEED;
        s->now += ns;
}

/* A sample period is complete: NVML latches its busy share, the agent
 * writes it into the region (util, then util_ns with release). */
static void end_period(struct sim *s)
{
        int u = (int)llround(100.0 * s->period_busy / (double)s->period);
        u = u > 100 ? 100 : u;
        if (s->src == AGENT) {
                __atomic_store_n(&s->r->dev[0].util, (uint32_t)u, __ATOMIC_RELAXED);
                __atomic_store_n(&s->r->dev[0].util_ns, s->now, __ATOMIC_RELEASE);
        } else {
                s->latched = u;
        }
        s->period_busy = 0;
        s->period_end += s->period;
}

static void run_gpu(struct sim *s, int64_t ns)
{
        while (s->period && s->now + ns >= s->period_end) {
                int64_t part = s->period_end - s->now;
                run_within_period(s, part);
                ns -= part;
                end_period(s);
        }
        run_within_period(s, ns);
}

static int64_t sim_now(void *data)
{
        return ((struct sim *)data)->now;
}

static void sim_sleep(void *data, int64_t ns)
{
        run_gpu(data, ns);
}

static int sim_util(void *data, int d UNUSED)
{
        struct sim *s = data;
        if (s->src == NVML)
                return s->latched;
        if (s->src != ASKED)
                return -1;
        int64_t span = s->now - s->util_since;
        int u = span > 0 ? (int)llround(100.0 * (double)s->busy / (double)span) : 0;
        s->busy = 0;
        s->util_since = s->now;
        return u > 100 ? 100 : u;
}

/* A launch loop limited to sm percent: busy_s seconds compute-bound, then
 * tiny_s of one-thread kernels (which keep the GPU at 0 %), then seconds
 * compute-bound again; from change_s into that, its kernels cost `factor`
 * times as much per GPU time (more threads doing less each, or fewer doing
 * more). */
struct run {
        unsigned sm;
        enum source src;
        int64_t period, phase; /* NVML, AGENT: the sample period; the first ends at phase (> 1 ms) */
        int busy_s, tiny_s, seconds;
        int settle_s; /* the share is measured from this long into the last stretch; 0: its second half */
        int change_s;
        double factor;
};

static struct fgpu_region *region_new(void)
{
        struct fgpu_region *r = calloc(1, sizeof(*r));
        pthread_mutexattr_t a;

        pthread_mutexattr_init(&a);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&r->lock, &a);
        return r;
}

static void region_free(struct fgpu_region *r)
{
        pthread_mutex_destroy(&r->lock);
        free(r);
}

/* The share of the GPU the run's last compute-bound stretch gets. */
static double share(const struct run *run)
{
        struct sim s = { .now = 1000000, .src = run->src, .r = region_new() };
        struct fgpu_clock clk = { sim_now, sim_sleep, &s };
        int64_t tiny_from = s.now + (int64_t)run->busy_s * SECOND;
        int64_t start = tiny_from + (int64_t)run->tiny_s * SECOND;
        int64_t end = start + (int64_t)run->seconds * SECOND;
        int64_t from = run->settle_s ? start + (int64_t)run->settle_s * SECOND : start + (end - start) / 2;
        double done_at_from = -1;

        s.util_since = s.now;
        if (run->src == NVML || run->src == AGENT) {
                s.period = run->period;
                s.period_end = run->phase;
        }
        while (s.now < end) {
                double work = s.now >= tiny_from && s.now < start ? 1 : KERNEL;
                double cost = run->factor > 0 && s.now >= start + (int64_t)run->change_s * SECOND ? run->factor : 1;
                if (done_at_from < 0 && s.now >= from)
                        done_at_from = s.done;
                fgpu_limiter_admit(s.r, 0, run->sm, work * cost, &clk, sim_util, &s);
                run_gpu(&s, LAUNCH_NS);
                s.queue += work;
                while (s.queue > MAX_QUEUE * KERNEL) /* the launch queue is full: the call blocks */
                        run_gpu(&s, 10000);
        }
        region_free(s.r);
        return (s.done - done_at_from) / ((double)(end - from) * SPEED) * 100;
}

static const char *const source_names[] = { "open loop", "feedback", "NVML", "agent" };

static void check_run(const struct run *run, const char *what)
{
        double got = share(run);
        if (fabs(got - run->sm) > 2)
                test_fail(__FILE__, __LINE__, "limit %u%% (%s, %s): the loop got %.1f%% of the GPU", run->sm,
                          source_names[run->src], what, got);
}

static void check_share(unsigned sm, enum source src, int64_t period, int64_t phase)
{
        struct run run = { .sm = sm, .src = src, .period = period, .phase = phase, .seconds = 20 };
        char what[64] = "steady";
        if (period)
                snprintf(what, sizeof(what), "sample period %.3f s", (double)period / SECOND);
        check_run(&run, what);
}

static void test_limits_with_utilization_feedback(void)
{
        check_share(25, ASKED, 0, 0);
        check_share(50, ASKED, 0, 0);
        check_share(75, ASKED, 0, 0);
}

/* The agent writes the container's utilization once a second; the
 * limiter looks every 100 ms and must not apply one figure ten times.
 * The phases put the agent's writes anywhere between two looks. */
static void test_limits_with_the_agents_measurement_once_a_second(void)
{
        check_share(25, AGENT, SECOND, 350 * 1000 * 1000);
        check_share(50, AGENT, SECOND, 720 * 1000 * 1000);
        check_share(75, AGENT, SECOND, 1000 * 1000 * 1000);
        check_share(50, AGENT, SECOND, 51 * 1000 * 1000);
}

/* NVML's utilization is the busy share of its last complete sample
 * period (1/6 s to 1 s, by product), the same whenever it is asked in
 * between. */
static void test_limits_with_nvml_sample_periods(void)
{
        static const int64_t periods[] = { SECOND / 6, SECOND };
        for (size_t i = 0; i < sizeof(periods) / sizeof(periods[0]); i++) {
                check_share(25, NVML, periods[i], periods[i] / 3);
                check_share(50, NVML, periods[i], periods[i] * 9 / 10);
                check_share(75, NVML, periods[i], periods[i] / 2);
        }
}

static void test_limits_open_loop(void)
{
        check_share(25, NONE, 0, 0);
        check_share(50, NONE, 0, 0);
        check_share(75, NONE, 0, 0);
}

/* Open loop, the limiter calibrates on 1 s of one-thread kernels; when a
 * compute-bound loop follows, the next probe (FGPU_SPAN_NS after the
 * calibration) finds it: the limit holds from 3 s after the change
 * (measured over the next 8 s). */
static void test_open_loop_follows_a_change_of_workload(void)
{
        for (unsigned sm = 25; sm <= 75; sm += 25) {
                struct run run = { .sm = sm, .src = NONE, .tiny_s = 1, .seconds = 11, .settle_s = 3 };
                check_run(&run, "after 1 s of one-thread kernels");
        }
}

/* Calibrated on one-thread kernels, the rate lets a compute-bound loop
 * launch so little that the GPU reads 0 %: the closed loop must find its
 * way out (from 3 s after the change). */
static void test_closed_loop_after_calibrating_on_one_thread_kernels(void)
{
        struct run run = {
                .sm = 50, .src = AGENT, .period = SECOND, .phase = SECOND / 3, .tiny_s = 1, .seconds = 11, .settle_s = 3
        };
        check_run(&run, "after 1 s of one-thread kernels");
        run.src = NVML;
        check_run(&run, "after 1 s of one-thread kernels");
}

/* The kernels' cost per GPU time changes 4-fold 2 s into the loop: the
 * closed loop corrects the rate (measured from 4 s after the change). */
static void test_closed_loop_follows_a_change_of_cost(void)
{
        static const enum source srcs[] = { AGENT, NVML };
        for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
                struct run run = { .sm = 25,
                                   .src = srcs[i],
                                   .period = SECOND,
                                   .phase = SECOND * 2 / 3,
                                   .seconds = 14,
                                   .settle_s = 6,
                                   .change_s = 2,
                                   .factor = 4 };
                check_run(&run, "kernels costing 4 times as much");
                run.sm = 75;
                run.factor = 0.25;
                check_run(&run, "kernels costing a quarter");
        }
}

/* While the GPU reads 0 % (60 s here; 10 s of the agent's 0 %) a closed
 * loop that kept raising the rate would let real work through at full
 * speed when it comes back: the limit must hold at once. */
static void test_limit_holds_after_a_long_idle_spell(void)
{
        struct run run = { .sm = 50, .src = ASKED, .busy_s = 4, .tiny_s = 60, .seconds = 8 };
        check_run(&run, "after 60 s of tiny kernels");
        run.src = AGENT;
        run.period = SECOND;
        run.phase = SECOND / 2;
        run.tiny_s = 10;
        check_run(&run, "after 10 s of tiny kernels");
}

static void test_no_limit_is_not_held_back(void)
{
        struct run run = { .sm = 100, .src = ASKED, .seconds = 4 }; /* 100 %: the limiter lets everything through */
        CHECK(share(&run) > 97);
}

static void test_launch_cost(void)
{
        CHECK(fgpu_launch_cost(4, 2, 1, 256, 1, 1) == 2048);
        CHECK(fgpu_launch_cost(0, 0, 0, 0, 0, 0) == 1);              /* never free */
        CHECK(fgpu_launch_cost(65535, 65535, 1, 1024, 1, 1) > 4e12); /* no overflow */
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_limits_with_utilization_feedback),
                TEST(test_limits_with_the_agents_measurement_once_a_second),
                TEST(test_limits_with_nvml_sample_periods),
                TEST(test_limits_open_loop),
                TEST(test_open_loop_follows_a_change_of_workload),
                TEST(test_closed_loop_after_calibrating_on_one_thread_kernels),
                TEST(test_closed_loop_follows_a_change_of_cost),
                TEST(test_limit_holds_after_a_long_idle_spell),
                TEST(test_no_limit_is_not_held_back),
                TEST(test_launch_cost),
                { 0 },
        };
        return test_main(tests);
}
