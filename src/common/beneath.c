/* beneath.c - see beneath.h. */
#include "common/compat.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/syscall.h>

#include "common/beneath.h"
#include "common/buf.h"
#include "common/utf8.h"

int beneath_clean(const char *path, char **ret)
{
        struct buf out = BUF_INIT;
        size_t depth = 0;
        const char *p = path;

        while (*p) {
                const char *end = strchrnul(p, '/');
                size_t n = (size_t)(end - p);

                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        buf_release(&out);
                        return -EPERM;
                }
                if (n > 0 && !(n == 1 && p[0] == '.')) {
                        if (out.len > 0)
                                buf_putc(&out, '/');
                        buf_append(&out, p, n);
                        depth++;
                }
                if (out.len > BENEATH_PATH_MAX || depth > BENEATH_DEPTH_MAX) {
                        buf_release(&out);
                        return -ENAMETOOLONG;
                }
                p = *end ? end + 1 : end;
        }
        *ret = buf_detach(&out, NULL);
        return 0;
}

int beneath_user_path(const char *path, char **ret, struct tess_error **err)
{
        const unsigned char *s = (const unsigned char *)path;
        size_t len = strlen(path), component = 0;
        int r;

        for (size_t i = 0; i < len;) {
                size_t n = utf8_seq_len(s + i, len - i);
                if (n == 0)
                        return tess_err(err, EINVAL, "path '%.64s': not UTF-8", path);
                if (s[i] < 0x20 || s[i] == 0x7f)
                        return tess_err(err, EINVAL, "path '%.64s': control characters are not allowed", path);
                component = s[i] == '/' ? 0 : component + n;
                if (component > NAME_MAX)
                        return tess_err(err, EINVAL, "path '%.64s': a name is longer than %d bytes", path, NAME_MAX);
                i += n;
        }
        r = beneath_clean(path, ret);
        if (r == -EPERM)
                return tess_err(err, EINVAL, "path '%.64s': '..' is not allowed", path);
        if (r < 0)
                return tess_err(err, EINVAL, "path '%.64s…': longer than %d bytes or %d levels", path, BENEATH_PATH_MAX,
                                BENEATH_DEPTH_MAX);
        return 0;
}

int beneath_open_nofollow(int rootfd, const char *path, int flags, mode_t mode)
{
        _cleanup_free_ char *copy = xstrdup(*path ? path : ".");
        char *slash = strrchr(copy, '/');
        const char *last = slash ? slash + 1 : copy;
        int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3), next;

        if (fd < 0)
                return -errno;
        if (slash) {
                char *save = NULL;
                *slash = '\0';
                for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
                        next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        close(fd);
                        if (next < 0)
                                return -errno;
                        fd = next;
                }
        }
        next = openat(fd, last, flags | O_NOFOLLOW | O_CLOEXEC, mode);
        close(fd);
        return next < 0 ? -errno : next;
}

int beneath_open(int rootfd, const char *path, int flags, mode_t mode)
{
        struct open_how how = {
                .flags = (uint64_t)(flags | O_CLOEXEC),
                .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        int fd;

        if (!*path)
                path = ".";
        do
                fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
        while (fd < 0 && errno == EAGAIN);
        if (fd >= 0)
                return fd;
        if (errno != ENOSYS && errno != EPERM)
                return -errno;
        return beneath_open_nofollow(rootfd, path, flags, mode);
}
