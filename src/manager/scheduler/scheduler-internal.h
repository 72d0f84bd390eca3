/* scheduler-internal.h - the parts of the manager's scheduler (scheduler.c
 * drives; scheduler_snapshot.c reads the database into the pure
 * scheduler's input; scheduler_write.c writes a pass's decisions;
 * scheduler_reaper.c ends sessions by rule). */
#ifndef TESS_SCHEDULER_INTERNAL_H
#define TESS_SCHEDULER_INTERNAL_H

#include <stdint.h>

#include "common/strmap.h"
#include "sched/sched.h"

struct manager;
struct db_rows;

struct rgroup {
        char *name;
        struct sched_policy policy;
        int rr_cursor;
        /* slices of the snapshot's arrays (agents and pending are sorted by group) */
        int agent_start, nagents;
        int pending_start, npending;
};

/* Everything one tick knows, for every resource group. */
struct snapshot {
        struct sched_slots slots;
        struct rgroup *groups;
        int ngroups;
        struct db_rows *agent_rows;   /* row i = agents[i] */
        struct sched_agent *agents;
        int nagents;
        char ***device_ids;           /* device ids of agent i, for kernels.device_alloc */
        int64_t *alloc_gen;
        bool *agent_touched;
        struct db_rows *pending_rows; /* row i = pending[i] */
        struct sched_session *pending;
        int npending;
        int **designated;             /* owned arrays behind pending[i].designated */
        char **deps_detail;
        struct sched_scope *scopes;
        int nscopes, capscopes;
        struct strmap scope_idx;      /* "k:AK", "u:ID", "p:ID", "d:NAME" */
        struct strmap arch_idx;
        bool any_fair_share;
};

/* The resource groups and their parsed policies (a bad scheduler_opts is
 * logged and the defaults used). */
int rgroups_load(struct manager *m, struct rgroup **ret, int *ret_n, struct tess_error **err);
void rgroups_free(struct rgroup *g, int n);

/* Load the snapshot for `groups` (borrowed; their slices are filled in).
 * `retries` maps session ids to failed tries kept by this manager (soft
 * state: a restart starts again from 0). */
int snapshot_load(struct manager *m, struct snapshot *s, struct rgroup *groups, int ngroups, int64_t now,
                  const struct strmap *retries, struct tess_error **err);
void snapshot_free(struct snapshot *s);
/* The pure scheduler's input for group g (views into the snapshot). */
void snapshot_input(struct snapshot *s, struct rgroup *g, int64_t now, struct sched_input *in);

/* Write group g's decisions in one transaction and publish the events of
 * the placed sessions after commit; -EAGAIN when an agent changed under
 * us (another scheduler): nothing was written.  Sessions to cancel are
 * cancelled afterwards. */
int snapshot_write(struct manager *m, struct snapshot *s, struct rgroup *g, const struct sched_output *out,
                   int64_t now, struct tess_error **err);

/* Store the occupancy of agents no pass touched where it changed (their
 * sessions ended).  -EAGAIN as above. */
int snapshot_write_occupancy(struct manager *m, struct snapshot *s, struct tess_error **err);

/* scheduler_reaper.c */
/* When this manager first saw each agent's current last_heartbeat, on its
 * own monotonic clock: silence is measured there, so that a step of any
 * wall clock neither makes agents silent nor hides a silence. */
struct beats_seen {
        struct strmap index; /* agent id -> position */
        int64_t *value;      /* last_heartbeat as stored */
        int64_t *seen_at;    /* monotonic usec */
};

void beats_seen_init(struct beats_seen *b);
void beats_seen_release(struct beats_seen *b);
/* Silent agents become UNREACHABLE, then LOST (scheduler_reaper.c);
 * `seen` is the last tick's observations, replaced by this one's. */
int judge_agents(struct manager *m, struct beats_seen *seen, int64_t now, struct tess_error **err);
int reap_expired_sessions(struct manager *m, const struct rgroup *groups, int ngroups, int64_t now,
                          struct tess_error **err);
int reap_terminations(struct manager *m, struct tess_error **err);
/* With conf.terminate_inactive_users: the sessions of inactive users end
 * (owner-inactive): pending ones CANCELLED, the others TERMINATING. */
int reap_inactive_owners(struct manager *m, struct tess_error **err);

#endif
