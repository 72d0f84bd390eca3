/* test_oci_runtime.c - the agent's choice between crun and runc from fake
 * cgroup trees and PATHs. */
#include "common/compat.h"

#include <sys/stat.h>

#include "../lib/test.h"
#include "agent/container/oci_runtime.h"
#include "agent/container/proc.h"
#include "common/fs.h"

static char dir[64];

static void put(const char *rel, const char *text, mode_t mode)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, rel), *parent = xstrdup(path);
        *strrchr(parent, '/') = '\0';
        if (fs_mkdir_p(parent, 0755, NULL) < 0 || fs_write_file_atomic(path, text, strlen(text), mode, NULL) < 0)
                test_fail(__FILE__, __LINE__, "writing '%s'", path);
}

static void tree_open(void)
{
        snprintf(dir, sizeof(dir), "/tmp/tessera-test-runtime.XXXXXX");
        if (!mkdtemp(dir))
                test_fail(__FILE__, __LINE__, "mkdtemp");
}

static void tree_close(void)
{
        fs_remove_tree(dir, NULL);
}

static void test_crun_fits(void)
{
        tree_open();
        _cleanup_free_ char *v1 = xasprintf("%s/v1", dir), *hybrid = xasprintf("%s/hybrid", dir),
                            *busy = xasprintf("%s/busy", dir);
        put("v1/cpu/tasks", "", 0644);
        put("hybrid/unified/cgroup.controllers", "\n", 0644);
        put("busy/unified/cgroup.controllers", "hugetlb\n", 0644);
        CHECK(oci_runtime_crun_fits(v1));     /* v1 controllers alone */
        CHECK(oci_runtime_crun_fits(hybrid)); /* hybrid, nothing on cgroup2 */
        CHECK(!oci_runtime_crun_fits(busy));  /* hybrid with a controller on cgroup2: crun refuses */
        tree_close();
}

static void test_resolve(void)
{
        tree_open();
        _cleanup_free_ char *bin = xasprintf("%s/bin", dir), *nothing = xasprintf("%s/none", dir),
                            *fits = xasprintf("%s/fits", dir), *busy = xasprintf("%s/busy", dir),
                            *path = xasprintf("%s:%s", nothing, bin);
        put("bin/crun", "#!/bin/sh\n", 0755);
        put("notexec/crun", "", 0644);
        put("fits/unified/cgroup.controllers", "", 0644);
        put("busy/unified/cgroup.controllers", "hugetlb\n", 0644);
        CHECK(proc_in_path("crun", path));
        CHECK(!proc_in_path("runc-nowhere", path));
        _cleanup_free_ char *notexec = xasprintf("%s/notexec", dir);
        CHECK(!proc_in_path("crun", notexec));
        CHECK_STREQ(oci_runtime_resolve("auto", fits, path), "crun");
        CHECK_STREQ(oci_runtime_resolve("auto", busy, path), "runc");
        CHECK_STREQ(oci_runtime_resolve("auto", fits, nothing), "runc"); /* crun not installed */
        CHECK_STREQ(oci_runtime_resolve("/opt/runc-1.2/runc", fits, path), "/opt/runc-1.2/runc");
        tree_close();
}

static const struct test tests[] = {
        TEST(test_crun_fits),
        TEST(test_resolve),
        { 0 },
};

int main(void)
{
        return test_main(tests);
}
