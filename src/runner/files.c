/* files.c - upload, download and list under the home directory.
 *
 * Paths are relative to the home directory and were already checked
 * lexically (msg.c: no leading '/', no ".." component).  Here every
 * component is opened with O_NOFOLLOW relative to the directory before it,
 * starting from the home directory, so that no symlink (placed by the
 * user, who owns the home directory) leads outside.  All of it runs with
 * the session user's file-system identity (setfsuid), so the files belong
 * to the user and the user's permissions apply; a race with the user's own
 * processes can only reach what the user could reach anyway.  Uploads go
 * to a temporary name and are renamed into place when complete. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "runner/runner.h"

#define LIST_MAX 10000

/* The directory holding `path`'s last component (parent) or `path` itself,
 * reached without following any symlink; with create, missing directories
 * are made.  The last component is copied to last.  An fd or -errno. */
static int walk(const char *path, bool parent, bool create, char *last, size_t lastsz)
{
        char buf[RMSG_PATH_MAX + 1];
        char *comps[RMSG_PATH_MAX / 2 + 1];
        int n = 0, fd;

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf; *p;) {
                char *c = p;
                p += strcspn(p, "/");
                if (*p)
                        *p++ = '\0';
                if (*c && !streq(c, "."))
                        comps[n++] = c;
        }
        if (parent) {
                if (n == 0)
                        return -EINVAL;
                if (strlen(comps[n - 1]) >= lastsz)
                        return -ENAMETOOLONG;
                snprintf(last, lastsz, "%s", comps[--n]);
        }
        fd = open(rconf.home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (int i = 0; i < n; i++) {
                int next = openat(fd, comps[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0 && errno == ENOENT && create) {
                        if (mkdirat(fd, comps[i], 0755) < 0 && errno != EEXIST) {
                                int e = -errno;
                                close(fd);
                                return e;
                        }
                        next = openat(fd, comps[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (next < 0) {
                        /* a symlink on the way: ELOOP or ENOTDIR */
                        int e = errno == ENOTDIR || errno == ELOOP ? -ELOOP : -errno;
                        close(fd);
                        return e;
                }
                close(fd);
                fd = next;
        }
        return fd;
}

/* ---- upload ---- */

struct upload {
        int dirfd;
        bool committed;
        uint64_t size;
        char name[NAME_MAX + 1];
        char tmp[NAME_MAX + 1];
};

static void upload_close(struct conn *c)
{
        struct upload *u = conn_ctx(c);

        if (!u)
                return;
        if (!u->committed) {
                proc_fs_user();
                unlinkat(u->dirfd, u->tmp, 0);
                proc_fs_root();
        }
        close(u->dirfd);
        free(u);
}

static void upload_done(struct conn *c, int r)
{
        struct upload *u = conn_ctx(c);

        if (r < 0) {
                conn_reply_err(c, -r, "writing '%s': %s", u->name, strerror(-r));
                return;
        }
        proc_fs_user();
        r = renameat(u->dirfd, u->tmp, u->dirfd, u->name) < 0 ? -errno : 0;
        proc_fs_root();
        if (r < 0) {
                conn_reply_err(c, -r, "renaming into '%s': %s", u->name, strerror(-r));
                return;
        }
        u->committed = true;
        rbuf_printf(conn_reply_begin(c), ",\"size\":%llu", (unsigned long long)u->size);
        conn_reply_end(c);
}

void op_upload(struct conn *c, const struct rmsg_req *q)
{
        static unsigned counter;
        struct upload *u = xcalloc(1, sizeof(*u));
        int fd;

        proc_fs_user();
        u->dirfd = walk(q->path, true, true, u->name, sizeof(u->name));
        if (u->dirfd >= 0) {
                snprintf(u->tmp, sizeof(u->tmp), ".%.200s.tessera-upload-%d-%u", u->name, (int)getpid(), ++counter);
                fd = openat(u->dirfd, u->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        fd = -errno;
        } else {
                fd = u->dirfd;
        }
        proc_fs_root();
        if (fd < 0) {
                if (u->dirfd >= 0)
                        close(u->dirfd);
                free(u);
                conn_reply_err(c, -fd, "upload '%s': %s", q->path, strerror(-fd));
                return;
        }
        fchmod(fd, q->perm >= 0 ? (mode_t)q->perm : 0644);
        u->size = (uint64_t)q->size;
        conn_recv_file(c, fd, (uint64_t)q->size, upload_done, upload_close, u);
}

/* ---- download ---- */

void op_download(struct conn *c, const struct rmsg_req *q)
{
        char name[NAME_MAX + 1];
        struct stat st;
        int dirfd, fd;

        proc_fs_user();
        dirfd = walk(q->path, true, false, name, sizeof(name));
        fd = dirfd;
        if (dirfd >= 0) {
                fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0)
                        fd = errno == ELOOP ? -ELOOP : -errno;
                close(dirfd);
        }
        proc_fs_root();
        if (fd < 0) {
                conn_reply_err(c, -fd, "download '%s': %s", q->path, strerror(-fd));
                return;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                conn_reply_err(c, EINVAL, "download '%s': not a regular file", q->path);
                return;
        }
        rbuf_printf(conn_reply_begin(c), ",\"size\":%lld,\"perm\":%d,\"mtime\":%lld", (long long)st.st_size,
                    (int)(st.st_mode & 07777), (long long)st.st_mtime);
        conn_send_file(c, fd, (uint64_t)st.st_size);
        conn_reply_end(c);
}

/* ---- list ---- */

static const char *type_name(mode_t m)
{
        return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "link" : "other";
}

void op_list(struct conn *c, const struct rmsg_req *q)
{
        struct rbuf *b;
        struct dirent *de;
        DIR *d;
        int fd, n = 0;
        bool truncated = false;

        proc_fs_user();
        fd = walk(q->path ? q->path : "", false, false, NULL, 0);
        d = fd >= 0 ? fdopendir(fd) : NULL;
        if (fd >= 0 && !d) {
                int e = -errno;
                close(fd);
                fd = e;
        }
        if (!d) {
                proc_fs_root();
                conn_reply_err(c, -fd, "list '%s': %s", q->path ? q->path : "", strerror(-fd));
                return;
        }
        b = conn_reply_begin(c);
        rbuf_puts(b, ",\"entries\":[");
        while ((de = readdir(d))) {
                struct stat st;
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (n == LIST_MAX) {
                        truncated = true;
                        break;
                }
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                rbuf_puts(b, n++ ? ",{\"name\":" : "{\"name\":");
                rbuf_json_str(b, de->d_name, strlen(de->d_name));
                rbuf_printf(b, ",\"type\":\"%s\",\"size\":%lld,\"perm\":%d,\"mtime\":%lld}", type_name(st.st_mode),
                            (long long)st.st_size, (int)(st.st_mode & 07777), (long long)st.st_mtime);
        }
        rbuf_printf(b, "],\"truncated\":%s", truncated ? "true" : "false");
        closedir(d);
        proc_fs_root();
        conn_reply_end(c);
}
