/* gpu.h - the GPUs a node offers, whichever plugin found them: `cuda`
 * (gpu_nvml.c, NVIDIA's NVML) or `mock` (devices.c, from the config). */
#ifndef TESS_AGENT_GPU_H
#define TESS_AGENT_GPU_H

#include <stddef.h>
#include <stdint.h>

struct gpu_info {
        int index;       /* the driver's ordinal (CUDA_VISIBLE_DEVICES order) */
        int minor;       /* /dev/nvidia<minor> */
        uint64_t memory; /* bytes */
        unsigned sm;     /* streaming multiprocessors; 0: not known */
        char model[96];
        char uuid[96];
        char pci_bus_id[32];
};

/* NVIDIA GPUs through the NVML library at path (dlopen).  No driver, or
 * NVML failing, is no GPUs and success (logged).  *ret: caller frees. */
int gpu_nvml_probe(const char *path, struct gpu_info **ret, size_t *ret_n);

#endif
