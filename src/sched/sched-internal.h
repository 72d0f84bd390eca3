/* sched-internal.h - pieces of the scheduler shared between its files.
 *
 * A pass (pass.c) walks the queue in order (order.c), runs the checks
 * (predicates.c) and asks select.c for agents and devices.  select.c finds
 * agents either by scanning every candidate (small passes, designated
 * agents) or through the pass's agent index (index.c): the agents grouped by
 * architecture and GPU kind, kept sorted by what they have free and in a
 * max-tree, so that one decision costs about log(agents) instead of a scan.
 * Both ways give the same answers; tests run a pass both ways and compare. */
#ifndef TESS_SCHED_INTERNAL_H
#define TESS_SCHED_INTERNAL_H

#include "sched/sched.h"

/* ---- predicates.c: the checks before placement ---- */

/* Run the checks for session s; on failure fill *pred and msg (unless
 * msg is NULL: no reason wanted) and return SCHED_WAITING or SCHED_CANCEL;
 * SCHED_PLACED means all passed. */
enum sched_outcome sched_check(const struct sched_input *in, const struct sched_session *s, const char **pred,
                               char *msg);
/* "4 fGPU", "2 cores", "8 GiB" */
char *sched_amount_format(const struct sched_slots *t, int slot, int64_t v, char *buf, size_t len);

/* ---- index.c: the pass's agent index ---- */

/* The GPU kind of an agent: its gpu_slot when it has devices, else -1. */
static inline int sched_agent_kind(const struct sched_agent *a)
{
        return a->ndev > 0 ? a->gpu_slot : -1;
}

/* Free amounts of a subtree of agents: the largest free amount of each slot
 * on one agent, and the largest free amount on one device. */
struct sched_node {
        int64_t free[SCHED_NSLOTS];
        int64_t dev_free;
};

/* The schedulable agents of one architecture and GPU kind. */
struct sched_class {
        int arch, kind;
        int n;
        int *byidx;   /* agent indices, ascending (the tree's leaves) */
        int *sorted;  /* agent indices by free amounts (concentrated, dispersed) */
        int size;     /* leaves in the tree: a power of two >= n */
        struct sched_node *tree; /* 2 * size nodes, root at 1 */
        int64_t min_maxcap; /* the smallest device capacity on any agent's largest device */
        struct sched_vec min_free; /* at most the least free of each slot on any agent */
};

struct sched_index {
        const struct sched_input *in;
        void *arena;  /* everything below */
        bool sorted; /* concentrated/dispersed keep class->sorted */
        bool dispersed;
        int nclass;
        struct sched_class *cls;
        int *class_of; /* agent -> class, -1 when not schedulable */
        int *leaf_of;  /* agent -> position in its class's byidx */
        struct sched_vec *key; /* agent -> free amounts when last indexed */
        int64_t *dev_free;     /* agent -> the most free on one of its devices */
};

void sched_index_build(struct sched_index *ix, const struct sched_input *in);
void sched_index_free(struct sched_index *ix);
/* Agent a is about to change / has changed (its used amounts or devices). */
void sched_index_remove(struct sched_index *ix, int a);
void sched_index_insert(struct sched_index *ix, int a);
/* Compare agents by the free-amount key: GPU first, then cpu, memory, the
 * rest; ties by index (ascending, or descending under dispersed). */
int sched_index_cmp(const struct sched_index *ix, int a, int b);
/* The classes agents of architecture `arch` and GPU kind `kind` fall in,
 * or NULL. */
struct sched_class *sched_index_class(const struct sched_index *ix, int arch, int kind);
/* Could some agent of the subtree at node hold `need` (per-slot amounts;
 * slots of 0 are not looked at) with a device of at least `need_dev` free? */
static inline bool sched_node_may_fit(const struct sched_node *nd, const struct sched_vec *need, int64_t need_dev)
{
        for (int k = 0; k < SCHED_NSLOTS; k++)
                if (need->v[k] > 0 && need->v[k] > nd->free[k])
                        return false;
        return need_dev <= 0 || nd->dev_free >= need_dev;
}

/* ---- select.c: agents and devices ---- */

/* Place every kernel of s (all-or-nothing), updating the agents (and the
 * index when given); fills kernels[0..cluster_size).  False when there is
 * no room: then msg (when not NULL) says why and the agents are as before. */
bool sched_place(struct sched_input *in, struct sched_index *ix, const struct sched_session *s,
                 struct sched_kernel_alloc *kernels, char *msg);
/* Why s finds no room, from the agents (or the index when given): what it
 * asks and the most any one candidate agent and any one GPU has free. */
void sched_explain(const struct sched_input *in, const struct sched_index *ix, const struct sched_session *s,
                   char *msg);
/* Would s fit on some candidate agent if that agent were empty?  (A session
 * that never can does not hold the queue.) */
bool sched_fits_empty(const struct sched_input *in, const struct sched_session *s);

/* ---- order.c: the queue order of a pass ---- */

struct sched_queue {
        struct sched_input *in;
        int *order;  /* static orders: session indices, best first */
        int pos, n;
        /* drf: a heap of users by dominant share, each with its own list */
        struct drf_user *users;
        int nusers;
        int *heap;     /* indices into users */
        int nheap;
        int last_user; /* served by the previous next(), to re-insert */
        double total[SCHED_NSLOTS];
};

void sched_queue_init(struct sched_queue *q, struct sched_input *in);
/* The next session to try, or -1. */
int sched_queue_next(struct sched_queue *q);
void sched_queue_free(struct sched_queue *q);

/* ---- pass.c ---- */

/* How a pass finds agents: AUTO scans for the first searches and builds
 * the index once a pass has made enough of them to pay for it. */
enum sched_search {
        SCHED_SEARCH_AUTO,
        SCHED_SEARCH_SCAN,
        SCHED_SEARCH_INDEX,
};

/* sched_pass() with the search chosen (tests compare SCAN and INDEX). */
int sched_pass_search(struct sched_input *in, enum sched_search how, struct sched_output *out,
                      struct tess_error **err);

#endif
