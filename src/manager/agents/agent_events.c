/* agent_events.c - what agents report about their kernels, applied to the
 * sessions: POST /agent/events.
 *
 *   {"id": "node-1", "events": [{"seq": 7, "kernel": "<uuid>", "kind":
 *     "running", "container_id": "..."}, {"seq": 8, ..., "kind": "exited",
 *     "exit_code": 0, "oom": false, "stat": {"cpu_used": {"current": "812.5"}, ...}}, ...]}
 *   -> {"acked": 8}
 *
 * An agent keeps each event on disk until the manager acknowledges its
 * sequence number, and sends it again otherwise; applying an event twice
 * changes nothing the second time (every step is a compare-and-set on the
 * session's status), so retries are safe; an end (exited, failed) is
 * applied again even after its exit code was stored, so that one whose
 * first application failed halfway is finished by the retry.  Events about kernels that are
 * not (or no longer) this agent's are acknowledged and ignored.
 *
 * What each kind does to the session, through the transition table
 * (session.c), every step stamped in status_history and published:
 *
 *   preparing, pulling, creating   forward along SCHEDULED -> PREPARING ->
 *                                  PULLING -> CREATING (never back)
 *   running                        the kernel's container id is stored;
 *                                  when all kernels run: RUNNING
 *   exited                         the kernel's exit code and the end of
 *                                  its output (`log`) are stored (the
 *                                  main kernel's code also as the
 *                                  session's statusData.kernel.exit_code); a
 *                                  TERMINATING session whose kernels all
 *                                  exited is TERMINATED (reason kept); the
 *                                  main kernel ending by itself ends the
 *                                  session: batch result SUCCESS or
 *                                  FAILURE from its code (task-finished /
 *                                  task-failed), interactive
 *                                  self-terminated; killed by the memory
 *                                  limit: ERROR (oom-killed).  Its
 *                                  final counters (`stat`, lastStat's
 *                                  shape) are measured use
 *                                  (usage_measure.h), as a heartbeat's
 *   failed                         could not be created: ERROR
 *                                  (creation-failed), the agent's message
 *                                  in status_data.error
 *   commit-progress, commit-done,  a session commit's background task
 *   commit-failed                  (session_commit.h), also after the
 *                                  kernel ended */
#include "common/compat.h"

#include "common/log.h"
#include "common/timeutil.h"
#include "manager/agent_link/agent_report.h"
#include "manager/agents/agent_sync.h"
#include "manager/agents/api_agent.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/sessions/session.h"
#include "manager/sessions/session_commit.h"
#include "manager/usage/usage_measure.h"

/* The way up to RUNNING; PULLING only when the agent pulls. */
static const enum session_status chain[] = {
        SESSION_SCHEDULED, SESSION_PREPARING, SESSION_PULLING, SESSION_CREATING, SESSION_RUNNING,
};

static int chain_pos(enum session_status s)
{
        for (size_t i = 0; i < ARRAY_SIZE(chain); i++)
                if (chain[i] == s)
                        return (int)i;
        return -1;
}

/* The session's current row (session_select); ENOENT if gone. */
static int load_session(struct manager *m, const char *id, struct db_rows **ret, struct tess_error **err)
{
        _cleanup_free_ char *sql = session_select("s.id = ?");
        int r = DBQ(m->db, sql, ret, err, DB_TEXT(id));

        if (r >= 0 && (*ret)->nrows == 0) {
                *ret = db_rows_free(*ret);
                return tess_err(err, ENOENT, "session %s is gone", id);
        }
        return r < 0 ? r : 0;
}

static enum session_status status_of(const struct db_rows *rows)
{
        return session_status_from_string(db_getn(rows, 0, "status"));
}

/* Move the session forward along `chain` until it reaches `to`; a session
 * already there, past it or off the chain is left alone.  Races with other
 * writers (EAGAIN) re-read and go on. */
static int advance(struct manager *m, const char *session, enum session_status to, struct tess_error **err)
{
        for (int tries = 0; tries < 16; tries++) {
                _cleanup_rows_ struct db_rows *rows = NULL;
                int r = load_session(m, session, &rows, err);
                if (r < 0)
                        return r;
                int pos = chain_pos(status_of(rows)), target = chain_pos(to);
                if (pos < 0 || pos >= target)
                        return 0;
                enum session_status next = chain[pos + 1];
                if (next == SESSION_PULLING && to != SESSION_PULLING)
                        next = SESSION_CREATING;
                r = session_transition(m, session, status_of(rows), next, session_status_to_string(next), err);
                if (r == -EAGAIN) {
                        *err = tess_error_free(*err);
                        continue;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Leave `from` for `to` unless another writer moved the session first. */
static int end_session(struct manager *m, const char *session, enum session_status from, enum session_status to,
                       const char *reason, struct tess_error **err)
{
        int r = session_transition(m, session, from, to, reason, err);
        if (r == -EAGAIN) {
                *err = tess_error_free(*err);
                return 0;
        }
        return r;
}

static int count_kernels(struct manager *m, const char *session, const char *cond, int64_t *ret,
                         struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *sql = xasprintf("SELECT count(*) AS n FROM kernels WHERE session_id = ? AND %s", cond);
        int r = DBQ(m->db, sql, &rows, err, DB_TEXT(session));

        if (r >= 0)
                *ret = db_get_int(rows, 0, "n");
        return r < 0 ? r : 0;
}

/* What the agent found in the image the session names: its labels (kept
 * when an administrator set some), digest and size, for the image
 * registry. */
static int record_image(struct manager *m, const char *session, const json_t *img, struct tess_error **err)
{
        const json_t *l = json_object_get(img, "labels");
        _cleanup_free_ char *labels = l ? json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS) : xstrdup("{}");
        const char *digest = json_string_value(json_object_get(img, "digest"));

        return DBQ(m->db,
                   "UPDATE images SET labels = CASE WHEN labels = '{}' THEN ? ELSE labels END,"
                   " digest = CASE WHEN digest = '' THEN ? ELSE digest END,"
                   " size_bytes = CASE WHEN size_bytes = 0 THEN ? ELSE size_bytes END"
                   " WHERE id = (SELECT i.id FROM images i JOIN sessions s ON i.name || ':' || i.tag = s.image"
                   " AND i.architecture = s.architecture WHERE s.id = ?)",
                   NULL, err, DB_TEXT(labels), DB_TEXT(digest ? digest : ""),
                   DB_INT(json_integer_value(json_object_get(img, "size"))), DB_TEXT(session));
}

static int on_running(struct manager *m, const struct agent_event *ev, const char *session, struct tess_error **err)
{
        int64_t waiting;
        int r = DBQ(m->db, "UPDATE kernels SET container_id = ? WHERE id = ?", NULL, err,
                    DB_TEXT(ev->container_id ? ev->container_id : ev->kernel), DB_TEXT(ev->kernel));

        if (r >= 0 && ev->image)
                r = record_image(m, session, ev->image, err);
        if (r >= 0)
                r = count_kernels(m, session, "container_id IS NULL", &waiting, err);
        if (r < 0)
                return r;
        return advance(m, session, waiting == 0 ? SESSION_RUNNING : SESSION_CREATING, err);
}

static int store_error(struct manager *m, const char *session, const char *name, const char *msg,
                       struct tess_error **err)
{
        return session_set_status_data(
                m, session, "error", json_pack("{s:s, s:s, s:s}", "src", "agent", "name", name, "repr", msg ? msg : ""),
                err);
}

/* The kernel's container is gone (exited, or never created: failed). */
static int on_ended(struct manager *m, const struct agent_event *ev, const char *session, bool main_kernel,
                    struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int64_t left;
        int r = DBQ(m->db,
                    "UPDATE kernels SET exit_code = ?, terminated_at = ?, container_log = COALESCE(?, container_log)"
                    " WHERE id = ?",
                    NULL, err, DB_INT(ev->exit_code), DB_INT(now_usec()), DB_TEXT(ev->log), DB_TEXT(ev->kernel));

        /* the main kernel's exit code, where Backend.AI keeps it: statusData.kernel.exit_code */
        if (r >= 0 && main_kernel && ev->kind == AGENT_EV_EXITED && ev->exit_code >= 0)
                r = session_set_status_data(m, session, "kernel",
                                            json_pack("{s:I}", "exit_code", (json_int_t)ev->exit_code), err);
        if (r >= 0)
                r = load_session(m, session, &rows, err);
        if (r >= 0)
                r = count_kernels(m, session, "exit_code IS NULL", &left, err);
        if (r < 0)
                return r;
        enum session_status st = status_of(rows);
        if (st == SESSION_TERMINATING) {
                if (left > 0)
                        return 0;
                _cleanup_free_ char *reason = session_info_unmarked(rows, 0);
                if (reason && !streq(reason, db_getn(rows, 0, "status_info")) &&
                    (r = session_set_status_data(m, session, SESSION_UNREACHABLE_KEY, NULL, err)) < 0)
                        return r;
                return end_session(m, session, st, SESSION_TERMINATED, reason, err);
        }
        if (chain_pos(st) < 0)
                return 0; /* ended already */
        if (ev->kind == AGENT_EV_FAILED) {
                r = store_error(m, session, "ContainerCreationError", ev->message, err);
                return r < 0 ? r : end_session(m, session, st, SESSION_ERROR, "creation-failed", err);
        }
        if (ev->oom) {
                r = store_error(m, session, "OutOfMemory", "the kernel exceeded its memory limit", err);
                return r < 0 ? r : end_session(m, session, st, SESSION_ERROR, "oom-killed", err);
        }
        if (!main_kernel)
                return 0;
        bool batch = streq(db_getn(rows, 0, "session_type"), "batch");
        const char *reason = !batch ? "self-terminated" : ev->exit_code == 0 ? "task-finished" : "task-failed";
        r = DBQ(m->db, "UPDATE sessions SET result = ? WHERE id = ?", NULL, err,
                DB_TEXT(ev->exit_code == 0 ? "SUCCESS" : "FAILURE"), DB_TEXT(session));
        if (r < 0)
                return r;
        if (left > 0) /* the other kernels are stopped first */
                return end_session(m, session, st, SESSION_TERMINATING, reason, err);
        if (st != SESSION_RUNNING && (r = advance(m, session, SESSION_RUNNING, err)) < 0)
                return r;
        return end_session(m, session, SESSION_RUNNING, SESSION_TERMINATED, reason, err);
}

/* An exited kernel's final counters: what it used since its last
 * heartbeat.  Their own transaction; applied again they add nothing. */
static int measure_final(struct manager *m, const char *agent, const struct agent_event *ev,
                         struct tess_error **err)
{
        int r;

        if (!ev->stat)
                return 0;
        r = db_begin(m->db, err);
        if (r >= 0)
                r = usage_measure_kernel(m, agent, ev->kernel, ev->stat, now_usec(), err);
        if (r >= 0)
                return db_commit(m->db, err);
        db_rollback(m->db);
        return r;
}

static int apply(struct manager *m, const char *agent, const struct agent_event *ev, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *k = NULL;
        int r = DBQ(m->db, "SELECT session_id, agent_id, cluster_role, exit_code FROM kernels WHERE id = ?", &k, err,
                    DB_TEXT(ev->kernel));

        if (r < 0)
                return r;
        if (k->nrows > 0 && streq(db_getn(k, 0, "agent_id"), agent) && ev->kind >= AGENT_EV_COMMIT_PROGRESS)
                return session_commit_event(m, agent, db_getn(k, 0, "session_id"), ev, err);
        /* an end applied again finishes what a failure may have left half
         * done (the exit code stored, the session not yet moved) */
        bool end = ev->kind == AGENT_EV_EXITED || ev->kind == AGENT_EV_FAILED;
        if (k->nrows == 0 || !streq(db_getn(k, 0, "agent_id"), agent) || (db_getn(k, 0, "exit_code") && !end)) {
                log_info("agent %s: event %lld about kernel %s ignored (not its own, or ended)", agent,
                         (long long)ev->seq, ev->kernel);
                return 0;
        }
        const char *session = db_getn(k, 0, "session_id");
        switch (ev->kind) {
        case AGENT_EV_PREPARING: return advance(m, session, SESSION_PREPARING, err);
        case AGENT_EV_PULLING: return advance(m, session, SESSION_PULLING, err);
        case AGENT_EV_CREATING: return advance(m, session, SESSION_CREATING, err);
        case AGENT_EV_RUNNING: return on_running(m, ev, session, err);
        case AGENT_EV_EXITED:
        case AGENT_EV_FAILED: /* a failed kernel carries no counters */
                r = measure_final(m, agent, ev, err);
                return r < 0 ? r : on_ended(m, ev, session, streq(db_getn(k, 0, "cluster_role"), "main"), err);
        default: return 0;
        }
        return 0;
}

void api_agent_events(struct api_ctx *c)
{
        const char *id = NULL;
        struct tess_error *err = NULL;
        json_t *events, *e;
        int64_t acked = 0;
        size_t i;

        if (!c->body)
                return api_problem(c, 400, "invalid-api-params", "a JSON body is required");
        if (api_get_string(c->body, NAMES("id"), AGENT_ID_MAX, &id, &err) < 0)
                return api_fail(c, err);
        if (!id || !streq(id, c->who.user_id))
                return api_problem(c, 403, "forbidden", "the request is signed for agent '%s', not '%s'",
                                   c->who.user_id, id ? id : "");
        events = json_object_get(c->body, "events");
        if (!json_is_array(events) || json_array_size(events) > AGENT_EVENTS_MAX)
                return api_problem(c, 400, "invalid-api-params", "events must be an array of at most %d events",
                                   AGENT_EVENTS_MAX);
        /* all checked before any is applied: a bad batch changes nothing */
        struct agent_event *evs = xcalloc(json_array_size(events) + 1, sizeof(*evs));
        json_array_foreach(events, i, e) {
                if (agent_event_parse(e, &evs[i], &err) < 0) {
                        free(evs);
                        tess_err_wrap(&err, "events[%zu]", i);
                        return api_fail(c, err);
                }
        }
        for (i = 0; i < json_array_size(events); i++) {
                if (apply(c->m, id, &evs[i], &err) < 0) {
                        log_warn("agent %s: event %lld: %s", id, (long long)evs[i].seq, err->msg);
                        err = tess_error_free(err);
                        break; /* acknowledged up to here; the agent sends the rest again */
                }
                if (evs[i].seq > acked)
                        acked = evs[i].seq;
        }
        free(evs);
        api_json(c, 200, json_pack("{s:I}", "acked", (json_int_t)acked));
}
