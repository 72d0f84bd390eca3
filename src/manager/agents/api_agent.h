/* api_agent.h - the agents' API (ROUTE_AGENT: signed with the cluster
 * secret, api_agent_auth in auth.h): what agents tell the manager and
 * ask it.
 *
 *   POST /agent/heartbeat  register, report slots, devices and statistics (api_agent.c)
 *   POST /agent/sync       the kernels this agent should run or stop, a long poll (agent_sync.c)
 *   POST /agent/events     kernel events: running, exited, failed, commits (agent_events.c) */
#ifndef TESS_API_AGENT_H
#define TESS_API_AGENT_H

struct api_ctx;

void api_agent_heartbeat(struct api_ctx *c);
void api_agent_sync(struct api_ctx *c);
void api_agent_events(struct api_ctx *c);

#endif
