/* limiter.h - the container-wide SM-time limiter (limiter.c).
 *
 * Each launch costs its work (grid x block threads, at least 1); a token
 * bucket per device in the shared region, refilled at `rate` work units
 * per nanosecond, admits launches while it holds tokens (a launch may
 * overdraw it) and makes the launching thread sleep while it is in debt.
 * Every FGPU_STEP_NS one process of the container (the controller, a lease
 * in the region) adjusts the rate so the device's measured utilization
 * approaches the SM limit: utilization from the agent (written into the
 * region, NVML per container), else from the hook's own sampling, else
 * none: open loop, where the first step assumes the unthrottled demand
 * kept the GPU busy and sets the rate to that demand times the limit.
 * The clock is a parameter, so tests drive it virtually. */
#ifndef TESS_FGPU_LIMITER_H
#define TESS_FGPU_LIMITER_H

#include <stdint.h>

#include "region.h"

#define FGPU_STEP_NS       (100 * 1000 * 1000LL)  /* control period */
#define FGPU_BURST_NS      (20 * 1000 * 1000LL)   /* tokens kept at most: this long at the rate */
#define FGPU_UTIL_FRESH_NS (2000 * 1000 * 1000LL) /* an agent measurement older than this is stale */
#define FGPU_LEASE_NS      (500 * 1000 * 1000LL)  /* a controller silent this long is replaced */

struct fgpu_clock {
        int64_t (*now)(void *data); /* monotonic ns */
        void (*sleep)(void *data, int64_t ns);
        void *data;
};

/* A utilization measurement of device d in percent, or -1 if none. */
typedef int (*fgpu_util_fn)(void *data, int d);

/* Admit a launch of `cost` work on device d limited to sm percent (1-99):
 * returns when the bucket allows it (sleeping meanwhile).  util/udata: the
 * hook's own measurement (may be NULL).  Returns the ns waited. */
int64_t fgpu_limiter_admit(struct fgpu_region *r, int d, unsigned sm, double cost, const struct fgpu_clock *clk,
                           fgpu_util_fn util, void *udata);

/* One control step for device d at time now (lock held); exposed for tests. */
void fgpu_limiter_step(struct fgpu_region_device *dev, unsigned sm, int util, int64_t now);

/* The work of a launch: grid x block threads, at least 1. */
double fgpu_launch_cost(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz);

#endif
