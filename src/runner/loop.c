/* loop.c - the runner's one event loop: a table of fd watches turned into a
 * poll() set each round.  A watch removed (or replaced) by an earlier
 * callback in the same round is not called: each registration has a serial
 * number that the dispatch checks. */
#include "common/compat.h"

#include "runner/runner.h"

struct watch {
        int fd;
        short events;
        bool paused;
        watch_fn fn;
        void *ptr;
        uint64_t serial;
};

static struct watch *watches;
static size_t nwatch, capwatch;
static uint64_t next_serial = 1;

static struct watch *find(int fd)
{
        for (size_t i = 0; i < nwatch; i++)
                if (watches[i].fd == fd)
                        return &watches[i];
        return NULL;
}

void watch_add(int fd, short events, watch_fn fn, void *ptr)
{
        struct watch *w = find(fd);

        if (!w) {
                if (nwatch == capwatch) {
                        capwatch = capwatch ? capwatch * 2 : 32;
                        watches = xrealloc(watches, capwatch * sizeof(*watches));
                }
                w = &watches[nwatch++];
        }
        *w = (struct watch){ .fd = fd, .events = events, .fn = fn, .ptr = ptr, .serial = next_serial++ };
}

void watch_set(int fd, short events)
{
        struct watch *w = find(fd);

        if (w)
                w->events = events;
}

void watch_pause(int fd, bool paused)
{
        struct watch *w = find(fd);

        if (w)
                w->paused = paused;
}

void watch_del(int fd)
{
        struct watch *w = find(fd);

        if (w)
                *w = watches[--nwatch];
}

void loop_once(int timeout_ms)
{
        static struct pollfd *pfds;
        static uint64_t *serials;
        static size_t cap;
        size_t n = 0;
        int r;

        if (cap < nwatch) {
                cap = nwatch;
                pfds = xrealloc(pfds, cap * sizeof(*pfds));
                serials = xrealloc(serials, cap * sizeof(*serials));
        }
        for (size_t i = 0; i < nwatch; i++) {
                if (watches[i].paused)
                        continue;
                pfds[n] = (struct pollfd){ .fd = watches[i].fd, .events = watches[i].events };
                serials[n++] = watches[i].serial;
        }
        r = poll(pfds, n, timeout_ms);
        if (r <= 0)
                return;
        for (size_t i = 0; i < n; i++) {
                struct watch *w;
                if (!pfds[i].revents)
                        continue;
                w = find(pfds[i].fd);
                if (w && w->serial == serials[i] && !w->paused)
                        w->fn(w->ptr, w->fd, pfds[i].revents);
        }
}
