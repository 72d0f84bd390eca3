/* alloc.h - each kernel's cores and GPU shares on this node (alloc.c). */
#ifndef TESS_AGENT_ALLOC_H
#define TESS_AGENT_ALLOC_H

#include <stdint.h>

#include "agent/agent.h"

#define ALLOC_CORES_MAX 1024
#define ALLOC_GPUS_MAX  16

struct gpu_share {
        int index;     /* into agent_devices.gpu */
        int64_t share; /* in the GPU slot's quanta; agent_devices.gpu_per_device is all of it */
};

struct kernel_alloc {
        int cores[ALLOC_CORES_MAX];
        int ncores;
        struct gpu_share gpus[ALLOC_GPUS_MAX];
        int ngpus;
};

/* Choose and record want_cores cores and want_gpu quanta of the GPU slot
 * for kernel id (what it already holds, if anything).  ENOSPC when the GPUs
 * cannot hold the request. */
int alloc_kernel(const struct agent_ctx *ctx, const char *id, int want_cores, int64_t want_gpu,
                 struct kernel_alloc *ret, struct tess_error **err);
/* Forget what kernel id holds. */
void alloc_release(const struct agent_ctx *ctx, const char *id);

#endif
