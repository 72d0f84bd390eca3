/* gpu_wiring.h - what a container needs for the GPUs its kernel holds
 * (gpu_wiring.c): device nodes, driver libraries, for GPU fractions the
 * fGPU hook (libtessera-fgpu.so), its configuration and its shared region,
 * and for whole GPUs the list the agent measures them by (gpu_stats.c). */
#ifndef TESS_AGENT_GPU_WIRING_H
#define TESS_AGENT_GPU_WIRING_H

#include <stddef.h>

#include "agent/alloc.h"
#include "agent/container/container.h"

#define GPU_LIB_DIR  "/opt/tessera/nvidia/lib" /* driver libraries, real or mock */
#define FGPU_DIR     "/opt/tessera/fgpu"       /* the hook, read-only */
#define FGPU_RUN_DIR "/opt/tessera/fgpu/run"   /* the shared region, read-write */
#define FGPU_CONFIG  "/etc/tessera/fgpu.conf"  /* the hook's configuration, read-only */
#define GPU_FAKE_STATE "/opt/tessera/nvidia/fake-cuda-state" /* mock whole GPUs: the fake driver's memory in use */
#define GPU_WIRING_DEVICES_FILE "devices" /* in a kernel's fGPU or GPU directory: its GPUs' NVML indices */
#define GPU_WIRING_FAKE_STATE_FILE "fake-cuda-state" /* in a mock whole-GPU kernel's GPU directory */

struct gpu_wiring {
        struct container_mount mounts[12];
        size_t nmounts;
        struct container_device devices[24];
        size_t ndevices;
        char *env[16]; /* "KEY=VALUE" */
        size_t nenv;
        char *owned[32]; /* strings the arrays point to */
        size_t nowned;
};

/* What kernel id's container needs for the GPUs in a (nothing when it
 * holds none).  Writes state_dir/fgpu/<id>/ for GPU fractions. */
int gpu_wiring_prepare(const struct agent_ctx *ctx, const char *id, const struct kernel_alloc *a,
                       struct gpu_wiring *ret, struct tess_error **err);
void gpu_wiring_release(struct gpu_wiring *w);
/* The agent's directory for kernel id's fGPU config, region and devices
 * (caller frees). */
char *gpu_wiring_fgpu_dir(const struct agent_ctx *ctx, const char *id);
/* The agent's directory for whole-GPU kernel id's devices file and, with
 * mock GPUs, the fake driver's state file that all its processes share
 * (TESSERA_FAKE_CUDA_STATE, src/fakecuda/fake.h); caller frees. */
char *gpu_wiring_gpu_dir(const struct agent_ctx *ctx, const char *id);
/* The GPUs in dir's devices file (NVML indices, the mock plugin's own for
 * mock GPUs) in the container's ordinal order, at most max; how many. */
int gpu_wiring_devices(const char *dir, int *idx, int max);
/* The GPU memory a fractional kernel's processes hold, and its limit,
 * summed over its GPUs (from its region and config), how many GPUs, and
 * the sum of their utilization by its processes as the agent last measured
 * it (gpu_util.c; -1 when not measured lately); false if it holds no
 * fraction. */
bool gpu_wiring_usage(const struct agent_ctx *ctx, const char *id, uint64_t *used, uint64_t *limit, int *devices,
                      int *util);
/* The mock GPUs' fake NVML: mock_nvml_library, else
 * libtessera-fake-nvml.so beside tessera (caller frees). */
char *gpu_wiring_mock_nvml(const struct agent_conf *conf);
/* At the agent's start: the files its GPUs' kernels will need are there
 * (mock GPUs: the fake driver and NVML; fractional GPUs: the fGPU
 * library), so that a node does not offer GPUs whose every kernel would
 * fail.  -ENOENT naming the missing file. */
int gpu_wiring_check(const struct agent_conf *conf, const struct agent_devices *d, struct tess_error **err);
/* Remove state_dir/fgpu/<id>/ and state_dir/gpu/<id>/. */
void gpu_wiring_remove(const struct agent_ctx *ctx, const char *id);

/* The fraction of GPU memory and SM time a share gives (fgpu.md's
 * mapping): floor((memory - reserved) x f) aligned down to 1 MiB, and
 * 100 x f percent (at least 1). */
uint64_t gpu_share_memory(uint64_t memory, uint64_t reserved, int64_t share, int64_t per_gpu);
unsigned gpu_share_sm(int64_t share, int64_t per_gpu);

#endif
