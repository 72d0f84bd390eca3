/* api_agent.c - the agents' side of the API: registration and heartbeats.
 *
 * Agents sign their requests with the cluster secret (src/common/sign.h,
 * sign_agent_request); no keypair is involved.  An agent registers by
 * sending its first heartbeat and repeats it every few seconds:
 *
 *   POST /agent/heartbeat
 *   {"id": "node-1", "address": "10.0.0.5:6001", "resource_group": "default",
 *    "architecture": "x86_64", "version": "0.3.0", "runtime": "none",
 *    "available_slots": {"cpu": "8", "mem": "32g"},
 *    "devices": [{"id": "0", "slot": "cuda.shares", "capacity": "2",
 *                 "model": "mock", "memory": "16g"}, ...]}
 *
 * `devices` are the agent's GPUs, each worth `capacity` of its slot
 * (cuda.device: 1; cuda.shares: fgpu_per_gpu); the slot's total is their
 * sum.  `stats` (optional), {"<kernel id>": {...}}, is each running
 * kernel's usage, kept as its session's lastStat; its cumulative
 * counters become the session's measured use (usage_measure.h).
 * `runtime` "none" marks an agent without containers (tests, load
 * generators): the manager itself finishes its sessions' terminations.
 * The resource group is taken at first contact; afterwards an
 * administrator's move (PATCH /admin/agents/{id}) sticks.
 * `heartbeat_interval` (seconds, default 5) is how often the agent
 * promises to beat: silent for three of them it is UNREACHABLE
 * (scheduler_reaper.c).  A heartbeat from an UNREACHABLE or LOST agent
 * makes it ALIVE again; its sessions lose their "agent-unreachable" mark
 * (a LOST agent's sessions have ended: it removes their containers, which
 * its desired list no longer names). */
#include "common/compat.h"

#include "common/log.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "manager/agent_link/agent_report.h"
#include "manager/agents/api_agent.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/scheduler/scheduler.h"
#include "manager/sessions/session.h"
#include "manager/usage/usage_measure.h"

/* Each kernel's statistics become its session's lastStat (the last
 * reported kernel of a cluster session wins), and their counters its
 * measured use (usage_measure.h); only the agent's own kernels are
 * touched.  One transaction: a statement each would commit (and write the
 * WAL) several times per kernel, seconds for an agent with hundreds; and
 * the counters and the day's totals must change together.  On an error
 * nothing is stored: the next heartbeat counts the increase since the last
 * stored report. */
static void store_stats(struct manager *m, const struct agent_report *rep, int64_t now)
{
        struct tess_error *err = NULL;
        const char *kernel, *failed = NULL;
        json_t *st;
        int r;

        if (json_object_size(rep->stats) == 0)
                return;
        r = db_begin(m->db, &err);
        json_object_foreach((json_t *)rep->stats, kernel, st) {
                _cleanup_free_ char *text = NULL;
                if (r < 0)
                        break;
                text = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
                r = DBQ(m->db,
                        "UPDATE sessions SET last_stat = ? WHERE id = (SELECT session_id FROM kernels"
                        " WHERE id = ? AND agent_id = ?)",
                        NULL, &err, DB_TEXT(text), DB_TEXT(kernel), DB_TEXT(rep->id));
                if (r < 0)
                        failed = kernel;
        }
        if (r >= 0)
                r = usage_measure_agent(m, rep->id, rep->stats, now, &err);
        if (r >= 0)
                r = db_commit(m->db, &err);
        else
                db_rollback(m->db);
        if (r < 0) {
                log_warn("agent %s: storing the statistics of its kernels%s%s: %s", rep->id,
                         failed ? ", at kernel " : "", failed ? failed : "", err ? err->msg : "?");
                tess_error_free(err);
        }
}

/* The agent as it reports itself, ALIVE, and its sessions' "agent
 * unreachable" marks taken off in the same transaction (a failure leaves
 * both for the next heartbeat).  Looked for at every heartbeat, not only
 * when the agent was read UNREACHABLE or LOST (`was`): another manager
 * may have marked it between that read and this transaction. */
static int record_heartbeat(struct manager *m, const struct agent_report *rep, const char *slots_text,
                            const char *was, int64_t now, struct tess_error **err)
{
        int r = db_begin(m->db, err);

        if (r < 0)
                return r;
        r = DBQ(m->db,
                "INSERT INTO agents(id, address, status, resource_group, available_slots, devices,"
                " architecture, version, runtime, first_contact, last_heartbeat, heartbeat_interval)"
                " VALUES (?, ?, 'ALIVE', ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET address = excluded.address, status = 'ALIVE',"
                " available_slots = excluded.available_slots, devices = excluded.devices,"
                " architecture = excluded.architecture, version = excluded.version,"
                " runtime = excluded.runtime, last_heartbeat = excluded.last_heartbeat,"
                " heartbeat_interval = excluded.heartbeat_interval, unreachable_since = NULL, lost_at = NULL",
                NULL, err, DB_TEXT(rep->id), DB_TEXT(rep->address), DB_TEXT(rep->rg), DB_TEXT(slots_text),
                DB_TEXT(rep->devices), DB_TEXT(rep->arch), DB_TEXT(rep->version), DB_TEXT(rep->runtime), DB_INT(now),
                DB_INT(now), DB_INT(rep->heartbeat_interval));
        if (r >= 0 && was)
                r = session_unmark_agent_unreachable(m, rep->id, err);
        if (r >= 0)
                return db_commit(m->db, err);
        db_rollback(m->db);
        return r;
}

void api_agent_heartbeat(struct api_ctx *c)
{
        struct tess_error *err = NULL;
        struct agent_report rep;
        _cleanup_free_ char *slots_text = NULL;
        _cleanup_rows_ struct db_rows *before = NULL, *group = NULL;
        int64_t now = now_usec();
        int r;

        if (!c->body)
                return api_problem(c, 400, "invalid-api-params", "a JSON body is required");
        if (agent_report_parse(c->body, &rep, &err) < 0)
                return api_fail(c, err);
        if (!streq(rep.id, c->who.user_id)) {
                agent_report_release(&rep);
                return api_problem(c, 403, "forbidden", "the request is signed for agent '%s', not '%s'",
                                   c->who.user_id, rep.id);
        }
        slots_text = slots_to_text(&rep.slots);
        r = DBQ(c->m->db, "SELECT status, available_slots, devices FROM agents WHERE id = ?", &before, &err,
                DB_TEXT(rep.id));
        if (r >= 0 && before->nrows == 0) {
                r = DBQ(c->m->db, "SELECT 1 FROM resource_groups WHERE name = ?", &group, &err, DB_TEXT(rep.rg));
                if (r >= 0 && group->nrows == 0) {
                        api_problem(c, 400, "invalid-api-params", "resource group '%s' does not exist", rep.rg);
                        agent_report_release(&rep);
                        return;
                }
        }
        if (r >= 0)
                r = record_heartbeat(c->m, &rep, slots_text, before->nrows ? db_getn(before, 0, "status") : NULL, now,
                                     &err);
        if (r < 0) {
                agent_report_release(&rep);
                return api_fail(c, err);
        }
        bool back = before->nrows > 0 && !streq(db_getn(before, 0, "status"), "ALIVE");
        bool changed = before->nrows == 0 || back || !streq(db_getn(before, 0, "available_slots"), slots_text) ||
                       !streq(db_getn(before, 0, "devices"), rep.devices);
        if (back)
                log_notice("agent %s answers again (was %s)", rep.id, db_getn(before, 0, "status"));
        if (changed) {
                log_info("agent %s %s (%s)", rep.id, before->nrows == 0 ? "registered" : "changed or came back",
                         slots_text);
                scheduler_kick(c->m);
        }
        store_stats(c->m, &rep, now);
        api_json(c, 200, json_pack("{s:s, s:s, s:I}", "id", rep.id, "status", "ALIVE", "heartbeat_interval",
                                   (json_int_t)(rep.heartbeat_interval / USEC_PER_SEC)));
        agent_report_release(&rep);
}
