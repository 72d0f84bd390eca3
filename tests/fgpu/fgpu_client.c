/* fgpu_client.c - a CUDA program for the fGPU hook's tests
 * (test_fgpu_hook.c): linked against the fake driver and NVML by name, as
 * programs link -lcuda, and run with the hook preloaded.  Each argument is
 * one command; each command prints one line `<command> rc=<CUresult> key=value...`
 * on stdout.  Besides what the driver answers, a line says what a user
 * watching the container would see: `charged`, the change of the
 * container's use in the shared region (TESSERA_FGPU_REGION), `fake`, the
 * change of what the driver really holds, and `reached`, the fake
 * driver's functions that ran.
 *
 *   init                     cuInit(0)
 *   ctx:D                    retain device D's primary context, make it current
 *   alloc:FAMILY:BYTES[:H[:L]]  plain managed pitch(W:H) async async_ptsz pool pool_ptsz
 *                            create array array3d mipmap (L levels); remembered for free
 *   free                     free the last allocation remembered, by its family's call
 *   freeall                  free them all
 *   info                     cuMemGetInfo: free= total=
 *   total:D                  cuDeviceTotalMem_v2
 *   nvml:D                   nvmlDeviceGetMemoryInfo and _v2: total= used= free= total2= used2= free2=
 *   used:D                   region= here= device= (the region's, this process's fake, the device's)
 *   route:PATH:NAME[:VER:FLAGS]  call NAME found by PATH: direct (linked), dlsym (dlopen of
 *                            TESSERA_FGPU_REAL_LIBCUDA/LIBNVML), procaddr or procaddr_v2 (NAME is
 *                            then the base name, asked for with VER and FLAGS)
 *   hold                     print `hold` and sleep until killed
 *   exec                     print `exec`, then run the rest of the commands in a new image of
 *                            this program (execv: the same process, what it held gone)
 *   stress:ITER:MAX:LIMIT    random cuMemAlloc/cuMemFree of up to MAX bytes: max_region= max_device=
 *                            (the most the region and the device held after any step) over= (steps past LIMIT)
 *   threads:N:ITER           N threads allocating and freeing every family at once */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cuda_abi.h"
#include "common/nvml_abi.h"
#include "fgpu/region.h"


/* The fake's counters and memory (fake_cuda.c, fake_nvml.c). */
unsigned long tessera_fake_cuda_calls(const char *name);
unsigned long tessera_fake_nvml_calls(const char *name);
unsigned long long tessera_fake_cuda_used(int dev);
unsigned long long tessera_fake_cuda_device_used(int dev);

/* NVML (types: src/common/nvml_abi.h), linked by name. */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int, nvmlDevice_t *);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t, nvmlMemory_t *);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t, nvmlMemory_v2_t *);

#define MAX_ALLOCS 4096

/* The wrapped functions, as the fake exports them. */
static const struct {
        const char *name;
        void *fn;
} direct[] = {
#define D(n)                  \
        {                     \
#n, (void *)n \
        }
        D(cuMemAlloc_v2),
        D(cuMemAllocPitch_v2),
        D(cuMemAllocManaged),
        D(cuMemFree_v2),
        D(cuMemAllocAsync),
        D(cuMemAllocAsync_ptsz),
        D(cuMemAllocFromPoolAsync),
        D(cuMemAllocFromPoolAsync_ptsz),
        D(cuMemFreeAsync),
        D(cuMemFreeAsync_ptsz),
        D(cuMemCreate),
        D(cuMemRelease),
        D(cuArrayCreate_v2),
        D(cuArray3DCreate_v2),
        D(cuArrayDestroy),
        D(cuMipmappedArrayCreate),
        D(cuMipmappedArrayDestroy),
        D(cuMemGetInfo_v2),
        D(cuDeviceTotalMem_v2),
        D(cuLaunchKernel),
        D(cuLaunchKernel_ptsz),
        D(cuLaunchKernelEx),
        D(cuLaunchKernelEx_ptsz),
        D(cuLaunchCooperativeKernel),
        D(cuLaunchCooperativeKernel_ptsz),
        D(cuGraphLaunch),
        D(cuGraphLaunch_ptsz),
        D(cuGetProcAddress),
        D(cuGetProcAddress_v2),
        D(nvmlDeviceGetMemoryInfo),
        D(nvmlDeviceGetMemoryInfo_v2),
#undef D
};
#define NDIRECT (sizeof(direct) / sizeof(direct[0]))

static struct fgpu_region *region;

struct allocation {
        char family[16];
        uint64_t key;
        CUstream stream;
};
static struct allocation allocs[MAX_ALLOCS];
static int nallocs;

static int current_dev(void)
{
        CUdevice d;
        return cuCtxGetDevice(&d) == CUDA_SUCCESS ? (int)d : 0;
}

/* The container's use of device d in the region the hook made (-1: none yet). */
static long long region_used(int d)
{
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        const char *path = getenv("TESSERA_FGPU_REGION");
        char err[256];

        pthread_mutex_lock(&lock);
        if (!region && path && *path && fgpu_region_open(path, false, &region, err, sizeof(err)) < 0)
                region = NULL;
        pthread_mutex_unlock(&lock);
        return region ? (long long)fgpu_region_used(region, d) : -1;
}

/* The change of the region's use since before (a region not there yet held nothing). */
static long long charged_since(int d, long long before)
{
        long long now = region_used(d);
        return (now < 0 ? 0 : now) - (before < 0 ? 0 : before);
}

/* ---- allocation families ---- */

static CUmemoryPool default_pool(void)
{
        CUmemoryPool p = NULL;
        cuDeviceGetDefaultMemPool(&p, current_dev());
        return p;
}

static unsigned mip_levels = 1; /* of the next mipmap: alloc:mipmap:W:H:LEVELS */

static CUresult alloc_family(const char *family, uint64_t bytes, uint64_t height, uint64_t *key, int dev)
{
        CUdeviceptr p = 0;
        CUresult r;
        if (!strcmp(family, "plain")) {
                r = cuMemAlloc_v2(&p, bytes);
        } else if (!strcmp(family, "managed")) {
                r = cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL);
        } else if (!strcmp(family, "pitch")) {
                size_t pitch;
                r = cuMemAllocPitch_v2(&p, &pitch, bytes, height ? height : 1, 4);
        } else if (!strcmp(family, "async")) {
                r = cuMemAllocAsync(&p, bytes, NULL);
        } else if (!strcmp(family, "async_ptsz")) {
                r = cuMemAllocAsync_ptsz(&p, bytes, NULL);
        } else if (!strcmp(family, "pool")) {
                r = cuMemAllocFromPoolAsync(&p, bytes, default_pool(), NULL);
        } else if (!strcmp(family, "pool_ptsz")) {
                r = cuMemAllocFromPoolAsync_ptsz(&p, bytes, default_pool(), NULL);
        } else if (!strcmp(family, "create")) {
                CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                             .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE,
                                                           .id = dev >= 0 ? dev : current_dev() } };
                CUmemGenericAllocationHandle h = 0;
                r = cuMemCreate(&h, bytes, &prop, 0);
                p = (CUdeviceptr)h;
        } else if (!strcmp(family, "array")) {
                CUDA_ARRAY_DESCRIPTOR d = {
                        .Width = bytes, .Height = height, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1
                };
                CUarray a = NULL;
                r = cuArrayCreate_v2(&a, &d);
                p = (CUdeviceptr)(uintptr_t)a;
        } else if (!strcmp(family, "array3d") || !strcmp(family, "mipmap")) {
                CUDA_ARRAY3D_DESCRIPTOR d = {
                        .Width = bytes, .Height = height, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1
                };
                if (!strcmp(family, "mipmap")) {
                        CUmipmappedArray m = NULL;
                        r = cuMipmappedArrayCreate(&m, &d, mip_levels);
                        p = (CUdeviceptr)(uintptr_t)m;
                } else {
                        CUarray a = NULL;
                        r = cuArray3DCreate_v2(&a, &d);
                        p = (CUdeviceptr)(uintptr_t)a;
                }
        } else {
                return CUDA_ERROR_INVALID_VALUE;
        }
        *key = p;
        return r;
}

static CUresult free_family(const char *family, uint64_t key)
{
        if (!strcmp(family, "async") || !strcmp(family, "pool"))
                return cuMemFreeAsync(key, NULL);
        if (!strcmp(family, "async_ptsz") || !strcmp(family, "pool_ptsz"))
                return cuMemFreeAsync_ptsz(key, NULL);
        if (!strcmp(family, "create"))
                return cuMemRelease((CUmemGenericAllocationHandle)key);
        if (!strcmp(family, "array") || !strcmp(family, "array3d"))
                return cuArrayDestroy((CUarray)(uintptr_t)key);
        if (!strcmp(family, "mipmap"))
                return cuMipmappedArrayDestroy((CUmipmappedArray)(uintptr_t)key);
        return cuMemFree_v2(key);
}

static void cmd_alloc(char **f, int n)
{
        int d = current_dev();
        long long r0 = region_used(d), f0 = (long long)tessera_fake_cuda_used(d);
        uint64_t key = 0;
        const char *family = n > 1 ? f[1] : "plain";
        mip_levels = n > 4 ? (unsigned)strtoul(f[4], NULL, 10) : 1;
        CUresult r = alloc_family(family, n > 2 ? strtoull(f[2], NULL, 0) : 4096, n > 3 ? strtoull(f[3], NULL, 0) : 0,
                                  &key, -1);
        if (r == CUDA_SUCCESS && nallocs < MAX_ALLOCS) {
                snprintf(allocs[nallocs].family, sizeof(allocs[nallocs].family), "%s", family);
                allocs[nallocs++].key = key;
        }
        printf("alloc rc=%d charged=%lld fake=%lld\n", (int)r, charged_since(d, r0),
               (long long)tessera_fake_cuda_used(d) - f0);
}

static void cmd_free(void)
{
        int d = current_dev();
        long long r0 = region_used(d), f0 = (long long)tessera_fake_cuda_used(d);
        CUresult r = CUDA_ERROR_INVALID_VALUE;
        if (nallocs > 0) {
                nallocs--;
                r = free_family(allocs[nallocs].family, allocs[nallocs].key);
        }
        printf("free rc=%d charged=%lld fake=%lld\n", (int)r, charged_since(d, r0),
               (long long)tessera_fake_cuda_used(d) - f0);
}

/* ---- routing: find a function by a path, call it, say what happened ---- */

static void *find(const char *path, const char *name, int version, cuuint64_t flags, CUresult *rc)
{
        void *fn = NULL;
        *rc = CUDA_SUCCESS;
        if (!strcmp(path, "direct")) {
                for (size_t i = 0; i < NDIRECT; i++)
                        if (!strcmp(direct[i].name, name))
                                fn = direct[i].fn;
        } else if (!strcmp(path, "dlsym")) {
                const char *lib =
                        getenv(strncmp(name, "nvml", 4) ? "TESSERA_FGPU_REAL_LIBCUDA" : "TESSERA_FGPU_REAL_LIBNVML");
                void *h = dlopen(lib, RTLD_NOW);
                fn = h ? dlsym(h, name) : NULL;
        } else if (!strcmp(path, "procaddr")) {
                *rc = cuGetProcAddress(name, &fn, version, flags);
        } else if (!strcmp(path, "procaddr_v2")) {
                CUdriverProcAddressQueryResult status;
                *rc = cuGetProcAddress_v2(name, &fn, version, flags, &status);
        }
        return fn;
}

/* The base name of a versioned one: cuMemAlloc_v2 -> cuMemAlloc. */
static void base_name(const char *name, char *base, size_t len)
{
        snprintf(base, len, "%s", name);
        char *s;
        if ((s = strstr(base, "_ptsz")))
                *s = '\0';
        if ((s = strstr(base, "_v2")) && s[3] == '\0')
                *s = '\0';
}

/* The region's use just before the routed call (after any setup), and what to free after looking. */
static long long mark;
static char pending_family[16];
static uint64_t pending_key;

#define MARK() (mark = region_used(current_dev()))

static void later_free(const char *family, uint64_t key)
{
        snprintf(pending_family, sizeof(pending_family), "%s", family);
        pending_key = key;
}

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void **);

static CUfunction kernel(void)
{
        static CUfunction f;
        CUmodule m;
        if (!f && cuModuleLoadData(&m, "fake image") == CUDA_SUCCESS)
                cuModuleGetFunction(&f, m, "kernel");
        return f;
}

static CUgraphExec graph_exec(void)
{
        static CUgraphExec e;
        CUgraph g;
        if (!e && cuGraphCreate(&g, 0) == CUDA_SUCCESS)
                cuGraphInstantiateWithFlags(&e, g, 0);
        return e;
}

/* Call fn, the function named base; *extra gets what it reported. */
static CUresult call(const char *base, void *fn, int version, char *extra, size_t len)
{
        CUdeviceptr p = 0;
        uint64_t key = 0;
        CUresult r;
        CUDA_ARRAY_DESCRIPTOR ad = { .Width = 4096, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1 };
        CUDA_ARRAY3D_DESCRIPTOR a3 = { .Width = 4096, .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1 };
        CUlaunchConfig lc = {
                .gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1
        };
        CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                     .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = current_dev() } };

        extra[0] = '\0';
        MARK();
        if (!strcmp(base, "cuMemAlloc")) {
                r = ((alloc_fn)fn)(&p, 4096);
                later_free("plain", p);
                return r;
        }
        if (!strcmp(base, "cuMemAllocPitch")) {
                size_t pitch;
                r = ((CUresult(*)(CUdeviceptr *, size_t *, size_t, size_t, unsigned))fn)(&p, &pitch, 4096, 1, 4);
                later_free("plain", p);
                return r;
        }
        if (!strcmp(base, "cuMemAllocManaged")) {
                r = ((CUresult(*)(CUdeviceptr *, size_t, unsigned))fn)(&p, 4096, CU_MEM_ATTACH_GLOBAL);
                later_free("plain", p);
                return r;
        }
        if (!strcmp(base, "cuMemAllocAsync")) {
                r = ((CUresult(*)(CUdeviceptr *, size_t, CUstream))fn)(&p, 4096, NULL);
                later_free("plain", p);
                return r;
        }
        if (!strcmp(base, "cuMemAllocFromPoolAsync")) {
                r = ((CUresult(*)(CUdeviceptr *, size_t, CUmemoryPool, CUstream))fn)(&p, 4096, default_pool(), NULL);
                later_free("plain", p);
                return r;
        }
        if (!strcmp(base, "cuMemCreate")) {
                CUmemGenericAllocationHandle h = 0;
                r = ((CUresult(*)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                                  unsigned long long))fn)(&h, 2 << 20, &prop, 0);
                later_free("create", h);
                return r;
        }
        if (!strcmp(base, "cuArrayCreate") || !strcmp(base, "cuArray3DCreate") ||
            !strcmp(base, "cuMipmappedArrayCreate")) {
                void *a = NULL;
                if (!strcmp(base, "cuArrayCreate"))
                        r = ((CUresult(*)(void **, const CUDA_ARRAY_DESCRIPTOR *))fn)(&a, &ad);
                else if (!strcmp(base, "cuArray3DCreate"))
                        r = ((CUresult(*)(void **, const CUDA_ARRAY3D_DESCRIPTOR *))fn)(&a, &a3);
                else
                        r = ((CUresult(*)(void **, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned))fn)(&a, &a3, 1);
                later_free(strcmp(base, "cuMipmappedArrayCreate") ? "array" : "mipmap", (uintptr_t)a);
                return r;
        }
        /* frees: allocate directly first; the refund shows as a negative charge */
        if (!strcmp(base, "cuMemFree") || !strcmp(base, "cuMemFreeAsync")) {
                alloc_family("plain", 4096, 0, &key, -1);
                MARK();
                if (!strcmp(base, "cuMemFree"))
                        return ((CUresult(*)(CUdeviceptr))fn)(key);
                return ((CUresult(*)(CUdeviceptr, CUstream))fn)(key, NULL);
        }
        if (!strcmp(base, "cuMemRelease")) {
                alloc_family("create", 2 << 20, 0, &key, -1);
                MARK();
                return ((CUresult(*)(CUmemGenericAllocationHandle))fn)(key);
        }
        if (!strcmp(base, "cuArrayDestroy") || !strcmp(base, "cuMipmappedArrayDestroy")) {
                alloc_family(strcmp(base, "cuArrayDestroy") ? "mipmap" : "array", 4096, 0, &key, -1);
                MARK();
                return ((CUresult(*)(void *))fn)((void *)(uintptr_t)key);
        }
        if (!strcmp(base, "cuMemGetInfo")) {
                size_t f = 0, t = 0;
                r = ((CUresult(*)(size_t *, size_t *))fn)(&f, &t);
                snprintf(extra, len, " total=%zu free=%zu", t, f);
                return r;
        }
        if (!strcmp(base, "cuDeviceTotalMem")) {
                size_t t = 0;
                r = ((CUresult(*)(size_t *, CUdevice))fn)(&t, current_dev());
                snprintf(extra, len, " total=%zu", t);
                return r;
        }
        if (!strcmp(base, "cuLaunchKernel"))
                return ((launch_fn)fn)(kernel(), 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
        if (!strcmp(base, "cuLaunchCooperativeKernel"))
                return ((coop_fn)fn)(kernel(), 2, 1, 1, 32, 1, 1, 0, NULL, NULL);
        if (!strcmp(base, "cuLaunchKernelEx"))
                return ((CUresult(*)(const CUlaunchConfig *, CUfunction, void **, void **))fn)(&lc, kernel(), NULL,
                                                                                               NULL);
        if (!strcmp(base, "cuGraphLaunch"))
                return ((CUresult(*)(CUgraphExec, CUstream))fn)(graph_exec(), NULL);
        if (!strcmp(base, "cuGetProcAddress")) {
                /* the function it finds is the hook's: cuMemAlloc through it is charged */
                void *alloc = NULL;
                CUdriverProcAddressQueryResult status;
                if (version >= 12000 || version == 0)
                        r = ((CUresult(*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))fn)(
                                "cuMemAlloc", &alloc, 12000, 0, &status);
                else
                        r = ((CUresult(*)(const char *, void **, int, cuuint64_t))fn)("cuMemAlloc", &alloc, 11030, 0);
                if (r != CUDA_SUCCESS || !alloc)
                        return r ? r : CUDA_ERROR_NOT_FOUND;
                r = ((alloc_fn)alloc)(&p, 4096);
                later_free("plain", p);
                return r;
        }
        if (!strcmp(base, "nvmlDeviceGetMemoryInfo")) {
                nvmlDevice_t dev;
                nvmlMemory_t m = { 0 };
                nvmlMemory_v2_t m2 = { .version = NVML_MEMORY_V2 };
                nvmlInit_v2();
                nvmlDeviceGetHandleByIndex_v2((unsigned)current_dev(), &dev);
                if (version == 2) {
                        r = (CUresult)((nvml_memory_v2_fn)fn)(dev, &m2);
                        snprintf(extra, len, " total=%llu used=%llu", m2.total, m2.used);
                } else {
                        r = (CUresult)((nvml_memory_fn)fn)(dev, &m);
                        snprintf(extra, len, " total=%llu used=%llu", m.total, m.used);
                }
                return r;
        }
        return CUDA_ERROR_NOT_SUPPORTED;
}

static void cmd_route(char **f, int n)
{
        if (n < 3) {
                printf("route rc=-1\n");
                return;
        }
        const char *path = f[1], *name = f[2];
        int version = n > 3 ? (int)strtol(f[3], NULL, 10) : 0;
        cuuint64_t flags = n > 4 ? strtoull(f[4], NULL, 0) : 0;
        int d = current_dev();
        char base[128], extra[256];
        unsigned long before[NDIRECT];
        struct fgpu_region_device l0 = { 0 };

        if (strncmp(path, "procaddr", 8) == 0)
                snprintf(base, sizeof(base), "%s", name);
        else
                base_name(name, base, sizeof(base));
        for (size_t i = 0; i < NDIRECT; i++)
                before[i] = strncmp(direct[i].name, "nvml", 4) ? tessera_fake_cuda_calls(direct[i].name)
                                                               : tessera_fake_nvml_calls(direct[i].name);
        mark = region_used(d);
        if (region)
                l0 = region->dev[d];
        CUresult rc;
        void *fn = find(path, name, version, flags, &rc);
        if (!fn) {
                printf("route rc=%d found=0\n", rc ? (int)rc : (int)CUDA_ERROR_NOT_FOUND);
                return;
        }
        if (!strncmp(base, "nvml", 4))
                version = strstr(name, "_v2") ? 2 : 1;
        else if (strncmp(path, "procaddr", 8) != 0)
                version = strstr(name, "_v2") ? 12000 : 11030; /* the cuGetProcAddress found by name */
        rc = call(base, fn, version, extra, sizeof(extra));
        long long charged = charged_since(d, mark);
        bool limiter = region && (region->dev[d].step_ns != l0.step_ns || region->dev[d].work != l0.work ||
                                  region->dev[d].controller != l0.controller);
        printf("route rc=%d found=1 charged=%lld limiter=%d%s reached=", (int)rc, charged, (int)limiter, extra);
        for (size_t i = 0; i < NDIRECT; i++) {
                unsigned long now = strncmp(direct[i].name, "nvml", 4) ? tessera_fake_cuda_calls(direct[i].name)
                                                                       : tessera_fake_nvml_calls(direct[i].name);
                if (now != before[i])
                        printf("%s,", direct[i].name);
        }
        printf("\n");
        if (pending_key)
                free_family(pending_family, pending_key);
        pending_key = 0;
}

/* ---- what the device reports ---- */

static void cmd_info(void)
{
        size_t f = 0, t = 0;
        CUresult r = cuMemGetInfo_v2(&f, &t);
        printf("info rc=%d free=%zu total=%zu\n", (int)r, f, t);
}

static void cmd_total(int d)
{
        size_t t = 0;
        CUresult r = cuDeviceTotalMem_v2(&t, d);
        printf("total rc=%d total=%zu\n", (int)r, t);
}

static void cmd_nvml(int d)
{
        nvmlDevice_t dev = NULL;
        nvmlMemory_t m = { 0 };
        nvmlMemory_v2_t m2 = { .version = NVML_MEMORY_V2 };
        int r = nvmlInit_v2();
        if (r == 0)
                r = nvmlDeviceGetHandleByIndex_v2((unsigned)d, &dev);
        int r1 = r ? r : nvmlDeviceGetMemoryInfo(dev, &m);
        int r2 = r ? r : nvmlDeviceGetMemoryInfo_v2(dev, &m2);
        printf("nvml rc=%d rc2=%d total=%llu used=%llu free=%llu total2=%llu used2=%llu free2=%llu\n", r1, r2, m.total,
               m.used, m.free, m2.total, m2.used, m2.free);
}

static void cmd_used(int d)
{
        printf("used rc=0 region=%lld here=%llu device=%llu\n", region_used(d), tessera_fake_cuda_used(d),
               tessera_fake_cuda_device_used(d));
}

/* ---- many at once ---- */

static void cmd_stress(long iters, uint64_t max, uint64_t limit)
{
        unsigned seed = (unsigned)getpid();
        CUdeviceptr held[16] = { 0 };
        long ok = 0, oom = 0, errors = 0, over = 0;
        long long max_region = 0, max_device = 0;
        int d = current_dev();

        for (long i = 0; i < iters; i++) {
                int slot = (int)(rand_r(&seed) % 16);
                if (held[slot]) {
                        if (cuMemFree_v2(held[slot]) != CUDA_SUCCESS)
                                errors++;
                        held[slot] = 0;
                        continue;
                }
                CUresult r = cuMemAlloc_v2(&held[slot], 1 + rand_r(&seed) % max);
                if (r == CUDA_ERROR_OUT_OF_MEMORY) {
                        oom++;
                        held[slot] = 0;
                        continue;
                }
                if (r != CUDA_SUCCESS) {
                        errors++;
                        held[slot] = 0;
                        continue;
                }
                ok++;
                long long u = region_used(d), dev = (long long)tessera_fake_cuda_device_used(d);
                max_region = u > max_region ? u : max_region;
                max_device = dev > max_device ? dev : max_device;
                over += (uint64_t)u > limit || (uint64_t)dev > limit;
        }
        for (int s = 0; s < 16; s++)
                if (held[s] && cuMemFree_v2(held[s]) != CUDA_SUCCESS)
                        errors++;
        printf("stress rc=0 ok=%ld oom=%ld errors=%ld over=%ld max_region=%lld max_device=%lld\n", ok, oom, errors,
               over, max_region, max_device);
}

struct worker {
        pthread_t thread;
        CUcontext ctx;
        long iters;
        unsigned seed;
        long ok, oom, errors;
        long long max_region;
};

static const char *const families[] = { "plain",     "managed", "pitch", "async",   "async_ptsz", "pool",
                                        "pool_ptsz", "create",  "array", "array3d", "mipmap" };

static void *work(void *arg)
{
        struct worker *w = arg;
        struct {
                const char *family;
                uint64_t key;
        } held[8] = { { 0 } };

        if (cuCtxSetCurrent(w->ctx) != CUDA_SUCCESS) {
                w->errors++;
                return NULL;
        }
        for (long i = 0; i < w->iters; i++) {
                int slot = (int)(rand_r(&w->seed) % 8);
                if (held[slot].key) {
                        if (free_family(held[slot].family, held[slot].key) != CUDA_SUCCESS)
                                w->errors++;
                        held[slot].key = 0;
                        continue;
                }
                const char *family = families[rand_r(&w->seed) % (sizeof(families) / sizeof(families[0]))];
                uint64_t bytes = !strcmp(family, "create") ? 2 << 20 : 1 + rand_r(&w->seed) % (1 << 20);
                CUresult r = alloc_family(family, bytes, 0, &held[slot].key, -1);
                if (r == CUDA_SUCCESS) {
                        held[slot].family = family;
                        w->ok++;
                        long long u = region_used(0);
                        w->max_region = u > w->max_region ? u : w->max_region;
                } else {
                        held[slot].key = 0;
                        if (r == CUDA_ERROR_OUT_OF_MEMORY)
                                w->oom++;
                        else
                                w->errors++;
                }
                if (i % 16 == 0) {
                        size_t f, t;
                        if (cuMemGetInfo_v2(&f, &t) != CUDA_SUCCESS || f > t)
                                w->errors++;
                }
        }
        for (int s = 0; s < 8; s++)
                if (held[s].key && free_family(held[s].family, held[s].key) != CUDA_SUCCESS)
                        w->errors++;
        return NULL;
}

static void cmd_threads(int n, long iters)
{
        struct worker w[64];
        CUcontext ctx;
        long ok = 0, oom = 0, errors = 0;
        long long max_region = 0, before = region_used(0), fake_before = (long long)tessera_fake_cuda_used(0);

        if (n > 64)
                n = 64;
        if (cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS) {
                printf("threads rc=-1\n");
                return;
        }
        for (int i = 0; i < n; i++) {
                w[i] = (struct worker){ .ctx = ctx, .iters = iters, .seed = (unsigned)(i * 7919 + 1) };
                if (pthread_create(&w[i].thread, NULL, work, &w[i]) != 0)
                        n = i;
        }
        for (int i = 0; i < n; i++) {
                pthread_join(w[i].thread, NULL);
                ok += w[i].ok;
                oom += w[i].oom;
                errors += w[i].errors;
                max_region = w[i].max_region > max_region ? w[i].max_region : max_region;
        }
        printf("threads rc=0 ok=%ld oom=%ld errors=%ld max_region=%lld left=%lld fake_left=%lld\n", ok, oom, errors,
               max_region, charged_since(0, before), (long long)tessera_fake_cuda_used(0) - fake_before);
}

int main(int argc, char **argv)
{
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (int i = 1; i < argc; i++) {
                char *f[8], *save = NULL, *arg = argv[i];
                int n = 0;
                for (char *t = strtok_r(arg, ":", &save); t && n < 8; t = strtok_r(NULL, ":", &save))
                        f[n++] = t;
                if (n == 0)
                        continue;
                int a1 = n > 1 ? (int)strtol(f[1], NULL, 10) : 0;
                if (!strcmp(f[0], "init")) {
                        printf("init rc=%d\n", (int)cuInit(0));
                } else if (!strcmp(f[0], "ctx")) {
                        CUcontext c = NULL;
                        CUresult r = cuDevicePrimaryCtxRetain(&c, a1);
                        if (r == CUDA_SUCCESS)
                                r = cuCtxSetCurrent(c);
                        printf("ctx rc=%d\n", (int)r);
                } else if (!strcmp(f[0], "alloc")) {
                        cmd_alloc(f, n);
                } else if (!strcmp(f[0], "free")) {
                        cmd_free();
                } else if (!strcmp(f[0], "freeall")) {
                        while (nallocs > 0)
                                cmd_free();
                } else if (!strcmp(f[0], "info")) {
                        cmd_info();
                } else if (!strcmp(f[0], "total")) {
                        cmd_total(a1);
                } else if (!strcmp(f[0], "nvml")) {
                        cmd_nvml(a1);
                } else if (!strcmp(f[0], "used")) {
                        cmd_used(a1);
                } else if (!strcmp(f[0], "route")) {
                        cmd_route(f, n);
                } else if (!strcmp(f[0], "exec")) {
                        printf("exec rc=0\n");
                        argv[i] = argv[0];
                        execv("/proc/self/exe", argv + i);
                        printf("exec rc=-1 %s\n", strerror(errno));
                        return 1;
                } else if (!strcmp(f[0], "hold")) {
                        printf("hold rc=0\n");
                        for (;;)
                                pause();
                } else if (!strcmp(f[0], "stress") && n > 3) {
                        cmd_stress(strtol(f[1], NULL, 10), strtoull(f[2], NULL, 0), strtoull(f[3], NULL, 0));
                } else if (!strcmp(f[0], "threads") && n > 2) {
                        cmd_threads(a1, strtol(f[2], NULL, 10));
                } else {
                        printf("%s rc=-1 unknown\n", f[0]);
                }
        }
        return 0;
}
