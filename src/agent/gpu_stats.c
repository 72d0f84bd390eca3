/* gpu_stats.c - see gpu_stats.h.  NVML is loaded with dlopen, as in
 * gpu_nvml.c, and kept open for the agent's life; the calls used are
 * thread-safe, so the reporter asks while other threads work. */
#include "common/compat.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/nvml_abi.h"
#include "fakecuda/fake.h"
#include "agent/gpu.h"
#include "agent/gpu_stats.h"
#include "agent/gpu_wiring.h"

struct gpu_stats {
        void *lib;
        bool initialized; /* nvmlInit succeeded: nvmlShutdown is owed */
        nvml_handle_fn handle;
        nvml_memory_fn memory;
        nvml_utilization_fn utilization; /* NULL: utilization is not reported */
};

struct gpu_stats *gpu_stats_open(const char *nvml_path)
{
        struct gpu_stats *s = xcalloc(1, sizeof(*s));
        nvml_void_fn init;

        s->lib = dlopen(nvml_path, RTLD_NOW | RTLD_LOCAL);
        if (!s->lib)
                goto fail;
        init = (nvml_void_fn)dlsym(s->lib, "nvmlInit_v2");
        s->handle = (nvml_handle_fn)dlsym(s->lib, "nvmlDeviceGetHandleByIndex_v2");
        s->memory = (nvml_memory_fn)dlsym(s->lib, "nvmlDeviceGetMemoryInfo");
        s->utilization = (nvml_utilization_fn)dlsym(s->lib, "nvmlDeviceGetUtilizationRates");
        if (!init || !s->handle || !s->memory || init() != NVML_SUCCESS)
                goto fail;
        s->initialized = true;
        return s;
fail:
        log_info("cuda: no GPU usage from %s; whole-GPU kernels report no cuda_mem", nvml_path);
        gpu_stats_close(s);
        return NULL;
}

void gpu_stats_close(struct gpu_stats *s)
{
        if (!s)
                return;
        if (s->lib) {
                nvml_void_fn shutdown = (nvml_void_fn)dlsym(s->lib, "nvmlShutdown");
                if (s->initialized && shutdown)
                        shutdown();
                dlclose(s->lib);
        }
        free(s);
}

/* NVML's numbers for GPU idx (NVML index), added to the sums. */
static bool add_nvml(const struct gpu_stats *s, int idx, uint64_t *used, uint64_t *total, int *util)
{
        nvmlDevice_t dev;
        nvmlMemory_t mem;
        nvmlUtilization_t rates;

        if (!s || s->handle((unsigned)idx, &dev) != NVML_SUCCESS || s->memory(dev, &mem) != NVML_SUCCESS)
                return false;
        *used += mem.used;
        *total += mem.total;
        if (*util >= 0 && s->utilization && s->utilization(dev, &rates) == NVML_SUCCESS)
                *util += (int)rates.gpu;
        else
                *util = -1;
        return true;
}

static const struct gpu_info *mock_gpu(const struct agent_devices *d, int idx)
{
        for (size_t i = 0; i < d->ngpu; i++)
                if (d->gpu[i].index == idx)
                        return &d->gpu[i];
        return NULL;
}

/* The fake driver's state file of the kernel in dir: ordinal d of the
 * container holds state[d] bytes of its GPU idx[d] (at most its memory,
 * as the fake NVML says).  Utilization 0: the fake NVML's answer. */
static bool add_mock(const struct agent_devices *dev, const char *dir, const int *idx, int n, uint64_t *used,
                     uint64_t *total)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, GPU_WIRING_FAKE_STATE_FILE);
        size_t size = sizeof(uint64_t) * FAKE_MAX_DEVICES;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        uint64_t *state;

        if (fd < 0)
                return false;
        if (fstat(fd, &st) < 0 || (size_t)st.st_size < size) {
                close(fd);
                return false;
        }
        state = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (state == MAP_FAILED)
                return false;
        bool ok = n <= FAKE_MAX_DEVICES;
        for (int d = 0; ok && d < n; d++) {
                const struct gpu_info *g = mock_gpu(dev, idx[d]);
                uint64_t u = __atomic_load_n(&state[d], __ATOMIC_RELAXED);
                ok = g != NULL;
                if (ok) {
                        *used += u < g->memory ? u : g->memory;
                        *total += g->memory;
                }
        }
        munmap(state, size);
        return ok;
}

bool gpu_stats_kernel(const struct agent_ctx *ctx, const struct gpu_stats *s, const char *id, uint64_t *used,
                      uint64_t *total, int *devices, int *util)
{
        _cleanup_free_ char *dir = gpu_wiring_gpu_dir(ctx, id);
        int idx[ALLOC_GPUS_MAX];
        int n = gpu_wiring_devices(dir, idx, ALLOC_GPUS_MAX);
        uint64_t u = 0, t = 0;
        int busy = 0;

        if (n == 0)
                return false;
        if (streq(ctx->devices->gpu_plugin, "mock")) {
                if (!add_mock(ctx->devices, dir, idx, n, &u, &t))
                        return false;
        } else {
                for (int d = 0; d < n; d++)
                        if (!add_nvml(s, idx[d], &u, &t, &busy))
                                return false;
        }
        *used = u;
        *total = t;
        *devices = n;
        *util = busy;
        return true;
}
