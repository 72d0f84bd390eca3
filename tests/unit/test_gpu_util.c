/* test_gpu_util.c - a container's share of a GPU from NVML's per-process
 * samples (gpu_util.c), as the agent writes it for the fGPU limiter. */
#include "common/compat.h"

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

int main(void)
{
        static const struct test tests[] = {
                TEST(test_a_container_sums_its_processes_means),
                TEST(test_no_samples_or_no_processes_is_idle),
                TEST(test_never_above_the_whole_gpu),
                TEST(test_usage_reads_the_measurement),
                { 0 },
        };
        return test_main(tests);
}
