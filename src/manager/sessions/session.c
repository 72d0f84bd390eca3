/* session.c - see session.h. */
#include "common/compat.h"

#include "common/log.h"
#include "common/slots.h"
#include "common/timeutil.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/sessions/session.h"
#include "manager/usage/usage.h"

static const char *const status_names[] = {
        [SESSION_PENDING] = "PENDING",         [SESSION_SCHEDULED] = "SCHEDULED",
        [SESSION_PREPARING] = "PREPARING",     [SESSION_PULLING] = "PULLING",
        [SESSION_CREATING] = "CREATING",       [SESSION_RUNNING] = "RUNNING",
        [SESSION_TERMINATING] = "TERMINATING", [SESSION_TERMINATED] = "TERMINATED",
        [SESSION_CANCELLED] = "CANCELLED",     [SESSION_ERROR] = "ERROR",
};

static const char *const status_events[] = {
        [SESSION_PENDING] = "session_enqueued",       [SESSION_SCHEDULED] = "session_scheduled",
        [SESSION_PREPARING] = "session_preparing",    [SESSION_PULLING] = "session_pulling",
        [SESSION_CREATING] = "session_creating",      [SESSION_RUNNING] = "session_started",
        [SESSION_TERMINATING] = "session_terminating", [SESSION_TERMINATED] = "session_terminated",
        [SESSION_CANCELLED] = "session_cancelled",    [SESSION_ERROR] = "session_failure",
};

#define T(s) (1u << SESSION_##s)
/* allowed[from] = set of states reachable in one step */
static const unsigned transitions[_SESSION_STATUS_MAX] = {
        [SESSION_PENDING] = T(SCHEDULED) | T(CANCELLED) | T(ERROR),
        [SESSION_SCHEDULED] = T(PREPARING) | T(PULLING) | T(PENDING) | T(TERMINATING) | T(CANCELLED) | T(ERROR),
        [SESSION_PREPARING] = T(PULLING) | T(CREATING) | T(PENDING) | T(TERMINATING) | T(CANCELLED) | T(ERROR),
        [SESSION_PULLING] = T(PREPARING) | T(CREATING) | T(PENDING) | T(TERMINATING) | T(CANCELLED) | T(ERROR),
        [SESSION_CREATING] = T(RUNNING) | T(TERMINATING) | T(ERROR),
        [SESSION_RUNNING] = T(TERMINATING) | T(TERMINATED) | T(ERROR),
        [SESSION_TERMINATING] = T(TERMINATED) | T(ERROR),
        [SESSION_TERMINATED] = 0,
        [SESSION_CANCELLED] = 0,
        [SESSION_ERROR] = 0,
};
#undef T

const char *session_status_to_string(enum session_status s)
{
        return s >= 0 && s < _SESSION_STATUS_MAX ? status_names[s] : NULL;
}

enum session_status session_status_from_string(const char *s)
{
        for (int i = 0; s && i < _SESSION_STATUS_MAX; i++)
                if (streq(status_names[i], s))
                        return (enum session_status)i;
        return _SESSION_STATUS_INVALID;
}

bool session_status_is_terminal(enum session_status s)
{
        return s == SESSION_TERMINATED || s == SESSION_CANCELLED || s == SESSION_ERROR;
}

const char *session_status_event(enum session_status s)
{
        return s >= 0 && s < _SESSION_STATUS_MAX ? status_events[s] : NULL;
}

bool session_transition_allowed(enum session_status from, enum session_status to)
{
        if (from < 0 || from >= _SESSION_STATUS_MAX || to < 0 || to >= _SESSION_STATUS_MAX)
                return false;
        return transitions[from] & (1u << to);
}

const char session_from[] = " FROM sessions s JOIN projects p ON p.id = s.project_id JOIN users u ON u.id = s.user_id"
                            " LEFT JOIN kernels k ON k.session_id = s.id AND k.cluster_role = 'main'";

char *session_select(const char *where)
{
        return xasprintf("SELECT %s%s WHERE %s", session_columns, session_from, where);
}

const char session_columns[] =
        "s.id, s.name, s.session_type, s.priority, s.cluster_mode, s.cluster_size, s.domain_name, s.project_id,"
        " p.name AS project_name, s.user_id, u.email AS user_email, s.access_key, s.image, s.architecture, s.tag,"
        " s.resource_group, s.requested_slots, s.occupying_slots, s.environ, s.resource_opts, s.mounts,"
        " s.mount_map, s.vfolder_mounts, s.startup_command, s.starts_at, s.batch_timeout, s.status, s.status_info, s.status_data,"
        " s.status_history, s.result, s.num_queries, s.last_stat, s.created_at, s.terminated_at,"
        " s.occupied_at, k.container_id AS container_id, u.role AS user_role";

static json_t *json_text(const char *text, const char *fallback)
{
        json_t *j = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
        return j ? j : json_loads(fallback, JSON_DECODE_ANY, NULL);
}

static json_t *json_str_or_null(const char *s)
{
        return s ? json_string(s) : json_null();
}

json_t *session_info_json(const struct db_rows *rows, int row)
{
        /* Read the columns in select order first: db_getn is fastest that
         * way, and argument evaluation order is unspecified. */
        const char *id = db_getn(rows, row, "id"), *name = db_getn(rows, row, "name"),
                   *type = db_getn(rows, row, "session_type"), *domain = db_getn(rows, row, "domain_name"),
                   *project_id = db_getn(rows, row, "project_id"), *project = db_getn(rows, row, "project_name"),
                   *user_id = db_getn(rows, row, "user_id"), *user_email = db_getn(rows, row, "user_email"),
                   *access_key = db_getn(rows, row, "access_key"),
                   *image = db_getn(rows, row, "image"), *arch = db_getn(rows, row, "architecture"),
                   *tag = db_getn(rows, row, "tag"), *rg = db_getn(rows, row, "resource_group"),
                   *requested = db_getn(rows, row, "requested_slots"),
                   *occupying = db_getn(rows, row, "occupying_slots"), *environ = db_getn(rows, row, "environ"),
                   *ropts = db_getn(rows, row, "resource_opts"), *mounts = db_getn(rows, row, "mounts"),
                   *vfolder_mounts = db_getn(rows, row, "vfolder_mounts"),
                   *status = db_getn(rows, row, "status"), *status_info = db_getn(rows, row, "status_info"),
                   *status_data = db_getn(rows, row, "status_data"),
                   *history = db_getn(rows, row, "status_history"), *result = db_getn(rows, row, "result");
        int64_t num_queries = db_get_int(rows, row, "num_queries");
        const char *last_stat = db_getn(rows, row, "last_stat");
        int64_t created = db_get_int(rows, row, "created_at");
        const char *term = db_getn(rows, row, "terminated_at"), *container = db_getn(rows, row, "container_id");
        int64_t cluster_size = db_get_int(rows, row, "cluster_size");
        int64_t end = term ? strtoll(term, NULL, 10) : now_usec();
        char age[32], created_iso[48], term_iso[48];

        snprintf(age, sizeof(age), "%lld", (long long)((end - created) / USEC_PER_MSEC));
        time_format_iso(created, created_iso, sizeof(created_iso));
        if (term)
                time_format_iso(strtoll(term, NULL, 10), term_iso, sizeof(term_iso));
        return json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
                " s:o, s:s, s:o, s:o, s:o, s:s, s:o, s:o, s:I, s:o, s:o, s:I, s:s, s:s}",
                "sessionId", id, "sessionName", name, "type", type, "domainName", domain, "groupId", project_id,
                "groupName", project, "userId", user_id, "userEmail", json_str_or_null(user_email), "ownerAccessKey",
                access_key, "image", image, "lang", image,
                "architecture", arch, "tag", json_str_or_null(tag), "registry", "", "containerId",
                json_str_or_null(container), "occupiedSlots", json_text(occupying, "{}"), "occupyingSlots",
                json_text(occupying, "{}"), "requestedSlots", json_text(requested, "{}"), "environ",
                json_text(environ, "{}"), "resourceOpts", json_text(ropts, "{}"), "mounts", json_text(mounts, "[]"),
                "vfolder_mounts", json_text(vfolder_mounts, "[]"),
                "status", status, "statusInfo", json_str_or_null(status_info), "statusData",
                json_text(status_data, "{}"), "statusHistory", json_text(history, "{}"), "creationTime",
                created_iso, "terminationTime", term ? json_string(term_iso) : json_null(), "resourceGroup",
                json_str_or_null(rg), "numQueriesExecuted", (json_int_t)num_queries, "lastStat",
                json_text(last_stat, "null"), "idleChecks", json_object(), "clusterSize", (json_int_t)cluster_size,
                "result", result, "age", age);
}

void session_publish(struct manager *m, const struct db_rows *rows, int row, const char *status, const char *reason)
{
        session_publish_named(m, rows, row, session_status_event(session_status_from_string(status)), status, reason);
}

void session_publish_named(struct manager *m, const struct db_rows *rows, int row, const char *name,
                           const char *status, const char *reason)
{
        struct session_event ev = {
                .name = name,
                .session_id = db_getn(rows, row, "id"),
                .session_name = db_getn(rows, row, "name"),
                .access_key = db_getn(rows, row, "access_key"),
                .user_id = db_getn(rows, row, "user_id"),
                .domain = db_getn(rows, row, "domain_name"),
                .project_id = db_getn(rows, row, "project_id"),
                .status = status,
                .reason = reason,
                .exit_code = -1,
        };
        if (ev.name)
                events_publish(m->events, &ev);
}

/* Does a session in this status hold resources on an agent? */
static bool occupies(enum session_status s)
{
        return s != SESSION_PENDING && !session_status_is_terminal(s);
}

char *session_history_add(const char *history, enum session_status to, int64_t now)
{
        char when[48];
        json_t *hist = history ? json_loads(history, 0, NULL) : NULL;

        if (!json_is_object(hist)) {
                json_decref(hist);
                hist = json_object();
        }
        json_object_set_new(hist, session_status_to_string(to), json_string(time_format_iso(now, when, sizeof(when))));
        char *text = json_dumps(hist, JSON_COMPACT);
        json_decref(hist);
        return text;
}

int session_apply_transition(struct manager *m, const struct db_rows *rows, int row, enum session_status to,
                             const char *reason, struct tess_error **err)
{
        const char *id = db_getn(rows, row, "id"), *occupied_at = db_getn(rows, row, "occupied_at");
        enum session_status from = session_status_from_string(db_getn(rows, row, "status"));
        int64_t now = now_usec();
        bool terminal = session_status_is_terminal(to);
        bool closes = occupies(from) && !occupies(to); /* the occupancy interval ends */
        int r;

        if (!session_transition_allowed(from, to))
                return tess_err(err, EINVAL, "a session cannot go from %s to %s", session_status_to_string(from),
                                session_status_to_string(to));
        _cleanup_free_ char *hist = session_history_add(db_getn(rows, row, "status_history"), to, now);
        r = DBQ(m->db,
                "UPDATE sessions SET status = ?, status_info = ?, status_history = ?, status_changed_at = ?,"
                " terminated_at = CASE WHEN ? = 1 THEN ? ELSE terminated_at END,"
                " occupied_at = CASE WHEN ? = 1 THEN NULL ELSE occupied_at END,"
                " occupying_slots = CASE WHEN ? = 1 THEN '{}' ELSE occupying_slots END"
                " WHERE id = ? AND status = ?",
                NULL, err, DB_TEXT(session_status_to_string(to)), DB_TEXT(reason), DB_TEXT(hist), DB_INT(now),
                DB_BOOL(terminal), DB_INT(now), DB_BOOL(closes), DB_BOOL(to == SESSION_PENDING), DB_TEXT(id),
                DB_TEXT(session_status_to_string(from)));
        if (r == 0)
                r = tess_err(err, EAGAIN, "session '%s' changed concurrently", id);
        if (r < 0)
                return r;
        r = DBQ(m->db,
                "UPDATE kernels SET status = ?, status_info = ?,"
                " terminated_at = CASE WHEN ? = 1 THEN ? ELSE terminated_at END,"
                " agent_id = CASE WHEN ? = 1 THEN NULL ELSE agent_id END,"
                " device_alloc = CASE WHEN ? = 1 THEN '{}' ELSE device_alloc END WHERE session_id = ?",
                NULL, err, DB_TEXT(session_status_to_string(to)), DB_TEXT(reason), DB_BOOL(terminal), DB_INT(now),
                DB_BOOL(to == SESSION_PENDING), DB_BOOL(to == SESSION_PENDING), DB_TEXT(id));
        if (r < 0)
                return r;
        if (closes && occupied_at)
                return usage_record(m, id, db_getn(rows, row, "user_id"), db_getn(rows, row, "project_id"),
                                    db_getn(rows, row, "domain_name"), db_getn(rows, row, "resource_group"),
                                    db_getn(rows, row, "occupying_slots"), strtoll(occupied_at, NULL, 10), now, err);
        return 0;
}

void session_touch(struct manager *m, const char *id, int64_t now)
{
        struct tess_error *err = NULL;

        if (DBQ(m->db,
                "UPDATE sessions SET last_activity_at = ?"
                " WHERE id = ? AND (last_activity_at IS NULL OR last_activity_at < ?)",
                NULL, &err, DB_INT(now), DB_TEXT(id), DB_INT(now - USEC_PER_SEC)) < 0) {
                log_warn("session %s: recording activity: %s", id, err->msg);
                tess_error_free(err);
        }
}

int session_transition(struct manager *m, const char *id, enum session_status from, enum session_status to,
                       const char *reason, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *query = NULL;
        int r;

        if (!session_transition_allowed(from, to))
                return tess_err(err, EINVAL, "a session cannot go from %s to %s", session_status_to_string(from),
                                session_status_to_string(to));
        r = db_begin(m->db, err);
        if (r < 0)
                return r;
        query = session_select("s.id = ?");
        r = DBQ(m->db, query, &rows, err, DB_TEXT(id));
        if (r < 0)
                goto out_rollback;
        if (rows->nrows == 0) {
                r = tess_err(err, ENOENT, "session '%s' not found", id);
                goto out_rollback;
        }
        if (!streq(db_getn(rows, 0, "status"), session_status_to_string(from))) {
                r = tess_err(err, EAGAIN, "session '%s' is %s, not %s", id, db_getn(rows, 0, "status"),
                             session_status_to_string(from));
                goto out_rollback;
        }
        r = session_apply_transition(m, rows, 0, to, reason, err);
        if (r < 0)
                goto out_rollback;
        r = db_commit(m->db, err);
        if (r < 0)
                return r;
        session_publish(m, rows, 0, session_status_to_string(to), reason);
        return 0;
out_rollback:
        db_rollback(m->db);
        return r;
}
