/* test_gpu_util.c - a container's share of a GPU from NVML's per-process
 * samples (gpu_util.c), as the agent writes it for the fGPU limiter. */
#include "common/compat.h"

#include "../lib/test.h"
#include "agent/gpu_util.h"

static const struct gpu_proc_sample samples[] = {
        { .pid = 10, .timestamp = 1, .sm = 30 }, { .pid = 10, .timestamp = 2, .sm = 50 },
        { .pid = 11, .timestamp = 2, .sm = 20 }, { .pid = 99, .timestamp = 1, .sm = 70 },
        { .pid = 99, .timestamp = 2, .sm = 70 },
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

int main(void)
{
        static const struct test tests[] = {
                TEST(test_a_container_sums_its_processes_means),
                TEST(test_no_samples_or_no_processes_is_idle),
                TEST(test_never_above_the_whole_gpu),
                { 0 },
        };
        return test_main(tests);
}
