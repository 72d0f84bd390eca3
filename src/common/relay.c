/* relay.c - see relay.h. */
#include "common/compat.h"

#include <poll.h>
#include <sys/socket.h>

#include "common/relay.h"

/* One direction: what was read from `from` and not yet written to `to`. */
struct dir {
        int from, to;
        char *buf;
        size_t len, off;
        bool eof;  /* `from` ended */
        bool done; /* eof and all written: `to` was shut down */
};

static void dir_init(struct dir *d, int from, int to, const void *pending, size_t n)
{
        *d = (struct dir){ .from = from, .to = to, .buf = xmalloc(RELAY_BUF > n ? RELAY_BUF : n) };
        memcpy(d->buf, pending ? pending : "", n);
        d->len = n;
}

/* Read what `from` has (when there is room), write what is buffered. */
static int dir_step(struct dir *d, short in_ev, short out_ev, bool *ret_moved)
{
        if ((in_ev & (POLLIN | POLLHUP | POLLERR)) && !d->eof && d->len == 0) {
                ssize_t n = recv(d->from, d->buf, RELAY_BUF, MSG_DONTWAIT);
                if (n == 0)
                        d->eof = true;
                else if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                else if (n > 0)
                        d->len = (size_t)n, d->off = 0;
        }
        if ((out_ev & (POLLOUT | POLLERR | POLLHUP)) && d->off < d->len) {
                ssize_t n = send(d->to, d->buf + d->off, d->len - d->off, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (n > 0) {
                        d->off += (size_t)n;
                        *ret_moved = true;
                }
                if (d->off == d->len)
                        d->len = d->off = 0;
        }
        if (d->eof && d->len == 0 && !d->done) {
                shutdown(d->to, SHUT_WR);
                d->done = true;
        }
        return 0;
}

static short want_in(const struct dir *d)
{
        return !d->eof && d->len == 0 ? POLLIN : 0;
}

static short want_out(const struct dir *d)
{
        return d->off < d->len ? POLLOUT : 0;
}

int relay_run(const struct relay_side *a, const struct relay_side *b, void (*moved)(void *data), void *data)
{
        struct dir ab, ba;
        int r = 0;

        dir_init(&ab, a->fd, b->fd, b->pending, b->pending_len); /* read for b: a's bytes */
        dir_init(&ba, b->fd, a->fd, a->pending, a->pending_len);
        while (r == 0 && !(ab.done && ba.done)) {
                struct pollfd p[2] = { { .fd = a->fd, .events = (short)(want_in(&ab) | want_out(&ba)) },
                                       { .fd = b->fd, .events = (short)(want_in(&ba) | want_out(&ab)) } };
                for (int i = 0; i < 2; i++) /* a side we wait nothing from may hang up: not a wake-up */
                        if (!p[i].events)
                                p[i].fd = -1;
                if (poll(p, 2, -1) < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                bool moved_ab = false, moved_ba = false;
                r = dir_step(&ab, p[0].revents, p[1].revents, &moved_ab);
                if (r == 0)
                        r = dir_step(&ba, p[1].revents, p[0].revents, &moved_ba);
                if (moved_ab && moved)
                        moved(data);
        }
        free(ab.buf);
        free(ba.buf);
        return r;
}

int relay_send_all(int fd, const void *p, size_t n, struct tess_error **err)
{
        for (size_t off = 0; off < n;) {
                ssize_t w = send(fd, (const char *)p + off, n - off, MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        struct pollfd pf = { .fd = fd, .events = POLLOUT };
                        if (errno == EAGAIN && poll(&pf, 1, 30000) == 1)
                                continue;
                        return tess_err(err, errno, "sending: %s", strerror(errno));
                }
                off += (size_t)w;
        }
        return 0;
}
