/* userns.c - see userns.h. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent/container/userns.h"
#include "common/fs.h"

/* Close every descriptor from 3 up but `a` and `b`. */
static void close_all_but(int a, int b)
{
        int lo = a < b ? a : b, hi = a < b ? b : a;

        if (lo > 3)
                close_range(3, (unsigned)lo - 1, 0);
        if (hi > lo + 1)
                close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
        close_range((unsigned)hi + 1, ~0U, 0);
}

/* The child that holds the namespace while its maps are written: it makes
 * the namespace, says so on `ready`, and waits for `done` to close.  It
 * keeps no other descriptor of the agent's: holding another thread's
 * `done` (or a pipe another child's output goes through) would keep that
 * one waiting as long as this one lives, and two children holding each
 * other's waited for ever. */
static void __attribute__((noreturn)) hold_userns(const int ready[2], const int done[2])
{
        char c;

        close_all_but(ready[1], done[0]);
        if (unshare(CLONE_NEWUSER) < 0)
                _exit(1);
        if (write(ready[1], "u", 1) != 1)
                _exit(1);
        while (read(done[0], &c, 1) < 0 && errno == EINTR)
                ;
        _exit(0);
}

static int write_map(pid_t pid, const char *file, const char *map, struct tess_error **err)
{
        _cleanup_free_ char *path = xasprintf("/proc/%d/%s", (int)pid, file);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

        if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map))
                return tess_err(err, errno, "writing '%s' (%s): %s", path, map, strerror(errno));
        return 0;
}

int userns_open(uint32_t base, uint32_t size, int *ret_fd, struct tess_error **err)
{
        int ready[2] = { -1, -1 }, done[2] = { -1, -1 }, r = 0, st;
        char map[64], c;
        pid_t pid;

        if (size == 0 || base == 0 || (uint64_t)base + size > UINT32_MAX)
                return tess_err(err, EINVAL, "user namespace range %u+%u: not a range of unprivileged ids", base, size);
        if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0) {
                r = tess_err(err, errno, "pipe: %s", strerror(errno));
                goto out;
        }
        pid = fork();
        if (pid < 0) {
                r = tess_err(err, errno, "fork: %s", strerror(errno));
                goto out;
        }
        if (pid == 0)
                hold_userns(ready, done);
        close(ready[1]);
        ready[1] = -1;
        if (read(ready[0], &c, 1) != 1) {
                r = tess_err(err, EPERM, "cannot create a user namespace (unshare(CLONE_NEWUSER) failed)");
        } else {
                snprintf(map, sizeof(map), "0 %u %u\n", base, size);
                r = write_map(pid, "uid_map", map, err);
                if (r >= 0)
                        r = write_map(pid, "gid_map", map, err);
                if (r >= 0) {
                        _cleanup_free_ char *ns = xasprintf("/proc/%d/ns/user", (int)pid);
                        *ret_fd = open(ns, O_RDONLY | O_CLOEXEC);
                        if (*ret_fd < 0)
                                r = tess_err(err, errno, "opening '%s': %s", ns, strerror(errno));
                }
        }
        close(done[1]); /* the child exits */
        done[1] = -1;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
out:
        for (int i = 0; i < 2; i++) {
                if (ready[i] >= 0)
                        close(ready[i]);
                if (done[i] >= 0)
                        close(done[i]);
        }
        return r;
}

int userns_idmap_clone(const char *src, const char *dst, int userns_fd, bool recursive, struct tess_error **err)
{
        unsigned int rec = recursive ? AT_RECURSIVE : 0;
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd };
        _cleanup_close_ int tree = open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec);
        struct stat st;

        if (tree < 0)
                return tess_err(err, errno, "cloning the mount of '%s': %s", src, strerror(errno));
        if (userns_fd >= 0 && mount_setattr(tree, "", AT_EMPTY_PATH | rec, &attr, sizeof(attr)) < 0)
                return tess_err(err, errno, "an idmapped mount of '%s': %s", src, strerror(errno));
        if (fstat(tree, &st) < 0)
                return tess_err(err, errno, "'%s': %s", src, strerror(errno));
        if (S_ISDIR(st.st_mode) ? mkdir(dst, 0700) < 0 && errno != EEXIST
                                : mknod(dst, S_IFREG | 0600, 0) < 0 && errno != EEXIST)
                return tess_err(err, errno, "creating '%s': %s", dst, strerror(errno));
        if (move_mount(tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return tess_err(err, errno, "mounting '%s' on '%s': %s", src, dst, strerror(errno));
        return 0;
}

uint32_t userns_overflow_uid(void)
{
        _cleanup_free_ char *text = NULL;
        size_t len;

        if (fs_read_file("/proc/sys/kernel/overflowuid", 64, &text, &len, NULL) < 0)
                return 65534;
        return (uint32_t)strtoul(text, NULL, 10);
}

void userns_stage_remove(const char *dir, const char *keep)
{
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, "..") || streq_ptr(de->d_name, keep))
                        continue;
                _cleanup_free_ char *p = xasprintf("%s/%s", dir, de->d_name);
                while (umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW) == 0) /* stacked, after a retried start */
                        ;
                if (rmdir(p) < 0 && errno == ENOTDIR)
                        unlink(p);
        }
        closedir(d);
        if (!keep)
                rmdir(dir);
}
