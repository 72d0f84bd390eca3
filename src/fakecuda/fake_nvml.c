/* fake_nvml.c - libtessera-fake-nvml.so, NVML for the fake driver's
 * devices (fake_cuda.c, configured by the same environment: fake.h).
 * Memory used is what the device holds: for every process sharing
 * TESSERA_FAKE_CUDA_STATE, else what the fake driver loaded into this
 * process holds (0 when none is), found by its soname even when it was
 * loaded RTLD_LOCAL.  Per-process utilization (nvmlDeviceGetProcessUtilization)
 * is what the fake driver's launches in the processes this one can see
 * kept the device busy (fake_activity.c); the device's own utilization is
 * 0 and no process is listed as running. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/nvml_abi.h"
#include "fakecuda/fake.h"

struct nvmlDevice_st {
        int index;
};

#define API FAKE_EXPORT nvmlReturn_t

static struct nvmlDevice_st devices[FAKE_MAX_DEVICES];
static int init_count;

#define NEED_INIT()                                                      \
        do {                                                             \
                CALLED();                                                \
                if (__atomic_load_n(&init_count, __ATOMIC_ACQUIRE) <= 0) \
                        return NVML_ERROR_UNINITIALIZED;                 \
        } while (0)

static int device_index(nvmlDevice_t d)
{
        if (d < devices || d >= devices + fake_config()->devices)
                return -1;
        return (int)(d - devices);
}

static nvmlReturn_t init(void)
{
        for (int i = 0; i < FAKE_MAX_DEVICES; i++)
                devices[i].index = i;
        __atomic_add_fetch(&init_count, 1, __ATOMIC_ACQ_REL);
        return NVML_SUCCESS;
}

API nvmlInit_v2(void)
{
        CALLED();
        return init();
}

API nvmlInit(void)
{
        CALLED();
        return init();
}

API nvmlInitWithFlags(unsigned int flags)
{
        CALLED();
        (void)flags;
        return init();
}

API nvmlShutdown(void)
{
        NEED_INIT();
        __atomic_sub_fetch(&init_count, 1, __ATOMIC_ACQ_REL);
        return NVML_SUCCESS;
}

FAKE_EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
        CALLED();
        switch (r) {
        case NVML_SUCCESS:
                return "Success";
        case NVML_ERROR_UNINITIALIZED:
                return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT:
                return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED:
                return "Not Supported";
        case NVML_ERROR_NOT_FOUND:
                return "Not Found";
        case NVML_ERROR_INSUFFICIENT_SIZE:
                return "Insufficient Size";
        default:
                return "Unknown Error";
        }
}

API nvmlSystemGetDriverVersion(char *version, unsigned int len)
{
        NEED_INIT();
        if (!version || len == 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        snprintf(version, len, "570.0.0-tessera-fake");
        return NVML_SUCCESS;
}

API nvmlSystemGetCudaDriverVersion(int *version)
{
        NEED_INIT();
        if (!version)
                return NVML_ERROR_INVALID_ARGUMENT;
        *version = 12080;
        return NVML_SUCCESS;
}

API nvmlSystemGetCudaDriverVersion_v2(int *version)
{
        NEED_INIT();
        if (!version)
                return NVML_ERROR_INVALID_ARGUMENT;
        *version = 12080;
        return NVML_SUCCESS;
}

static nvmlReturn_t count(unsigned int *n)
{
        if (!n)
                return NVML_ERROR_INVALID_ARGUMENT;
        *n = (unsigned)fake_config()->devices;
        return NVML_SUCCESS;
}

API nvmlDeviceGetCount_v2(unsigned int *n)
{
        NEED_INIT();
        return count(n);
}

API nvmlDeviceGetCount(unsigned int *n)
{
        NEED_INIT();
        return count(n);
}

static nvmlReturn_t handle(unsigned int i, nvmlDevice_t *d)
{
        if (!d || i >= (unsigned)fake_config()->devices)
                return NVML_ERROR_INVALID_ARGUMENT;
        *d = &devices[i];
        return NVML_SUCCESS;
}

API nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
        NEED_INIT();
        return handle(i, d);
}

API nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d)
{
        NEED_INIT();
        return handle(i, d);
}

API nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *index)
{
        NEED_INIT();
        int i = device_index(d);
        if (i < 0 || !index)
                return NVML_ERROR_INVALID_ARGUMENT;
        *index = (unsigned)i;
        return NVML_SUCCESS;
}

API nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor)
{
        NEED_INIT();
        int i = device_index(d);
        if (i < 0 || !minor)
                return NVML_ERROR_INVALID_ARGUMENT;
        *minor = (unsigned)i;
        return NVML_SUCCESS;
}

API nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
        NEED_INIT();
        if (device_index(d) < 0 || !name || len == 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (strlen(fake_config()->model) >= len)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        snprintf(name, len, "%s", fake_config()->model);
        return NVML_SUCCESS;
}

API nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len)
{
        NEED_INIT();
        int i = device_index(d);
        if (i < 0 || !uuid || len == 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (len < 41)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        snprintf(uuid, len, "GPU-7e55e7a0-fa4e-4000-8000-%012x", (unsigned)i);
        return NVML_SUCCESS;
}

API nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
        NEED_INIT();
        int i = device_index(d);
        if (i < 0 || !pci)
                return NVML_ERROR_INVALID_ARGUMENT;
        memset(pci, 0, sizeof(*pci));
        pci->bus = (unsigned)i + 1;
        pci->pciDeviceId = 0x233010deu;
        snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", (unsigned)(i + 1) & 0xffu);
        snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", (unsigned)(i + 1) & 0xffu);
        return NVML_SUCCESS;
}

/* Bytes in use on device i: the shared state's, else the fake driver's in this process. */
static unsigned long long used_of(int i)
{
        static unsigned long long (*driver_used)(int);
        uint64_t u = fake_mem_used_device(i);
        if (u)
                return u;
        unsigned long long (*f)(int) = __atomic_load_n(&driver_used, __ATOMIC_ACQUIRE);
        if (!f) {
                f = (unsigned long long (*)(int))dlsym(RTLD_DEFAULT, "tessera_fake_cuda_device_used");
                /* loaded with RTLD_LOCAL (ctypes, the CUDA runtime): found by its soname */
                void *h = f ? NULL : dlopen("libtessera-fake-cuda.so", RTLD_LAZY | RTLD_NOLOAD);
                if (h) {
                        f = (unsigned long long (*)(int))dlsym(h, "tessera_fake_cuda_device_used");
                        dlclose(h);
                }
                __atomic_store_n(&driver_used, f, __ATOMIC_RELEASE);
        }
        return f ? f(i) : 0;
}

API nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *mem)
{
        NEED_INIT();
        int i = device_index(d);
        if (i < 0 || !mem)
                return NVML_ERROR_INVALID_ARGUMENT;
        unsigned long long total = fake_config()->memory, used = used_of(i);
        mem->total = total;
        mem->used = used < total ? used : total;
        mem->free = total - mem->used;
        return NVML_SUCCESS;
}

API nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *mem)
{
        NEED_INIT();
        int i = device_index(d);
        if (i < 0 || !mem)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (mem->version != NVML_MEMORY_V2)
                return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        unsigned long long total = fake_config()->memory, used = used_of(i);
        mem->total = total;
        mem->reserved = 0;
        mem->used = used < total ? used : total;
        mem->free = total - mem->used;
        return NVML_SUCCESS;
}

API nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
        NEED_INIT();
        if (device_index(d) < 0 || !u)
                return NVML_ERROR_INVALID_ARGUMENT;
        u->gpu = 0;
        u->memory = 0;
        return NVML_SUCCESS;
}

API nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *temp)
{
        NEED_INIT();
        (void)sensor;
        if (device_index(d) < 0 || !temp)
                return NVML_ERROR_INVALID_ARGUMENT;
        *temp = 40;
        return NVML_SUCCESS;
}

API nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
        NEED_INIT();
        if (device_index(d) < 0 || !mw)
                return NVML_ERROR_INVALID_ARGUMENT;
        *mw = 60000;
        return NVML_SUCCESS;
}

/* No processes are listed: *count = 0. */
API nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, void *infos)
{
        NEED_INIT();
        (void)infos;
        if (device_index(d) < 0 || !count)
                return NVML_ERROR_INVALID_ARGUMENT;
        *count = 0;
        return NVML_SUCCESS;
}

/* The samples one call gathers. */
struct gather {
        int node; /* the node's device */
        unsigned long long after;
        int64_t now;
        nvmlProcessUtilizationSample_t *out;
        unsigned n, max;
};

static void gather_process(unsigned pid, const struct fake_activity *a, void *data)
{
        struct gather *g = data;
        struct fake_sample s[FAKE_PERIODS];
        size_t n = fake_activity_samples(a, pid, g->node, g->after, g->now, s, FAKE_PERIODS);

        for (size_t i = 0; i < n; i++, g->n++)
                if (g->out && g->n < g->max)
                        g->out[g->n] = (nvmlProcessUtilizationSample_t){ .pid = s[i].pid,
                                                                         .timeStamp = s[i].time_us,
                                                                         .smUtil = s[i].percent };
}

/* A caller asks how many samples (samples NULL), then for them: the second
 * call, for the same device and time, sees the periods the first saw. */
static pthread_mutex_t asked_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
        int dev;
        unsigned long long after;
        int64_t now;
} asked = { -1, 0, 0 };

API nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *samples, unsigned int *count,
                                    unsigned long long last)
{
        NEED_INIT();
        int i = device_index(d);
        if (i < 0 || !count)
                return NVML_ERROR_INVALID_ARGUMENT;
        struct gather g = { .node = fake_config()->node_index[i],
                            .after = last,
                            .now = fake_now_ns(),
                            .out = samples,
                            .max = samples ? *count : 0 };
        pthread_mutex_lock(&asked_lock);
        if (!samples)
                asked.dev = i, asked.after = last, asked.now = g.now;
        else if (asked.dev == i && asked.after == last && g.now >= asked.now && g.now - asked.now < FAKE_PERIOD_NS * 10)
                g.now = asked.now;
        pthread_mutex_unlock(&asked_lock);
        fake_activity_each(gather_process, &g);
        *count = g.n;
        if (g.n == 0)
                return NVML_ERROR_NOT_FOUND;
        return !samples || g.n > g.max ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

FAKE_EXPORT unsigned long tessera_fake_nvml_calls(const char *name)
{
        return name ? fake_calls(name) : 0;
}
