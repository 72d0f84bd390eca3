/* image_path.c - file operations confined beneath a directory fd, for
 * unpacking untrusted layers (paths are cleaned by common/beneath.c):
 * opening directories without ever following a symlink (openat2 with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the kernel has it, else one
 * O_NOFOLLOW component at a time), and recursive removal. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/buf.h"
#include "image/image-internal.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* One syscall, the kernel guaranteeing that nothing outside rootfd and no
 * symlink is ever crossed. */
static int open_dir_openat2(int rootfd, const char *path)
{
        struct open_how how = {
                .flags = DIR_FLAGS,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        int fd;

        do
                fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
        while (fd < 0 && errno == EAGAIN);
        return fd < 0 ? -errno : fd;
}

/* Component by component with O_NOFOLLOW, making missing directories. */
static int open_dir_walk(int rootfd, const char *path, bool create)
{
        _cleanup_free_ char *copy = xstrdup(path);
        char *save = NULL;
        int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);

        if (fd < 0)
                return -errno;
        for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
                int next = openat(fd, name, DIR_FLAGS);
                if (next < 0 && errno == ENOENT && create) {
                        if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST) {
                                int e = errno;
                                close(fd);
                                return -e;
                        }
                        next = openat(fd, name, DIR_FLAGS);
                }
                if (next < 0) {
                        int e = errno;
                        close(fd);
                        return -e;
                }
                close(fd);
                fd = next;
        }
        return fd;
}

int layer_open_dir(int rootfd, const char *path, bool create)
{
        int fd;

        if (!*path) {
                fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
                return fd < 0 ? -errno : fd;
        }
        /* openat2 answers at once for a path crossing a symlink or a
         * non-directory; the walk makes missing directories and stands in
         * where openat2 is missing or filtered (ENOSYS, EPERM). */
        fd = open_dir_openat2(rootfd, path);
        if (fd >= 0 || fd == -ELOOP || fd == -ENOTDIR || fd == -EXDEV)
                return fd;
        return open_dir_walk(rootfd, path, create);
}

static int remove_children(int fd, int64_t *freed)
{
        struct dirent *de;
        DIR *d = fdopendir(fd);
        int r = 0;

        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while (r >= 0 && (de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                r = layer_remove(dirfd(d), de->d_name, freed);
        }
        closedir(d);
        return r;
}

int layer_remove(int dirfd, const char *name, int64_t *freed)
{
        struct stat st;
        int fd, r;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (freed && (S_ISDIR(st.st_mode) || st.st_nlink <= 1)) /* a hard link frees its blocks with the last one */
                *freed += (int64_t)st.st_blocks * 512;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        fd = openat(dirfd, name, DIR_FLAGS);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        r = remove_children(fd, freed);
        if (r < 0)
                return r;
        return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}
