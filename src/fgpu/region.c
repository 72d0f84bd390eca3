/* region.c - see region.h.  The creator writes the file under a temporary
 * name, initialises the lock and the header, and links it into place, so
 * nobody ever maps a half-made region; a process that loses the race maps
 * the winner's. */
#include "common/compat.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "fgpu/region.h"

/* This process's slot: cached, and found again after a fork. */
static __thread int slot_hint = -1;
static pid_t self_pid; /* 0 until asked, and again in a forked child */

static void forget_self_pid(void)
{
        __atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
}

static void watch_forks(void)
{
        pthread_atfork(NULL, NULL, forget_self_pid);
}

pid_t fgpu_self_pid(void)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, watch_forks);
        pid_t pid = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);
        if (pid == 0) {
                pid = getpid();
                __atomic_store_n(&self_pid, pid, __ATOMIC_RELAXED);
        }
        return pid;
}

uint64_t fgpu_proc_start(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        /* the command may hold spaces and parentheses: fields follow the last ')' */
        char *p = strrchr(buf, ')');
        if (!p)
                return 0;
        p++;
        /* field 3 (state) is the first after ')'; starttime is field 22 */
        for (int field = 3; field < 22 && p; field++)
                p = strchr(p + 1, ' ');
        return p ? strtoull(p + 1, NULL, 10) : 0;
}

static int64_t mono_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int init_lock(struct fgpu_region *r)
{
        pthread_mutexattr_t a;
        int e = pthread_mutexattr_init(&a);

        if (!e)
                e = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        if (!e)
                e = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        if (!e)
                e = pthread_mutex_init(&r->lock, &a);
        pthread_mutexattr_destroy(&a);
        return -e;
}

/* Make a fresh region file at path (atomically); -EEXIST if one is there. */
static int create_region(const char *path, char *err, size_t errlen)
{
        char tmp[4200];
        int n = snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
        if (n < 0 || (size_t)n >= sizeof(tmp)) {
                snprintf(err, errlen, "region path too long");
                return -ENAMETOOLONG;
        }
        unlink(tmp); /* a leftover of an earlier process with this pid */
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
                int e = errno;
                snprintf(err, errlen, "creating '%s': %s", tmp, strerror(e));
                return -e;
        }
        fchmod(fd, 0666); /* every user of the container charges through it */
        /* every page allocated now: a sparse file's pages are allocated
         * by the first write into the mapping, which on a full disk is a
         * SIGBUS, to the agent or to any process of the container */
        int r = -posix_fallocate(fd, 0, sizeof(struct fgpu_region));
        struct fgpu_region *reg = MAP_FAILED;
        if (r == 0)
                reg = mmap(NULL, sizeof(*reg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (r == 0 && reg == MAP_FAILED)
                r = -errno;
        if (r == 0)
                r = init_lock(reg);
        if (r == 0) {
                reg->size = sizeof(*reg);
                reg->version = FGPU_REGION_VERSION;
                __atomic_store_n(&reg->magic, FGPU_REGION_MAGIC, __ATOMIC_RELEASE);
                if (msync(reg, sizeof(*reg), MS_SYNC) < 0)
                        r = -errno;
        }
        if (reg != MAP_FAILED)
                munmap(reg, sizeof(*reg));
        close(fd);
        if (r == 0 && link(tmp, path) < 0)
                r = -errno;
        unlink(tmp);
        if (r < 0 && r != -EEXIST)
                snprintf(err, errlen, "creating the region '%s': %s", path, strerror(-r));
        return r;
}

int fgpu_region_open(const char *path, bool create, struct fgpu_region **ret, char *err, size_t errlen)
{
        struct stat st;
        int fd;

        *ret = NULL;
        for (int attempt = 0;; attempt++) {
                fd = open(path, O_RDWR | O_CLOEXEC);
                if (fd >= 0 || errno != ENOENT || !create || attempt > 2)
                        break;
                int r = create_region(path, err, errlen);
                if (r < 0 && r != -EEXIST)
                        return r;
        }
        if (fd < 0) {
                int e = errno;
                snprintf(err, errlen, "opening the region '%s': %s", path, strerror(e));
                return -e;
        }
        if (fstat(fd, &st) < 0 || st.st_size != (off_t)sizeof(struct fgpu_region)) {
                close(fd);
                snprintf(err, errlen, "'%s' is not a region of this version (size)", path);
                return -EPROTO;
        }
        struct fgpu_region *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (r == MAP_FAILED) {
                int e = errno;
                snprintf(err, errlen, "mapping '%s': %s", path, strerror(e));
                return -e;
        }
        if (__atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != FGPU_REGION_MAGIC || r->version != FGPU_REGION_VERSION ||
            r->size != sizeof(*r)) {
                munmap(r, sizeof(*r));
                snprintf(err, errlen, "'%s' is not a region of this version", path);
                return -EPROTO;
        }
        *ret = r;
        return 0;
}

void fgpu_region_close(struct fgpu_region *r)
{
        if (r)
                munmap(r, sizeof(*r));
}

/* dev[d].used changes under the lock but is read without it
 * (fgpu_region_used): stored atomically, so those reads are not races. */
static void set_used(struct fgpu_region *r, int d, uint64_t v)
{
        __atomic_store_n(&r->dev[d].used, v, __ATOMIC_RELAXED);
}

static bool proc_alive(const struct fgpu_region_proc *p)
{
        if (p->pid <= 0)
                return false;
        if (kill(p->pid, 0) < 0 && errno == ESRCH)
                return false;
        uint64_t start = fgpu_proc_start(p->pid);
        return start != 0 && start == p->start; /* a reused pid is another process */
}

/* Refund what a slot holds and free it (lock held). */
static void release_slot(struct fgpu_region *r, struct fgpu_region_proc *p)
{
        for (int d = 0; d < FGPU_REGION_DEVICES; d++) {
                set_used(r, d, r->dev[d].used - (p->used[d] <= r->dev[d].used ? p->used[d] : r->dev[d].used));
                p->used[d] = 0;
        }
        p->pid = 0;
        p->start = 0;
}

int fgpu_region_reclaim(struct fgpu_region *r)
{
        int n = 0;

        for (int i = 0; i < FGPU_REGION_PROCS; i++) {
                struct fgpu_region_proc *p = &r->procs[i];
                if (p->pid == 0 || proc_alive(p))
                        continue;
                release_slot(r, p);
                n++;
        }
        return n;
}

/* After a holder died mid-update: recount the totals from the slots. */
static void recount(struct fgpu_region *r)
{
        fgpu_region_reclaim(r);
        for (int d = 0; d < FGPU_REGION_DEVICES; d++) {
                uint64_t sum = 0;
                for (int i = 0; i < FGPU_REGION_PROCS; i++)
                        sum += r->procs[i].used[d];
                set_used(r, d, sum);
        }
}

void fgpu_region_lock(struct fgpu_region *r)
{
        int e = pthread_mutex_lock(&r->lock);
        if (e == EOWNERDEAD) {
                recount(r);
                pthread_mutex_consistent(&r->lock);
        }
}

void fgpu_region_unlock(struct fgpu_region *r)
{
        pthread_mutex_unlock(&r->lock);
}

/* This process's slot, claimed if needed (lock held); -1 if the table is full. */
static int my_slot(struct fgpu_region *r)
{
        pid_t pid = fgpu_self_pid();
        int free_slot = -1;

        if (slot_hint >= 0 && r->procs[slot_hint].pid == pid)
                return slot_hint;
        uint64_t start = fgpu_proc_start(pid);
        for (int pass = 0; pass < 2; pass++) {
                for (int i = 0; i < FGPU_REGION_PROCS; i++) {
                        if (r->procs[i].pid == pid && r->procs[i].start == start)
                                return slot_hint = i;
                        if (r->procs[i].pid == 0 && free_slot < 0)
                                free_slot = i;
                }
                if (free_slot >= 0)
                        break;
                fgpu_region_reclaim(r);
        }
        if (free_slot < 0)
                return -1;
        struct fgpu_region_proc *p = &r->procs[free_slot];
        memset(p, 0, sizeof(*p));
        p->pid = pid;
        p->start = start;
        return slot_hint = free_slot;
}

int fgpu_region_charge(struct fgpu_region *r, int d, uint64_t limit, uint64_t bytes)
{
        int ret = 0;

        if (d < 0 || d >= FGPU_REGION_DEVICES)
                return -ENOMEM;
        fgpu_region_lock(r);
        int s = my_slot(r);
        if (s < 0) {
                ret = -ENOMEM;
        } else if (limit && (r->dev[d].used > limit || bytes > limit - r->dev[d].used) &&
                   (fgpu_region_reclaim(r) == 0 || r->dev[d].used > limit || bytes > limit - r->dev[d].used)) {
                ret = -ENOMEM;
        } else {
                set_used(r, d, r->dev[d].used + bytes);
                r->procs[s].used[d] += bytes;
        }
        fgpu_region_unlock(r);
        return ret;
}

void fgpu_region_refund(struct fgpu_region *r, int d, uint64_t bytes)
{
        if (d < 0 || d >= FGPU_REGION_DEVICES)
                return;
        fgpu_region_lock(r);
        int s = my_slot(r);
        if (s >= 0) {
                uint64_t mine = r->procs[s].used[d];
                uint64_t n = bytes < mine ? bytes : mine;
                r->procs[s].used[d] -= n;
                set_used(r, d, r->dev[d].used - (n <= r->dev[d].used ? n : r->dev[d].used));
        }
        fgpu_region_unlock(r);
}

uint64_t fgpu_region_used(struct fgpu_region *r, int d)
{
        if (d < 0 || d >= FGPU_REGION_DEVICES)
                return 0;
        return __atomic_load_n(&r->dev[d].used, __ATOMIC_RELAXED);
}

uint64_t fgpu_region_used_live(struct fgpu_region *r, int d)
{
        if (d < 0 || d >= FGPU_REGION_DEVICES)
                return 0;
        fgpu_region_lock(r);
        fgpu_region_reclaim(r);
        uint64_t used = r->dev[d].used;
        fgpu_region_unlock(r);
        return used;
}

void fgpu_region_enter(struct fgpu_region *r)
{
        pid_t pid = fgpu_self_pid();
        uint64_t start = fgpu_proc_start(pid);

        fgpu_region_lock(r);
        for (int i = 0; i < FGPU_REGION_PROCS; i++)
                if (r->procs[i].pid == pid && r->procs[i].start == start)
                        release_slot(r, &r->procs[i]);
        fgpu_region_unlock(r);
}

/* Without the lock: the agent, in another pid namespace, must never be
 * the one to find the lock abandoned, or its recount would take the
 * container's live processes for dead ones.  util first, then util_ns
 * (release): who sees the new time sees the new figure. */
void fgpu_region_set_util(struct fgpu_region *r, int d, unsigned util)
{
        if (d < 0 || d >= FGPU_REGION_DEVICES)
                return;
        __atomic_store_n(&r->dev[d].util, util > 100 ? 100 : util, __ATOMIC_RELAXED);
        __atomic_store_n(&r->dev[d].util_ns, mono_ns(), __ATOMIC_RELEASE);
}
