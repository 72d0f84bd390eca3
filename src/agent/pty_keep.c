/* pty_keep.c - the registry of named terminals and their scrollback rings
 * (pty_keep.h says what and who owns what).
 *
 * A terminal's states, all changed under k->mu:
 *
 *   ATTACHED  a socket's thread owns it (attached, gen = that view's)
 *   DETACHED  the keeper owns it (!attached, detached_at)
 *   CLOSED    out of the list (closed); freed at its last reference
 *
 *   (new)    -> ATTACHED  [pty_keep_attach with a fresh master]
 *   ATTACHED -> DETACHED  [pty_view_detach: the socket closed;
 *                          pty_view_check: another socket asked for it]
 *   DETACHED -> ATTACHED  [pty_keep_attach]
 *   any      -> CLOSED    [the shell ended (its owner saw EOF or EIO),
 *                          keep_usec passed, more than max_detached,
 *                          pty_keep_drop_kernel, pty_keep_free]
 *
 * References: the list holds one, each view one, and the keeper one per
 * terminal it polls; the master is closed (the shell hung up) at the
 * last.  A socket taking a terminal over sets `takeover`, wakes the
 * holder through the terminal's eventfd and waits on `released`; while
 * anyone waits for it a detached terminal is not closed for age or count. */
#include "common/compat.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>

#include "agent/pty_keep.h"
#include "common/cond_wait.h"
#include "common/timeutil.h"

#define DRAIN_CHUNK    16384
#define DRAIN_ROUNDS   8           /* reads per terminal per wake-up: the others get their turn */
#define KEEPER_WAIT_MS (60 * 1000) /* the longest the keeper sleeps with nothing due */

struct pty_term {
        struct pty_term *next;
        unsigned refs;
        char kernel[PTY_KEEP_KERNEL_MAX + 1];
        char id[PTY_KEEP_ID_MAX + 1];
        int fd;   /* the master */
        int wake; /* eventfd: news for the attached view */
        bool attached, takeover, closed;
        unsigned waiters; /* sockets waiting in pty_keep_attach */
        uint64_t gen;     /* the attached view's */
        int64_t detached_at;
        struct pty_ring ring;
};

struct pty_keep {
        pthread_mutex_t mu;
        pthread_cond_t released; /* a terminal was let go or closed */
        pthread_t keeper;
        int wake; /* eventfd: the keeper's */
        bool stopping;
        uint64_t gen;
        struct pty_keep_conf conf;
        struct pty_term *terms;
};

static void poke(int efd)
{
        uint64_t one = 1;
        ssize_t n = write(efd, &one, sizeof(one)); /* fails only when full: awake then */
        (void)n;
}

static void drain_eventfd(int efd)
{
        uint64_t n;
        while (read(efd, &n, sizeof(n)) == (ssize_t)sizeof(n)) {
        }
}

/* ---- the ring ---- */

void pty_ring_init(struct pty_ring *r, size_t cap)
{
        *r = (struct pty_ring){ .data = xmalloc(cap ? cap : 1), .cap = cap ? cap : 1 };
}

void pty_ring_release(struct pty_ring *r)
{
        free(r->data);
        *r = (struct pty_ring){ 0 };
}

void pty_ring_append(struct pty_ring *r, const void *p, size_t n)
{
        const char *s = p;

        if (n >= r->cap) { /* only the end fits */
                r->dropped = r->dropped || r->len > 0 || n > r->cap;
                memcpy(r->data, s + (n - r->cap), r->cap);
                r->start = 0;
                r->len = r->cap;
                return;
        }
        size_t over = r->len + n > r->cap ? r->len + n - r->cap : 0;
        if (over) {
                r->start = (r->start + over) % r->cap;
                r->len -= over;
                r->dropped = true;
        }
        size_t end = (r->start + r->len) % r->cap, first = r->cap - end < n ? r->cap - end : n;
        memcpy(r->data + end, s, first);
        memcpy(r->data, s + first, n - first);
        r->len += n;
}

size_t pty_ring_copy(const struct pty_ring *r, char *out)
{
        size_t first = r->cap - r->start < r->len ? r->cap - r->start : r->len;

        memcpy(out, r->data + r->start, first);
        memcpy(out + first, r->data, r->len - first);
        if (!r->dropped)
                return r->len;
        size_t look = r->len < PTY_RING_TRIM ? r->len : PTY_RING_TRIM;
        const char *nl = memchr(out, '\n', look);
        if (!nl)
                return r->len;
        size_t skip = (size_t)(nl - out) + 1;
        memmove(out, out + skip, r->len - skip);
        return r->len - skip;
}

/* ---- terminals (all under k->mu) ---- */

static void term_unref(struct pty_term *t)
{
        if (--t->refs > 0)
                return;
        if (t->fd >= 0)
                close(t->fd); /* the shell's terminal hangs up */
        close(t->wake);
        pty_ring_release(&t->ring);
        free(t);
}

static struct pty_term *find(struct pty_keep *k, const char *kernel, const char *id)
{
        for (struct pty_term *t = k->terms; t; t = t->next)
                if (streq(t->kernel, kernel) && streq(t->id, id))
                        return t;
        return NULL;
}

/* Out of the list, for good; an attached view hears it. */
static void term_close(struct pty_keep *k, struct pty_term *t)
{
        for (struct pty_term **p = &k->terms; *p; p = &(*p)->next) {
                if (*p == t) {
                        *p = t->next;
                        break;
                }
        }
        t->next = NULL;
        t->closed = true;
        if (t->attached)
                poke(t->wake);
        pthread_cond_broadcast(&k->released);
        poke(k->wake); /* to drop its reference, if it polls it */
        term_unref(t);
}

/* More than max_detached of a kernel's terminals detached: close those
 * detached longest. */
static void enforce_limit(struct pty_keep *k, const char *kernel)
{
        for (;;) {
                struct pty_term *oldest = NULL;
                unsigned n = 0;
                for (struct pty_term *t = k->terms; t; t = t->next) {
                        if (t->attached || !streq(t->kernel, kernel))
                                continue;
                        n++;
                        if (!t->waiters && (!oldest || t->detached_at < oldest->detached_at))
                                oldest = t;
                }
                if (n <= k->conf.max_detached || !oldest)
                        return;
                term_close(k, oldest);
        }
}

/* Read what the detached terminal's shell wrote into its ring; close it
 * when the shell is gone.  The keeper owns it (under k->mu). */
static void drain(struct pty_keep *k, struct pty_term *t, short revents)
{
        char buf[DRAIN_CHUNK];

        for (int i = 0; i < DRAIN_ROUNDS; i++) {
                ssize_t n = read(t->fd, buf, sizeof(buf));
                if (n > 0) {
                        pty_ring_append(&t->ring, buf, (size_t)n);
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                /* nothing now; a hang-up with nothing to read would wake us forever */
                if (n < 0 && errno == EAGAIN && (i > 0 || !(revents & (POLLHUP | POLLERR | POLLNVAL))))
                        return;
                term_close(k, t); /* EOF, EIO: the shell ended */
                return;
        }
}

static void *keeper(void *data)
{
        struct pty_keep *k = data;
        size_t cap = 16;
        struct pollfd *pfd = xmalloc(cap * sizeof(*pfd));
        struct pty_term **polled = xmalloc(cap * sizeof(*polled));

        pthread_mutex_lock(&k->mu);
        while (!k->stopping) {
                int64_t now = monotonic_usec(), next = 0;
                size_t n = 0;
                for (struct pty_term *t = k->terms, *after; t; t = after) {
                        after = t->next;
                        if (t->attached)
                                continue;
                        int64_t due = t->detached_at + k->conf.keep_usec;
                        if (due <= now && !t->waiters) {
                                term_close(k, t);
                                continue;
                        }
                        if (due > now && (!next || due < next))
                                next = due;
                        if (n + 1 >= cap) {
                                cap *= 2;
                                pfd = xrealloc(pfd, cap * sizeof(*pfd));
                                polled = xrealloc(polled, cap * sizeof(*polled));
                        }
                        t->refs++;
                        polled[n] = t;
                        pfd[n + 1] = (struct pollfd){ .fd = t->fd, .events = POLLIN };
                        n++;
                }
                pfd[0] = (struct pollfd){ .fd = k->wake, .events = POLLIN };
                int64_t wait_ms = next ? (next - now + 999) / 1000 : KEEPER_WAIT_MS;
                pthread_mutex_unlock(&k->mu);

                poll(pfd, n + 1, (int)(wait_ms < KEEPER_WAIT_MS ? wait_ms : KEEPER_WAIT_MS)); /* EINTR: look again */
                if (pfd[0].revents)
                        drain_eventfd(k->wake);

                pthread_mutex_lock(&k->mu);
                for (size_t i = 0; i < n; i++) {
                        struct pty_term *t = polled[i];
                        short rev = pfd[i + 1].revents;
                        if (rev && !t->closed && !t->attached)
                                drain(k, t, rev);
                        term_unref(t);
                }
        }
        pthread_mutex_unlock(&k->mu);
        free(pfd);
        free(polled);
        return NULL;
}

/* ---- the registry ---- */

struct pty_keep *pty_keep_new(const struct pty_keep_conf *conf)
{
        struct pty_keep *k = xcalloc(1, sizeof(*k));

        k->conf = *conf;
        if (!k->conf.ring)
                k->conf.ring = PTY_KEEP_RING;
        k->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (k->wake < 0) {
                free(k);
                return NULL;
        }
        pthread_mutex_init(&k->mu, NULL);
        cond_init_monotonic(&k->released);
        int r = pthread_create(&k->keeper, NULL, keeper, k);
        if (r != 0) {
                pthread_cond_destroy(&k->released);
                pthread_mutex_destroy(&k->mu);
                close(k->wake);
                free(k);
                errno = r;
                return NULL;
        }
        return k;
}

struct pty_keep *pty_keep_free(struct pty_keep *k)
{
        if (!k)
                return NULL;
        pthread_mutex_lock(&k->mu);
        k->stopping = true;
        pthread_mutex_unlock(&k->mu);
        poke(k->wake);
        pthread_join(k->keeper, NULL);
        pthread_mutex_lock(&k->mu);
        while (k->terms)
                term_close(k, k->terms);
        pthread_mutex_unlock(&k->mu);
        pthread_cond_destroy(&k->released);
        pthread_mutex_destroy(&k->mu);
        close(k->wake);
        free(k);
        return NULL;
}

bool pty_keep_has(struct pty_keep *k, const char *kernel, const char *id)
{
        pthread_mutex_lock(&k->mu);
        bool has = find(k, kernel, id) != NULL;
        pthread_mutex_unlock(&k->mu);
        return has;
}

static void close_fd(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

int pty_keep_attach(struct pty_keep *k, const char *kernel, const char *id, int *fresh_fd, int timeout_ms,
                    struct pty_view *ret, char **ret_replay, size_t *ret_replay_len)
{
        struct timespec deadline = cond_deadline((int64_t)timeout_ms * USEC_PER_MSEC);
        struct pty_term *t;
        int r = 0;

        if (!terminal_id_valid(id) || !kernel || !*kernel || strlen(kernel) > PTY_KEEP_KERNEL_MAX) {
                close_fd(fresh_fd);
                return -EINVAL;
        }
        pthread_mutex_lock(&k->mu);
        for (;;) {
                if (k->stopping) {
                        r = -ESHUTDOWN;
                        goto out_unlock;
                }
                t = find(k, kernel, id);
                if (!t || !t->attached)
                        break;
                /* held by another socket: ask it to let go, and wait */
                uint64_t holder = t->gen;
                t->takeover = true;
                t->waiters++;
                t->refs++;
                poke(t->wake);
                int w = 0;
                while (t->attached && t->gen == holder && !t->closed && w != ETIMEDOUT)
                        w = pthread_cond_timedwait(&k->released, &k->mu, &deadline);
                t->waiters--;
                bool busy = t->attached && t->gen == holder && !t->closed;
                if (busy && !t->waiters)
                        t->takeover = false;
                term_unref(t);
                if (busy) {
                        r = -EBUSY;
                        goto out_unlock;
                }
                /* let go or closed meanwhile: look again */
        }
        if (!t) {
                if (*fresh_fd < 0) {
                        r = -ENOENT;
                        goto out_unlock;
                }
                int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (wake < 0) {
                        r = -errno;
                        goto out_unlock;
                }
                t = xcalloc(1, sizeof(*t));
                snprintf(t->kernel, sizeof(t->kernel), "%s", kernel);
                snprintf(t->id, sizeof(t->id), "%s", id);
                t->fd = *fresh_fd;
                *fresh_fd = -1;
                fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK);
                t->wake = wake;
                t->refs = 1; /* the list's */
                pty_ring_init(&t->ring, k->conf.ring);
                t->next = k->terms;
                k->terms = t;
                *ret_replay = NULL;
                *ret_replay_len = 0;
                ret->kept = false;
        } else {
                *ret_replay = xmalloc(t->ring.cap);
                *ret_replay_len = pty_ring_copy(&t->ring, *ret_replay);
                ret->kept = true;
                poke(k->wake); /* it polls the master no more */
        }
        t->attached = true;
        t->takeover = false;
        t->gen = ++k->gen;
        t->refs++; /* the view's */
        drain_eventfd(t->wake);
        ret->keep = k;
        ret->term = t;
        ret->gen = t->gen;
out_unlock:
        pthread_mutex_unlock(&k->mu);
        close_fd(fresh_fd); /* unused: the terminal existed, or a failure */
        return r;
}

int pty_view_fd(const struct pty_view *v)
{
        return v->term ? v->term->fd : -1;
}

int pty_view_wake_fd(const struct pty_view *v)
{
        return v->term ? v->term->wake : -1;
}

void pty_view_output(struct pty_view *v, const void *p, size_t n)
{
        if (v->term)
                pty_ring_append(&v->term->ring, p, n);
}

/* Give the hold up (under k->mu). */
static void let_go(struct pty_view *v)
{
        struct pty_term *t = v->term;

        if (!t->closed && t->attached && t->gen == v->gen) {
                t->attached = false;
                t->detached_at = monotonic_usec();
                pthread_cond_broadcast(&v->keep->released);
                poke(v->keep->wake);
        }
        term_unref(t);
        v->term = NULL;
}

enum pty_view_state pty_view_check(struct pty_view *v)
{
        struct pty_keep *k = v->keep;
        enum pty_view_state s = PTY_VIEW_OWNED;

        if (!v->term)
                return PTY_VIEW_CLOSED;
        pthread_mutex_lock(&k->mu);
        drain_eventfd(v->term->wake);
        if (v->term->closed) {
                s = PTY_VIEW_CLOSED;
                let_go(v);
        } else if (v->term->takeover) {
                s = PTY_VIEW_TAKEN;
                v->term->takeover = false;
                let_go(v);
        }
        pthread_mutex_unlock(&k->mu);
        return s;
}

void pty_view_replace_fd(struct pty_view *v, int fd)
{
        int old;

        if (!v->term) {
                close(fd);
                return;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        pthread_mutex_lock(&v->keep->mu);
        old = v->term->fd;
        v->term->fd = fd;
        pthread_mutex_unlock(&v->keep->mu);
        if (old >= 0)
                close(old);
}

void pty_view_detach(struct pty_view *v)
{
        struct pty_keep *k = v->keep;
        struct pty_term *t = v->term;

        char kernel[PTY_KEEP_KERNEL_MAX + 1];

        if (!t)
                return;
        pthread_mutex_lock(&k->mu);
        bool mine = !t->closed && t->attached && t->gen == v->gen;
        snprintf(kernel, sizeof(kernel), "%s", t->kernel);
        if (mine && !t->waiters && k->conf.keep_usec <= 0)
                term_close(k, t);
        let_go(v); /* t may be gone after this */
        if (mine)
                enforce_limit(k, kernel);
        pthread_mutex_unlock(&k->mu);
}

void pty_view_end(struct pty_view *v)
{
        struct pty_keep *k = v->keep;
        struct pty_term *t = v->term;

        if (!t)
                return;
        pthread_mutex_lock(&k->mu);
        if (!t->closed && t->attached && t->gen == v->gen) {
                t->attached = false;
                term_close(k, t);
        }
        term_unref(t);
        v->term = NULL;
        pthread_mutex_unlock(&k->mu);
}

void pty_keep_drop_kernel(struct pty_keep *k, const char *kernel)
{
        if (!k)
                return;
        pthread_mutex_lock(&k->mu);
        for (struct pty_term *t = k->terms, *after; t; t = after) {
                after = t->next;
                if (streq(t->kernel, kernel))
                        term_close(k, t);
        }
        pthread_mutex_unlock(&k->mu);
        poke(k->wake);
}

unsigned pty_keep_count(struct pty_keep *k, const char *kernel, unsigned *ret_detached)
{
        unsigned n = 0, detached = 0;

        pthread_mutex_lock(&k->mu);
        for (struct pty_term *t = k->terms; t; t = t->next) {
                if (!streq(t->kernel, kernel))
                        continue;
                n++;
                detached += !t->attached;
        }
        pthread_mutex_unlock(&k->mu);
        if (ret_detached)
                *ret_detached = detached;
        return n;
}
