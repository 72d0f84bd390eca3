/* bgtask.c - background tasks in the database, published on the event
 * bus (bgtask.h). */
#include "common/compat.h"

#include "common/timeutil.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/tasks/bgtask.h"

#define COLUMNS                                                                                                  \
        "id, kind, status, current_progress, total_progress, message, user_id, domain_name, session_id, result," \
        " created_at, modified_at"

bool bgtask_status_final(const char *status)
{
        return status && !streq(status, BGTASK_ONGOING);
}

const char *bgtask_event_name(const char *status)
{
        if (streq(status, BGTASK_DONE))
                return "bgtask_done";
        if (streq(status, BGTASK_FAILED))
                return "bgtask_failed";
        if (streq(status, BGTASK_CANCELLED))
                return "bgtask_cancelled";
        return "bgtask_updated";
}

int bgtask_load(struct manager *m, const char *id, struct db_rows **ret, struct tess_error **err)
{
        return DBQ(m->db, "SELECT " COLUMNS " FROM background_tasks WHERE id = ?", ret, err, DB_TEXT(id));
}

/* Publish the row of task `id` as it is now. */
static void publish(struct manager *m, const char *id)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (bgtask_load(m, id, &rows, &err) < 0 || rows->nrows == 0) {
                tess_error_free(err);
                return;
        }
        const char *status = db_getn(rows, 0, "status");
        struct task_event ev = {
                .name = bgtask_event_name(status),
                .task_id = id,
                .status = status,
                .current_progress = db_get_int(rows, 0, "current_progress"),
                .total_progress = db_get_int(rows, 0, "total_progress"),
                .message = db_getn(rows, 0, "message"),
                .user_id = db_getn(rows, 0, "user_id"),
                .domain = db_getn(rows, 0, "domain_name"),
        };
        events_publish_task(m->events, &ev);
}

int bgtask_create(struct manager *m, const char *kind, const char *user_id, const char *domain, const char *session_id,
                  const json_t *params, char ret_id[UUID_STR_LEN], struct tess_error **err)
{
        _cleanup_free_ char *text = params ? json_dumps(params, JSON_COMPACT) : NULL;
        int64_t now = now_usec();

        uuid_generate_str(ret_id);
        return DBQ(m->db,
                   "INSERT INTO background_tasks(id, kind, user_id, domain_name, session_id, result, created_at,"
                   " modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   NULL, err, DB_TEXT(ret_id), DB_TEXT(kind), DB_TEXT(user_id), DB_TEXT(domain), DB_TEXT(session_id),
                   DB_TEXT(text ? text : "{}"), DB_INT(now), DB_INT(now));
}

int bgtask_update(struct manager *m, const char *id, int64_t current, int64_t total, const char *message,
                  struct tess_error **err)
{
        int r = DBQ(m->db,
                    "UPDATE background_tasks SET current_progress = ?, total_progress = ?, message = ?, modified_at = ?"
                    " WHERE id = ? AND status = 'ongoing'",
                    NULL, err, DB_INT(current), DB_INT(total), DB_TEXT(message ? message : ""), DB_INT(now_usec()),
                    DB_TEXT(id));
        if (r > 0)
                publish(m, id);
        return r < 0 ? r : 0;
}

int bgtask_finish(struct manager *m, const char *id, const char *status, const char *message, const json_t *result,
                  struct tess_error **err)
{
        _cleanup_free_ char *text = result ? json_dumps(result, JSON_COMPACT) : NULL;
        int r = DBQ(m->db,
                    "UPDATE background_tasks SET status = ?, message = ?, result = ?, modified_at = ?,"
                    " current_progress = CASE WHEN ? = 'done' THEN total_progress ELSE current_progress END"
                    " WHERE id = ? AND status = 'ongoing'",
                    NULL, err, DB_TEXT(status), DB_TEXT(message ? message : ""), DB_TEXT(text ? text : "{}"),
                    DB_INT(now_usec()), DB_TEXT(status), DB_TEXT(id));
        if (r < 0)
                return r;
        if (r > 0) {
                publish(m, id);
                return 1;
        }
        _cleanup_rows_ struct db_rows *rows = NULL;
        r = bgtask_load(m, id, &rows, err);
        if (r < 0)
                return r;
        return rows->nrows ? 0 : tess_err(err, ENOENT, "background task '%s' not found", id);
}

int bgtask_touch(struct manager *m, const char *id, struct tess_error **err)
{
        int r = DBQ(m->db, "UPDATE background_tasks SET modified_at = ? WHERE id = ? AND status = 'ongoing'", NULL,
                    err, DB_INT(now_usec()), DB_TEXT(id));
        return r < 0 ? r : 0;
}

int bgtask_fail_stale(struct manager *m, const char *kind, struct tess_error **err)
{
        int64_t now = now_usec();
        int r = DBQ(m->db,
                    "UPDATE background_tasks SET status = 'failed',"
                    " message = 'interrupted: the manager running it stopped', modified_at = ?"
                    " WHERE kind = ? AND status = 'ongoing' AND modified_at < ?",
                    NULL, err, DB_INT(now), DB_TEXT(kind), DB_INT(now - m->conf.task_lease));
        return r < 0 ? r : 0;
}

json_t *bgtask_json(const struct db_rows *rows, int row)
{
        char created[64], modified[64];
        json_t *result = json_loads(db_getn(rows, row, "result"), 0, NULL);

        time_format_iso(db_get_int(rows, row, "created_at"), created, sizeof(created));
        time_format_iso(db_get_int(rows, row, "modified_at"), modified, sizeof(modified));
        return json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:o, s:s?, s:s, s:s}", "task_id", db_getn(rows, row, "id"),
                         "kind", db_getn(rows, row, "kind"), "status", db_getn(rows, row, "status"), "current_progress",
                         (json_int_t)db_get_int(rows, row, "current_progress"), "total_progress",
                         (json_int_t)db_get_int(rows, row, "total_progress"), "message", db_getn(rows, row, "message"),
                         "result", result ? result : json_object(), "session_id", db_getn(rows, row, "session_id"),
                         "created_at", created, "modified_at", modified);
}
