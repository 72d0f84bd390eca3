/* conn.c - the runner's socket: listening on <socket_dir>/runner.sock,
 * authenticating each peer (SO_PEERCRED), reading one request line per
 * connection, dispatching it through the op table, and writing the answer
 * (with a passed fd or a streamed file), then closing.
 *
 * A connection's states:
 *
 *   READ -> [handler] -> WRITE -> closed            most requests
 *   READ -> [handler] -> WAIT -> WRITE -> closed    exec, start-service
 *   READ -> [upload] -> RECV_FILE -> WRITE -> closed
 *   WRITE -> (file bytes after the answer line) -> closed   download
 *
 * Every state has a deadline: a silent or stalled peer is dropped.  With
 * CONN_MAX connections open, new ones wait in the listen backlog. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "runner/runner.h"

#define IO_TIMEOUT_MS 30000
#define IO_CHUNK      65536

enum conn_state { C_READ, C_WAIT, C_WRITE, C_RECV_FILE };

struct conn {
        int fd;
        enum conn_state st;
        struct rbuf in;
        size_t payload_off; /* first byte after the request line */
        struct rbuf out;
        size_t out_off;
        int pass_fd;
        int64_t id;
        int64_t deadline;
        void (*on_timeout)(struct conn *c);
        void (*on_close)(struct conn *c);
        void *ctx;
        int file_fd;
        uint64_t remaining;
        bool send_file;
        void (*recv_done)(struct conn *c, int r);
};

static struct conn *conns[CONN_MAX];
static int listen_fd = -1;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int64_t last_reject_log;

static void op_ping(struct conn *c, const struct rmsg_req *r);
static void op_shutdown(struct conn *c, const struct rmsg_req *r);

static const struct {
        enum rmsg_op op;
        void (*fn)(struct conn *c, const struct rmsg_req *r);
} handlers[] = {
        { RMSG_OP_PING, op_ping },           { RMSG_OP_EXEC, op_exec },         { RMSG_OP_INTERRUPT, op_interrupt },
        { RMSG_OP_PTY, op_pty },             { RMSG_OP_UPLOAD, op_upload },     { RMSG_OP_DOWNLOAD, op_download },
        { RMSG_OP_LIST, op_list },           { RMSG_OP_START_SERVICE, op_start_service },
        { RMSG_OP_SHUTDOWN, op_shutdown },   { RMSG_OP_SHUTDOWN_SERVICE, op_shutdown_service },
        { RMSG_OP_RESTART, op_restart },
};

static void release_ctx(struct conn *c)
{
        void (*fn)(struct conn *c) = c->on_close;

        c->on_close = NULL;
        c->on_timeout = NULL;
        if (fn)
                fn(c);
        c->ctx = NULL;
}

static void conn_close(struct conn *c)
{
        release_ctx(c);
        for (int i = 0; i < CONN_MAX; i++)
                if (conns[i] == c)
                        conns[i] = NULL;
        if (listen_fd >= 0)
                watch_pause(listen_fd, false);
        watch_del(c->fd);
        close_fd(&c->fd);
        close_fd(&c->pass_fd);
        close_fd(&c->file_fd);
        rbuf_release(&c->in);
        rbuf_release(&c->out);
        free(c);
}

/* ---- answers ---- */

struct rbuf *conn_reply_begin(struct conn *c)
{
        c->out.len = 0;
        rbuf_puts(&c->out, "{\"ok\":true");
        if (c->id >= 0)
                rbuf_printf(&c->out, ",\"id\":%lld", (long long)c->id);
        return &c->out;
}

void conn_reply_end(struct conn *c)
{
        rbuf_puts(&c->out, "}\n");
        release_ctx(c);
        c->st = C_WRITE;
        c->out_off = 0;
        c->deadline = now_ms() + IO_TIMEOUT_MS;
        watch_set(c->fd, POLLOUT);
        watch_pause(c->fd, false);
}

void conn_reply_err(struct conn *c, int errnum, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        c->out.len = 0;
        rbuf_puts(&c->out, "{\"ok\":false");
        if (c->id >= 0)
                rbuf_printf(&c->out, ",\"id\":%lld", (long long)c->id);
        rbuf_printf(&c->out, ",\"errno\":%d,\"error\":", errnum);
        rbuf_json_str(&c->out, msg, strlen(msg));
        close_fd(&c->pass_fd);
        close_fd(&c->file_fd);
        c->send_file = false;
        conn_reply_end(c);
}

void conn_pass_fd(struct conn *c, int fd)
{
        close_fd(&c->pass_fd);
        c->pass_fd = fd;
}

void conn_wait(struct conn *c, int64_t deadline, void (*on_timeout)(struct conn *c), void (*on_close)(struct conn *c),
               void *ctx)
{
        c->st = C_WAIT;
        c->deadline = deadline;
        c->on_timeout = on_timeout;
        c->on_close = on_close;
        c->ctx = ctx;
        watch_set(c->fd, POLLIN);
}

void conn_set_deadline(struct conn *c, int64_t deadline)
{
        c->deadline = deadline;
}

void *conn_ctx(struct conn *c)
{
        return c->ctx;
}

static void recv_some(struct conn *c, const char *p, size_t n)
{
        while (n > 0 && c->remaining > 0 && c->st == C_RECV_FILE) {
                size_t want = n < c->remaining ? n : (size_t)c->remaining;
                ssize_t w = write(c->file_fd, p, want);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        c->st = C_WAIT;
                        c->recv_done(c, w < 0 ? -errno : -EIO);
                        return;
                }
                p += w;
                n -= (size_t)w;
                c->remaining -= (uint64_t)w;
        }
        if (c->remaining == 0 && c->st == C_RECV_FILE) {
                c->st = C_WAIT;
                c->recv_done(c, 0);
        }
}

void conn_recv_file(struct conn *c, int fd, uint64_t size, void (*done)(struct conn *c, int r), void (*on_close)(struct conn *c),
                    void *ctx)
{
        c->st = C_RECV_FILE;
        c->file_fd = fd;
        c->remaining = size;
        c->recv_done = done;
        c->on_close = on_close;
        c->ctx = ctx;
        c->deadline = now_ms() + IO_TIMEOUT_MS;
        watch_set(c->fd, POLLIN);
        /* the bytes that came with the request line */
        recv_some(c, c->in.data + c->payload_off, c->in.len - c->payload_off);
        if (c->st == C_RECV_FILE)
                rbuf_release(&c->in);
}

void conn_send_file(struct conn *c, int fd, uint64_t size)
{
        close_fd(&c->file_fd);
        c->file_fd = fd;
        c->remaining = size;
        c->send_file = true;
}

/* ---- ping and shutdown ---- */

static void op_ping(struct conn *c, const struct rmsg_req *r UNUSED)
{
        struct rbuf *b = conn_reply_begin(c);

        rbuf_printf(b, ",\"version\":\"%s\",\"pid\":%d,\"mode\":\"%s\",\"runs\":%d,\"children\":%d,\"python\":%s",
                    RUNNER_VERSION, (int)getpid(), rconf.batch ? "batch" : "interactive", run_count(), proc_count(),
                    pyrepl_alive() ? "true" : "false");
        conn_reply_end(c);
}

static void op_shutdown(struct conn *c, const struct rmsg_req *r UNUSED)
{
        conn_reply_begin(c);
        conn_reply_end(c);
        runner_shutdown();
}

/* ---- reading and dispatch ---- */

static void dispatch(struct conn *c, size_t line_len)
{
        static struct rmsg_doc doc;
        struct rmsg_req *req = xmalloc(sizeof(*req));
        const char *err = NULL;

        c->payload_off = line_len + 1;
        if (rmsg_req_parse(&doc, c->in.data, line_len, req, &err) < 0) {
                c->id = req->id;
                conn_reply_err(c, EINVAL, "bad request: %s", err ? err : "?");
        } else {
                c->id = req->id;
                for (size_t i = 0; i < ARRAY_SIZE(handlers); i++)
                        if (handlers[i].op == req->op)
                                handlers[i].fn(c, req);
                if (c->st == C_READ)
                        conn_reply_err(c, EIO, "op '%s' gave no answer", rmsg_op_name(req->op));
        }
        free(req);
        if (doc.cap > 256)
                rmsg_doc_release(&doc);
        if (c->st != C_RECV_FILE)
                rbuf_release(&c->in);
}

static void on_read(struct conn *c)
{
        char *nl;
        size_t old = c->in.len;
        ssize_t n;

        rbuf_reserve(&c->in, IO_CHUNK);
        n = read(c->fd, c->in.data + c->in.len, IO_CHUNK);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                conn_close(c);
                return;
        }
        c->in.len += (size_t)n;
        c->in.data[c->in.len] = '\0';
        nl = memchr(c->in.data + old, '\n', (size_t)n);
        if (nl) {
                dispatch(c, (size_t)(nl - c->in.data));
        } else if (c->in.len > RMSG_LINE_MAX) {
                c->id = -1;
                conn_reply_err(c, E2BIG, "request line longer than %u bytes", RMSG_LINE_MAX);
        }
}

static void on_recv_file(struct conn *c)
{
        char buf[IO_CHUNK];
        uint64_t want = c->remaining < sizeof(buf) ? c->remaining : sizeof(buf);
        ssize_t n = read(c->fd, buf, want ? (size_t)want : 1);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                /* the agent went away mid-upload */
                conn_close(c);
                return;
        }
        c->deadline = now_ms() + IO_TIMEOUT_MS;
        recv_some(c, buf, (size_t)n);
}

static ssize_t send_out(struct conn *c)
{
        const char *p = c->out.data + c->out_off;
        size_t n = c->out.len - c->out_off;

        if (c->pass_fd < 0)
                return send(c->fd, p, n, MSG_NOSIGNAL);

        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = { (void *)p, n };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        ssize_t w;

        memset(u.buf, 0, sizeof(u.buf));
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &c->pass_fd, sizeof(int));
        w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (w > 0)
                close_fd(&c->pass_fd);
        return w;
}

static void on_write(struct conn *c)
{
        for (;;) {
                if (c->out_off < c->out.len) {
                        ssize_t w = send_out(c);
                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w < 0 && errno == EAGAIN)
                                return;
                        if (w <= 0) {
                                conn_close(c);
                                return;
                        }
                        c->out_off += (size_t)w;
                        c->deadline = now_ms() + IO_TIMEOUT_MS;
                        continue;
                }
                if (!c->send_file || c->remaining == 0) {
                        conn_close(c);
                        return;
                }
                /* refill from the file being downloaded */
                size_t want = c->remaining < IO_CHUNK ? (size_t)c->remaining : IO_CHUNK;
                c->out.len = c->out_off = 0;
                rbuf_reserve(&c->out, want);
                ssize_t n = read(c->file_fd, c->out.data, want);
                if (n < 0 && errno == EINTR)
                        n = 0, c->out.len = 0;
                else if (n <= 0) {
                        /* the file shrank: the short stream tells the agent */
                        conn_close(c);
                        return;
                }
                c->out.len = (size_t)n;
                c->remaining -= (uint64_t)n;
        }
}

static void conn_event(void *ptr, int fd UNUSED, short revents)
{
        struct conn *c = ptr;
        char junk[512];

        switch (c->st) {
        case C_READ:
                on_read(c);
                break;
        case C_RECV_FILE:
                on_recv_file(c);
                break;
        case C_WRITE:
                if (revents & (POLLERR | POLLHUP | POLLNVAL) && !(revents & POLLOUT))
                        conn_close(c);
                else
                        on_write(c);
                break;
        case C_WAIT: {
                /* Nothing more is expected.  POLLHUP: the agent closed the
                 * connection (gave up).  EOF alone: it only shut its
                 * writing side; stop reading until the answer. */
                ssize_t n = revents & POLLHUP ? 0 : read(c->fd, junk, sizeof(junk));
                if (revents & POLLHUP)
                        conn_close(c);
                else if (n == 0)
                        watch_pause(c->fd, true);
                else if (n < 0 && errno != EAGAIN && errno != EINTR)
                        conn_close(c);
                break;
        }
        }
}

/* ---- listening and authentication ---- */

static bool peer_allowed(int fd)
{
        struct ucred cr;
        socklen_t len = sizeof(cr);
        bool ok;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
                return false;
        /* A peer outside our pid namespace has no pid here: the kernel
         * reports 0.  Every process of the container (or of a namespace
         * nested in it) has one. */
        if (rconf.auth_outside)
                ok = cr.pid == 0 && cr.uid == rconf.agent_uid;
        else
                ok = cr.uid == geteuid();
        if (!ok && now_ms() - last_reject_log > 10000) {
                last_reject_log = now_ms();
                rlog("refused a connection from pid %d uid %d", (int)cr.pid, (int)cr.uid);
        }
        return ok;
}

static void on_accept(void *ptr UNUSED, int fd UNUSED, short revents UNUSED)
{
        for (;;) {
                int slot = -1, s;
                struct conn *c;

                for (int i = 0; i < CONN_MAX && slot < 0; i++)
                        if (!conns[i])
                                slot = i;
                if (slot < 0) {
                        /* full: leave the rest in the backlog until one ends */
                        watch_pause(listen_fd, true);
                        return;
                }
                s = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (s < 0)
                        return;
                if (!peer_allowed(s) || runner_shutting_down()) {
                        close(s);
                        continue;
                }
                c = xcalloc(1, sizeof(*c));
                *c = (struct conn){ .fd = s, .st = C_READ, .pass_fd = -1, .file_fd = -1, .id = -1,
                                    .deadline = now_ms() + HEADER_TIMEOUT_MS };
                conns[slot] = c;
                watch_add(s, POLLIN, conn_event, c);
        }
}

int conn_listen(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;
        mode_t old;
        int r;

        r = snprintf(sock_path, sizeof(sock_path), "%s/%s", rconf.socket_dir, RUNNER_SOCKET);
        if (r < 0 || (size_t)r >= sizeof(sock_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, sock_path, (size_t)r + 1);
        if (lstat(sock_path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode))
                        return -EEXIST;
                unlink(sock_path);
        }
        listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (listen_fd < 0)
                return -errno;
        /* 0600: only our uid may even connect; the peer check comes on top */
        old = umask(0177);
        r = bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa));
        umask(old);
        if (r < 0 || listen(listen_fd, 16) < 0) {
                r = -errno;
                close_fd(&listen_fd);
                return r;
        }
        watch_add(listen_fd, POLLIN, on_accept, NULL);
        return 0;
}

void conn_stop_listening(void)
{
        if (listen_fd < 0)
                return;
        watch_del(listen_fd);
        close_fd(&listen_fd);
        unlink(sock_path);
}

/* ---- timers ---- */

int64_t conn_next_deadline(void)
{
        int64_t next = -1;

        for (int i = 0; i < CONN_MAX; i++)
                if (conns[i] && conns[i]->deadline > 0 && (next < 0 || conns[i]->deadline < next))
                        next = conns[i]->deadline;
        return next;
}

void conn_run_timers(void)
{
        int64_t now = now_ms();

        for (int i = 0; i < CONN_MAX; i++) {
                struct conn *c = conns[i];
                if (!c || c->deadline <= 0 || c->deadline > now)
                        continue;
                if (c->st == C_WAIT && c->on_timeout)
                        c->on_timeout(c);
                else
                        conn_close(c);
        }
}

void conn_flush_all(void)
{
        int64_t until = now_ms() + 1000;

        for (int i = 0; i < CONN_MAX; i++) {
                struct conn *c = conns[i];
                while (c && c->st == C_WRITE && c->out_off < c->out.len && now_ms() < until) {
                        struct pollfd p = { c->fd, POLLOUT, 0 };
                        if (poll(&p, 1, 100) <= 0)
                                continue;
                        ssize_t w = send_out(c);
                        if (w <= 0 && errno != EAGAIN && errno != EINTR)
                                break;
                        if (w > 0)
                                c->out_off += (size_t)w;
                }
        }
}
