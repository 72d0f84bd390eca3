/* agent_sync.h - the agents' desired state and what they report back:
 * POST /agent/sync (agent_sync.c, a long poll answering the kernels each
 * agent should run or stop) and POST /agent/events (agent_events.c, kernel
 * events applied to sessions and acknowledged). */
#ifndef TESS_AGENT_SYNC_H
#define TESS_AGENT_SYNC_H

#include "manager/agent_report.h"

struct manager;
struct agent_sync;

struct agent_sync *agent_sync_new(struct manager *m);
struct agent_sync *agent_sync_free(struct agent_sync *s);

#endif
