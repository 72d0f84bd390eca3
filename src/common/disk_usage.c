/* disk_usage.c - see disk_usage.h. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>

#include "common/disk_usage.h"

/* true the first time `ino` comes by (open addressing; 0 marks a free slot) */
static bool first_sight(struct disk_usage_walk *w, ino_t ino)
{
        if (w->seen_n * 2 >= w->seen_cap) {
                size_t cap = w->seen_cap ? w->seen_cap * 2 : 64;
                ino_t *old = w->seen, *v = xcalloc(cap, sizeof(*v));
                for (size_t i = 0; i < w->seen_cap; i++)
                        for (size_t k = old[i] % cap; old[i]; k = (k + 1) % cap)
                                if (!v[k]) {
                                        v[k] = old[i];
                                        break;
                                }
                free(old);
                w->seen = v;
                w->seen_cap = cap;
        }
        for (size_t k = ino % w->seen_cap;; k = (k + 1) % w->seen_cap) {
                if (w->seen[k] == ino)
                        return false;
                if (!w->seen[k]) {
                        w->seen[k] = ino;
                        w->seen_n++;
                        return true;
                }
        }
}

static void walk_dir(int fd, int depth, struct disk_usage_walk *w)
{
        DIR *d = fdopendir(fd);
        struct dirent *e;

        if (!d) {
                close(fd);
                return;
        }
        while ((e = readdir(d))) {
                struct stat st;
                if (w->files >= DISK_USAGE_MAX_ENTRIES) {
                        w->truncated = true;
                        break;
                }
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* gone meanwhile */
                w->files++;
                if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && st.st_ino && !first_sight(w, st.st_ino))
                        continue;
                w->bytes += (int64_t)st.st_blocks * 512;
                if (w->visit && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
                        w->visit(dirfd(d), e->d_name, &st, w->arg);
                if (S_ISDIR(st.st_mode) && depth < DISK_USAGE_MAX_DEPTH) {
                        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub >= 0)
                                walk_dir(sub, depth + 1, w);
                }
        }
        closedir(d);
}

void disk_usage_walk_fd(int fd, struct disk_usage_walk *w)
{
        walk_dir(fd, 1, w);
}

int disk_usage_walk_path(const char *path, struct disk_usage_walk *w, struct tess_error **err)
{
        int fd;

        if (!path || !*path)
                return 0;
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0; /* nothing there yet */
                return tess_err(err, errno, "reading '%s': %s", path, strerror(errno));
        }
        walk_dir(fd, 1, w);
        return 0;
}

void disk_usage_walk_release(struct disk_usage_walk *w)
{
        free(w->seen);
        w->seen = NULL;
        w->seen_n = w->seen_cap = 0;
}
