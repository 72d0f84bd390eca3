/* container_log.c - a container's output on disk: the monitor's writer
 * (two files, so that at least half of log_max and at most all of it is
 * kept) and container_log_read(), which addresses the output by stream
 * offset so that readers can follow it across rotations. */
#include "common/compat.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "agent/container/container-internal.h"
#include "agent/container/container.h"
#include "common/fs.h"

#define LOG_READ_MAX ((size_t)16 << 20)

struct container_log {
        int fd;
        char *dir;
        int64_t base; /* stream offset of the first byte of `log` */
        int64_t size; /* bytes in `log` */
        int64_t half; /* rotate when `log` would pass this */
};

static int64_t read_base(const char *dir)
{
        _cleanup_free_ char *path = container_file(dir, CT_LOG_BASE), *text = NULL;
        size_t len;

        if (fs_read_file(path, 64, &text, &len, NULL) < 0)
                return 0;
        return strtoll(text, NULL, 10);
}

static int open_log(struct container_log *l, struct tess_error **err)
{
        _cleanup_free_ char *path = container_file(l->dir, CT_LOG);
        struct stat st;

        l->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        if (l->fd < 0)
                return tess_err(err, errno, "opening '%s': %s", path, strerror(errno));
        l->size = fstat(l->fd, &st) == 0 ? st.st_size : 0;
        return 0;
}

int container_log_open(const char *dir, int64_t log_max, struct container_log **ret, struct tess_error **err)
{
        struct container_log *l = xcalloc(1, sizeof(*l));
        int r;

        l->dir = xstrdup(dir);
        l->half = log_max / 2 > 4096 ? log_max / 2 : 4096;
        l->base = read_base(dir);
        r = open_log(l, err);
        if (r < 0) {
                container_log_close(l);
                return r;
        }
        *ret = l;
        return 0;
}

static int rotate(struct container_log *l, struct tess_error **err)
{
        _cleanup_free_ char *cur = container_file(l->dir, CT_LOG), *old = container_file(l->dir, CT_LOG_OLD);
        _cleanup_free_ char *base = container_file(l->dir, CT_LOG_BASE);
        char text[32];
        int r;

        close(l->fd);
        l->fd = -1;
        if (rename(cur, old) < 0)
                return tess_err(err, errno, "renaming '%s': %s", cur, strerror(errno));
        l->base += l->size;
        snprintf(text, sizeof(text), "%" PRId64 "\n", l->base);
        r = fs_write_file_replace(base, text, strlen(text), 0644, err);
        if (r < 0)
                return r;
        return open_log(l, err);
}

int container_log_write(struct container_log *l, const void *p, size_t n, struct tess_error **err)
{
        const char *c = p;
        int r;

        while (n > 0) {
                if (l->size >= l->half) {
                        r = rotate(l, err);
                        if (r < 0)
                                return r;
                }
                size_t piece = (size_t)(l->half - l->size) < n ? (size_t)(l->half - l->size) : n;
                ssize_t w = write(l->fd, c, piece);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return tess_err(err, errno, "writing the log in '%s': %s", l->dir, strerror(errno));
                }
                c += w;
                n -= (size_t)w;
                l->size += w;
        }
        return 0;
}

struct container_log *container_log_close(struct container_log *l)
{
        if (!l)
                return NULL;
        if (l->fd >= 0)
                close(l->fd);
        free(l->dir);
        free(l);
        return NULL;
}

/* Append up to max bytes of file `name` from offset `off` to out. */
static int read_part(const char *dir, const char *name, int64_t off, size_t max, struct buf *out,
                     struct tess_error **err)
{
        _cleanup_free_ char *path = container_file(dir, name);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        size_t got = 0;

        if (fd < 0)
                return errno == ENOENT ? 0 : tess_err(err, errno, "opening '%s': %s", path, strerror(errno));
        buf_grow(out, max);
        while (got < max) {
                ssize_t n = pread(fd, out->data + out->len, max - got, off + (int64_t)got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return tess_err(err, errno, "reading '%s': %s", path, strerror(errno));
                if (n == 0)
                        break;
                got += (size_t)n;
                out->len += (size_t)n;
        }
        out->data[out->len] = '\0';
        return (int)got;
}

static int64_t file_size(const char *dir, const char *name)
{
        _cleanup_free_ char *path = container_file(dir, name);
        struct stat st;
        return stat(path, &st) == 0 ? st.st_size : 0;
}

int container_log_read(const struct container_config *cfg, const char *id, int64_t offset, size_t max,
                       struct buf *out, int64_t *ret_next, struct tess_error **err)
{
        _cleanup_free_ char *dir = NULL;
        size_t start_len = out->len;

        if (!container_id_valid(id))
                return tess_err(err, EINVAL, "invalid container id '%s'", id);
        if (max > LOG_READ_MAX)
                max = LOG_READ_MAX;
        dir = container_dir(cfg, id);
        if (access(dir, F_OK) < 0)
                return tess_err(err, ENOENT, "no container '%s'", id);
        /* a rotation between the reads shows as a moved base: read again */
        for (int attempt = 0; attempt < 3; attempt++) {
                int64_t base = read_base(dir), old_size = file_size(dir, CT_LOG_OLD);
                int64_t size = file_size(dir, CT_LOG), pos = offset, r;

                if (pos < base - old_size)
                        pos = base - old_size;
                if (pos > base + size)
                        pos = base + size;
                out->len = start_len;
                out->data[out->len] = '\0';
                if (pos < base) {
                        size_t want = (size_t)(base - pos) < max ? (size_t)(base - pos) : max;
                        r = read_part(dir, CT_LOG_OLD, pos - (base - old_size), want, out, err);
                        if (r < 0)
                                return (int)r;
                        pos += r;
                }
                if (pos >= base && out->len - start_len < max) {
                        r = read_part(dir, CT_LOG, pos - base, max - (out->len - start_len), out, err);
                        if (r < 0)
                                return (int)r;
                        pos += r;
                }
                if (read_base(dir) == base) {
                        *ret_next = pos;
                        return 0;
                }
        }
        return tess_err(err, EAGAIN, "the log of '%s' is rotating too fast to read", id);
}
