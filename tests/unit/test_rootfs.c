/* test_rootfs.c - the overlay options (layer order, relative layers) and,
 * as root, real mounts: two layers, and more layers than fit in a page. */
#include "common/compat.h"

#include "../lib/test.h"
#include "agent/container/rootfs.h"
#include "common/fs.h"

static void test_options_order(void)
{
        const char *layers[] = { "/img/layers/a", "/img/layers/b", "/img/layers/c", NULL };
        struct tess_error *err = NULL;
        struct buf b = BUF_INIT;

        CHECK_INTEQ(rootfs_overlay_options(layers, "/c/upper", "/c/work", NULL, &b, &err), 0);
        CHECK_STREQ(b.data, "lowerdir=/img/layers/c:/img/layers/b:/img/layers/a,upperdir=/c/upper,workdir=/c/work");
        buf_reset(&b);
        CHECK_INTEQ(rootfs_overlay_options(layers, "/c/upper", "/c/work", "/img/layers", &b, &err), 0);
        CHECK_STREQ(b.data, "lowerdir=c:b:a,upperdir=/c/upper,workdir=/c/work");
        buf_release(&b);
}

static void test_options_errors(void)
{
        const char *none[] = { NULL };
        const char *colon[] = { "/img/a:b", NULL };
        const char *elsewhere[] = { "/other/a", NULL };
        const char *ok[] = { "/img/a", NULL };
        struct tess_error *err = NULL;
        struct buf b = BUF_INIT;

        CHECK_INTEQ(rootfs_overlay_options(none, "/u", "/w", NULL, &b, &err), -EINVAL);
        err = tess_error_free(err);
        CHECK_INTEQ(rootfs_overlay_options(colon, "/u", "/w", NULL, &b, &err), -EINVAL);
        err = tess_error_free(err);
        CHECK_INTEQ(rootfs_overlay_options(ok, "/u,x", "/w", NULL, &b, &err), -EINVAL);
        err = tess_error_free(err);
        CHECK_INTEQ(rootfs_overlay_options(elsewhere, "/u", "/w", "/img", &b, &err), -EINVAL);
        tess_error_free(err);
        buf_release(&b);
}

/* As root: mount `n` layers (file i in layer i, "which" in every layer) and check the merge. */
static void mount_layers(int n, size_t name_len)
{
        char root[64];
        char **layers = xcalloc((size_t)n + 1, sizeof(char *));
        struct tess_error *err = NULL;
        _cleanup_free_ char *pad = xcalloc(name_len + 1, 1);
        int i;

        memset(pad, 'l', name_len);
        snprintf(root, sizeof(root), "/tmp/tessera-test-rootfs.XXXXXX");
        if (!mkdtemp(root)) {
                free(layers);
                SKIP("no temporary directory");
        }
        _cleanup_free_ char *upper = xasprintf("%s/upper", root), *work = xasprintf("%s/work", root);
        _cleanup_free_ char *target = xasprintf("%s/rootfs", root);
        fs_mkdir_p(upper, 0755, NULL);
        fs_mkdir_p(work, 0755, NULL);
        fs_mkdir_p(target, 0755, NULL);
        for (i = 0; i < n; i++) {
                layers[i] = xasprintf("%s/layers/sha256/%s%04d", root, pad, i);
                _cleanup_free_ char *f = xasprintf("%s/file%d", layers[i], i), *w = xasprintf("%s/which", layers[i]);
                _cleanup_free_ char *text = xasprintf("%d\n", i);
                fs_mkdir_p(layers[i], 0755, NULL);
                fs_write_file_atomic(f, "x", 1, 0644, NULL);
                fs_write_file_atomic(w, text, strlen(text), 0644, NULL);
        }
        if (rootfs_mount((const char *const *)layers, upper, work, target, &err) < 0) {
                test_fail(__FILE__, __LINE__, "%s", err->msg);
                err = tess_error_free(err);
        } else {
                _cleanup_free_ char *which = xasprintf("%s/which", target), *text = NULL;
                _cleanup_free_ char *first = xasprintf("%s/file0", target), *last = xasprintf("%s/file%d", target, n - 1);
                size_t len;
                CHECK(rootfs_is_mounted(target));
                CHECK_INTEQ(fs_read_file(which, 64, &text, &len, &err), 0);
                CHECK_INTEQ(strtol(text ? text : "-1", NULL, 10), n - 1); /* the top-most layer wins */
                CHECK(access(first, F_OK) == 0);
                CHECK(access(last, F_OK) == 0);
                CHECK_INTEQ(rootfs_umount(target, &err), 0);
                CHECK(!rootfs_is_mounted(target));
                CHECK_INTEQ(rootfs_umount(target, &err), 0); /* twice is fine */
        }
        for (i = 0; i < n; i++)
                free(layers[i]);
        free(layers);
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", root);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "%s failed", cmd);
}

static void test_mount_two_layers(void)
{
        if (geteuid() != 0)
                SKIP("needs root");
        mount_layers(2, 8);
}

static void test_mount_more_layers_than_a_page_holds(void)
{
        if (geteuid() != 0)
                SKIP("needs root");
        /* 60 layers of 64-character names: > 4096 bytes of absolute paths */
        mount_layers(60, 60);
}

static const struct test tests[] = {
        TEST(test_options_order),
        TEST(test_options_errors),
        TEST(test_mount_two_layers),
        TEST(test_mount_more_layers_than_a_page_holds),
        {},
};

int main(void)
{
        return test_main(tests);
}
