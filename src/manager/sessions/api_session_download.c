/* api_session_download.c - GET /session/{name}/download {files: [PATH...]}
 * (Backend.AI's `session download`): files and directories of a running
 * session's home directory, as multipart/mixed with one part per path,
 * each part a tar archive (application/x-tar) holding that path under its
 * last name ("work" for the home directory itself), directories whole.
 *
 * Paths are relative to the home directory or under /home/work, without
 * "..".  The bytes come through the kernel's agent and runner as in
 * download_single (the runner reads as the session's user and never
 * follows a symbolic link; links inside a directory are kept as links
 * only by name in the listing, so they are left out).  The whole answer
 * is built in memory: at most DOWNLOAD_MAX bytes and DOWNLOAD_ENTRIES_MAX
 * entries (413 beyond; a folder is the way to move more). */
#include "common/compat.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "manager/agent_link/agent_call.h"
#include "manager/api/api.h"
#include "manager/http/http.h"
#include "manager/sessions/api_session.h"

#define DOWNLOAD_MAX         (256u << 20)
#define DOWNLOAD_ENTRIES_MAX 10000
#define DOWNLOAD_PATHS_MAX   256
#define DOWNLOAD_DEPTH_MAX   64
#define DOWNLOAD_TIMEOUT_S   120

struct download {
        struct session_target t;
        char **paths; /* relative to the home directory; "" is the home directory */
        size_t n;
        char boundary[40];
        struct buf body;  /* the multipart answer */
        struct buf tar;   /* the part being made */
        size_t entries;   /* in all parts */
};

static void download_free(void *data)
{
        struct download *d = data;
        for (size_t i = 0; i < d->n; i++)
                free(d->paths[i]);
        free(d->paths);
        buf_release(&d->body);
        buf_release(&d->tar);
        free(d);
}

/* A failure of ours, answered by agent_call_fail with status. */
static int fail(struct agent_call *call, long status, int code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int fail(struct agent_call *call, long status, int code, const char *fmt, ...)
{
        va_list ap;
        char msg[512];

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        call->status = status;
        call->err = tess_error_free(call->err);
        return tess_err(&call->err, code, "%s", msg);
}

static la_ssize_t tar_write(struct archive *a UNUSED, void *data, const void *p, size_t len)
{
        struct download *d = data;
        buf_append(&d->tar, p, len);
        return (la_ssize_t)len;
}

static bool over_budget(const struct download *d, size_t more)
{
        return d->body.len + d->tar.len + more > DOWNLOAD_MAX;
}

/* The runner's listing of dir ("" the home directory): its entries. */
static json_t *list_dir(struct agent_call *call, const char *dir)
{
        struct download *d = call->data;
        _cleanup_free_ char *target = session_kernel_target(&d->t, "list", *dir ? dir : NULL);

        if (agent_call_request(call, "GET", target, NULL, 0, NULL, DOWNLOAD_TIMEOUT_S) < 0)
                return NULL;
        json_t *j = json_loadb(call->answer.data, call->answer.len, 0, NULL);
        if (!json_is_array(json_object_get(j, "entries"))) {
                json_decref(j);
                fail(call, 502, EPROTO, "the agent's listing of '%s' is not one", dir);
                return NULL;
        }
        if (json_is_true(json_object_get(j, "truncated"))) {
                json_decref(j);
                fail(call, 413, EFBIG, "directory '%s' holds too many entries to download; use a folder", dir);
                return NULL;
        }
        return j;
}

static int add_header(struct agent_call *call, struct archive *a, const char *name, mode_t kind, const json_t *entry,
                      size_t size)
{
        struct download *d = call->data;
        struct archive_entry *e = archive_entry_new();

        if (++d->entries > DOWNLOAD_ENTRIES_MAX)
                return fail(call, 413, EFBIG, "'%s': too many files to download at once; use a folder", name);
        archive_entry_set_pathname(e, name);
        archive_entry_set_mode(e, kind | (mode_t)(json_integer_value(json_object_get(entry, "perm")) & 07777));
        archive_entry_set_mtime(e, (time_t)json_integer_value(json_object_get(entry, "mtime")), 0);
        archive_entry_set_size(e, (la_int64_t)size);
        int r = archive_write_header(a, e);
        archive_entry_free(e);
        if (r != ARCHIVE_OK)
                return fail(call, 500, EIO, "archiving: %s", archive_error_string(a));
        return 0;
}

static int add_path(struct agent_call *call, struct archive *a, const char *path, const char *name,
                    const json_t *entry, int depth);

static int add_file(struct agent_call *call, struct archive *a, const char *path, const char *name,
                    const json_t *entry)
{
        struct download *d = call->data;
        _cleanup_free_ char *target = session_kernel_target(&d->t, "files", path);

        if (over_budget(d, (size_t)json_integer_value(json_object_get(entry, "size"))))
                return fail(call, 413, EFBIG, "'%s' and what came before are too large to download; use a folder",
                            path);
        if (agent_call_request(call, "GET", target, NULL, 0, NULL, DOWNLOAD_TIMEOUT_S) < 0)
                return -1;
        if (over_budget(d, call->answer.len))
                return fail(call, 413, EFBIG, "'%s' and what came before are too large to download; use a folder",
                            path);
        if (add_header(call, a, name, S_IFREG, entry, call->answer.len) < 0)
                return -1;
        if (call->answer.len && archive_write_data(a, call->answer.data, call->answer.len) < 0)
                return fail(call, 500, EIO, "archiving: %s", archive_error_string(a));
        return 0;
}

static int add_dir(struct agent_call *call, struct archive *a, const char *path, const char *name,
                   const json_t *entry, int depth)
{
        size_t i;
        json_t *e;

        if (depth > DOWNLOAD_DEPTH_MAX)
                return fail(call, 413, EFBIG, "'%s' is nested too deep to download; use a folder", path);
        if (add_header(call, a, name, S_IFDIR, entry, 0) < 0)
                return -1;
        json_t *list = list_dir(call, path);
        if (!list)
                return -1;
        int r = 0;
        json_array_foreach(json_object_get(list, "entries"), i, e) {
                const char *child = json_string_value(json_object_get(e, "name"));
                if (!child)
                        continue;
                _cleanup_free_ char *cpath = *path ? xasprintf("%s/%s", path, child) : xstrdup(child);
                _cleanup_free_ char *cname = xasprintf("%s/%s", name, child);
                r = add_path(call, a, cpath, cname, e, depth + 1);
                if (r < 0)
                        break;
        }
        json_decref(list);
        return r;
}

/* One listing entry: files and directories; links and the rest are left
 * out (the runner does not follow them). */
static int add_path(struct agent_call *call, struct archive *a, const char *path, const char *name,
                    const json_t *entry, int depth)
{
        const char *type = json_string_value(json_object_get(entry, "type"));

        if (streq(type, "file"))
                return add_file(call, a, path, name, entry);
        if (streq(type, "dir"))
                return add_dir(call, a, path, name, entry, depth);
        return 0;
}

/* The entry of path in its parent's listing (a new reference), or NULL
 * with call->err set.  The home directory is a directory of its own. */
static json_t *find_entry(struct agent_call *call, const char *path)
{
        if (!*path)
                return json_pack("{s:s, s:s, s:i}", "name", "work", "type", "dir", "perm", 0755);
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *parent = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup("");
        const char *last = slash ? slash + 1 : path;
        json_t *list = list_dir(call, parent), *e, *found = NULL;
        size_t i;

        if (!list) {
                if (call->status == 404 || call->status == 400)
                        fail(call, 404, ENOENT, "'%s' does not exist in the session", path);
                return NULL;
        }
        json_array_foreach(json_object_get(list, "entries"), i, e) {
                if (streq(json_string_value(json_object_get(e, "name")), last)) {
                        found = json_incref(e);
                        break;
                }
        }
        json_decref(list);
        if (!found)
                fail(call, 404, ENOENT, "'%s' does not exist in the session", path);
        else if (!streq(json_string_value(json_object_get(found, "type")), "file") &&
                 !streq(json_string_value(json_object_get(found, "type")), "dir"))
                found = (json_decref(found), fail(call, 400, EINVAL, "'%s' is neither a file nor a directory", path),
                         NULL);
        return found;
}

/* One part: the tar of path. */
static int add_part(struct agent_call *call, const char *path)
{
        struct download *d = call->data;
        json_t *entry = find_entry(call, path);

        if (!entry)
                return -1;
        const char *name = json_string_value(json_object_get(entry, "name"));
        struct archive *a = archive_write_new();
        buf_reset(&d->tar);
        int r = archive_write_set_format_pax_restricted(a) == ARCHIVE_OK &&
                                archive_write_set_bytes_in_last_block(a, 1) == ARCHIVE_OK &&
                                archive_write_open(a, d, NULL, tar_write, NULL) == ARCHIVE_OK
                        ? 0
                        : fail(call, 500, EIO, "archiving: %s", archive_error_string(a));
        if (r == 0)
                r = add_path(call, a, path, name, entry, 0);
        if (r == 0 && archive_write_close(a) != ARCHIVE_OK)
                r = fail(call, 500, EIO, "archiving: %s", archive_error_string(a));
        archive_write_free(a);
        if (r == 0) {
                buf_printf(&d->body,
                           "--%s\r\nContent-Type: application/x-tar\r\nContent-Disposition: attachment; "
                           "filename=\"%s.tar\"\r\nContent-Length: %zu\r\n\r\n",
                           d->boundary, name, d->tar.len);
                buf_append(&d->body, d->tar.data, d->tar.len);
                buf_puts(&d->body, "\r\n");
        }
        json_decref(entry);
        return r;
}

static void download_work(struct agent_call *call)
{
        struct download *d = call->data;

        for (size_t i = 0; i < d->n; i++)
                if (add_part(call, d->paths[i]) < 0)
                        return;
        buf_printf(&d->body, "--%s--\r\n", d->boundary);
        call->status = 200;
}

static void download_done(struct api_ctx *c, struct agent_call *call)
{
        struct download *d = call->data;

        if (call->err)
                return agent_call_fail(c, call);
        _cleanup_free_ char *type = xasprintf("multipart/mixed; boundary=%s", d->boundary);
        size_t len;
        char *body = buf_detach(&d->body, &len);
        http_reply_take(c->req, 200, type, body, len);
}

/* The paths of {files: [...]}, relative to the home directory. */
static int download_paths(const json_t *body, struct download *d, struct tess_error **err)
{
        const json_t *files = json_object_get(body, "files");
        const json_t *f;
        size_t i;

        if (!json_is_array(files) || json_array_size(files) == 0)
                return tess_err(err, EINVAL, "files: the list of paths to download is required (a JSON body)");
        if (json_array_size(files) > DOWNLOAD_PATHS_MAX)
                return tess_err(err, EINVAL, "files: at most %d paths at once", DOWNLOAD_PATHS_MAX);
        d->paths = xcalloc(json_array_size(files), sizeof(*d->paths));
        json_array_foreach(files, i, f) {
                const char *p = session_home_relative(json_string_value(f));
                if (!p)
                        return tess_err(err, EINVAL,
                                        "files[%zu] must be a path in the home directory (relative, or under "
                                        "/home/work), without '..'",
                                        i);
                char *copy = xstrdup(p);
                for (size_t n = strlen(copy); n > 0 && copy[n - 1] == '/'; n--)
                        copy[n - 1] = '\0'; /* "dir/" is dir */
                d->paths[d->n++] = copy;
        }
        return 0;
}

void api_session_download(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct download *d = xcalloc(1, sizeof(*d));

        d->body = (struct buf)BUF_INIT;
        d->tar = (struct buf)BUF_INIT;
        if (download_paths(c->body, d, &err) < 0) {
                download_free(d);
                return api_fail(c, err);
        }
        if (!api_session_target(c, api_owner_access_key(c), &d->t))
                return download_free(d);
        memcpy(d->boundary, "tessera-", 8);
        random_string(d->boundary + 8, 24, "0123456789abcdefghijklmnopqrstuvwxyz");
        api_audit_target(c, "session:%s", c->param[0]);
        agent_call_start(c, d->t.agent, d->t.address, download_work, download_done, d, download_free);
}
