/* test_cgroup_stats.c - a container's counters from fake cgroup v1 and v2
 * trees and a /proc/<pid>/net/dev, and the OOM counter. */
#include "common/compat.h"

#include "../lib/test.h"
#include "agent/container/cgroup_stats.h"
#include "agent/container/container.h"
#include "common/fs.h"

static char root[64];

/* Write root/rel (making its directory). */
static void put(const char *rel, const char *text)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", root, rel), *dir = xstrdup(path);
        *strrchr(dir, '/') = '\0';
        if (fs_mkdir_p(dir, 0755, NULL) < 0 || fs_write_file_atomic(path, text, strlen(text), 0644, NULL) < 0)
                test_fail(__FILE__, __LINE__, "writing '%s'", path);
}

static bool tree_open(void)
{
        snprintf(root, sizeof(root), "/tmp/tessera-test-cgroup.XXXXXX");
        return mkdtemp(root) != NULL;
}

static void tree_close(void)
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", root);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
}

static void test_v1(void)
{
        struct tess_error *err = NULL;
        struct container_stats st;
        uint64_t ooms = 99;

        if (!tree_open())
                SKIP("no temporary directory");
        put("memory/tessera/k1/memory.usage_in_bytes", "1048576\n");
        put("memory/tessera/k1/memory.max_usage_in_bytes", "4194304\n");
        put("memory/tessera/k1/memory.stat", "cache 4096\nrss 8192\ntotal_cache 12288\ntotal_rss 8192\n");
        put("memory/tessera/k1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
        put("cpuacct/tessera/k1/cpuacct.usage", "123456789\n");
        put("pids/tessera/k1/pids.current", "7\n");
        put("blkio/tessera/k1/blkio.throttle.io_service_bytes",
            "8:0 Read 1000\n8:0 Write 200\n8:0 Sync 0\n8:16 Read 24\n8:16 Write 56\nTotal 1280\n");
        CHECK_INTEQ(cgroup_stats_read(root, CGROUP_V1, "/tessera/k1", &st, &err), 0);
        CHECK_INTEQ(st.cpu_usage_ns, 123456789);
        CHECK_INTEQ(st.mem_usage_bytes, 1048576);
        CHECK_INTEQ(st.mem_peak_bytes, 4194304);
        CHECK_INTEQ(st.mem_cache_bytes, 12288);
        CHECK_INTEQ(st.pids, 7);
        CHECK_INTEQ(st.io_read_bytes, 1024);
        CHECK_INTEQ(st.io_write_bytes, 256);
        CHECK_INTEQ(cgroup_oom_kills(root, CGROUP_V1, "/tessera/k1", &ooms, &err), 0);
        CHECK_INTEQ(ooms, 2);
        /* hosts that mount cpu and cpuacct together */
        put("cpu,cpuacct/tessera/k2/cpuacct.usage", "5\n");
        put("memory/tessera/k2/memory.usage_in_bytes", "1\n");
        CHECK_INTEQ(cgroup_stats_read(root, CGROUP_V1, "/tessera/k2", &st, &err), 0);
        CHECK_INTEQ(st.cpu_usage_ns, 5);
        CHECK_INTEQ(st.pids, 0); /* no pids controller: 0, not an error */
        /* a container whose cgroup is gone */
        CHECK_INTEQ(cgroup_stats_read(root, CGROUP_V1, "/tessera/gone", &st, &err), -ENOENT);
        err = tess_error_free(err);
        CHECK_INTEQ(cgroup_oom_kills(root, CGROUP_V1, "/tessera/gone", &ooms, &err), -ENOENT);
        tess_error_free(err);
        tree_close();
}

static void test_v2(void)
{
        struct tess_error *err = NULL;
        struct container_stats st;
        uint64_t ooms = 99;

        if (!tree_open())
                SKIP("no temporary directory");
        put("tessera/k1/cpu.stat", "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n");
        put("tessera/k1/memory.current", "2097152\n");
        put("tessera/k1/memory.peak", "3145728\n");
        put("tessera/k1/memory.stat", "anon 1000\nfile 4096\nkernel 100\n");
        put("tessera/k1/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n");
        put("tessera/k1/pids.current", "3\n");
        put("tessera/k1/io.stat", "8:0 rbytes=100 wbytes=20 rios=1 wios=1 dbytes=0 dios=0\n"
                                  "8:16 rbytes=1 wbytes=2 rios=1 wios=1 dbytes=0 dios=0\n");
        CHECK_INTEQ(cgroup_stats_read(root, CGROUP_V2, "/tessera/k1", &st, &err), 0);
        CHECK_INTEQ(st.cpu_usage_ns, 2500000);
        CHECK_INTEQ(st.mem_usage_bytes, 2097152);
        CHECK_INTEQ(st.mem_peak_bytes, 3145728);
        CHECK_INTEQ(st.mem_cache_bytes, 4096);
        CHECK_INTEQ(st.pids, 3);
        CHECK_INTEQ(st.io_read_bytes, 101);
        CHECK_INTEQ(st.io_write_bytes, 22);
        CHECK_INTEQ(cgroup_oom_kills(root, CGROUP_V2, "/tessera/k1", &ooms, &err), 0);
        CHECK_INTEQ(ooms, 1);
        CHECK_INTEQ(cgroup_stats_read(root, CGROUP_V2, "/tessera/gone", &st, &err), -ENOENT);
        tess_error_free(err);
        CHECK(cgroup_swap_limit_supported(root, CGROUP_V2));
        CHECK(!cgroup_swap_limit_supported(root, CGROUP_V1));
        tree_close();
}

static void test_mode_detect(void)
{
        CHECK(cgroup_mode_detect("/tmp") == CGROUP_V1);
        if (access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0)
                CHECK(cgroup_mode_detect("/sys/fs/cgroup/unified") == CGROUP_V2);
        if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
                CHECK(cgroup_mode_detect("/sys/fs/cgroup") == CGROUP_V2);
}

static void test_net_dev(void)
{
        struct tess_error *err = NULL;
        uint64_t rx = 0, tx = 0;

        if (!tree_open())
                SKIP("no temporary directory");
        put("net_dev",
            "Inter-|   Receive                                                |  Transmit\n"
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
            "    lo:     500       5    0    0    0     0          0         0      500       5    0    0    0     0       0          0\n"
            "  eth0:    1941      20    0    0    0     0          0         0     1081      11    0    0    0     0       0          0\n"
            "  eth1:1000000 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n");
        _cleanup_free_ char *path = xasprintf("%s/net_dev", root);
        CHECK_INTEQ(net_dev_read(path, &rx, &tx, &err), 0);
        CHECK_INTEQ(rx, 1001941);
        CHECK_INTEQ(tx, 1088);
        CHECK(net_dev_read("/nonexistent/net/dev", &rx, &tx, &err) < 0);
        tess_error_free(err);
        tree_close();
}

static void test_pids(void)
{
        struct tess_error *err = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;

        if (!tree_open())
                SKIP("no temporary directory");
        put("pids/tessera/k1/cgroup.procs", "41\n42\n1000\n");
        put("tessera/k2/cgroup.procs", "7\n");
        CHECK_INTEQ(cgroup_pids_read(root, CGROUP_V1, "/tessera/k1", &pids, &n, &err), 0);
        CHECK_INTEQ(n, 3);
        if (n == 3)
                CHECK(pids[0] == 41 && pids[1] == 42 && pids[2] == 1000);
        free(pids);
        pids = NULL;
        CHECK_INTEQ(cgroup_pids_read(root, CGROUP_V2, "/tessera/k2", &pids, &n, &err), 0);
        CHECK(n == 1 && pids[0] == 7);
        CHECK_INTEQ(cgroup_pids_read(root, CGROUP_V1, "/tessera/gone", &pids, &n, &err), -ENOENT);
        tess_error_free(err);
        tree_close();
}

static const struct test tests[] = {
        TEST(test_v1),
        TEST(test_v2),
        TEST(test_mode_detect),
        TEST(test_net_dev),
        TEST(test_pids),
        {},
};

int main(void)
{
        return test_main(tests);
}
