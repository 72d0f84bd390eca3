/* container.h - the agent's containers, run through the OCI runtime (runc).
 *
 * Each container is a directory <state_dir>/containers/<id>/ that holds all
 * there is to know about it (see docs/design/containers.md):
 *
 *   container.json   the record: runc, cgroup, network and rootfs settings
 *   bundle/          the OCI bundle: config.json, rootfs/ (the overlay mount)
 *   upper/ work/     the overlay's writable layer
 *   monitor.pid      "PID STARTTIME" of the container's monitor
 *   container.pid    the container's init on the host (written by runc)
 *   exit.json        how it ended: {"exit_code", "signal", "oom_killed", ...}
 *   log, log.1       its stdout+stderr (the last log_max bytes, two files)
 *   runner/          bind-mounted at /opt/tessera/run (the runner's socket)
 *
 * A small monitor process (`tessera _monitor`, monitor.c) owns each running
 * container, so containers outlive the agent: an agent that restarts lists
 * the directories (container_list) and asks each for its state.  The agent
 * never needs to be the containers' parent.  Files are written atomically.
 *
 * Ids become paths, runc ids and cgroup names: [A-Za-z0-9_.-]{1,64}, not
 * "." or "..". */
#ifndef TESSERA_AGENT_CONTAINER_H
#define TESSERA_AGENT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/error.h"

#define CONTAINER_ID_MAX 64
#define CONTAINER_RUNNER_PATH "/opt/tessera/runner" /* the runner binary, read-only */
#define CONTAINER_RUNNER_DIR "/opt/tessera/run"     /* the runner's socket directory */

/* Where and how the agent runs containers; every field has a default. */
struct container_config {
        const char *state_dir;      /* required: containers are <state_dir>/containers/<id> */
        const char *runc;           /* NULL: "runc" from PATH */
        const char *runc_root;      /* runc's state; NULL: "/run/tessera/runc" */
        const char *cgroup_parent;  /* NULL: "tessera" (cgroups are /<parent>/<id>) */
        const char *cgroup_root;    /* NULL: "/sys/fs/cgroup" */
        const char *netns_dir;      /* NULL: "/run/tessera/netns" */
        const char *bridge;         /* NULL: "tessera0" */
        const char *bridge_cidr;    /* the bridge's address; NULL: "10.88.0.1/16" */
        const char *monitor_exe;    /* a binary that runs monitor_main() for `_monitor`;
                                       NULL: "/proc/self/exe" */
        bool no_userns;             /* run containers as host root (no user namespace) */
        uint32_t userns_base;       /* container ids 0.. are host ids base..; 0: USERNS_DEFAULT_BASE */
        uint32_t userns_size;       /* ids mapped; 0: USERNS_DEFAULT_SIZE (65536) */
        const char *idmap_dir;      /* idmapped copies while a container starts; NULL: "/run/tessera-idmap" */
        int64_t log_max;            /* bytes of output kept; 0: 10 MiB */
        int64_t start_timeout_usec; /* create -> running; 0: 60 s */
};

enum container_network {
        CONTAINER_NET_BRIDGE, /* a veth on the agent's bridge, an address of its subnet */
        CONTAINER_NET_NONE,   /* loopback only */
};

struct container_mount {
        const char *source;      /* host path */
        const char *destination; /* absolute path inside */
        bool readonly;
        bool single; /* "bind", not "rbind": mounts beneath source stay out (folders) */
};

/* A device node given to the container (GPUs): created inside at the same
 * path and allowed in the device cgroup.  type 0: container_create() stats
 * the host node for type, major and minor. */
struct container_device {
        const char *path;
        char type; /* 'c', 'b' or 0 */
        uint32_t major, minor;
};

/* What to run.  Arrays are borrowed; NULL-terminated ones say so. */
struct container_spec {
        const char *id;
        const char *const *layers; /* unpacked image layers, lowest first (image_info.layer_dirs) */
        const char *const *args;   /* the init's argv, NULL-terminated, not empty */
        const char *const *env;    /* "KEY=VALUE", NULL-terminated; may be NULL */
        const char *cwd;           /* NULL: "/" */
        const char *hostname;      /* NULL: the id (cut at 63) */
        uint32_t uid, gid;
        const uint32_t *extra_gids;
        size_t n_extra_gids;
        int64_t cpu;      /* the cpu slot in 1/1000 core: the CFS quota; 0: none */
        const int *cores; /* allotted host cores (cpuset); n_cores 0: all */
        size_t n_cores;
        const char *mems;     /* cpuset.mems, e.g. "0"; NULL: inherited */
        int64_t memory;       /* bytes, memory and memory+swap alike; 0: unlimited */
        int64_t shm_size;     /* /dev/shm bytes; 0: 64 MiB */
        int64_t pids_limit;   /* 0: 4096 */
        uint64_t nofile;      /* RLIMIT_NOFILE; 0: 1048576 */
        const struct container_mount *mounts;
        size_t n_mounts;
        const struct container_device *devices;
        size_t n_devices;
        const char *runner_path; /* host file bound at CONTAINER_RUNNER_PATH; NULL: none */
        enum container_network network;
        /* who it reaches on the bridge: the containers of the same group
         * (a session's kernels); NULL: its own group (the id) */
        const char *network_group;
        /* the writable layer's size (layer_disk.h): what the container may
         * write outside its mounts; 0: unlimited, on the agent's disk */
        int64_t disk_limit;
};

enum container_status {
        CONTAINER_RUNNING, /* its monitor is alive (or, monitor lost, runc says running) */
        CONTAINER_EXITED,  /* exit.json is written */
        CONTAINER_UNKNOWN, /* no monitor, no exit record: lost, or half created */
};

struct container_state {
        enum container_status status;
        pid_t pid;           /* the container's init on the host; 0 if not known */
        pid_t monitor_pid;   /* 0 when the monitor is gone */
        bool monitor_lost;   /* running, but its monitor is gone (exit code will be lost) */
        int exit_code;       /* EXITED: the code, 128 + signal when killed; -1: unknown */
        int signal;          /* EXITED: the signal that killed it, else 0 */
        bool oom_killed;     /* EXITED: the memory cgroup's OOM killer fired */
        int64_t created_at;  /* usec since the epoch */
        int64_t finished_at; /* EXITED: usec since the epoch */
        bool has_usage;      /* EXITED: its monitor read its final counters */
        uint64_t cpu_ns, mem, io_read, io_write; /* EXITED: those counters */
        char ip[16];         /* its address on the bridge, "" when none */
};

/* Counters since the container started (0 where the host does not tell). */
struct container_stats {
        uint64_t cpu_usage_ns;
        uint64_t mem_usage_bytes; /* v1 memory.usage_in_bytes, v2 memory.current */
        uint64_t mem_peak_bytes;  /* v1 memory.max_usage_in_bytes, v2 memory.peak */
        uint64_t mem_cache_bytes; /* page cache: v1 total_cache, v2 file */
        uint64_t pids;
        uint64_t io_read_bytes, io_write_bytes;
        uint64_t net_rx_bytes, net_tx_bytes; /* all interfaces but lo */
};

bool container_id_valid(const char *id);

/* Prepare the network, the rootfs and the bundle, start the monitor and
 * wait until the container runs.  On failure everything is undone and the
 * directory removed; the error carries runc's message.  EEXIST when the id
 * is taken. */
int container_create(const struct container_config *cfg, const struct container_spec *spec,
                     struct tess_error **err);

/* Send a signal to the container's init (runc kill). */
int container_kill(const struct container_config *cfg, const char *id, int sig, struct tess_error **err);

/* Stop the container (SIGTERM, then SIGKILL after grace_usec), wait for its
 * exit record, unmount its rootfs, remove its network.  The directory, with
 * the log and exit.json, stays until container_remove().  Destroying an
 * exited container only releases what is left. */
int container_destroy(const struct container_config *cfg, const char *id, int64_t grace_usec,
                      struct tess_error **err);

/* Delete the directory of a container that is not running (EBUSY if it is). */
int container_remove(const struct container_config *cfg, const char *id, struct tess_error **err);

/* ENOENT when there is no such container. */
int container_state(const struct container_config *cfg, const char *id, struct container_state *ret,
                    struct tess_error **err);

/* Whether the container's end is recorded (container_state() would say
 * CONTAINER_EXITED): one access(), for callers that watch many. */
bool container_exit_recorded(const struct container_config *cfg, const char *id);
/* Whether its monitor still runs (its pid file and /proc: cheap). */
bool container_monitor_alive(const struct container_config *cfg, const char *id);

/* Every container on disk, sorted.  OUT ret_ids - caller frees each and
 * the array. */
int container_list(const struct container_config *cfg, char ***ret_ids, size_t *ret_n, struct tess_error **err);
/* The image layer dirs every container on disk was created on, running or
 * exited (container_layers.c).  OUT ret - NULL-terminated; caller frees
 * each and the array. */
int container_layers_in_use(const struct container_config *cfg, char ***ret, struct tess_error **err);

int container_stats(const struct container_config *cfg, const char *id, struct container_stats *ret,
                    struct tess_error **err);

/* The container's processes (host pids, from its cgroup); *ret: caller
 * frees. */
int container_pids(const struct container_config *cfg, const char *id, pid_t **ret, size_t *ret_n,
                   struct tess_error **err);

/* Append up to `max` bytes of output from stream offset `offset` (bytes
 * since the container started) to `out`.  Output older than what is kept
 * is skipped: RET ret_next - the offset after the bytes appended. */
int container_log_read(const struct container_config *cfg, const char *id, int64_t offset, size_t max,
                       struct buf *out, int64_t *ret_next, struct tess_error **err);

/* The uid the agent's processes appear as inside the container's user
 * namespace (the runner's --agent-uid): the kernel's overflow uid with
 * one, 0 without. */
uint32_t container_agent_uid_inside(const struct container_config *cfg);

/* The container's directory (caller frees). */
char *container_dir(const struct container_config *cfg, const char *id);

/* The overlay's upper dir, what the container changed (caller frees). */
char *container_upper_dir(const struct container_config *cfg, const char *id);

#endif
