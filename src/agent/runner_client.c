/* runner_client.c - see runner_client.h.  One connection per request:
 * connect (checking who listens), send the request line (and an upload's
 * bytes, stopping early if the runner answers first), read the answer line
 * with any passed fd, then a download's bytes; every wait bounded by the
 * call's deadline. */
#include "common/compat.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>

#include "common/fs.h"
#include "common/timeutil.h"
#include "agent/runner_client.h"

#define CHUNK 65536

struct rconn {
        int fd;
        int64_t deadline; /* monotonic usec */
        struct buf in;    /* bytes read, the answer line first */
        int passed_fd;
};

static int rconn_close(struct rconn *c)
{
        if (c->fd >= 0)
                close(c->fd);
        if (c->passed_fd >= 0)
                close(c->passed_fd);
        c->fd = c->passed_fd = -1;
        buf_release(&c->in);
        return 0;
}

/* poll for events until the deadline: 1 ready, or -ETIMEDOUT / -errno. */
static int wait_fd(struct rconn *c, short events, short *ret_revents)
{
        for (;;) {
                int64_t left = c->deadline - monotonic_usec();
                struct pollfd p = { c->fd, events, 0 };
                int r;

                if (left <= 0)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int)((left + 999) / 1000));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r > 0) {
                        *ret_revents = p.revents;
                        return 1;
                }
        }
}

static int rconn_open(const struct runner_client *rc, int64_t wait_ms, struct rconn *c, struct tess_error **err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int64_t timeout = rc->timeout_ms > 0 ? rc->timeout_ms : RUNNER_CLIENT_TIMEOUT_MS;
        size_t len = strlen(rc->socket_path);

        *c = (struct rconn){ .fd = -1, .passed_fd = -1, .in = BUF_INIT };
        c->deadline = monotonic_usec() + (timeout + (wait_ms > 0 ? wait_ms : 0)) * USEC_PER_MSEC;
        int dirfd = -1;
        if (len < sizeof(sa.sun_path)) {
                memcpy(sa.sun_path, rc->socket_path, len + 1);
        } else {
                /* too long for sun_path: reach it through its directory's fd */
                const char *slash = strrchr(rc->socket_path, '/');
                _cleanup_free_ char *dir = slash ? xstrndup(rc->socket_path, (size_t)(slash - rc->socket_path)) : NULL;
                dirfd = dir ? open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
                if (dirfd < 0 || (size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd,
                                                  slash + 1) >= sizeof(sa.sun_path)) {
                        if (dirfd >= 0)
                                close(dirfd);
                        return tess_err(err, ENAMETOOLONG, "runner socket path '%s' is too long", rc->socket_path);
                }
        }
        c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int r = c->fd < 0 ? -1 : connect(c->fd, (struct sockaddr *)&sa, sizeof(sa));
        int e = errno;
        if (dirfd >= 0)
                close(dirfd);
        if (c->fd < 0)
                return tess_err(err, e, "socket: %s", strerror(e));
        if (r < 0) {
                rconn_close(c);
                return tess_err(err, e, "connecting to the runner at '%s': %s", rc->socket_path, strerror(e));
        }
        if (rc->runner_pid > 0) {
                struct ucred cr;
                socklen_t crlen = sizeof(cr);
                if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0 || cr.pid != rc->runner_pid) {
                        int pid = crlen == sizeof(cr) ? (int)cr.pid : -1;
                        rconn_close(c);
                        return tess_err(err, EPERM, "'%s' is served by pid %d, not the runner (pid %d)",
                                        rc->socket_path, pid, (int)rc->runner_pid);
                }
        }
        return 0;
}

/* Send n bytes.  With stop_on_answer, return 1 as soon as the runner has
 * something to say (an early error) instead of sending on. */
static int rconn_send(struct rconn *c, const void *p, size_t n, bool stop_on_answer, struct tess_error **err)
{
        while (n > 0) {
                short rev = 0;
                int r = wait_fd(c, POLLOUT | (stop_on_answer ? POLLIN : 0), &rev);
                if (r < 0)
                        return tess_err(err, -r, "sending to the runner: %s", strerror(-r));
                if (stop_on_answer && (rev & POLLIN))
                        return 1;
                ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
                if (w < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (w < 0) {
                        /* the runner may have answered and closed: read that */
                        if (stop_on_answer && (errno == EPIPE || errno == ECONNRESET))
                                return 1;
                        return tess_err(err, errno, "sending to the runner: %s", strerror(errno));
                }
                p = (const char *)p + w;
                n -= (size_t)w;
        }
        return 0;
}

/* Read more bytes into c->in (keeping the first fd passed); 0 at EOF. */
static int rconn_recv(struct rconn *c, struct tess_error **err)
{
        union {
                char buf[CMSG_SPACE(4 * sizeof(int))];
                struct cmsghdr align;
        } u;
        for (;;) {
                struct iovec iov;
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                                     .msg_controllen = sizeof(u.buf) };
                short rev;
                ssize_t n;
                int r = wait_fd(c, POLLIN, &rev);

                if (r < 0)
                        return tess_err(err, -r, "waiting for the runner: %s", strerror(-r));
                buf_grow(&c->in, CHUNK);
                iov = (struct iovec){ c->in.data + c->in.len, CHUNK };
                n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (n < 0)
                        return tess_err(err, errno, "reading from the runner: %s", strerror(errno));
                for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
                        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
                                continue;
                        size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < nfd; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
                                if (c->passed_fd < 0)
                                        c->passed_fd = fd;
                                else
                                        close(fd);
                        }
                }
                c->in.len += (size_t)n;
                c->in.data[c->in.len] = '\0';
                return n > 0 ? 1 : 0;
        }
}

/* The answer line as an object; c->in keeps the bytes after it. */
static int rconn_answer(struct rconn *c, int64_t id, json_t **ret, struct tess_error **err)
{
        char *nl;
        size_t scanned = 0;
        json_t *ans, *ok;
        json_error_t je;
        int r;

        while (!(nl = memchr(c->in.data + scanned, '\n', c->in.len - scanned))) {
                scanned = c->in.len;
                if (c->in.len > RUNNER_ANSWER_MAX)
                        return tess_err(err, EPROTO, "the runner's answer is longer than %u bytes", RUNNER_ANSWER_MAX);
                r = rconn_recv(c, err);
                if (r < 0)
                        return r;
                if (r == 0)
                        return tess_err(err, EPROTO, "the runner closed the connection without an answer");
        }
        ans = json_loadb(c->in.data, (size_t)(nl - c->in.data), 0, &je);
        memmove(c->in.data, nl + 1, c->in.len - (size_t)(nl + 1 - c->in.data));
        c->in.len -= (size_t)(nl + 1 - c->in.data);
        c->in.data[c->in.len] = '\0';
        if (!json_is_object(ans)) {
                json_decref(ans);
                return tess_err(err, EPROTO, "the runner's answer is not a JSON object");
        }
        ok = json_object_get(ans, "ok");
        /* a refusal may come before the runner read the id */
        if (!json_is_boolean(ok) || (json_integer_value(json_object_get(ans, "id")) != id &&
                                     !(json_is_false(ok) && !json_object_get(ans, "id")))) {
                json_decref(ans);
                return tess_err(err, EPROTO, "the runner's answer does not match the request");
        }
        if (!json_is_true(ok)) {
                json_int_t e = json_integer_value(json_object_get(ans, "errno"));
                const char *msg = json_string_value(json_object_get(ans, "error"));
                r = tess_err(err, e > 0 && e < 4096 ? (int)e : EIO, "runner: %s", msg ? msg : "error");
                json_decref(ans);
                return r;
        }
        *ret = ans;
        return 0;
}

static int64_t next_id(void)
{
        static int64_t id;
        return ++id;
}

/* Send the request line (plus payload from fd or data), read the answer. */
static int transact(const struct runner_client *rc, json_t *req, int64_t wait_ms, int payload_fd, const void *data,
                    int64_t size, struct rconn *c, json_t **ret, struct tess_error **err)
{
        int64_t id = next_id();
        char *line;
        int r;

        json_object_set_new(req, "id", json_integer(id));
        line = json_dumps(req, JSON_COMPACT);
        if (!line)
                return tess_err(err, EINVAL, "cannot encode the request (invalid UTF-8?)");
        r = rconn_open(rc, wait_ms, c, err);
        if (r < 0) {
                free(line);
                return r;
        }
        size_t n = strlen(line);
        line[n] = '\n'; /* json_dumps's NUL becomes the line end */
        r = rconn_send(c, line, n + 1, size >= 0, err);
        free(line);
        if (r == 0 && data)
                r = rconn_send(c, data, (size_t)size, true, err);
        for (int64_t left = size; r == 0 && payload_fd >= 0 && left > 0;) {
                char chunk[CHUNK];
                ssize_t got = read(payload_fd, chunk, left < CHUNK ? (size_t)left : CHUNK);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0) {
                        rconn_close(c);
                        return tess_err(err, got < 0 ? errno : EIO, "reading the upload: %s",
                                        got < 0 ? strerror(errno) : "shorter than its size");
                }
                r = rconn_send(c, chunk, (size_t)got, true, err);
                left -= got;
        }
        if (r >= 0)
                r = rconn_answer(c, id, ret, err);
        if (r < 0)
                rconn_close(c);
        return r;
}

int runner_request(const struct runner_client *rc, json_t *req, int64_t wait_ms, json_t **ret, int *ret_fd,
                   struct tess_error **err)
{
        struct rconn c;
        int r = transact(rc, req, wait_ms, -1, NULL, -1, &c, ret, err);

        if (r < 0)
                return r;
        if (ret_fd)
                *ret_fd = TAKE_FD(c.passed_fd);
        rconn_close(&c);
        return 0;
}

static int simple(const struct runner_client *rc, json_t *req, int64_t wait_ms, json_t **ret, struct tess_error **err)
{
        json_t *ans = NULL;
        int r = runner_request(rc, req, wait_ms, &ans, NULL, err);

        json_decref(req);
        if (r < 0)
                return r;
        if (ret)
                *ret = ans;
        else
                json_decref(ans);
        return 0;
}

int runner_ping(const struct runner_client *rc, json_t **ret, struct tess_error **err)
{
        return simple(rc, json_pack("{s:s}", "op", "ping"), 0, ret, err);
}

int runner_shutdown(const struct runner_client *rc, struct tess_error **err)
{
        return simple(rc, json_pack("{s:s}", "op", "shutdown"), 0, NULL, err);
}

int runner_restart(const struct runner_client *rc, struct tess_error **err)
{
        return simple(rc, json_pack("{s:s}", "op", "restart"), RUNNER_RESTART_WAIT_MS, NULL, err);
}

int runner_interrupt(const struct runner_client *rc, const char *run_id, struct tess_error **err)
{
        json_t *req = json_pack("{s:s}", "op", "interrupt");

        if (run_id)
                json_object_set_new(req, "runId", json_string(run_id));
        return simple(rc, req, 0, NULL, err);
}

/* ---- execute ---- */

static bool valid_console(const json_t *console)
{
        size_t i;
        json_t *item;

        if (!json_is_array(console))
                return false;
        json_array_foreach(console, i, item) {
                if (!json_is_array(item) || json_array_size(item) != 2 || !json_is_string(json_array_get(item, 0)))
                        return false;
        }
        return true;
}

static int check_result(const char *mode, const json_t *res, struct tess_error **err)
{
        static const char *const statuses[] = { "finished", "continued", "waiting-input", "build-finished",
                                                "clean-finished", "exec-timeout" };
        const char *status = json_string_value(json_object_get(res, "status"));
        const json_t *code = json_object_get(res, "exitCode");
        bool known = false;

        for (size_t i = 0; status && i < ARRAY_SIZE(statuses); i++)
                known |= streq(status, statuses[i]);
        if (!json_is_object(res) || !known)
                return tess_err(err, EPROTO, "the runner's execute result has no valid status");
        if (streq(mode, "complete"))
                return 0;
        if (!json_is_string(json_object_get(res, "runId")) || !valid_console(json_object_get(res, "console")) ||
            !(json_is_null(code) || json_is_integer(code)))
                return tess_err(err, EPROTO, "the runner's execute result is malformed");
        return 0;
}

int runner_execute(const struct runner_client *rc, const char *mode, const char *run_id, const char *code,
                   json_t *options, int wait_ms, json_t **ret_result, struct tess_error **err)
{
        json_t *req = json_pack("{s:s, s:s}", "op", "exec", "mode", mode), *ans = NULL, *res;
        int r;

        if (!req)
                return tess_err(err, EINVAL, "bad execute mode");
        if (run_id)
                json_object_set_new(req, "runId", json_string(run_id));
        if (code) {
                json_t *s = json_string(code);
                if (!s) {
                        json_decref(req);
                        return tess_err(err, EINVAL, "the code is not valid UTF-8");
                }
                json_object_set_new(req, "code", s);
        }
        if (options)
                json_object_set(req, "options", options);
        if (wait_ms >= 0)
                json_object_set_new(req, "wait", json_integer(wait_ms));
        r = simple(rc, req, wait_ms >= 0 ? wait_ms : 1000, &ans, err);
        if (r < 0)
                return r;
        res = json_object_get(ans, "result");
        r = check_result(mode, res, err);
        if (r == 0)
                *ret_result = json_incref(res);
        json_decref(ans);
        return r;
}

/* ---- terminals ---- */

static json_t *string_array(const char *const *v)
{
        json_t *a = json_array();

        for (; v && *v; v++)
                json_array_append_new(a, json_string(*v));
        return a;
}

int runner_open_pty(const struct runner_client *rc, const struct runner_pty_opts *o, int *ret_fd, pid_t *ret_pid,
                    struct tess_error **err)
{
        json_t *req = json_pack("{s:s, s:i, s:i}", "op", "pty", "rows", o && o->rows ? (int)o->rows : 24, "cols",
                                o && o->cols ? (int)o->cols : 80);
        json_t *ans = NULL;
        int fd = -1, r;

        if (o && o->argv)
                json_object_set_new(req, "argv", string_array(o->argv));
        if (o && o->env)
                json_object_set_new(req, "env", string_array(o->env));
        r = runner_request(rc, req, 0, &ans, &fd, err);
        json_decref(req);
        if (r < 0)
                return r;
        if (fd < 0 || !isatty(fd)) {
                if (fd >= 0)
                        close(fd);
                json_decref(ans);
                return tess_err(err, EPROTO, "the runner passed no terminal");
        }
        if (ret_pid)
                *ret_pid = (pid_t)json_integer_value(json_object_get(ans, "pid"));
        json_decref(ans);
        *ret_fd = fd;
        return 0;
}

int runner_pty_resize(int fd, unsigned rows, unsigned cols, struct tess_error **err)
{
        struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };

        if (rows == 0 || cols == 0 || rows > 4096 || cols > 4096)
                return tess_err(err, EINVAL, "bad terminal size %ux%u", rows, cols);
        if (ioctl(fd, TIOCSWINSZ, &ws) < 0)
                return tess_err(err, errno, "resizing the terminal: %s", strerror(errno));
        return 0;
}

/* ---- files ---- */

static int upload(const struct runner_client *rc, const char *path, int fd, const void *data, int64_t size, int perm,
                  struct tess_error **err)
{
        json_t *req = json_pack("{s:s, s:s, s:I}", "op", "upload", "path", path, "size", (json_int_t)size), *ans = NULL;
        struct rconn c;
        int r;

        if (!req)
                return tess_err(err, EINVAL, "bad upload path");
        if (perm >= 0)
                json_object_set_new(req, "perm", json_integer(perm));
        r = transact(rc, req, 0, fd, data, size, &c, &ans, err);
        json_decref(req);
        if (r < 0)
                return r;
        rconn_close(&c);
        r = json_integer_value(json_object_get(ans, "size")) == size
                    ? 0
                    : tess_err(err, EPROTO, "the runner stored a different size for '%s'", path);
        json_decref(ans);
        return r;
}

int runner_upload(const struct runner_client *rc, const char *path, int fd, int64_t size, int perm,
                  struct tess_error **err)
{
        if (size < 0)
                return tess_err(err, EINVAL, "upload of '%s' needs its size", path);
        return upload(rc, path, fd, NULL, size, perm, err);
}

int runner_upload_buf(const struct runner_client *rc, const char *path, const void *data, size_t len, int perm,
                      struct tess_error **err)
{
        return upload(rc, path, -1, data ? data : "", (int64_t)len, perm, err);
}

/* Download into fd (>= 0) or out. */
static int download(const struct runner_client *rc, const char *path, int fd, struct buf *out, int64_t max,
                    int64_t *ret_size, struct tess_error **err)
{
        json_t *req = json_pack("{s:s, s:s}", "op", "download", "path", path), *ans = NULL;
        json_int_t size;
        struct rconn c;
        int64_t got = 0;
        int r;

        if (!req)
                return tess_err(err, EINVAL, "bad download path");
        r = transact(rc, req, 0, -1, NULL, -1, &c, &ans, err);
        json_decref(req);
        if (r < 0)
                return r;
        size = json_is_integer(json_object_get(ans, "size")) ? json_integer_value(json_object_get(ans, "size")) : -1;
        json_decref(ans);
        if (size < 0 || size > max) {
                rconn_close(&c);
                return size < 0 ? tess_err(err, EPROTO, "the runner gave no size for '%s'", path)
                                : tess_err(err, EFBIG, "'%s' is larger than %lld bytes", path, (long long)max);
        }
        for (;;) {
                size_t have = c.in.len < (uint64_t)(size - got) ? c.in.len : (size_t)(size - got);
                if (have) {
                        if (fd >= 0 && (r = fs_write_all(fd, c.in.data, have)) < 0) {
                                rconn_close(&c);
                                return tess_err(err, -r, "writing '%s': %s", path, strerror(-r));
                        }
                        if (fd < 0)
                                buf_append(out, c.in.data, have);
                        got += (int64_t)have;
                        c.in.len = 0;
                }
                if (got == size)
                        break;
                r = rconn_recv(&c, err);
                if (r <= 0) {
                        rconn_close(&c);
                        return r < 0 ? r : tess_err(err, EPROTO, "'%s' ended after %lld of %lld bytes", path,
                                                    (long long)got, (long long)size);
                }
        }
        rconn_close(&c);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int runner_download(const struct runner_client *rc, const char *path, int fd, int64_t max, int64_t *ret_size,
                    struct tess_error **err)
{
        return download(rc, path, fd, NULL, max, ret_size, err);
}

int runner_download_buf(const struct runner_client *rc, const char *path, size_t max, struct buf *out,
                        struct tess_error **err)
{
        return download(rc, path, -1, out, (int64_t)max, NULL, err);
}

int runner_list(const struct runner_client *rc, const char *path, json_t **ret_entries, struct tess_error **err)
{
        json_t *req = json_pack("{s:s}", "op", "list"), *ans = NULL, *entries;
        int r;

        if (path && *path)
                json_object_set_new(req, "path", json_string(path));
        r = simple(rc, req, 0, &ans, err);
        if (r < 0)
                return r;
        entries = json_object_get(ans, "entries");
        if (!json_is_array(entries)) {
                json_decref(ans);
                return tess_err(err, EPROTO, "the runner's list has no entries");
        }
        *ret_entries = json_incref(entries);
        json_decref(ans);
        return 0;
}

/* ---- services ---- */

int runner_start_service(const struct runner_client *rc, const char *name, const char *const *argv,
                         const char *const *env, int port, int wait_ms, json_t **ret, struct tess_error **err)
{
        json_t *req = json_pack("{s:s, s:s, s:o, s:i}", "op", "start-service", "name", name, "argv",
                                string_array(argv), "port", port);

        if (!req)
                return tess_err(err, EINVAL, "bad service name");
        if (env)
                json_object_set_new(req, "env", string_array(env));
        if (wait_ms >= 0)
                json_object_set_new(req, "wait", json_integer(wait_ms));
        return simple(rc, req, wait_ms >= 0 ? wait_ms : 30000, ret, err);
}

int runner_shutdown_service(const struct runner_client *rc, const char *name, json_t **ret, struct tess_error **err)
{
        json_t *req = json_pack("{s:s, s:s}", "op", "shutdown-service", "name", name);

        if (!req)
                return tess_err(err, EINVAL, "bad service name");
        return simple(rc, req, RUNNER_SERVICE_STOP_MS, ret, err);
}
