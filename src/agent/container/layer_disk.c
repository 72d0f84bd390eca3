/* layer_disk.c - see layer_disk.h. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "agent/container/layer_disk.h"
#include "agent/container/proc.h"
#include "agent/container/rootfs.h"

static int mkdir_under(const char *dir, const char *name, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, name);

        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return tess_err(err, errno, "creating '%s': %s", path, strerror(errno));
        return 0;
}

int layer_disk_make(const char *image, const char *mountpoint, int64_t bytes, struct tess_error **err)
{
        int r, fd;

        if (bytes < CONTAINER_DISK_MIN)
                return tess_err(err, EINVAL, "a writable layer of %lld bytes: the smallest is %lld (8 MiB)",
                                (long long)bytes, (long long)CONTAINER_DISK_MIN);
        fd = open(image, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                return tess_err(err, errno, "creating '%s': %s", image, strerror(errno));
        r = ftruncate(fd, (off_t)bytes) < 0 ? -errno : 0;
        close(fd);
        if (r < 0) {
                unlink(image);
                return tess_err(err, -r, "sizing '%s' to %lld bytes: %s", image, (long long)bytes, strerror(-r));
        }
        /* no journal: the layer lives as long as its container, which a
         * node's crash ends anyway; no blocks kept for an online resize:
         * the sparse file then takes 264 KiB, not 4 MiB, for 16 GiB */
        /* clang-format off */
        const char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal,^resize_inode",
                               "-E", "nodiscard,lazy_itable_init=1", image, NULL };
        /* clang-format on */
        r = proc_run(mkfs, NULL, -1, NULL, NULL, err);
        if (r < 0) {
                unlink(image);
                return tess_err_wrap(err, "making the writable layer's filesystem (mkfs.ext4, Debian package "
                                          "e2fsprogs)");
        }
        const char *mount[] = { "mount", "-t", "ext4", "-o", "loop,nosuid,nodev", image, mountpoint, NULL };
        r = proc_run(mount, NULL, -1, NULL, NULL, err);
        if (r < 0) {
                unlink(image);
                return tess_err_wrap(err,
                                     "mounting the writable layer '%s' (a loop device; an agent with "
                                     "container_disk = 0 gives containers no limit of their own)",
                                     image);
        }
        if ((r = mkdir_under(mountpoint, "upper", err)) < 0 || (r = mkdir_under(mountpoint, "work", err)) < 0) {
                layer_disk_unmount(mountpoint, NULL);
                unlink(image);
                return r;
        }
        return 0;
}

int layer_disk_check(struct tess_error **err)
{
        if (access("/dev/loop-control", R_OK | W_OK) < 0)
                return tess_err(err, errno, "/dev/loop-control: %s (no loop devices)", strerror(errno));
        if (!proc_in_path("mkfs.ext4", getenv("PATH")))
                return tess_err(err, ENOENT, "no mkfs.ext4 on PATH (Debian package e2fsprogs)");
        return 0;
}

int layer_disk_unmount(const char *mountpoint, struct tess_error **err)
{
        if (!rootfs_is_mounted(mountpoint))
                return 0;
        if (umount2(mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
                return tess_err(err, errno, "unmounting '%s': %s", mountpoint, strerror(errno));
        return 0;
}
