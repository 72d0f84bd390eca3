/* test_session_mounts.c - mount targets and merging a session's folder
 * list (manager/sessions/session_mounts.c), and the agent's checks of a folder's
 * directory before binding it (agent/vfolder_mount.c). */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "../lib/test.h"
#include "agent/vfolder_mount.h"
#include "common/fs.h"
#include "manager/sessions/session_mounts.h"

static void target_ok(const char *name, const char *mapped, const char *want)
{
        struct tess_error *err = NULL;
        char buf[256];

        CHECK_INTEQ(session_mount_target(name, mapped, buf, sizeof(buf), &err), 0);
        CHECK_STREQ(buf, want);
        tess_error_free(err);
}

static void target_bad(const char *name, const char *mapped)
{
        struct tess_error *err = NULL;
        char buf[256];

        CHECK(session_mount_target(name, mapped, buf, sizeof(buf), &err) == -EINVAL);
        CHECK(err && strstr(err->msg, name));
        tess_error_free(err);
}

static void test_session_mount_target(void)
{
        target_ok("data", NULL, "/home/work/data");
        target_ok(".local", "", "/home/work/.local");
        target_ok("data", "sub/dir", "/home/work/sub/dir");
        target_ok("data", "./x//y/", "/home/work/x/y");
        target_ok("data", "/data/x", "/data/x");
        target_ok("data", "/data", "/data");
        target_ok("data", "/mnt/a/./b", "/mnt/a/b");
        target_ok("data", "//home//work/x", "/home/work/x");
        target_bad("data", "/home/work");  /* the home itself */
        target_bad("data", "/home/workx"); /* only beneath the roots */
        target_bad("data", "/database");
        target_bad("data", "/mntx/a");
        target_bad("data", "/etc/x");
        target_bad("data", "/");
        target_bad("data", "/data/../etc");
        target_bad("data", "../x");
        target_bad("data", "a\nb");
}

static json_t *entry(const char *id, const char *name, const char *target)
{
        return session_mount_entry(id, name, "local", "user-x/aa/bb/cc", target, "rw");
}

static void test_session_mounts_merge(void)
{
        struct tess_error *err = NULL;
        json_t *list = json_array();

        CHECK_INTEQ(session_mounts_add(list, entry("1", "data", "/home/work/data"), &err), 0);
        CHECK_INTEQ(session_mounts_add(list, entry("2", "other", "/data/x"), &err), 0);
        /* the same folder twice, or two on one target: refused */
        CHECK(session_mounts_add(list, entry("1", "data", "/mnt/d"), &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "twice"));
        err = tess_error_free(err);
        CHECK(session_mounts_add(list, entry("3", "third", "/data/x"), &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "other") && strstr(err->msg, "third"));
        err = tess_error_free(err);
        /* dot-folders: left out when mounted already, or their place is taken */
        CHECK_INTEQ(session_mounts_add_auto(list, entry("1", "data", "/home/work/.data")), 0);
        CHECK_INTEQ(session_mounts_add_auto(list, entry("4", ".x", "/data/x")), 0);
        CHECK_INTEQ(session_mounts_add_auto(list, entry("5", ".local", "/home/work/.local")), 1);
        CHECK_INTEQ((int)json_array_size(list), 3);
        json_t *names = session_mounts_names(list);
        char *text = json_dumps(names, JSON_COMPACT);
        CHECK_STREQ(text, "[\"data\",\"other\",\".local\"]");
        free(text);
        json_decref(names);
        json_decref(list);
}

static void test_vfolder_host_path(void)
{
        struct tess_error *err = NULL;
        char buf[64];

        CHECK_INTEQ(vfolder_host_path("local=/srv/vf/, nfs=/mnt/nfs", "local", buf, sizeof(buf), &err), 0);
        CHECK_STREQ(buf, "/srv/vf");
        CHECK_INTEQ(vfolder_host_path("local=/srv/vf, nfs=/mnt/nfs", "nfs", buf, sizeof(buf), &err), 0);
        CHECK_STREQ(buf, "/mnt/nfs");
        CHECK(vfolder_host_path("local=/srv/vf", "nfs", buf, sizeof(buf), &err) == -ENOENT);
        CHECK(err && strstr(err->msg, "nfs"));
        err = tess_error_free(err);
        CHECK(vfolder_host_path("local=relative", "local", buf, sizeof(buf), &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(vfolder_host_path("", "local", buf, sizeof(buf), &err) == -ENOENT);
        tess_error_free(err);
}

static int prepare_one(const char *spec, const char *path, const char *target, const char *perm,
                       struct vfolder_mounts *m, struct tess_error **err)
{
        json_t *list = json_pack("[{s:s, s:s, s:s, s:s, s:s, s:s}]", "id", "1", "name", "data", "host", "local", "path",
                                 path, "target", target, "perm", perm);
        int r = vfolder_mounts_prepare(spec, list, getuid(), getgid(), m, err);
        json_decref(list);
        return r;
}

static void test_vfolder_mounts_prepare(void)
{
        char tmpl[] = "/tmp/test-vfmount.XXXXXX";
        char *root = mkdtemp(tmpl);
        struct tess_error *err = NULL;
        struct vfolder_mounts m;

        CHECK(root != NULL);
        _cleanup_free_ char *spec = xasprintf("local=%s", root);
        _cleanup_free_ char *dir = xasprintf("%s/user-u/aa/bb/cc", root);
        _cleanup_free_ char *outside = xasprintf("%s/outside", root);
        _cleanup_free_ char *link = xasprintf("%s/user-u/aa/bb/ln", root);
        _cleanup_free_ char *file = xasprintf("%s/user-u/aa/bb/file", root);
        CHECK_INTEQ(fs_mkdir_p(dir, 0755, &err), 0);
        CHECK_INTEQ(fs_mkdir_p(outside, 0755, &err), 0);
        CHECK_INTEQ(symlink(outside, link), 0);
        int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        close(fd);

        CHECK_INTEQ(prepare_one(spec, "user-u/aa/bb/cc", "/home/work/data", "ro", &m, &err), 0);
        CHECK_INTEQ((int)m.n, 1);
        CHECK_STREQ(m.v[0].source, dir);
        CHECK_STREQ(m.v[0].destination, "/home/work/data");
        CHECK(m.v[0].readonly && m.v[0].single);
        vfolder_mounts_release(&m);
        CHECK_INTEQ(prepare_one(spec, "user-u/aa/bb/cc", "/data/x", "wd", &m, &err), 0);
        CHECK(!m.v[0].readonly);
        vfolder_mounts_release(&m);

        static const char *const bad_paths[] = { "user-u/aa/bb/ln",   "user-u/aa/bb/file",
                                                 "user-u/aa/bb/none", "user-u/aa/bb/cc/../cc",
                                                 "/user-u/aa/bb/cc",  "",
                                                 "user-u/./aa" };
        for (size_t i = 0; i < ARRAY_SIZE(bad_paths); i++) {
                CHECK(prepare_one(spec, bad_paths[i], "/home/work/data", "rw", &m, &err) < 0);
                CHECK(err && strstr(err->msg, "folder 'data'"));
                err = tess_error_free(err);
                CHECK_INTEQ((int)m.n, 0);
        }
        CHECK(prepare_one("nfs=/x", "user-u/aa/bb/cc", "/home/work/data", "rw", &m, &err) == -ENOENT);
        err = tess_error_free(err);
        CHECK(prepare_one(spec, "user-u/aa/bb/cc", "/home/work/../etc", "rw", &m, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(prepare_one(spec, "user-u/aa/bb/cc", "home/work/x", "rw", &m, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(prepare_one(spec, "user-u/aa/bb/cc", "/home/work/x", "rwx", &m, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK_INTEQ(vfolder_mounts_prepare(spec, NULL, 0, 0, &m, &err), 0);
        CHECK_INTEQ((int)m.n, 0);
        CHECK_INTEQ(fs_remove_tree(root, &err), 0);
        tess_error_free(err);
}

static const struct test tests[] = {
        TEST(test_session_mount_target),
        TEST(test_session_mounts_merge),
        TEST(test_vfolder_host_path),
        TEST(test_vfolder_mounts_prepare),
        {},
};

int main(void)
{
        return test_main(tests);
}
