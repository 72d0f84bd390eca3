/* hook.h - what the hook's files share: the process's state, the real
 * functions, and the table of wrapped symbols. */
#ifndef TESS_FGPU_HOOK_H
#define TESS_FGPU_HOOK_H

#include "common/cuda_abi.h" /* the CUDA driver's ABI (cuda.h is not needed to build) */

#include "common/nvml_abi.h" /* NVML with NVIDIA's ABI (nvml.h is not needed to build) */
#include "fgpu/fgpu.h"
#include "fgpu/region.h"

/* One wrapped symbol: its name, our wrapper, the real function. */
struct fgpu_symbol {
        const char *name;
        void *wrapper;
        void **real;
        bool nvml;
};
/* The tables of mem_hooks.c, launch_hooks.c, nvml_hooks.c, procaddr.c;
 * each ends with a zero row. */
extern struct fgpu_symbol fgpu_mem_symbols[], fgpu_launch_symbols[], fgpu_nvml_symbols[], fgpu_procaddr_symbols[];
extern struct fgpu_symbol *const fgpu_symbol_tables[];

struct fgpu_state {
        struct fgpu_config config;
        bool active;                /* some limit, or closed: the wrappers act */
        void *cuda, *nvml;          /* the real libraries */
        struct fgpu_region *region; /* NULL: not available (then allocations fail closed) */
        char region_error[256];
};
extern struct fgpu_state fgpu;

/* Initialise once (config, real libraries, region); cheap afterwards. */
void fgpu_init(void);
/* The real dlsym (not ours). */
void *fgpu_real_dlsym(void *handle, const char *name);
/* Our wrapper for a symbol name (exact), or NULL. */
struct fgpu_symbol *fgpu_symbol_find(const char *name);
/* Our wrapper whose real function is at addr, or NULL. */
struct fgpu_symbol *fgpu_symbol_by_real(void *addr);

/* The current context's device, or -1. */
int fgpu_current_device(void);
/* The memory limit of device d (0: none). */
uint64_t fgpu_memory_limit(int d);

/* Allocation table (state.c): what was charged for a handle. */
enum fgpu_alloc_kind {
        FGPU_PTR = 1,
        FGPU_ARRAY,
        FGPU_HANDLE
};
void fgpu_alloc_add(enum fgpu_alloc_kind kind, uint64_t key, int dev, uint64_t size);
/* Remove it; false if unknown (nothing was charged). */
bool fgpu_alloc_remove(enum fgpu_alloc_kind kind, uint64_t key, int *dev, uint64_t *size);

/* Charge bytes on device d before allocating: CUDA_SUCCESS or
 * CUDA_ERROR_OUT_OF_MEMORY (fail closed when accounting is impossible). */
CUresult fgpu_charge(int d, uint64_t bytes);
void fgpu_refund(int d, uint64_t bytes);

/* The real NVML's index of a device, or -1. */
int fgpu_nvml_index(nvmlDevice_t device);

#endif
