/* test_vfolder_usage.c - the usage walk of virtual folders
 * (manager/vfolder/vfolder_quota.c, vf_usage_dir): allocated bytes of every entry
 * below a directory, hard-linked files once, symlinks never followed,
 * missing directories empty. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "../lib/test.h"
#include "common/fs.h"
#include "manager/vfolder/vfolder.h"

static char root[] = "/tmp/tessera-vfusage.XXXXXX";

static int64_t blocks_of(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0 ? (int64_t)st.st_blocks * 512 : -1;
}

static void write_bytes(const char *path, size_t n)
{
        char buf[4096];
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        memset(buf, 'x', sizeof(buf));
        CHECK(fd >= 0);
        for (size_t done = 0; fd >= 0 && done < n;) {
                size_t k = n - done < sizeof(buf) ? n - done : sizeof(buf);
                CHECK((size_t)write(fd, buf, k) == k);
                done += k;
        }
        if (fd >= 0) {
                fsync(fd);
                close(fd);
        }
}

static char *at(const char *rel)
{
        static char buf[4][512];
        static int i;
        i = (i + 1) % 4;
        snprintf(buf[i], sizeof(buf[i]), "%s/%s", root, rel);
        return buf[i];
}

static void test_missing_and_empty(void)
{
        struct tess_error *err = NULL;
        struct vf_usage u = { 1, 1 };

        CHECK_INTEQ(vf_usage_dir(at("nope"), &u, &err), 0);
        CHECK_INTEQ(u.bytes, 0);
        CHECK_INTEQ(u.files, 0);
        CHECK(mkdir(at("empty"), 0755) == 0);
        CHECK_INTEQ(vf_usage_dir(at("empty"), &u, &err), 0);
        CHECK_INTEQ(u.bytes, 0);
        CHECK_INTEQ(u.files, 0);
        CHECK_INTEQ(vf_usage_dir("", &u, &err), 0);
        CHECK(err == NULL);
}

static void test_files_links_symlinks(void)
{
        struct tess_error *err = NULL;
        struct vf_usage u;

        CHECK(mkdir(at("f"), 0755) == 0);
        CHECK(mkdir(at("f/sub"), 0755) == 0);
        CHECK(mkdir(at("f/sub/deeper"), 0755) == 0);
        write_bytes(at("f/big"), 200000);
        write_bytes(at("f/sub/deeper/small"), 10);
        write_bytes(at("outside"), 1000000); /* a symlink to it must not count it */
        CHECK(link(at("f/big"), at("f/sub/big-again")) == 0);
        CHECK(symlink(at("outside"), at("f/sub/out")) == 0);
        CHECK(symlink("/", at("f/root")) == 0);

        int64_t want = blocks_of(at("f/big")) + blocks_of(at("f/sub")) + blocks_of(at("f/sub/deeper")) +
                       blocks_of(at("f/sub/deeper/small")) + blocks_of(at("f/sub/out")) + blocks_of(at("f/root"));
        CHECK_INTEQ(vf_usage_dir(at("f"), &u, &err), 0);
        CHECK(err == NULL);
        CHECK_INTEQ(u.files, 7); /* big root sub deeper big-again out small */
        CHECK_INTEQ(u.bytes, want);
        CHECK(u.bytes >= 200000);
        CHECK(u.bytes < 1000000);
}

/* A symlink given as the folder itself is not followed either. */
static void test_root_symlink(void)
{
        struct tess_error *err = NULL;
        struct vf_usage u;

        CHECK(symlink("/usr", at("link")) == 0);
        CHECK(vf_usage_dir(at("link"), &u, &err) < 0);
        CHECK(err != NULL);
        CHECK_INTEQ(u.bytes, 0);
        tess_error_free(err);
}

static void cleanup(void)
{
        struct tess_error *err = NULL;
        if (fs_remove_tree(root, &err) < 0)
                tess_error_free(err);
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_missing_and_empty),
                TEST(test_files_links_symlinks),
                TEST(test_root_symlink),
                { 0 },
        };
        if (!mkdtemp(root))
                return 1;
        int r = test_main(tests);
        cleanup();
        return r;
}
