/* cmd_session_commit.c - `tessera session commit NAME [--tag T]
 * [--no-wait]`: POST /session/{name}/commit, then follow the background
 * task to its end and print the new image (task_follow.h). */
#include "common/compat.h"

#include "common/buf.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/task_follow.h"

const struct cli_opt session_commit_opts[] = {
        { "tag", 't', OPT_STR, DEST_BODY, "tag", 0, 0, "TAG", "the new image's tag (default: <base tag>-<time>)" },
        { "no-wait", 0, OPT_FLAG, DEST_LOCAL, "no-wait", 0, 0, NULL, "print the task id and return at once" },
        { "owner", 0, OPT_STR, DEST_QUERY, "owner_access_key", 0, 0, "ACCESS_KEY",
          "the session of this keypair (admins)" },
        {},
};

int session_commit_cmd(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        struct tess_error *err = NULL;
        json_t *started = NULL, *done = NULL;
        struct buf path = BUF_INIT;

        buf_puts(&path, "/session/");
        buf_percent_encode(&path, a->pos[0]);
        buf_puts(&path, "/commit");
        client_query(&path, a->query);
        int r = client_json("POST", path.data, a->body, CLIENT_SIGNED, &started, &err);
        buf_release(&path);
        if (r < 0)
                return cli_fail(err);
        const char *task = json_string_value(json_object_get(started, "task_id"));
        const char *image = json_string_value(json_object_get(started, "image"));
        if (!task) {
                json_decref(started);
                return cli_error("the manager answered no task id");
        }
        if (cli_local_flag(a, "no-wait")) {
                if (arg_json)
                        out_json(started);
                else
                        printf("%s %s\n", task, image ? image : "");
                json_decref(started);
                return CLI_EXIT_OK;
        }
        if (!arg_json)
                fprintf(stderr, "committing %s to %s (task %s)\n", a->pos[0], image ? image : "?", task);
        r = task_follow(task, "commit", &done, &err);
        json_decref(started);
        if (r < 0)
                return cli_fail(err);
        const char *status = json_string_value(json_object_get(done, "status"));
        if (!streq_ptr(status, "done")) {
                int ret = cli_error("the commit %s: %s", status ? status : "ended",
                                    json_string_value(json_object_get(done, "message")) ?: "");
                json_decref(done);
                return ret;
        }
        if (arg_json)
                out_json(done);
        else
                printf("%s\n", json_string_value(json_object_get(json_object_get(done, "result"), "image")) ?: "");
        json_decref(done);
        return CLI_EXIT_OK;
}
