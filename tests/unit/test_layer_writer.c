/* test_layer_writer.c - reproducible layers (src/image/layer_writer.c):
 * the same tree gives the same bytes whatever its mtimes; entries sorted,
 * relative, numeric owners, hard links as links. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <utime.h>

#include <archive.h>
#include <archive_entry.h>

#include "../lib/test.h"
#include "common/fs.h"
#include "image/layer_writer.h"

static void put(const char *dir, const char *name, const char *text)
{
        _cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
        CHECK(fs_write_file_replace(p, text, strlen(text), 0644, NULL) == 0);
}

static void test_layer_reproducible(void)
{
        char dir[] = "/tmp/test-layer-XXXXXX";
        struct layer_info one, two;
        struct tess_error *err = NULL;

        CHECK(mkdtemp(dir) != NULL);
        _cleanup_free_ char *root = xasprintf("%s/root", dir), *sub = xasprintf("%s/root/b-dir", dir);
        _cleanup_free_ char *out1 = xasprintf("%s/one.tar.gz", dir), *out2 = xasprintf("%s/two.tar.gz", dir);
        CHECK(fs_mkdir_p(sub, 0755, NULL) == 0);
        put(root, "z-file", "zzz");
        put(root, "a-file", "aaa");
        put(sub, "inner", "inner");
        put(sub, "t\xc5\xb1 \xff", "not UTF-8 in the C locale");
        _cleanup_free_ char *a = xasprintf("%s/a-file", root), *hl = xasprintf("%s/c-hardlink", root);
        _cleanup_free_ char *sl = xasprintf("%s/d-symlink", root);
        CHECK(link(a, hl) == 0);
        CHECK(symlink("a-file", sl) == 0);
        CHECK(layer_write(root, out1, 1700000000, &one, &err) == 0);
        struct utimbuf t = { 12345, 67890 };
        CHECK(utime(a, &t) == 0);
        CHECK(layer_write(root, out2, 1700000000, &two, &err) == 0);
        CHECK_STREQ(one.digest, two.digest);
        CHECK_STREQ(one.diff_id, two.diff_id);
        CHECK(one.entries == 7);
        CHECK(layer_write(root, out1, 1700000000, &two, &err) == -EEXIST);
        tess_error_free(err);

        static const char *const order[] = { "a-file",     "b-dir/",    "b-dir/inner", "b-dir/t\xc5\xb1 \xff",
                                             "c-hardlink", "d-symlink", "z-file" };
        struct archive *ar = archive_read_new();
        struct archive_entry *e;
        size_t n = 0;
        archive_read_support_filter_gzip(ar);
        archive_read_support_format_tar(ar);
        CHECK(archive_read_open_filename(ar, out2, 65536) == ARCHIVE_OK);
        while (archive_read_next_header(ar, &e) == ARCHIVE_OK && n < 7) {
                CHECK_STREQ(archive_entry_pathname(e), order[n]);
                CHECK(archive_entry_mtime(e) == 1700000000);
                CHECK(archive_entry_uname(e) == NULL || !*archive_entry_uname(e));
                if (n == 4)
                        CHECK_STREQ(archive_entry_hardlink(e), "a-file");
                if (n == 5)
                        CHECK_STREQ(archive_entry_symlink(e), "a-file");
                n++;
        }
        CHECK(n == 7);
        archive_read_free(ar);
        fs_remove_tree(dir, NULL);
}

static const struct test tests[] = {
        TEST(test_layer_reproducible),
        {},
};

int main(void)
{
        return test_main(tests);
}
