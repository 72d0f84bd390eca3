/* fuzz_beneath.c - users' paths in their folders (common/beneath.c): a
 * path that is accepted is clean (relative, no "..", "." or empty parts),
 * and opening it — or the raw input, uncleaned — beneath a folder holding
 * symlinks that point out (absolute, "..", a magic link) never yields a
 * file outside the folder. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "common/beneath.h"
#include "fuzz.h"

static char root[64];
static int rootfd = -1;

static const char *const links[][2] = {
        { "abs", "/etc" }, { "up", ".." }, { "proc", "/proc/self/root" }, { "in", "d" }, { "d/back", "../d" },
};

static void remove_tree(void)
{
        char path[128];

        for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
                snprintf(path, sizeof(path), "%s/%s", root, links[i][0]);
                unlink(path);
        }
        snprintf(path, sizeof(path), "%s/d", root);
        rmdir(path);
        rmdir(root);
}

static void make_tree(void)
{
        char path[128];

        snprintf(root, sizeof(root), "/tmp/tessera-fuzz-beneath.%d", (int)getpid());
        mkdir(root, 0755);
        snprintf(path, sizeof(path), "%s/d", root);
        mkdir(path, 0755);
        for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
                snprintf(path, sizeof(path), "%s/%s", root, links[i][0]);
                if (symlink(links[i][1], path) < 0 && errno != EEXIST)
                        abort();
        }
        rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        FUZZ_ASSERT(rootfd >= 0);
        atexit(remove_tree);
}

/* If path opens beneath the folder, the file is inside it. */
static void check_inside(const char *path)
{
        char link[64], real[4096];
        int fd = beneath_open(rootfd, path, O_PATH, 0);
        ssize_t n;

        if (fd < 0)
                return;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, real, sizeof(real) - 1);
        close(fd);
        FUZZ_ASSERT(n > 0);
        real[n] = '\0';
        FUZZ_ASSERT(strncmp(real, root, strlen(root)) == 0 &&
                    (real[strlen(root)] == '\0' || real[strlen(root)] == '/'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *in = fuzz_strndup(data, size), *clean = NULL;
        struct tess_error *err = NULL;

        if (rootfd < 0)
                make_tree();
        if (beneath_user_path(in, &clean, &err) == 0) {
                FUZZ_ASSERT(clean[0] != '/' && !strstr(clean, "//") && strlen(clean) <= BENEATH_PATH_MAX);
                for (const char *p = clean; *p;) {
                        size_t n = strcspn(p, "/");
                        FUZZ_ASSERT(n > 0 && !(n == 1 && p[0] == '.') && !(n == 2 && p[0] == '.' && p[1] == '.'));
                        p += n + (p[n] == '/');
                }
                check_inside(clean);
                free(clean);
        } else {
                FUZZ_ASSERT(err && err->code == EINVAL && strncmp(err->msg, "path '", 6) == 0);
                tess_error_free(err);
        }
        if (strlen(in) <= BENEATH_PATH_MAX)
                check_inside(in);
        free(in);
        return 0;
}
