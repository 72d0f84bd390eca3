/* gpu_stats.h - what a kernel holding whole GPUs (cuda.device) uses of
 * them, for its lastStat's cuda_mem and cuda_util (gpu_stats.c).
 *
 * Nobody else uses a whole GPU, so the device's own numbers are the
 * kernel's: with the cuda plugin, NVML's nvmlDeviceGetMemoryInfo (used)
 * and nvmlDeviceGetUtilizationRates (gpu) of each GPU it holds, read when
 * asked.  With the mock plugin there is no NVML to ask: the bytes in use
 * are those of the fake driver's state file that all the container's
 * processes share (gpu_wiring.c), and utilization is 0, which is what the
 * fake NVML answers for every device (nothing runs on a fake GPU). */
#ifndef TESS_AGENT_GPU_STATS_H
#define TESS_AGENT_GPU_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/agent.h"

struct gpu_stats;

/* NVML at nvml_path for the cuda plugin's whole GPUs; NULL when it cannot
 * be loaded or lacks nvmlDeviceGetMemoryInfo (logged at info). */
struct gpu_stats *gpu_stats_open(const char *nvml_path);
void gpu_stats_close(struct gpu_stats *s);

/* Whole-GPU kernel id's use of its GPUs, summed over them: bytes used and
 * their memory, how many GPUs, and their utilization in percent (-1 when
 * not known).  s: the cuda plugin's NVML (NULL for mock GPUs).  False when
 * the kernel holds no whole GPU, or a GPU of it does not answer. */
bool gpu_stats_kernel(const struct agent_ctx *ctx, const struct gpu_stats *s, const char *id, uint64_t *used,
                      uint64_t *total, int *devices, int *util);

#endif
