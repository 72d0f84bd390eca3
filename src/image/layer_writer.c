/* layer_writer.c - a directory tree as a reproducible gzip'd tar; see
 * layer_writer.h.  One pass: libarchive writes the tar into a callback
 * that hashes it (the diff_id) and deflates it with zlib into the output
 * file, hashing that too (the digest). */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include <zlib.h>
#include <zstd.h>

#include "common/buf.h"
#include "image/layer_writer.h"

#define OUT_CHUNK      (256u << 10)
#define PATH_DEPTH_MAX 256
#define PROGRESS_EVERY ((int64_t)8 << 20)
#define WHITEOUT       ".wh."
#define OPAQUE         ".wh..wh..opq"

struct link_seen {
        dev_t dev;
        ino_t ino;
        char *path;
};

struct writer {
        struct archive *a;
        int out_fd;
        z_stream z;
        ZSTD_CCtx *zc; /* zstd instead of z */
        EVP_MD_CTX *tar_md, *gz_md;
        unsigned char *zbuf;
        int64_t tar_size, gz_size, progress_at;
        uint64_t entries;
        const struct layer_write_opts *o;
        struct link_seen *links;
        size_t n_links, cap_links;
        int rc; /* first failure in a callback */
        struct tess_error *cb_err;
        struct tess_error **err;
};

/* Write n compressed bytes to the output, hashing them. */
static int put_out(struct writer *w, const unsigned char *p, size_t n)
{
        if (n == 0)
                return 0;
        EVP_DigestUpdate(w->gz_md, p, n);
        for (size_t off = 0; off < n;) {
                ssize_t k = write(w->out_fd, p + off, n - off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return tess_err(&w->cb_err, errno, "writing the layer: %s", strerror(errno));
                off += (size_t)k;
        }
        w->gz_size += (int64_t)n;
        if (w->o->written)
                w->o->written(w->o->written_data, w->gz_size);
        return 0;
}

/* Compress n bytes of p with zstd (end: finish the frame). */
static int zstd_feed(struct writer *w, const void *p, size_t n, bool end)
{
        ZSTD_inBuffer in = { p, n, 0 };
        size_t left;

        do {
                ZSTD_outBuffer out = { w->zbuf, OUT_CHUNK, 0 };
                left = ZSTD_compressStream2(w->zc, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
                if (ZSTD_isError(left))
                        return tess_err(&w->cb_err, EIO, "zstd: %s", ZSTD_getErrorName(left));
                int r = put_out(w, w->zbuf, out.pos);
                if (r < 0)
                        return r;
        } while (end ? left > 0 : in.pos < in.size);
        return 0;
}

static int flush_z(struct writer *w, int mode)
{
        if (w->zc)
                return zstd_feed(w, NULL, 0, mode == Z_FINISH);
        do {
                w->z.next_out = w->zbuf;
                w->z.avail_out = OUT_CHUNK;
                int zr = deflate(&w->z, mode);
                if (zr == Z_STREAM_ERROR)
                        return tess_err(&w->cb_err, EIO, "deflate failed");
                int r = put_out(w, w->zbuf, OUT_CHUNK - w->z.avail_out);
                if (r < 0)
                        return r;
        } while (w->z.avail_out == 0 || (mode == Z_FINISH && w->z.avail_in > 0));
        return 0;
}

static la_ssize_t on_write(struct archive *a UNUSED, void *data, const void *buf, size_t n)
{
        struct writer *w = data;

        if (w->rc < 0)
                return -1;
        EVP_DigestUpdate(w->tar_md, buf, n);
        w->tar_size += (int64_t)n;
        if (w->o->progress && w->tar_size >= w->progress_at) {
                w->o->progress(w->o->progress_data, w->tar_size);
                w->progress_at = w->tar_size + PROGRESS_EVERY;
        }
        if (w->zc) {
                w->rc = zstd_feed(w, buf, n, false);
                return w->rc < 0 ? -1 : (la_ssize_t)n;
        }
        w->z.next_in = (Bytef *)buf;
        w->z.avail_in = (uInt)n;
        while (w->z.avail_in > 0) {
                w->rc = flush_z(w, Z_NO_FLUSH);
                if (w->rc < 0)
                        return -1;
        }
        return (la_ssize_t)n;
}

static int arch_error(struct writer *w, const char *what)
{
        if (w->rc < 0) {
                tess_error_free(*w->err);
                *w->err = TAKE_PTR(w->cb_err);
                return w->rc;
        }
        return tess_err(w->err, EIO, "%s: %s", what, archive_error_string(w->a));
}

static const char *link_target(struct writer *w, const struct stat *st, const char *path)
{
        for (size_t i = 0; i < w->n_links; i++)
                if (w->links[i].dev == st->st_dev && w->links[i].ino == st->st_ino)
                        return w->links[i].path;
        if (w->n_links == w->cap_links)
                w->links =
                        xrealloc(w->links, (w->cap_links = w->cap_links ? 2 * w->cap_links : 64) * sizeof(*w->links));
        w->links[w->n_links++] = (struct link_seen){ st->st_dev, st->st_ino, xstrdup(path) };
        return NULL;
}

static int copy_data(struct writer *w, int dirfd, const char *name, const char *path, int64_t size)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        char buf[65536];
        int64_t left = size;

        if (fd < 0)
                return tess_err(w->err, errno, "opening '%s': %s", path, strerror(errno));
        while (left > 0) {
                ssize_t n = read(fd, buf, sizeof(buf) < (uint64_t)left ? sizeof(buf) : (size_t)left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return tess_err(w->err, errno, "reading '%s': %s", path, strerror(errno));
                if (n == 0 && !w->o->overlay_upper)
                        return tess_err(w->err, EIO, "'%s' shrank while it was written", path);
                if (n == 0) { /* being written in a running container: zeros stand in */
                        memset(buf, 0, sizeof(buf));
                        n = sizeof(buf) < (uint64_t)left ? (ssize_t)sizeof(buf) : (ssize_t)left;
                }
                if (archive_write_data(w->a, buf, (size_t)n) != n)
                        return arch_error(w, path);
                left -= n;
        }
        return 0;
}

static int bytewise(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int no_dots(const struct dirent *d)
{
        return !streq(d->d_name, ".") && !streq(d->d_name, "..");
}

static int write_dir(struct writer *w, int dirfd, const char *prefix, int depth);

static bool excluded(const struct writer *w, const char *path)
{
        for (const char *const *x = w->o->exclude; x && *x; x++)
                if (streq(*x, path))
                        return true;
        return false;
}

/* Is the directory opaque in its overlay (it hides what lower layers have)? */
static bool opaque(int dirfd)
{
        char v[2];
        ssize_t n = fgetxattr(dirfd, "trusted.overlay.opaque", v, sizeof(v));
        if (n < 0)
                n = fgetxattr(dirfd, "user.overlay.opaque", v, sizeof(v));
        return n == 1 && v[0] == 'y';
}

/* An empty file `marker` in directory `dir` (its owner's, root's for ""). */
static int write_marker(struct writer *w, const char *dir, const char *marker, const struct stat *owner)
{
        _cleanup_free_ char *path = *dir ? xasprintf("%s/%s", dir, marker) : xstrdup(marker);
        struct archive_entry *e = archive_entry_new();
        int r = 0;

        archive_entry_set_pathname(e, path);
        archive_entry_set_mode(e, S_IFREG | 0600);
        archive_entry_set_uid(e, owner ? owner->st_uid : 0);
        archive_entry_set_gid(e, owner ? owner->st_gid : 0);
        archive_entry_set_mtime(e, w->o->mtime >= 0 ? w->o->mtime : 0, 0);
        archive_entry_set_size(e, 0);
        if (archive_write_header(w->a, e) != ARCHIVE_OK)
                r = arch_error(w, path);
        archive_entry_free(e);
        w->entries++;
        return r;
}

/* The overlay's whiteout of `path` as the OCI's ".wh.<name>" beside it. */
static int write_whiteout(struct writer *w, const char *path, const struct stat *st)
{
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup("");
        _cleanup_free_ char *marker = xasprintf(WHITEOUT "%s", slash ? slash + 1 : path);

        return write_marker(w, dir, marker, st);
}

/* One entry `name` of directory `dirfd`, whose path in the layer is `path`. */
static int write_entry(struct writer *w, int dirfd, const char *name, const char *path, int depth)
{
        struct archive_entry *e;
        struct stat st;
        const char *hard;
        int r = 0;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return tess_err(w->err, errno, "'%s': %s", path, strerror(errno));
        if (S_ISSOCK(st.st_mode) || excluded(w, path))
                return 0;
        if (w->o->overlay_upper && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0))
                return write_whiteout(w, path, &st);
        e = archive_entry_new();
        archive_entry_set_pathname(e, path);
        archive_entry_set_mode(e, st.st_mode);
        archive_entry_set_uid(e, st.st_uid);
        archive_entry_set_gid(e, st.st_gid);
        archive_entry_set_mtime(e, w->o->mtime >= 0 ? w->o->mtime : st.st_mtim.tv_sec, 0);
        if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
                archive_entry_set_rdev(e, st.st_rdev);
        hard = !S_ISDIR(st.st_mode) && st.st_nlink > 1 ? link_target(w, &st, path) : NULL;
        if (hard) {
                archive_entry_set_hardlink(e, hard);
                archive_entry_set_size(e, 0);
        } else if (S_ISLNK(st.st_mode)) {
                char target[4097];
                ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
                if (n < 0) {
                        archive_entry_free(e);
                        return tess_err(w->err, errno, "reading link '%s': %s", path, strerror(errno));
                }
                target[n] = '\0';
                archive_entry_set_symlink(e, target);
        } else if (S_ISREG(st.st_mode)) {
                archive_entry_set_size(e, st.st_size);
        }
        if (archive_write_header(w->a, e) != ARCHIVE_OK)
                r = arch_error(w, path);
        archive_entry_free(e);
        w->entries++;
        if (r == 0 && !hard && S_ISREG(st.st_mode) && st.st_size > 0)
                r = copy_data(w, dirfd, name, path, st.st_size);
        if (r == 0 && S_ISDIR(st.st_mode)) {
                _cleanup_close_ int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        return tess_err(w->err, errno, "opening '%s': %s", path, strerror(errno));
                if (w->o->overlay_upper && opaque(sub))
                        r = write_marker(w, path, OPAQUE, &st);
                if (r == 0)
                        r = write_dir(w, sub, path, depth + 1);
        }
        return r;
}

static int write_dir(struct writer *w, int dirfd, const char *prefix, int depth)
{
        struct dirent **names = NULL;
        int n, r = 0;

        if (depth > PATH_DEPTH_MAX)
                return tess_err(w->err, ELOOP, "'%s': deeper than %d directories", prefix, PATH_DEPTH_MAX);
        /* scandirat reads relative to dirfd: "." is this directory */
        n = scandirat(dirfd, ".", &names, no_dots, bytewise);
        if (n < 0)
                return tess_err(w->err, errno, "listing '%s': %s", *prefix ? prefix : ".", strerror(errno));
        for (int i = 0; i < n; i++) {
                if (r == 0) {
                        _cleanup_free_ char *path =
                                *prefix ? xasprintf("%s/%s", prefix, names[i]->d_name) : xstrdup(names[i]->d_name);
                        r = write_entry(w, dirfd, names[i]->d_name, path, depth);
                }
                free(names[i]);
        }
        free(names);
        return r;
}

static void hex_digest(EVP_MD_CTX *md, char out[72])
{
        unsigned char sum[EVP_MAX_MD_SIZE];
        unsigned len = 0;

        EVP_DigestFinal_ex(md, sum, &len);
        memcpy(out, "sha256:", 7);
        for (unsigned i = 0; i < len && i < 32; i++)
                snprintf(out + 7 + 2 * i, 3, "%02x", sum[i]);
}

int layer_write(const char *root, const char *out, int64_t mtime, struct layer_info *ret, struct tess_error **err)
{
        return layer_write_opts(root, out, &(struct layer_write_opts){ .mtime = mtime }, ret, err);
}

int layer_write_opts(const char *root, const char *out, const struct layer_write_opts *o, struct layer_info *ret,
                     struct tess_error **err)
{
        struct writer w = { .o = o, .err = err, .out_fd = -1, .progress_at = PROGRESS_EVERY };
        int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

        if (rootfd < 0)
                return tess_err(err, errno, "opening '%s': %s", root, strerror(errno));
        w.out_fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (w.out_fd < 0) {
                r = tess_err(err, errno, "creating '%s': %s", out, strerror(errno));
                close(rootfd);
                return r;
        }
        w.zbuf = xmalloc(OUT_CHUNK);
        w.tar_md = EVP_MD_CTX_new();
        w.gz_md = EVP_MD_CTX_new();
        /* windowBits 15 + 16: a gzip wrapper with mtime 0, no name (gzip -n) */
        if (o->zstd && (w.zc = ZSTD_createCCtx()) != NULL) {
                ZSTD_CCtx_setParameter(w.zc, ZSTD_c_compressionLevel, o->level > 0 && o->level <= 19 ? o->level : 3);
                ZSTD_CCtx_setParameter(w.zc, ZSTD_c_contentSizeFlag, 0);
                ZSTD_CCtx_setParameter(w.zc, ZSTD_c_dictIDFlag, 0);
                /* compress in threads of their own while this one walks, reads and
                 * hashes (the frame is the same for any number of them; fails
                 * harmlessly where zstd has no threads) */
                ZSTD_CCtx_setParameter(w.zc, ZSTD_c_nbWorkers, o->zstd_threads > 1 ? o->zstd_threads : 1);
        }
        if (!w.tar_md || !w.gz_md || EVP_DigestInit_ex(w.tar_md, EVP_sha256(), NULL) != 1 ||
            EVP_DigestInit_ex(w.gz_md, EVP_sha256(), NULL) != 1 || (o->zstd && !w.zc) ||
            (!o->zstd && deflateInit2(&w.z, o->level > 0 && o->level <= 9 ? o->level : 6, Z_DEFLATED, 15 + 16, 8,
                                      Z_DEFAULT_STRATEGY) != Z_OK)) {
                r = tess_err(err, ENOMEM, "cannot start the layer's digests or compressor");
                goto out_free;
        }
        w.a = archive_write_new();
        archive_write_set_format_pax_restricted(w.a);
        /* names as the bytes they are (no translation from the locale's
         * charset, which fails on non-ASCII names in the C locale) */
        archive_write_set_format_option(w.a, "pax", "hdrcharset", "BINARY");
        archive_write_set_bytes_in_last_block(w.a, 1);
        if (archive_write_open2(w.a, &w, NULL, on_write, NULL, NULL) != ARCHIVE_OK) {
                r = arch_error(&w, "starting the tar");
                goto out_archive;
        }
        r = write_dir(&w, rootfd, "", 0);
        if (r == 0 && archive_write_close(w.a) != ARCHIVE_OK)
                r = arch_error(&w, "finishing the tar");
        if (r == 0 && (w.rc = flush_z(&w, Z_FINISH)) < 0)
                r = arch_error(&w, "finishing the layer");
        if (r == 0 && fsync(w.out_fd) < 0)
                r = tess_err(err, errno, "syncing '%s': %s", out, strerror(errno));
        if (r == 0) {
                *ret = (struct layer_info){ .size = w.gz_size, .tar_size = w.tar_size, .entries = w.entries };
                hex_digest(w.gz_md, ret->digest);
                hex_digest(w.tar_md, ret->diff_id);
        }
out_archive:
        archive_write_free(w.a);
        if (!w.zc)
                deflateEnd(&w.z);
out_free:
        ZSTD_freeCCtx(w.zc);
        EVP_MD_CTX_free(w.tar_md);
        EVP_MD_CTX_free(w.gz_md);
        free(w.zbuf);
        for (size_t i = 0; i < w.n_links; i++)
                free(w.links[i].path);
        free(w.links);
        tess_error_free(w.cb_err);
        close(w.out_fd);
        close(rootfd);
        if (r < 0)
                unlink(out);
        return r;
}
