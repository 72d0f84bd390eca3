/* image_hold.c - holds on the store against gc, and the gc lock.
 *
 * <store>/gc.lock is flock()ed: shared by each hold (a container being
 * started from an image of the store, a pull or an import writing blobs
 * that are not tagged yet), exclusively by gc and the disk budget.  Each
 * hold opens the file anew, so holds and gc conflict between threads of one
 * process as between processes.  Lock order: the gc lock before the store
 * lock (image_store_lock), never the other way round. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/file.h>

#include "image/image-internal.h"

#define GC_LOCK_FILE "gc.lock"

struct image_hold {
        int fd;
};

static int lock_gc_file(struct image_store *st, int op, struct tess_error **err)
{
        int fd = openat(st->dirfd, GC_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

        if (fd < 0)
                return tess_err(err, errno, "opening '%s/" GC_LOCK_FILE "': %s", st->dir, strerror(errno));
        while (flock(fd, op) < 0) {
                int e = errno;
                if (e == EINTR)
                        continue;
                close(fd);
                if (e == EWOULDBLOCK)
                        return tess_err(err, EBUSY, "image store '%s' is in use (a pull, an import or a start)",
                                        st->dir);
                return tess_err(err, e, "locking '%s/" GC_LOCK_FILE "': %s", st->dir, strerror(e));
        }
        return fd;
}

int image_hold_begin(struct image_store *st, struct image_hold **ret, struct tess_error **err)
{
        int fd = lock_gc_file(st, LOCK_SH, err);

        if (fd < 0)
                return fd;
        *ret = xmalloc(sizeof(**ret));
        (*ret)->fd = fd;
        return 0;
}

struct image_hold *image_hold_end(struct image_hold *h)
{
        if (h) {
                close(h->fd); /* the lock goes with the last descriptor of its open file */
                free(h);
        }
        return NULL;
}

int image_gc_lock(struct image_store *st, bool wait, int *ret_fd, struct tess_error **err)
{
        int fd = lock_gc_file(st, LOCK_EX | (wait ? 0 : LOCK_NB), err);

        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

void image_gc_unlock(int fd)
{
        if (fd >= 0)
                close(fd);
}
