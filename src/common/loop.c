/* loop.c - see loop.h. */
#include "common/compat.h"

#include <sys/epoll.h>

#include "common/loop.h"
#include "common/timeutil.h"

struct watcher {
        int fd;
        loop_fd_fn fn;
        void *data;
};

struct timer {
        uint64_t id;
        int64_t due;
        loop_timer_fn fn;
        void *data;
};

struct loop {
        int epfd;
        bool stop;
        struct watcher **w; /* indexed by fd */
        int nw;
        struct timer *timers;
        int ntimers, captimers;
        uint64_t next_timer_id;
        struct {
                loop_prepare_fn fn;
                void *data;
        } prepare[LOOP_PREPARE_MAX];
        int nprepare;
};

int loop_new(struct loop **ret, struct tess_error **err)
{
        struct loop *l = xcalloc(1, sizeof(*l));

        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0) {
                free(l);
                return tess_err(err, errno, "epoll_create1: %s", strerror(errno));
        }
        *ret = l;
        return 0;
}

struct loop *loop_free(struct loop *l)
{
        if (!l)
                return NULL;
        for (int i = 0; i < l->nw; i++)
                free(l->w[i]);
        free(l->w);
        free(l->timers);
        close(l->epfd);
        free(l);
        return NULL;
}

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *data, struct tess_error **err)
{
        struct epoll_event ev = { .events = events, .data.fd = fd };

        if (fd >= l->nw) {
                int n = fd + 64;
                l->w = xrealloc(l->w, sizeof(*l->w) * (size_t)n);
                memset(l->w + l->nw, 0, sizeof(*l->w) * (size_t)(n - l->nw));
                l->nw = n;
        }
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
                return tess_err(err, errno, "epoll_ctl add fd %d: %s", fd, strerror(errno));
        free(l->w[fd]);
        l->w[fd] = xmalloc(sizeof(struct watcher));
        *l->w[fd] = (struct watcher){ fd, fn, data };
        return 0;
}

int loop_mod_fd(struct loop *l, int fd, uint32_t events, struct tess_error **err)
{
        struct epoll_event ev = { .events = events, .data.fd = fd };
        if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
                return tess_err(err, errno, "epoll_ctl mod fd %d: %s", fd, strerror(errno));
        return 0;
}

void loop_del_fd(struct loop *l, int fd)
{
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
        if (fd >= 0 && fd < l->nw) {
                free(l->w[fd]);
                l->w[fd] = NULL;
        }
}

uint64_t loop_add_timer(struct loop *l, int64_t delay_usec, loop_timer_fn fn, void *data)
{
        if (l->ntimers == l->captimers) {
                l->captimers = l->captimers ? l->captimers * 2 : 16;
                l->timers = xrealloc(l->timers, sizeof(*l->timers) * (size_t)l->captimers);
        }
        struct timer *t = &l->timers[l->ntimers++];
        t->id = ++l->next_timer_id;
        t->due = monotonic_usec() + (delay_usec > 0 ? delay_usec : 0);
        t->fn = fn;
        t->data = data;
        return t->id;
}

void loop_cancel_timer(struct loop *l, uint64_t id)
{
        for (int i = 0; i < l->ntimers; i++) {
                if (l->timers[i].id == id) {
                        l->timers[i] = l->timers[--l->ntimers];
                        return;
                }
        }
}

int loop_add_prepare(struct loop *l, loop_prepare_fn fn, void *data, struct tess_error **err)
{
        if (l->nprepare == LOOP_PREPARE_MAX)
                return tess_err(err, ENOSPC, "more than %d prepare functions on one loop", LOOP_PREPARE_MAX);
        l->prepare[l->nprepare].fn = fn;
        l->prepare[l->nprepare].data = data;
        l->nprepare++;
        return 0;
}

void loop_del_prepare(struct loop *l, loop_prepare_fn fn, void *data)
{
        for (int i = 0; i < l->nprepare; i++) {
                if (l->prepare[i].fn == fn && l->prepare[i].data == data) {
                        memmove(&l->prepare[i], &l->prepare[i + 1],
                                (size_t)(l->nprepare - i - 1) * sizeof(l->prepare[0]));
                        l->nprepare--;
                        return;
                }
        }
}

static void run_due_timers(struct loop *l)
{
        int64_t now = monotonic_usec();

        for (int i = 0; i < l->ntimers;) {
                if (l->timers[i].due <= now) {
                        struct timer t = l->timers[i];
                        l->timers[i] = l->timers[--l->ntimers];
                        t.fn(l, t.data);
                        i = 0; /* the callback may have changed the array */
                        continue;
                }
                i++;
        }
}

int loop_run(struct loop *l, struct tess_error **err)
{
        struct epoll_event evs[64];

        l->stop = false;
        while (!l->stop) {
                int64_t timeout = 1000 * USEC_PER_MSEC, now = monotonic_usec();
                for (int i = 0; i < l->ntimers; i++)
                        if (l->timers[i].due - now < timeout)
                                timeout = l->timers[i].due - now;
                for (int i = 0; i < l->nprepare; i++)
                        l->prepare[i].fn(l, &timeout, l->prepare[i].data);
                if (timeout < 0)
                        timeout = 0;
                int n = epoll_wait(l->epfd, evs, ARRAY_SIZE(evs), (int)((timeout + 999) / 1000));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return tess_err(err, errno, "epoll_wait: %s", strerror(errno));
                }
                for (int i = 0; i < n; i++) {
                        int fd = evs[i].data.fd;
                        if (fd < l->nw && l->w[fd])
                                l->w[fd]->fn(l, fd, evs[i].events, l->w[fd]->data);
                }
                run_due_timers(l);
        }
        return 0;
}

void loop_stop(struct loop *l)
{
        l->stop = true;
}
