/* test_gpu_util.c - a container's share of a GPU from NVML's per-process
 * samples (gpu_util.c), as the agent writes it for the fGPU limiter; and
 * the samples the mock plugin's fake NVML makes of the fake driver's
 * launches (src/fakecuda/fake_activity.c), which the agent reads alike. */
#include "common/compat.h"

#include <dlfcn.h>
#include <libgen.h>
#include <time.h>

#include "../lib/test.h"
#include "agent/gpu_util.h"
#include "agent/gpu_wiring.h"
#include "common/fs.h"
#include "fgpu/region.h"

static const nvmlProcessUtilizationSample_t samples[] = {
        { .pid = 10, .timeStamp = 1, .smUtil = 30 }, { .pid = 10, .timeStamp = 2, .smUtil = 50 },
        { .pid = 11, .timeStamp = 2, .smUtil = 20 }, { .pid = 99, .timeStamp = 1, .smUtil = 70 },
        { .pid = 99, .timeStamp = 2, .smUtil = 70 },
};

static void test_a_container_sums_its_processes_means(void)
{
        const pid_t mine[] = { 10, 11, 12 }, theirs[] = { 99 };

        /* pid 10: mean of 30 and 50; pid 11: 20; pid 12 ran nothing */
        CHECK_INTEQ(gpu_util_container_percent(samples, ARRAY_SIZE(samples), mine, ARRAY_SIZE(mine)), 60);
        CHECK_INTEQ(gpu_util_container_percent(samples, ARRAY_SIZE(samples), theirs, ARRAY_SIZE(theirs)), 70);
}

static void test_no_samples_or_no_processes_is_idle(void)
{
        const pid_t mine[] = { 10 };

        CHECK_INTEQ(gpu_util_container_percent(NULL, 0, mine, ARRAY_SIZE(mine)), 0);
        CHECK_INTEQ(gpu_util_container_percent(samples, ARRAY_SIZE(samples), NULL, 0), 0);
}

static void test_never_above_the_whole_gpu(void)
{
        const pid_t all[] = { 10, 11, 99 };

        CHECK_INTEQ(gpu_util_container_percent(samples, ARRAY_SIZE(samples), all, ARRAY_SIZE(all)), 100);
}

/* What the agent reports as lastStat's cuda_util: the measurement written
 * into the kernel's region, while it is fresh. */
static void test_usage_reads_the_measurement(void)
{
        char dir[] = "/tmp/tessera-test-gpu-util.XXXXXX";
        struct agent_conf conf = { 0 };
        struct agent_ctx ctx = { .conf = &conf };
        struct fgpu_region *r = NULL;
        uint64_t used = 0, limit = 0;
        int devices = 0, util = 0;
        char why[256];

        if (!mkdtemp(dir))
                SKIP("no temporary directory");
        conf.state_dir = dir;
        _cleanup_free_ char *k = gpu_wiring_fgpu_dir(&ctx, "k1");
        _cleanup_free_ char *run = xasprintf("%s/run", k), *region = xasprintf("%s/run/region", k);
        _cleanup_free_ char *cf = xasprintf("%s/fgpu.conf", k);
        static const char text[] = "memory_limit_0 = 1073741824\nsm_limit_0 = 50\n";
        CHECK(fs_mkdir_p(run, 0755, NULL) == 0);
        CHECK(fs_write_file_atomic(cf, text, strlen(text), 0644, NULL) == 0);
        CHECK(fgpu_region_open(region, true, &r, why, sizeof(why)) == 0);
        if (!r)
                return;
        CHECK(gpu_wiring_usage(&ctx, "k1", &used, &limit, &devices, &util));
        CHECK(limit == 1073741824 && devices == 1 && util == -1); /* never measured */
        fgpu_region_set_util(r, 0, 37);
        CHECK(gpu_wiring_usage(&ctx, "k1", &used, &limit, &devices, &util));
        CHECK_INTEQ(util, 37);
        CHECK(!gpu_wiring_usage(&ctx, "no-such-kernel", &used, &limit, &devices, &util));
        fgpu_region_close(r);
        fs_remove_tree(dir, NULL);
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_ctx_create_fn)(void **, unsigned, int);
typedef int (*cu_module_load_fn)(void **, const void *);
typedef int (*cu_function_fn)(void **, void *, const char *);
typedef int (*cu_release_fn)(void *);
typedef int (*cu_launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                            void **, void **);

/* The fake library name beside this test's directory ($(BUILD)/tests). */
static char *fake_library(const char *name)
{
        char exe[4096];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        if (len <= 0)
                return xstrdup(name);
        exe[len] = '\0';
        return xasprintf("%s/../%s", dirname(exe), name);
}

/* This process launches 5000 one-wave kernels (50 ms of the fake device
 * 1's time) through the fake driver; once the period is over the fake
 * NVML, asked as the agent asks it, has samples of this process on device
 * 1 summing to 50 % of a period, none on device 0, and none newer than
 * the last one seen. */
static void test_the_fake_nvml_samples_the_fake_drivers_launches(void)
{
        _cleanup_free_ char *cuda_path = fake_library("libtessera-fake-cuda.so");
        _cleanup_free_ char *nvml_path = fake_library("libtessera-fake-nvml.so");
        nvmlProcessUtilizationSample_t s[64];
        void *ctx = NULL, *mod = NULL, *fn = NULL;
        nvmlDevice_t d0, d1;
        unsigned int n = 0, sum = 0;
        unsigned long long last = 0;
        int dev = -1;

        if (access(cuda_path, R_OK) < 0 || access(nvml_path, R_OK) < 0)
                SKIP("the fake driver is not built");
        setenv("TESSERA_FAKE_CUDA_DEVICES", "2", 1); /* read once, at the first call into each */
        void *cuda = dlopen(cuda_path, RTLD_NOW | RTLD_LOCAL), *nvml = dlopen(nvml_path, RTLD_NOW | RTLD_LOCAL);
        CHECK(cuda && nvml);
        if (!cuda || !nvml)
                return;
        struct gpu_util *u = gpu_util_open(nvml_path); /* the agent's use of it: it samples per process */
        CHECK(u != NULL);
        gpu_util_close(u);
        nvml_process_utilization_fn util = (nvml_process_utilization_fn)dlsym(nvml, "nvmlDeviceGetProcessUtilization");
        nvml_handle_fn handle = (nvml_handle_fn)dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2");
        CHECK_INTEQ(((nvml_void_fn)dlsym(nvml, "nvmlInit_v2"))(), 0);
        CHECK(handle(0, &d0) == 0 && handle(1, &d1) == 0);
        CHECK_INTEQ(util(d1, NULL, &n, 0), NVML_ERROR_NOT_FOUND); /* nothing launched yet */

        CHECK_INTEQ(((cu_init_fn)dlsym(cuda, "cuInit"))(0), 0);
        CHECK_INTEQ(((cu_device_get_fn)dlsym(cuda, "cuDeviceGet"))(&dev, 1), 0);
        CHECK_INTEQ(((cu_ctx_create_fn)dlsym(cuda, "cuCtxCreate_v2"))(&ctx, 0, dev), 0);
        CHECK_INTEQ(((cu_module_load_fn)dlsym(cuda, "cuModuleLoadData"))(&mod, "image"), 0);
        CHECK_INTEQ(((cu_function_fn)dlsym(cuda, "cuModuleGetFunction"))(&fn, mod, "spin"), 0);
        cu_launch_fn launch = (cu_launch_fn)dlsym(cuda, "cuLaunchKernel");
        for (int i = 0; i < 5000; i++) /* 216 x 1024 threads: one wave of 108 SMs */
                CHECK_INTEQ(launch(fn, 216, 1, 1, 1024, 1, 1, 0, NULL, NULL, NULL), 0);
        struct timespec period = { 0, 200 * 1000 * 1000 }; /* the periods they fell in are over */
        nanosleep(&period, NULL);

        n = 0;
        CHECK_INTEQ(util(d1, NULL, &n, 0), NVML_ERROR_INSUFFICIENT_SIZE); /* how many */
        CHECK(n >= 1 && n <= 3); /* one period, or split over more on a slow machine */
        unsigned int want = n, small = 0;
        CHECK_INTEQ(util(d1, s, &small, 0), NVML_ERROR_INSUFFICIENT_SIZE);
        CHECK_INTEQ(small, want);
        n = ARRAY_SIZE(s);
        CHECK_INTEQ(util(d1, s, &n, 0), NVML_SUCCESS);
        CHECK_INTEQ(n, want);
        for (unsigned i = 0; i < n && i < ARRAY_SIZE(s); i++) {
                CHECK_INTEQ(s[i].pid, (unsigned)getpid());
                sum += s[i].smUtil;
                last = s[i].timeStamp > last ? s[i].timeStamp : last;
        }
        CHECK(sum >= 48 && sum <= 52); /* each part rounded to the nearest (those under 0.5 % not listed) */
        const pid_t me = getpid();
        CHECK(gpu_util_container_percent(s, n, &me, 1) > 0);
        n = ARRAY_SIZE(s);
        CHECK_INTEQ(util(d1, s, &n, last), NVML_ERROR_NOT_FOUND); /* nothing newer */
        n = ARRAY_SIZE(s);
        CHECK_INTEQ(util(d0, s, &n, 0), NVML_ERROR_NOT_FOUND); /* the other device was idle */
        CHECK_INTEQ(((cu_release_fn)dlsym(cuda, "cuModuleUnload"))(mod), 0);
        CHECK_INTEQ(((cu_release_fn)dlsym(cuda, "cuCtxDestroy_v2"))(ctx), 0);
        ((nvml_void_fn)dlsym(nvml, "nvmlShutdown"))();
        dlclose(nvml);
        dlclose(cuda);
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_a_container_sums_its_processes_means),
                TEST(test_no_samples_or_no_processes_is_idle),
                TEST(test_never_above_the_whole_gpu),
                TEST(test_usage_reads_the_measurement),
                TEST(test_the_fake_nvml_samples_the_fake_drivers_launches),
                { 0 },
        };
        return test_main(tests);
}
