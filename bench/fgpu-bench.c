/* fgpu-bench.c - the client of bench/fgpu-overhead.sh: calls the CUDA
 * driver (libcuda.so.1, found by the loader: the fake driver in the bench)
 * in a tight loop and prints the nanoseconds per call.  Run bare, or with
 * libtessera-fgpu.so preloaded, to see what the hook adds.
 *
 *   fgpu-bench launch N         N cuLaunchKernel of a 1x1 grid, found with dlsym on the library
 *   fgpu-bench launch_linked N  the same, found as a program linked with -lcuda finds it (the
 *                               first definition in the process: the hook's, when preloaded)
 *   fgpu-bench alloc N          N cuMemAlloc_v2 + cuMemFree_v2 of 1 MiB
 *
 * Prints "ns_per_call X" (wall clock) and "cpu_ns_per_call X" (this
 * process's CPU time: what it costs when processes share few cores). */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(clockid_t clock)
{
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define NEED(call)                                                                   \
        do {                                                                         \
                CUresult r_ = (call);                                                \
                if (r_ != CUDA_SUCCESS) {                                            \
                        fprintf(stderr, "fgpu-bench: %s: CUresult %d\n", #call, r_); \
                        exit(1);                                                     \
                }                                                                    \
        } while (0)

int main(int argc, char **argv)
{
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
        CUresult (*init)(unsigned), (*device_get)(CUdevice *, int), (*ctx_create)(CUcontext *, unsigned, CUdevice);
        CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                           void **, void **);
        CUresult (*alloc)(CUdeviceptr *, size_t), (*mem_free)(CUdeviceptr);
        CUresult (*module_load)(CUmodule *, const void *), (*get_function)(CUfunction *, CUmodule, const char *);
        CUdevice dev;
        CUcontext ctx;
        CUmodule mod;
        CUfunction fn;
        long n;
        double t0, t1, c0, c1;

        if (argc != 3 || (n = atol(argv[2])) <= 0 || !lib) {
                fprintf(stderr, "usage: fgpu-bench launch|launch_linked|alloc N (libcuda.so.1 on the loader's path)\n");
                return 2;
        }
        *(void **)&init = dlsym(lib, "cuInit");
        *(void **)&device_get = dlsym(lib, "cuDeviceGet");
        *(void **)&ctx_create = dlsym(lib, "cuCtxCreate_v2");
        *(void **)&launch = dlsym(lib, "cuLaunchKernel");
        *(void **)&alloc = dlsym(lib, "cuMemAlloc_v2");
        *(void **)&mem_free = dlsym(lib, "cuMemFree_v2");
        *(void **)&module_load = dlsym(lib, "cuModuleLoadData");
        *(void **)&get_function = dlsym(lib, "cuModuleGetFunction");
        NEED(init(0));
        NEED(device_get(&dev, 0));
        NEED(ctx_create(&ctx, 0, dev));
        if (strcmp(argv[1], "launch_linked") == 0)
                *(void **)&launch = dlsym(RTLD_DEFAULT, "cuLaunchKernel");
        if (strcmp(argv[1], "launch") == 0 || strcmp(argv[1], "launch_linked") == 0) {
                NEED(module_load(&mod, "fgpu-bench"));
                NEED(get_function(&fn, mod, "spin"));
                t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
                for (long i = 0; i < n; i++)
                        NEED(launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
                t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        } else if (strcmp(argv[1], "alloc") == 0) {
                CUdeviceptr p;
                t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
                for (long i = 0; i < n; i++) {
                        NEED(alloc(&p, 1 << 20));
                        NEED(mem_free(p));
                }
                t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        } else {
                fprintf(stderr, "fgpu-bench: '%s' is not launch, launch_linked or alloc\n", argv[1]);
                return 2;
        }
        printf("ns_per_call %.1f\ncpu_ns_per_call %.1f\n", (t1 - t0) / (double)n, (c1 - c0) / (double)n);
        return 0;
}
