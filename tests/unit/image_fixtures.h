/* image_fixtures.h - what the image store's tests share: tars built in
 * memory with libarchive's writer (layers, OCI layouts, docker save
 * archives), compression, digests, scratch directories. */
#ifndef TESS_TEST_IMAGE_FIXTURES_H
#define TESS_TEST_IMAGE_FIXTURES_H

#include "common/compat.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "image/image-internal.h"

/* ---- a tar in memory ---- */

struct tarb {
        struct archive *a;
        struct buf out;
};

static inline la_ssize_t tarb_write_cb(struct archive *a UNUSED, void *data, const void *p, size_t n)
{
        buf_append(&((struct tarb *)data)->out, p, n);
        return (la_ssize_t)n;
}

/* filter: ARCHIVE_FILTER_NONE, _GZIP or _ZSTD */
static inline void tarb_begin(struct tarb *t, int filter)
{
        t->out = (struct buf)BUF_INIT;
        t->a = archive_write_new();
        archive_write_set_format_pax_restricted(t->a);
        if (filter == ARCHIVE_FILTER_GZIP)
                archive_write_add_filter_gzip(t->a);
        else if (filter == ARCHIVE_FILTER_ZSTD)
                archive_write_add_filter_zstd(t->a);
        archive_write_set_bytes_in_last_block(t->a, 1);
        archive_write_open2(t->a, t, NULL, tarb_write_cb, NULL, NULL);
}

/* Add an entry (ownership and mtime fixed unless set) and its data. */
static inline void tarb_add(struct tarb *t, struct archive_entry *e, const void *data, size_t n)
{
        if (!archive_entry_mtime_is_set(e))
                archive_entry_set_mtime(e, 1700000000, 0);
        archive_entry_set_size(e, (la_int64_t)n);
        if (archive_write_header(t->a, e) != ARCHIVE_OK)
                abort();
        if (n && archive_write_data(t->a, data, n) != (la_ssize_t)n)
                abort();
        archive_entry_free(e);
}

static inline struct archive_entry *tarb_entry(const char *path, mode_t type, mode_t perm)
{
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, path);
        archive_entry_set_filetype(e, type);
        archive_entry_set_perm(e, perm);
        return e;
}

static inline void tarb_file(struct tarb *t, const char *path, const char *content)
{
        tarb_add(t, tarb_entry(path, AE_IFREG, 0644), content, strlen(content));
}

static inline void tarb_dir(struct tarb *t, const char *path)
{
        tarb_add(t, tarb_entry(path, AE_IFDIR, 0755), NULL, 0);
}

static inline void tarb_symlink(struct tarb *t, const char *path, const char *target)
{
        struct archive_entry *e = tarb_entry(path, AE_IFLNK, 0777);
        archive_entry_set_symlink(e, target);
        tarb_add(t, e, NULL, 0);
}

static inline void tarb_hardlink(struct tarb *t, const char *path, const char *target)
{
        struct archive_entry *e = tarb_entry(path, AE_IFREG, 0644);
        archive_entry_set_hardlink(e, target);
        tarb_add(t, e, NULL, 0);
}

static inline void tarb_device(struct tarb *t, const char *path, mode_t type, unsigned major, unsigned minor)
{
        struct archive_entry *e = tarb_entry(path, type, 0666);
        archive_entry_set_rdevmajor(e, major);
        archive_entry_set_rdevminor(e, minor);
        tarb_add(t, e, NULL, 0);
}

/* The archive's bytes (caller frees). */
static inline char *tarb_end(struct tarb *t, size_t *ret_len)
{
        archive_write_close(t->a);
        archive_write_free(t->a);
        return buf_detach(&t->out, ret_len);
}

/* ---- digests and scratch space ---- */

static inline void digest_of(const void *p, size_t n, char out[IMAGE_DIGEST_SIZE])
{
        memcpy(out, "sha256:", 7);
        sha256_hex(p, n, out + 7);
}

/* A fresh directory under /tmp (caller frees; remove with scratch_remove). */
static inline char *scratch_dir(const char *what)
{
        char *dir = xasprintf("/tmp/tessera-test-%s.XXXXXX", what);
        if (!mkdtemp(dir))
                abort();
        return dir;
}

static inline void scratch_remove(char *dir)
{
        if (dir)
                layer_remove(AT_FDCWD, dir, NULL);
        free(dir);
}

static inline bool path_exists(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0;
}

/* How many entries <store>/<sub> holds (0 when it is missing). */
static inline size_t count_in(const char *store, const char *sub)
{
        char *p = xasprintf("%s/%s", store, sub);
        struct dirent *de;
        DIR *d = opendir(p);
        size_t n = 0;

        while (d && (de = readdir(d)))
                n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
        if (d)
                closedir(d);
        free(p);
        return n;
}

static inline void write_file(const char *path, const void *p, size_t n)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, p, n) != (ssize_t)n)
                abort();
        close(fd);
}

#endif
