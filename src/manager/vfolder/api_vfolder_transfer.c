/* api_vfolder_transfer.c - uploads and downloads of folder files
 * (docs/vfolder-transfers.md):
 *
 *   POST /folders/{name}/request-upload {path, size, ttl?}   -> {token, url}
 *   POST /folders/{name}/request-download {path, archive, ttl?} -> {token, url}
 *   OPTIONS, POST, HEAD, PATCH /folders/_/upload?token=   tus 1.0 (creation)
 *   GET /folders/_/download?token=      a file (one Range), or a tar of a directory
 *
 * The token (vfolder_token.h) is the only credential of the public routes.
 * An upload's bytes go to <scope dir>/.uploads/<id>: inside the folder's
 * quota scope, so that what it holds counts against the scope's quota,
 * but outside the folder; the id is derived from folder, path, size and
 * user so that a new token for the same upload resumes it; the offset is
 * that file's size.  Its creation (tus POST) checks the quota and
 * reserves the upload's whole size (fallocate, the size unchanged), so
 * that uploads never completed count as much as finished ones and
 * several started at once cannot together pass the limit.  The file
 * appears in the folder, renamed into place after an fdatasync, only when
 * complete; one left alone for vfolder_upload_keep is removed
 * (vfolder_upload_sweep.c).
 *
 * The creation step is optional, as in Backend.AI, whose token is the
 * upload (its SDK's aiotusclient never POSTs): HEAD of an upload not made
 * yet answers Upload-Offset 0, and a PATCH at offset 0 makes it as the
 * POST would. */
#include "common/compat.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>

#include "common/beneath.h"
#include "common/buf.h"
#include "common/crypto.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "manager/api/auth.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/http/http_range.h"
#include "manager/vfolder/api_vfolder.h"
#include "manager/vfolder/vfolder.h"
#include "manager/vfolder/vfolder_archive.h"
#include "manager/vfolder/vfolder_fs.h"
#include "manager/vfolder/vfolder_token.h"

#define TUS_VERSION "1.0.0"

/* ---- tokens ---- */

static void request_token(struct api_ctx *c, enum vf_token_op op)
{
        struct tess_error *err = NULL;
        struct vfolder f;
        struct vf_token t = { .op = op };
        const char *path = NULL;
        _cleanup_free_ char *clean = NULL;
        int64_t size = 0, def = op == VFT_UPLOAD ? VF_TOKEN_UPLOAD_TTL : VF_TOKEN_DOWNLOAD_TTL, ttl = def;
        bool archive = false;
        unsigned char key[VF_TOKEN_KEY_LEN];
        int r = api_get_string(c->body, NAMES("path", "relpath"), BENEATH_PATH_MAX, &path, &err);

        if (r >= 0 && op == VFT_UPLOAD)
                r = api_get_int(c->body, NAMES("size"), 0, INT64_MAX, &size, &err);
        if (r >= 0 && op != VFT_UPLOAD)
                r = api_get_bool(c->body, NAMES("archive"), &archive, &err);
        if (r >= 0) /* a shorter life may be asked for, never a longer one */
                r = api_get_int(c->body, NAMES("ttl"), 1, def, &ttl, &err);
        if (r >= 0)
                r = vf_user_path(path, "path", &clean, &err);
        if (r >= 0 && op == VFT_UPLOAD && !*clean)
                r = tess_err(&err, EINVAL, "'path' must name a file in the folder");
        if (r >= 0 && op == VFT_UPLOAD && !json_object_get(c->body, "size"))
                r = tess_err(&err, EINVAL, "'size' is required");
        if (r >= 0)
                r = vf_find(c, c->param[0], VF_STATUS_READY, op == VFT_UPLOAD ? VF_PERM_RW : VF_PERM_RO, &f, &err);
        if (r >= 0)
                r = vf_need_host_perm(c, &f, op == VFT_UPLOAD ? VFH_UPLOAD : VFH_DOWNLOAD, &err);
        if (r >= 0 && op == VFT_UPLOAD)
                r = vf_quota_check(c->m, &f, size, &err);
        if (r < 0) {
                api_fail(c, err);
                return;
        }
        api_audit_target(c, "vfolder:%s", f.id);
        t.op = op == VFT_DOWNLOAD && archive ? VFT_ARCHIVE : op;
        snprintf(t.folder, sizeof(t.folder), "%s", f.id);
        snprintf(t.user, sizeof(t.user), "%.36s", c->who.user_id);
        snprintf(t.access_key, sizeof(t.access_key), "%.20s", c->who.access_key);
        t.expires = now_usec() / USEC_PER_SEC + ttl;
        t.size = size;
        snprintf(t.path, sizeof(t.path), "%s", clean);
        vf_token_key(c->m->master_key, key);
        _cleanup_free_ char *token = vf_token_make(key, &t);
        const char *host = http_header(c->req, "Host"), *proto = http_header(c->req, "X-Forwarded-Proto");
        _cleanup_free_ char *url = xasprintf("%s://%s/folders/_/%s", proto && streq(proto, "https") ? "https" : "http",
                                             host ? host : "localhost", op == VFT_UPLOAD ? "upload" : "download");
        api_json(c, 200, json_pack("{s:s, s:s}", "token", token, "url", url));
}

void api_vfolder_request_upload(struct api_ctx *c)
{
        request_token(c, VFT_UPLOAD);
}

void api_vfolder_request_download(struct api_ctx *c)
{
        request_token(c, VFT_DOWNLOAD);
}

/* What the token's holder may do now: the token's keypair and user are
 * still active (c->who becomes them) and the user still has the folder
 * permission and the host permission of the operation, as when it was
 * asked for (request_token). */
static int token_still_allowed(struct api_ctx *c, const struct vf_token *t, struct vfolder *f,
                               struct tess_error **err)
{
        bool upload = t->op == VFT_UPLOAD;
        int r = auth_lookup_keypair(c->m, t->access_key, &c->who, NULL, err);

        if (r == -ENOENT || (r >= 0 && !streq(c->who.user_id, t->user))) {
                tess_error_free(*err);
                *err = NULL;
                memset(&c->who, 0, sizeof(c->who));
                return tess_err(err, EACCES, "the token's keypair or user is no longer active");
        }
        if (r < 0)
                return r;
        r = vf_find(c, t->folder, VF_STATUS_READY, upload ? VF_PERM_RW : VF_PERM_RO, f, err);
        if (r == -ENOENT)
                return tess_err_wrap(err, "the token's folder is gone or no longer shared with its user");
        if (r < 0)
                return r;
        return vf_need_host_perm(c, f, upload ? VFH_UPLOAD : VFH_DOWNLOAD, err);
}

/* The token of ?token=, of an op in ops (bits of 1 << op), and its folder. */
static int token_folder(struct api_ctx *c, unsigned ops, struct vf_token *t, struct vfolder *f,
                        struct tess_error **err)
{
        unsigned char key[VF_TOKEN_KEY_LEN];
        int r;

        vf_token_key(c->m->master_key, key);
        r = vf_token_parse(key, http_query(c->req, "token"), now_usec() / USEC_PER_SEC, t, err);
        if (r < 0)
                return r;
        if (!(ops & (1u << t->op)))
                return tess_err(err, EACCES, "the token is not for this operation");
        r = token_still_allowed(c, t, f, err);
        if (r < 0)
                return r;
        api_audit_target(c, "vfolder:%s", f->id);
        return 0;
}

/* ---- tus ---- */

static void tus_headers(struct api_ctx *c)
{
        char max[32];

        snprintf(max, sizeof(max), "%llu", (unsigned long long)INT64_MAX);
        http_add_header(c->req, "Tus-Resumable", TUS_VERSION);
        http_add_header(c->req, "Tus-Version", TUS_VERSION);
        http_add_header(c->req, "Tus-Extension", "creation");
        http_add_header(c->req, "Tus-Max-Size", max);
        http_add_header(c->req, "Cache-Control", "no-store");
}

static void add_offset(struct api_ctx *c, const char *name, uint64_t v)
{
        char s[32];
        snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
        http_add_header(c->req, name, s);
}

void api_vfolder_tus_options(struct api_ctx *c)
{
        tus_headers(c);
        http_reply(c->req, 204, NULL, "", 0);
}

/* An upload in progress: its token, folder, and the directory of partials. */
struct upload {
        struct vf_token t;
        struct vfolder f;
        int updir; /* <host path>/.uploads */
        char id[65];
};

static int upload_open(struct api_ctx *c, struct upload *u, struct tess_error **err)
{
        const char *v = http_header(c->req, "Tus-Resumable");
        const struct vf_host *h;
        _cleanup_free_ char *dir = NULL;
        struct buf key = BUF_INIT;
        int r;

        u->updir = -1;
        tus_headers(c);
        if (!v || !streq(v, TUS_VERSION))
                return tess_err(err, EPROTO, "Tus-Resumable: " TUS_VERSION " is required");
        r = token_folder(c, 1u << VFT_UPLOAD, &u->t, &u->f, err);
        if (r < 0)
                return r;
        h = vf_hosts_find(&c->m->vfolder_hosts, u->f.host);
        if (!h || !u->f.path[0])
                return tess_err(err, ENOENT, "folder '%s': its storage host is not on this manager", u->f.name);
        char scope[64];
        vf_scope_dir(u->f.ownership_type, u->f.owner_id, scope, sizeof(scope));
        dir = xasprintf("%s/%s/" VF_UPLOADS_DIR, h->path, scope);
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return tess_err(err, EIO, "%s: %s", dir, strerror(errno));
        u->updir = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (u->updir < 0)
                return tess_err(err, EIO, "%s: %s", dir, strerror(errno));
        buf_printf(&key, "%s", u->t.folder);
        buf_putc(&key, '\0');
        buf_printf(&key, "%s", u->t.path);
        buf_putc(&key, '\0');
        buf_printf(&key, "%lld", (long long)u->t.size);
        buf_putc(&key, '\0');
        buf_printf(&key, "%s", u->t.user);
        sha256_hex(key.data, key.len, u->id);
        buf_release(&key);
        return 0;
}

static void upload_close(struct upload *u)
{
        if (u->updir >= 0)
                close(u->updir);
}

/* tus errors: 412 for the protocol version, else as api_fail. */
static void tus_fail(struct api_ctx *c, struct tess_error *err)
{
        if (err && err->code == EPROTO) {
                api_problem(c, 412, "precondition-failed", "%s", err->msg);
                tess_error_free(err);
                return;
        }
        api_fail(c, err);
}

/* The complete partial file `fd`: to disk, then into place. */
static int upload_finish(struct upload *u, int fd, struct tess_error **err)
{
        _cleanup_free_ char *clean = xstrdup(u->t.path);
        const char *parent, *base;
        struct stat st;
        int rootfd, dfd, r = 0;

        if (fdatasync(fd) < 0)
                return tess_err(err, EIO, "upload: %s", strerror(errno));
        rootfd = vf_root_open(&u->f, err);
        if (rootfd < 0)
                return rootfd;
        vf_path_split(clean, &parent, &base);
        dfd = vf_dir_open(rootfd, parent, true);
        close(rootfd);
        if (dfd < 0)
                return vf_fs_error(err, -dfd, "path", u->t.path);
        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                r = tess_err(err, EEXIST, "path '%.256s': a directory is there", u->t.path);
        else if (renameat(u->updir, u->id, dfd, base) < 0)
                r = errno == EXDEV ? tess_err(err, EIO, "the uploads directory is not on the folder's filesystem")
                                   : vf_fs_error(err, errno, "path", u->t.path);
        close(dfd);
        return r;
}

/* A new upload's file, its whole size reserved in the quota scope: the
 * scope's quota checked with the reservations of the uploads under way
 * (they are in the scope), then the blocks allocated (a filesystem quota,
 * XFS's, also refuses them there).  A filesystem without fallocate
 * reserves nothing. */
static int upload_begin(struct api_ctx *c, struct upload *u, int *ret_fd, struct tess_error **err)
{
        int r = u->t.size > 0 ? vf_quota_check(c->m, &u->f, u->t.size, err) : 0;
        int fd;

        if (r < 0)
                return r;
        fd = openat(u->updir, u->id, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return tess_err(err, EIO, "upload: %s", strerror(errno));
        if (u->t.size > 0 && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)u->t.size) < 0 && errno != EOPNOTSUPP) {
                r = errno == ENOSPC || errno == EDQUOT
                            ? tess_err(err, EDQUOT, "no room for the upload's %lld bytes in the folder's quota scope",
                                       (long long)u->t.size)
                            : tess_err(err, EIO, "upload: reserving %lld bytes: %s", (long long)u->t.size,
                                       strerror(errno));
                close(fd);
                unlinkat(u->updir, u->id, 0);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

void api_vfolder_tus_create(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct upload u;
        uint64_t len = 0;
        struct stat st;
        int fd = -1, r = upload_open(c, &u, &err);

        if (r >= 0 && http_parse_u64(http_header(c->req, "Upload-Length"), &len) < 0)
                r = tess_err(&err, EINVAL, "Upload-Length: a length in bytes is required");
        if (r >= 0 && (int64_t)len != u.t.size)
                r = tess_err(&err, EINVAL, "Upload-Length %llu is not the size the token was asked for (%lld)",
                             (unsigned long long)len, (long long)u.t.size);
        /* a POST again resumes the upload (tus: its offset answered) */
        if (r >= 0 && (fd = openat(u.updir, u.id, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                r = errno == ENOENT ? upload_begin(c, &u, &fd, &err) : tess_err(&err, EIO, "upload: %s", strerror(errno));
        if (r >= 0)
                vf_give_to_work_user(fd, "");
        if (r >= 0 && fstat(fd, &st) < 0)
                r = tess_err(&err, EIO, "upload: %s", strerror(errno));
        if (r >= 0 && u.t.size == 0)
                r = upload_finish(&u, fd, &err);
        if (fd >= 0)
                close(fd);
        upload_close(&u);
        if (r < 0) {
                tus_fail(c, err);
                return;
        }
        _cleanup_free_ char *loc = xasprintf("/folders/_/upload?token=%s", http_query(c->req, "token"));
        http_add_header(c->req, "Location", loc);
        add_offset(c, "Upload-Offset", (uint64_t)st.st_size);
        http_reply(c->req, 201, NULL, "", 0);
}

void api_vfolder_tus_head(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct upload u;
        struct stat st;
        int r = upload_open(c, &u, &err);

        if (r >= 0 && fstatat(u.updir, u.id, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT)
                        st.st_size = 0; /* not made yet: the first PATCH makes it */
                else
                        r = tess_err(&err, EIO, "upload: %s", strerror(errno));
        }
        upload_close(&u);
        if (r < 0) {
                tus_fail(c, err);
                return;
        }
        add_offset(c, "Upload-Offset", (uint64_t)st.st_size);
        add_offset(c, "Upload-Length", (uint64_t)u.t.size);
        http_reply(c->req, 200, NULL, "", 0);
}

/* The token of a tus POST or PATCH, checked on the headers before any
 * byte of the body is read (route.admit): the MAC, the expiry, the
 * operation.  The folder and the rest are the handler's. */
void api_vfolder_tus_admit(struct api_ctx *c)
{
        const char *v = http_header(c->req, "Tus-Resumable");
        struct tess_error *err = NULL;
        unsigned char key[VF_TOKEN_KEY_LEN];
        struct vf_token t;
        int r;

        if (!v || !streq(v, TUS_VERSION)) {
                r = tess_err(&err, EPROTO, "Tus-Resumable: " TUS_VERSION " is required");
        } else {
                vf_token_key(c->m->master_key, key);
                r = vf_token_parse(key, http_query(c->req, "token"), now_usec() / USEC_PER_SEC, &t, &err);
                explicit_bzero(key, sizeof(key));
                if (r >= 0 && t.op != VFT_UPLOAD)
                        r = tess_err(&err, EACCES, "the token is not for this operation");
        }
        if (r < 0) {
                tus_headers(c);
                tus_fail(c, err);
        }
}

void api_vfolder_tus_patch(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        const char *ct = http_header(c->req, "Content-Type");
        const struct buf *body = http_body(c->req);
        struct upload u;
        uint64_t off = 0;
        struct stat st;
        int fd = -1, r = upload_open(c, &u, &err);

        if (r >= 0 && (!ct || strcasecmp(ct, "application/offset+octet-stream") != 0)) {
                upload_close(&u);
                api_problem(c, 415, "unsupported-media-type", "Content-Type must be application/offset+octet-stream");
                return;
        }
        if (r >= 0 && http_parse_u64(http_header(c->req, "Upload-Offset"), &off) < 0)
                r = tess_err(&err, EINVAL, "Upload-Offset: an offset in bytes is required");
        if (r >= 0 && (fd = openat(u.updir, u.id, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                if (errno != ENOENT)
                        r = tess_err(&err, EIO, "upload: %s", strerror(errno));
                else if (off != 0)
                        r = tess_err(&err, ENOENT, "no such upload: it starts at offset 0, or it is complete");
                else if ((r = upload_begin(c, &u, &fd, &err)) >= 0)
                        vf_give_to_work_user(fd, "");
        }
        if (r >= 0 && fstat(fd, &st) < 0)
                r = tess_err(&err, EIO, "upload: %s", strerror(errno));
        if (r >= 0 && (uint64_t)st.st_size != off) {
                close(fd);
                upload_close(&u);
                add_offset(c, "Upload-Offset", (uint64_t)st.st_size);
                api_problem(c, 409, "conflict", "Upload-Offset %llu is not the upload's offset, %lld",
                            (unsigned long long)off, (long long)st.st_size);
                return;
        }
        if (r >= 0 && off + body->len > (uint64_t)u.t.size)
                r = tess_err(&err, EINVAL, "the bytes go past Upload-Length (%lld)", (long long)u.t.size);
        for (size_t done = 0; r >= 0 && done < body->len;) {
                ssize_t n = pwrite(fd, body->data + done, body->len - done, (off_t)(off + done));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = vf_fs_error(&err, errno, "upload of", u.t.path);
                        if (ftruncate(fd, (off_t)off) < 0)
                                log_warn("upload %s: cannot cut back to %llu: %m", u.id, (unsigned long long)off);
                        break;
                }
                done += (size_t)n;
        }
        if (r >= 0)
                off += body->len;
        if (r >= 0 && off == (uint64_t)u.t.size)
                r = upload_finish(&u, fd, &err);
        if (fd >= 0)
                close(fd);
        upload_close(&u);
        if (r < 0) {
                tus_fail(c, err);
                return;
        }
        add_offset(c, "Upload-Offset", off);
        http_reply(c->req, 204, NULL, "", 0);
}

/* ---- downloads ---- */

/* Content-Disposition: attachment with the name, ASCII-safe and RFC 5987. */
static void disposition(struct api_ctx *c, const char *name)
{
        struct buf b = BUF_INIT;

        buf_puts(&b, "attachment; filename=\"");
        for (const char *p = name; *p; p++)
                buf_putc(&b, (unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '"' || *p == '\\' ? '_' : *p);
        buf_puts(&b, "\"; filename*=UTF-8''");
        buf_percent_encode(&b, name);
        http_add_header(c->req, "Content-Disposition", b.data);
        buf_release(&b);
}

void api_vfolder_download(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct vf_token t;
        struct vfolder f;
        struct stat st;
        int rootfd = -1, fd = -1;
        int r = token_folder(c, 1u << VFT_DOWNLOAD | 1u << VFT_ARCHIVE, &t, &f, &err);

        if (r >= 0)
                r = rootfd = vf_root_open(&f, &err);
        if (r >= 0 && (fd = beneath_open(rootfd, t.path, O_RDONLY | O_NONBLOCK, 0)) < 0)
                r = vf_fs_error(&err, -fd, "path", t.path);
        if (rootfd >= 0)
                close(rootfd);
        if (r >= 0 && fstat(fd, &st) < 0)
                r = tess_err(&err, EIO, "%s", strerror(errno));
        if (r >= 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
                r = tess_err(&err, EINVAL, "path '%.256s': neither a file nor a directory", t.path);
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                api_fail(c, err);
                return;
        }
        const char *slash = strrchr(t.path, '/'), *name = *t.path ? (slash ? slash + 1 : t.path) : f.name;
        if (S_ISDIR(st.st_mode) || t.op == VFT_ARCHIVE) {
                struct vf_archive *a = vf_archive_new(fd, name, &err);
                if (!a) {
                        api_fail(c, err);
                        return;
                }
                _cleanup_free_ char *tar = xasprintf("%s.tar", name);
                disposition(c, tar);
                http_reply_reader(c->req, 200, "application/x-tar", HTTP_SIZE_UNKNOWN, vf_archive_read, a,
                                  vf_archive_free);
                return;
        }
        uint64_t size = (uint64_t)st.st_size, start = 0, len = size;
        char cr[96];
        disposition(c, name);
        http_add_header(c->req, "Accept-Ranges", "bytes");
        switch (http_range_parse(http_header(c->req, "Range"), size, &start, &len)) {
        case HTTP_RANGE_UNSATISFIABLE:
                close(fd);
                snprintf(cr, sizeof(cr), "bytes */%llu", (unsigned long long)size);
                http_add_header(c->req, "Content-Range", cr);
                api_problem(c, 416, "range-not-satisfiable", "the range is past the file's %llu bytes",
                            (unsigned long long)size);
                return;
        case HTTP_RANGE_OK:
                snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu", (unsigned long long)start,
                         (unsigned long long)(start + len - 1), (unsigned long long)size);
                http_add_header(c->req, "Content-Range", cr);
                http_reply_fd_at(c->req, 206, "application/octet-stream", fd, start, len);
                return;
        case HTTP_RANGE_NONE:
                http_reply_fd(c->req, 200, "application/octet-stream", fd, size);
                return;
        }
}
