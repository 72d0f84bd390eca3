/* session_status_data.c - what a session's statusData says besides its
 * status: keys set by whoever knows them (the agent's error, the main
 * kernel's exit code), and the mark of the sessions whose agent stopped
 * answering.
 *
 * A session on an UNREACHABLE agent (scheduler_reaper.c) keeps its status
 * and its resources; it shows statusInfo "agent-unreachable" and
 *
 *   statusData.agentUnreachable = {"agent": "node-1",
 *                                  "since": "2026-11-28T06:40:02.123Z",
 *                                  "statusInfo": <the statusInfo it replaced>}
 *
 * When the agent heartbeats again the mark goes and the statusInfo it
 * replaced comes back (unless a transition meanwhile set another).  Each
 * change is published ("session_agent_unreachable", "session_agent_reachable",
 * with the unchanged status) so that event streams and the web UI show it. */
#include "common/compat.h"

#include "common/log.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/sessions/session.h"

#define MARK_KEY SESSION_UNREACHABLE_KEY

static json_t *status_data_of(const char *text)
{
        json_t *data = text ? json_loads(text, 0, NULL) : NULL;

        if (!json_is_object(data)) {
                json_decref(data);
                data = json_object();
        }
        return data;
}

int session_set_status_data(struct manager *m, const char *id, const char *key, json_t *value,
                            struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db, "SELECT status_data FROM sessions WHERE id = ?", &rows, err, DB_TEXT(id));

        if (r < 0) {
                json_decref(value);
                return r;
        }
        json_t *data = status_data_of(rows->nrows ? db_getn(rows, 0, "status_data") : NULL);
        if (value)
                json_object_set_new(data, key, value);
        else
                json_object_del(data, key);
        _cleanup_free_ char *text = json_dumps(data, JSON_COMPACT);
        json_decref(data);
        return DBQ(m->db, "UPDATE sessions SET status_data = ? WHERE id = ?", NULL, err, DB_TEXT(text), DB_TEXT(id));
}

/* The live sessions with a kernel on `agent` (session_select rows); only
 * the marked ones with `marked`. */
static int sessions_on(struct manager *m, const char *agent, bool marked, struct db_rows **rows,
                       struct tess_error **err)
{
#define LIVE_ON_AGENT "s.id IN (SELECT session_id FROM kernels WHERE agent_id = ?)" \
                      " AND s.status NOT IN ('PENDING', 'TERMINATED', 'CANCELLED', 'ERROR')"
        _cleanup_free_ char *sql = session_select(
                marked ? LIVE_ON_AGENT " AND s.status_data LIKE '%\"" MARK_KEY "\"%'" : LIVE_ON_AGENT);
#undef LIVE_ON_AGENT

        return DBQ(m->db, sql, rows, err, DB_TEXT(agent));
}

/* Write the session's new statusInfo and statusData if it is still in the
 * status it was read in; then publish `event`. */
static int rewrite(struct manager *m, const struct db_rows *rows, int i, const char *info, json_t *data,
                   const char *event, struct tess_error **err)
{
        _cleanup_free_ char *text = json_dumps(data, JSON_COMPACT);
        const char *status = db_getn(rows, i, "status");
        int r = DBQ(m->db, "UPDATE sessions SET status_info = ?, status_data = ? WHERE id = ? AND status = ?", NULL,
                    err, DB_TEXT(info), DB_TEXT(text), DB_TEXT(db_getn(rows, i, "id")), DB_TEXT(status));

        if (r > 0)
                session_publish_named(m, rows, i, event, status, info);
        return r < 0 ? r : 0;
}

int session_mark_agent_unreachable(struct manager *m, const char *agent, int64_t since, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        char when[48];
        int r = sessions_on(m, agent, false, &rows, err);

        time_format_iso(since, when, sizeof(when));
        for (int i = 0; r >= 0 && i < rows->nrows; i++) {
                json_t *data = status_data_of(db_getn(rows, i, "status_data"));
                const char *info = db_getn(rows, i, "status_info");
                if (!json_object_get(data, MARK_KEY)) {
                        json_object_set_new(data, MARK_KEY,
                                            json_pack("{s:s, s:s, s:s?}", "agent", agent, "since", when, "statusInfo",
                                                      info));
                        r = rewrite(m, rows, i, "agent-unreachable", data, "session_agent_unreachable", err);
                }
                json_decref(data);
        }
        return r < 0 ? r : 0;
}

char *session_info_unmarked(const struct db_rows *rows, int row)
{
        const char *info = db_getn(rows, row, "status_info");

        if (!info || !streq(info, "agent-unreachable"))
                return info ? xstrdup(info) : NULL;
        json_t *data = status_data_of(db_getn(rows, row, "status_data"));
        const char *before = json_string_value(json_object_get(json_object_get(data, MARK_KEY), "statusInfo"));
        char *kept = before ? xstrdup(before) : NULL;
        json_decref(data);
        return kept;
}

int session_unmark_agent_unreachable(struct manager *m, const char *agent, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = sessions_on(m, agent, true, &rows, err);

        for (int i = 0; r >= 0 && i < rows->nrows; i++) {
                json_t *data = status_data_of(db_getn(rows, i, "status_data"));
                const json_t *mark = json_object_get(data, MARK_KEY);
                const char *info = db_getn(rows, i, "status_info");
                if (mark) {
                        const char *before = json_string_value(json_object_get(mark, "statusInfo"));
                        _cleanup_free_ char *kept = before ? xstrdup(before) : NULL;
                        if (info && streq(info, "agent-unreachable"))
                                info = kept;
                        json_object_del(data, MARK_KEY);
                        r = rewrite(m, rows, i, info, data, "session_agent_reachable", err);
                }
                json_decref(data);
        }
        return r < 0 ? r : 0;
}
