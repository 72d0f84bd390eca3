/* http_spool.c - see http_spool.h. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/mman.h>

#include "manager/http/http_spool.h"

int http_spool_open(struct http_spool *sp, const char *dir, struct tess_error **err)
{
        int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

        if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
                /* a filesystem without O_TMPFILE: a named file, unlinked at once */
                _cleanup_free_ char *path = xasprintf("%s/body.XXXXXX", dir);
                fd = mkostemp(path, O_CLOEXEC);
                if (fd >= 0)
                        unlink(path);
        }
        if (fd < 0)
                return tess_err(err, errno, "a request body's file in %s: %s", dir, strerror(errno));
        *sp = (struct http_spool){ .fd = fd };
        return 0;
}

int http_spool_write(struct http_spool *sp, const void *p, size_t n)
{
        const char *c = p;

        while (n > 0) {
                ssize_t w = write(sp->fd, c, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? -errno : -EIO;
                c += w;
                n -= (size_t)w;
                sp->len += (size_t)w;
        }
        return 0;
}

int http_spool_map(struct http_spool *sp, struct buf *ret)
{
        /* the NUL that in-memory bodies have after their last byte; then
         * every page of the mapping is backed (no SIGBUS) */
        int r = http_spool_write(sp, "", 1);
        if (r < 0)
                return r;
        sp->len--;
        sp->map = mmap(NULL, sp->len + 1, PROT_READ, MAP_PRIVATE, sp->fd, 0);
        if (sp->map == MAP_FAILED) {
                sp->map = NULL;
                return -errno;
        }
        *ret = (struct buf){ .data = sp->map, .len = sp->len, .cap = 0 };
        return 0;
}

void http_spool_close(struct http_spool *sp)
{
        if (sp->map)
                munmap(sp->map, sp->len + 1);
        if (sp->fd >= 0)
                close(sp->fd);
        *sp = (struct http_spool)HTTP_SPOOL_INIT;
}
