/* vfolder_copy.c - see vfolder_copy.h.  A depth-first walk holding one
 * source directory (a DIR) and its copy (an fd) open per level; entries
 * are looked at with fstatat(AT_SYMLINK_NOFOLLOW) and opened with
 * O_NOFOLLOW relative to their directory, then looked at again on the
 * opened fd, so an entry swapped meanwhile is skipped, never followed.
 * File data goes with copy_file_range (the kernel copies, or shares
 * blocks where the filesystem can), or read and write where it cannot,
 * hole by hole (SEEK_DATA / SEEK_HOLE) so sparse files stay sparse. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/disk_usage.h"
#include "manager/vfolder/vfolder_copy.h"
#include "manager/vfolder/vfolder_fs.h"

#define CHUNK     ((size_t)64 << 20)   /* bytes per copy call: the budget and progress are seen between */
#define IO_BUF    ((size_t)1 << 20)    /* the read/write buffer */
#define DEPTH_MAX DISK_USAGE_MAX_DEPTH /* as deep as usage counts; two fds a level */

struct walk {
        struct vf_copy *cp;
        dev_t dev;                       /* the source's filesystem: others are left out */
        int64_t entries;                 /* looked at so far */
        char path[BENEATH_PATH_MAX + 1]; /* the entry's, for messages */
        size_t len;
        char link[PATH_MAX]; /* a symlink's target */
        char *buf;           /* IO_BUF, made when first needed */
};

static size_t path_push(struct walk *w, const char *name)
{
        size_t old = w->len;
        int n = snprintf(w->path + old, sizeof(w->path) - old, "%s%s", old ? "/" : "", name);

        w->len = n < 0 || old + (size_t)n >= sizeof(w->path) ? sizeof(w->path) - 1 : old + (size_t)n;
        return old;
}

static void path_pop(struct walk *w, size_t old)
{
        w->len = old;
        w->path[old] = '\0';
}

static int fail(struct walk *w, int e, struct tess_error **err)
{
        return vf_fs_error(err, e, "copying", w->path);
}

static void progress(struct walk *w)
{
        if (w->cp->progress)
                w->cp->progress(w->cp, w->cp->arg);
}

/* May `bytes` more be made? */
static int fits(struct walk *w, int64_t bytes, struct tess_error **err)
{
        if (bytes <= w->cp->budget - w->cp->bytes)
                return 0;
        return tess_err(err, EDQUOT, "copying '%.256s': past the %lld bytes the quota leaves the copy", w->path,
                        (long long)w->cp->budget);
}

static int charge(struct walk *w, int64_t bytes, struct tess_error **err)
{
        int r = fits(w, bytes, err);

        w->cp->bytes += bytes;
        return r;
}

/* Mode (no set-id bits), owner and times of the copy `fd` of `st`; then
 * what it takes on disk counts. */
static int finish(struct walk *w, int fd, const struct stat *st, struct tess_error **err)
{
        struct timespec times[2] = { st->st_atim, st->st_mtim };
        mode_t keep = S_ISDIR(st->st_mode) ? 01777 : 0777;
        struct stat now;

        vf_give_to_work_user(fd, "");
        if (fchmod(fd, st->st_mode & keep) < 0 || futimens(fd, times) < 0 || fstat(fd, &now) < 0)
                return fail(w, errno, err);
        return charge(w, (int64_t)now.st_blocks * 512, err);
}

static ssize_t plain_copy(struct walk *w, int sfd, int dfd, off_t off, size_t want)
{
        ssize_t got;

        if (!w->buf)
                w->buf = xmalloc(IO_BUF);
        got = pread(sfd, w->buf, want < IO_BUF ? want : IO_BUF, off);
        for (ssize_t done = 0; got > 0 && done < got;) {
                ssize_t put = pwrite(dfd, w->buf + done, (size_t)(got - done), off + done);
                if (put == 0)
                        errno = EIO;
                if (put == 0 || (put < 0 && errno != EINTR))
                        return -1;
                done += put > 0 ? put : 0;
        }
        return got;
}

/* Bytes [off, off + len) of sfd to the same place in dfd.  RET 1 all, 0
 * the file ended first (it shrank), -errno. */
static int copy_range(struct walk *w, int sfd, int dfd, off_t off, off_t len, struct tess_error **err)
{
        while (len > 0) {
                size_t want = (uint64_t)len < CHUNK ? (size_t)len : CHUNK;
                ssize_t n;

                if (w->cp->plain_io) {
                        n = plain_copy(w, sfd, dfd, off, want);
                } else {
                        loff_t in = off, out = off;
                        n = copy_file_range(sfd, &in, dfd, &out, want, 0);
                        /* not between these files (or a filesystem that answers
                         * 0 for data it has): read and write from now on */
                        if (n == 0 ||
                            (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))) {
                                w->cp->plain_io = true;
                                continue;
                        }
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return fail(w, errno, err);
                if (n == 0)
                        return 0;
                off += n;
                len -= n;
                w->cp->current += n;
                progress(w);
        }
        return 1;
}

/* The data of sfd (its first `size` bytes), holes left as holes. */
static int copy_data(struct walk *w, int sfd, int dfd, off_t size, struct tess_error **err)
{
        for (off_t off = 0; off < size;) {
                off_t data = lseek(sfd, off, SEEK_DATA), hole;
                if (data < 0 && errno == ENXIO)
                        break; /* a hole to the end */
                if (data < 0)
                        data = off; /* no SEEK_DATA here: all of it is data */
                if (data >= size)
                        break;
                hole = lseek(sfd, data, SEEK_HOLE);
                if (hole <= data || hole > size)
                        hole = size;
                int r = copy_range(w, sfd, dfd, data, hole - data, err);
                if (r <= 0)
                        return r;
                off = hole;
        }
        return 0;
}

/* RET 1 copied, 0 skipped (gone, or no longer a regular file), -errno. */
static int copy_file(struct walk *w, int sdir, int ddir, const char *name, struct stat *st, struct tess_error **err)
{
        int r;
        _cleanup_close_ int sfd = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        if (sfd < 0)
                return errno == ENOENT || errno == ELOOP ? 0 : fail(w, errno, err);
        if (fstat(sfd, st) < 0)
                return fail(w, errno, err);
        if (!S_ISREG(st->st_mode) || st->st_dev != w->dev)
                return 0;
        r = fits(w, (int64_t)st->st_blocks * 512, err);
        if (r < 0)
                return r;
        _cleanup_close_ int dfd = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (dfd < 0)
                return fail(w, errno, err);
        w->cp->current = 0;
        r = copy_data(w, sfd, dfd, st->st_size, err);
        if (r >= 0 && ftruncate(dfd, st->st_size) < 0)
                r = fail(w, errno, err);
        w->cp->current = 0;
        if (r >= 0)
                r = finish(w, dfd, st, err);
        return r < 0 ? r : 1;
}

/* The link itself, its target's text as it is. */
static int copy_link(struct walk *w, int sdir, int ddir, const char *name, const struct stat *st,
                     struct tess_error **err)
{
        struct timespec times[2] = { st->st_atim, st->st_mtim };
        ssize_t n = readlinkat(sdir, name, w->link, sizeof(w->link) - 1);
        struct stat now;

        if (n < 0)
                return errno == ENOENT || errno == EINVAL ? 0 : fail(w, errno, err);
        w->link[n] = '\0';
        if (symlinkat(w->link, ddir, name) < 0)
                return fail(w, errno, err);
        vf_give_to_work_user(ddir, name);
        if (utimensat(ddir, name, times, AT_SYMLINK_NOFOLLOW) < 0 || fstatat(ddir, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
                return fail(w, errno, err);
        int r = charge(w, (int64_t)now.st_blocks * 512, err);
        return r < 0 ? r : 1;
}

static int copy_entry(struct walk *w, int sdir, int ddir, const char *name, int depth, struct tess_error **err);

static int copy_children(struct walk *w, DIR *d, int ddir, int depth, struct tess_error **err)
{
        for (;;) {
                errno = 0;
                struct dirent *e = readdir(d);
                if (!e)
                        return errno ? fail(w, errno, err) : 0;
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                size_t mark = path_push(w, e->d_name);
                int r = copy_entry(w, dirfd(d), ddir, e->d_name, depth, err);
                if (r < 0)
                        return r;
                path_pop(w, mark);
        }
}

/* RET 1 copied, 0 skipped (gone, or no longer a directory), -errno. */
static int copy_dir(struct walk *w, int sdir, int ddir, const char *name, struct stat *st, int depth,
                    struct tess_error **err)
{
        int r, sfd;
        DIR *d;

        if (depth >= DEPTH_MAX)
                return tess_err(err, EINVAL, "copying '%.256s': deeper than %d levels", w->path, DEPTH_MAX);
        sfd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0)
                return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : fail(w, errno, err);
        if (fstat(sfd, st) < 0 || st->st_dev != w->dev || !(d = fdopendir(sfd))) {
                close(sfd);
                return 0;
        }
        if (mkdirat(ddir, name, 0700) < 0) {
                r = fail(w, errno, err);
                closedir(d);
                return r;
        }
        _cleanup_close_ int dfd = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        r = dfd < 0 ? fail(w, errno, err) : copy_children(w, d, dfd, depth + 1, err);
        closedir(d);
        if (r >= 0)
                r = finish(w, dfd, st, err);
        return r < 0 ? r : 1;
}

static int copy_entry(struct walk *w, int sdir, int ddir, const char *name, int depth, struct tess_error **err)
{
        struct stat st;
        int r;

        if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : fail(w, errno, err);
        if (st.st_dev != w->dev || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
                w->cp->skipped++;
                return 0;
        }
        if (++w->entries > DISK_USAGE_MAX_ENTRIES)
                return tess_err(err, EINVAL, "more than %d entries: too many to copy", DISK_USAGE_MAX_ENTRIES);
        if (S_ISDIR(st.st_mode))
                r = copy_dir(w, sdir, ddir, name, &st, depth, err);
        else if (S_ISREG(st.st_mode))
                r = copy_file(w, sdir, ddir, name, &st, err);
        else
                r = copy_link(w, sdir, ddir, name, &st, err);
        if (r > 0) {
                w->cp->files++;
                progress(w);
        }
        return r < 0 ? r : 0;
}

int vf_copy_tree(int src, int dst, struct vf_copy *cp, struct tess_error **err)
{
        struct walk *w = xcalloc(1, sizeof(*w));
        struct stat st;
        DIR *d = NULL;
        int r, fd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        w->cp = cp;
        if (fd < 0 || fstat(fd, &st) < 0 || !(d = fdopendir(fd))) {
                r = fail(w, errno, err);
                if (fd >= 0)
                        close(fd);
        } else {
                w->dev = st.st_dev;
                r = copy_children(w, d, dst, 0, err);
                closedir(d);
        }
        free(w->buf);
        free(w);
        return r;
}
