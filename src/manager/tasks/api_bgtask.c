/* api_bgtask.c - following background tasks (bgtask.h):
 *
 *   GET /background-tasks/{id}              the task as JSON
 *   GET /events/background-task?taskId=ID   server-sent events until it ends
 *
 * The stream starts with the task as it is (bgtask_updated, or its end
 * event when it has already ended), then each change: `event:
 * bgtask_updated|bgtask_done|bgtask_failed|bgtask_cancelled` with `data:
 * {task_id, status, current_progress, total_progress, message}`; after the
 * end comes `event: server_close` and the stream closes, as Backend.AI's.
 * A task is seen as its owner's objects are (authz.h: its user, the
 * admins and monitors of its domain unless a superadmin started it,
 * superadmins); to anyone else it does not exist (404).
 * Changes made through another manager are picked up from the database
 * every POLL_USEC. */
#include "common/compat.h"

#include <inttypes.h>

#include "common/buf.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/api/authz.h"
#include "manager/core/events.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/tasks/bgtask.h"

#define POLL_USEC (2 * USEC_PER_SEC)

static bool task_visible(struct api_ctx *c, const char *user_id, const char *domain)
{
        return authz_sees(c, &(struct authz_owner){ user_id, domain, NULL });
}

/* Load task `id` if the caller may see it; else answer 404 and RET -ENOENT. */
static int load_visible(struct api_ctx *c, const char *id, struct db_rows **rows)
{
        struct tess_error *err = NULL;

        if (!id || !*id) {
                api_problem(c, 400, "invalid-parameters", "'taskId' is required");
                return -EINVAL;
        }
        if (bgtask_load(c->m, id, rows, &err) < 0) {
                api_fail(c, err);
                return -EIO;
        }
        if ((*rows)->nrows == 0 || !task_visible(c, db_getn(*rows, 0, "user_id"), db_getn(*rows, 0, "domain_name"))) {
                api_problem(c, 404, "task-not-found", "background task '%s' not found", id);
                return -ENOENT;
        }
        return 0;
}

void api_bgtask_show(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;

        if (load_visible(c, c->param[0], &rows) == 0)
                api_json(c, 200, bgtask_json(rows, 0));
}

struct task_sub {
        struct api_ctx *c;
        char *task_id;
        int64_t modified_at; /* of the last state sent */
        bool ended;
};

static void sub_free(void *p)
{
        struct task_sub *s = p;
        free(s->task_id);
        free(s);
}

static void send_event(struct task_sub *s, uint64_t id, const char *name, const char *status, int64_t current,
                       int64_t total, const char *message)
{
        struct buf b = BUF_INIT;
        json_t *j =
                json_pack("{s:s, s:s, s:I, s:I, s:s}", "task_id", s->task_id, "status", status, "current_progress",
                          (json_int_t)current, "total_progress", (json_int_t)total, "message", message ? message : "");
        char *text = json_dumps(j, JSON_COMPACT);

        json_decref(j);
        if (id)
                buf_printf(&b, "id: %" PRIu64 "\n", id);
        buf_printf(&b, "event: %s\ndata: %s\n\n", name, text);
        free(text);
        if (bgtask_status_final(status))
                buf_puts(&b, "event: server_close\ndata: {}\n\n");
        http_stream_write(s->c->req, b.data, b.len);
        buf_release(&b);
        if (bgtask_status_final(status) && !s->ended) {
                s->ended = true;
                http_stream_end(s->c->req);
        }
}

/* Send the row as it is in the database when it changed since the last send. */
static void send_row(struct task_sub *s, const struct db_rows *rows)
{
        const char *status = db_getn(rows, 0, "status");
        int64_t modified = db_get_int(rows, 0, "modified_at");

        if (modified == s->modified_at && !bgtask_status_final(status))
                return;
        s->modified_at = modified;
        send_event(s, 0, bgtask_event_name(status), status, db_get_int(rows, 0, "current_progress"),
                   db_get_int(rows, 0, "total_progress"), db_getn(rows, 0, "message"));
}

static void on_task_event(const struct task_event *ev, void *data)
{
        struct task_sub *s = data;

        if (s->ended || !streq(ev->task_id, s->task_id))
                return;
        send_event(s, ev->id, ev->name, ev->status, ev->current_progress, ev->total_progress, ev->message);
}

static void on_poll(struct loop *l, void *data)
{
        struct task_sub *s = data;
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        s->c->timer_id = 0;
        if (s->ended)
                return;
        if (bgtask_load(s->c->m, s->task_id, &rows, &err) < 0 || rows->nrows == 0)
                tess_error_free(err);
        else
                send_row(s, rows);
        if (!s->ended) {
                http_stream_write(s->c->req, ": keep-alive\n\n", 14);
                s->c->timer_id = loop_add_timer(l, POLL_USEC, on_poll, s);
        }
}

void api_events_bgtask(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        const char *id = http_query(c->req, "taskId");

        if (!id)
                id = http_query(c->req, "task_id");
        if (load_visible(c, id, &rows) < 0)
                return;
        struct task_sub *s = xcalloc(1, sizeof(*s));
        s->c = c;
        s->task_id = xstrdup(id);
        s->modified_at = -1;
        c->state = s;
        c->state_free = sub_free;
        api_event_stream_start(c);
        send_row(s, rows);
        if (s->ended)
                return;
        c->listener_id = events_listen_tasks(c->m->events, on_task_event, s);
        c->timer_id = loop_add_timer(c->m->loop, POLL_USEC, on_poll, s);
}
