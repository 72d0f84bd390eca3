/* kernel_runtime.h - one kernel's image and container (kernel_runtime.c):
 * the blocking work the agent's worker threads do.  The container of a
 * kernel is named by the kernel's id. */
#ifndef TESS_AGENT_KERNEL_RUNTIME_H
#define TESS_AGENT_KERNEL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent/container/container.h"

/* bytes of output sent to the manager at the end: at most 3 times as much
 * once invalid UTF-8 is replaced, within the manager's longest JSON string */
#define KERNEL_LOG_TAIL (16 * 1024)

struct kernel_exit {
        int code;  /* -1: never ran or unknown */
        bool oom;  /* the memory limit's OOM killer fired */
        char *log; /* the end of its output, valid UTF-8 (owned; may be NULL) */
        /* its final usage counters, read as it ended, for the manager's
         * measured use (src/manager/usage/usage_measure.h): since its last
         * heartbeat it may have used more */
        bool measured;
        uint64_t cpu_ns, mem, io_read, io_write;
};

/* Where this agent's containers live (its state_dir, runc, bridge). */
struct container_config kernel_runtime_config(const struct agent_ctx *ctx);

/* Make the kernel's image available and run its container; `progress`
 * is told "preparing", "pulling" (only when the image must be fetched)
 * and "creating" as it goes.  *container_id is set on success, and
 * *ret_image to {"digest", "size", "labels"} of the image (caller owns). */
int kernel_runtime_start(struct agent_ctx *ctx, const char *id, const json_t *spec,
                         void (*progress)(void *data, const char *kind), void *data, char *container_id, size_t len,
                         json_t **ret_image, struct tess_error **err);
/* Stop the container (SIGTERM, then SIGKILL after a grace period) and
 * wait for it; its exit in *ret.  A container that is not there gives
 * code -1 and success. */
int kernel_runtime_stop(struct agent_ctx *ctx, const char *id, struct kernel_exit *ret, struct tess_error **err);
/* The container's usage counters: cpu_ns, mem bytes (and the limit),
 * io and network bytes; false when it is not running. */
struct kernel_usage {
        uint64_t cpu_ns, mem, mem_limit, io_read, io_write, net_rx, net_tx;
        bool has_gpu_mem; /* a GPU fraction: what its processes allocated, of what they may;
                             whole GPUs: the devices' memory used, of all of it (gpu_stats.h) */
        uint64_t gpu_mem, gpu_mem_limit;
        int gpu_devices; /* how many GPUs the fraction or the whole GPUs span */
        int gpu_util;    /* percent of them busy, summed (the agent's NVML measurement); -1: none */
};
bool kernel_runtime_usage(struct agent_ctx *ctx, const char *id, struct kernel_usage *ret);

/* The last max bytes of the container's output as UTF-8 (invalid bytes
 * become U+FFFD), for the manager's JSON; NULL if there is none. */
char *kernel_runtime_log(struct agent_ctx *ctx, const char *id, size_t max);

/* Has the container exited (its monitor recorded how)? */
bool kernel_runtime_exited(struct agent_ctx *ctx, const char *id, struct kernel_exit *ret);
/* Is there a container for this kernel (running or exited)? */
bool kernel_runtime_exists(struct agent_ctx *ctx, const char *id);
/* Remove what is left of the container: rootfs, logs, state. */
void kernel_runtime_remove(struct agent_ctx *ctx, const char *id);

#endif
