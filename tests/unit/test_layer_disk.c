/* test_layer_disk.c - a container's writable layer on a filesystem of its
 * own size (src/agent/container/layer_disk.c), as root: what fits is
 * written, the rest is ENOSPC; unmounted, its loop device is free again;
 * sizes under the minimum and an existing file are refused. */
#include "common/compat.h"

#include "../lib/test.h"
#include <fcntl.h>
#include <sys/statvfs.h>
#include <sys/stat.h>

#include "agent/container/layer_disk.h"
#include "agent/container/rootfs.h"
#include "common/fs.h"

static char dir[64], image[96], mnt[96];

static bool setup(void)
{
        if (geteuid() != 0)
                return false;
        if (access("/sbin/mkfs.ext4", X_OK) < 0 && access("/usr/sbin/mkfs.ext4", X_OK) < 0)
                return false;
        snprintf(dir, sizeof(dir), "/tmp/tessera-test-layer.XXXXXX");
        if (!mkdtemp(dir))
                return false;
        snprintf(image, sizeof(image), "%s/rw.img", dir);
        snprintf(mnt, sizeof(mnt), "%s/rw", dir);
        return mkdir(mnt, 0755) == 0;
}

static void cleanup(void)
{
        layer_disk_unmount(mnt, NULL);
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", dir);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
}

/* Bytes written into path before the first error (its errno in *err_no). */
static int64_t write_until_error(const char *path, int64_t max, int *err_no)
{
        static char block[1 << 16];
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int64_t done = 0;

        *err_no = 0;
        if (fd < 0) {
                *err_no = errno;
                return 0;
        }
        while (done < max) {
                ssize_t n = write(fd, block, sizeof(block));
                if (n < 0) {
                        *err_no = errno;
                        break;
                }
                done += n;
        }
        if (fsync(fd) < 0 && !*err_no)
                *err_no = errno;
        close(fd);
        return done;
}

/* Is a loop device backed by `file`?  (Each loop device's backing_file in sysfs.) */
static bool loop_backs(const char *file)
{
        for (int i = 0; i < 4096; i++) {
                _cleanup_free_ char *p = xasprintf("/sys/block/loop%d/loop/backing_file", i), *text = NULL;
                size_t len;
                if (fs_read_file(p, 4096, &text, &len, NULL) < 0)
                        continue;
                if (strncmp(text, file, strlen(file)) == 0)
                        return true;
        }
        return false;
}

static void test_writes_stop_at_the_size(void)
{
        struct tess_error *err = NULL;
        struct statvfs sv;
        int e;

        if (!setup())
                SKIP("needs root and mkfs.ext4");
        if (layer_disk_make(image, mnt, 8 << 20, &err) < 0) {
                test_fail(__FILE__, __LINE__, "%s", err->msg);
                tess_error_free(err);
                cleanup();
                return;
        }
        CHECK(rootfs_is_mounted(mnt));
        _cleanup_free_ char *upper = xasprintf("%s/upper", mnt), *work = xasprintf("%s/work", mnt);
        _cleanup_free_ char *file = xasprintf("%s/upper/fill", mnt);
        CHECK(access(upper, F_OK) == 0 && access(work, F_OK) == 0);
        CHECK(statvfs(mnt, &sv) == 0 && (int64_t)sv.f_blocks * (int64_t)sv.f_frsize <= 8 << 20);
        /* no blocks only root may use: what others may not is ext4's own
         * reserve (2 %), not the 5 % more that mkfs keeps for root */
        CHECK((sv.f_bfree - sv.f_bavail) * 100 < sv.f_blocks * 4);
        int64_t wrote = write_until_error(file, 9 << 20, &e);
        CHECK_INTEQ(e, ENOSPC);
        CHECK(wrote > 6 << 20 && wrote < 8 << 20); /* nearly all of it, nothing for root held back */
        struct stat st;
        CHECK(stat(image, &st) == 0 && st.st_size == 8 << 20);
        CHECK(loop_backs(image));
        CHECK_INTEQ(layer_disk_unmount(mnt, &err), 0);
        CHECK(!rootfs_is_mounted(mnt));
        CHECK_INTEQ(layer_disk_unmount(mnt, &err), 0); /* twice is fine */
        for (int i = 0; i < 50 && loop_backs(image); i++)
                usleep(20 * 1000); /* (autoclear runs as the last reference goes) */
        CHECK(!loop_backs(image));
        cleanup();
}

static void test_refused(void)
{
        struct tess_error *err = NULL;

        if (!setup())
                SKIP("needs root and mkfs.ext4");
        CHECK_INTEQ(layer_disk_make(image, mnt, 4 << 20, &err), -EINVAL);
        CHECK(err && strstr(err->msg, "8 MiB"));
        err = tess_error_free(err);
        CHECK(access(image, F_OK) < 0);
        CHECK(fs_write_file_atomic(image, "x", 1, 0600, NULL) == 0);
        CHECK_INTEQ(layer_disk_make(image, mnt, 8 << 20, &err), -EEXIST);
        err = tess_error_free(err);
        CHECK(!rootfs_is_mounted(mnt));
        cleanup();
}

static const struct test tests[] = {
        TEST(test_writes_stop_at_the_size),
        TEST(test_refused),
        {},
};

int main(void)
{
        return test_main(tests);
}
