/* scheduler_reaper.c - agents judged by their silence, and sessions ended
 * by rule rather than by their owner.
 *
 *   agent silent      an agent that sent no heartbeat for three of its own
 *                     heartbeat intervals is UNREACHABLE: nothing else
 *                     changes (its sessions go on, marked
 *                     "agent-unreachable", session_status_data.c; its slots
 *                     stay held; nothing new is placed there).  Its next
 *                     heartbeat makes it ALIVE again (api_agent.c).
 *   agent-lost        silent for conf.agent_lost_timeout (0: never): LOST,
 *                     its sessions end in ERROR; the agent removes their
 *                     containers when it comes back.
 *   pending-timeout   PENDING longer than the resource group's pending_timeout:
 *                     CANCELLED
 *   task-timeout      a batch session holding resources past its batch_timeout
 *   session-lifetime  holding resources past the keypair policy's
 *                     max_session_lifetime (seconds)
 *   idle-timeout      an interactive session with no API, terminal or app
 *                     traffic (sessions.last_activity_at) for the policy's
 *                     idle_timeout (seconds)
   owner-inactive    the owner's status is inactive (an admin deactivated
 *                     it) and conf.terminate_inactive_users is on: pending
 *                     sessions CANCELLED, the others TERMINATING
 * The last three go to TERMINATING with the reason; sessions whose kernels
 * sit on agents without a container runtime are then finished here
 * (TERMINATING -> TERMINATED, keeping the reason), since no agent will
 * report them gone.  Times count from when the session got its resources
 * (sessions.occupied_at).
 *
 * Silence is what this manager saw, on its own monotonic clock: the time
 * since it first read an agent's current last_heartbeat (struct
 * beats_seen), or since the end of the last database outage (heartbeats
 * could not be stored meanwhile), whichever is later.  So a manager that
 * was down (or could not write) for an hour gives every agent its full
 * intervals again before it judges any, and a step of a wall clock (any
 * node's) makes nobody silent. */
#include "common/compat.h"

#include "common/log.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/scheduler/scheduler-internal.h"
#include "manager/sessions/session.h"
#include "sched/sched.h"

static void end_session(struct manager *m, const char *id, const char *status, enum session_status to,
                        const char *reason)
{
        struct tess_error *err = NULL;
        enum session_status from = session_status_from_string(status);

        if (session_transition(m, id, from, to, reason, &err) < 0) {
                if (err->code != EAGAIN)
                        log_warn("scheduler: %s -> %s (%s): %s", id, session_status_to_string(to), reason, err->msg);
                tess_error_free(err);
                return;
        }
        log_info("session %s %s -> %s: %s", id, status, session_status_to_string(to), reason);
}

static int agent_lost(struct manager *m, const char *id, const char *status, int64_t last, int64_t silent,
                      int64_t now, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *sessions = NULL;
        int r = DBQ(m->db,
                    "UPDATE agents SET status = 'LOST', lost_at = ? WHERE id = ? AND status = ? AND last_heartbeat = ?",
                    NULL, err, DB_INT(now), DB_TEXT(id), DB_TEXT(status), DB_INT(last));

        if (r <= 0)
                return r;
        log_warn("agent %s is LOST: no heartbeat for %lld s (agent_lost_timeout); its sessions end", id,
                 (long long)(silent / USEC_PER_SEC));
        r = DBQ(m->db,
                "SELECT DISTINCT s.id, s.status FROM sessions s JOIN kernels k ON k.session_id = s.id"
                " WHERE k.agent_id = ? AND s.status NOT IN ('PENDING', 'TERMINATED', 'CANCELLED', 'ERROR')",
                &sessions, err, DB_TEXT(id));
        for (int j = 0; r >= 0 && j < sessions->nrows; j++)
                end_session(m, db_get(sessions, j, 0), db_get(sessions, j, 1), SESSION_ERROR, "agent-lost");
        return r < 0 ? r : 0;
}

/* The agent and its sessions' marks change in one transaction: a
 * heartbeat on another manager waits for it and then finds the marks to
 * take off (api_agent.c). */
static int agent_unreachable(struct manager *m, const char *id, int64_t last, int64_t silent,
                             struct tess_error **err)
{
        int r = db_begin(m->db, err);

        if (r < 0)
                return r;
        r = DBQ(m->db,
                "UPDATE agents SET status = 'UNREACHABLE', unreachable_since = ? WHERE id = ? AND status = 'ALIVE'"
                " AND last_heartbeat = ?",
                NULL, err, DB_INT(last), DB_TEXT(id), DB_INT(last));
        if (r > 0)
                r = session_mark_agent_unreachable(m, id, last, err);
        if (r < 0) {
                db_rollback(m->db);
                return r;
        }
        if ((r = db_commit(m->db, err)) < 0)
                return r;
        log_warn("agent %s is UNREACHABLE: no heartbeat for %lld s; its sessions go on and wait for it", id,
                 (long long)(silent / USEC_PER_SEC));
        return 0;
}

static enum sched_agent_state state_of(const char *status)
{
        return streq(status, "LOST") ? SCHED_AGENT_LOST
               : streq(status, "UNREACHABLE") ? SCHED_AGENT_UNREACHABLE : SCHED_AGENT_ALIVE;
}

void beats_seen_init(struct beats_seen *b)
{
        *b = (struct beats_seen){ 0 };
        strmap_init(&b->index);
}

void beats_seen_release(struct beats_seen *b)
{
        strmap_free(&b->index);
        free(b->value);
        free(b->seen_at);
}

/* When this manager first saw agent row i's last_heartbeat: at an earlier
 * tick if it has not changed since, else now; recorded in `next`. */
static int64_t seen_at(const struct beats_seen *seen, struct beats_seen *next, const char *id, int i,
                       int64_t last, int64_t mono)
{
        int k = strmap_get(&seen->index, id);
        int64_t at = k >= 0 && seen->value[k] == last ? seen->seen_at[k] : mono;

        strmap_put(&next->index, id, i);
        next->value[i] = last;
        next->seen_at[i] = at;
        return at;
}

int judge_agents(struct manager *m, struct beats_seen *seen, int64_t now, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct beats_seen next;
        int64_t mono = monotonic_usec();
        int r = DBQ(m->db,
                    "SELECT id, status, last_heartbeat, heartbeat_interval FROM agents"
                    " WHERE status IN ('ALIVE', 'UNREACHABLE')",
                    &rows, err);

        if (r < 0)
                return r;
        beats_seen_init(&next);
        next.value = xcalloc((size_t)rows->nrows + 1, sizeof(*next.value));
        next.seen_at = xcalloc((size_t)rows->nrows + 1, sizeof(*next.seen_at));
        for (int i = 0; i < rows->nrows; i++) {
                const char *id = db_getn(rows, i, "id"), *status = db_getn(rows, i, "status");
                int64_t last = db_get_int(rows, i, "last_heartbeat");
                int64_t at = seen_at(seen, &next, id, i, last, mono);
                enum sched_agent_state was = state_of(status);
                enum sched_agent_state is = sched_agent_verdict(was, at, db_get_int(rows, i, "heartbeat_interval"),
                                                                db_outage_ended_at(m->db), mono,
                                                                m->conf.agent_lost_timeout);

                if (r >= 0 && is == SCHED_AGENT_LOST)
                        r = agent_lost(m, id, status, last, mono - at, now, err);
                else if (r >= 0 && is == SCHED_AGENT_UNREACHABLE && was == SCHED_AGENT_ALIVE)
                        r = agent_unreachable(m, id, last, mono - at, err);
        }
        beats_seen_release(seen);
        *seen = next;
        return r < 0 ? r : 0;
}

static int reap_pending(struct manager *m, const struct rgroup *g, int64_t now, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db,
                    "SELECT id FROM sessions WHERE status = 'PENDING' AND resource_group = ? AND created_at < ?",
                    &rows, err, DB_TEXT(g->name), DB_INT(now - g->policy.pending_timeout));

        for (int i = 0; r >= 0 && i < rows->nrows; i++)
                end_session(m, db_get(rows, i, 0), "PENDING", SESSION_CANCELLED, "pending-timeout");
        return r < 0 ? r : 0;
}

/* Which limit, if any, this holding session has passed. */
static const char *limit_passed(const struct db_rows *rows, int i, int64_t now)
{
        int64_t since = db_get_int(rows, i, "occupied_at");
        int64_t active = db_getn(rows, i, "last_activity_at") ? db_get_int(rows, i, "last_activity_at") : since;
        int64_t batch_timeout = db_getn(rows, i, "batch_timeout") ? db_get_int(rows, i, "batch_timeout") : 0;
        int64_t lifetime = db_get_int(rows, i, "max_session_lifetime") * USEC_PER_SEC;
        int64_t idle = db_get_int(rows, i, "idle_timeout") * USEC_PER_SEC;
        bool batch = streq(db_getn(rows, i, "session_type"), "batch");

        if (batch && batch_timeout > 0 && now - since > batch_timeout)
                return "task-timeout";
        if (lifetime > 0 && now - since > lifetime)
                return "session-lifetime";
        if (!batch && idle > 0 && now - (active > since ? active : since) > idle)
                return "idle-timeout";
        return NULL;
}

int reap_expired_sessions(struct manager *m, const struct rgroup *groups, int ngroups, int64_t now,
                          struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r;

        for (int i = 0; i < ngroups; i++)
                if (groups[i].policy.pending_timeout > 0 && (r = reap_pending(m, &groups[i], now, err)) < 0)
                        return r;
        r = DBQ(m->db,
                "SELECT s.id, s.status, s.session_type, s.occupied_at, s.last_activity_at, s.batch_timeout,"
                " p.idle_timeout, p.max_session_lifetime FROM sessions s"
                " JOIN keypairs k ON k.access_key = s.access_key"
                " JOIN keypair_resource_policies p ON p.name = k.resource_policy"
                " WHERE s.status IN ('SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING')"
                " AND s.occupied_at IS NOT NULL"
                " AND (p.idle_timeout > 0 OR p.max_session_lifetime > 0 OR s.batch_timeout IS NOT NULL)",
                &rows, err);
        if (r < 0)
                return r;
        for (int i = 0; i < rows->nrows; i++) {
                const char *why = limit_passed(rows, i, now);
                if (why)
                        end_session(m, db_getn(rows, i, "id"), db_getn(rows, i, "status"), SESSION_TERMINATING, why);
        }
        return 0;
}

int reap_terminations(struct manager *m, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db,
                    "SELECT s.id, s.status_info FROM sessions s WHERE s.status = 'TERMINATING' AND NOT EXISTS ("
                    " SELECT 1 FROM kernels k JOIN agents a ON a.id = k.agent_id"
                    " WHERE k.session_id = s.id AND a.runtime <> 'none')",
                    &rows, err);

        for (int i = 0; r >= 0 && i < rows->nrows; i++)
                end_session(m, db_get(rows, i, 0), "TERMINATING", SESSION_TERMINATED, db_get(rows, i, 1));
        return r < 0 ? r : 0;
}

int reap_inactive_owners(struct manager *m, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;

        if (!m->conf.terminate_inactive_users)
                return 0;
        int r = DBQ(m->db,
                    "SELECT s.id, s.status FROM sessions s JOIN users u ON u.id = s.user_id"
                    " WHERE u.status <> 'active'"
                    " AND s.status IN ('PENDING', 'SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING')",
                    &rows, err);
        for (int i = 0; r >= 0 && i < rows->nrows; i++) {
                const char *status = db_get(rows, i, 1);
                end_session(m, db_get(rows, i, 0), status,
                            streq(status, "PENDING") ? SESSION_CANCELLED : SESSION_TERMINATING, "owner-inactive");
        }
        return r < 0 ? r : 0;
}
