/* launch_hooks.c - kernel and graph launches admitted by the SM limiter
 * (limiter.c) of their device when it has an SM limit.  A kernel costs its
 * threads (grid x block); a graph launch, whose kernels are not known here,
 * costs one unit: the closed loop on measured utilization corrects for it.
 * The limiter's utilization source, when the agent writes none into the
 * region, is NVML's device utilization, sampled here. */
#include "common/compat.h"

#include <time.h>

#include "fgpu/hook.h"
#include "fgpu/limiter.h"

CUresult (*real_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void **, void **);
CUresult (*real_cuLaunchKernel_ptsz)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     CUstream, void **, void **);
CUresult (*real_cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult (*real_cuLaunchKernelEx_ptsz)(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult (*real_cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                           unsigned, CUstream, void **);
CUresult (*real_cuLaunchCooperativeKernel_ptsz)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                                unsigned, CUstream, void **);
CUresult (*real_cuGraphLaunch)(CUgraphExec, CUstream);
CUresult (*real_cuGraphLaunch_ptsz)(CUgraphExec, CUstream);

static int64_t clock_now(void *data UNUSED)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void clock_sleep(void *data UNUSED, int64_t ns)
{
        struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static const struct fgpu_clock real_clock = { clock_now, clock_sleep, NULL };

/* NVML's utilization of device d (the container's view: its devices in
 * order), or -1: the device's busy share (all its users) over NVML's last
 * sample period, 1/6 s to 1 s by product.  The limiter's controller asks
 * once per FGPU_SPAN_NS, so each answer is a new measurement of time at
 * its current rate (limiter.h). */
static int nvml_util(void *data UNUSED, int d)
{
        static nvmlReturn_t (*init)(void), (*handle)(unsigned, nvmlDevice_t *),
                (*rates)(nvmlDevice_t, nvmlUtilization_t *);
        static int state; /* 0 untried, 1 ready, -1 unavailable */
        nvmlDevice_t dev;
        nvmlUtilization_t u;

        if (state == 0) {
                state = -1;
                if (fgpu.nvml) {
                        init = (nvmlReturn_t(*)(void))fgpu_real_dlsym(fgpu.nvml, "nvmlInit_v2");
                        handle = (nvmlReturn_t(*)(unsigned, nvmlDevice_t *))fgpu_real_dlsym(
                                fgpu.nvml, "nvmlDeviceGetHandleByIndex_v2");
                        rates = (nvmlReturn_t(*)(nvmlDevice_t, nvmlUtilization_t *))fgpu_real_dlsym(
                                fgpu.nvml, "nvmlDeviceGetUtilizationRates");
                        if (init && handle && rates && init() == 0)
                                state = 1;
                }
        }
        if (state != 1 || handle((unsigned)d, &dev) != 0 || rates(dev, &u) != 0)
                return -1;
        return (int)u.gpu;
}

/* Wait for the limiter of the current device, if it has an SM limit
 * (some device has one). */
static void admit(double cost)
{
        if (!fgpu.region)
                return;
        int d = fgpu_current_device();
        if (d < 0 || fgpu.config.sm[d] == 0 || fgpu.config.sm[d] >= 100)
                return;
        fgpu_limiter_admit(fgpu.region, d, fgpu.config.sm[d], cost, &real_clock, nvml_util, NULL);
}

/* The launch's cost is worked out only when some device is SM-limited.
 * A closed configuration (bad config, no region) limits nothing, so it
 * admits nothing. */
#define LAUNCH(fn, cost, ...)                            \
        do {                                             \
                fgpu_init();                             \
                if (fgpu.config.sm_limited)              \
                        admit(cost);                     \
                if (fgpu.config.closed)                  \
                        return CUDA_ERROR_NOT_PERMITTED; \
                if (!real_##fn)                          \
                        return CUDA_ERROR_NOT_FOUND;     \
                return real_##fn(__VA_ARGS__);           \
        } while (0)

static double config_cost(const CUlaunchConfig *cfg)
{
        return cfg ? fgpu_launch_cost(cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ, cfg->blockDimX, cfg->blockDimY,
                                      cfg->blockDimZ)
                   : 1;
}

FGPU_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
        LAUNCH(cuLaunchKernel, fgpu_launch_cost(gx, gy, gz, bx, by, bz),
               f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

FGPU_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                         unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
        LAUNCH(cuLaunchKernel_ptsz, fgpu_launch_cost(gx, gy, gz, bx, by, bz),
               f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

FGPU_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
        LAUNCH(cuLaunchKernelEx, config_cost(cfg), cfg, f, params, extra);
}

FGPU_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
        LAUNCH(cuLaunchKernelEx_ptsz, config_cost(cfg), cfg, f, params, extra);
}

FGPU_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                               unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
        LAUNCH(cuLaunchCooperativeKernel, fgpu_launch_cost(gx, gy, gz, bx, by, bz),
               f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

FGPU_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                    unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
        LAUNCH(cuLaunchCooperativeKernel_ptsz, fgpu_launch_cost(gx, gy, gz, bx, by, bz),
               f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

FGPU_EXPORT CUresult cuGraphLaunch(CUgraphExec g, CUstream s)
{
        LAUNCH(cuGraphLaunch, 1, g, s);
}

FGPU_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s)
{
        LAUNCH(cuGraphLaunch_ptsz, 1, g, s);
}

#define SYM(n)                                           \
        {                                                \
#n, (void *)n, (void **)&real_##n, false \
        }
struct fgpu_symbol fgpu_launch_symbols[] = {
        SYM(cuLaunchKernel),        SYM(cuLaunchKernel_ptsz),       SYM(cuLaunchKernelEx),
        SYM(cuLaunchKernelEx_ptsz), SYM(cuLaunchCooperativeKernel), SYM(cuLaunchCooperativeKernel_ptsz),
        SYM(cuGraphLaunch),         SYM(cuGraphLaunch_ptsz),        { 0 },
};
