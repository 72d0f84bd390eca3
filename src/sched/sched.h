/* sched.h - the scheduler's decisions: which pending session goes on which agent.
 *
 * Pure and deterministic: no I/O, no clock, no database, no globals.  A
 * caller describes one resource group - its agents with their devices, the
 * quota scopes (keypairs, users, projects, domains) with what they occupy,
 * and the pending sessions - and calls sched_pass().  The pass orders the
 * queue by priority band and the group's policy, checks each session's
 * predicates, picks agents and GPU devices, updates the agents and scopes in
 * place, and reports what it placed and why the others still wait.
 *
 * Two callers run the same code: the manager (src/manager/scheduler/scheduler.c),
 * which builds the input from the database and writes the placements in one
 * transaction, and the simulator (src/sim), which keeps the input in memory
 * and advances a virtual clock.
 *
 * Resources are fixed-point vectors (struct sched_vec) indexed by slot;
 * the slot table (struct sched_slots) maps names to indices.  cpu, mem,
 * cuda.device and cuda.shares have fixed indices; an agent's extra slots
 * are interned after them.  Values are quanta of src/common/slots.h. */
#ifndef TESS_SCHED_H
#define TESS_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"
#include "common/slots.h"

#define SCHED_NSLOTS 8
#define SCHED_MAX_DEVICES 32 /* GPUs on one agent */

enum {
        SCHED_CPU,
        SCHED_MEM,
        SCHED_GPU_DEVICE, /* cuda.device: whole GPUs, capacity 1 per device */
        SCHED_GPU_SHARES, /* cuda.shares: fGPU quanta, fgpu_per_gpu * 100 per device */
        SCHED_FIRST_EXTRA,
};

struct sched_vec {
        int64_t v[SCHED_NSLOTS];
};

struct sched_slots {
        int n;
        char name[SCHED_NSLOTS][SLOT_NAME_MAX];
};

/* The table with the four known slots. */
void sched_slots_init(struct sched_slots *t);
/* Index of `name`, interned when new; -ENOSPC with a message when full. */
int sched_slots_intern(struct sched_slots *t, const char *name, struct tess_error **err);
int sched_slots_find(const struct sched_slots *t, const char *name); /* -1 if absent */
/* Convert between named slots and vectors; absent slots are 0. */
int sched_vec_from_slots(struct sched_slots *t, const struct slots *s, struct sched_vec *ret, struct tess_error **err);
void sched_vec_to_slots(const struct sched_slots *t, const struct sched_vec *v, struct slots *ret);
/* A vector with every slot SLOT_INFINITY (no limit). */
void sched_vec_unlimited(struct sched_vec *v);
bool sched_vec_is_zero(const struct sched_vec *v);
/* "cpu 2, mem 4 GiB, 0.5 fGPU" (only non-zero slots); returns buf. */
char *sched_vec_format(const struct sched_slots *t, const struct sched_vec *v, char *buf, size_t len);

/* ---- the resource group's policy ---- */

enum sched_order {
        SCHED_FIFO,
        SCHED_LIFO,
        SCHED_DRF,        /* dominant resource fairness over users, current occupancy */
        SCHED_FAIR_SHARE, /* decayed historical usage per user */
};

enum sched_select {
        SCHED_CONCENTRATED, /* fill the fullest agent that fits */
        SCHED_DISPERSED,    /* spread over the emptiest */
        SCHED_ROUNDROBIN,   /* the next agent that fits after the last used */
};

struct sched_policy {
        enum sched_order order;
        enum sched_select select;
        /* fifo/lifo: a session that found no room blocks the ones behind it
         * until it has failed more than this many times (head-of-line
         * skipping); 0 = never block. */
        int retries_to_skip;
        /* Any policy: a session that failed this many times blocks the ones
         * behind it again, so the group drains until it fits (the bound on
         * starvation); 0 = never.  A session that would not fit any of its
         * candidate agents even empty never blocks. */
        int reserve_after;
        /* May a request of at most one GPU be split over several devices? */
        bool allow_fragmentation;
        int64_t pending_timeout;      /* usec, 0 = none (applied by the caller) */
        int64_t fair_share_half_life; /* usec (applied by the caller) */
};

/* Parse a resource group's `scheduler` and `scheduler_opts`:
 *   {"agent_selection": "concentrated"|"dispersed"|"roundrobin",
 *    "num_retries_to_skip": 5, "reserve_after_retries": 50,
 *    "allow_fragmentation": false, "pending_timeout": 0 (seconds),
 *    "fair_share_half_life": 604800 (seconds)}
 * Unknown keys and bad values are -EINVAL with a message naming them. */
int sched_policy_parse(const char *scheduler, const json_t *opts, struct sched_policy *ret, struct tess_error **err);
const char *sched_order_name(enum sched_order o);
const char *sched_select_name(enum sched_select s);

/* ---- the cluster: agents and quota scopes ---- */

struct sched_device {
        int64_t cap;  /* quanta of the agent's GPU slot */
        int64_t used;
};

struct sched_agent {
        const char *id;   /* borrowed */
        int arch;         /* caller's interned architecture id */
        bool schedulable; /* ALIVE and open for new sessions */
        struct sched_vec cap, used;
        int gpu_slot;     /* SCHED_GPU_DEVICE, SCHED_GPU_SHARES or -1 (no GPU) */
        int ndev;
        struct sched_device dev[SCHED_MAX_DEVICES];
};

/* Set up an agent's GPU devices: n devices of `per_device` quanta each in
 * slot `gpu_slot`; cap.v[gpu_slot] becomes their sum. */
void sched_agent_set_gpus(struct sched_agent *a, int gpu_slot, int n, int64_t per_device);

enum sched_scope_kind {
        SCHED_KEYPAIR,
        SCHED_USER,
        SCHED_PROJECT,
        SCHED_DOMAIN,
        _SCHED_SCOPE_KINDS,
};

const char *sched_scope_kind_name(enum sched_scope_kind k); /* "keypair", "user", ... */

/* One quota scope.  `used` is what its sessions occupy in every resource
 * group; a pass adds what it places. */
struct sched_scope {
        enum sched_scope_kind kind;
        struct sched_vec limit;      /* SLOT_INFINITY where unlimited */
        struct sched_vec used;
        int64_t max_sessions;        /* keypair concurrency; -1 = unlimited */
        int64_t sessions;            /* sessions occupying resources */
        int64_t max_containers;      /* keypair: kernels per session; -1 = unlimited */
        /* keypair: its limits (max_sessions, limit) are measured against
         * the owner's sessions and slots, i.e. the session's SCHED_USER
         * scope, all the user's keypairs together; false: this keypair's */
        bool per_owner;
        double fair_share_usage;     /* user: decayed weighted usage (fair-share) */
};

/* ---- the queue ---- */

enum sched_deps {
        SCHED_DEPS_OK,      /* none, or all TERMINATED with SUCCESS */
        SCHED_DEPS_WAITING, /* some still running or pending */
        SCHED_DEPS_FAILED,  /* some ended otherwise: the session is cancelled */
};

struct sched_session {
        const char *id;     /* borrowed */
        const char *name;   /* borrowed, for messages */
        int64_t priority;   /* higher first */
        int64_t enqueued_at;
        struct sched_vec req; /* per kernel */
        int cluster_size;
        bool multi_node;    /* kernels may go to different agents */
        int arch;
        int scope[_SCHED_SCOPE_KINDS]; /* index into the scopes, or -1 */
        int64_t starts_at;  /* batch: not before (usec), 0 = now */
        enum sched_deps deps;
        const char *deps_detail; /* the blocking dependency's name, for messages */
        bool rg_allowed;    /* may this owner use this resource group? */
        struct sched_vec image_min;
        int ndesignated;
        const int *designated; /* agent indices (admin's agent_list) */
        int retries;        /* failed placements so far; the pass increments it */
};

/* ---- the pass ---- */

struct sched_input {
        const struct sched_slots *slots;
        struct sched_policy policy;
        struct sched_agent *agents;
        int nagents;
        struct sched_scope *scopes;
        int nscopes;
        struct sched_session *pending;
        int npending;
        int64_t now;
        int rr_cursor; /* roundrobin position, carried between passes */
        /* Leave every decision's msg empty (the predicate names are still
         * set): for callers that never show the reasons, such as the
         * simulator; formatting them is most of a pass's cost when little
         * fits. */
        bool no_messages;
};

struct sched_device_alloc {
        int16_t dev;
        int64_t amount;
};

struct sched_kernel_alloc {
        int agent;
        int ndev;
        struct sched_device_alloc dev[SCHED_MAX_DEVICES];
};

enum sched_outcome {
        SCHED_PLACED,
        SCHED_WAITING,
        SCHED_CANCEL, /* can never start (a dependency failed) */
};

#define SCHED_MSG_MAX 256

struct sched_decision {
        int session;               /* index into pending */
        enum sched_outcome outcome;
        /* first failed check's name, NULL when placed: one of
         * sched_predicate_names, or "agent_resources" (no agent has room) or
         * "queue_order" (waiting behind a session that blocks the queue) */
        const char *predicate;
        char msg[SCHED_MSG_MAX];   /* why it waits, for status_data */
        struct sched_kernel_alloc *kernels; /* cluster_size entries when placed */
};

struct sched_output {
        struct sched_decision *d; /* one per pending session, in the order tried */
        int n;
        int placed;
};

/* Run one pass.  Agents and scopes are updated with every placement;
 * `pending[i].retries` grows for sessions that found no room; rr_cursor
 * moves under roundrobin.  -EINVAL with a message when the input is
 * malformed (cluster size < 1, a scope index out of range, an agent with
 * devices but no GPU slot): then nothing was changed.  *out is always set;
 * free it with sched_output_free().  Cost: about log(agents) per session
 * tried on long queues (an index is built per pass), a scan of the agents
 * on short ones. */
int sched_pass(struct sched_input *in, struct sched_output *out, struct tess_error **err);
void sched_output_free(struct sched_output *out);

/* The names of the checks, in the order they run (for status_data's
 * passed/failed lists). */
extern const char *const sched_predicate_names[];

/* What an agent's silence makes it (agent_verdict.c).  Silence counts
 * from its last heartbeat, or from `heard_from` when that is later: the
 * time since which the caller could have heard and stored one (the
 * manager's start, the end of a database outage).  Silent for
 * SCHED_SILENT_BEATS of the heartbeat intervals it promised, it is
 * UNREACHABLE; silent for lost_after (0: never), LOST.  A LOST agent stays
 * LOST (only its own heartbeat brings it back); otherwise the state it is
 * in is kept.  Times in any one unit (usec). */
enum sched_agent_state {
        SCHED_AGENT_ALIVE,
        SCHED_AGENT_UNREACHABLE,
        SCHED_AGENT_LOST,
};

#define SCHED_SILENT_BEATS 3

enum sched_agent_state sched_agent_verdict(enum sched_agent_state now_state, int64_t last_heartbeat,
                                           int64_t heartbeat_interval, int64_t heard_from, int64_t now,
                                           int64_t lost_after);

#endif
