/* limiter.c - see limiter.h. */
#include "../common/compat.h"

#include "limiter.h"

#define SLEEP_MAX_NS (5 * 1000 * 1000LL) /* re-check the bucket at least this often */
#define GAIN_MIN     0.5
#define GAIN_MAX     1.6

double fgpu_launch_cost(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz)
{
        double c = (double)gx * gy * gz * (double)bx * by * bz;
        return c >= 1 ? c : 1;
}

static double clamp(double v, double lo, double hi)
{
        return v < lo ? lo : v > hi ? hi : v;
}

void fgpu_limiter_step(struct fgpu_region_device *dev, unsigned sm, int util, int64_t now)
{
        int64_t span = now - dev->step_ns;
        double demand = span > 0 ? dev->work / (double)span : 0; /* work units per ns launched */

        if (dev->step_ns == 0 || span <= 0) {
                dev->step_ns = now;
                dev->work = 0;
                return;
        }
        if (dev->rate <= 0) {
                /* calibrate: the demand kept the GPU util% busy (open loop: assume 100) */
                int u = util >= 0 ? util : 100;
                if (demand > 0 && u > 0) {
                        dev->rate = demand * (double)sm / (double)u;
                        dev->tokens = 0;
                        dev->last_ns = now;
                }
        } else if (util >= 0) {
                /* closed loop: utilization above the limit slows the bucket, below speeds it */
                double ratio = clamp((double)sm / (double)(util > 0 ? util : 1), GAIN_MIN, GAIN_MAX);
                double rate = dev->rate * ratio;
                /* never far above what would keep the GPU fully busy */
                if (demand > 0 && util > 0) {
                        double full = demand * 100.0 / util;
                        if (rate > 2 * full)
                                rate = 2 * full;
                }
                if (rate > 0)
                        dev->rate = rate;
        }
        dev->step_ns = now;
        dev->work = 0;
}

/* Run a control step if it is due and this process holds (or takes) the
 * controller lease (lock held). */
static void maybe_step(struct fgpu_region *r, int d, unsigned sm, int64_t now, fgpu_util_fn util, void *udata)
{
        struct fgpu_region_device *dev = &r->dev[d];

        if (dev->step_ns && now - dev->step_ns < FGPU_STEP_NS)
                return;
        pid_t me = fgpu_self_pid();
        if (dev->controller != me && dev->controller != 0 && now - dev->controller_ns < FGPU_LEASE_NS)
                return;
        dev->controller = me;
        dev->controller_ns = now;
        int u = -1;
        if (dev->util_ns && now - dev->util_ns < FGPU_UTIL_FRESH_NS)
                u = (int)dev->util;
        else if (util && dev->step_ns)
                u = util(udata, d);
        fgpu_limiter_step(dev, sm, u, now);
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
                if (!counted) {
                        dev->work += cost;
                        counted = true;
                }
                maybe_step(r, d, sm, now, util, udata);
                if (dev->rate > 0) {
                        if (dev->last_ns && now > dev->last_ns)
                                dev->tokens += (double)(now - dev->last_ns) * dev->rate;
                        double burst = dev->rate * (double)FGPU_BURST_NS;
                        if (dev->tokens > burst)
                                dev->tokens = burst;
                        dev->last_ns = now;
                        if (dev->tokens > 0)
                                dev->tokens -= cost;
                        else
                                wait = (int64_t)(-dev->tokens / dev->rate) + 1;
                }
                fgpu_region_unlock(r);
                if (wait <= 0)
                        return waited;
                if (wait > SLEEP_MAX_NS)
                        wait = SLEEP_MAX_NS;
                clk->sleep(clk->data, wait);
                waited += wait;
        }
}
