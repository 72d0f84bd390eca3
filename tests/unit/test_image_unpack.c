/* test_image_unpack.c - unpacking layers (src/agent/image_unpack.c,
 * image_path.c): what a normal layer makes, overlay whiteouts, and every
 * malicious layer refused or neutralized as src/agent/README.md says.
 * Needs root (owners, mknod, trusted.* xattrs); skips otherwise. */
#include "common/compat.h"

#include <linux/capability.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "../lib/test.h"
#include "common/fs.h"
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

/* Unpack bytes into sb; the error code (0 on success). */
static int unpack_bytes(struct sandbox *sb, const char *data, size_t len, const struct layer_policy *pol,
                        char diff_id[IMAGE_DIGEST_SIZE])
{
        struct tess_error *err = NULL;
        char ignored[IMAGE_DIGEST_SIZE];
        int r = layer_unpack_mem(sb->rootfd, data, len, pol ? pol : &default_policy, diff_id ? diff_id : ignored,
                                 &err);

        if (r < 0) {
                CHECK(err && err->code == -r);
                printf("# refused: %s\n", err ? err->msg : "(no error)");
        }
        tess_error_free(err);
        return -r;
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
        struct layer_policy small = default_policy;
        struct sandbox sb;
        struct tarb t;
        char big[10000];

        NEED_ROOT();
        memset(big, 'z', sizeof(big));
        sandbox_open(&sb);
        small.max_bytes = 8192;
        tarb_begin(&t, ARCHIVE_FILTER_GZIP);
        tarb_add(&t, tarb_entry("big", AE_IFREG, 0644), big, sizeof(big));
        CHECK_INTEQ(unpack(&sb, &t, &small), EFBIG);

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
