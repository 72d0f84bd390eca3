/* gpu_util.h - each fGPU container's measured share of its GPUs' time,
 * written into the container's accounting region for the hook's SM
 * limiter (gpu_util.c).
 *
 * NVML samples the utilization of each process on a GPU; the agent, which
 * knows the processes of each container (its cgroup), sums them per
 * container and device about once a second.  The hook prefers this
 * measurement (closed loop on the container's own use) while it is fresh,
 * and otherwise estimates from the whole device's utilization. */
#ifndef TESS_AGENT_GPU_UTIL_H
#define TESS_AGENT_GPU_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "common/nvml_abi.h"
#include "agent/agent.h"

struct gpu_util;

/* NVML at path, if it can sample per-process utilization; NULL if not
 * (no driver, or an NVML without nvmlDeviceGetProcessUtilization). */
struct gpu_util *gpu_util_open(const char *nvml_path);
void gpu_util_close(struct gpu_util *u);

/* One round: the region of every fGPU kernel of this node gets the
 * measured utilization of each of its GPUs. */
void gpu_util_round(struct gpu_util *u, const struct agent_ctx *ctx);

/* A container's percent of a GPU: the mean of each of its processes'
 * samples (smUtil), summed over its processes (at most 100). */
unsigned gpu_util_container_percent(const nvmlProcessUtilizationSample_t *s, size_t n, const pid_t *pids, size_t npids);

#endif
