/* vfolder_fs.c - see vfolder_fs.h. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/beneath.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/work_user.h"
#include "manager/vfolder/vfolder.h"
#include "manager/vfolder/vfolder_fs.h"

int vf_root_open(const struct vfolder *f, struct tess_error **err)
{
        int fd;

        if (!f->path[0])
                return tess_err(err, ENOENT, "folder '%s': its storage host '%s' is not on this manager", f->name,
                                f->host);
        fd = open(f->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return tess_err(err, errno == ENOENT ? ENOENT : EIO, "folder '%s': its directory: %s", f->name,
                                strerror(errno));
        return fd;
}

int vf_user_path(const char *path, const char *field, char **ret, struct tess_error **err)
{
        if (!path)
                return tess_err(err, EINVAL, "'%s' is required", field);
        return beneath_user_path(path, ret, err);
}

void vf_path_split(char *clean, const char **parent, const char **base)
{
        char *slash = strrchr(clean, '/');

        if (slash) {
                *slash = '\0';
                *parent = clean;
                *base = slash + 1;
        } else {
                *parent = "";
                *base = *clean ? clean : NULL;
        }
}

int vf_dir_open(int rootfd, const char *rel, bool mk)
{
        _cleanup_free_ char *copy = NULL;
        char *save = NULL;
        int fd;

        if (!mk)
                return beneath_open(rootfd, rel, O_PATH | O_DIRECTORY, 0);
        fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        copy = xstrdup(rel);
        for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
                int next = beneath_open(fd, name, O_PATH | O_DIRECTORY, 0);
                if (next == -ENOENT) {
                        if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST) {
                                next = -errno;
                        } else {
                                vf_give_to_work_user(fd, name);
                                next = beneath_open(fd, name, O_PATH | O_DIRECTORY, 0);
                        }
                }
                close(fd);
                if (next < 0)
                        return next;
                fd = next;
        }
        return fd;
}

static int remove_at(int parent, const char *name, int depth)
{
        struct stat st;
        int r = 0;

        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(parent, name, 0) < 0 ? -errno : 0;
        if (depth > BENEATH_DEPTH_MAX)
                return -ELOOP;
        int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        for (struct dirent *e; r >= 0 && (e = readdir(d));) {
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                r = remove_at(dirfd(d), e->d_name, depth + 1);
        }
        closedir(d);
        if (r >= 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0)
                r = -errno;
        return r;
}

void vf_give_to_work_user(int dirfd, const char *name)
{
        if (fchownat(dirfd, name, TESSERA_WORK_UID, TESSERA_WORK_GID,
                     AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH)) < 0)
                log_debug("vfolder: cannot give '%s' to uid %d: %s", name, TESSERA_WORK_UID, strerror(errno));
}

int vf_remove_tree_at(int dirfd, const char *name)
{
        return remove_at(dirfd, name, 0);
}

int vf_remove_dir(const char *path, struct tess_error **err)
{
        char up[PATH_MAX];
        int r = fs_remove_tree(path, err);

        snprintf(up, sizeof(up), "%s", path);
        for (int level = 0; level < 2 && strrchr(up, '/'); level++) {
                *strrchr(up, '/') = '\0';
                if (rmdir(up) < 0)
                        break;
        }
        return r;
}

int vf_fs_error(struct tess_error **err, int e, const char *what, const char *path)
{
        const char *p = *path ? path : "/";

        switch (e) {
        case ENOENT:
                return tess_err(err, ENOENT, "%s '%.256s': no such file or directory", what, p);
        case EEXIST:
        case ENOTEMPTY:
                return tess_err(err, EEXIST, "%s '%.256s': %s", what, p, e == EEXIST ? "already exists" : "not empty");
        case EXDEV:
        case ELOOP:
                return tess_err(err, EACCES, "%s '%.256s': leads out of the folder (a symlink or mount)", what, p);
        case ENOTDIR:
                return tess_err(err, EINVAL, "%s '%.256s': a part of it is not a directory", what, p);
        case EISDIR:
                return tess_err(err, EINVAL, "%s '%.256s': is a directory", what, p);
        case EINVAL:
        case ENAMETOOLONG:
                return tess_err(err, EINVAL, "%s '%.256s': %s", what, p, strerror(e));
        case EACCES:
        case EPERM:
                return tess_err(err, EACCES, "%s '%.256s': permission denied on the storage host", what, p);
        case EDQUOT:
        case ENOSPC:
                return tess_err(err, EDQUOT, "%s '%.256s': %s", what, p, strerror(e));
        default:
                return tess_err(err, EIO, "%s '%.256s': %s", what, p, strerror(e));
        }
}
