/* dotfiles_layer.c - see dotfiles_layer.h. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "agent/dotfiles_layer.h"
#include "common/beneath.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/work_user.h"
#include "image/image.h"

#define DOTFILES_LAYERS "layers/tessera-dotfiles"
#define DOTFILES_HOME   "home/work"

static char *dotfiles_dir(const struct agent_ctx *ctx, const char *id)
{
        return xasprintf("%s/" DOTFILES_LAYERS "/%s", image_store_dir(ctx->images), id);
}

static bool opaque_dir(int dirfd)
{
        char v[2];
        return fgetxattr(dirfd, "trusted.overlay.opaque", v, sizeof(v)) == 1 && v[0] == 'y';
}

/* What the image has at rel (under its root): 1 a directory, its
 * attributes in *ret; 0 nothing (or a whiteout); -1 something else.
 * From the top layer down, following no symlink. */
static int image_entry(char *const *layers, const char *rel, struct stat *ret)
{
        _cleanup_free_ char *parent = xstrdup(rel);
        char *slash = strrchr(parent, '/');
        const char *name = slash ? slash + 1 : rel;
        size_t n = 0;

        if (slash)
                *slash = '\0';
        else
                parent[0] = '\0';
        while (layers && layers[n])
                n++;
        for (size_t i = n; i-- > 0;) {
                _cleanup_close_ int root = open(layers[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (root < 0)
                        continue;
                _cleanup_close_ int dir = beneath_open_nofollow(root, parent, O_RDONLY | O_DIRECTORY, 0);
                if (dir == -ENOENT)
                        continue;
                if (dir < 0) /* hidden by what this layer has on the way */
                        return 0;
                if (fstatat(dir, name, ret, AT_SYMLINK_NOFOLLOW) == 0) {
                        if (S_ISDIR(ret->st_mode))
                                return 1;
                        return S_ISCHR(ret->st_mode) && ret->st_rdev == makedev(0, 0) ? 0 : -1;
                }
                if (opaque_dir(dir))
                        return 0;
        }
        return 0;
}

/* Directory `name` in parent, made with attrs' owner and mode when it is
 * not there yet; its fd, or -errno. */
static int layer_mkdir(int parent, const char *name, const struct stat *attrs)
{
        bool made = mkdirat(parent, name, 0700) == 0;
        int fd;

        if (!made && errno != EEXIST)
                return -errno;
        fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (made && (fchown(fd, attrs->st_uid, attrs->st_gid) < 0 || fchmod(fd, attrs->st_mode & 07777) < 0)) {
                int e = -errno;
                close(fd);
                return e;
        }
        return fd;
}

/* Directory rel of the layer (root) and those on its way, each as the
 * image has it; its fd, or -errno. */
static int layer_dirs(int root, char *const *layers, const char *rel)
{
        _cleanup_free_ char *walk = xstrdup(rel);
        char *save = NULL;
        int fd = fcntl(root, F_DUPFD_CLOEXEC, 3);

        if (fd < 0)
                return -errno;
        for (char *name = strtok_r(walk, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
                _cleanup_free_ char *sofar = xstrndup(rel, (size_t)(name - walk) + strlen(name));
                struct stat st;
                if (image_entry(layers, sofar, &st) <= 0) {
                        bool top = streq(sofar, "home");
                        st.st_uid = top ? 0 : TESSERA_WORK_UID;
                        st.st_gid = top ? 0 : TESSERA_WORK_GID;
                        st.st_mode = S_IFDIR | 0755;
                }
                int next = layer_mkdir(fd, name, &st);
                close(fd);
                if (next < 0)
                        return next;
                fd = next;
        }
        return fd;
}

/* File rel (home/work/...) of the layer: the work user's, its mode. */
static int write_dotfile(int root, char *const *layers, const char *rel, const char *data, mode_t mode)
{
        _cleanup_free_ char *parent = xstrdup(rel);
        char *slash = strrchr(parent, '/');

        *slash = '\0'; /* rel is under home/work */
        _cleanup_close_ int dir = layer_dirs(root, layers, parent);
        if (dir < 0)
                return dir;
        _cleanup_close_ int fd = openat(dir, slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        int r = fs_write_all(fd, data, strlen(data));
        if (r < 0)
                return r;
        if (fchown(fd, TESSERA_WORK_UID, TESSERA_WORK_GID) < 0 || fchmod(fd, mode) < 0)
                return -errno;
        return 0;
}

/* Whether a mount covers rel (under the root) or needs it as a directory. */
static bool mount_conflict(const char *rel, const struct container_mount *mounts, size_t n)
{
        size_t len = strlen(rel);

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *d = NULL;
                if (beneath_clean(mounts[i].destination, &d) < 0)
                        continue;
                size_t dl = strlen(d);
                if (streq(d, rel) || (dl > len && strncmp(d, rel, len) == 0 && d[len] == '/') ||
                    (len > dl && strncmp(rel, d, dl) == 0 && rel[dl] == '/'))
                        return true;
        }
        return false;
}

/* One dotfile of the manager's list into the layer, or a line saying why not. */
static void add_dotfile(int root, char *const *layers, const char *id, const json_t *f,
                        const struct container_mount *mounts, size_t n_mounts)
{
        const char *path = json_string_value(json_object_get(f, "path"));
        const char *perm = json_string_value(json_object_get(f, "permission"));
        const char *data = json_string_value(json_object_get(f, "data"));
        _cleanup_free_ char *clean = NULL, *rel = NULL;
        int r;

        if (!path || !perm || !data || strlen(perm) != 3 || strspn(perm, "01234567") != 3 ||
            beneath_clean(path, &clean) < 0 || !*clean) {
                log_warn("kernel %s: dotfile '%.64s' is not a valid one: left out", id, path ? path : "");
                return;
        }
        rel = xasprintf(DOTFILES_HOME "/%s", clean);
        if (mount_conflict(rel, mounts, n_mounts)) {
                log_notice("kernel %s: dotfile '%.64s' is where a folder is mounted: left out", id, clean);
                return;
        }
        r = write_dotfile(root, layers, rel, data, (mode_t)strtol(perm, NULL, 8));
        if (r < 0)
                log_notice("kernel %s: dotfile '%.64s': %s: left out", id, clean, strerror(-r));
}

static int write_layer(const char *tmp, char *const *layers, const char *id, const json_t *files,
                       const struct container_mount *mounts, size_t n_mounts, struct tess_error **err)
{
        _cleanup_close_ int root = -1;
        const json_t *f;
        size_t i;

        if (mkdir(tmp, 0755) < 0)
                return tess_err(err, errno, "creating '%s': %s", tmp, strerror(errno));
        root = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0)
                return tess_err(err, errno, "opening '%s': %s", tmp, strerror(errno));
        json_array_foreach(files, i, f)
                add_dotfile(root, layers, id, f, mounts, n_mounts);
        return 0;
}

int dotfiles_layer_make(struct agent_ctx *ctx, const char *id, const json_t *files, char *const *layers,
                        const struct container_mount *mounts, size_t n_mounts, char **ret, struct tess_error **err)
{
        _cleanup_free_ char *dir = NULL, *tmp = NULL, *parent = NULL;
        struct stat st;
        int r;

        *ret = NULL;
        if (json_array_size(files) == 0)
                return 0;
        if (image_entry(layers, "home", &st) < 0 || image_entry(layers, DOTFILES_HOME, &st) < 0) {
                log_warn("kernel %s: the image's /home or /home/work is not a directory: no dotfiles", id);
                return 0;
        }
        dir = dotfiles_dir(ctx, id);
        if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
                *ret = TAKE_PTR(dir);
                return 0;
        }
        tmp = xasprintf("%s.tmp", dir);
        parent = xasprintf("%s/" DOTFILES_LAYERS, image_store_dir(ctx->images));
        fs_remove_tree(tmp, NULL);
        r = fs_mkdir_p(parent, 0700, err);
        if (r >= 0)
                r = write_layer(tmp, layers, id, files, mounts, n_mounts, err);
        if (r >= 0 && rename(tmp, dir) < 0)
                r = tess_err(err, errno, "renaming '%s': %s", tmp, strerror(errno));
        if (r < 0) {
                fs_remove_tree(tmp, NULL);
                return tess_err_wrap(err, "the dotfiles of kernel %s", id);
        }
        *ret = TAKE_PTR(dir);
        return 0;
}

void dotfiles_layer_remove(struct agent_ctx *ctx, const char *id)
{
        _cleanup_free_ char *dir = dotfiles_dir(ctx, id), *tmp = xasprintf("%s.tmp", dir);
        struct tess_error *err = NULL;

        if (fs_remove_tree(dir, &err) < 0)
                log_warn("kernel %s: removing its dotfiles: %s", id, err->msg);
        tess_error_free(err);
        fs_remove_tree(tmp, NULL);
}
