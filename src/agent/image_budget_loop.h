/* image_budget_loop.h - the agent's thread that keeps its image store
 * within image_disk_budget (image_budget_loop.c). */
#ifndef TESS_AGENT_IMAGE_BUDGET_LOOP_H
#define TESS_AGENT_IMAGE_BUDGET_LOOP_H

#include "agent/agent.h"

struct image_budget_loop;

/* Start the thread when ctx->conf->image_disk_budget is set; NULL (and
 * nothing runs) when it is 0. */
struct image_budget_loop *image_budget_loop_start(struct agent_ctx *ctx);
/* Stop it and wait for it (a run in progress finishes first); accepts NULL. */
void image_budget_loop_stop(struct image_budget_loop *l);

#endif
