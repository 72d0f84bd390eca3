/* fgpu.h - the inside of libtessera-fgpu.so, the CUDA driver hook that
 * gives a container a fraction of a GPU (docs/fgpu.md; the pinned
 * interface is ../shared/design/fgpu.md).
 *
 *   config.c     limits from the config file or the environment
 *   region.c     the accounting region all processes of a container share
 *   limiter.c    the container-wide SM-time limiter (token bucket + control)
 *   real.c       the real driver and NVML, and the dlsym interposition
 *   procaddr.c   cuGetProcAddress(_v2): the driver's choice, our wrapper
 *   mem_hooks.c  allocations charged and refunded, memory info
 *   launch_hooks.c  kernel and graph launches through the limiter
 *   nvml_hooks.c NVML's memory info
 *   state.c      the process's state: one initialisation, the allocation table
 *
 * The library never exits, never writes to stdout, and logs to stderr only
 * when TESSERA_FGPU_LOG is set.  It allocates with malloc and fails closed
 * (CUDA_ERROR_OUT_OF_MEMORY) when it cannot account. */
#ifndef TESS_FGPU_H
#define TESS_FGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FGPU_MAX_DEVICES 16
#define FGPU_EXPORT      __attribute__((visibility("default")))

/* ---- config.c ---- */

struct fgpu_config {
        bool memory_limited;               /* some device has a memory limit */
        bool sm_limited;                   /* some device has an SM limit */
        bool closed;                       /* malformed: every allocation fails */
        uint64_t memory[FGPU_MAX_DEVICES]; /* bytes; 0: no limit on that device */
        unsigned sm[FGPU_MAX_DEVICES];     /* percent; 0: no limit */
        char region[4096];                 /* "" : none configured */
        char error[256];                   /* why it is closed */
};

/* "4g", "512m", "1024k", "123" (binary units): false if malformed. */
bool fgpu_parse_size(const char *s, uint64_t *ret);
/* The config file's text (key = value lines, # comments). */
void fgpu_config_parse_file(const char *text, size_t len, struct fgpu_config *c);
/* From a getenv-like function (tests pass their own). */
void fgpu_config_from_env(const char *(*get)(const char *name), struct fgpu_config *c);
/* The process's configuration: /etc/tessera/fgpu.conf when it exists
 * (the agent's: authoritative, whatever the environment says), else the
 * file TESSERA_FGPU_CONFIG names, else the environment.  A file's region
 * wins over TESSERA_FGPU_REGION. */
void fgpu_config_load(struct fgpu_config *c);

/* ---- logging (state.c) ---- */

void fgpu_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
