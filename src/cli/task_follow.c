/* task_follow.c - see task_follow.h. */
#include "../common/compat.h"

#include "../common/buf.h"
#include "client.h"
#include "task_follow.h"

struct follow {
        bool quiet, tty, ended;
        char *status, *message;
};

static int on_event(const char *event, const char *data, void *userdata, struct tess_error **err UNUSED)
{
        struct follow *f = userdata;
        json_t *j = json_loads(data, 0, NULL);
        const char *status = json_string_value(json_object_get(j, "status"));
        const char *message = json_string_value(json_object_get(j, "message"));
        json_int_t cur = json_integer_value(json_object_get(j, "current_progress"));
        json_int_t total = json_integer_value(json_object_get(j, "total_progress"));

        if (streq(event, "server_close")) {
                json_decref(j);
                return 1;
        }
        if (status) {
                free(f->status);
                f->status = xstrdup(status);
                free(f->message);
                f->message = xstrdup(message ? message : "");
                f->ended = !streq(status, "ongoing");
        }
        if (!f->quiet && status) {
                if (total > 0)
                        fprintf(stderr, "%s%s: %lld/%lld%s", f->tty ? "\r\033[K" : "", message ? message : status,
                                (long long)cur, (long long)total, f->tty && !f->ended ? "" : "\n");
                else
                        fprintf(stderr, "%s%s%s", f->tty ? "\r\033[K" : "", message ? message : status,
                                f->tty && !f->ended ? "" : "\n");
                fflush(stderr);
        }
        json_decref(j);
        return f->ended ? 1 : 0;
}

int task_follow(const char *task_id, bool quiet, json_t **ret, struct tess_error **err)
{
        struct follow f = { .quiet = quiet, .tty = isatty(STDERR_FILENO) };
        struct buf path = BUF_INIT;
        int r;

        buf_puts(&path, "/events/background-task?taskId=");
        buf_percent_encode(&path, task_id);
        r = client_events(path.data, on_event, &f, err);
        buf_release(&path);
        if (r == 0 && !f.ended)
                r = tess_err(err, EIO, "the event stream of task %s ended before the task", task_id);
        else if (r == 0 && !streq(f.status, "done"))
                r = tess_err(err, EIO, "task %s %s: %s", task_id, f.status, f.message);
        if (r == 0 && ret) {
                _cleanup_free_ char *show = xasprintf("/background-tasks/%s", task_id);
                r = client_json("GET", show, NULL, CLIENT_SIGNED, ret, err);
        }
        free(f.status);
        free(f.message);
        return r;
}
