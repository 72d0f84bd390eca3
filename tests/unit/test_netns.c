/* test_netns.c - an agent's claim on its bridge (netns_bridge_claim): one
 * agent per bridge in a network namespace. */
#include "common/compat.h"

#include <fcntl.h>

#include "../lib/test.h"
#include "agent/container/netns.h"

static bool tmpdir(char *dir, size_t len)
{
        snprintf(dir, len, "/tmp/tessera-test-netns.XXXXXX");
        return mkdtemp(dir) != NULL;
}

static void rmtree(const char *dir)
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
}

static void test_second_claim_names_the_first(void)
{
        struct tess_error *err = NULL;
        char dir[64];

        if (!tmpdir(dir, sizeof(dir)))
                SKIP("no temporary directory");
        _cleanup_free_ char *locks = xasprintf("%s/bridges", dir);
        int first = netns_bridge_claim(locks, "tessera0", "/var/lib/tessera/agent-a", &err);
        CHECK(first >= 0);
        /* flock is per open file: a second claim conflicts even in one process */
        CHECK_INTEQ(netns_bridge_claim(locks, "tessera0", "/var/lib/tessera/agent-b", &err), -EBUSY);
        CHECK(err && strstr(err->msg, "'tessera0'") && strstr(err->msg, "'/var/lib/tessera/agent-a'"));
        err = tess_error_free(err);
        /* another bridge is another claim */
        int other = netns_bridge_claim(locks, "tessera1", "/var/lib/tessera/agent-b", &err);
        CHECK(other >= 0);
        /* the first agent gone (its fd closed, as at its exit or kill -9), the bridge is free */
        close(first);
        int again = netns_bridge_claim(locks, "tessera0", "/var/lib/tessera/agent-b", &err);
        CHECK(again >= 0);
        CHECK(fcntl(again, F_GETFD) & FD_CLOEXEC);
        close(again);
        close(other);
        rmtree(dir);
}

static const struct test tests[] = {
        TEST(test_second_claim_names_the_first),
        {},
};

int main(void)
{
        return test_main(tests);
}
