/* fake_cuda.c - libtessera-fake-cuda.so, a CUDA driver without a GPU.
 *
 * The agent's mock GPU plugin binds it into containers as libcuda.so.1,
 * and the fGPU hook's tests put it behind the hook.  It keeps the driver's
 * contracts that programs and the hook rely on: cuInit first; contexts per
 * thread (a stack: create and push make current, set replaces the top);
 * device memory of the configured size per device, refused with
 * CUDA_ERROR_OUT_OF_MEMORY past it, and handed out as host memory (a
 * "device pointer" can be written through); every allocation family, with
 * its frees; launches checked and counted, never run, but taken to keep
 * the device busy a while for the fake NVML's utilization (fake.h); and
 * cuGetProcAddress(_v2) choosing among its versioned symbols as the real
 * driver does.  Devices and sizes come from the environment (fake.h).
 *
 * For tests: tessera_fake_cuda_calls(name) counts the calls of an exported
 * function, tessera_fake_cuda_used(d) and tessera_fake_cuda_device_used(d)
 * say what this process, and the device, hold. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/cuda_abi.h"
#include "fakecuda/fake.h"

#define FAKE_DRIVER_VERSION 12080
#define VMM_GRANULARITY     (2u << 20)
#define PITCH_ALIGNMENT     512u
#define CTX_MAGIC           0x43545821u
#define MAX_CTX_DEPTH       32
#define API                 FAKE_EXPORT CUresult
#define ATTRIBUTE_END       148 /* one past the last device attribute CUDA 13.0 defines */

static int initialized; /* cuInit called */

#define NEED_INIT()                                                   \
        do {                                                          \
                CALLED();                                             \
                if (!__atomic_load_n(&initialized, __ATOMIC_ACQUIRE)) \
                        return CUDA_ERROR_NOT_INITIALIZED;            \
        } while (0)

static bool valid_device(CUdevice d)
{
        return d >= 0 && d < fake_config()->devices;
}

/* ---- contexts: one stack per thread ---- */

struct CUctx_st {
        uint32_t magic;
        int dev;
        unsigned flags;
        bool primary;
        int refs; /* primary: retains */
};

static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st primary[FAKE_MAX_DEVICES];
static __thread CUcontext ctx_stack[MAX_CTX_DEPTH];
static __thread int ctx_depth;

static CUcontext current_ctx(void)
{
        return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
}

static bool valid_ctx(CUcontext c)
{
        return c && c->magic == CTX_MAGIC;
}

/* The current context's device, or -1. */
static int current_device(void)
{
        CUcontext c = current_ctx();
        return valid_ctx(c) ? c->dev : -1;
}

static CUresult push_ctx(CUcontext c)
{
        if (ctx_depth >= MAX_CTX_DEPTH)
                return CUDA_ERROR_OUT_OF_MEMORY;
        ctx_stack[ctx_depth++] = c;
        return CUDA_SUCCESS;
}

static CUresult create_ctx(CUcontext *pctx, unsigned flags, CUdevice dev)
{
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        CUcontext c = calloc(1, sizeof(*c));
        if (!c)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *c = (struct CUctx_st){ .magic = CTX_MAGIC, .dev = dev, .flags = flags };
        CUresult r = push_ctx(c);
        if (r != CUDA_SUCCESS) {
                free(c);
                return r;
        }
        *pctx = c;
        return CUDA_SUCCESS;
}

API cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
        NEED_INIT();
        return create_ctx(pctx, flags, dev);
}

API cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int nparams, unsigned int flags, CUdevice dev)
{
        NEED_INIT();
        (void)params;
        (void)nparams;
        return create_ctx(pctx, flags, dev);
}

API cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
        NEED_INIT();
        (void)params;
        return create_ctx(pctx, flags, dev);
}

API cuCtxDestroy_v2(CUcontext ctx)
{
        NEED_INIT();
        if (!valid_ctx(ctx) || ctx->primary)
                return CUDA_ERROR_INVALID_CONTEXT;
        for (int i = ctx_depth - 1; i >= 0; i--) /* off this thread's stack */
                if (ctx_stack[i] == ctx) {
                        memmove(&ctx_stack[i], &ctx_stack[i + 1], sizeof(ctx_stack[0]) * (size_t)(ctx_depth - i - 1));
                        ctx_depth--;
                }
        ctx->magic = 0;
        free(ctx);
        return CUDA_SUCCESS;
}

API cuCtxSetCurrent(CUcontext ctx)
{
        NEED_INIT();
        if (ctx && !valid_ctx(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        if (!ctx) {
                if (ctx_depth > 0)
                        ctx_depth--;
                return CUDA_SUCCESS;
        }
        if (ctx_depth == 0)
                return push_ctx(ctx);
        ctx_stack[ctx_depth - 1] = ctx;
        return CUDA_SUCCESS;
}

API cuCtxGetCurrent(CUcontext *pctx)
{
        NEED_INIT();
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        *pctx = current_ctx();
        return CUDA_SUCCESS;
}

API cuCtxPushCurrent_v2(CUcontext ctx)
{
        NEED_INIT();
        if (!valid_ctx(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        return push_ctx(ctx);
}

API cuCtxPopCurrent_v2(CUcontext *pctx)
{
        NEED_INIT();
        if (ctx_depth == 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        CUcontext c = ctx_stack[--ctx_depth];
        if (pctx)
                *pctx = c;
        return CUDA_SUCCESS;
}

API cuCtxGetDevice(CUdevice *dev)
{
        NEED_INIT();
        if (!dev)
                return CUDA_ERROR_INVALID_VALUE;
        int d = current_device();
        if (d < 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        *dev = d;
        return CUDA_SUCCESS;
}

API cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx)
{
        NEED_INIT();
        if (!dev)
                return CUDA_ERROR_INVALID_VALUE;
        if (!ctx)
                ctx = current_ctx();
        if (!valid_ctx(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        *dev = ctx->dev;
        return CUDA_SUCCESS;
}

API cuCtxSynchronize(void)
{
        NEED_INIT();
        return current_ctx() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

API cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
        NEED_INIT();
        if (!version)
                return CUDA_ERROR_INVALID_VALUE;
        if (!ctx)
                ctx = current_ctx();
        if (!valid_ctx(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        *version = 12080;
        return CUDA_SUCCESS;
}

API cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
        NEED_INIT();
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        pthread_mutex_lock(&primary_lock);
        struct CUctx_st *c = &primary[dev];
        if (c->magic != CTX_MAGIC)
                *c = (struct CUctx_st){ .magic = CTX_MAGIC, .dev = dev, .primary = true };
        c->refs++;
        pthread_mutex_unlock(&primary_lock);
        *pctx = c;
        return CUDA_SUCCESS;
}

API cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
        NEED_INIT();
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        pthread_mutex_lock(&primary_lock);
        CUresult r = primary[dev].refs > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
        if (r == CUDA_SUCCESS)
                primary[dev].refs--;
        pthread_mutex_unlock(&primary_lock);
        return r;
}

API cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
        NEED_INIT();
        if (!flags || !active)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        pthread_mutex_lock(&primary_lock);
        *flags = primary[dev].flags;
        *active = primary[dev].refs > 0;
        pthread_mutex_unlock(&primary_lock);
        return CUDA_SUCCESS;
}

API cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
        NEED_INIT();
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        pthread_mutex_lock(&primary_lock);
        primary[dev].flags = flags;
        pthread_mutex_unlock(&primary_lock);
        return CUDA_SUCCESS;
}

API cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
        NEED_INIT();
        return valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* ---- driver and devices ---- */

API cuInit(unsigned int flags)
{
        CALLED();
        if (flags != 0)
                return CUDA_ERROR_INVALID_VALUE;
        if (fake_config()->devices == 0)
                return CUDA_ERROR_NO_DEVICE;
        __atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
        return CUDA_SUCCESS;
}

API cuDriverGetVersion(int *version)
{
        CALLED();
        if (!version)
                return CUDA_ERROR_INVALID_VALUE;
        *version = FAKE_DRIVER_VERSION;
        return CUDA_SUCCESS;
}

API cuDeviceGet(CUdevice *dev, int ordinal)
{
        NEED_INIT();
        if (!dev)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(ordinal))
                return CUDA_ERROR_INVALID_DEVICE;
        *dev = ordinal;
        return CUDA_SUCCESS;
}

API cuDeviceGetCount(int *count)
{
        NEED_INIT();
        if (!count)
                return CUDA_ERROR_INVALID_VALUE;
        *count = fake_config()->devices;
        return CUDA_SUCCESS;
}

API cuDeviceGetName(char *name, int len, CUdevice dev)
{
        NEED_INIT();
        if (!name || len <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        snprintf(name, (size_t)len, "%s", fake_config()->model);
        return CUDA_SUCCESS;
}

static void fake_uuid(CUuuid *u, CUdevice dev)
{
        memset(u, 0, sizeof(*u));
        memcpy(u->bytes, "TESSERA-FAKE", 12);
        u->bytes[15] = (char)dev;
}

API cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
        NEED_INIT();
        if (!uuid)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        fake_uuid(uuid, dev);
        return CUDA_SUCCESS;
}

API cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
        NEED_INIT();
        if (!uuid)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        fake_uuid(uuid, dev);
        return CUDA_SUCCESS;
}

API cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice dev)
{
        NEED_INIT();
        if (!bus_id || len <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        snprintf(bus_id, (size_t)len, "00000000:%02X:00.0", dev + 1);
        return CUDA_SUCCESS;
}

API cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
        NEED_INIT();
        if (!bytes)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        *bytes = (size_t)fake_config()->memory;
        return CUDA_SUCCESS;
}

static int attribute(CUdevice_attribute a)
{
        switch (a) {
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
                return fake_config()->sm_count;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
                return 1024;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
                return 64;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
                return 0x7fffffff;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
                return 65535;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
                return 48 * 1024;
        case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
                return 64 * 1024;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
                return 32;
        case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
                return 0x7fffffff;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
                return 65536;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
                return 1755000;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
                return 2619000;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
                return 5120;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
                return 50 * 1024 * 1024;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
                return 2048;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
                return 9;
        case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
                return 512;
        case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT:
                return 32;
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
        case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
        case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
                return 1;
        default:
                return 0;
        }
}

API cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
        NEED_INIT();
        if (!pi || (int)attrib <= 0 || attrib >= ATTRIBUTE_END)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        *pi = attribute(attrib);
        if (attrib == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)
                *pi = dev + 1;
        return CUDA_SUCCESS;
}

static const struct {
        CUresult r;
        const char *name, *text;
} errors[] = {
        { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
        { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
        { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
        { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
        { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
        { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
        { CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
        { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
        { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
        { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
        { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
};

API cuGetErrorString(CUresult error, const char **str)
{
        CALLED();
        if (!str)
                return CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
                if (errors[i].r == error) {
                        *str = errors[i].text;
                        return CUDA_SUCCESS;
                }
        *str = NULL;
        return CUDA_ERROR_INVALID_VALUE;
}

API cuGetErrorName(CUresult error, const char **str)
{
        CALLED();
        if (!str)
                return CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
                if (errors[i].r == error) {
                        *str = errors[i].name;
                        return CUDA_SUCCESS;
                }
        *str = NULL;
        return CUDA_ERROR_INVALID_VALUE;
}

/* ---- memory: every allocation recorded by its address or handle ---- */

enum alloc_kind {
        ALLOC_PTR = 1, /* cuMemAlloc*, pitched, managed, async: freed by cuMemFree* */
        ALLOC_ARRAY,
        ALLOC_MIPMAP,
        ALLOC_HANDLE, /* cuMemCreate */
        ALLOC_HOST,   /* cuMemAllocHost: not the device's */
};

struct alloc {
        uint64_t key;
        void *mem;
        size_t len;    /* mapped bytes */
        uint64_t size; /* bytes charged to the device */
        int dev;       /* -1: host memory */
        enum alloc_kind kind;
        struct alloc *next;
};

#define BUCKETS 4096
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs[BUCKETS];

static size_t bucket(uint64_t key)
{
        return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 52) & (BUCKETS - 1);
}

/* Allocate size bytes of device dev (host memory standing for it). */
static CUresult alloc_mem(int dev, uint64_t size, enum alloc_kind kind, struct alloc **ret)
{
        if (size == 0 || size > (1ull << 46))
                return size == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
        if (dev >= 0 && !fake_mem_take(dev, size))
                return CUDA_ERROR_OUT_OF_MEMORY;
        struct alloc *a = calloc(1, sizeof(*a));
        void *mem = MAP_FAILED;
        if (a)
                mem = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                           0);
        if (mem == MAP_FAILED) {
                free(a);
                if (dev >= 0)
                        fake_mem_give(dev, size);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        *a = (struct alloc){
                .key = (uintptr_t)mem, .mem = mem, .len = (size_t)size, .size = size, .dev = dev, .kind = kind
        };
        pthread_mutex_lock(&allocs_lock);
        a->next = allocs[bucket(a->key)];
        allocs[bucket(a->key)] = a;
        pthread_mutex_unlock(&allocs_lock);
        *ret = a;
        return CUDA_SUCCESS;
}

static CUresult free_mem(uint64_t key, enum alloc_kind kind)
{
        struct alloc *a = NULL;

        pthread_mutex_lock(&allocs_lock);
        for (struct alloc **p = &allocs[bucket(key)]; *p; p = &(*p)->next)
                if ((*p)->key == key && (*p)->kind == kind) {
                        a = *p;
                        *p = a->next;
                        break;
                }
        pthread_mutex_unlock(&allocs_lock);
        if (!a)
                return kind == ALLOC_ARRAY || kind == ALLOC_MIPMAP ? CUDA_ERROR_INVALID_HANDLE
                                                                   : CUDA_ERROR_INVALID_VALUE;
        munmap(a->mem, a->len);
        if (a->dev >= 0)
                fake_mem_give(a->dev, a->size);
        free(a);
        return CUDA_SUCCESS;
}

/* An allocation on the current context's device. */
static CUresult alloc_current(CUdeviceptr *dptr, uint64_t size)
{
        if (!dptr)
                return CUDA_ERROR_INVALID_VALUE;
        int d = current_device();
        if (d < 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        struct alloc *a;
        CUresult r = alloc_mem(d, size, ALLOC_PTR, &a);
        if (r == CUDA_SUCCESS)
                *dptr = (CUdeviceptr)a->key;
        return r;
}

API cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
        NEED_INIT();
        return alloc_current(dptr, bytesize);
}

API cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
        NEED_INIT();
        if (!pitch || width == 0 || height == 0 || (elem != 4 && elem != 8 && elem != 16))
                return CUDA_ERROR_INVALID_VALUE;
        size_t p = (width + PITCH_ALIGNMENT - 1) / PITCH_ALIGNMENT * PITCH_ALIGNMENT;
        CUresult r = alloc_current(dptr, (uint64_t)p * height);
        if (r == CUDA_SUCCESS)
                *pitch = p;
        return r;
}

API cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
        NEED_INIT();
        if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
                return CUDA_ERROR_INVALID_VALUE;
        return alloc_current(dptr, bytesize);
}

API cuMemFree_v2(CUdeviceptr dptr)
{
        NEED_INIT();
        return dptr ? free_mem(dptr, ALLOC_PTR) : CUDA_SUCCESS;
}

API cuMemAllocHost_v2(void **pp, size_t bytesize)
{
        NEED_INIT();
        if (!pp)
                return CUDA_ERROR_INVALID_VALUE;
        struct alloc *a;
        CUresult r = alloc_mem(-1, bytesize, ALLOC_HOST, &a);
        if (r == CUDA_SUCCESS)
                *pp = a->mem;
        return r;
}

API cuMemFreeHost(void *p)
{
        NEED_INIT();
        return free_mem((uintptr_t)p, ALLOC_HOST);
}

API cuMemGetInfo_v2(size_t *free, size_t *total)
{
        NEED_INIT();
        if (!free || !total)
                return CUDA_ERROR_INVALID_VALUE;
        int d = current_device();
        if (d < 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        uint64_t mem = fake_config()->memory, used = fake_mem_used_device(d);
        *total = (size_t)mem;
        *free = (size_t)(used < mem ? mem - used : 0);
        return CUDA_SUCCESS;
}

/* ---- streams, pools, stream-ordered allocation ---- */

#define STREAM_MAGIC 0x5354524du
#define POOL_MAGIC   0x504f4f4cu

struct CUstream_st {
        uint32_t magic;
        int dev;
};

struct CUmemPoolHandle_st {
        uint32_t magic;
        int dev;
        bool is_default;
};

static struct CUmemPoolHandle_st default_pools[FAKE_MAX_DEVICES];
static pthread_once_t default_pools_once = PTHREAD_ONCE_INIT;

static void make_default_pools(void)
{
        for (int d = 0; d < FAKE_MAX_DEVICES; d++)
                default_pools[d] = (struct CUmemPoolHandle_st){ .magic = POOL_MAGIC, .dev = d, .is_default = true };
}

/* The device of a stream (NULL, the legacy and per-thread streams: the current context's), or -1. */
static int stream_device(CUstream s)
{
        if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
                return current_device();
        return s->magic == STREAM_MAGIC ? s->dev : -1;
}

API cuStreamCreate(CUstream *ps, unsigned int flags)
{
        NEED_INIT();
        (void)flags;
        if (!ps)
                return CUDA_ERROR_INVALID_VALUE;
        int d = current_device();
        if (d < 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        CUstream s = calloc(1, sizeof(*s));
        if (!s)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *s = (struct CUstream_st){ .magic = STREAM_MAGIC, .dev = d };
        *ps = s;
        return CUDA_SUCCESS;
}

API cuStreamDestroy_v2(CUstream s)
{
        NEED_INIT();
        if (!s || s->magic != STREAM_MAGIC)
                return CUDA_ERROR_INVALID_HANDLE;
        s->magic = 0;
        free(s);
        return CUDA_SUCCESS;
}

API cuStreamSynchronize(CUstream s)
{
        NEED_INIT();
        return stream_device(s) >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

API cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
        NEED_INIT();
        if (!pool)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        pthread_once(&default_pools_once, make_default_pools);
        *pool = &default_pools[dev];
        return CUDA_SUCCESS;
}

API cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
        NEED_INIT();
        if (!pool)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(dev))
                return CUDA_ERROR_INVALID_DEVICE;
        pthread_once(&default_pools_once, make_default_pools);
        *pool = &default_pools[dev];
        return CUDA_SUCCESS;
}

API cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
        NEED_INIT();
        if (!pool || !props || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
                return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(props->location.id))
                return CUDA_ERROR_INVALID_DEVICE;
        CUmemoryPool p = calloc(1, sizeof(*p));
        if (!p)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *p = (struct CUmemPoolHandle_st){ .magic = POOL_MAGIC, .dev = props->location.id };
        *pool = p;
        return CUDA_SUCCESS;
}

API cuMemPoolDestroy(CUmemoryPool pool)
{
        NEED_INIT();
        if (!pool || pool->magic != POOL_MAGIC || pool->is_default)
                return CUDA_ERROR_INVALID_VALUE;
        pool->magic = 0;
        free(pool);
        return CUDA_SUCCESS;
}

API cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
        NEED_INIT();
        (void)keep;
        return pool && pool->magic == POOL_MAGIC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult alloc_on(CUdeviceptr *dptr, size_t bytesize, int dev)
{
        if (!dptr)
                return CUDA_ERROR_INVALID_VALUE;
        if (dev < 0)
                return CUDA_ERROR_INVALID_HANDLE;
        struct alloc *a;
        CUresult r = alloc_mem(dev, bytesize, ALLOC_PTR, &a);
        if (r == CUDA_SUCCESS)
                *dptr = (CUdeviceptr)a->key;
        return r;
}

API cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
        NEED_INIT();
        return alloc_on(dptr, bytesize, stream_device(s));
}

API cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
        NEED_INIT();
        return alloc_on(dptr, bytesize, stream_device(s));
}

static int pool_device(CUmemoryPool pool)
{
        return pool && pool->magic == POOL_MAGIC ? pool->dev : -1;
}

API cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s)
{
        NEED_INIT();
        (void)s;
        return alloc_on(dptr, bytesize, pool_device(pool));
}

API cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s)
{
        NEED_INIT();
        (void)s;
        return alloc_on(dptr, bytesize, pool_device(pool));
}

API cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
        NEED_INIT();
        (void)s;
        return free_mem(dptr, ALLOC_PTR);
}

API cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s)
{
        NEED_INIT();
        (void)s;
        return free_mem(dptr, ALLOC_PTR);
}

/* ---- virtual memory management ---- */

API cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                  CUmemAllocationGranularity_flags option)
{
        NEED_INIT();
        (void)option;
        if (!granularity || !prop)
                return CUDA_ERROR_INVALID_VALUE;
        *granularity = VMM_GRANULARITY;
        return CUDA_SUCCESS;
}

API cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                unsigned long long flags)
{
        NEED_INIT();
        if (!handle || !prop || flags != 0 || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || size == 0 ||
            size % VMM_GRANULARITY != 0)
                return CUDA_ERROR_INVALID_VALUE;
        int dev = -1;
        if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
                if (!valid_device(prop->location.id))
                        return CUDA_ERROR_INVALID_DEVICE;
                dev = prop->location.id;
        } else if (prop->location.type == CU_MEM_LOCATION_TYPE_INVALID) {
                return CUDA_ERROR_INVALID_VALUE;
        }
        struct alloc *a;
        CUresult r = alloc_mem(dev, size, ALLOC_HANDLE, &a);
        if (r == CUDA_SUCCESS)
                *handle = (CUmemGenericAllocationHandle)a->key;
        return r;
}

API cuMemRelease(CUmemGenericAllocationHandle handle)
{
        NEED_INIT();
        return free_mem((uint64_t)handle, ALLOC_HANDLE);
}

/* ---- arrays ---- */

static uint64_t texel_bytes(CUarray_format f, unsigned channels)
{
        unsigned b;
        switch (f) {
        case CU_AD_FORMAT_UNSIGNED_INT8:
        case CU_AD_FORMAT_SIGNED_INT8:
                b = 1;
                break;
        case CU_AD_FORMAT_UNSIGNED_INT16:
        case CU_AD_FORMAT_SIGNED_INT16:
        case CU_AD_FORMAT_HALF:
                b = 2;
                break;
        default:
                b = 4;
                break;
        }
        return (uint64_t)b * channels;
}

static uint64_t side(size_t n)
{
        return n ? n : 1;
}

static CUresult make_array(CUarray *arr, size_t w, size_t h, size_t d, CUarray_format f, unsigned channels,
                           unsigned levels, enum alloc_kind kind)
{
        if (!arr || w == 0 || (channels != 1 && channels != 2 && channels != 4))
                return CUDA_ERROR_INVALID_VALUE;
        int dev = current_device();
        if (dev < 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        uint64_t bytes = 0;
        for (unsigned l = 0; l < (levels ? levels : 1); l++)
                bytes += side(w >> l) * side(h >> l) * side(d >> l) * texel_bytes(f, channels);
        struct alloc *a;
        CUresult r = alloc_mem(dev, bytes, kind, &a);
        if (r == CUDA_SUCCESS)
                *arr = (CUarray)a->mem;
        return r;
}

API cuArrayCreate_v2(CUarray *arr, const CUDA_ARRAY_DESCRIPTOR *desc)
{
        NEED_INIT();
        if (!desc)
                return CUDA_ERROR_INVALID_VALUE;
        return make_array(arr, desc->Width, desc->Height, 0, desc->Format, desc->NumChannels, 1, ALLOC_ARRAY);
}

API cuArray3DCreate_v2(CUarray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
        NEED_INIT();
        if (!desc)
                return CUDA_ERROR_INVALID_VALUE;
        return make_array(arr, desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels, 1, ALLOC_ARRAY);
}

API cuArrayDestroy(CUarray arr)
{
        NEED_INIT();
        return free_mem((uintptr_t)arr, ALLOC_ARRAY);
}

API cuMipmappedArrayCreate(CUmipmappedArray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels)
{
        NEED_INIT();
        if (!desc || !arr || levels == 0)
                return CUDA_ERROR_INVALID_VALUE;
        CUarray a;
        CUresult r = make_array(&a, desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels, levels,
                                ALLOC_MIPMAP);
        if (r == CUDA_SUCCESS)
                *arr = (CUmipmappedArray)a;
        return r;
}

API cuMipmappedArrayDestroy(CUmipmappedArray arr)
{
        NEED_INIT();
        return free_mem((uintptr_t)arr, ALLOC_MIPMAP);
}

/* ---- copies and sets (device pointers are host addresses) ---- */

static bool owned_range(CUdeviceptr p, size_t n)
{
        bool ok = false;
        pthread_mutex_lock(&allocs_lock);
        for (size_t b = 0; b < BUCKETS && !ok; b++)
                for (struct alloc *a = allocs[b]; a && !ok; a = a->next)
                        ok = a->kind == ALLOC_PTR && p >= a->key && n <= a->len && p - a->key <= a->len - n;
        pthread_mutex_unlock(&allocs_lock);
        return ok;
}

API cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
        NEED_INIT();
        if (!src || !owned_range(dst, n))
                return CUDA_ERROR_INVALID_VALUE;
        memcpy((void *)(uintptr_t)dst, src, n);
        return CUDA_SUCCESS;
}

API cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
        NEED_INIT();
        if (!dst || !owned_range(src, n))
                return CUDA_ERROR_INVALID_VALUE;
        memcpy(dst, (const void *)(uintptr_t)src, n);
        return CUDA_SUCCESS;
}

API cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
        NEED_INIT();
        if (!owned_range(dst, n) || !owned_range(src, n))
                return CUDA_ERROR_INVALID_VALUE;
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
        return CUDA_SUCCESS;
}

API cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
        NEED_INIT();
        if (!owned_range(dst, n))
                return CUDA_ERROR_INVALID_VALUE;
        memset((void *)(uintptr_t)dst, uc, n);
        return CUDA_SUCCESS;
}

API cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
        NEED_INIT();
        if (n > SIZE_MAX / 4 || !owned_range(dst, n * 4))
                return CUDA_ERROR_INVALID_VALUE;
        unsigned int *p = (unsigned int *)(uintptr_t)dst;
        for (size_t i = 0; i < n; i++)
                p[i] = ui;
        return CUDA_SUCCESS;
}

/* ---- modules, functions, launches, graphs ---- */

#define MODULE_MAGIC 0x4d4f4455u
#define FUNC_MAGIC   0x46554e43u
#define GRAPH_MAGIC  0x47524148u

struct CUfunc_st {
        uint32_t magic;
        char name[128];
        struct CUfunc_st *next;
};

struct CUmod_st {
        uint32_t magic;
        struct CUfunc_st *funcs;
};

struct CUgraph_st {
        uint32_t magic;
};

struct CUgraphExec_st {
        uint32_t magic;
};

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;

API cuModuleLoadData(CUmodule *module, const void *image)
{
        NEED_INIT();
        if (!module || !image)
                return CUDA_ERROR_INVALID_VALUE;
        if (current_device() < 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        CUmodule m = calloc(1, sizeof(*m));
        if (!m)
                return CUDA_ERROR_OUT_OF_MEMORY;
        m->magic = MODULE_MAGIC;
        *module = m;
        return CUDA_SUCCESS;
}

API cuModuleLoad(CUmodule *module, const char *fname)
{
        NEED_INIT();
        if (!module || !fname)
                return CUDA_ERROR_INVALID_VALUE;
        return cuModuleLoadData(module, fname);
}

API cuModuleGetFunction(CUfunction *hfunc, CUmodule m, const char *name)
{
        NEED_INIT();
        if (!hfunc || !name || !*name)
                return CUDA_ERROR_INVALID_VALUE;
        if (!m || m->magic != MODULE_MAGIC)
                return CUDA_ERROR_INVALID_HANDLE;
        pthread_mutex_lock(&modules_lock);
        CUfunction f = m->funcs;
        while (f && strcmp(f->name, name) != 0)
                f = f->next;
        if (!f && (f = calloc(1, sizeof(*f)))) {
                f->magic = FUNC_MAGIC;
                snprintf(f->name, sizeof(f->name), "%s", name);
                f->next = m->funcs;
                m->funcs = f;
        }
        pthread_mutex_unlock(&modules_lock);
        if (!f)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *hfunc = f;
        return CUDA_SUCCESS;
}

API cuModuleUnload(CUmodule m)
{
        NEED_INIT();
        if (!m || m->magic != MODULE_MAGIC)
                return CUDA_ERROR_INVALID_HANDLE;
        for (CUfunction f = m->funcs, next; f; f = next) {
                next = f->next;
                f->magic = 0;
                free(f);
        }
        m->magic = 0;
        free(m);
        return CUDA_SUCCESS;
}

/* A launch is valid: a context, a function, a grid and a block the device
 * takes; a valid one keeps its stream's device busy (fake_activity.c). */
static CUresult check_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                             CUstream s)
{
        if (current_device() < 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        if (!f || f->magic != FUNC_MAGIC || stream_device(s) < 0)
                return CUDA_ERROR_INVALID_HANDLE;
        if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024 || gy > 65535 || gz > 65535)
                return CUDA_ERROR_INVALID_VALUE;
        /* at most 2^31 x 2^16 x 2^16 blocks of 2^10 threads: 2^73 saturates */
        unsigned __int128 threads = (unsigned __int128)((uint64_t)gx * gy * gz) * ((uint64_t)bx * by * bz);
        fake_activity_launch(stream_device(s), threads > UINT64_MAX ? UINT64_MAX : (uint64_t)threads);
        return CUDA_SUCCESS;
}

API cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shmem, CUstream s, void **params, void **extra)
{
        NEED_INIT();
        (void)shmem, (void)params, (void)extra;
        return check_launch(f, gx, gy, gz, bx, by, bz, s);
}

API cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, CUstream s, void **params, void **extra)
{
        NEED_INIT();
        (void)shmem, (void)params, (void)extra;
        return check_launch(f, gx, gy, gz, bx, by, bz, s);
}

static CUresult check_launch_config(const CUlaunchConfig *c, CUfunction f)
{
        if (!c)
                return CUDA_ERROR_INVALID_VALUE;
        return check_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                            c->hStream);
}

API cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
        NEED_INIT();
        (void)params, (void)extra;
        return check_launch_config(config, f);
}

API cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
        NEED_INIT();
        (void)params, (void)extra;
        return check_launch_config(config, f);
}

API cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shmem, CUstream s, void **params)
{
        NEED_INIT();
        (void)shmem, (void)params;
        return check_launch(f, gx, gy, gz, bx, by, bz, s);
}

API cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shmem, CUstream s, void **params)
{
        NEED_INIT();
        (void)shmem, (void)params;
        return check_launch(f, gx, gy, gz, bx, by, bz, s);
}

API cuGraphCreate(CUgraph *graph, unsigned int flags)
{
        NEED_INIT();
        if (!graph || flags)
                return CUDA_ERROR_INVALID_VALUE;
        CUgraph g = calloc(1, sizeof(*g));
        if (!g)
                return CUDA_ERROR_OUT_OF_MEMORY;
        g->magic = GRAPH_MAGIC;
        *graph = g;
        return CUDA_SUCCESS;
}

API cuGraphDestroy(CUgraph g)
{
        NEED_INIT();
        if (!g || g->magic != GRAPH_MAGIC)
                return CUDA_ERROR_INVALID_VALUE;
        g->magic = 0;
        free(g);
        return CUDA_SUCCESS;
}

API cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
        NEED_INIT();
        (void)flags;
        if (!exec || !g || g->magic != GRAPH_MAGIC)
                return CUDA_ERROR_INVALID_VALUE;
        CUgraphExec e = calloc(1, sizeof(*e));
        if (!e)
                return CUDA_ERROR_OUT_OF_MEMORY;
        e->magic = GRAPH_MAGIC;
        *exec = e;
        return CUDA_SUCCESS;
}

API cuGraphExecDestroy(CUgraphExec e)
{
        NEED_INIT();
        if (!e || e->magic != GRAPH_MAGIC)
                return CUDA_ERROR_INVALID_VALUE;
        e->magic = 0;
        free(e);
        return CUDA_SUCCESS;
}

static CUresult check_graph_launch(CUgraphExec e, CUstream s)
{
        if (current_device() < 0)
                return CUDA_ERROR_INVALID_CONTEXT;
        if (!e || e->magic != GRAPH_MAGIC || stream_device(s) < 0)
                return CUDA_ERROR_INVALID_HANDLE;
        fake_activity_launch(stream_device(s), 0); /* its kernels are not known: one wave */
        return CUDA_SUCCESS;
}

API cuGraphLaunch(CUgraphExec e, CUstream s)
{
        NEED_INIT();
        return check_graph_launch(e, s);
}

API cuGraphLaunch_ptsz(CUgraphExec e, CUstream s)
{
        NEED_INIT();
        return check_graph_launch(e, s);
}

/* ---- cuGetProcAddress: the driver's choice among its versioned symbols ---- */

API cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);
API cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status);

/* One exported function: the name programs ask for, the CUDA version that
 * introduced this variant, and whether it is the per-thread-stream one. */
struct proc {
        const char *base;
        void *fn;
        int version;
        bool per_thread;
};

#define P(base, fn, version)                     \
        {                                        \
                base, (void *)fn, version, false \
        }
#define PT(base, fn, version)                   \
        {                                       \
                base, (void *)fn, version, true \
        }
static const struct proc procs[] = {
        P("cuInit", cuInit, 2000),
        P("cuDriverGetVersion", cuDriverGetVersion, 2020),
        P("cuGetErrorString", cuGetErrorString, 6000),
        P("cuGetErrorName", cuGetErrorName, 6000),
        P("cuGetProcAddress", cuGetProcAddress, 11030),
        P("cuGetProcAddress", cuGetProcAddress_v2, 12000),
        P("cuDeviceGet", cuDeviceGet, 2000),
        P("cuDeviceGetCount", cuDeviceGetCount, 2000),
        P("cuDeviceGetName", cuDeviceGetName, 2000),
        P("cuDeviceGetUuid", cuDeviceGetUuid, 9020),
        P("cuDeviceGetUuid", cuDeviceGetUuid_v2, 11040),
        P("cuDeviceGetPCIBusId", cuDeviceGetPCIBusId, 4010),
        P("cuDeviceTotalMem", cuDeviceTotalMem_v2, 3020),
        P("cuDeviceGetAttribute", cuDeviceGetAttribute, 2000),
        P("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool, 11020),
        P("cuDeviceGetMemPool", cuDeviceGetMemPool, 11020),
        P("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, 7000),
        P("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2, 11000),
        P("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState, 7000),
        P("cuDevicePrimaryCtxSetFlags", cuDevicePrimaryCtxSetFlags_v2, 11000),
        P("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset_v2, 11000),
        P("cuCtxCreate", cuCtxCreate_v2, 3020),
        P("cuCtxCreate", cuCtxCreate_v3, 11040),
        P("cuCtxCreate", cuCtxCreate_v4, 12050),
        P("cuCtxDestroy", cuCtxDestroy_v2, 4000),
        P("cuCtxSetCurrent", cuCtxSetCurrent, 4000),
        P("cuCtxGetCurrent", cuCtxGetCurrent, 4000),
        P("cuCtxPushCurrent", cuCtxPushCurrent_v2, 4000),
        P("cuCtxPopCurrent", cuCtxPopCurrent_v2, 4000),
        P("cuCtxGetDevice", cuCtxGetDevice, 2000),
        P("cuCtxGetDevice", cuCtxGetDevice_v2, 13000),
        P("cuCtxSynchronize", cuCtxSynchronize, 2000),
        P("cuCtxGetApiVersion", cuCtxGetApiVersion, 3020),
        P("cuMemAlloc", cuMemAlloc_v2, 3020),
        P("cuMemAllocPitch", cuMemAllocPitch_v2, 3020),
        P("cuMemAllocManaged", cuMemAllocManaged, 6000),
        P("cuMemFree", cuMemFree_v2, 3020),
        P("cuMemAllocHost", cuMemAllocHost_v2, 3020),
        P("cuMemFreeHost", cuMemFreeHost, 2000),
        P("cuMemGetInfo", cuMemGetInfo_v2, 3020),
        P("cuMemAllocAsync", cuMemAllocAsync, 11020),
        PT("cuMemAllocAsync", cuMemAllocAsync_ptsz, 11020),
        P("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync, 11020),
        PT("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync_ptsz, 11020),
        P("cuMemFreeAsync", cuMemFreeAsync, 11020),
        PT("cuMemFreeAsync", cuMemFreeAsync_ptsz, 11020),
        P("cuMemPoolCreate", cuMemPoolCreate, 11020),
        P("cuMemPoolDestroy", cuMemPoolDestroy, 11020),
        P("cuMemPoolTrimTo", cuMemPoolTrimTo, 11020),
        P("cuMemGetAllocationGranularity", cuMemGetAllocationGranularity, 10020),
        P("cuMemCreate", cuMemCreate, 10020),
        P("cuMemRelease", cuMemRelease, 10020),
        P("cuArrayCreate", cuArrayCreate_v2, 3020),
        P("cuArray3DCreate", cuArray3DCreate_v2, 3020),
        P("cuArrayDestroy", cuArrayDestroy, 2000),
        P("cuMipmappedArrayCreate", cuMipmappedArrayCreate, 5000),
        P("cuMipmappedArrayDestroy", cuMipmappedArrayDestroy, 5000),
        P("cuMemcpyHtoD", cuMemcpyHtoD_v2, 3020),
        P("cuMemcpyDtoH", cuMemcpyDtoH_v2, 3020),
        P("cuMemcpyDtoD", cuMemcpyDtoD_v2, 3020),
        P("cuMemsetD8", cuMemsetD8_v2, 3020),
        P("cuMemsetD32", cuMemsetD32_v2, 3020),
        P("cuStreamCreate", cuStreamCreate, 2000),
        P("cuStreamDestroy", cuStreamDestroy_v2, 4000),
        P("cuStreamSynchronize", cuStreamSynchronize, 2000),
        P("cuModuleLoad", cuModuleLoad, 2000),
        P("cuModuleLoadData", cuModuleLoadData, 2000),
        P("cuModuleGetFunction", cuModuleGetFunction, 2000),
        P("cuModuleUnload", cuModuleUnload, 2000),
        P("cuLaunchKernel", cuLaunchKernel, 4000),
        PT("cuLaunchKernel", cuLaunchKernel_ptsz, 7000),
        P("cuLaunchKernelEx", cuLaunchKernelEx, 11060),
        PT("cuLaunchKernelEx", cuLaunchKernelEx_ptsz, 11060),
        P("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel, 9000),
        PT("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel_ptsz, 9000),
        P("cuGraphCreate", cuGraphCreate, 10000),
        P("cuGraphDestroy", cuGraphDestroy, 10000),
        P("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags, 11040),
        P("cuGraphExecDestroy", cuGraphExecDestroy, 10000),
        P("cuGraphLaunch", cuGraphLaunch, 10000),
        PT("cuGraphLaunch", cuGraphLaunch_ptsz, 10000),
};

/* The newest variant of symbol not newer than version (per-thread ones
 * only when asked and when there is one). */
static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
        const struct proc *best = NULL, *best_pt = NULL;
        bool known = false;

        if (status)
                *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        if (!symbol || !pfn ||
            flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
                return CUDA_ERROR_INVALID_VALUE;
        *pfn = NULL;
        for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
                const struct proc *p = &procs[i];
                if (strcmp(p->base, symbol) != 0)
                        continue;
                known = true;
                if (p->version > version)
                        continue;
                const struct proc **slot = p->per_thread ? &best_pt : &best;
                if (!*slot || p->version > (*slot)->version)
                        *slot = p;
        }
        if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_pt)
                best = best_pt;
        if (!best) {
                if (status && known)
                        *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
                return CUDA_ERROR_NOT_FOUND;
        }
        *pfn = best->fn;
        if (status)
                *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
}

API cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
        CALLED();
        return lookup(symbol, pfn, version, flags, NULL);
}

API cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status)
{
        CALLED();
        return lookup(symbol, pfn, version, flags, status);
}

/* ---- for tests ---- */

FAKE_EXPORT unsigned long tessera_fake_cuda_calls(const char *name)
{
        return name ? fake_calls(name) : 0;
}

FAKE_EXPORT unsigned long long tessera_fake_cuda_used(int dev)
{
        return fake_mem_used_here(dev);
}

FAKE_EXPORT unsigned long long tessera_fake_cuda_device_used(int dev)
{
        return fake_mem_used_device(dev);
}
