/* fake.h - what the fake CUDA driver (fake_cuda.c) and the fake NVML
 * (fake_nvml.c) share (fake_common.c, fake_activity.c): the devices they
 * show, told by the environment, the bytes each device holds, a counter of
 * the calls of every exported function, and how busy launches keep the
 * devices.
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
 * line `pid symbol` for every call.  TESSERA_FAKE_CUDA_INDICES ("3,5")
 * says which of the node's devices this process's devices 0, 1, ... are
 * (default: the same numbers), so that the fake NVML of another process
 * (the agent's, which sees every device) files their work under them.
 *
 * Utilization (fake_activity.c): a launch is taken to keep its device
 * busy for FAKE_WAVE_NS per wave of its threads (SMs x 2048 threads to a
 * wave, a graph launch one wave); nothing runs.  Each process that
 * launches keeps, per device, the busy time of the last FAKE_PERIODS
 * periods of FAKE_PERIOD_NS in a memfd named FAKE_ACTIVITY_NAME, which the
 * fake NVML of any process finds through /proc (as a real NVML asks the
 * kernel driver) and turns into per-process samples: one per completed
 * period in which the process was busy (NVML lists only processes with
 * some utilization), its busy time over the period, at most 100 %.  Each
 * process has the device to itself: the sum over processes may pass 100. */
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
        int node_index[FAKE_MAX_DEVICES]; /* TESSERA_FAKE_CUDA_INDICES */
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

/* ---- utilization (fake_activity.c) ---- */

#define FAKE_WAVE_NS        10000ll /* a wave of a launch keeps its device busy 10 us */
#define FAKE_THREADS_PER_SM 2048
#define FAKE_PERIOD_NS      (100 * 1000 * 1000ll) /* one sample per 100 ms */
#define FAKE_PERIODS        32                    /* kept: 3.2 s */
#define FAKE_ACTIVITY_NAME  "tessera-fake-cuda-activity"
#define FAKE_ACTIVITY_MAGIC 0x41434654u /* "TFCA" */

/* A process's launches, by the node's device index: ring[d][p % FAKE_PERIODS]
 * holds period p (its low 32 bits, in the high half) and the busy
 * nanoseconds in it (low half, saturating).  Periods count FAKE_PERIOD_NS
 * of CLOCK_REALTIME(_COARSE), shared by every container of a node. */
struct fake_activity {
        uint32_t magic;
        uint32_t size; /* of this struct */
        uint64_t ring[FAKE_MAX_DEVICES][FAKE_PERIODS];
};

/* One process's utilization of a device over a period. */
struct fake_sample {
        unsigned pid;
        unsigned long long time_us; /* the end of the period */
        unsigned percent;
};

/* Busy time of a launch of threads threads on a device of sm_count SMs:
 * one FAKE_WAVE_NS per wave begun. */
int64_t fake_launch_ns(uint64_t threads, int sm_count);
/* Add busy ns at time now_ns to device node of a. */
void fake_activity_add(struct fake_activity *a, int node, int64_t now_ns, int64_t ns);
/* Record a launch of threads threads on this process's device dev (0 for
 * a graph: one wave), at the current time, in this process's memfd. */
void fake_activity_launch(int dev, uint64_t threads);
/* The samples of a (process pid) for device node: its busy periods among
 * those kept that were complete at now_ns and end after after_us, oldest
 * first, at most max of them (NULL out: only counted); how many. */
size_t fake_activity_samples(const struct fake_activity *a, unsigned pid, int node, unsigned long long after_us,
                             int64_t now_ns, struct fake_sample *out, size_t max);
/* Call fn for every process this one can see in /proc that holds an
 * activity memfd (its pid there, its record mapped read-only). */
void fake_activity_each(void (*fn)(unsigned pid, const struct fake_activity *a, void *data), void *data);
/* CLOCK_REALTIME_COARSE in ns: the periods' clock. */
int64_t fake_now_ns(void);

#endif
