/* task_follow.c - see task_follow.h. */
#include "common/compat.h"

#include <stdio.h>

#include "common/buf.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/task_follow.h"

struct follow {
        const char *what;
        char last[512]; /* the last progress line printed */
};

static int on_event(const char *event, const char *data, void *userdata, struct tess_error **err UNUSED)
{
        struct follow *f = userdata;
        json_t *j = json_loads(data, 0, NULL);
        const char *message = json_string_value(json_object_get(j, "message"));
        json_int_t cur = json_integer_value(json_object_get(j, "current_progress"));
        json_int_t total = json_integer_value(json_object_get(j, "total_progress"));
        char line[512];
        bool end = !streq(event, "bgtask_updated");

        if (streq(event, "bgtask_updated") && !arg_json && message && *message) {
                snprintf(line, sizeof(line), "%s: [%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT "] %s", f->what, cur,
                         total, message);
                if (!streq(line, f->last)) {
                        fprintf(stderr, "%s\n", line);
                        snprintf(f->last, sizeof(f->last), "%s", line);
                }
        }
        json_decref(j);
        return end ? 1 : 0; /* bgtask_done|failed|cancelled, or server_close */
}

int task_follow(const char *id, const char *what, json_t **ret, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf path = BUF_INIT;
        struct follow f = { .what = what };
        json_t *task = NULL;
        int r;

        buf_puts(&path, "/events/background-task?taskId=");
        buf_percent_encode(&path, id);
        r = client_events(path.data, on_event, &f, err);
        if (r < 0)
                return tess_err_wrap(err, "following task %s", id);
        buf_reset(&path);
        buf_puts(&path, "/background-tasks/");
        buf_percent_encode(&path, id);
        r = client_json("GET", path.data, NULL, CLIENT_SIGNED, &task, err);
        if (r < 0)
                return r;
        if (streq_ptr(json_string_value(json_object_get(task, "status")), "ongoing")) {
                json_decref(task);
                return tess_err(err, EIO, "the event stream of task %s ended before the task did", id);
        }
        *ret = task;
        return 0;
}
