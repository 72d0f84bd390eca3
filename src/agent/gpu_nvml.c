/* gpu_nvml.c - the `cuda` device plugin: NVIDIA GPUs as NVML describes
 * them, with libnvidia-ml loaded through dlopen so that the agent runs,
 * and offers no cuda slots, on nodes without the driver.
 *
 * Only the few NVML calls below are used, with NVML's ABI from
 * common/nvml_abi.h (nvml.h is not needed to build).  Every symbol is looked up before use;
 * a missing one makes the plugin report no GPUs rather than fail. */
#include "common/compat.h"

#include <dlfcn.h>

#include "common/log.h"
#include "common/nvml_abi.h"
#include "agent/gpu.h"

struct nvml {
        void *lib;
        nvml_void_fn init;
        nvml_void_fn shutdown;
        nvml_count_fn count;
        nvml_handle_fn handle;
        nvml_string_fn name;
        nvml_string_fn uuid;
        nvml_memory_fn memory;
        nvml_pci_fn pci;
        nvml_uint_fn minor;
        nvml_error_string_fn error;
};

static bool nvml_load(const char *path, struct nvml *n)
{
        *n = (struct nvml){ 0 };
        n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!n->lib)
                return false;
        n->init = (nvml_void_fn)dlsym(n->lib, "nvmlInit_v2");
        n->shutdown = (nvml_void_fn)dlsym(n->lib, "nvmlShutdown");
        n->count = (nvml_count_fn)dlsym(n->lib, "nvmlDeviceGetCount_v2");
        n->handle = (nvml_handle_fn)dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
        n->name = (nvml_string_fn)dlsym(n->lib, "nvmlDeviceGetName");
        n->uuid = (nvml_string_fn)dlsym(n->lib, "nvmlDeviceGetUUID");
        n->memory = (nvml_memory_fn)dlsym(n->lib, "nvmlDeviceGetMemoryInfo");
        n->pci = (nvml_pci_fn)dlsym(n->lib, "nvmlDeviceGetPciInfo_v3");
        n->minor = (nvml_uint_fn)dlsym(n->lib, "nvmlDeviceGetMinorNumber");
        n->error = (nvml_error_string_fn)dlsym(n->lib, "nvmlErrorString");
        if (!n->init || !n->shutdown || !n->count || !n->handle || !n->name || !n->uuid || !n->memory) {
                log_warn("cuda: %s lacks the NVML calls the agent needs; no GPUs offered", path);
                dlclose(n->lib);
                n->lib = NULL;
                return false;
        }
        return true;
}

static const char *nvml_error(const struct nvml *n, nvmlReturn_t r)
{
        const char *s = n->error ? n->error(r) : NULL;
        return s ? s : "NVML error";
}

int gpu_nvml_probe(const char *path, struct gpu_info **ret, size_t *ret_n)
{
        struct nvml n;
        unsigned int count = 0;
        nvmlReturn_t r;

        *ret = NULL;
        *ret_n = 0;
        if (!nvml_load(path, &n)) {
                log_info("cuda: no NVIDIA driver (%s not loadable): no cuda slots", path);
                return 0;
        }
        if ((r = n.init()) != 0) {
                log_warn("cuda: nvmlInit: %s; no GPUs offered", nvml_error(&n, r));
                dlclose(n.lib);
                return 0;
        }
        if ((r = n.count(&count)) != 0)
                log_warn("cuda: counting GPUs: %s", nvml_error(&n, r));
        struct gpu_info *g = count ? xcalloc(count, sizeof(*g)) : NULL;
        size_t k = 0;
        for (unsigned int i = 0; i < count; i++) {
                nvmlDevice_t d;
                nvmlMemory_t mem = { 0 };
                nvmlPciInfo_t pci = { 0 };
                unsigned int minor = i;
                if (n.handle(i, &d) != 0 || n.memory(d, &mem) != 0) {
                        log_warn("cuda: GPU %u does not answer; left out", i);
                        continue;
                }
                g[k].index = (int)i;
                g[k].memory = mem.total;
                if (n.name(d, g[k].model, sizeof(g[k].model)) != 0)
                        snprintf(g[k].model, sizeof(g[k].model), "NVIDIA GPU");
                if (n.uuid(d, g[k].uuid, sizeof(g[k].uuid)) != 0)
                        snprintf(g[k].uuid, sizeof(g[k].uuid), "GPU-%u", i);
                if (n.pci && n.pci(d, &pci) == 0)
                        snprintf(g[k].pci_bus_id, sizeof(g[k].pci_bus_id), "%s", pci.busId);
                if (n.minor && n.minor(d, &minor) == 0)
                        g[k].minor = (int)minor;
                else
                        g[k].minor = (int)i;
                k++;
        }
        n.shutdown();
        dlclose(n.lib);
        *ret = g;
        *ret_n = k;
        return 0;
}
