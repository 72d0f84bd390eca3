/* container-internal.h - what container.c, monitor.c and container_log.c
 * share: the files of a container's directory and their readers and
 * writers (container_record.c), the output log (container_log.c) and the
 * teardown both the monitor and container_destroy() run
 * (container_teardown.c). */
#ifndef TESSERA_AGENT_CONTAINER_INTERNAL_H
#define TESSERA_AGENT_CONTAINER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

#define CT_RECORD "container.json"
#define CT_EXIT "exit.json"
#define CT_EXIT_RESERVE "exit.reserve"
#define CT_MONITOR_PID "monitor.pid"
#define CT_CONTAINER_PID "container.pid"
#define CT_MONITOR_LOG "monitor.log"
#define CT_RUNC_LOG "runc.log"
#define CT_LOG "log"
#define CT_LOG_OLD "log.1"
#define CT_LOG_BASE "log.base"
#define CT_RW "rw"             /* holds the overlay's upper/ and work/ (layer_disk.h) */
#define CT_RW_IMAGE "rw.img"   /* the writable layer's filesystem, when it has a limit */

/* dir/name (caller frees). */
char *container_file(const char *dir, const char *name);

/* container.json: everything needed to watch and tear down a container
 * without the spec or the agent's configuration. */
struct container_record {
        char *id;
        int64_t created_at;
        char *runc, *runc_root;
        char *cgroup_root, *cgroup_path;
        int64_t log_max;
        char *rootfs; /* the overlay mount point (bundle/rootfs) */
        char **layers; /* NULL-terminated, lowest first */
        /* network: all NULL for CONTAINER_NET_NONE */
        char *bridge, *netns, *veth, *ip, *gateway, *ipam_dir, *owners_dir;
        int prefix;
        /* user namespace: none when userns_size is 0 */
        uint32_t userns_base, userns_size;
        char *idmap_stage; /* where its idmapped copies are made while it starts */
        unsigned netgroup; /* its network group's number on the bridge (netfilter.h); 0: none (older records) */
        /* where the writable layer's own filesystem is mounted (layer_disk.h,
         * <dir>/rw); NULL: no limit, or a record from before limits */
        char *layer_disk;
};

int container_record_write(const char *dir, const struct container_record *rec, struct tess_error **err);
int container_record_read(const char *dir, struct container_record *ret, struct tess_error **err);
void container_record_release(struct container_record *rec);

/* exit.json, written once by the monitor (or by container_destroy() when
 * the monitor was lost). */
struct container_exit {
        int exit_code;     /* 128 + signal when killed; -1 unknown */
        int signal;
        bool oom_killed;
        bool monitor_lost; /* the monitor died first: the code is unknown */
        int64_t finished_at;
        bool has_usage;    /* the counters below were read as it ended */
        uint64_t cpu_ns, mem, io_read, io_write;
};

/* The room exit.json will need, taken while there is room (the monitor
 * does at start): container_exit_write() on a full disk gives it back and
 * writes, so that a container ending on a full disk keeps its exit code. */
int container_exit_reserve(const char *dir, struct tess_error **err);
int container_exit_write(const char *dir, const struct container_exit *ex, struct tess_error **err);
/* -ENOENT when the container has not exited. */
int container_exit_read(const char *dir, struct container_exit *ret, struct tess_error **err);

/* "PID [STARTTIME]" files: ours carry the start time, runc's do not (0). */
int container_pidfile_write(const char *path, pid_t pid, struct tess_error **err);
int container_pidfile_read(const char *path, pid_t *ret_pid, uint64_t *ret_start);

/* argv of `runc --root R [--log LOG --log-format json] ARGS...` into argv
 * (RUNC_ARGV_MAX entries, NULL-terminated; strings borrowed). */
#define RUNC_ARGV_MAX 16
void container_runc_argv(const struct container_record *rec, const char *log, const char *const *args,
                         const char *argv[RUNC_ARGV_MAX]);

/* Undo what container_create() set up on the host: unmount the rootfs,
 * delete the veth and the namespace file, release the address.  Each step
 * is done even when an earlier one failed; done twice is harmless. */
int container_teardown(const struct container_record *rec, struct tess_error **err);

/* The output log, written by the monitor: `log` and, once it passed half
 * of log_max, `log.1` before it; `log.base` holds the stream offset where
 * `log` begins. */
struct container_log;
int container_log_open(const char *dir, int64_t log_max, struct container_log **ret, struct tess_error **err);
int container_log_write(struct container_log *l, const void *p, size_t n, struct tess_error **err);
struct container_log *container_log_close(struct container_log *l);
static inline void container_log_closep(struct container_log **l)
{
        container_log_close(*l);
}

#endif
