/* test_beneath.c - paths confined to a directory (common/beneath.c): what a
 * user's path may hold, and opening beneath a directory with symlinks that
 * point out of it, as a session could make in a mounted folder. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "../lib/test.h"
#include "common/beneath.h"
#include "common/fs.h"

static void check_user_path(const char *in, const char *want, const char *why)
{
        struct tess_error *err = NULL;
        char *out = NULL;
        int r = beneath_user_path(in, &out, &err);

        if (want) {
                CHECK_INTEQ(r, 0);
                if (r == 0)
                        CHECK_STREQ(out, want);
        } else {
                CHECK_INTEQ(r, -EINVAL);
                if (r < 0 && !strstr(err->msg, why))
                        test_fail(__FILE__, __LINE__, "'%s': '%s' does not say '%s'", in, err->msg, why);
        }
        free(out);
        tess_error_free(err);
}

static void test_user_paths(void)
{
        char long_name[300];

        check_user_path("/", "", NULL);
        check_user_path("", "", NULL);
        check_user_path("/a//b/./c/", "a/b/c", NULL);
        check_user_path("données/été.csv", "données/été.csv", NULL);
        check_user_path("a/..b/c..", "a/..b/c..", NULL);
        check_user_path("%2e%2e/x", "%2e%2e/x", NULL); /* decoded once by HTTP: a plain name now */
        check_user_path("../etc/passwd", NULL, "'..' is not allowed");
        check_user_path("a/b/../../..", NULL, "'..' is not allowed");
        check_user_path("a/\nb", NULL, "control characters");
        check_user_path("\xc0\xae\xc0\xae/etc", NULL, "not UTF-8"); /* overlong "..": not UTF-8 */
        check_user_path("\xed\xa0\x80", NULL, "not UTF-8");         /* a surrogate */
        memset(long_name, 'x', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        check_user_path(long_name, NULL, "longer than 255");
}

static char root[64], outside[96];
static int rootfd = -1;

static void put(const char *rel, const char *text)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", root, rel);
        if (fs_write_file_atomic(path, text, strlen(text), 0644, NULL) < 0)
                test_fail(__FILE__, __LINE__, "writing %s", path);
}

static void link_(const char *target, const char *rel)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", root, rel);
        if (symlink(target, path) < 0)
                test_fail(__FILE__, __LINE__, "symlink %s: %s", path, strerror(errno));
}

/* root/{d/f, in -> d/f, indir -> d, abs -> /etc/passwd, up -> ../<outside>,
 * dotdot -> .., proc -> /proc/self/root}, and a file beside root. */
static bool tree_open(void)
{
        _cleanup_free_ char *d = NULL;

        snprintf(root, sizeof(root), "/tmp/tessera-test-beneath.XXXXXX");
        if (!mkdtemp(root))
                return false;
        snprintf(outside, sizeof(outside), "%s.outside", root);
        if (fs_write_file_atomic(outside, "secret", 6, 0644, NULL) < 0)
                return false;
        d = xasprintf("%s/d", root);
        mkdir(d, 0755);
        put("d/f", "inside");
        link_("d/f", "in");
        link_("d", "indir");
        link_("/etc/passwd", "abs");
        _cleanup_free_ char *up = xasprintf("../%s", strrchr(outside, '/') + 1);
        link_(up, "up");
        link_("..", "dotdot");
        link_("/proc/self/root", "proc");
        rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return rootfd >= 0;
}

static void tree_close(void)
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s' '%s'", root, outside);
        close(rootfd);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
}

/* What reading path beneath root gives: its text, or the error. */
static char *read_beneath(int (*open_fn)(int, const char *, int, mode_t), const char *path)
{
        char data[64];
        int fd = open_fn(rootfd, path, O_RDONLY, 0);
        ssize_t n;

        if (fd < 0)
                return xasprintf("error %d", -fd);
        n = read(fd, data, sizeof(data) - 1);
        close(fd);
        return xstrndup(data, n > 0 ? (size_t)n : 0);
}

#define CHECK_READ(fn, path, want)                                  \
        do {                                                        \
                _cleanup_free_ char *got_ = read_beneath(fn, path); \
                CHECK_STREQ(got_, want);                            \
        } while (0)

#define CHECK_REFUSED(fn, path)                                     \
        do {                                                        \
                _cleanup_free_ char *got_ = read_beneath(fn, path); \
                CHECK(strncmp(got_, "error ", 6) == 0);             \
        } while (0)

static void test_open_beneath(void)
{
        int fd;

        if (!tree_open())
                SKIP("no temporary directory");
        CHECK_READ(beneath_open, "d/f", "inside");
        CHECK_READ(beneath_open, "in", "inside"); /* a symlink that stays inside is followed */
        CHECK_READ(beneath_open, "indir/f", "inside");
        CHECK_REFUSED(beneath_open, "abs");         /* an absolute link: out */
        CHECK_READ(beneath_open, "up", "error 18"); /* EXDEV: out through a relative link */
        CHECK_READ(beneath_open, "dotdot/etc/passwd", "error 18");
        CHECK_READ(beneath_open, "d/../../etc/passwd", "error 18"); /* even uncleaned */
        CHECK_REFUSED(beneath_open, "proc/etc/passwd");             /* a magic link */
        /* creating through a link that leads out fails; inside works */
        fd = beneath_open(rootfd, "abs", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CHECK(fd < 0);
        fd = beneath_open(rootfd, "d/new", O_WRONLY | O_CREAT | O_EXCL, 0644);
        CHECK(fd >= 0);
        if (fd >= 0)
                close(fd);
        tree_close();
}

static void test_open_without_openat2(void)
{
        if (!tree_open())
                SKIP("no temporary directory");
        CHECK_READ(beneath_open_nofollow, "d/f", "inside");
        CHECK_READ(beneath_open_nofollow, "in", "error 40");      /* ELOOP: no symlinks at all */
        CHECK_READ(beneath_open_nofollow, "indir/f", "error 20"); /* ENOTDIR */
        CHECK_READ(beneath_open_nofollow, "up", "error 40");
        CHECK_READ(beneath_open_nofollow, "abs", "error 40");
        tree_close();
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_user_paths),
                TEST(test_open_beneath),
                TEST(test_open_without_openat2),
                { 0 },
        };
        return test_main(tests);
}
