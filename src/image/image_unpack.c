/* image_unpack.c - unpack one layer (a tar; uncompressed, gzip or zstd)
 * into a directory that overlayfs will use as a lower dir, safely: the
 * layer comes from someone else's image.
 *
 * Two threads: the inflater decompresses the blob (layer_inflate.c: gzip
 * through ISA-L, zstd through libzstd, else the tar as it is), hashes the
 * uncompressed bytes (the diff_id is the digest of the uncompressed tar),
 * counts them (the size limit) and queues them (image_queue.c) to this
 * thread, where libarchive's tar reader (the only format enabled, and no
 * filter) parses them, so that decompressing and making files share two
 * cores.  The blob comes from memory, an fd or a queue (a download).
 * Entries are made with *at() calls relative to directory fds opened by
 * layer_open_dir(), which never follows a symlink, so nothing is ever
 * written outside the root or through a link.  The rules (src/image/README.md):
 *
 *   leading '/'                stripped ("/etc/x" is "etc/x")
 *   a ".." component           the layer is refused (EPERM), in names and
 *                              hard link targets alike
 *   a parent that is a symlink the layer is refused (EPERM): entries are
 *   or not a directory         never written through a link
 *   hard link                  its target must be a non-directory already
 *                              unpacked in this layer, else refused (EPERM)
 *   block/char device, socket  skipped (the runtime provides /dev)
 *   .wh.NAME                   NAME becomes a char device 0/0 (overlay whiteout)
 *   .wh..wh..opq               its directory gets trusted.overlay.opaque=y
 *   other .wh..wh.*            skipped, with what is under them (aufs bookkeeping)
 *   setuid/setgid, file caps   kept only with policy allow_setuid (setgid on a
 *                              directory, which only passes its group on, stays)
 *   owner                      kept (we run as root)
 *   xattrs                     user.* and security.capability kept, others dropped
 *   an existing entry          replaced, unless both are directories
 *   limits                     uncompressed bytes and entry count (EFBIG) */
#include "common/compat.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "image/image-internal.h"
#include "image/layer_inflate.h"

#define WHITEOUT_PREFIX ".wh."
#define WHITEOUT_META_PREFIX ".wh..wh."
#define WHITEOUT_OPAQUE ".wh..wh..opq"
#define OVERLAY_OPAQUE_XATTR "trusted.overlay.opaque"

struct unpack {
        const struct layer_policy *pol;
        int rootfd;
        uint64_t entries;
        struct archive *tar;      /* the tar read from `plain` */
        struct image_queue plain; /* the uncompressed bytes, from the inflater to the tar reader */
        bool broken;              /* the tar reader found them broken off: the inflater failed */
        /* the inflater thread's; read by the other once `broken` or joined */
        struct layer_inflate *in; /* the blob, decompressed */
        EVP_MD_CTX *md;           /* over the uncompressed bytes: the diff_id */
        uint64_t bytes;
        bool too_big;
        struct tess_error *in_err; /* why the blob is not a valid stream */
};

/* The next block of uncompressed bytes, hashed and counted: 1, or 0 at the
 * end, or -1 on an error (too_big tells a limit from in_err). */
static int pull(struct unpack *u, const void **ret_buf, size_t *ret_n)
{
        int r = layer_inflate_read(u->in, ret_buf, ret_n, &u->in_err);

        if (r <= 0)
                return r < 0 ? -1 : 0;
        u->bytes += *ret_n;
        if (u->bytes > u->pol->max_bytes) {
                u->too_big = true;
                return -1;
        }
        EVP_DigestUpdate(u->md, *ret_buf, *ret_n);
        return 1;
}

/* The inflater thread: the uncompressed bytes, hashed and counted, into `plain`
 * until the end, an error (the queue is closed as broken off), or the tar
 * reader's failure. */
static void *inflate_main(void *data)
{
        struct unpack *u = data;
        const void *buf;
        size_t n;
        int r;

        while ((r = pull(u, &buf, &n)) > 0) {
                if (!image_queue_write(&u->plain, buf, n))
                        return NULL;
        }
        image_queue_close(&u->plain, r == 0);
        return NULL;
}

/* The tar reader's input: the inflater's next chunk. */
static la_ssize_t read_plain(struct archive *a, void *data, const void **ret_buf)
{
        struct unpack *u = data;
        ssize_t n = image_queue_read(&u->plain, ret_buf);

        if (n < 0) {
                u->broken = true;
                archive_set_error(a, EIO, "the decompressed layer broke off");
        }
        return n;
}

static int archive_fail(struct unpack *u, struct archive *a, struct tess_error **err)
{
        const char *why;

        if (u->broken) { /* the inflater failed: it says why */
                if (u->too_big)
                        return tess_err(err, EFBIG, "the uncompressed layer is larger than %" PRIu64 " bytes",
                                        u->pol->max_bytes);
                if (u->in_err && err) {
                        *err = TAKE_PTR(u->in_err);
                        return tess_err_wrap(err, "not a valid layer");
                }
                if (u->in_err)
                        return -u->in_err->code;
        }
        why = archive_error_string(a);
        return tess_err(err, EBADMSG, "not a valid layer: %s", why ? why : "unknown error");
}

static int sys_fail(struct tess_error **err, int e, const char *path, const char *what)
{
        return tess_err(err, e, "%s '%s': %s", what, path, strerror(e));
}

/* ---- metadata ---- */

static int entry_owner(struct archive_entry *e, uid_t *uid, gid_t *gid)
{
        la_int64_t u = archive_entry_uid(e), g = archive_entry_gid(e);

        if (u < 0 || g < 0 || u >= UINT32_MAX || g >= UINT32_MAX)
                return -EBADMSG;
        *uid = (uid_t)u;
        *gid = (gid_t)g;
        return 0;
}

static void entry_times(struct archive_entry *e, struct timespec ts[2])
{
        long nsec = archive_entry_mtime_nsec(e);

        ts[0].tv_sec = archive_entry_mtime(e);
        ts[0].tv_nsec = nsec >= 0 && nsec < 1000000000 ? nsec : 0;
        if (!archive_entry_mtime_is_set(e))
                ts[0].tv_nsec = UTIME_OMIT;
        ts[1] = ts[0];
}

static mode_t entry_mode(const struct unpack *u, struct archive_entry *e)
{
        mode_t mode = archive_entry_perm(e) & 07777;

        if (!u->pol->allow_setuid && archive_entry_filetype(e) != AE_IFDIR)
                mode &= ~(mode_t)(S_ISUID | S_ISGID);
        return mode;
}

static bool xattr_kept(const struct unpack *u, const char *name)
{
        if (strncmp(name, "user.", 5) == 0)
                return true;
        return u->pol->allow_setuid && streq(name, "security.capability");
}

/* Owner, then mode (chown clears setuid), then xattrs (chown clears file
 * capabilities), then times, on an open regular file or directory. */
static int set_metadata(const struct unpack *u, int fd, struct archive_entry *e)
{
        const char *name;
        const void *value;
        size_t size;
        struct timespec ts[2];
        uid_t uid;
        gid_t gid;
        int r = entry_owner(e, &uid, &gid);

        if (r < 0)
                return r;
        if (fchown(fd, uid, gid) < 0 || fchmod(fd, entry_mode(u, e)) < 0)
                return -errno;
        archive_entry_xattr_reset(e);
        while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
                if (!name || !xattr_kept(u, name))
                        continue;
                if (fsetxattr(fd, name, value, size, 0) < 0 && errno != EOPNOTSUPP)
                        return -errno;
        }
        entry_times(e, ts);
        return futimens(fd, ts) < 0 ? -errno : 0;
}

/* Owner and times of an entry that cannot be opened (symlink, fifo). */
static int set_metadata_at(int pfd, const char *name, struct archive_entry *e)
{
        struct timespec ts[2];
        uid_t uid;
        gid_t gid;
        int r = entry_owner(e, &uid, &gid);

        if (r < 0)
                return r;
        entry_times(e, ts);
        if (fchownat(pfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 || utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

/* ---- entries ---- */

/* Clear the way for a new entry `name`: 1 when an existing directory stays
 * (want_dir), else 0 once nothing is there. */
static int make_room(int pfd, const char *name, bool want_dir)
{
        struct stat st;

        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (want_dir && S_ISDIR(st.st_mode))
                return 1;
        return layer_remove(pfd, name, NULL);
}

/* After an attempt to make `name` that returned `made` (< 0 with errno):
 * 0 when it worked, 1 when something was in the way and is gone now (make
 * it again), else -errno.  Entries are made first and checked after: in
 * a fresh layer nothing is in the way. */
static int cleared_for_retry(int made, int pfd, const char *name)
{
        int r;

        if (made >= 0)
                return 0;
        if (errno != EEXIST)
                return -errno;
        r = make_room(pfd, name, false);
        return r < 0 ? r : 1;
}

static int write_data(struct unpack *u, int fd, const char *path, struct archive_entry *e, struct tess_error **err)
{
        const void *buf;
        size_t n;
        la_int64_t off, end = 0;
        int r;

        while ((r = archive_read_data_block(u->tar, &buf, &n, &off)) != ARCHIVE_EOF) {
                if (r < ARCHIVE_WARN)
                        return archive_fail(u, u->tar, err);
                if (off < 0 || (uint64_t)off > (uint64_t)INT64_MAX - n)
                        return tess_err(err, EBADMSG, "'%s': a data block at offset %" PRId64, path, (int64_t)off);
                for (size_t done = 0; done < n;) {
                        ssize_t k = pwrite(fd, (const char *)buf + done, n - done, off + (off_t)done);
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k <= 0)
                                return sys_fail(err, k < 0 ? errno : EIO, path, "writing");
                        done += (size_t)k;
                }
                if (off + (la_int64_t)n > end)
                        end = off + (la_int64_t)n;
        }
        /* (a sparse file may end in a hole) */
        if (archive_entry_size_is_set(e) && archive_entry_size(e) != end &&
            ftruncate(fd, archive_entry_size(e)) < 0)
                return sys_fail(err, errno, path, "sizing");
        return 0;
}

static int unpack_file(struct unpack *u, int pfd, const char *path, const char *name, struct archive_entry *e,
                       struct tess_error **err)
{
        const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
        _cleanup_close_ int fd = openat(pfd, name, flags, 0600);
        int r = cleared_for_retry(fd, pfd, name);

        if (r > 0) {
                fd = openat(pfd, name, flags, 0600);
                r = fd < 0 ? -errno : 0;
        }
        if (r < 0)
                return sys_fail(err, -r, path, "creating");
        r = write_data(u, fd, path, e, err);
        if (r < 0)
                return r;
        r = set_metadata(u, fd, e);
        return r < 0 ? sys_fail(err, -r, path, "setting the owner, mode and xattrs of") : 0;
}

static int unpack_dir(struct unpack *u, int pfd, const char *name, struct archive_entry *e)
{
        _cleanup_close_ int fd = -1;
        int r = 0;

        if (mkdirat(pfd, name, 0700) < 0) {
                if (errno != EEXIST)
                        return -errno;
                r = make_room(pfd, name, true);
                if (r < 0)
                        return r;
                if (r == 0 && mkdirat(pfd, name, 0700) < 0)
                        return -errno;
        }
        fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return set_metadata(u, fd, e);
}

static int unpack_symlink(int pfd, const char *name, struct archive_entry *e)
{
        const char *target = archive_entry_symlink(e);
        int r;

        if (!target)
                target = archive_entry_symlink_utf8(e);
        if (!target || !*target)
                return -EBADMSG;
        r = cleared_for_retry(symlinkat(target, pfd, name), pfd, name);
        if (r > 0)
                r = symlinkat(target, pfd, name) < 0 ? -errno : 0;
        if (r < 0)
                return r;
        return set_metadata_at(pfd, name, e);
}

static int unpack_fifo(struct unpack *u, int pfd, const char *name, struct archive_entry *e)
{
        int r = cleared_for_retry(mknodat(pfd, name, S_IFIFO | 0600, 0), pfd, name);

        if (r > 0)
                r = mknodat(pfd, name, S_IFIFO | 0600, 0) < 0 ? -errno : 0;
        if (r < 0)
                return r;
        r = set_metadata_at(pfd, name, e);
        if (r < 0)
                return r;
        /* the fifo was made here, in a directory only we write to */
        return fchmodat(pfd, name, entry_mode(u, e), 0) < 0 ? -errno : 0;
}

/* Split a cleaned, non-empty path into its parent (in place) and name. */
static const char *split_name(char *path, const char **ret_parent)
{
        char *slash = strrchr(path, '/');

        if (!slash) {
                *ret_parent = "";
                return path;
        }
        *slash = '\0';
        *ret_parent = path;
        return slash + 1;
}

static int unpack_hardlink(struct unpack *u, int pfd, const char *path, const char *name, struct archive_entry *e,
                           struct tess_error **err)
{
        const char *raw = archive_entry_hardlink(e), *tparent, *tname;
        _cleanup_free_ char *target = NULL, *tdir = NULL;
        _cleanup_close_ int tfd = -1;
        struct stat st;
        int r;

        if (beneath_clean(raw, &target) < 0 || !*target)
                return tess_err(err, EPERM, "'%s': hard link to '%s' is refused", path, raw);
        if (streq(target, path))
                return 0;
        tdir = xstrdup(target);
        tname = split_name(tdir, &tparent);
        tfd = layer_open_dir(u->rootfd, tparent, false);
        if (tfd < 0 || fstatat(tfd, tname, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
                return tess_err(err, EPERM, "'%s': hard link to '%s', which is not a file unpacked before it", path,
                                raw);
        r = cleared_for_retry(linkat(tfd, tname, pfd, name, 0), pfd, name);
        if (r > 0)
                r = linkat(tfd, tname, pfd, name, 0) < 0 ? -errno : 0;
        return r < 0 ? sys_fail(err, -r, path, "linking") : 0;
}

static int unpack_whiteout(struct unpack *u, const char *path, const char *parent, const char *name,
                           struct tess_error **err)
{
        const char *hidden = name + strlen(WHITEOUT_PREFIX);
        _cleanup_close_ int pfd = layer_open_dir(u->rootfd, parent, true);
        int r;

        if (pfd < 0)
                return tess_err(err, pfd == -ELOOP || pfd == -ENOTDIR ? EPERM : -pfd,
                                "'%s': its directory is a symlink or not a directory", path);
        if (streq(name, WHITEOUT_OPAQUE)) {
                if (fsetxattr(pfd, OVERLAY_OPAQUE_XATTR, "y", 1, 0) < 0)
                        return sys_fail(err, errno, path, "marking opaque");
                return 0;
        }
        if (strncmp(name, WHITEOUT_META_PREFIX, strlen(WHITEOUT_META_PREFIX)) == 0)
                return 0;
        if (!*hidden || streq(hidden, ".") || streq(hidden, ".."))
                return tess_err(err, EPERM, "'%s': a whiteout of '%s' is refused", path, hidden);
        r = make_room(pfd, hidden, false);
        if (r < 0)
                return sys_fail(err, -r, path, "replacing");
        if (mknodat(pfd, hidden, S_IFCHR, makedev(0, 0)) < 0)
                return sys_fail(err, errno, path, "making the whiteout");
        return 0;
}

static int unpack_root(struct unpack *u, const char *raw, struct archive_entry *e, struct tess_error **err)
{
        int r;

        if (archive_entry_filetype(e) != AE_IFDIR || archive_entry_hardlink(e))
                return tess_err(err, EPERM, "'%s': the layer's root can only be a directory", raw);
        r = set_metadata(u, u->rootfd, e);
        return r < 0 ? sys_fail(err, -r, "/", "setting the owner and mode of") : 0;
}

static int unpack_entry(struct unpack *u, struct archive_entry *e, struct tess_error **err)
{
        const char *raw = archive_entry_pathname(e), *parent, *name;
        _cleanup_free_ char *path = NULL, *dir = NULL;
        _cleanup_close_ int pfd = -1;
        int r;

        if (!raw)
                raw = archive_entry_pathname_utf8(e);
        if (!raw)
                return tess_err(err, EBADMSG, "an entry without a name");
        r = beneath_clean(raw, &path);
        if (r == -EPERM)
                return tess_err(err, EPERM, "'%s': a path with '..' is refused", raw);
        if (r < 0)
                return tess_err(err, -r, "'%.200s': path too long or too deep", raw);
        if (!*path)
                return unpack_root(u, raw, e, err);
        if (strncmp(path, WHITEOUT_META_PREFIX, strlen(WHITEOUT_META_PREFIX)) == 0)
                return 0; /* aufs bookkeeping (.wh..wh.plnk/...) */

        dir = xstrdup(path);
        name = split_name(dir, &parent);
        if (strncmp(name, WHITEOUT_PREFIX, strlen(WHITEOUT_PREFIX)) == 0)
                return unpack_whiteout(u, path, parent, name, err);

        pfd = layer_open_dir(u->rootfd, parent, true);
        if (pfd == -ELOOP || pfd == -ENOTDIR || pfd == -EXDEV)
                return tess_err(err, EPERM, "'%s': refused, '%s' is a symlink or not a directory", path, parent);
        if (pfd < 0)
                return sys_fail(err, -pfd, parent, "opening");
        if (archive_entry_hardlink(e))
                return unpack_hardlink(u, pfd, path, name, e, err);

        switch (archive_entry_filetype(e)) {
        case AE_IFREG:
                return unpack_file(u, pfd, path, name, e, err);
        case AE_IFDIR:
                r = unpack_dir(u, pfd, name, e);
                break;
        case AE_IFLNK:
                r = unpack_symlink(pfd, name, e);
                break;
        case AE_IFIFO:
                r = unpack_fifo(u, pfd, name, e);
                break;
        default: /* devices and sockets: the container runtime makes /dev */
                return 0;
        }
        return r < 0 ? sys_fail(err, -r, path, "unpacking") : 0;
}

static int unpack_entries(struct unpack *u, struct tess_error **err)
{
        struct archive_entry *e;
        const void *buf;
        ssize_t n;
        int r;

        while ((r = archive_read_next_header(u->tar, &e)) != ARCHIVE_EOF) {
                if (r < ARCHIVE_WARN)
                        return archive_fail(u, u->tar, err);
                if (++u->entries > u->pol->max_entries)
                        return tess_err(err, EFBIG, "the layer has more than %" PRIu64 " entries",
                                        u->pol->max_entries);
                r = unpack_entry(u, e, err);
                if (r < 0)
                        return r;
        }
        /* what follows the end-of-archive blocks is part of the diff_id too */
        while ((n = read_plain(u->tar, u, &buf)) > 0)
                ;
        return n < 0 ? archive_fail(u, u->tar, err) : 0;
}

static void digest_final(EVP_MD_CTX *md, char ret[IMAGE_DIGEST_SIZE])
{
        unsigned char sum[32];
        unsigned int len = 0;

        EVP_DigestFinal_ex(md, sum, &len);
        memcpy(ret, "sha256:", 7);
        for (unsigned i = 0; i < 32; i++)
                snprintf(ret + 7 + 2 * i, 3, "%02x", sum[i]);
}

/* Unpack the blob that `read` yields (layer_inflate.h) into rootfd. */
static int unpack_blob(layer_read_fn *read, void *data, int rootfd, const struct layer_policy *pol,
                       char ret_diff_id[IMAGE_DIGEST_SIZE], struct tess_error **err)
{
        struct unpack u = { .pol = pol, .rootfd = rootfd };
        pthread_t inflater;
        int r;

        u.in = layer_inflate_new(read, data);
        u.md = EVP_MD_CTX_new();
        u.tar = archive_read_new();
        if (!u.md || !u.tar || EVP_DigestInit_ex(u.md, EVP_sha256(), NULL) != 1)
                abort(); /* out of memory */
        image_queue_init(&u.plain);
        r = pthread_create(&inflater, NULL, inflate_main, &u);
        if (r != 0) {
                r = tess_err(err, r, "starting a thread: %s", strerror(r));
                goto out_free;
        }
        archive_read_support_format_tar(u.tar);
        if (archive_read_open(u.tar, &u, NULL, read_plain, NULL) != ARCHIVE_OK)
                r = archive_fail(&u, u.tar, err);
        else
                r = unpack_entries(&u, err);
        if (r < 0)
                image_queue_fail(&u.plain); /* the inflater stops */
        pthread_join(inflater, NULL);
        if (r >= 0)
                digest_final(u.md, ret_diff_id);
out_free:
        image_queue_release(&u.plain);
        archive_read_free(u.tar);
        EVP_MD_CTX_free(u.md);
        layer_inflate_free(u.in);
        tess_error_free(u.in_err);
        return r;
}

/* ---- where the blob comes from ---- */

struct mem_source {
        const void *p;
        size_t n;
};

static ssize_t read_mem(void *data, const void **ret_buf)
{
        struct mem_source *m = data;
        size_t n = m->n < SSIZE_MAX ? m->n : SSIZE_MAX;

        *ret_buf = m->p;
        m->p = (const char *)m->p + n;
        m->n -= n;
        return (ssize_t)n;
}

#define FD_CHUNK ((size_t)256 << 10)

struct fd_source {
        int fd;
        char *buf; /* FD_CHUNK */
};

static ssize_t read_fd(void *data, const void **ret_buf)
{
        struct fd_source *f = data;
        ssize_t n;

        do
                n = read(f->fd, f->buf, FD_CHUNK);
        while (n < 0 && errno == EINTR);
        *ret_buf = f->buf;
        return n < 0 ? -errno : n;
}

static ssize_t read_queue(void *data, const void **ret_buf)
{
        ssize_t n = image_queue_read(data, ret_buf);

        return n < 0 ? -ECANCELED : n; /* the download broke off */
}

int layer_unpack_fd(int rootfd, int blobfd, const struct layer_policy *pol, char ret_diff_id[IMAGE_DIGEST_SIZE],
                    struct tess_error **err)
{
        _cleanup_free_ char *buf = xmalloc(FD_CHUNK);
        struct fd_source f = { .fd = blobfd, .buf = buf };

        return unpack_blob(read_fd, &f, rootfd, pol, ret_diff_id, err);
}

int layer_unpack_mem(int rootfd, const void *p, size_t n, const struct layer_policy *pol,
                     char ret_diff_id[IMAGE_DIGEST_SIZE], struct tess_error **err)
{
        struct mem_source m = { .p = p, .n = n };

        return unpack_blob(read_mem, &m, rootfd, pol, ret_diff_id, err);
}

int layer_unpack_queue(int rootfd, struct image_queue *q, const struct layer_policy *pol,
                       char ret_diff_id[IMAGE_DIGEST_SIZE], struct tess_error **err)
{
        int r = unpack_blob(read_queue, q, rootfd, pol, ret_diff_id, err);

        /* read no more: after a failure, or bytes after the end of a gzip
         * stream, which are ignored (the producer's writes return false) */
        image_queue_fail(q);
        return r;
}
