/* scheduler.h - the manager's scheduler: runs the pure scheduler
 * (src/sched) on the database.
 *
 * A tick happens when an event says something changed (a session enqueued
 * or ended, an agent joined, changed, came back or was lost) and every
 * conf.scheduler_interval.  Only the manager holding the PostgreSQL
 * advisory lock ticks (on SQLite the one process does).  A tick:
 *   1. marks agents silent for three heartbeat intervals UNREACHABLE (their
 *      sessions go on, marked; nothing new goes there) and those silent
 *      past conf.agent_lost_timeout LOST, ending their sessions in ERROR
 *      (agent-lost); silence counts from the manager's start at the
 *      earliest (scheduler_reaper.c);
 *   2. ends sessions past their limits: pending_timeout of the resource
 *      group (CANCELLED, pending-timeout), the keypair policy's idle_timeout
 *      (idle-timeout) and max_session_lifetime (session-lifetime), a batch
 *      session's batch_timeout (task-timeout);
 *   3. finishes TERMINATING sessions on agents without a container runtime
 *      (agents registered through the agent API only, as the simulator's);
 *   4. per resource group, loads a snapshot, runs sched_pass() and writes
 *      its placements in one transaction, conditional on the agents'
 *      allocation generation, so no slot is ever given twice even if two
 *      managers were to schedule at once.  Waiting sessions get the reason
 *      in status_data.scheduler. */
#ifndef TESS_SCHEDULER_H
#define TESS_SCHEDULER_H

struct manager;
struct api_ctx;
struct scheduler;

struct scheduler *scheduler_start(struct manager *m);
struct scheduler *scheduler_stop(struct scheduler *s);
/* Ask for a tick soon (coalesced). */
void scheduler_kick(struct manager *m);

/* GET /resource/presets and POST /resource/check-presets: what fits
 * (api_resource.c). */
void api_resource_presets(struct api_ctx *c);
void api_resource_check_presets(struct api_ctx *c);
void api_resource_recalculate(struct api_ctx *c);

#endif
