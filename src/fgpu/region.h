/* region.h - the accounting region all processes of one container share
 * (region.c): a file mapped shared, with one robust process-shared lock.
 *
 * The agent creates it (fgpu_region_open with create) in the directory it
 * mounts at /opt/tessera/fgpu/run, and writes each device's measured
 * utilization into it (fgpu_region_set_util); the hook in every process
 * charges and refunds memory, and runs the SM limiter, through it.  Used
 * standalone, the first process creates it.  The layout is versioned: a
 * process that finds another version refuses it (and fails closed).
 *
 * Memory: used[d] is the sum of the charges of the process slots; a slot
 * is (pid, start time), so a reused pid is a new process; slots of dead
 * processes (kill -9 included) are reclaimed when a charge would not fit,
 * and when the lock is found abandoned (EOWNERDEAD). */
#ifndef TESS_FGPU_REGION_H
#define TESS_FGPU_REGION_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FGPU_REGION_MAGIC   0x55504746u /* "FGPU" */
#define FGPU_REGION_VERSION 2u /* 2: the limiter's probe_ns */
#define FGPU_REGION_DEVICES 16
#define FGPU_REGION_PROCS   1024

struct fgpu_region_proc {
        int32_t pid; /* 0: free */
        uint32_t pad;
        uint64_t start; /* /proc/<pid>/stat starttime */
        uint64_t used[FGPU_REGION_DEVICES];
};

struct fgpu_region_device {
        uint64_t used; /* bytes charged by the container */
        uint32_t util; /* percent of time busy, as the agent measured it */
        uint32_t pad;
        int64_t util_ns; /* CLOCK_MONOTONIC when util was written; 0: never */
        /* the SM limiter's state (limiter.c) */
        double tokens;      /* work units available (may be negative: debt) */
        double rate;        /* work units per ns at the limit; 0: not calibrated */
        int64_t last_ns;    /* last refill */
        double work;        /* work units launched since the last control step */
        int64_t step_ns;    /* last control step */
        int32_t controller; /* pid running the control steps */
        uint32_t pad2;
        int64_t controller_ns;
        int64_t probe_ns; /* when the running unthrottled probe began; 0: none */
};

struct fgpu_region {
        uint32_t magic, version;
        uint64_t size;
        pthread_mutex_t lock; /* robust, process-shared */
        struct fgpu_region_device dev[FGPU_REGION_DEVICES];
        struct fgpu_region_proc procs[FGPU_REGION_PROCS];
};

/* Map the region at path; create: make it if missing (mode 0666, for the
 * container's users).  0, or -errno with a message in err. */
int fgpu_region_open(const char *path, bool create, struct fgpu_region **ret, char *err, size_t errlen);
void fgpu_region_close(struct fgpu_region *r);

/* Lock, recovering an abandoned lock (the holder died). */
void fgpu_region_lock(struct fgpu_region *r);
void fgpu_region_unlock(struct fgpu_region *r);

/* Charge bytes to this process on device d if the container stays within
 * limit (0: no limit): 0, or -ENOMEM (nothing charged). */
int fgpu_region_charge(struct fgpu_region *r, int d, uint64_t limit, uint64_t bytes);
void fgpu_region_refund(struct fgpu_region *r, int d, uint64_t bytes);
/* What the container uses on d. */
uint64_t fgpu_region_used(struct fgpu_region *r, int d);
/* The same, after reclaiming the slots of processes that are gone: what
 * the container reports (a dead process's memory is free again). */
uint64_t fgpu_region_used_live(struct fgpu_region *r, int d);
/* A process image starting (the hook's first call after exec) holds
 * nothing yet: a slot of this pid and start time is its former image's,
 * and is refunded. */
void fgpu_region_enter(struct fgpu_region *r);
/* Free the slots of processes that are gone; how many. (lock held) */
int fgpu_region_reclaim(struct fgpu_region *r);

/* The agent's measurement of device d's utilization (percent); takes no
 * lock (see region.c). */
void fgpu_region_set_util(struct fgpu_region *r, int d, unsigned util);

/* /proc/<pid>/stat's starttime, 0 if the process is gone. */
uint64_t fgpu_proc_start(pid_t pid);

/* getpid() without its system call on every charge and launch: cached,
 * and forgotten in the child of a fork. */
pid_t fgpu_self_pid(void);

#endif
