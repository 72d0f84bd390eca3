/* vfolder_xfer.c - uploads (tus) and downloads (Range) of folder files
 * (see vfolder_xfer.h). */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/progress.h"
#include "cli/vfolder_xfer.h"

#define TUS_VERSION "Tus-Resumable: 1.0.0"
#define CHUNK_MIN ((int64_t)64 << 10)
#define RETRIES 3

char *vfolder_path(const char *folder, const char *suffix)
{
        struct buf b = BUF_INIT;

        buf_puts(&b, "/folders/");
        buf_percent_encode(&b, folder);
        buf_puts(&b, suffix);
        return buf_detach(&b, NULL);
}

/* ---- what the folder holds ---- */

/* The listing of one remote directory, kept while files of it are sent. */
struct remote_dir {
        char *path;
        json_t *items; /* NULL: the directory does not exist */
};

static void remote_dir_release(struct remote_dir *d)
{
        free(d->path);
        json_decref(d->items);
        *d = (struct remote_dir){ 0 };
}

static int remote_dir_load(const char *folder, const char *dir, struct remote_dir *d, struct tess_error **err)
{
        _cleanup_free_ char *base = vfolder_path(folder, "/files?path=");
        struct buf path = BUF_INIT;
        struct client_response resp = CLIENT_RESPONSE_INIT;
        int r;

        if (d->path && streq(d->path, dir))
                return 0;
        remote_dir_release(d);
        buf_puts(&path, base);
        buf_percent_encode(&path, dir);
        r = client_send("GET", path.data, NULL, 0, CLIENT_SIGNED, &resp, err);
        if (r == 0 && resp.status == 404) {
                d->path = xstrdup(dir); /* not there yet */
        } else if (r == 0 && resp.status / 100 != 2) {
                r = client_status_error(&resp, err);
        } else if (r == 0) {
                json_t *j = json_loadb(resp.body.data, resp.body.len, 0, NULL);
                d->items = json_incref(json_object_get(j, "items"));
                json_decref(j);
                d->path = xstrdup(dir);
        }
        buf_release(&path);
        client_response_release(&resp);
        return r;
}

static const json_t *remote_entry(const struct remote_dir *d, const char *name)
{
        size_t i;
        json_t *it;

        json_array_foreach(d->items, i, it)
                if (streq(json_string_value(json_object_get(it, "name")) ?: "", name))
                        return it;
        return NULL;
}

static bool entry_is_dir(const json_t *e)
{
        const char *t = json_string_value(json_object_get(e, "type"));
        return t && (streq(t, "DIRECTORY") || streq(t, "directory") || streq(t, "dir"));
}

/* "a/b" + "c" -> "a/b/c"; "" + "c" -> "c" */
static char *join(const char *dir, const char *name)
{
        return *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
}

/* ---- tokens ---- */

/* POST request-upload / request-download; the URL to use, token included. */
static int request_token(const char *folder, const char *what, json_t *body, char **ret_url, struct tess_error **err)
{
        _cleanup_free_ char *path = vfolder_path(folder, what);
        json_t *ans = NULL;
        int r = client_json("POST", path, body, CLIENT_SIGNED, &ans, err);

        json_decref(body);
        if (r < 0)
                return r;
        const char *token = json_string_value(json_object_get(ans, "token")),
                   *url = json_string_value(json_object_get(ans, "url"));
        if (!token || !url) {
                json_decref(ans);
                return tess_err(err, EIO, "the manager's answer to %s has no token and url", what + 1);
        }
        struct buf b = BUF_INIT;
        buf_puts(&b, url);
        if (!strstr(url, "token=")) {
                buf_puts(&b, strchr(url, '?') ? "&token=" : "?token=");
                buf_percent_encode(&b, token);
        }
        *ret_url = buf_detach(&b, NULL);
        json_decref(ans);
        return 0;
}

/* ---- upload ---- */

struct upload {
        const char *folder;
        bool force;
        int64_t chunk;
        struct progress prog;
        int64_t base; /* bytes of files finished before the current one */
        int64_t at;   /* offset of the current chunk */
        const char *label;
        struct remote_dir dir;
        int skipped, sent;
};

static void on_upload_progress(void *arg, int64_t sent, int64_t received UNUSED)
{
        struct upload *u = arg;
        progress_update(&u->prog, u->base + u->at + sent, u->label);
}

static int64_t header_int(const struct client_response *r, const char *name)
{
        _cleanup_free_ char *v = client_response_header(r, name);
        char *end;

        if (!v)
                return -1;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        return errno || end == v || n < 0 ? -1 : (int64_t)n;
}

/* Where the manager's copy stands: HEAD, then POST to create it when it
 * has none.  *ret_offset: bytes it has. */
static int tus_begin(const char *url, int64_t size, int64_t *ret_offset, struct tess_error **err)
{
        struct client_response resp = CLIENT_RESPONSE_INIT;
        const char *head_hdrs[] = { TUS_VERSION, NULL };
        struct client_transfer t = { .headers = head_hdrs, .out_fd = -1 };
        int r = client_transfer("HEAD", url, &t, &resp, err);

        if (r == 0 && resp.status / 100 == 2 && (*ret_offset = header_int(&resp, "Upload-Offset")) >= 0) {
                client_response_release(&resp);
                return 0;
        }
        client_response_release(&resp);
        if (r < 0)
                return r;
        _cleanup_free_ char *length = xasprintf("Upload-Length: %lld", (long long)size);
        const char *create_hdrs[] = { TUS_VERSION, length, NULL };
        t.headers = create_hdrs;
        r = client_transfer("POST", url, &t, &resp, err);
        if (r == 0 && resp.status / 100 != 2)
                r = client_status_error(&resp, err);
        *ret_offset = 0;
        client_response_release(&resp);
        return r;
}

static int read_at(int fd, char *buf, int64_t n, int64_t offset, const char *name, struct tess_error **err)
{
        for (int64_t done = 0; done < n;) {
                ssize_t got = pread(fd, buf + done, (size_t)(n - done), offset + done);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0)
                        return tess_err(err, EIO, "reading '%s': %s", name,
                                        got < 0 ? strerror(errno) : "it shrank while being uploaded");
                done += got;
        }
        return 0;
}

/* PATCH chunks from the manager's offset to the end. */
static int tus_send(struct upload *u, const char *url, int fd, int64_t size, int64_t offset, const char *name,
                    struct tess_error **err)
{
        _cleanup_free_ char *buf = NULL;
        int retries = 0, r = 0;

        do {
                int64_t n = size - offset < u->chunk ? size - offset : u->chunk;
                struct client_response resp = CLIENT_RESPONSE_INIT;
                _cleanup_free_ char *at = xasprintf("Upload-Offset: %lld", (long long)offset);
                const char *hdrs[] = { TUS_VERSION, at, NULL };
                struct client_transfer t = { .headers = hdrs, .out_fd = -1, .progress = on_upload_progress, .arg = u };

                buf = xrealloc(buf, (size_t)n + 1);
                r = read_at(fd, buf, n, offset, name, err);
                if (r < 0)
                        return r;
                t.body = buf;
                t.body_len = (size_t)n;
                u->at = offset;
                r = client_transfer("PATCH", url, &t, &resp, err);
                if (r == 0 && resp.status == 413 && u->chunk > CHUNK_MIN) {
                        u->chunk /= 2; /* larger than the manager's max_upload */
                } else if (r == 0 && resp.status == 409 && retries++ < RETRIES) {
                        client_response_release(&resp); /* another upload moved it: ask where */
                        r = tus_begin(url, size, &offset, err);
                } else if (r == 0 && resp.status / 100 != 2) {
                        r = client_status_error(&resp, err);
                } else if (r == 0) {
                        int64_t next = header_int(&resp, "Upload-Offset");
                        offset = next >= 0 ? next : offset + n;
                }
                client_response_release(&resp);
        } while (r == 0 && offset < size);
        return r;
}

static int upload_file(struct upload *u, const char *local, const char *remote_dir, const char *name,
                       struct tess_error **err)
{
        _cleanup_close_ int fd = open(local, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *remote = join(remote_dir, name), *url = NULL;
        struct stat st;
        int64_t offset = 0;
        int r;

        if (fd < 0 || fstat(fd, &st) < 0)
                return tess_err(err, errno, "cannot read '%s': %s", local, strerror(errno));
        if (!u->force) {
                r = remote_dir_load(u->folder, remote_dir, &u->dir, err);
                if (r < 0)
                        return r;
                const json_t *e = remote_entry(&u->dir, name);
                if (e && !entry_is_dir(e) && json_integer_value(json_object_get(e, "size")) == st.st_size) {
                        u->skipped++;
                        u->base += st.st_size;
                        return 0;
                }
        }
        u->label = local;
        r = request_token(u->folder, "/request-upload",
                          json_pack("{s:s, s:I}", "path", remote, "size", (json_int_t)st.st_size), &url, err);
        if (r >= 0)
                r = tus_begin(url, st.st_size, &offset, err);
        if (r >= 0 && (offset < st.st_size || st.st_size == 0))
                r = tus_send(u, url, fd, st.st_size, offset, local, err);
        if (r < 0)
                return tess_err_wrap(err, "uploading '%s'", local);
        u->base += st.st_size;
        u->at = 0;
        u->sent++;
        progress_update(&u->prog, u->base, local);
        return 0;
}

/* Bytes of the regular files under path (the path itself if a file). */
static int64_t local_size(const char *path)
{
        struct stat st;
        int64_t total = 0;

        if (lstat(path, &st) < 0)
                return 0;
        if (S_ISREG(st.st_mode))
                return st.st_size;
        if (!S_ISDIR(st.st_mode))
                return 0;
        DIR *d = opendir(path);
        for (struct dirent *e; d && (e = readdir(d));) {
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                _cleanup_free_ char *sub = xasprintf("%s/%s", path, e->d_name);
                total += local_size(sub);
        }
        if (d)
                closedir(d);
        return total;
}

static int compare_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* local (a file or a directory) as remote_dir/name; symbolic links and
 * special files are skipped with a note. */
static int upload_path(struct upload *u, const char *local, const char *remote_dir, const char *name,
                       struct tess_error **err)
{
        struct stat st;

        if (lstat(local, &st) < 0)
                return tess_err(err, errno, "cannot read '%s': %s", local, strerror(errno));
        if (S_ISREG(st.st_mode))
                return upload_file(u, local, remote_dir, name, err);
        if (!S_ISDIR(st.st_mode)) {
                fprintf(stderr, "skipped '%s': not a regular file or directory\n", local);
                return 0;
        }
        _cleanup_free_ char *sub_remote = join(remote_dir, name);
        DIR *d = opendir(local);
        char **names = NULL;
        size_t n = 0;
        int r = 0;

        if (!d)
                return tess_err(err, errno, "cannot read '%s': %s", local, strerror(errno));
        for (struct dirent *e; (e = readdir(d));) {
                if (streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                names = xrealloc(names, (n + 1) * sizeof(*names));
                names[n++] = xstrdup(e->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof(*names), compare_names);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *sub_local = xasprintf("%s/%s", local, names[i]);
                if (r == 0)
                        r = upload_path(u, sub_local, sub_remote, names[i], err);
                free(names[i]);
        }
        free(names);
        return r;
}

int vfx_upload(const char *folder, const char *const *local, int n, const char *dest, bool force, int64_t chunk,
               struct tess_error **err)
{
        struct upload u = { .folder = folder, .force = force, .chunk = chunk };
        int64_t total = 0;
        int r = 0;

        while (*dest == '/')
                dest++;
        for (int i = 0; i < n; i++)
                total += local_size(local[i]);
        progress_start(&u.prog, total);
        for (int i = 0; i < n && r == 0; i++) {
                _cleanup_free_ char *copy = xstrdup(local[i]);
                size_t len = strlen(copy);
                while (len > 1 && copy[len - 1] == '/')
                        copy[--len] = '\0';
                r = upload_path(&u, local[i], dest, basename(copy), err);
        }
        progress_end(&u.prog);
        remote_dir_release(&u.dir);
        if (r == 0 && !arg_json)
                printf("uploaded %d file%s%s", u.sent, u.sent == 1 ? "" : "s",
                       u.skipped ? "" : "\n");
        if (r == 0 && !arg_json && u.skipped)
                printf(", skipped %d already there (same size; --force sends them again)\n", u.skipped);
        return r;
}

/* ---- download ---- */

struct download {
        struct progress prog;
        int64_t base;
        const char *label;
};

static void on_download_progress(void *arg, int64_t sent UNUSED, int64_t received)
{
        struct download *d = arg;
        progress_update(&d->prog, d->base + received, d->label);
}

int vfx_download(const char *folder, const char *remote, const char *local, struct tess_error **err)
{
        _cleanup_free_ char *clean = xstrdup(remote), *url = NULL, *target = NULL, *part = NULL, *range = NULL;
        struct remote_dir dir = { 0 };
        struct download d = { 0 };
        const json_t *e = NULL;
        bool is_dir;
        int64_t size = 0;
        int r;

        size_t len = strlen(clean);
        while (len > 0 && clean[len - 1] == '/')
                clean[--len] = '\0';
        char *slash = strrchr(clean, '/');
        const char *name = slash ? slash + 1 : clean;
        _cleanup_free_ char *parent = slash ? xstrndup(clean, (size_t)(slash - clean)) : xstrdup("");
        is_dir = !*name;
        if (!is_dir) {
                r = remote_dir_load(folder, parent, &dir, err);
                if (r < 0)
                        return r;
                e = remote_entry(&dir, name);
                if (!e) {
                        remote_dir_release(&dir);
                        return tess_err(err, ENOENT, "folder '%s' has no '%s'", folder, remote);
                }
                is_dir = entry_is_dir(e);
                size = json_integer_value(json_object_get(e, "size"));
        }
        remote_dir_release(&dir);
        target = local ? xstrdup(local) : is_dir ? xasprintf("%s.tar", *name ? name : folder) : xstrdup(name);
        part = xasprintf("%s.part", target);
        r = request_token(folder, "/request-download",
                          json_pack("{s:s, s:b}", "path", clean, "archive", is_dir), &url, err);
        if (r < 0)
                return r;

        _cleanup_close_ int fd = open(part, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return tess_err(err, errno, "cannot write '%s': %s", part, strerror(errno));
        /* an archive is made anew each time: no resuming it */
        int64_t have = is_dir || st.st_size > size ? 0 : st.st_size;
        if (ftruncate(fd, have) < 0 || lseek(fd, have, SEEK_SET) < 0)
                return tess_err(err, errno, "cannot write '%s': %s", part, strerror(errno));
        range = xasprintf("Range: bytes=%lld-", (long long)have);
        const char *hdrs[] = { range, NULL };
        struct client_transfer t = { .headers = have ? hdrs : NULL, .out_fd = fd, .progress = on_download_progress,
                                     .arg = &d };
        struct client_response resp = CLIENT_RESPONSE_INIT;
        d.label = remote;
        d.base = have;
        progress_start(&d.prog, size);
        if (have && have == size) {
                resp.status = 206; /* all there already */
                r = 0;
        } else {
                r = client_transfer("GET", url, &t, &resp, err);
        }
        if (r == 0 && resp.status == 200 && have) {
                /* the manager sent it all after what we had: start over next time */
                r = tess_err(err, EIO, "the manager ignored the range request: run the download again");
                if (ftruncate(fd, 0) < 0)
                        unlink(part);
        } else if (r == 0 && resp.status / 100 != 2) {
                r = client_status_error(&resp, err);
        }
        client_response_release(&resp);
        progress_end(&d.prog);
        if (r == 0 && fsync(fd) < 0)
                r = tess_err(err, errno, "cannot write '%s': %s", part, strerror(errno));
        if (r == 0 && rename(part, target) < 0)
                r = tess_err(err, errno, "cannot rename '%s' to '%s': %s", part, target, strerror(errno));
        if (r == 0 && !arg_json)
                printf("downloaded '%s' to '%s'\n", remote, target);
        return r;
}
