/* nvml_abi.h - the subset of NVIDIA's NVML ABI that Tessera uses, so that
 * nothing needs nvml.h to build.
 *
 * It mirrors the public nvml.h ABI for the calls below: the same type
 * names, layouts and return code values, written from NVML's
 * documentation (no code is copied from NVIDIA).  Users: the agent's cuda
 * plugin and samplers (src/agent/gpu_nvml.c, gpu_util.c, gpu_stats.c),
 * the fGPU hook (src/fgpu/hook.h), the fake NVML (src/fakecuda/fake_nvml.c)
 * and the hook's test client (tests/fgpu/fgpu_client.c).  Every library
 * is loaded with dlopen or linked by name; these are only its types.
 *
 * Function pointer types are named nvml_<what>_fn after the calls they
 * fit; NVML's own symbols are looked up by name (dlsym). */
#ifndef TESS_COMMON_NVML_ABI_H
#define TESS_COMMON_NVML_ABI_H

typedef int nvmlReturn_t; /* an enum in nvml.h: the values below */
enum {
        NVML_SUCCESS = 0,
        NVML_ERROR_UNINITIALIZED = 1,
        NVML_ERROR_INVALID_ARGUMENT = 2,
        NVML_ERROR_NOT_SUPPORTED = 3,
        NVML_ERROR_NOT_FOUND = 6,
        NVML_ERROR_INSUFFICIENT_SIZE = 7,
        NVML_ERROR_FUNCTION_NOT_FOUND = 13,
        NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};

/* A device handle: opaque to callers (the fake NVML defines the struct). */
typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvmlDeviceGetMemoryInfo: bytes. */
typedef struct {
        unsigned long long total, free, used;
} nvmlMemory_t;

/* nvmlDeviceGetMemoryInfo_v2: version must be NVML_MEMORY_V2. */
typedef struct {
        unsigned int version;
        unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2 ((unsigned)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

/* nvmlDeviceGetUtilizationRates: percent of the last sample period. */
typedef struct {
        unsigned int gpu, memory;
} nvmlUtilization_t;

/* nvmlDeviceGetProcessUtilization: one process's sample. */
typedef struct {
        unsigned int pid;
        unsigned long long timeStamp; /* microseconds */
        unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

/* nvmlDeviceGetPciInfo_v3. */
typedef struct {
        char busIdLegacy[16];
        unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
        char busId[32];
} nvmlPciInfo_t;

/* nvmlInit_v2, nvmlShutdown */
typedef nvmlReturn_t (*nvml_void_fn)(void);
/* nvmlDeviceGetCount_v2 */
typedef nvmlReturn_t (*nvml_count_fn)(unsigned int *count);
/* nvmlDeviceGetHandleByIndex_v2 */
typedef nvmlReturn_t (*nvml_handle_fn)(unsigned int index, nvmlDevice_t *device);
/* nvmlDeviceGetName, nvmlDeviceGetUUID */
typedef nvmlReturn_t (*nvml_string_fn)(nvmlDevice_t device, char *buf, unsigned int len);
/* nvmlDeviceGetMinorNumber, nvmlDeviceGetIndex */
typedef nvmlReturn_t (*nvml_uint_fn)(nvmlDevice_t device, unsigned int *value);
/* nvmlDeviceGetMemoryInfo */
typedef nvmlReturn_t (*nvml_memory_fn)(nvmlDevice_t device, nvmlMemory_t *memory);
/* nvmlDeviceGetMemoryInfo_v2 */
typedef nvmlReturn_t (*nvml_memory_v2_fn)(nvmlDevice_t device, nvmlMemory_v2_t *memory);
/* nvmlDeviceGetUtilizationRates */
typedef nvmlReturn_t (*nvml_utilization_fn)(nvmlDevice_t device, nvmlUtilization_t *utilization);
/* nvmlDeviceGetProcessUtilization: samples newer than last_seen (µs);
 * samples NULL asks for the count. */
typedef nvmlReturn_t (*nvml_process_utilization_fn)(nvmlDevice_t device, nvmlProcessUtilizationSample_t *samples,
                                                    unsigned int *count, unsigned long long last_seen);
/* nvmlDeviceGetPciInfo_v3 */
typedef nvmlReturn_t (*nvml_pci_fn)(nvmlDevice_t device, nvmlPciInfo_t *pci);
/* nvmlErrorString */
typedef const char *(*nvml_error_string_fn)(nvmlReturn_t result);

#endif
