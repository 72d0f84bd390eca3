/* agent.h - the agent daemon (`tessera agent --config FILE`): one per node.
 *
 * It tells the manager what the node offers (heartbeat: slots and GPU
 * devices), asks it what to run (a long poll of the desired kernels, see
 * src/manager/agents/agent_sync.c), runs and stops kernels as containers, and
 * reports what happened to them (events kept on disk until acknowledged).
 * Everything it must remember lives in state_dir, written atomically, so
 * that a restart, or a crash, re-adopts running containers untouched.
 *
 *   agent_main.c     start-up, the main loop
 *   agent_conf.c     the configuration table
 *   devices.c        cpu, mem and mock GPUs: what the node offers
 *   manager_link.c   signed HTTP to the manager (libcurl)
 *   retry.c          when to try the manager again (backoff with jitter)
 *   outbox.c         kernel events until the manager acknowledges them
 *   kernels.c        desired vs local kernels: start, stop, forget
 *   kernel_runtime.c one kernel's image and container (blocking work)
 *   image_budget_loop.c  the image store kept within image_disk_budget
 *   agent_http.c     the manager's requests to running kernels (execute, files, apps)
 *   agent_tunnel.c   tunnels into kernels' network namespaces (the app proxy)
 *   runner_client.c  the runner's socket in each container (execute, files, terminals) */
#ifndef TESS_AGENT_H
#define TESS_AGENT_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/conf.h"
#include "common/error.h"

struct agent_conf {
        char *manager;             /* http://HOST:PORT */
        char *id;                  /* default: the host name */
        char *state_dir;
        char *cluster_secret_file; /* default: state_dir/cluster.secret */
        char *resource_group;
        char *log_level;
        int64_t heartbeat_interval; /* usec */
        uint64_t reserved_cpu;      /* cores kept for the host */
        uint64_t reserved_mem;      /* bytes kept for the host */
        char *gpu_plugin;           /* auto, cuda, mock or none */
        char *nvml_library;         /* the cuda plugin's NVML */
        uint64_t reserved_gpu_mem;  /* bytes of each GPU kept out of fGPU shares */
        char *fgpu_library;         /* libtessera-fgpu.so; NULL: beside tessera */
        char *mock_cuda_library;    /* the mock GPUs' driver and NVML; NULL: beside tessera */
        char *mock_nvml_library;
        uint64_t mock_gpus;         /* fake GPUs (the mock accelerator) */
        uint64_t mock_gpu_memory;
        uint64_t mock_gpu_sm;
        char *mock_gpu_model;
        char *fgpu_per_gpu; /* fGPU one GPU is worth; "0": whole GPUs (cuda.device) */
        char *runc;         /* the OCI runtime */
        bool cgroup_favordynmods; /* cgroup_tune.h */
        char *runner;       /* the runner binary (default: tessera-runner beside tessera) */
        bool userns;          /* containers in a user namespace (container/userns.h) */
        uint64_t userns_base; /* its root's host uid */
        char *network;      /* "bridge" or "none" */
        char *bridge, *bridge_cidr;
        char *listen;  /* HOST:PORT of the agent's HTTP server (agent_http.c) */
        char *address; /* what it tells the manager; NULL: found out */
        char *vfolder_hosts; /* "NAME=PATH,...": where folders are (vfolder_mount.c) */
        uint64_t image_disk_budget; /* bytes the image store may take; 0: no budget (image_budget_loop.c) */
        uint64_t container_disk;    /* bytes of each container's writable layer; 0: unlimited (layer_disk.h) */
        int64_t terminal_keep;      /* usec a named terminal lives without a socket (pty_keep.h); 0: not kept */
        uint64_t terminal_keep_max; /* detached named terminals per kernel */
};

extern const struct conf_opt agent_conf_opts[];

struct gpu_stats;
struct pty_keep;

/* What the agent's parts share (agent_main.c owns it). */
struct agent_ctx {
        struct agent_conf *conf;
        struct outbox *outbox;
        struct image_store *images;
        const char *secret; /* the cluster secret, hex */
        const struct agent_devices *devices;
        struct gpu_stats *gpu_stats; /* NVML for whole GPUs' lastStat (gpu_stats.h); NULL: none */
        struct pty_keep *terminals;  /* named terminals kept between sockets (pty_keep.h); NULL: none */
        /* wake the thread that sends events, or the one that reconciles */
        void (*wake_reporter)(struct agent_ctx *ctx);
        void (*wake_reconciler)(struct agent_ctx *ctx);
        void *loop_data;
};

static inline void agent_wake_reporter(struct agent_ctx *ctx)
{
        ctx->wake_reporter(ctx);
}

static inline void agent_wake_reconciler(struct agent_ctx *ctx)
{
        ctx->wake_reconciler(ctx);
}

int agent_main(int argc, char **argv);

/* ---- devices.c ---- */

struct agent_devices {
        int ncores;
        int cores[1024];   /* usable CPU numbers (allowed cpuset minus the reserve) */
        uint64_t mem;      /* bytes offered */
        struct gpu_info *gpu; /* the GPUs, by plugin ordinal */
        size_t ngpu;
        const char *gpu_plugin; /* "cuda", "mock" or "none" */
        const char *gpu_slot;   /* "cuda.shares" or "cuda.device" */
        int64_t gpu_per_device; /* quanta of gpu_slot one GPU holds */
        json_t *gpus;      /* as reported: [{"id", "slot", "capacity", "model", "memory", "sm", "plugin", "index"}] */
        json_t *slots;     /* {"cpu": "8", "mem": "...", "cuda.shares": "2"} */
};

int agent_devices_probe(const struct agent_conf *conf, struct agent_devices *ret, struct tess_error **err);
void agent_devices_release(struct agent_devices *d);

/* ---- outbox.c ---- */

struct outbox;

int outbox_open(const char *dir, struct outbox **ret, struct tess_error **err);
struct outbox *outbox_close(struct outbox *o);
/* Append an event (its "seq" is assigned here, also in *event); on disk
 * on return, or, when the disk refuses, kept in memory until
 * outbox_flush() can write it: never lost while the agent runs. */
void outbox_add(struct outbox *o, json_t *event);
/* Write the events kept in memory, if there is room now. */
void outbox_flush(struct outbox *o);
/* The first max events not yet acknowledged, oldest first (a new reference). */
json_t *outbox_pending(struct outbox *o, size_t max);
/* Forget events up to and including seq. */
void outbox_ack(struct outbox *o, int64_t seq);
size_t outbox_count(struct outbox *o);

/* ---- manager_link.c ---- */

struct manager_link;

/* A request in flight is abandoned soon after *abort becomes non-zero. */
int manager_link_new(const char *url, const char *agent_id, const char *secret, volatile sig_atomic_t *abort,
                     struct manager_link **ret, struct tess_error **err);
struct manager_link *manager_link_free(struct manager_link *l);
/* POST a JSON body to PATH signed as the agent; *ret gets the JSON answer
 * of a 2xx, else an error with the manager's message.  Blocks up to
 * timeout_sec. */
int manager_link_post(struct manager_link *l, const char *path, json_t *body, long timeout_sec, json_t **ret,
                      struct tess_error **err);
/* Of the last post: the HTTP status of its answer (0: none came, the
 * manager was not reached) and the wait the answer asked for (Retry-After,
 * usec; 0: none); what retry.h decides on. */
long manager_link_status(const struct manager_link *l);
int64_t manager_link_retry_after(const struct manager_link *l);

#endif
