/* api_vfolder_files.c - files inside a folder (docs/vfolder-transfers.md):
 *
 *   GET /folders/{name}/files?path=        list a directory (ro): "items", and
 *                                          "files" for Backend.AI's older clients
 *   POST /folders/{name}/mkdir {path (string or list), parents, exist_ok}   (rw)
 *   POST /folders/{name}/rename-file {target_path, new_name}                (rw)
 *   POST /folders/{name}/move-file {src, dst}                                (rw)
 *   DELETE|POST /folders/{name}/delete-files {files[], recursive}            (wd)
 * (rename_file and delete_files: Backend.AI's newer spellings, the same.)
 *
 * Besides the caller's permission on the folder, changes need the host's
 * modify-vfolder (mkdir, rename, move) or delete-vfolder (delete), as
 * Backend.AI checks them.  Every path goes through vfolder_fs.h: nothing
 * outside the folder is ever listed, made, moved or removed. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/beneath.h"
#include "common/buf.h"
#include "common/fs.h"
#include "common/timeutil.h"
#include "manager/http/http.h"
#include "manager/vfolder/api_vfolder.h"
#include "manager/vfolder/vfolder.h"
#include "manager/vfolder/vfolder_fs.h"

#define MKDIR_MAX  1000 /* paths in one mkdir */
#define DELETE_MAX 1000 /* files in one delete-files */

/* The folder, the caller's permission `need` and host permission `host` (0: none). */
static int open_folder(struct api_ctx *c, enum vf_perm need, unsigned host, struct vfolder *f, struct tess_error **err)
{
        int r = vf_find(c, c->param[0], VF_STATUS_READY, need, f, err);

        if (r >= 0 && host)
                r = vf_need_host_perm(c, f, host, err);
        if (r >= 0 && need > VF_PERM_RO)
                api_audit_target(c, "vfolder:%s", f->id);
        return r < 0 ? r : vf_root_open(f, err);
}

/* ---- listing ---- */

/* s as a JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_str(struct buf *b, const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        buf_putc(b, '"');
        while (*p) {
                unsigned c = *p;
                size_t n = c < 0x80                   ? 1
                           : (c >= 0xc2 && c <= 0xdf) ? 2
                           : (c >= 0xe0 && c <= 0xef) ? 3
                           : (c >= 0xf0 && c <= 0xf4) ? 4
                                                      : 0;
                for (size_t i = 1; i < n; i++)
                        if ((p[i] & 0xc0) != 0x80)
                                n = 0;
                if (n == 0) {
                        buf_puts(b, "\\ufffd");
                        p++;
                } else if (c == '"' || c == '\\') {
                        buf_putc(b, '\\');
                        buf_putc(b, (char)c);
                        p++;
                } else if (c < 0x20) {
                        buf_printf(b, "\\u%04x", c);
                        p++;
                } else {
                        buf_append(b, p, n);
                        p += n;
                }
        }
        buf_putc(b, '"');
}

static void list_item(struct buf *b, const char *name, const struct stat *st)
{
        char created[48], modified[48];
        const char *type = S_ISDIR(st->st_mode) ? "DIRECTORY" : S_ISLNK(st->st_mode) ? "SYMLINK" : "FILE";

        time_format_iso((int64_t)st->st_ctim.tv_sec * USEC_PER_SEC + st->st_ctim.tv_nsec / 1000, created,
                        sizeof(created));
        time_format_iso((int64_t)st->st_mtim.tv_sec * USEC_PER_SEC + st->st_mtim.tv_nsec / 1000, modified,
                        sizeof(modified));
        buf_puts(b, "{\"name\":");
        json_str(b, name);
        buf_printf(b, ",\"type\":\"%s\",\"size\":%lld,\"mode\":\"%o\",\"created\":\"%s\",\"modified\":\"%s\"}", type,
                   (long long)st->st_size, (unsigned)(st->st_mode & 07777), created, modified);
}

/* An entry as Backend.AI's older listing has it (times in seconds). */
static json_t *legacy_item(const char *name, const struct stat *st)
{
        char mode[11];
        fs_mode_string(st->st_mode, mode);
        return json_pack("{s:s, s:I, s:s, s:f, s:f, s:f}", "filename", name, "size", (json_int_t)st->st_size, "mode",
                         mode, "mtime", st->st_mtim.tv_sec + st->st_mtim.tv_nsec / 1e9, "ctime",
                         st->st_ctim.tv_sec + st->st_ctim.tv_nsec / 1e9, "atime",
                         st->st_atim.tv_sec + st->st_atim.tv_nsec / 1e9);
}

void api_vfolder_files(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        const char *path = http_query(c->req, "path");
        _cleanup_free_ char *clean = NULL;
        struct buf out = BUF_INIT;
        int rootfd = -1, fd = -1, r = 0, n = 0;
        DIR *d = NULL;

        if (!path)
                r = api_get_string(c->body, NAMES("path"), BENEATH_PATH_MAX, &path, &err);
        if (r >= 0)
                r = vf_user_path(path ? path : "", "path", &clean, &err);
        if (r >= 0)
                r = rootfd = open_folder(c, VF_PERM_RO, 0, &f, &err);
        if (r >= 0) {
                fd = beneath_open(rootfd, clean, O_RDONLY | O_DIRECTORY, 0);
                if (fd < 0 || !(d = fdopendir(fd)))
                        r = vf_fs_error(&err, fd < 0 ? -fd : errno, "path", clean);
        }
        if (r < 0) {
                if (fd >= 0 && !d)
                        close(fd);
                if (rootfd >= 0)
                        close(rootfd);
                api_fail(c, err);
                return;
        }
        json_t *legacy = json_array();
        buf_puts(&out, "{\"items\":[");
        for (struct dirent *e; (e = readdir(d));) {
                struct stat st;
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* removed meanwhile */
                if (n++)
                        buf_putc(&out, ',');
                list_item(&out, e->d_name, &st);
                json_array_append_new(legacy, legacy_item(e->d_name, &st));
        }
        /* Backend.AI's older clients read "files": the same entries as a
         * JSON text of [{filename, size, mode, mtime, ctime, atime}] */
        _cleanup_free_ char *legacy_text = json_dumps(legacy, JSON_COMPACT);
        json_decref(legacy);
        buf_puts(&out, "],\"files\":");
        json_str(&out, legacy_text);
        buf_puts(&out, "}");
        closedir(d);
        close(rootfd);
        size_t len;
        char *text = buf_detach(&out, &len);
        http_reply_take(c->req, 200, "application/json", text, len);
}

/* ---- mkdir ---- */

static int mkdir_one(int rootfd, const char *path, bool parents, bool exist_ok, struct tess_error **err)
{
        _cleanup_free_ char *clean = NULL;
        const char *parent, *base;
        struct stat st;
        int r = vf_user_path(path, "path", &clean, err), dfd;

        if (r < 0)
                return r;
        vf_path_split(clean, &parent, &base);
        if (!base)
                return exist_ok ? 0 : tess_err(err, EEXIST, "path '/': the folder itself exists");
        dfd = vf_dir_open(rootfd, parent, parents);
        if (dfd < 0)
                return vf_fs_error(err, -dfd, "path", parent);
        r = mkdirat(dfd, base, 0755) < 0 ? -errno : 0;
        if (r == 0)
                vf_give_to_work_user(dfd, base);
        if (r == -EEXIST && exist_ok && fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                r = 0;
        close(dfd);
        return r < 0 ? vf_fs_error(err, -r, "path", path) : 0;
}

void api_vfolder_mkdir(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        json_t *paths = json_object_get(c->body, "path"), *p, *results = json_array();
        bool parents = false, exist_ok = false;
        size_t i;
        int r = api_get_bool(c->body, NAMES("parents"), &parents, &err), rootfd = -1;

        if (r >= 0)
                r = api_get_bool(c->body, NAMES("exist_ok", "existOk"), &exist_ok, &err);
        if (r >= 0 && !json_is_string(paths) && !json_is_array(paths))
                r = tess_err(&err, EINVAL, "'path' is required: a path or a list of paths");
        if (r >= 0 && json_is_array(paths) && (json_array_size(paths) == 0 || json_array_size(paths) > MKDIR_MAX))
                r = tess_err(&err, EINVAL, "'path': 1 to %d paths", MKDIR_MAX);
        if (r >= 0)
                r = rootfd = open_folder(c, VF_PERM_RW, VFH_MODIFY, &f, &err);
        if (r >= 0 && json_is_string(paths)) {
                r = mkdir_one(rootfd, json_string_value(paths), parents, exist_ok, &err);
                if (r >= 0)
                        json_array_append_new(results, json_pack("{s:O, s:s}", "item", paths, "status", "success"));
        } else if (r >= 0) {
                json_array_foreach(paths, i, p) {
                        if (!json_is_string(p)) {
                                r = tess_err(&err, EINVAL, "'path': a list of strings");
                                break;
                        }
                        r = mkdir_one(rootfd, json_string_value(p), parents, exist_ok, &err);
                        if (r < 0)
                                break;
                        json_array_append_new(results, json_pack("{s:O, s:s}", "item", p, "status", "success"));
                }
        }
        if (rootfd >= 0)
                close(rootfd);
        if (r < 0) {
                json_decref(results);
                api_fail(c, err);
                return;
        }
        api_json(c, 201, json_pack("{s:o}", "results", results));
}

/* ---- rename, move ---- */

/* The parent directory of a user's path (fd) and the last name, in *clean. */
static int open_parent(int rootfd, const char *path, const char *field, char **clean, const char **base,
                       struct tess_error **err)
{
        const char *parent;
        int r = vf_user_path(path, field, clean, err), dfd;

        if (r < 0)
                return r;
        _cleanup_free_ char *shown = xstrdup(*clean);
        vf_path_split(*clean, &parent, base);
        if (!*base)
                return tess_err(err, EINVAL, "'%s': the folder itself cannot be renamed, moved or deleted here", field);
        dfd = vf_dir_open(rootfd, parent, false);
        return dfd < 0 ? vf_fs_error(err, -dfd, field, shown) : dfd;
}

static bool plain_name(const char *s)
{
        return *s && !strchr(s, '/') && !streq(s, ".") && !streq(s, "..");
}

void api_vfolder_rename_file(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        const char *target = NULL, *new_name = NULL, *base = NULL;
        _cleanup_free_ char *clean = NULL, *clean_new = NULL;
        int rootfd = -1, dfd = -1;
        int r = api_get_string(c->body, NAMES("target_path", "targetPath"), BENEATH_PATH_MAX, &target, &err);

        if (r >= 0)
                r = api_get_string(c->body, NAMES("new_name", "newName"), 1024, &new_name, &err);
        if (r >= 0 && !new_name)
                r = tess_err(&err, EINVAL, "'new_name' is required");
        if (r >= 0)
                r = beneath_user_path(new_name, &clean_new, &err);
        if (r >= 0 && !plain_name(new_name))
                r = tess_err(&err, EINVAL, "'new_name' must be one name, without '/' (use move-file to move)");
        if (r >= 0)
                r = rootfd = open_folder(c, VF_PERM_RW, VFH_MODIFY, &f, &err);
        if (r >= 0)
                r = dfd = open_parent(rootfd, target, "target_path", &clean, &base, &err);
        if (r >= 0 && renameat2(dfd, base, dfd, new_name, RENAME_NOREPLACE) < 0)
                r = vf_fs_error(&err, errno, "target_path", target);
        if (dfd >= 0)
                close(dfd);
        if (rootfd >= 0)
                close(rootfd);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, json_object());
}

void api_vfolder_move_file(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        const char *src = NULL, *dst = NULL, *sbase = NULL, *dbase = NULL;
        _cleanup_free_ char *csrc = NULL, *cdst = NULL, *into = NULL;
        int rootfd = -1, sfd = -1, dfd = -1;
        int r = api_get_string(c->body, NAMES("src"), BENEATH_PATH_MAX, &src, &err);

        if (r >= 0)
                r = api_get_string(c->body, NAMES("dst"), BENEATH_PATH_MAX, &dst, &err);
        if (r >= 0 && (!src || !dst))
                r = tess_err(&err, EINVAL, "'src' and 'dst' are required");
        if (r >= 0)
                r = rootfd = open_folder(c, VF_PERM_RW, VFH_MODIFY, &f, &err);
        if (r >= 0)
                r = sfd = open_parent(rootfd, src, "src", &csrc, &sbase, &err);
        if (r >= 0) {
                /* an existing directory as dst: into it, under the same name */
                int probe = -1;
                _cleanup_free_ char *cd = NULL;
                if (beneath_user_path(dst, &cd, &err) < 0)
                        r = -EINVAL;
                else if ((probe = beneath_open(rootfd, cd, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0)) >= 0)
                        into = xasprintf("%s%s%s", cd, *cd ? "/" : "", sbase);
                if (probe >= 0)
                        close(probe);
        }
        if (r >= 0)
                r = dfd = open_parent(rootfd, into ? into : dst, "dst", &cdst, &dbase, &err);
        if (r >= 0 && renameat2(sfd, sbase, dfd, dbase, RENAME_NOREPLACE) < 0)
                r = vf_fs_error(&err, errno, errno == ENOENT ? "src" : "dst", errno == ENOENT ? src : dst);
        if (sfd >= 0)
                close(sfd);
        if (dfd >= 0)
                close(dfd);
        if (rootfd >= 0)
                close(rootfd);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, json_object());
}

/* ---- delete ---- */

static int delete_one(int rootfd, const char *path, bool recursive, struct tess_error **err)
{
        _cleanup_free_ char *clean = NULL;
        const char *base;
        struct stat st;
        int dfd = open_parent(rootfd, path, "files", &clean, &base, err), r;

        if (dfd < 0)
                return dfd;
        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
                r = -errno;
        else if (!S_ISDIR(st.st_mode))
                r = unlinkat(dfd, base, 0) < 0 ? -errno : 0;
        else if (recursive)
                r = vf_remove_tree_at(dfd, base);
        else
                r = unlinkat(dfd, base, AT_REMOVEDIR) < 0 ? -errno : 0;
        close(dfd);
        if (r == -ENOTEMPTY)
                return tess_err(err, EEXIST, "'%.256s' is a directory that is not empty: set 'recursive'", path);
        return r < 0 ? vf_fs_error(err, -r, "files", path) : 0;
}

void api_vfolder_delete_files(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        json_t *files = json_object_get(c->body, "files"), *p;
        bool recursive = false;
        size_t i;
        int rootfd = -1, r = api_get_bool(c->body, NAMES("recursive"), &recursive, &err);

        if (r >= 0 && (!json_is_array(files) || json_array_size(files) == 0 || json_array_size(files) > DELETE_MAX))
                r = tess_err(&err, EINVAL, "'files' is required: a list of 1 to %d paths", DELETE_MAX);
        json_array_foreach(files, i, p) {
                if (r >= 0 && !json_is_string(p))
                        r = tess_err(&err, EINVAL, "'files': a list of strings");
        }
        if (r >= 0)
                r = rootfd = open_folder(c, VF_PERM_WD, VFH_DELETE, &f, &err);
        json_array_foreach(files, i, p) {
                if (r >= 0)
                        r = delete_one(rootfd, json_string_value(p), recursive, &err);
        }
        if (rootfd >= 0)
                close(rootfd);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_json(c, 200, json_object());
}
