/* fake_activity.c - see fake.h: how busy each process's launches keep its
 * fake devices (the driver's side), and the per-process samples the fake
 * NVML makes of it.  The record is a memfd that lives and dies with its
 * process; a forked child starts a record of its own. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fakecuda/fake.h"

#define BUSY_MAX 0xffffffffull /* a slot's busy ns saturate here (4.3 s) */

static pthread_mutex_t mine_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_activity *mine; /* this process's record, once it launched */
static int mine_fd = -1;
static bool mine_failed; /* no memfd: not tried again */

int64_t fake_now_ns(void)
{
        struct timespec ts;
        /* a few ms of resolution against 100 ms periods; a launch costs ~5 ns
         * more instead of ~20 */
        clock_gettime(CLOCK_REALTIME_COARSE, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t fake_launch_ns(uint64_t threads, int sm_count)
{
        uint64_t wave = (uint64_t)(sm_count > 0 ? sm_count : 1) * FAKE_THREADS_PER_SM;
        uint64_t waves = threads ? (threads - 1) / wave + 1 : 1; /* one division: it is on every launch */

        if (waves > BUSY_MAX / FAKE_WAVE_NS)
                return (int64_t)BUSY_MAX;
        return (int64_t)waves * FAKE_WAVE_NS;
}

void fake_activity_add(struct fake_activity *a, int node, int64_t now_ns, int64_t ns)
{
        if (node < 0 || node >= FAKE_MAX_DEVICES || now_ns < 0 || ns <= 0)
                return;
        uint64_t p = (uint64_t)(now_ns / FAKE_PERIOD_NS);
        uint64_t *slot = &a->ring[node][p % FAKE_PERIODS];
        uint64_t old = __atomic_load_n(slot, __ATOMIC_RELAXED), next;
        do {
                uint64_t busy = (uint32_t)(old >> 32) == (uint32_t)p ? (uint32_t)old : 0;
                busy = busy + (uint64_t)ns > BUSY_MAX ? BUSY_MAX : busy + (uint64_t)ns;
                next = (uint64_t)(uint32_t)p << 32 | busy;
        } while (!__atomic_compare_exchange_n(slot, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* This process's record unmapped and closed, if it has one. */
static void drop_record(void)
{
        if (mine)
                munmap(mine, sizeof(*mine));
        if (mine_fd >= 0)
                close(mine_fd);
        mine = NULL;
        mine_fd = -1;
}

/* A forked child is another process: it must not write its parent's
 * record (nor be found holding it); it makes its own at its first launch. */
static void child_forgets(void)
{
        drop_record();
        mine_failed = false;
        pthread_mutex_init(&mine_lock, NULL);
}

static void before_fork(void)
{
        pthread_mutex_lock(&mine_lock);
}

static void after_fork(void)
{
        pthread_mutex_unlock(&mine_lock);
}

/* Unloaded (dlclose): the record goes, as with the process. */
__attribute__((destructor)) static void forget(void)
{
        drop_record();
}

static struct fake_activity *record(void)
{
        static bool atfork;
        struct fake_activity *a = __atomic_load_n(&mine, __ATOMIC_ACQUIRE);

        if (a || __atomic_load_n(&mine_failed, __ATOMIC_RELAXED))
                return a;
        pthread_mutex_lock(&mine_lock);
        if (!atfork && pthread_atfork(before_fork, after_fork, child_forgets) == 0)
                atfork = true;
        a = mine;
        if (!a && !mine_failed) {
                int fd = memfd_create(FAKE_ACTIVITY_NAME, MFD_CLOEXEC);
                void *p = MAP_FAILED;
                if (fd >= 0 && ftruncate(fd, sizeof(*a)) == 0)
                        p = mmap(NULL, sizeof(*a), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (p == MAP_FAILED) {
                        if (fd >= 0)
                                close(fd);
                        __atomic_store_n(&mine_failed, true, __ATOMIC_RELAXED);
                } else {
                        a = p;
                        a->size = sizeof(*a);
                        a->magic = FAKE_ACTIVITY_MAGIC;
                        mine_fd = fd;
                        __atomic_store_n(&mine, a, __ATOMIC_RELEASE);
                }
        }
        pthread_mutex_unlock(&mine_lock);
        return a;
}

void fake_activity_launch(int dev, uint64_t threads)
{
        const struct fake_config *c = fake_config();
        struct fake_activity *a;

        if (dev < 0 || dev >= c->devices || !(a = record()))
                return;
        fake_activity_add(a, c->node_index[dev], fake_now_ns(), fake_launch_ns(threads, c->sm_count));
}

size_t fake_activity_samples(const struct fake_activity *a, unsigned pid, int node, unsigned long long after_us,
                             int64_t now_ns, struct fake_sample *out, size_t max)
{
        size_t n = 0;

        if (node < 0 || node >= FAKE_MAX_DEVICES || now_ns < FAKE_PERIOD_NS)
                return 0;
        uint64_t now_p = (uint64_t)(now_ns / FAKE_PERIOD_NS);
        uint64_t first = now_p > FAKE_PERIODS - 1 ? now_p - (FAKE_PERIODS - 1) : 0;
        for (uint64_t p = first; p < now_p; p++) { /* the current period is not complete */
                unsigned long long end_us = (p + 1) * (unsigned long long)(FAKE_PERIOD_NS / 1000);
                uint64_t w = __atomic_load_n(&a->ring[node][p % FAKE_PERIODS], __ATOMIC_RELAXED);
                uint64_t busy = (uint32_t)(w >> 32) == (uint32_t)p ? (uint32_t)w : 0;
                uint64_t pct = (busy * 100 + FAKE_PERIOD_NS / 2) / FAKE_PERIOD_NS;
                if (end_us <= after_us || pct == 0)
                        continue;
                if (out && n < max)
                        out[n] = (struct fake_sample){ .pid = pid,
                                                       .time_us = end_us,
                                                       .percent = pct > 100 ? 100 : (unsigned)pct };
                n++;
        }
        return out && n > max ? max : n;
}

/* The activity record among process dir's open files, mapped; NULL if none. */
static const struct fake_activity *find_record(int dir)
{
        static const char want[] = "/memfd:" FAKE_ACTIVITY_NAME;
        const struct fake_activity *a = NULL;
        DIR *d = fdopendir(dir);
        struct dirent *e;

        if (!d) {
                close(dir);
                return NULL;
        }
        while (!a && (e = readdir(d))) {
                char link[256];
                ssize_t len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
                if (len < (ssize_t)sizeof(want) - 1 || memcmp(link, want, sizeof(want) - 1) != 0)
                        continue;
                int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
                struct stat st;
                if (fd < 0)
                        continue;
                if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(*a)) {
                        void *p = mmap(NULL, sizeof(*a), PROT_READ, MAP_SHARED, fd, 0);
                        if (p != MAP_FAILED && ((const struct fake_activity *)p)->magic == FAKE_ACTIVITY_MAGIC &&
                            ((const struct fake_activity *)p)->size == sizeof(*a))
                                a = p;
                        else if (p != MAP_FAILED)
                                munmap(p, sizeof(*a));
                }
                close(fd);
        }
        closedir(d);
        return a;
}

void fake_activity_each(void (*fn)(unsigned pid, const struct fake_activity *a, void *data), void *data)
{
        DIR *proc = opendir("/proc");
        struct dirent *e;

        if (!proc)
                return;
        while ((e = readdir(proc))) {
                char *end, path[64];
                unsigned long pid = strtoul(e->d_name, &end, 10);
                if (*end || end == e->d_name || pid == 0)
                        continue;
                snprintf(path, sizeof(path), "%lu/fd", pid);
                int dir = openat(dirfd(proc), path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                const struct fake_activity *a = dir >= 0 ? find_record(dir) : NULL;
                if (a) {
                        fn((unsigned)pid, a, data);
                        munmap((void *)a, sizeof(*a));
                }
        }
        closedir(proc);
}
