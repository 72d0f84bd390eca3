/* test_cgroup_tune.c - the favordynmods remount read from mountinfo lines
 * (its target, flags and options) and the kernel's feature list; the
 * remount itself is run by the agent's integration tests. */
#include "common/compat.h"

#include <sys/mount.h>

#include "../lib/test.h"
#include "agent/container/cgroup_tune.h"

static void test_hybrid_unified_mount(void)
{
        char *target = NULL, *data = NULL;
        unsigned long flags = 0;

        CHECK_INTEQ(cgroup_favordynmods_remount("36 35 0:31 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime "
                                                "shared:10 - cgroup2 cgroup2 rw,nsdelegate\n",
                                                &target, &flags, &data),
                    1);
        CHECK_STREQ(target, "/sys/fs/cgroup/unified");
        CHECK(flags == (MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME));
        CHECK_STREQ(data, "nsdelegate,favordynmods");
        free(target);
        free(data);
}

static void test_v2_mount_several_optional_fields(void)
{
        char *target = NULL, *data = NULL;
        unsigned long flags = 0;

        CHECK_INTEQ(cgroup_favordynmods_remount("29 23 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime shared:4 "
                                                "master:1 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot",
                                                &target, &flags, &data),
                    1);
        CHECK_STREQ(target, "/sys/fs/cgroup");
        CHECK(flags == (MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME));
        CHECK_STREQ(data, "nsdelegate,memory_recursiveprot,favordynmods");
        free(target);
        free(data);
}

static void test_no_remount(void)
{
        char *target = NULL, *data = NULL;
        unsigned long flags = 0;

        /* set already */
        CHECK_INTEQ(cgroup_favordynmods_remount("36 35 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 "
                                                "rw,favordynmods",
                                                &target, &flags, &data),
                    0);
        /* a v1 hierarchy, another file system, a short or odd line */
        CHECK_INTEQ(cgroup_favordynmods_remount("40 35 0:35 / /sys/fs/cgroup/cpu rw,relatime shared:14 - cgroup cgroup "
                                                "rw,cpu",
                                                &target, &flags, &data),
                    0);
        CHECK_INTEQ(cgroup_favordynmods_remount("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw", &target,
                                                &flags, &data),
                    0);
        CHECK_INTEQ(cgroup_favordynmods_remount("36 35 0:31 / /x rw - cgroup2", &target, &flags, &data), 0);
        CHECK_INTEQ(cgroup_favordynmods_remount("", &target, &flags, &data), 0);
        CHECK_INTEQ(cgroup_favordynmods_remount("36 35 0:31 / /my\\040cgroup rw - cgroup2 cgroup2 rw", &target, &flags,
                                                &data),
                    0);
        CHECK(!target && !data);
}

static void test_offered(void)
{
        CHECK(cgroup_favordynmods_offered("nsdelegate\nfavordynmods\nmemory_localevents\n"));
        CHECK(!cgroup_favordynmods_offered("nsdelegate\nmemory_localevents\n"));
        CHECK(!cgroup_favordynmods_offered("nofavordynmods\n"));
        CHECK(!cgroup_favordynmods_offered(""));
}

static const struct test tests[] = {
        TEST(test_hybrid_unified_mount),
        TEST(test_v2_mount_several_optional_fields),
        TEST(test_no_remount),
        TEST(test_offered),
        { 0 },
};

int main(void)
{
        return test_main(tests);
}
