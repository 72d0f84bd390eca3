/* agent_sync.h - the agents waiting on POST /agent/sync (agent_sync.c, a
 * long poll answering the kernels each agent should run or stop; the
 * route is declared with the other agent routes in api_agent.h): one per
 * manager, woken when an agent's kernels change. */
#ifndef TESS_AGENT_SYNC_H
#define TESS_AGENT_SYNC_H

struct manager;
struct agent_sync;

struct agent_sync *agent_sync_new(struct manager *m);
struct agent_sync *agent_sync_free(struct agent_sync *s);
/* Answer every waiting agent now (when events may have been missed: each
 * answer is the agent's whole desired state). */
void agent_sync_wake_all(struct agent_sync *s);

#endif
