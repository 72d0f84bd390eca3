/* test_fgpu_limiter.c - the fGPU SM limiter (src/fgpu/limiter.c) against a
 * virtual clock and a simulated GPU: a compute-bound launch loop, limited
 * to 25, 50 and 75 %, gets that share of the GPU's throughput within 2
 * points, with utilization feedback and open loop, also after a long
 * spell of launches that leave the GPU idle; an unlimited device is never
 * held back.
 *
 * The simulated GPU runs queued work at SPEED units per ns; a launch
 * blocks while MAX_QUEUE kernels wait (as CUDA's launch queue does); the
 * utilization it reports is the busy share of the time since it was last
 * asked, like NVML's. */
#include "common/compat.h"

#include <math.h>

#include "../lib/test.h"
#include "fgpu/limiter.h"

#define SPEED     1.0     /* work units per ns */
#define KERNEL    200000. /* work of one launch: 200 us of GPU time */
#define MAX_QUEUE 8.0
#define LAUNCH_NS 2000 /* CPU time of one launch call */

struct sim {
        int64_t now;
        double queue; /* work waiting */
        double done;  /* work executed */
        int64_t busy; /* ns busy since the utilization was last read */
        int64_t util_since;
        bool feedback;
};

static void run_gpu(struct sim *s, int64_t ns)
{
        double can = (double)ns * SPEED;
        double w = s->queue < can ? s->queue : can;
        s->queue -= w;
        s->done += w;
        s->busy += (int64_t)(w / SPEED);
        s->now += ns;
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
        if (!s->feedback)
                return -1;
        int64_t span = s->now - s->util_since;
        int u = span > 0 ? (int)llround(100.0 * (double)s->busy / (double)span) : 0;
        s->busy = 0;
        s->util_since = s->now;
        return u > 100 ? 100 : u;
}

/* The share of the GPU a launch loop limited to sm percent gets, measured
 * over the second half of `seconds` of virtual time; with tiny_seconds,
 * after 4 s of the same loop and then that long of launching one-thread
 * kernels (which keep the GPU at 0 %). */
static double run_loop_after(unsigned sm, bool feedback, int tiny_seconds, int seconds)
{
        struct fgpu_region *r = calloc(1, sizeof(*r));
        struct sim s = { .now = 1000000, .feedback = feedback };
        struct fgpu_clock clk = { sim_now, sim_sleep, &s };
        pthread_mutexattr_t a;
        int64_t tiny_from = s.now + (tiny_seconds ? 4000000000 : 0);
        int64_t start = tiny_from + (int64_t)tiny_seconds * 1000000000;
        int64_t end = start + (int64_t)seconds * 1000000000, half = start + (end - start) / 2;
        double done_at_half = -1;

        pthread_mutexattr_init(&a);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&r->lock, &a);
        s.util_since = s.now;
        while (s.now < end) {
                double work = s.now >= tiny_from && s.now < start ? 1 : KERNEL;
                if (done_at_half < 0 && s.now >= half)
                        done_at_half = s.done;
                fgpu_limiter_admit(r, 0, sm, work, &clk, sim_util, &s);
                run_gpu(&s, LAUNCH_NS);
                s.queue += work;
                while (s.queue > MAX_QUEUE * KERNEL) /* the launch queue is full: the call blocks */
                        run_gpu(&s, 10000);
        }
        double share = (s.done - done_at_half) / ((double)(end - half) * SPEED);
        pthread_mutex_destroy(&r->lock);
        free(r);
        return share * 100;
}

static double run_loop(unsigned sm, bool feedback, int seconds)
{
        return run_loop_after(sm, feedback, 0, seconds);
}

static void check_share(unsigned sm, bool feedback)
{
        double got = run_loop(sm, feedback, 20);
        if (fabs(got - sm) > 2)
                test_fail(__FILE__, __LINE__, "limit %u%% (%s): the loop got %.1f%% of the GPU", sm,
                          feedback ? "feedback" : "open loop", got);
}

static void test_limits_with_utilization_feedback(void)
{
        check_share(25, true);
        check_share(50, true);
        check_share(75, true);
}

static void test_limits_open_loop(void)
{
        check_share(25, false);
        check_share(50, false);
        check_share(75, false);
}

/* While the GPU reads 0 % the closed loop keeps raising the rate (600
 * steps here); when real work comes back the limit must hold at once,
 * not after as many steps spent bringing the rate back down. */
static void test_limit_holds_after_a_long_idle_spell(void)
{
        double got = run_loop_after(50, true, 60, 8);
        if (fabs(got - 50) > 2)
                test_fail(__FILE__, __LINE__, "after 60 s of tiny kernels the 50%% limit gave %.1f%%", got);
}

static void test_no_limit_is_not_held_back(void)
{
        double got = run_loop(100, true, 4); /* 100 %: the limiter lets everything through */
        CHECK(got > 97);
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
                TEST(test_limits_open_loop),
                TEST(test_limit_holds_after_a_long_idle_spell),
                TEST(test_no_limit_is_not_held_back),
                TEST(test_launch_cost),
                { 0 },
        };
        return test_main(tests);
}
