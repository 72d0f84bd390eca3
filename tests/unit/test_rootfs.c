/* test_rootfs.c - the overlay options (layer order, relative layers) and,
 * as root, real mounts: two layers, and more layers than fit in a page;
 * the same on idmapped layers for a user namespace (owners as its ids on
 * the host, as on disk in the upper dir, no idmapped copy left); user
 * namespaces opened by several threads at once (the agent's workers). */
#include "common/compat.h"

#include "../lib/test.h"
#include <dirent.h>
#include <grp.h>
#include <signal.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent/container/rootfs.h"
#include "agent/container/userns.h"
#include "common/fs.h"

#define BASE 2100000000u

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

/* Is anything mounted under dir (a mount point, field 5 of mountinfo)? */
static bool mounted_under(const char *dir)
{
        _cleanup_free_ char *text = NULL;
        char *save = NULL;
        size_t len;

        if (fs_read_file("/proc/self/mountinfo", 1 << 22, &text, &len, NULL) < 0)
                return true;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char point[4096];
                if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1 && strncmp(point, dir, strlen(dir)) == 0)
                        return true;
        }
        return false;
}

/* As host uid BASE+1000 (the work user of the namespace): create name. */
static int create_as_work_user(const char *path)
{
        pid_t pid = fork();
        int st;

        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(BASE + 1000, BASE + 1000, BASE + 1000) < 0 ||
                    setresuid(BASE + 1000, BASE + 1000, BASE + 1000) < 0)
                        _exit(1);
                _exit(fs_write_file_atomic(path, "w", 1, 0644, NULL) < 0 ? 2 : 0);
        }
        if (pid < 0 || waitpid(pid, &st, 0) < 0)
                return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The idmapped checks: the layers' files (root's on disk) are BASE's seen
 * through the overlay; what the work user of the namespace writes is
 * 1000's on disk in the upper dir; no idmapped copy is left. */
static void check_idmapped(const char *root, const char *target, const char *stage)
{
        _cleanup_free_ char *first = xasprintf("%s/file0", target), *home = xasprintf("%s/home", target);
        _cleanup_free_ char *mine = xasprintf("%s/home/mine", target), *disk = xasprintf("%s/upper/home/mine", root);
        struct stat st;

        CHECK(stat(first, &st) == 0 && st.st_uid == BASE && st.st_gid == BASE);
        CHECK(stat(home, &st) == 0 && st.st_uid == BASE + 1000);
        CHECK_INTEQ(create_as_work_user(mine), 0);
        CHECK(stat(mine, &st) == 0 && st.st_uid == BASE + 1000);
        CHECK(stat(disk, &st) == 0 && st.st_uid == 1000 && st.st_gid == 1000);
        CHECK(!mounted_under(stage));
}

/* As root: mount `n` layers (file i in layer i, "which" in every layer) and check the merge;
 * idmapped: for a user namespace at BASE. */
static void mount_layers(int n, size_t name_len, bool idmapped)
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
        _cleanup_free_ char *stage = xasprintf("%s/stage", root), *home = xasprintf("%s/home", layers[n - 1]);
        _cleanup_close_ int userns_fd = -1;
        int r;
        fs_mkdir_p(home, 0755, NULL);
        if (chown(home, 1000, 1000) < 0)
                test_fail(__FILE__, __LINE__, "chown: %s", strerror(errno));
        if (idmapped) {
                chmod(root, 0755); /* mkdtemp's 0700 would keep the namespace's users out */
                fs_mkdir_p(stage, 0711, NULL);
                r = userns_open(BASE, 65536, &userns_fd, &err);
                if (r >= 0)
                        r = rootfs_mount_idmapped((const char *const *)layers, root, target, stage, userns_fd, BASE,
                                                  &err);
        } else {
                r = rootfs_mount((const char *const *)layers, upper, work, target, &err);
        }
        if (r < 0) {
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
                if (idmapped)
                        check_idmapped(root, target, stage);
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
        mount_layers(2, 8, false);
}

static void test_mount_more_layers_than_a_page_holds(void)
{
        if (geteuid() != 0)
                SKIP("needs root");
        /* 60 layers of 64-character names: > 4096 bytes of absolute paths */
        mount_layers(60, 60, false);
}

static void test_mount_idmapped(void)
{
        if (geteuid() != 0)
                SKIP("needs root");
        mount_layers(2, 8, true);
        mount_layers(60, 60, true); /* layers relative to their idmapped common directory */
}

#define USERNS_THREADS 4
#define USERNS_ROUNDS  40

static int userns_opened, userns_done;
static bool userns_stop;
static pthread_mutex_t userns_lock = PTHREAD_MUTEX_INITIALIZER;

static void *open_userns_rounds(void *arg UNUSED)
{
        for (int i = 0; i < USERNS_ROUNDS; i++) {
                struct tess_error *err = NULL;
                int fd = -1, r = userns_open(BASE, 65536, &fd, &err);
                pthread_mutex_lock(&userns_lock);
                bool stop = userns_stop;
                userns_opened += r >= 0;
                pthread_mutex_unlock(&userns_lock);
                if (r < 0)
                        tess_error_free(err);
                else
                        close(fd);
                if (stop)
                        break;
        }
        pthread_mutex_lock(&userns_lock);
        userns_done++;
        pthread_mutex_unlock(&userns_lock);
        return NULL;
}

/* Kill this process's children (the namespace holders of hung threads). */
static void kill_children(void)
{
        DIR *d = opendir("/proc/self/task");

        for (struct dirent *e; d && (e = readdir(d));) {
                _cleanup_free_ char *path = xasprintf("/proc/self/task/%s/children", e->d_name), *text = NULL;
                size_t len;
                if (e->d_name[0] == '.' || fs_read_file(path, 4096, &text, &len, NULL) < 0)
                        continue;
                for (char *p = text, *end; *p; p = end) {
                        long pid = strtol(p, &end, 10);
                        if (end == p)
                                break;
                        if (pid > 0)
                                kill((pid_t)pid, SIGKILL);
                }
        }
        if (d)
                closedir(d);
}

/* Each userns_open() forks a child that holds the namespace until the
 * parent lets go; a child forked while another thread's was held once
 * kept that one's pipe open, and two such children waited for each other
 * for ever (an agent's kernels stuck in CREATING).  All of them end. */
static void test_userns_open_from_threads(void)
{
        pthread_t t[USERNS_THREADS];
        int done = 0;

        if (geteuid() != 0)
                SKIP("needs root");
        for (int i = 0; i < USERNS_THREADS; i++)
                pthread_create(&t[i], NULL, open_userns_rounds, NULL);
        for (int waited = 0; waited < 600 && done < USERNS_THREADS; waited++) {
                usleep(100 * 1000);
                pthread_mutex_lock(&userns_lock);
                done = userns_done;
                pthread_mutex_unlock(&userns_lock);
        }
        CHECK_INTEQ(done, USERNS_THREADS);
        /* (on failure: the hung holders killed, so that the threads end) */
        pthread_mutex_lock(&userns_lock);
        userns_stop = true;
        pthread_mutex_unlock(&userns_lock);
        while (done < USERNS_THREADS) {
                kill_children();
                usleep(100 * 1000);
                pthread_mutex_lock(&userns_lock);
                done = userns_done;
                pthread_mutex_unlock(&userns_lock);
        }
        for (int i = 0; i < USERNS_THREADS; i++)
                pthread_join(t[i], NULL);
        CHECK_INTEQ(userns_opened, USERNS_THREADS * USERNS_ROUNDS);
}

static const struct test tests[] = {
        TEST(test_options_order),
        TEST(test_options_errors),
        TEST(test_mount_two_layers),
        TEST(test_mount_more_layers_than_a_page_holds),
        TEST(test_mount_idmapped),
        TEST(test_userns_open_from_threads),
        {},
};

int main(void)
{
        return test_main(tests);
}
