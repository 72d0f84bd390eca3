/* test_container_teardown.c - what a container leaves behind, removed
 * (src/agent/container/container_teardown.c): a step that fails hands back
 * its error, which the callers (the monitor, container_destroy/remove)
 * print; it once handed back the failure without its error, and the agent
 * and the monitor crashed reading it. */
#include "common/compat.h"

#include "../lib/test.h"

#include "agent/container/container-internal.h"

static void test_a_failed_step_has_its_error(void)
{
        char dir[] = "/tmp/tessera-test-teardown.XXXXXX";
        struct tess_error *err = NULL;

        if (!mkdtemp(dir)) {
                test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
                return;
        }
        _cleanup_free_ char *rootfs = xasprintf("%s/rootfs", dir), *ipam = xasprintf("%s/ipam", dir);
        _cleanup_free_ char *file = xasprintf("%s/file", dir), *netns = xasprintf("%s/file/netns", dir);
        FILE *f = fopen(file, "w");
        if (f)
                fclose(f);
        /* not mounted: nothing to do; the network namespace's path is under
         * a file (ENOTDIR), so removing it fails */
        struct container_record rec = {
                .id = (char *)"teardown",
                .rootfs = rootfs,
                .netns = netns,
                .veth = (char *)"tvnosuchveth0",
                .bridge = (char *)"tbnosuch0",
                .ip = (char *)"10.254.0.2",
                .ipam_dir = ipam,
                .owners_dir = dir,
        };
        int r = container_teardown(&rec, &err);
        CHECK(r < 0);
        CHECK(err != NULL);
        if (err) {
                CHECK(strstr(err->msg, netns) != NULL);
                tess_error_free(err);
        }
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
}

static const struct test tests[] = {
        TEST(test_a_failed_step_has_its_error),
        {},
};

int main(void)
{
        return test_main(tests);
}
