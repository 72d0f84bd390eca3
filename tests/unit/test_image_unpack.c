/* test_image_unpack.c - unpacking layers (src/image/image_unpack.c,
 * layer_inflate.c, image_path.c): what a normal layer makes, compressed
 * every way a registry serves it (gzip of one or more members, zstd of one
 * or more frames, uncompressed) through each entry point, broken streams
 * refused with the reason, overlay whiteouts, and every malicious layer
 * refused or neutralized as src/image/README.md says.  Needs root (owners,
 * mknod, trusted.* xattrs); skips otherwise. */
#include "common/compat.h"

#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <zlib.h>
#include <zstd.h>

#include "../lib/test.h"
#include "common/fs.h"
#include "image/layer_inflate.h"
#include "image_fixtures.h"

/* A scratch directory holding root/ (the layer) and outside/, which must
 * stay empty whatever the layer does. */
struct sandbox {
        char *base, *root, *outside;
        int rootfd;
};

static void sandbox_open(struct sandbox *sb)
{
        sb->base = scratch_dir("unpack");
        sb->root = xasprintf("%s/root", sb->base);
        sb->outside = xasprintf("%s/outside", sb->base);
        if (mkdir(sb->root, 0755) < 0 || mkdir(sb->outside, 0755) < 0)
                abort();
        sb->rootfd = open(sb->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Nothing was made beside root/: outside/ is empty (rmdir succeeds), and
 * nothing named "escape" appeared in the base. */
static bool nothing_outside(const struct sandbox *sb)
{
        _cleanup_free_ char *probe = xasprintf("%s/escape", sb->base);
        bool empty = rmdir(sb->outside) == 0;

        if (empty)
                mkdir(sb->outside, 0755);
        return empty && !path_exists(probe);
}

static void sandbox_close(struct sandbox *sb)
{
        close(sb->rootfd);
        free(sb->root);
        free(sb->outside);
        scratch_remove(sb->base);
}

static const struct layer_policy default_policy = {
        .allow_setuid = true,
        .max_bytes = IMAGE_LAYER_MAX_BYTES,
        .max_entries = IMAGE_LAYER_MAX_ENTRIES,
};

/* Unpack bytes into sb; the error code (0 on success), and its message in
 * *ret_msg when asked (caller frees; NULL on success). */
static int unpack_bytes_msg(struct sandbox *sb, const char *data, size_t len, const struct layer_policy *pol,
                            char diff_id[IMAGE_DIGEST_SIZE], char **ret_msg)
{
        struct tess_error *err = NULL;
        char ignored[IMAGE_DIGEST_SIZE];
        int r = layer_unpack_mem(sb->rootfd, data, len, pol ? pol : &default_policy, diff_id ? diff_id : ignored,
                                 &err);

        if (r < 0) {
                CHECK(err && err->code == -r);
                printf("# refused: %s\n", err ? err->msg : "(no error)");
        }
        if (ret_msg)
                *ret_msg = r < 0 && err ? xstrdup(err->msg) : NULL;
        tess_error_free(err);
        return -r;
}

static int unpack_bytes(struct sandbox *sb, const char *data, size_t len, const struct layer_policy *pol,
                        char diff_id[IMAGE_DIGEST_SIZE])
{
        return unpack_bytes_msg(sb, data, len, pol, diff_id, NULL);
}

static int unpack(struct sandbox *sb, struct tarb *t, const struct layer_policy *pol)
{
        size_t len;
        _cleanup_free_ char *data = tarb_end(t, &len);
        return unpack_bytes(sb, data, len, pol, NULL);
}

static bool stat_in(const struct sandbox *sb, const char *rel, struct stat *st)
{
        _cleanup_free_ char *p = xasprintf("%s/%s", sb->root, rel);
        return lstat(p, st) == 0;
}

static bool exists_in(const struct sandbox *sb, const char *rel)
{
        struct stat st;
        return stat_in(sb, rel, &st);
}

static char *read_in(const struct sandbox *sb, const char *rel)
{
        _cleanup_free_ char *p = xasprintf("%s/%s", sb->root, rel);
        struct tess_error *err = NULL;
        char *data = NULL;
        size_t len;

        if (fs_read_file(p, 1 << 20, &data, &len, &err) < 0)
                err = tess_error_free(err);
        return data;
}

static ssize_t xattr_in(const struct sandbox *sb, const char *rel, const char *name, char *value, size_t size)
{
        _cleanup_free_ char *p = xasprintf("%s/%s", sb->root, rel);
        return lgetxattr(p, name, value, size);
}

#define NEED_ROOT()                         \
        do {                                \
                if (geteuid() != 0)         \
                        SKIP("needs root"); \
        } while (0)

/* ---- paths ---- */

static void test_path_clean(void)
{
        struct buf deep = BUF_INIT;
        char *p = NULL;

        CHECK_INTEQ(beneath_clean("/a//b/./c/", &p), 0);
        CHECK_STREQ(p, "a/b/c");
        free(p);
        CHECK_INTEQ(beneath_clean("./", &p), 0);
        CHECK_STREQ(p, "");
        free(p);
        CHECK_INTEQ(beneath_clean("a/..b/c..", &p), 0);
        CHECK_STREQ(p, "a/..b/c..");
        free(p);
        CHECK_INTEQ(beneath_clean("a/../b", &p), -EPERM);
        CHECK_INTEQ(beneath_clean("..", &p), -EPERM);
        CHECK_INTEQ(beneath_clean("/../etc", &p), -EPERM);
        for (int i = 0; i <= BENEATH_DEPTH_MAX; i++)
                buf_puts(&deep, "d/");
        CHECK_INTEQ(beneath_clean(deep.data, &p), -ENAMETOOLONG);
        buf_release(&deep);
}

/* ---- normal layers ---- */

static void add_sample_entries(struct tarb *t)
{
        struct archive_entry *e;

        tarb_dir(t, "./");
        tarb_dir(t, "etc/");
        e = tarb_entry("etc/hostname", AE_IFREG, 0640);
        archive_entry_set_uid(e, 1000);
        archive_entry_set_gid(e, 2000);
        archive_entry_set_mtime(e, 1234567890, 0);
        tarb_add(t, e, "box\n", 4);
        tarb_file(t, "usr/bin/tool", "#!/bin/sh\n"); /* no entry for usr/ nor usr/bin/ */
        tarb_symlink(t, "bin", "usr/bin");
        tarb_symlink(t, "etc/mtab", "/proc/self/mounts");
        tarb_hardlink(t, "usr/bin/tool2", "usr/bin/tool");
        tarb_add(t, tarb_entry("run/fifo", AE_IFIFO, 0600), NULL, 0);
}

static void test_unpack_regular_layer(void)
{
        struct sandbox sb;
        struct tarb t;
        struct stat a, b;
        char link[64] = { 0 }, diff_id[IMAGE_DIGEST_SIZE], want[IMAGE_DIGEST_SIZE];
        _cleanup_free_ char *data = NULL, *hostname = NULL;
        size_t len;

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        add_sample_entries(&t);
        data = tarb_end(&t, &len);
        digest_of(data, len, want);
        CHECK_INTEQ(unpack_bytes(&sb, data, len, NULL, diff_id), 0);
        CHECK_STREQ(diff_id, want);

        hostname = read_in(&sb, "etc/hostname");
        CHECK_STREQ(hostname, "box\n");
        CHECK(stat_in(&sb, "etc/hostname", &a));
        CHECK_INTEQ(a.st_uid, 1000);
        CHECK_INTEQ(a.st_gid, 2000);
        CHECK_INTEQ(a.st_mode & 07777, 0640);
        CHECK_INTEQ(a.st_mtime, 1234567890);
        CHECK(stat_in(&sb, "usr/bin", &a) && S_ISDIR(a.st_mode) && (a.st_mode & 07777) == 0755);
        CHECK(stat_in(&sb, "bin", &a) && S_ISLNK(a.st_mode));
        {
                _cleanup_free_ char *p = xasprintf("%s/bin", sb.root);
                CHECK_INTEQ(readlink(p, link, sizeof(link) - 1), 7);
                CHECK_STREQ(link, "usr/bin");
        }
        CHECK(stat_in(&sb, "usr/bin/tool", &a) && stat_in(&sb, "usr/bin/tool2", &b));
        CHECK(a.st_ino == b.st_ino && a.st_nlink == 2);
        CHECK(stat_in(&sb, "run/fifo", &a) && S_ISFIFO(a.st_mode));
        CHECK(stat_in(&sb, ".", &a) && (a.st_mode & 07777) == 0755);
        CHECK(nothing_outside(&sb));
        sandbox_close(&sb);
}

/* A compressed layer's diff_id is the digest of the tar inside. */
static void check_compressed(int filter)
{
        struct sandbox sb;
        struct tarb plain, packed;
        char diff_id[IMAGE_DIGEST_SIZE], want[IMAGE_DIGEST_SIZE];
        _cleanup_free_ char *tar = NULL, *blob = NULL;
        size_t tar_len, blob_len;

        sandbox_open(&sb);
        tarb_begin(&plain, ARCHIVE_FILTER_NONE);
        add_sample_entries(&plain);
        tar = tarb_end(&plain, &tar_len);
        digest_of(tar, tar_len, want);
        tarb_begin(&packed, filter);
        add_sample_entries(&packed);
        blob = tarb_end(&packed, &blob_len);
        CHECK(blob_len != tar_len);
        CHECK_INTEQ(unpack_bytes(&sb, blob, blob_len, NULL, diff_id), 0);
        CHECK_STREQ(diff_id, want);
        CHECK(exists_in(&sb, "usr/bin/tool2"));
        sandbox_close(&sb);
}

static void test_unpack_gzip_and_zstd(void)
{
        NEED_ROOT();
        check_compressed(ARCHIVE_FILTER_GZIP);
        check_compressed(ARCHIVE_FILTER_ZSTD);
}

static void test_unpack_whiteouts(void)
{
        struct sandbox sb;
        struct tarb t;
        struct stat st;
        char value[8] = { 0 };

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_dir(&t, "a/");
        tarb_file(&t, "a/keep", "k");
        tarb_file(&t, ".wh.gone", "");
        tarb_file(&t, "a/.wh.old", "");
        tarb_dir(&t, "b/");
        tarb_file(&t, "b/.wh..wh..opq", "");
        tarb_file(&t, "b/new", "n");
        tarb_file(&t, "c", "replaced by its whiteout");
        tarb_file(&t, ".wh.c", "");
        tarb_dir(&t, ".wh..wh.plnk/");
        tarb_file(&t, ".wh..wh.plnk/123", "aufs");
        CHECK_INTEQ(unpack(&sb, &t, NULL), 0);

        CHECK(stat_in(&sb, "gone", &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0));
        CHECK(stat_in(&sb, "a/old", &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0));
        CHECK(stat_in(&sb, "c", &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0));
        CHECK(!exists_in(&sb, ".wh.gone") && !exists_in(&sb, "a/.wh.old") && !exists_in(&sb, "b/.wh..wh..opq"));
        CHECK(exists_in(&sb, "a/keep") && exists_in(&sb, "b/new"));
        CHECK_INTEQ(xattr_in(&sb, "b", "trusted.overlay.opaque", value, sizeof(value)), 1);
        CHECK_STREQ(value, "y");
        CHECK(xattr_in(&sb, "a", "trusted.overlay.opaque", value, sizeof(value)) < 0);
        CHECK(!exists_in(&sb, ".wh..wh.plnk"));
        sandbox_close(&sb);
}

static void test_unpack_replaces_entries(void)
{
        _cleanup_free_ char *name = xasprintf("tessera-test-replaced-%ld", (long)getpid());
        _cleanup_free_ char *host = xasprintf("/tmp/%s", name), *entry = xasprintf("a/%s", name);
        struct sandbox sb;
        struct tarb t;
        struct stat st;

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_symlink(&t, "a", "/tmp");
        tarb_dir(&t, "a/"); /* the directory replaces the symlink ... */
        tarb_file(&t, entry, "inside");
        tarb_file(&t, "f", "file first");
        tarb_dir(&t, "f/");
        tarb_dir(&t, "d/");
        tarb_file(&t, "d/inner", "gone with d");
        tarb_file(&t, "d", "file last");
        CHECK_INTEQ(unpack(&sb, &t, NULL), 0);
        CHECK(stat_in(&sb, "a", &st) && S_ISDIR(st.st_mode));
        CHECK(exists_in(&sb, entry)); /* ... so the file lands inside the layer */
        CHECK(!path_exists(host));
        CHECK(stat_in(&sb, "f", &st) && S_ISDIR(st.st_mode));
        CHECK(stat_in(&sb, "d", &st) && S_ISREG(st.st_mode));
        sandbox_close(&sb);
}

/* Entries are made first and cleared out of the way only when something
 * is there: every kind over every other. */
static void test_unpack_replaces_every_kind(void)
{
        struct sandbox sb;
        struct tarb t;
        struct stat st, target;
        _cleanup_free_ char *a = NULL;

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_GZIP);
        tarb_file(&t, "file", "first");
        tarb_file(&t, "file", "second");
        tarb_file(&t, "link", "a file first");
        tarb_symlink(&t, "link", "file");
        tarb_symlink(&t, "fifo", "file");
        tarb_add(&t, tarb_entry("fifo", AE_IFIFO, 0640), NULL, 0);
        tarb_file(&t, "hard", "a file first");
        tarb_hardlink(&t, "hard", "file");
        tarb_dir(&t, "dir/");
        tarb_file(&t, "dir/inner", "x");
        tarb_symlink(&t, "dir", "file");
        tarb_file(&t, "keep/", "");
        tarb_dir(&t, "keep/");
        tarb_dir(&t, "keep/");
        CHECK_INTEQ(unpack(&sb, &t, NULL), 0);
        a = read_in(&sb, "file");
        CHECK_STREQ(a, "second");
        CHECK(stat_in(&sb, "link", &st) && S_ISLNK(st.st_mode));
        CHECK(stat_in(&sb, "fifo", &st) && S_ISFIFO(st.st_mode) && (st.st_mode & 07777) == 0640);
        CHECK(stat_in(&sb, "hard", &st) && stat_in(&sb, "file", &target) && st.st_ino == target.st_ino);
        CHECK(stat_in(&sb, "dir", &st) && S_ISLNK(st.st_mode));
        CHECK(stat_in(&sb, "keep", &st) && S_ISDIR(st.st_mode));
        sandbox_close(&sb);
}

/* A sparse file whose data ends before its size (GNU tar --sparse
 * --format=posix, gzip'd: "dense", then a hole to 1 MiB). */
static const char sparse_layer[] =
        "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xed\xd5\xb1\x0a\xc2\x30\x10\x06\xe0\xcc\x79\x8a\x3e\x41"
        "\x7a\x77\xa6\xad\x0e\x5d\xd5\x49\x04\xf1\x01\x02\x66\xa8\x68\x95\x44\x41\x7c\x7a\xa3\x22\x68\x07"
        "\x27\x15\xc5\xff\x83\x90\x70\x59\x12\x8e\x3f\x31\xf9\xd4\x1d\xc6\xde\x2d\x7c\x88\x79\xdc\xba\x10"
        "\xbd\x7a\x35\x4a\x4a\x6b\x2f\x73\xd2\x9d\x89\x6d\xa1\xd2\x10\x5b\x55\x64\xcf\x75\xe6\x42\x48\x65"
        "\x07\xf5\x01\xfb\xb8\x73\x21\x1d\x45\xfd\x27\x91\x6c\x34\x99\x9b\x6b\xe7\xcd\xda\x2d\x37\xa1\x66"
        "\xdd\xa9\x36\x6d\xaa\x92\x96\xf2\xbe\xda\xba\xb5\xaf\xaf\x6b\xdd\xe3\xfb\x9d\xe0\xdd\x2a\x36\x47"
        "\x5f\x33\xd9\x7e\x51\x95\x5a\xc1\xb7\x32\x79\x6a\xdc\xec\xd2\xb7\x61\xb3\xf2\x46\x44\xfa\xf2\xe2"
        "\x87\xe0\x79\xfe\x99\xcf\xeb\xc7\xfc\xf7\x2a\x62\x95\xd1\x2f\xe5\xbf\x7b\xb9\x5f\xc9\xbf\x26\x6d"
        "\x69\x50\xea\x5b\x56\x09\x69\xfd\x27\x0b\xdf\xbe\xe1\xc7\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00"
        "\x00\x00\x00\x00\x00\x80\x4f\x3a\x01\x15\x21\x87\x58\x00\x28\x00\x00";

static void test_unpack_sparse_file(void)
{
        struct sandbox sb;
        struct stat st;
        _cleanup_free_ char *data = NULL;

        NEED_ROOT();
        sandbox_open(&sb);
        CHECK_INTEQ(unpack_bytes(&sb, sparse_layer, sizeof(sparse_layer) - 1, NULL, NULL), 0);
        CHECK(stat_in(&sb, "sparse", &st) && st.st_size == 1 << 20);
        data = read_in(&sb, "sparse");
        CHECK(data && st.st_size == 1 << 20 && memcmp(data, "dense", 5) == 0 && data[5] == '\0' &&
              data[(1 << 20) - 1] == '\0');
        sandbox_close(&sb);
}

/* ---- compressed streams and entry points ---- */

#define BIG_SIZE (300 * 1024) /* spans several of the inflater's output buffers */

/* BIG_SIZE bytes of noise (caller frees). */
static char *noise(void)
{
        char *big = xmalloc(BIG_SIZE);
        uint32_t x = 12345;

        for (size_t i = 0; i < BIG_SIZE; i++) {
                x = x * 1103515245u + 12345u;
                big[i] = (char)(x >> 24);
        }
        return big;
}

/* The sample entries and a big file of noise, as an uncompressed tar
 * (caller frees). */
static char *sample_tar(size_t *ret_len)
{
        struct tarb t;
        char *big = noise();

        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        add_sample_entries(&t);
        tarb_add(&t, tarb_entry("big", AE_IFREG, 0644), big, BIG_SIZE);
        free(big);
        return tarb_end(&t, ret_len);
}

/* One gzip member holding n bytes, appended to out (zlib, as gzip writes);
 * full_header: with every optional field of the header (extra, name,
 * comment, header CRC at FULL_HEADER_HCRC). */
#define FULL_HEADER_HCRC (10 + 2 + 6 + 10 + 10)
static void gzip_member(struct buf *out, const void *p, size_t n, bool full_header)
{
        static char extra[] = "AB\x02\x00xy", name[] = "layer.tar", comment[] = "a comment";
        gz_header h = {
                .os = 3,
                .extra = (Bytef *)extra,
                .extra_len = sizeof(extra) - 1,
                .name = (Bytef *)name,
                .comment = (Bytef *)comment,
                .hcrc = 1,
        };
        z_stream z = { 0 };
        char chunk[16384];
        int r;

        if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                abort();
        if (full_header && deflateSetHeader(&z, &h) != Z_OK)
                abort();
        z.next_in = (Bytef *)p;
        z.avail_in = (uInt)n;
        do {
                z.next_out = (Bytef *)chunk;
                z.avail_out = sizeof(chunk);
                r = deflate(&z, Z_FINISH);
                buf_append(out, chunk, sizeof(chunk) - z.avail_out);
        } while (r == Z_OK);
        if (r != Z_STREAM_END)
                abort();
        deflateEnd(&z);
}

/* One zstd frame holding n bytes, appended to out. */
static void zstd_frame(struct buf *out, const void *p, size_t n)
{
        size_t cap = ZSTD_compressBound(n), k;
        char *dst = xmalloc(cap);

        k = ZSTD_compress(dst, cap, p, n, 3);
        if (ZSTD_isError(k))
                abort();
        buf_append(out, dst, k);
        free(dst);
}

/* The tar cut in pieces at `cuts` (ascending, within it), each piece
 * compressed on its own (gzip members, every other with a full header, or
 * zstd frames), one after another. */
static char *pieces(int filter, const char *tar, size_t len, const size_t *cuts, size_t ncuts, size_t *ret_len)
{
        struct buf out = BUF_INIT;
        size_t from = 0;

        for (size_t i = 0; i <= ncuts; i++) {
                size_t to = i < ncuts ? cuts[i] : len;
                if (filter == ARCHIVE_FILTER_GZIP)
                        gzip_member(&out, tar + from, to - from, i % 2 == 1);
                else
                        zstd_frame(&out, tar + from, to - from);
                from = to;
        }
        return buf_detach(&out, ret_len);
}

/* The layer in sb is the sample tar's: its files, and the diff_id of the tar. */
static void check_sample_unpacked(const struct sandbox *sb, const char *diff_id, const char *want)
{
        _cleanup_free_ char *hostname = read_in(sb, "etc/hostname");
        _cleanup_free_ char *big = NULL, *want_big = noise();
        struct stat st;

        CHECK_STREQ(diff_id, want);
        CHECK_STREQ(hostname, "box\n");
        CHECK(exists_in(sb, "usr/bin/tool2"));
        CHECK(stat_in(sb, "big", &st) && st.st_size == BIG_SIZE);
        big = read_in(sb, "big");
        CHECK(big && memcmp(big, want_big, BIG_SIZE) == 0);
}

/* blob unpacks into a fresh sandbox as the sample tar whose diff_id is want. */
static void check_unpacks_as_sample(const char *blob, size_t len, const char *want)
{
        struct sandbox sb;
        char diff_id[IMAGE_DIGEST_SIZE] = "";

        sandbox_open(&sb);
        CHECK_INTEQ(unpack_bytes(&sb, blob, len, NULL, diff_id), 0);
        check_sample_unpacked(&sb, diff_id, want);
        sandbox_close(&sb);
}

/* blob is refused with EBADMSG and a message that has `what` in it. */
static void check_refused(const char *blob, size_t len, const char *what)
{
        struct sandbox sb;
        _cleanup_free_ char *msg = NULL;

        sandbox_open(&sb);
        CHECK_INTEQ(unpack_bytes_msg(&sb, blob, len, NULL, NULL, &msg), EBADMSG);
        CHECK(msg && strstr(msg, what));
        if (msg && !strstr(msg, what))
                printf("# wanted '%s' in: %s\n", what, msg);
        sandbox_close(&sb);
}

/* gzip -c a b > ab and pigz/docker's layers can hold several members; the
 * diff_id covers what they all hold.  After the last member, what is not a
 * gzip header (zero padding, or other bytes) is ignored, as libarchive,
 * zlib's gzread and GNU gzip do. */
static void test_unpack_gzip_members(void)
{
        _cleanup_free_ char *tar = NULL, *blob = NULL;
        char want[IMAGE_DIGEST_SIZE];
        struct buf padded = BUF_INIT;
        size_t tar_len, len, cuts[3];

        NEED_ROOT();
        tar = sample_tar(&tar_len);
        digest_of(tar, tar_len, want);
        cuts[0] = 1000; /* inside an entry's header */
        cuts[1] = 1000; /* an empty member */
        cuts[2] = tar_len / 2;
        blob = pieces(ARCHIVE_FILTER_GZIP, tar, tar_len, cuts, 3, &len);
        check_unpacks_as_sample(blob, len, want);

        buf_append(&padded, blob, len);
        for (int i = 0; i < 1024; i++)
                buf_append(&padded, "", 1);
        check_unpacks_as_sample(padded.data, padded.len, want);
        buf_append(&padded, "trailing bytes", 14);
        check_unpacks_as_sample(padded.data, padded.len, want);
        buf_release(&padded);
}

static void test_unpack_gzip_truncated(void)
{
        _cleanup_free_ char *tar = NULL, *blob = NULL;
        size_t tar_len, len, cuts[1];

        NEED_ROOT();
        tar = sample_tar(&tar_len);
        cuts[0] = tar_len / 3;
        blob = pieces(ARCHIVE_FILTER_GZIP, tar, tar_len, cuts, 1, &len);
        check_refused(blob, 2, "not a valid layer: truncated gzip stream");       /* the magic only */
        check_refused(blob, 10, "not a valid layer: truncated gzip stream");      /* the header only */
        check_refused(blob, len / 2, "not a valid layer: truncated gzip stream"); /* in the data */
        check_refused(blob, len - 4, "not a valid layer: truncated gzip stream"); /* half the trailer */
}

static void test_unpack_gzip_corrupt(void)
{
        _cleanup_free_ char *tar = NULL, *blob = NULL;
        char want[IMAGE_DIGEST_SIZE];
        size_t tar_len, len;

        NEED_ROOT();
        tar = sample_tar(&tar_len);
        digest_of(tar, tar_len, want);
        blob = pieces(ARCHIVE_FILTER_GZIP, tar, tar_len, NULL, 0, &len);
        blob[len - 8] ^= 0x55; /* the CRC-32 */
        check_refused(blob, len, "not a valid layer: gzip stream: checksum mismatch");
        blob[len - 8] ^= 0x55;
        blob[len - 3] ^= 0x01; /* the size */
        check_refused(blob, len, "not a valid layer: gzip stream: checksum mismatch");
        blob[len - 3] ^= 0x01;
        blob[3] |= 0x80; /* a reserved flag */
        check_refused(blob, len, "not a valid layer: gzip stream: invalid header");
        blob[3] &= 0x7f;
        blob[2] = 7; /* not deflate */
        check_refused(blob, len, "not a valid layer: gzip stream: ");
        blob[2] = 8;
        memset(blob + 20, 0xff, 64); /* the data */
        check_refused(blob, len, "not a valid layer: gzip stream: ");
        free(blob);

        blob = pieces(ARCHIVE_FILTER_GZIP, tar, tar_len, (size_t[]){ 0 }, 1, &len); /* empty, then full_header */
        check_unpacks_as_sample(blob, len, want);
        blob[20 + FULL_HEADER_HCRC] ^= 0x01; /* (an empty member is 20 bytes) */
        check_refused(blob, len, "not a valid layer: gzip stream: header checksum mismatch");

        /* found by fuzz_layer_unpack (corpus gzip-bad-lookback): isal_inflate
         * fails with its input counters off */
        check_refused("\x1f\x8b\x08\x00\x61\x28\x8b\x08\xfd\xb5\x1a\x0e\x00\x00\x20\x61\x00\x35\x00\x00\x00"
                      "\x00\x00\x01\x55\x48\x6d",
                      27, "not a valid layer: gzip stream: invalid back-reference distance");
}

/* zstd: frames one after another (a skippable frame among them); a
 * truncated or corrupt stream, or bytes after the last frame, refused. */
static void test_unpack_zstd_frames(void)
{
        static const char skippable[] = "\x50\x2a\x4d\x18\x04\x00\x00\x00meta";
        _cleanup_free_ char *tar = NULL, *blob = NULL;
        struct buf b = BUF_INIT;
        char want[IMAGE_DIGEST_SIZE];
        size_t tar_len, len, cuts[2];

        NEED_ROOT();
        tar = sample_tar(&tar_len);
        digest_of(tar, tar_len, want);
        cuts[0] = 777;
        cuts[1] = tar_len / 2;
        blob = pieces(ARCHIVE_FILTER_ZSTD, tar, tar_len, cuts, 2, &len);
        check_unpacks_as_sample(blob, len, want);
        buf_append(&b, skippable, sizeof(skippable) - 1);
        buf_append(&b, blob, len);
        check_unpacks_as_sample(b.data, b.len, want);

        check_refused(blob, len - 3, "not a valid layer: truncated zstd stream");
        buf_reset(&b);
        buf_append(&b, blob, len);
        buf_append(&b, "\0\0\0\0\0\0\0\0", 8);
        check_refused(b.data, b.len, "not a valid layer: zstd stream: ");
        blob[4] |= 0x08; /* a reserved bit of the first frame's header */
        check_refused(blob, len, "not a valid layer: zstd stream: ");
        buf_release(&b);
}

/* OCI allows uncompressed layers: whatever is neither gzip nor zstd is read
 * as a tar, and the diff_id is the blob's digest. */
static void test_unpack_uncompressed(void)
{
        _cleanup_free_ char *tar = NULL;
        char want[IMAGE_DIGEST_SIZE];
        size_t tar_len;

        NEED_ROOT();
        tar = sample_tar(&tar_len);
        digest_of(tar, tar_len, want);
        check_unpacks_as_sample(tar, tar_len, want);
        check_refused("\x1f", 1, "not a valid layer: "); /* too short for a tar */
}

/* ---- the other entry points: an fd (a pipe, in small pieces) and a queue */

struct feeder {
        const char *p;
        size_t len;
        bool bytewise;         /* one byte per write */
        int fd;                /* a pipe's write end, or -1 */
        struct image_queue *q; /* or the queue */
};

static void *feed(void *data)
{
        struct feeder *f = data;
        static const size_t steps[] = { 1, 2, 3, 5, 8, 13, 21, 100, 1000, 4096 };

        for (size_t done = 0, i = 0; done < f->len; i++) {
                size_t n = f->bytewise ? 1 : steps[i % ARRAY_SIZE(steps)];
                if (n > f->len - done)
                        n = f->len - done;
                if (f->fd >= 0) {
                        ssize_t k = write(f->fd, f->p + done, n);
                        if (k <= 0)
                                break; /* the reader is gone */
                        n = (size_t)k;
                } else if (!image_queue_write(f->q, f->p + done, n)) {
                        return NULL;
                }
                done += n;
        }
        if (f->fd >= 0)
                close(f->fd);
        else
                image_queue_close(f->q, true);
        return NULL;
}

/* Given as the policy, the default one, and a pipe is fed a byte at a time. */
static const struct layer_policy bytewise_policy = {
        .allow_setuid = true,
        .max_bytes = IMAGE_LAYER_MAX_BYTES,
        .max_entries = IMAGE_LAYER_MAX_ENTRIES,
};

/* Unpack blob from a pipe (fd) or a queue into sb; the error code, and the
 * diff_id. */
static int unpack_fed(const char *blob, size_t len, bool from_queue, const struct layer_policy *pol,
                      char diff_id[IMAGE_DIGEST_SIZE], struct sandbox *sb)
{
        struct feeder f = { .p = blob, .len = len, .fd = -1, .bytewise = pol == &bytewise_policy };
        struct image_queue q;
        struct tess_error *err = NULL;
        pthread_t thread;
        int pipefd[2] = { -1, -1 }, r;

        if (!pol)
                pol = &default_policy;
        if (from_queue) {
                image_queue_init(&q);
                f.q = &q;
        } else {
                if (pipe2(pipefd, O_CLOEXEC) < 0)
                        abort();
                f.fd = pipefd[1];
        }
        if (pthread_create(&thread, NULL, feed, &f) != 0)
                abort();
        if (from_queue)
                r = layer_unpack_queue(sb->rootfd, &q, pol, diff_id, &err);
        else
                r = layer_unpack_fd(sb->rootfd, pipefd[0], pol, diff_id, &err);
        if (!from_queue)
                close(pipefd[0]); /* (a writer still writing gets EPIPE) */
        pthread_join(thread, NULL);
        if (from_queue)
                image_queue_release(&q);
        if (r < 0) {
                CHECK(err && err->code == -r);
                printf("# refused: %s\n", err ? err->msg : "(no error)");
        }
        tess_error_free(err);
        return -r;
}

static void test_unpack_entry_points(void)
{
        _cleanup_free_ char *tar = NULL, *gz = NULL, *zst = NULL;
        char want[IMAGE_DIGEST_SIZE];
        size_t tar_len, gz_len, zst_len, cuts[2];

        NEED_ROOT();
        signal(SIGPIPE, SIG_IGN);
        tar = sample_tar(&tar_len);
        digest_of(tar, tar_len, want);
        cuts[0] = 3;
        cuts[1] = tar_len / 2;
        gz = pieces(ARCHIVE_FILTER_GZIP, tar, tar_len, cuts, 2, &gz_len);
        zst = pieces(ARCHIVE_FILTER_ZSTD, tar, tar_len, cuts, 2, &zst_len);
        for (int from_queue = 0; from_queue <= 1; from_queue++) {
                const struct {
                        const char *blob;
                        size_t len;
                } blobs[] = { { tar, tar_len }, { gz, gz_len }, { zst, zst_len } };
                for (size_t i = 0; i < ARRAY_SIZE(blobs); i++) {
                        struct layer_policy small = default_policy;
                        struct sandbox sb;
                        char diff_id[IMAGE_DIGEST_SIZE] = "";

                        sandbox_open(&sb);
                        CHECK_INTEQ(unpack_fed(blobs[i].blob, blobs[i].len, from_queue, NULL, diff_id, &sb), 0);
                        check_sample_unpacked(&sb, diff_id, want);
                        sandbox_close(&sb);

                        sandbox_open(&sb);
                        CHECK_INTEQ(unpack_fed(blobs[i].blob, blobs[i].len / 2, from_queue, NULL, diff_id, &sb),
                                    EBADMSG);
                        small.max_bytes = BIG_SIZE / 2;
                        CHECK_INTEQ(unpack_fed(blobs[i].blob, blobs[i].len, from_queue, &small, diff_id, &sb), EFBIG);
                        sandbox_close(&sb);
                }
        }
        free(gz);
        free(tar);

        /* a small layer of several gzip members, through a pipe a byte at a
         * time: members end in chunks of their own */
        {
                struct sandbox sb;
                struct tarb t;
                char diff_id[IMAGE_DIGEST_SIZE] = "";

                tarb_begin(&t, ARCHIVE_FILTER_NONE);
                add_sample_entries(&t);
                tar = tarb_end(&t, &tar_len);
                digest_of(tar, tar_len, want);
                cuts[0] = 100;
                cuts[1] = tar_len / 2;
                gz = pieces(ARCHIVE_FILTER_GZIP, tar, tar_len, cuts, 2, &gz_len);
                sandbox_open(&sb);
                CHECK_INTEQ(unpack_fed(gz, gz_len, false, &bytewise_policy, diff_id, &sb), 0);
                CHECK_STREQ(diff_id, want);
                CHECK(exists_in(&sb, "usr/bin/tool2"));
                sandbox_close(&sb);
        }
}

/* ---- layer_inflate.c alone, fed a byte at a time ---- */

struct bytewise {
        const char *p;
        size_t len, at;
};

static ssize_t read_bytewise(void *data, const void **ret_buf)
{
        struct bytewise *b = data;

        if (b->at == b->len)
                return 0;
        *ret_buf = b->p + b->at++;
        return 1;
}

/* What layer_inflate_read gives for blob, chunk by chunk: 0 and the bytes
 * in *out, or the error code. */
static int inflate_bytewise(const char *blob, size_t len, struct buf *out)
{
        struct bytewise b = { .p = blob, .len = len };
        struct layer_inflate *z = layer_inflate_new(read_bytewise, &b);
        struct tess_error *err = NULL;
        const void *p;
        size_t n;
        int r;

        buf_reset(out);
        while ((r = layer_inflate_read(z, &p, &n, &err)) > 0)
                buf_append(out, p, n);
        if (r < 0)
                printf("# refused: %s\n", err ? err->msg : "(no error)");
        tess_error_free(err);
        layer_inflate_free(z);
        return -r;
}

static void test_inflate_bytewise(void)
{
        _cleanup_free_ char *tar = NULL, *gz = NULL, *zst = NULL;
        struct buf out = BUF_INIT, padded = BUF_INIT;
        size_t tar_len, gz_len, zst_len, cuts[3] = { 1, 100, 0 };

        tar = sample_tar(&tar_len);
        cuts[2] = tar_len / 2;
        gz = pieces(ARCHIVE_FILTER_GZIP, tar, tar_len, cuts, 3, &gz_len);
        zst = pieces(ARCHIVE_FILTER_ZSTD, tar, tar_len, cuts, 3, &zst_len);
        CHECK_INTEQ(inflate_bytewise(gz, gz_len, &out), 0);
        CHECK(out.len == tar_len && memcmp(out.data, tar, tar_len) == 0);
        buf_append(&padded, gz, gz_len);
        buf_append(&padded, "\0\0\0\0\0\0\0", 7);
        CHECK_INTEQ(inflate_bytewise(padded.data, padded.len, &out), 0);
        CHECK(out.len == tar_len && memcmp(out.data, tar, tar_len) == 0);
        CHECK_INTEQ(inflate_bytewise(gz, gz_len - 1, &out), EBADMSG);
        CHECK_INTEQ(inflate_bytewise(zst, zst_len, &out), 0);
        CHECK(out.len == tar_len && memcmp(out.data, tar, tar_len) == 0);
        CHECK_INTEQ(inflate_bytewise(zst, zst_len - 1, &out), EBADMSG);
        CHECK_INTEQ(inflate_bytewise(tar, tar_len, &out), 0);
        CHECK(out.len == tar_len && memcmp(out.data, tar, tar_len) == 0);
        buf_release(&out);
        buf_release(&padded);
}

/* ---- malicious layers ---- */

static void test_refuses_dotdot(void)
{
        struct sandbox sb;
        struct tarb t;

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_file(&t, "ok", "fine");
        tarb_file(&t, "../escape", "out");
        CHECK_INTEQ(unpack(&sb, &t, NULL), EPERM);
        CHECK(nothing_outside(&sb));

        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_file(&t, "a/../../outside/x", "out");
        CHECK_INTEQ(unpack(&sb, &t, NULL), EPERM);
        CHECK(nothing_outside(&sb));
        sandbox_close(&sb);
}

static void test_strips_absolute_paths(void)
{
        struct sandbox sb;
        struct tarb t;
        _cleanup_free_ char *data = NULL;

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_file(&t, "/abs/path", "neutralized");
        CHECK_INTEQ(unpack(&sb, &t, NULL), 0);
        data = read_in(&sb, "abs/path");
        CHECK_STREQ(data, "neutralized");
        CHECK(!path_exists("/abs/path"));
        sandbox_close(&sb);
}

static void test_refuses_writing_through_symlinks(void)
{
        _cleanup_free_ char *evil = xasprintf("tessera-test-evil-%ld", (long)getpid());
        _cleanup_free_ char *host = xasprintf("/tmp/%s", evil), *entry = xasprintf("link/%s", evil);
        struct sandbox sb;
        struct tarb t;

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_symlink(&t, "link", "/tmp");
        tarb_file(&t, entry, "evil");
        CHECK_INTEQ(unpack(&sb, &t, NULL), EPERM);
        CHECK(!path_exists(host));

        /* relative, to a sibling of the root; and a directory entry */
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_symlink(&t, "up", "../outside");
        tarb_dir(&t, "up/sub/");
        CHECK_INTEQ(unpack(&sb, &t, NULL), EPERM);
        CHECK(nothing_outside(&sb));

        /* a whiteout through a symlink */
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_symlink(&t, "w", "../outside");
        tarb_file(&t, "w/.wh.x", "");
        CHECK_INTEQ(unpack(&sb, &t, NULL), EPERM);
        CHECK(nothing_outside(&sb));
        sandbox_close(&sb);
}

static void test_refuses_hardlinks_out(void)
{
        static const char *const targets[] = {
                "../../etc/passwd",   /* climbs out */
                "/etc/passwd",        /* stripped: etc/passwd, not in the layer */
                "link/passwd",        /* through a symlink to /etc */
                "later",              /* not unpacked yet */
                "dir",                /* a directory */
        };
        struct sandbox sb;
        struct tarb t;

        NEED_ROOT();
        sandbox_open(&sb);
        for (size_t i = 0; i < ARRAY_SIZE(targets); i++) {
                tarb_begin(&t, ARCHIVE_FILTER_NONE);
                tarb_symlink(&t, "link", "/etc");
                tarb_dir(&t, "dir/");
                tarb_hardlink(&t, "hl", targets[i]);
                tarb_file(&t, "later", "x");
                CHECK_INTEQ(unpack(&sb, &t, NULL), EPERM);
                CHECK(!exists_in(&sb, "hl"));
        }
        CHECK(nothing_outside(&sb));
        sandbox_close(&sb);
}

static void test_skips_device_nodes(void)
{
        struct sandbox sb;
        struct tarb t;

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_dir(&t, "dev/");
        tarb_device(&t, "dev/sda", AE_IFBLK, 8, 0);
        tarb_device(&t, "dev/mem", AE_IFCHR, 1, 1);
        tarb_device(&t, "dev/zero-zero", AE_IFCHR, 0, 0);
        tarb_file(&t, "dev/README", "after the devices");
        CHECK_INTEQ(unpack(&sb, &t, NULL), 0);
        CHECK(!exists_in(&sb, "dev/sda") && !exists_in(&sb, "dev/mem") && !exists_in(&sb, "dev/zero-zero"));
        CHECK(exists_in(&sb, "dev/README"));
        sandbox_close(&sb);
}

static void test_refuses_non_directory_root(void)
{
        struct sandbox sb;
        struct tarb t;

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_symlink(&t, "./", "/");
        CHECK_INTEQ(unpack(&sb, &t, NULL), EPERM);
        sandbox_close(&sb);
}

/* ---- privileges and xattrs ---- */

static void add_privileged_file(struct tarb *t)
{
        struct vfs_cap_data cap = {
                .magic_etc = VFS_CAP_REVISION_2,
                .data = { { .permitted = 1u << CAP_NET_RAW } },
        };
        struct archive_entry *e = tarb_entry("usr/bin/sudo", AE_IFREG, 04755);

        archive_entry_xattr_add_entry(e, "security.capability", &cap, XATTR_CAPS_SZ_2);
        archive_entry_xattr_add_entry(e, "user.note", "kept", 4);
        archive_entry_xattr_add_entry(e, "trusted.overlay.redirect", "/etc", 4);
        archive_entry_xattr_add_entry(e, "security.selinux", "unconfined_u", 12);
        tarb_add(t, e, "binary", 6);
        e = tarb_entry("opaque-forged", AE_IFDIR, 0755);
        archive_entry_xattr_add_entry(e, "trusted.overlay.opaque", "y", 1);
        tarb_add(t, e, NULL, 0);
}

static void test_setuid_and_xattrs(void)
{
        struct layer_policy strict = default_policy;
        struct sandbox sb;
        struct tarb t;
        struct stat st;
        char value[64] = { 0 };

        NEED_ROOT();
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        add_privileged_file(&t);
        CHECK_INTEQ(unpack(&sb, &t, NULL), 0);
        CHECK(stat_in(&sb, "usr/bin/sudo", &st) && (st.st_mode & 07777) == 04755);
        CHECK_INTEQ(xattr_in(&sb, "usr/bin/sudo", "security.capability", value, sizeof(value)), XATTR_CAPS_SZ_2);
        CHECK_INTEQ(xattr_in(&sb, "usr/bin/sudo", "user.note", value, sizeof(value)), 4);
        CHECK(xattr_in(&sb, "usr/bin/sudo", "trusted.overlay.redirect", value, sizeof(value)) < 0);
        CHECK(xattr_in(&sb, "opaque-forged", "trusted.overlay.opaque", value, sizeof(value)) < 0);
        sandbox_close(&sb);

        strict.allow_setuid = false;
        sandbox_open(&sb);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        add_privileged_file(&t);
        CHECK_INTEQ(unpack(&sb, &t, &strict), 0);
        CHECK(stat_in(&sb, "usr/bin/sudo", &st) && (st.st_mode & 07777) == 0755);
        CHECK(xattr_in(&sb, "usr/bin/sudo", "security.capability", value, sizeof(value)) < 0);
        CHECK_INTEQ(xattr_in(&sb, "usr/bin/sudo", "user.note", value, sizeof(value)), 4);
        sandbox_close(&sb);
}

/* ---- limits and garbage ---- */

static void test_limits(void)
{
        static const int filters[] = { ARCHIVE_FILTER_NONE, ARCHIVE_FILTER_GZIP, ARCHIVE_FILTER_ZSTD };
        struct layer_policy small = default_policy;
        struct sandbox sb;
        struct tarb t;
        char big[10000];

        NEED_ROOT();
        memset(big, 'z', sizeof(big));
        sandbox_open(&sb);
        small.max_bytes = 8192;
        for (size_t i = 0; i < ARRAY_SIZE(filters); i++) {
                _cleanup_free_ char *data = NULL, *msg = NULL;
                size_t len;

                tarb_begin(&t, filters[i]);
                tarb_add(&t, tarb_entry("big", AE_IFREG, 0644), big, sizeof(big));
                data = tarb_end(&t, &len);
                CHECK_INTEQ(unpack_bytes_msg(&sb, data, len, &small, NULL, &msg), EFBIG);
                CHECK_STREQ(msg, "the uncompressed layer is larger than 8192 bytes");
        }

        small = default_policy;
        small.max_entries = 3;
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        for (int i = 0; i < 5; i++) {
                char name[16];
                snprintf(name, sizeof(name), "f%d", i);
                tarb_file(&t, name, "x");
        }
        CHECK_INTEQ(unpack(&sb, &t, &small), EFBIG);
        sandbox_close(&sb);
}

static void test_refuses_garbage(void)
{
        struct sandbox sb;
        struct tarb t;
        _cleanup_free_ char *data = NULL;
        size_t len;

        NEED_ROOT();
        sandbox_open(&sb);
        CHECK_INTEQ(unpack_bytes(&sb, "this is not a tar", 17, NULL, NULL), EBADMSG);
        CHECK_INTEQ(unpack_bytes(&sb, "", 0, NULL, NULL), EBADMSG);
        tarb_begin(&t, ARCHIVE_FILTER_NONE);
        tarb_add(&t, tarb_entry("f", AE_IFREG, 0644), "0123456789", 10);
        data = tarb_end(&t, &len);
        CHECK_INTEQ(unpack_bytes(&sb, data, 600, NULL, NULL), EBADMSG); /* cut inside the data */
        sandbox_close(&sb);
}

static const struct test tests[] = {
        TEST(test_path_clean),
        TEST(test_unpack_regular_layer),
        TEST(test_unpack_gzip_and_zstd),
        TEST(test_unpack_whiteouts),
        TEST(test_unpack_replaces_entries),
        TEST(test_unpack_replaces_every_kind),
        TEST(test_unpack_sparse_file),
        TEST(test_unpack_gzip_members),
        TEST(test_unpack_gzip_truncated),
        TEST(test_unpack_gzip_corrupt),
        TEST(test_unpack_zstd_frames),
        TEST(test_unpack_uncompressed),
        TEST(test_unpack_entry_points),
        TEST(test_inflate_bytewise),
        TEST(test_refuses_dotdot),
        TEST(test_strips_absolute_paths),
        TEST(test_refuses_writing_through_symlinks),
        TEST(test_refuses_hardlinks_out),
        TEST(test_skips_device_nodes),
        TEST(test_refuses_non_directory_root),
        TEST(test_setuid_and_xattrs),
        TEST(test_limits),
        TEST(test_refuses_garbage),
        {},
};

int main(void)
{
        return test_main(tests);
}
