/* bgtask.h - background tasks: work that outlives the request that
 * started it (a session commit running on an agent, a registry rescan),
 * followed by its client through GET /events/background-task?taskId=
 * (server-sent events) or read with GET /background-tasks/{id}
 * (api_bgtask.c).
 *
 * A task is a row of background_tasks: kind, status (ongoing, then done,
 * failed or cancelled, once), progress (current of total, a message), who
 * started it, and a JSON result when it is done.  The row is the truth, so
 * a task survives a manager restart and any manager can answer for it;
 * each change is also published on the event bus (events.h) as
 * bgtask_updated / bgtask_done / bgtask_failed / bgtask_cancelled for the
 * streams of this manager.  Tasks that run inside a manager hold a lease
 * (bgtask_touch): one whose manager is gone is failed by the next sweep
 * of any manager (bgtask_fail_stale); a commit runs on its agent, which
 * reports the end until the manager acknowledges it. */
#ifndef TESS_BGTASK_H
#define TESS_BGTASK_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/crypto.h"
#include "common/error.h"
#include "common/timeutil.h"

struct manager;
struct api_ctx;
struct db_rows;

#define BGTASK_ONGOING   "ongoing"
#define BGTASK_DONE      "done"
#define BGTASK_FAILED    "failed"
#define BGTASK_CANCELLED "cancelled"

/* Insert an ongoing task of `kind` ("session-commit", "registry-rescan").
 * IN  session_id - the session it is about, or NULL; params - what the
 *     task's end needs, kept as its result until then (borrowed; NULL: {})
 * OUT ret_id - the task's id */
int bgtask_create(struct manager *m, const char *kind, const char *user_id, const char *domain, const char *session_id,
                  const json_t *params, char ret_id[UUID_STR_LEN], struct tess_error **err);

/* Record progress of an ongoing task and publish bgtask_updated; a task
 * that has ended is left alone (late reports are dropped). */
int bgtask_update(struct manager *m, const char *id, int64_t current, int64_t total, const char *message,
                  struct tess_error **err);

/* End an ongoing task with `status` (BGTASK_DONE, _FAILED, _CANCELLED), a
 * message and a result object (borrowed; NULL: {}).  A task already ended
 * keeps its first end: the call then returns 0 and changes nothing.
 * RET 1 ended now, 0 had already ended, -ENOENT no such task */
int bgtask_finish(struct manager *m, const char *id, const char *status, const char *message, const json_t *result,
                  struct tess_error **err);

/* Tasks that run inside a manager hold a lease: their manager touches
 * them at least every conf.task_lease / 4; one untouched for task_lease
 * ran in a manager that is gone (stopped, crashed), and is failed by any
 * manager that sweeps. */
int bgtask_touch(struct manager *m, const char *id, struct tess_error **err);
int bgtask_fail_stale(struct manager *m, const char *kind, struct tess_error **err);

/* The task's row (every column), or an empty set. */
int bgtask_load(struct manager *m, const char *id, struct db_rows **ret, struct tess_error **err);
/* The API's view of a loaded row: {task_id, kind, status, current_progress,
 * total_progress, message, result, session_id, created_at, modified_at}. */
json_t *bgtask_json(const struct db_rows *rows, int row);
bool bgtask_status_final(const char *status);
/* The event of a task in `status`: bgtask_updated while ongoing, else its end's. */
const char *bgtask_event_name(const char *status);

/* GET /background-tasks/{id} and its events, GET /events/background-task
 * (api_bgtask.c). */
void api_bgtask_show(struct api_ctx *c);
void api_events_bgtask(struct api_ctx *c);

#endif
