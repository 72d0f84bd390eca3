/* limiter.h - the container-wide SM-time limiter (limiter.c).
 *
 * Each launch costs its work (grid x block threads, at least 1); a token
 * bucket per device in the shared region, refilled at `rate` work units
 * per nanosecond, admits launches while it holds tokens (a launch may
 * overdraw it) and makes the launching thread sleep while it is in debt.
 * One process of the container (the controller, a lease in the region)
 * looks every FGPU_STEP_NS whether the rate needs a step.  The rate turns
 * work into GPU time, which depends on the kernels, so it is measured:
 *
 *   - By a probe: for FGPU_PROBE_NS the bucket makes no one wait (it is
 *     still charged).  Its first half fills the launch queue; the demand of
 *     its second half is taken as what keeps the GPU fully busy, and the
 *     rate becomes that times the limit.  The probe's allowance at the new
 *     rate is then credited, so what it launched above the limit is a debt
 *     paid off right after it: the average stays at the limit.  A device's
 *     first step (calibration) is a probe.
 *
 *   - Closed loop, by a utilization measurement u: the agent's (NVML's
 *     per-process samples of the container, written into the region once a
 *     second) when it is fresh, else the hook's own (util: NVML's
 *     device-wide figure, the busy share of its last sample period, 1/6 s
 *     to 1 s by product).  The demand d launched in the span since the
 *     last step kept the GPU u % busy, so d x limit / u is the rate.  A
 *     measurement covers at most FGPU_MEASURE_NS before it was taken; it is
 *     used once, and only when all of that lies after the last step
 *     (after a probe: after its debt is paid), so that u and d both belong
 *     to the current rate: the agent's once it was written
 *     FGPU_MEASURE_NS into the span, the hook's own asked FGPU_SPAN_NS into
 *     it.  (Applying one figure again, or one that partly predates the
 *     rate it judges, overshoots and oscillates.)  A span far longer than
 *     that (an idle gap) is restarted; u = 0 leaves the rate alone
 *     (kernels too small to show), unless the bucket held the launches
 *     back: then the rate was set on such kernels and is far too low, and a
 *     probe sets it again.
 *
 * Open loop (no measurement: MIG, no NVML and no agent) the controller
 * probes every FGPU_SPAN_NS (plus the probe's debt), so the rate follows a
 * change of workload within about FGPU_SPAN_NS + FGPU_PROBE_NS, at the
 * price of a burst at full speed each time, paid for right after (at a
 * limit of p %, (100 / p - 1) x FGPU_PROBE_NS without launches).  Open
 * loop, a probe overestimates the GPU's throughput when the launch queue
 * takes longer than half a probe to fill, and underestimates it when the
 * CPU cannot launch fast enough to keep the GPU busy (the share is then
 * below the limit).
 *
 * The clock is a parameter, so tests drive it virtually. */
#ifndef TESS_FGPU_LIMITER_H
#define TESS_FGPU_LIMITER_H

#include <stdint.h>

#include "fgpu/region.h"

#define FGPU_STEP_NS       (100 * 1000 * 1000LL)  /* the controller looks this often */
#define FGPU_MEASURE_NS    (1000 * 1000 * 1000LL) /* a measurement covers at most this long before it */
#define FGPU_SPAN_NS       (2 * FGPU_MEASURE_NS)  /* a step's span: a measurement's, after one for the rate to show */
#define FGPU_PROBE_NS      (100 * 1000 * 1000LL)  /* an unthrottled probe; its second half is measured */
#define FGPU_BURST_NS      (20 * 1000 * 1000LL)   /* tokens kept at most: this long at the rate */
#define FGPU_UTIL_FRESH_NS (2000 * 1000 * 1000LL) /* an agent measurement older than this is stale */
#define FGPU_LEASE_NS      (500 * 1000 * 1000LL)  /* a controller silent this long is replaced */

struct fgpu_clock {
        int64_t (*now)(void *data); /* monotonic ns */
        void (*sleep)(void *data, int64_t ns);
        void *data;
};

/* A utilization measurement of device d in percent, or -1 if none: the
 * busy share of at most the FGPU_MEASURE_NS before it, as NVML's (asked
 * once per FGPU_SPAN_NS). */
typedef int (*fgpu_util_fn)(void *data, int d);

/* Admit a launch of `cost` work on device d limited to sm percent (1-99):
 * returns when the bucket allows it (sleeping meanwhile).  util/udata: the
 * hook's own measurement (may be NULL).  Returns the ns waited. */
int64_t fgpu_limiter_admit(struct fgpu_region *r, int d, unsigned sm, double cost, const struct fgpu_clock *clk,
                           fgpu_util_fn util, void *udata);

/* A closed-loop step for device d at time now on the measurement util
 * (percent) of the span since the last step (lock held): a new rate, or a
 * probe; exposed for tests. */
void fgpu_limiter_step(struct fgpu_region_device *dev, unsigned sm, int util, int64_t now);

/* The work of a launch: grid x block threads, at least 1. */
double fgpu_launch_cost(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz);

#endif
