/* gpu_util.c - see gpu_util.h.  NVML is loaded with dlopen, as in
 * gpu_nvml.c, and kept open for the agent's life. */
#include "common/compat.h"

#include <dirent.h>
#include <dlfcn.h>

#include "agent/container/container.h"
#include "agent/gpu_util.h"
#include "agent/gpu_wiring.h"
#include "agent/kernel_runtime.h"
#include "common/fs.h"
#include "common/log.h"
#include "fgpu/region.h"

#define SAMPLES_MAX 4096

struct gpu_util {
        void *lib;
        bool initialized; /* nvmlInit succeeded: nvmlShutdown is owed */
        nvml_handle_fn handle;
        nvml_process_utilization_fn process_util;
        unsigned long long last_seen[FGPU_REGION_DEVICES]; /* per NVML index: the newest sample read */
};

/* What one round read of one GPU (NVML index). */
struct device_samples {
        bool read;
        nvmlProcessUtilizationSample_t *s;
        size_t n;
};

struct gpu_util *gpu_util_open(const char *nvml_path)
{
        struct gpu_util *u = xcalloc(1, sizeof(*u));
        nvml_void_fn init;

        u->lib = dlopen(nvml_path, RTLD_NOW | RTLD_LOCAL);
        if (!u->lib)
                goto fail;
        init = (nvml_void_fn)dlsym(u->lib, "nvmlInit_v2");
        u->handle = (nvml_handle_fn)dlsym(u->lib, "nvmlDeviceGetHandleByIndex_v2");
        u->process_util = (nvml_process_utilization_fn)dlsym(u->lib, "nvmlDeviceGetProcessUtilization");
        if (!init || !u->handle || !u->process_util || init() != 0)
                goto fail;
        u->initialized = true;
        return u;
fail:
        log_info("fgpu: no per-process GPU utilization from %s; the hook estimates on its own", nvml_path);
        gpu_util_close(u);
        return NULL;
}

void gpu_util_close(struct gpu_util *u)
{
        if (!u)
                return;
        if (u->lib) {
                nvml_void_fn shutdown = (nvml_void_fn)dlsym(u->lib, "nvmlShutdown");
                if (u->initialized && shutdown)
                        shutdown();
                dlclose(u->lib);
        }
        free(u);
}

unsigned gpu_util_container_percent(const nvmlProcessUtilizationSample_t *s, size_t n, const pid_t *pids, size_t npids)
{
        unsigned total = 0;

        for (size_t p = 0; p < npids; p++) {
                unsigned long long sum = 0, count = 0;
                for (size_t i = 0; i < n; i++) {
                        if (s[i].pid == (unsigned)pids[p]) {
                                sum += s[i].smUtil;
                                count++;
                        }
                }
                if (count)
                        total += (unsigned)(sum / count);
        }
        return total > 100 ? 100 : total;
}

/* The samples of GPU idx since the last read (none: an idle GPU). */
static void read_samples(struct gpu_util *u, int idx, struct device_samples *ds)
{
        nvmlDevice_t dev;
        unsigned int count = 0;
        nvmlReturn_t r;

        ds->read = true;
        if (u->handle((unsigned)idx, &dev) != 0)
                return;
        r = u->process_util(dev, NULL, &count, u->last_seen[idx]);
        if (r == NVML_ERROR_NOT_FOUND || (r != 0 && r != NVML_ERROR_INSUFFICIENT_SIZE) || count == 0)
                return;
        if (count > SAMPLES_MAX)
                count = SAMPLES_MAX;
        ds->s = xcalloc(count, sizeof(*ds->s));
        if (u->process_util(dev, ds->s, &count, u->last_seen[idx]) != 0)
                count = 0;
        ds->n = count;
        for (size_t i = 0; i < ds->n; i++)
                if (ds->s[i].timeStamp > u->last_seen[idx])
                        u->last_seen[idx] = ds->s[i].timeStamp;
}

static void update_kernel(struct gpu_util *u, const struct agent_ctx *ctx, const char *id,
                          struct device_samples *samples)
{
        struct container_config cfg = kernel_runtime_config(ctx);
        _cleanup_free_ char *dir = gpu_wiring_fgpu_dir(ctx, id);
        _cleanup_free_ char *region = xasprintf("%s/run/region", dir);
        _cleanup_free_ pid_t *pids = NULL;
        struct fgpu_region *r = NULL;
        int idx[FGPU_REGION_DEVICES];
        int n = gpu_wiring_devices(dir, idx, FGPU_REGION_DEVICES);
        size_t npids = 0;
        char why[256];

        if (n == 0 || container_pids(&cfg, id, &pids, &npids, NULL) < 0 ||
            fgpu_region_open(region, false, &r, why, sizeof(why)) < 0)
                return;
        for (int d = 0; d < n; d++) {
                struct device_samples *ds = &samples[idx[d]];
                if (!ds->read)
                        read_samples(u, idx[d], ds);
                fgpu_region_set_util(r, d, gpu_util_container_percent(ds->s, ds->n, pids, npids));
        }
        fgpu_region_close(r);
}

void gpu_util_round(struct gpu_util *u, const struct agent_ctx *ctx)
{
        _cleanup_free_ char *root = xasprintf("%s/fgpu", ctx->conf->state_dir);
        struct device_samples samples[FGPU_REGION_DEVICES] = { 0 };
        DIR *d = opendir(root);
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        update_kernel(u, ctx, e->d_name, samples);
        closedir(d);
        for (int i = 0; i < FGPU_REGION_DEVICES; i++)
                free(samples[i].s);
}
