// fgpu_check.cu - what tests/gpu/run.sh runs on a real GPU under
// libtessera-fgpu.so (CUDA runtime API, so that it goes through the
// runtime's cuGetProcAddress lookups as real programs do).
//
//   fgpu_check info              total and free memory as the program sees it
//   fgpu_check try GIB           allocate GIB: exit 0 if it worked, 2 if out of memory
//   fgpu_check hold GIB          allocate GIB, print "held", wait to be killed
//   fgpu_check spin SECONDS      compute-bound kernels back to back: kernels per second
//   fgpu_check tiny N            N tiny kernels: ns per launch
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

__global__ void fma_loop(float *out, int iters)
{
        float a = threadIdx.x * 0.001f, b = 1.0001f, c = 0.5f;
        for (int i = 0; i < iters; i++) {
                a = fmaf(a, b, c);
                c = fmaf(c, b, a);
        }
        if (a == 12345.f)
                out[0] = c; /* never: keeps the loop */
}

__global__ void tiny(float *out)
{
        if (threadIdx.x == 1024)
                out[0] = 1;
}

int main(int argc, char **argv)
{
        if (argc < 2)
                return 64;
        const char *mode = argv[1];
        double arg = argc > 2 ? atof(argv[2]) : 0;
        size_t gib = (size_t)1 << 30;
        if (!strcmp(mode, "info")) {
                size_t f, t;
                if (cudaMemGetInfo(&f, &t) != cudaSuccess)
                        return 1;
                printf("total %.2f GiB free %.2f GiB\n", t / (double)gib, f / (double)gib);
                return 0;
        }
        if (!strcmp(mode, "try") || !strcmp(mode, "hold")) {
                void *p;
                cudaError_t e = cudaMalloc(&p, (size_t)(arg * gib));
                if (e == cudaErrorMemoryAllocation)
                        return 2;
                if (e != cudaSuccess)
                        return 1;
                if (!strcmp(mode, "try"))
                        return 0;
                printf("held\n");
                fflush(stdout);
                pause();
                return 0;
        }
        float *out;
        cudaMalloc(&out, 4);
        if (!strcmp(mode, "spin")) {
                /* each kernel: 132 SMs' worth of blocks, ~2 ms of FMAs on an H100 */
                fma_loop<<<1056, 256>>>(out, 20000);
                cudaDeviceSynchronize();
                long n = 0;
                double t0 = now();
                while (now() - t0 < arg) {
                        for (int i = 0; i < 10; i++)
                                fma_loop<<<1056, 256>>>(out, 20000);
                        cudaDeviceSynchronize();
                        n += 10;
                }
                printf("%.1f kernels/s\n", n / (now() - t0));
                return 0;
        }
        if (!strcmp(mode, "tiny")) {
                long n = (long)arg;
                tiny<<<1, 32>>>(out);
                cudaDeviceSynchronize();
                double t0 = now();
                for (long i = 0; i < n; i++)
                        tiny<<<1, 32>>>(out);
                cudaDeviceSynchronize();
                printf("%.1f ns/launch\n", (now() - t0) * 1e9 / n);
                return 0;
        }
        return 64;
}
