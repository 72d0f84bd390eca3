/* limiter.c - see limiter.h. */
#include "common/compat.h"

#include "fgpu/limiter.h"

#define SLEEP_MAX_NS (5 * 1000 * 1000LL)   /* re-check the bucket at least this often */
#define DEBT_MAX_NS  (100 * FGPU_PROBE_NS) /* a probe's debt at a 1 % limit */

double fgpu_launch_cost(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz)
{
        double c = (double)gx * gy * gz * (double)bx * by * bz;
        return c >= 1 ? c : 1;
}

/* How long the bucket's debt (tokens <= 0) takes to pay at the rate
 * (> 0): at least 1 ns, at most max. */
static int64_t debt_ns(const struct fgpu_region_device *dev, int64_t max)
{
        double ns = -dev->tokens / dev->rate;
        return ns < (double)max ? (int64_t)ns + 1 : max;
}

/* Measure the demand from now on. */
static void restart_span(struct fgpu_region_device *dev, int64_t now)
{
        dev->step_ns = now;
        dev->work = 0;
}

static void probe_start(struct fgpu_region_device *dev, int64_t now)
{
        dev->probe_ns = now;
        restart_span(dev, now);
}

void fgpu_limiter_step(struct fgpu_region_device *dev, unsigned sm, int util, int64_t now)
{
        int64_t span = now - dev->step_ns;
        /* a span far longer than a step's (an idle gap) tells nothing */
        bool spanned = dev->step_ns && span > 0 && span <= FGPU_SPAN_NS + FGPU_MEASURE_NS;

        if (spanned && util > 0 && dev->work > 0) {
                /* the demand over the span kept the GPU util% busy */
                dev->rate = dev->work / (double)span * (double)sm / (double)util;
        } else if (spanned && util == 0 && dev->work >= dev->rate * (double)span / 2) {
                /* held to the rate and yet no utilization: the rate is far too
                 * low (set on kernels that hardly run); measure it again */
                probe_start(dev, now);
                return;
        }
        restart_span(dev, now);
}

/* A running probe at now (lock held): its first half fills the launch
 * queue, its second is measured; at its end the rate is that demand times
 * the limit, and the probe's allowance at that rate is credited. */
static void probe_advance(struct fgpu_region_device *dev, unsigned sm, int64_t now)
{
        int64_t age = now - dev->probe_ns;

        if (age < FGPU_PROBE_NS) {
                if (age >= FGPU_PROBE_NS / 2 && dev->step_ns == dev->probe_ns)
                        restart_span(dev, now);
                return;
        }
        /* measured: a second half with launches, and no long gap after it */
        int64_t span = now - dev->step_ns;
        if (dev->step_ns != dev->probe_ns && age <= 2 * FGPU_PROBE_NS && span > 0 && dev->work > 0)
                dev->rate = dev->work / (double)span * (double)sm / 100.0;
        if (dev->rate > 0)
                dev->tokens += dev->rate * (double)age; /* launched above it: a debt */
        else
                dev->tokens = 0;
        dev->last_ns = now;
        dev->probe_ns = 0;
        restart_span(dev, now);
        /* the demand at the rate shows once the debt is paid: the span
         * begins then */
        if (dev->rate > 0 && dev->tokens < 0)
                dev->step_ns += debt_ns(dev, DEBT_MAX_NS);
}

/* The agent's utilization of the device if it is fresh, and in *at when it
 * was written; else -1.  The agent stores util, then util_ns (release). */
static int agent_util(struct fgpu_region_device *dev, int64_t now, int64_t *at)
{
        int64_t ns = __atomic_load_n(&dev->util_ns, __ATOMIC_ACQUIRE);

        if (ns == 0 || now - ns >= FGPU_UTIL_FRESH_NS)
                return -1;
        *at = ns;
        return (int)__atomic_load_n(&dev->util, __ATOMIC_RELAXED);
}

/* The controller's look at device d (lock held): calibrate; else step on
 * a measurement that covers only time since the last step (the agent's,
 * else its own, asked FGPU_SPAN_NS after the step); else, with none to be
 * had, probe then. */
static void control(struct fgpu_region_device *dev, int d, unsigned sm, int64_t now, fgpu_util_fn util, void *udata)
{
        int64_t at = 0;
        int u = agent_util(dev, now, &at);

        if (dev->rate <= 0 || dev->step_ns == 0) {
                probe_start(dev, now);
        } else if (u >= 0) {
                /* new, and its second all in the span */
                if (at - FGPU_MEASURE_NS >= dev->step_ns)
                        fgpu_limiter_step(dev, sm, u, now);
        } else if (now - dev->step_ns >= FGPU_SPAN_NS) {
                /* NVML's last sample period (at most FGPU_MEASURE_NS) is in the span */
                u = util ? util(udata, d) : -1;
                if (u >= 0)
                        fgpu_limiter_step(dev, sm, u, now);
                else
                        probe_start(dev, now);
        }
}

/* Advance a running probe, or let the controller look if it is due and
 * this process holds (or takes) the lease (lock held). */
static void maybe_step(struct fgpu_region *r, int d, unsigned sm, int64_t now, fgpu_util_fn util, void *udata)
{
        struct fgpu_region_device *dev = &r->dev[d];

        if (dev->probe_ns) {
                probe_advance(dev, sm, now); /* by any process: it needs no measurement */
                return;
        }
        if (dev->controller_ns && now - dev->controller_ns < FGPU_STEP_NS)
                return;
        pid_t me = fgpu_self_pid();
        if (dev->controller != me && dev->controller != 0 && now - dev->controller_ns < FGPU_LEASE_NS)
                return;
        dev->controller = me;
        dev->controller_ns = now;
        control(dev, d, sm, now, util, udata);
}

/* Take cost from the bucket at now (lock held): 0, or the ns to sleep
 * before trying again (at most SLEEP_MAX_NS). */
static int64_t take(struct fgpu_region_device *dev, double cost, int64_t now)
{
        if (dev->last_ns && now > dev->last_ns)
                dev->tokens += (double)(now - dev->last_ns) * dev->rate;
        double burst = dev->rate * (double)FGPU_BURST_NS;
        if (dev->tokens > burst)
                dev->tokens = burst;
        dev->last_ns = now;
        if (dev->tokens <= 0)
                return debt_ns(dev, SLEEP_MAX_NS);
        dev->tokens -= cost;
        return 0;
}

int64_t fgpu_limiter_admit(struct fgpu_region *r, int d, unsigned sm, double cost, const struct fgpu_clock *clk,
                           fgpu_util_fn util, void *udata)
{
        struct fgpu_region_device *dev;
        int64_t waited = 0;
        bool counted = false;

        if (d < 0 || d >= FGPU_REGION_DEVICES || sm == 0 || sm >= 100)
                return 0;
        dev = &r->dev[d];
        for (;;) {
                int64_t now = clk->now(clk->data), wait = 0;
                fgpu_region_lock(r);
                maybe_step(r, d, sm, now, util, udata);
                if (!counted) {
                        dev->work += cost;
                        counted = true;
                }
                if (dev->probe_ns)
                        dev->tokens -= cost; /* a probe makes no one wait, but counts */
                else if (dev->rate > 0)
                        wait = take(dev, cost, now);
                fgpu_region_unlock(r);
                if (wait <= 0)
                        return waited;
                clk->sleep(clk->data, wait);
                waited += wait;
        }
}
