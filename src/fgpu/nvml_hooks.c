/* nvml_hooks.c - NVML's memory info of a limited device, the same view
 * as cuMemGetInfo's: total the limit, used the container's charges, free
 * the rest (never more than the device really has free).  NVML devices
 * are matched to CUDA ordinals by NVML's index (the container sees its
 * GPUs, in PCI order, as both). */
#include "common/compat.h"

#include "fgpu/hook.h"
#include "fgpu/mem_hooks.h"

nvmlReturn_t (*real_nvmlDeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t *);
nvmlReturn_t (*real_nvmlDeviceGetMemoryInfo_v2)(nvmlDevice_t, nvmlMemory_v2_t *);

FGPU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *mem)
{
        fgpu_init();
        if (!real_nvmlDeviceGetMemoryInfo)
                return NVML_ERROR_FUNCTION_NOT_FOUND;
        nvmlReturn_t r = real_nvmlDeviceGetMemoryInfo(device, mem);
        uint64_t f, t, u;
        if (r != 0 || !fgpu.active || !mem ||
            !fgpu_seen_memory(fgpu_nvml_index(device), mem->free, mem->total, &f, &t, &u))
                return r;
        mem->total = t;
        mem->used = u;
        mem->free = f;
        return r;
}

FGPU_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *mem)
{
        fgpu_init();
        if (!real_nvmlDeviceGetMemoryInfo_v2)
                return NVML_ERROR_FUNCTION_NOT_FOUND;
        nvmlReturn_t r = real_nvmlDeviceGetMemoryInfo_v2(device, mem);
        uint64_t f, t, u;
        if (r != 0 || !fgpu.active || !mem ||
            !fgpu_seen_memory(fgpu_nvml_index(device), mem->free, mem->total, &f, &t, &u))
                return r;
        mem->total = t;
        mem->reserved = 0;
        mem->used = u;
        mem->free = f;
        return r;
}

struct fgpu_symbol fgpu_nvml_symbols[] = {
        { "nvmlDeviceGetMemoryInfo", (void *)nvmlDeviceGetMemoryInfo, (void **)&real_nvmlDeviceGetMemoryInfo, true },
        { "nvmlDeviceGetMemoryInfo_v2", (void *)nvmlDeviceGetMemoryInfo_v2, (void **)&real_nvmlDeviceGetMemoryInfo_v2,
          true },
        { 0 },
};
