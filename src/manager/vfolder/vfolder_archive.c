/* vfolder_archive.c - see vfolder_archive.h. */
#include "common/compat.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/beneath.h"
#include "common/buf.h"
#include "common/log.h"
#include "manager/vfolder/vfolder_archive.h"

#define CHUNK (256 * 1024)

struct level {
        DIR *d;
        char *prefix; /* entry path of this directory */
};

struct vf_archive {
        struct archive *a;
        struct buf out;
        size_t pos;
        struct level stack[BENEATH_DEPTH_MAX + 1];
        int depth;         /* levels on the stack */
        int file_fd;       /* the regular file being copied, or -1 */
        int64_t remaining; /* of its size in the header */
        int single_fd;     /* a regular file given as the root, before its header */
        char *single_name;
        bool done, failed;
        char *chunk;
};

static la_ssize_t write_cb(struct archive *a UNUSED, void *data, const void *p, size_t n)
{
        struct vf_archive *st = data;
        buf_append(&st->out, p, n);
        return (la_ssize_t)n;
}

static void fail(struct vf_archive *st, const char *what)
{
        log_warn("archive download: %s: %s", what, st->a ? archive_error_string(st->a) : strerror(errno));
        st->failed = true;
}

static int put_header(struct vf_archive *st, const char *path, const struct stat *s, const char *link)
{
        struct archive_entry *e = archive_entry_new();
        int r;

        archive_entry_set_pathname(e, path);
        archive_entry_set_mode(e, s->st_mode);
        archive_entry_set_mtime(e, s->st_mtim.tv_sec, s->st_mtim.tv_nsec);
        archive_entry_set_size(e, S_ISREG(s->st_mode) ? s->st_size : 0);
        if (link)
                archive_entry_set_symlink(e, link);
        r = archive_write_header(st->a, e);
        archive_entry_free(e);
        if (r < ARCHIVE_WARN) {
                fail(st, path);
                return -1;
        }
        return 0;
}

static void start_file(struct vf_archive *st, int fd, const char *path)
{
        struct stat s;

        if (fstat(fd, &s) < 0 || put_header(st, path, &s, NULL) < 0) {
                close(fd);
                st->failed = true;
                return;
        }
        st->file_fd = fd;
        st->remaining = s.st_size;
}

static void push(struct vf_archive *st, int fd, const char *prefix)
{
        DIR *d = fdopendir(fd);

        if (!d) {
                close(fd);
                fail(st, prefix);
                return;
        }
        st->stack[st->depth].d = d;
        st->stack[st->depth].prefix = xstrdup(prefix);
        st->depth++;
}

struct vf_archive *vf_archive_new(int fd, const char *name, struct tess_error **err)
{
        struct vf_archive *st = xcalloc(1, sizeof(*st));
        struct stat s;

        st->file_fd = st->single_fd = -1;
        st->out = (struct buf)BUF_INIT;
        st->chunk = xmalloc(CHUNK);
        st->a = archive_write_new();
        if (fstat(fd, &s) < 0 || !st->a || archive_write_set_format_pax_restricted(st->a) != ARCHIVE_OK ||
            archive_write_open(st->a, st, NULL, write_cb, NULL) != ARCHIVE_OK) {
                close(fd);
                vf_archive_free(st);
                tess_err(err, EIO, "cannot start an archive");
                return NULL;
        }
        if (S_ISDIR(s.st_mode)) {
                if (put_header(st, name, &s, NULL) < 0) {
                        close(fd);
                        vf_archive_free(st);
                        tess_err(err, EIO, "cannot start an archive");
                        return NULL;
                }
                push(st, fd, name);
        } else {
                st->single_fd = fd;
                st->single_name = xstrdup(name);
        }
        return st;
}

/* Copy the next chunk of the current file. */
static void file_step(struct vf_archive *st)
{
        size_t want = st->remaining < CHUNK ? (size_t)st->remaining : CHUNK;
        ssize_t n = want ? read(st->file_fd, st->chunk, want) : 0;

        if (n < 0 && errno == EINTR)
                return;
        if (n <= 0 && want) { /* shrunk meanwhile: zeros up to the size in the header */
                memset(st->chunk, 0, want);
                n = (ssize_t)want;
        }
        if (n > 0 && archive_write_data(st->a, st->chunk, (size_t)n) < 0) {
                fail(st, "data");
                return;
        }
        st->remaining -= n;
        if (st->remaining == 0) {
                close(st->file_fd);
                st->file_fd = -1;
                archive_write_finish_entry(st->a);
        }
}

/* The next entry of the walk. */
static void walk_step(struct vf_archive *st)
{
        struct level *lv = &st->stack[st->depth - 1];
        struct dirent *e = readdir(lv->d);
        struct stat s;

        if (!e) {
                closedir(lv->d);
                free(lv->prefix);
                st->depth--;
                return;
        }
        if (streq(e->d_name, ".") || streq(e->d_name, "..") ||
            fstatat(dirfd(lv->d), e->d_name, &s, AT_SYMLINK_NOFOLLOW) < 0)
                return;
        _cleanup_free_ char *path = xasprintf("%s/%s", lv->prefix, e->d_name);
        if (S_ISDIR(s.st_mode)) {
                if (st->depth > BENEATH_DEPTH_MAX)
                        return;
                int fd = openat(dirfd(lv->d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return;
                if (put_header(st, path, &s, NULL) < 0) {
                        close(fd);
                        return;
                }
                push(st, fd, path);
        } else if (S_ISREG(s.st_mode)) {
                int fd = openat(dirfd(lv->d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fd >= 0)
                        start_file(st, fd, path);
        } else if (S_ISLNK(s.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlinkat(dirfd(lv->d), e->d_name, target, sizeof(target) - 1);
                if (n > 0) {
                        target[n] = '\0';
                        put_header(st, path, &s, target);
                }
        } /* devices, fifos, sockets: left out */
}

ssize_t vf_archive_read(void *data, char *out, size_t max)
{
        struct vf_archive *st = data;

        while (st->out.len == st->pos && !st->done && !st->failed) {
                st->out.len = st->pos = 0;
                if (st->file_fd >= 0) {
                        file_step(st);
                } else if (st->single_fd >= 0) {
                        int fd = st->single_fd;
                        st->single_fd = -1;
                        start_file(st, fd, st->single_name);
                } else if (st->depth > 0) {
                        walk_step(st);
                } else {
                        if (archive_write_close(st->a) != ARCHIVE_OK)
                                fail(st, "closing");
                        st->done = true;
                }
        }
        if (st->failed)
                return -1;
        size_t n = st->out.len - st->pos < max ? st->out.len - st->pos : max;
        memcpy(out, st->out.data + st->pos, n);
        st->pos += n;
        return (ssize_t)n;
}

void vf_archive_free(void *data)
{
        struct vf_archive *st = data;

        if (!st)
                return;
        while (st->depth > 0) {
                st->depth--;
                closedir(st->stack[st->depth].d);
                free(st->stack[st->depth].prefix);
        }
        if (st->file_fd >= 0)
                close(st->file_fd);
        if (st->single_fd >= 0)
                close(st->single_fd);
        if (st->a)
                archive_write_free(st->a);
        buf_release(&st->out);
        free(st->single_name);
        free(st->chunk);
        free(st);
}
