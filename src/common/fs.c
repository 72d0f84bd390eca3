/* fs.c - see fs.h. */
#include "common/compat.h"

#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/fs.h"

int fs_read_file(const char *path, size_t max, char **ret, size_t *ret_len, struct tess_error **err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct buf b = BUF_INIT;
        char tmp[8192];
        ssize_t n;

        if (fd < 0)
                return tess_err(err, errno, "opening '%s': %s", path, strerror(errno));
        while ((n = read(fd, tmp, sizeof(tmp))) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        int e = errno;
                        buf_release(&b);
                        return tess_err(err, e, "reading '%s': %s", path, strerror(e));
                }
                buf_append(&b, tmp, (size_t)n);
                if (b.len > max) {
                        buf_release(&b);
                        return tess_err(err, EFBIG, "'%s' is larger than %zu bytes", path, max);
                }
        }
        *ret = buf_detach(&b, ret_len);
        return 0;
}

/* path.tmp, rename; with `durable` fsync the file and the directory too */
static int write_replace(const char *path, const void *data, size_t len, mode_t mode, bool durable,
                         struct tess_error **err)
{
        _cleanup_free_ char *tmp = xasprintf("%s.tmp", path);
        _cleanup_free_ char *dircopy = xstrdup(path);
        _cleanup_close_ int dfd = -1;
        int fd, e;

        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0)
                return tess_err(err, errno, "creating '%s': %s", tmp, strerror(errno));
        const char *p = data;
        size_t left = len;
        while (left > 0) {
                ssize_t n = write(fd, p, left);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        goto fail;
                }
                p += n;
                left -= (size_t)n;
        }
        if (fchmod(fd, mode) < 0 || (durable && fsync(fd) < 0))
                goto fail;
        close(fd);
        if (rename(tmp, path) < 0) {
                e = errno;
                unlink(tmp);
                return tess_err(err, e, "renaming '%s': %s", tmp, strerror(e));
        }
        if (!durable)
                return 0;
        dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                fsync(dfd);
        return 0;
fail:
        e = errno;
        close(fd);
        unlink(tmp);
        return tess_err(err, e, "writing '%s': %s", tmp, strerror(e));
}

int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode, struct tess_error **err)
{
        return write_replace(path, data, len, mode, true, err);
}

int fs_write_file_replace(const char *path, const void *data, size_t len, mode_t mode, struct tess_error **err)
{
        return write_replace(path, data, len, mode, false, err);
}

int fs_mkdir_p(const char *path, mode_t mode, struct tess_error **err)
{
        _cleanup_free_ char *p = xstrdup(path);

        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return tess_err(err, errno, "creating directory '%s': %s", p, strerror(errno));
                *s = '/';
        }
        if (mkdir(p, mode) < 0 && errno != EEXIST)
                return tess_err(err, errno, "creating directory '%s': %s", p, strerror(errno));
        return 0;
}

static int remove_entry(const char *path, const struct stat *st UNUSED, int type, struct FTW *ftw UNUSED)
{
        if (type == FTW_DP)
                return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
        return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int fs_remove_tree(const char *dir, struct tess_error **err)
{
        if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0 && errno != ENOENT)
                return tess_err(err, errno, "removing '%s': %s", dir, strerror(errno));
        return 0;
}

void fs_mode_string(mode_t mode, char out[11])
{
        out[0] = S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : S_ISREG(mode) ? '-' : '?';
        for (int b = 0; b < 9; b++)
                out[1 + b] = mode & (0400 >> b) ? "rwxrwxrwx"[b] : '-';
        out[10] = '\0';
}

int fs_write_all(int fd, const void *p, size_t n)
{
        const char *c = p;

        while (n > 0) {
                ssize_t w = write(fd, c, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                c += w;
                n -= (size_t)w;
        }
        return 0;
}
