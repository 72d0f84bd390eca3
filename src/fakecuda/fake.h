/* fake.h - what the fake CUDA driver (fake_cuda.c) and the fake NVML
 * (fake_nvml.c) share (fake_common.c): the devices they show, told by the
 * environment, the bytes each device holds, and a counter of the calls of
 * every exported function.
 *
 * The agent's mock GPU plugin binds the two libraries into a container in
 * place of libcuda.so.1 and libnvidia-ml.so.1 and sets
 *
 *   TESSERA_FAKE_CUDA_DEVICES   how many devices (default 1, at most 16)
 *   TESSERA_FAKE_CUDA_MEMORY    bytes of each (default 16 GiB; k/m/g/t suffix)
 *   TESSERA_FAKE_CUDA_SM_COUNT  multiprocessors of each (default 108)
 *   TESSERA_FAKE_CUDA_MODEL     the name (default "Tessera Fake GPU")
 *
 * Tests may also set TESSERA_FAKE_CUDA_STATE, a file (made on demand) that
 * holds each device's bytes in use for every process that names it, as a
 * real GPU's memory is one for all its processes; without it each process
 * has devices of its own.  TESSERA_FAKE_CUDA_LOG names a file that gets a
 * line `pid symbol` for every call. */
#ifndef TESS_FAKE_H
#define TESS_FAKE_H

#include <stdbool.h>
#include <stdint.h>

#define FAKE_MAX_DEVICES 16
#define FAKE_EXPORT      __attribute__((visibility("default")))

struct fake_config {
        int devices;
        uint64_t memory;
        int sm_count;
        char model[96];
};

/* The environment's devices (read once). */
const struct fake_config *fake_config(void);

/* Take bytes of device d's memory: false when the device has not that much
 * left (then nothing is taken). */
bool fake_mem_take(int d, uint64_t bytes);
void fake_mem_give(int d, uint64_t bytes);
/* Bytes in use on device d: by this process, and by every process sharing
 * the state file (this process's alone without one). */
uint64_t fake_mem_used_here(int d);
uint64_t fake_mem_used_device(int d);

/* Count a call of the exported function `name` (a string literal). */
void fake_count(const char *name);
/* Calls of name so far in this process. */
unsigned long fake_calls(const char *name);

#define CALLED() fake_count(__func__)

#endif
