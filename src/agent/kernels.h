/* kernels.h - the agent's kernels against the manager's desired list
 * (kernels.c). */
#ifndef TESS_AGENT_KERNELS_H
#define TESS_AGENT_KERNELS_H

#include "agent/agent.h"

struct kernels;

/* Load the records in dir (state_dir/kernels); needs ctx->outbox. */
int kernels_open(struct agent_ctx *ctx, const char *dir, struct kernels **ret, struct tess_error **err);
/* Waits for running workers. */
void kernels_close(struct kernels *ks);
/* The manager's desired list (the "kernels" of POST /agent/sync): start
 * what is new, stop what it says to stop or no longer lists, forget what
 * ended and is no longer listed.  Never blocks on containers. */
void kernels_apply(struct kernels *ks, const json_t *desired);
/* Apply the last desired list again if a job ended since (what it said
 * about a kernel that was busy then); notice running kernels whose
 * containers exited; report them. */
void kernels_check(struct kernels *ks);
/* {"<kernel id>": lastStat} of the running kernels (a new reference). */
json_t *kernels_stats(struct kernels *ks);
/* How many kernels the agent holds; *ret_running of them run. */
int kernels_count(struct kernels *ks, int *ret_running);

#endif
