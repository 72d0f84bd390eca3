/* cmd_session.c - `tessera session create|ls|info|rm|logs|events|exec|
 * upload|download|ls-files`: the Backend.AI session routes (POST /session,
 * GET /sessions, GET|DELETE /session/{name}, GET /session/{name}/logs,
 * GET /events/session, POST /session/{name} execute, /upload,
 * /download_single, GET /session/{name}/files); `commit` and `app` are
 * in files of their own. */
#include "common/compat.h"

#include <time.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/fs.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"

/* Statuses `session ls` shows unless --status or --all-status. */
#define ACTIVE_STATUSES "PENDING,SCHEDULED,PREPARING,PULLING,CREATING,RUNNING,TERMINATING,ERROR"

static const struct cli_opt create_opts[] = {
        { "name", 'n', OPT_STR, DEST_BODY, "name", 0, 0, "NAME", "session name (default: generated)" },
        { "image", 'i', OPT_STR, DEST_BODY, "image", 0, 0, "IMAGE", "image as NAME:TAG (required)" },
        { "resource", 'r', OPT_SLOTS, DEST_BODY, "config.resources", 0, 0, "SLOT=VALUE",
          "resources, repeatable: -r cpu=2 -r mem=4g -r cuda.shares=0.5" },
        { "group", 'g', OPT_STR, DEST_BODY, "group", 0, 0, "PROJECT", "project to run in (default: default)" },
        { "resource-group", 0, OPT_STR, DEST_BODY, "config.scaling_group", 0, 0, "NAME",
          "resource group (default: the first one allowed)" },
        { "type", 't', OPT_STR, DEST_BODY, "type", 0, 0, "TYPE", "interactive (default), batch or inference" },
        { "startup-command", 'c', OPT_STR, DEST_BODY, "startupCommand", 0, 0, "COMMAND",
          "what a batch session runs" },
        { "starts-at", 0, OPT_STR, DEST_BODY, "starts_at", 0, 0, "TIME",
          "start a batch session later: ISO 8601 time or a delay like 1h" },
        { "batch-timeout", 0, OPT_STR, DEST_BODY, "batch_timeout", 0, 0, "DURATION",
          "stop a batch session after this long (30m, 2h)" },
        { "env", 'e', OPT_MAP, DEST_BODY, "config.environ", 0, 0, "KEY=VALUE",
          "environment variable, repeatable" },
        { "mount", 'm', OPT_LIST, DEST_BODY, "config.mounts", 0, 0, "FOLDER", "virtual folder to mount, repeatable" },
        { "shmem", 0, OPT_STR, DEST_BODY, "config.resource_opts.shmem", 0, 0, "SIZE", "shared memory (64m)" },
        { "cluster-size", 0, OPT_INT, DEST_BODY, "clusterSize", 0, 0, "N", "number of containers (default 1)" },
        { "cluster-mode", 0, OPT_STR, DEST_BODY, "clusterMode", 0, 0, "MODE", "single-node (default) or multi-node" },
        { "priority", 0, OPT_INT, DEST_BODY, "priority", 0, 0, "N", "0-100 (default 10; a user up to its policy's max_session_priority)" },
        { "owner", 0, OPT_STR, DEST_BODY, "owner_access_key", 0, 0, "ACCESS_KEY",
          "create it for another keypair (admins)" },
        { "depends-on", 0, OPT_LIST, DEST_BODY, "dependencies", 0, 0, "SESSION",
          "start only after this session succeeded, repeatable" },
        { "tag", 0, OPT_STR, DEST_BODY, "tag", 0, 0, "TEXT", "free-form tag" },
        { "architecture", 0, OPT_STR, DEST_BODY, "architecture", 0, 0, "ARCH", "image architecture (x86_64)" },
        { "enqueue-only", 0, OPT_FLAG, DEST_BODY, "enqueueOnly", 0, 0, NULL, "answer as soon as it is queued" },
        { "max-wait", 0, OPT_INT, DEST_BODY, "maxWaitSeconds", 0, 0, "SECONDS",
          "wait at most this long for RUNNING (0: until it starts)" },
        { "no-reuse", 0, OPT_UNSET, DEST_BODY, "reuseIfExists", 0, 0, NULL,
          "fail instead of returning an existing session of that name" },
        { "count", 0, OPT_INT, DEST_LOCAL, "count", 0, 0, "N",
          "create N sessions of this request, named NAME-1 ... NAME-N (a job array), over one connection" },
        {},
};

#define CREATE_COUNT_MAX 100000

/* Whose session a name means: --owner for info, rm and logs. */
static const struct cli_opt owner_opts[] = {
        { "owner", 0, OPT_STR, DEST_QUERY, "owner_access_key", 0, 0, "ACCESS_KEY",
          "the session of this keypair (admins)" },
        {},
};

static const struct cli_opt ls_opts[] = {
        { "status", 's', OPT_LIST, DEST_QUERY, "status", 0, 0, "STATUS",
          "only sessions in this status, repeatable (default: the active ones)" },
        { "all-status", 'a', OPT_FLAG, DEST_LOCAL, "all", 0, 0, NULL, "sessions in any status" },
        { "owner", 0, OPT_STR, DEST_QUERY, "owner", 0, 0, "ACCESS_KEY|EMAIL", "only this owner's sessions" },
        { "group", 'g', OPT_STR, DEST_QUERY, "group", 0, 0, "PROJECT", "only this project's sessions" },
        { "type", 't', OPT_STR, DEST_QUERY, "type", 0, 0, "TYPE", "only interactive, batch or inference" },
        { "name", 'n', OPT_STR, DEST_QUERY, "name", 0, 0, "NAME", "only sessions of this name" },
        { "resource-group", 0, OPT_STR, DEST_QUERY, "resource_group", 0, 0, "NAME",
          "only this resource group's sessions" },
        { "domain", 0, OPT_STR, DEST_QUERY, "domain", 0, 0, "DOMAIN", "only this domain's sessions" },
        {},
};

static const struct cli_opt rm_opts[] = {
        { "forced", 'f', OPT_FLAG, DEST_QUERY, "forced", 0, 0, NULL, "terminate without waiting for the agent" },
        {},
};

static const struct cli_opt events_opts[] = {
        { "count", 0, OPT_INT, DEST_LOCAL, "count", 0, 0, "N", "stop after N events" },
        { "owner", 0, OPT_STR, DEST_QUERY, "ownerAccessKey", 0, 0, "ACCESS_KEY", "events of this keypair (admins)" },
        { "group", 'g', OPT_STR, DEST_QUERY, "groupName", 0, 0, "PROJECT", "events of this project's sessions" },
        { "session-id", 0, OPT_STR, DEST_QUERY, "sessionId", 0, 0, "ID", "events of the session with this id" },
        {},
};

static const struct column ls_columns[] = {
        { "NAME", "sessionName", COL_TEXT },     { "ID", "sessionId", COL_SHORTID },
        { "TYPE", "type", COL_TEXT },            { "STATUS", "status", COL_TEXT },
        { "INFO", "statusInfo", COL_TEXT },      { "IMAGE", "image", COL_TEXT },          { "PROJECT", "groupName", COL_TEXT },
        { "RESOURCES", "requestedSlots", COL_SLOTS }, { "CREATED", "creationTime", COL_TIME },
        {},
};

static const struct cli_opt exec_opts[] = {
        { "mode", 0, OPT_STR, DEST_LOCAL, "mode", 0, 0, "MODE",
          "batch (default: a shell command) or query (Python, state kept between calls)" },
        {},
};

static const struct cli_opt upload_opts[] = {
        { "dest", 'd', OPT_STR, DEST_LOCAL, "dest", 0, 0, "DIR", "directory under /home/work to put the files in" },
        {},
};

static const struct cli_opt download_opts[] = {
        { "output", 'o', OPT_STR, DEST_LOCAL, "output", 0, 0, "FILE",
          "where to write it (default: its name, here; '-': standard output)" },
        {},
};

/* "/session/<escaped name><suffix>?<query>" */
static char *session_path(const char *name, const char *suffix, const json_t *query)
{
        struct buf b = BUF_INIT;

        buf_puts(&b, "/session/");
        buf_percent_encode(&b, name);
        buf_puts(&b, suffix);
        client_query(&b, query);
        return buf_detach(&b, NULL);
}

static void print_created(const json_t *answer, const void *arg UNUSED)
{
        const char *status = json_string_value(json_object_get(answer, "status"));

        printf("session '%s' (%s): %s%s%s\n", json_string_value(json_object_get(answer, "sessionName")),
               json_string_value(json_object_get(answer, "sessionId")), status,
               streq_ptr(status, "TIMEOUT") ? " (not started within the wait: it stays queued)" : "",
               json_is_false(json_object_get(answer, "created")) ? " (an existing session of that name)" : "");
}

static void print_destroyed(const json_t *answer UNUSED, const void *name)
{
        printf("session '%s' destroyed\n", (const char *)name);
}

static void print_logs(const json_t *answer, const void *arg UNUSED)
{
        const char *logs = json_string_value(json_path_get(answer, "result.logs"));

        if (logs && *logs) {
                fputs(logs, stdout);
                if (logs[strlen(logs) - 1] != '\n')
                        fputc('\n', stdout);
        }
}

static int session_create(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        long long count = cli_local_int(a, "count", 0);
        int ret = CLI_EXIT_OK;

        if (!json_object_get(a->body, "image"))
                return cli_usage_error(call->prefix, "--image is required");
        if (json_object_get(a->local, "count") && (count < 1 || count > CREATE_COUNT_MAX))
                return cli_usage_error(call->prefix, "--count wants 1 to 100000");
        if (!json_object_get(a->body, "name")) {
                char name[20] = "tessera-";
                random_string(name + 8, 10, "abcdefghijklmnopqrstuvwxyz0123456789");
                json_object_set_new(a->body, "name", json_string(name));
        }
        if (!count)
                return cli_request("POST", "/session", a->body, print_created, NULL);
        /* NAME-1 ... NAME-N, one request each on the client's one
         * connection; every failure is said, and makes the exit status */
        _cleanup_free_ char *base = xstrdup(json_string_value(json_object_get(a->body, "name")));
        for (long long i = 1; i <= count; i++) {
                json_object_set_new(a->body, "name", json_sprintf("%s-%lld", base, i));
                if (cli_request("POST", "/session", a->body, print_created, NULL) != CLI_EXIT_OK) {
                        fprintf(stderr, "  (session '%s-%lld' not created)\n", base, i);
                        ret = CLI_EXIT_ERROR;
                }
        }
        return ret;
}

static int session_ls(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        _cleanup_(buf_release) struct buf path = BUF_INIT;

        if (!json_object_get(a->query, "status") && !cli_local_flag(a, "all"))
                json_object_set_new(a->query, "status", json_string(ACTIVE_STATUSES));
        buf_puts(&path, "/sessions");
        client_query(&path, a->query);
        return cli_request("GET", path.data, NULL, out_print_list, ls_columns);
}

static int session_info(struct cli_call *call)
{
        _cleanup_free_ char *path = session_path(call->args.pos[0], "", call->args.query);
        return cli_request("GET", path, NULL, out_print_object, NULL);
}

static int session_logs(struct cli_call *call)
{
        _cleanup_free_ char *path = session_path(call->args.pos[0], "/logs", call->args.query);
        return cli_request("GET", path, NULL, print_logs, NULL);
}

static int session_rm(struct cli_call *call)
{
        int ret = CLI_EXIT_OK;

        for (int i = 0; i < call->args.npos; i++) {
                _cleanup_free_ char *path = session_path(call->args.pos[i], "", call->args.query);
                if (cli_request("DELETE", path, NULL, print_destroyed, call->args.pos[i]) != CLI_EXIT_OK)
                        ret = CLI_EXIT_ERROR;
        }
        return ret;
}

/* Print an execute answer's console: stdout and stderr to theirs. */
static void print_console(const json_t *result)
{
        size_t i;
        json_t *item;

        json_array_foreach(json_object_get(result, "console"), i, item) {
                const char *kind = json_string_value(json_array_get(item, 0));
                const char *text = json_string_value(json_array_get(item, 1));
                if (!text)
                        continue;
                FILE *f = kind && streq(kind, "stderr") ? stderr : stdout;
                fputs(text, f);
                fflush(f);
        }
}

/* Run code in the session, following it with `continue` (and `input`
 * from stdin when it waits for some) until it finishes; the exit code is
 * the command's. */
static int session_exec(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        const char *mode = cli_local_str(a, "mode");
        _cleanup_free_ char *path = session_path(a->pos[0], "", a->query);
        _cleanup_(buf_release) struct buf code = BUF_INIT;
        struct tess_error *err = NULL;
        json_t *body, *ans = NULL;
        char run_id[80] = "";

        if (!mode)
                mode = "batch";
        if (!streq(mode, "batch") && !streq(mode, "query"))
                return cli_usage_error(call->prefix, "--mode must be batch or query");
        for (int i = 1; i < a->npos; i++)
                buf_printf(&code, "%s%s", i > 1 ? " " : "", a->pos[i]);
        body = json_pack("{s:s, s:s}", "mode", mode, "code", code.data);
        for (;;) {
                int r = client_json("POST", path, body, CLIENT_SIGNED, &ans, &err);
                json_decref(body);
                if (r < 0)
                        return cli_fail(err);
                const json_t *res = json_object_get(ans, "result");
                const char *status = json_string_value(json_object_get(res, "status"));
                const char *rid = json_string_value(json_object_get(res, "runId"));
                if (rid)
                        snprintf(run_id, sizeof(run_id), "%s", rid);
                if (arg_json) {
                        json_dumpf(ans, stdout, JSON_COMPACT);
                        fputc('\n', stdout);
                } else {
                        print_console(res);
                }
                bool more = status && streq(status, "continued"), input = status && streq(status, "waiting-input");
                if (!more && !input) {
                        json_int_t exit_code = json_integer_value(json_object_get(res, "exitCode"));
                        r = !status || streq(status, "exec-timeout")
                                    ? cli_error("the run ended with status %s", status ? status : "(none)")
                            : exit_code < 0 || exit_code > 255 ? CLI_EXIT_ERROR
                                                               : (int)exit_code;
                        json_decref(ans);
                        return r;
                }
                if (input) {
                        char line[4096];
                        if (!fgets(line, sizeof(line), stdin))
                                line[0] = '\0';
                        line[strcspn(line, "\n")] = '\0';
                        body = json_pack("{s:s, s:s, s:s}", "mode", "input", "code", line, "runId", run_id);
                } else {
                        body = json_pack("{s:s, s:s, s:s}", "mode", "continue", "code", "", "runId", run_id);
                }
                json_decref(ans);
        }
}

static int session_upload(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        const char *dest = cli_local_str(a, "dest");
        _cleanup_free_ char *path = session_path(a->pos[0], "/upload", a->query);
        struct client_response resp = CLIENT_RESPONSE_INIT;
        struct tess_error *err = NULL;
        size_t n = (size_t)a->npos - 1;
        const char **local = xcalloc(n, sizeof(*local));
        char **remote = xcalloc(n, sizeof(*remote));
        int r;

        for (size_t i = 0; i < n; i++) {
                local[i] = a->pos[i + 1];
                const char *base = strrchr(local[i], '/') ? strrchr(local[i], '/') + 1 : local[i];
                remote[i] = dest && *dest ? xasprintf("%s/%s", dest, base) : xstrdup(base);
        }
        r = client_upload(path, local, (const char *const *)remote, n, &resp, &err);
        if (r >= 0 && (resp.status < 200 || resp.status > 299))
                r = client_status_error(&resp, &err);
        for (size_t i = 0; i < n; i++)
                free(remote[i]);
        free(remote);
        free(local);
        client_response_release(&resp);
        if (r < 0)
                return cli_fail(err);
        if (!arg_json)
                printf("uploaded %zu file%s\n", n, n == 1 ? "" : "s");
        return CLI_EXIT_OK;
}

static int session_download(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        const char *file = a->pos[1], *out = cli_local_str(a, "output");
        json_t *query = json_pack("{s:s}", "file", file);
        struct client_response resp = CLIENT_RESPONSE_INIT;
        struct tess_error *err = NULL;

        json_object_update(query, a->query);
        _cleanup_free_ char *path = session_path(a->pos[0], "/download_single", query);
        json_decref(query);
        if (!out)
                out = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        int r = client_send("GET", path, NULL, 0, CLIENT_SIGNED, &resp, &err);
        if (r >= 0 && (resp.status < 200 || resp.status > 299))
                r = client_status_error(&resp, &err);
        if (r >= 0 && streq(out, "-")) {
                if (fwrite(resp.body.data, 1, resp.body.len, stdout) != resp.body.len)
                        r = tess_err(&err, EIO, "writing to standard output: %s", strerror(errno));
        } else if (r >= 0) {
                r = fs_write_file_atomic(out, resp.body.data, resp.body.len, 0644, &err);
                if (r >= 0 && !arg_json)
                        printf("%s: %zu bytes\n", out, resp.body.len);
        }
        client_response_release(&resp);
        return r < 0 ? cli_fail(err) : CLI_EXIT_OK;
}

static void print_files(const json_t *answer, const void *arg UNUSED)
{
        json_t *files = json_loads(json_string_value(json_object_get(answer, "files")) ?: "[]", 0, NULL);
        size_t i;
        json_t *f;

        json_array_foreach(files, i, f) {
                char when[32] = "-";
                double mtime = json_number_value(json_object_get(f, "mtime"));
                if (mtime > 0) {
                        time_t t = (time_t)mtime;
                        struct tm tm;
                        strftime(when, sizeof(when), "%Y-%m-%d %H:%M", localtime_r(&t, &tm));
                }
                printf("%s %12" JSON_INTEGER_FORMAT " %s %s\n", json_string_value(json_object_get(f, "mode")) ?: "?",
                       json_integer_value(json_object_get(f, "size")), when,
                       json_string_value(json_object_get(f, "filename")) ?: "?");
        }
        json_decref(files);
}

static int session_ls_files(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        json_t *query = json_pack("{s:s}", "path", a->npos > 1 ? a->pos[1] : ".");
        json_object_update(query, a->query);
        _cleanup_free_ char *path = session_path(a->pos[0], "/files", query);
        json_decref(query);
        return cli_request("GET", path, NULL, print_files, NULL);
}

struct events_state {
        long long left; /* -1: unlimited */
};

static int on_event(const char *event, const char *data, void *userdata, struct tess_error **err UNUSED)
{
        struct events_state *st = userdata;
        json_t *j = json_loads(data, 0, NULL);

        if (arg_json) {
                json_t *line = json_is_object(j) ? json_incref(j) : json_pack("{s:s}", "data", data);
                if (!json_object_get(line, "event"))
                        json_object_set_new(line, "event", json_string(event));
                json_dumpf(line, stdout, JSON_COMPACT);
                fputc('\n', stdout);
                json_decref(line);
        } else {
                const char *reason = json_string_value(json_object_get(j, "reason"));
                json_t *code = json_object_get(j, "exitCode");
                printf("%s %s %s", event, json_string_value(json_object_get(j, "sessionName")) ?: "-",
                       json_string_value(json_object_get(j, "status")) ?: "-");
                if (reason && *reason)
                        printf(" reason=%s", reason);
                if (json_is_integer(code))
                        printf(" exit=%" JSON_INTEGER_FORMAT, json_integer_value(code));
                fputc('\n', stdout);
        }
        fflush(stdout);
        json_decref(j);
        return st->left > 0 && --st->left == 0 ? 1 : 0;
}

static int session_events(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        struct events_state st = { .left = cli_local_int(a, "count", -1) };
        _cleanup_(buf_release) struct buf path = BUF_INIT;
        struct tess_error *err = NULL;

        if (json_object_get(a->local, "count") && st.left <= 0)
                return cli_usage_error(call->prefix, "--count must be a positive number");
        /* sessionName first, the way Backend.AI's client sends it */
        json_t *query = json_pack("{s:s}", "sessionName", a->npos ? a->pos[0] : "*");
        json_object_update(query, a->query);
        buf_puts(&path, "/events/session");
        client_query(&path, query);
        json_decref(query);
        if (client_events(path.data, on_event, &st, &err) < 0)
                return cli_fail(err);
        if (st.left > 0)
                return cli_error("the event stream ended before %lld more events came", st.left);
        return CLI_EXIT_OK;
}

static const struct cli_leaf session_leaves[] = {
        { "create", NULL, session_create, { create_opts }, 0, 0, 0, NULL, "create a session (POST /session)" },
        { "ls", "list", session_ls, { ls_opts, cli_page_opts }, 0, 0, 0, NULL, "list sessions (GET /sessions)" },
        { "info", "show", session_info, { owner_opts }, 0, 1, 1, "NAME", "show a session" },
        { "rm", "destroy", session_rm, { rm_opts, owner_opts }, 0, 1, -1, "NAME...",
          "destroy sessions (a pending one is cancelled)" },
        { "logs", NULL, session_logs, { owner_opts }, 0, 1, 1, "NAME", "print a session's container logs" },
        { "upload", NULL, session_upload, { upload_opts, owner_opts }, 0, 2, -1, "NAME FILE...",
          "copy files into a running session's home directory" },
        { "download", NULL, session_download, { download_opts, owner_opts }, 0, 2, 2, "NAME PATH",
          "copy a file out of a running session (PATH relative to its home directory)" },
        { "ls-files", NULL, session_ls_files, { owner_opts }, 0, 1, 2, "NAME [PATH]",
          "list a directory of a running session" },
        { "exec", NULL, session_exec, { exec_opts, owner_opts }, 0, 2, -1, "NAME CODE...",
          "run a command (or Python code with --mode query) in a running session; exits with its code" },
        { "events", NULL, session_events, { events_opts }, 0, 0, 1, "[NAME]",
          "follow session events (all visible sessions without NAME)" },
        { "commit", NULL, session_commit_cmd, { session_commit_opts }, 0, 1, 1, "NAME",
          "snapshot a running session into a private image (its home and folders left out)" },
        { "app", NULL, session_app_cmd, { session_app_opts }, 0, 3, 3, "start|stop NAME APP",
          "start an app of a running session (prints the link that opens it) or stop it" },
        {},
};

int cmd_session(int argc, char **argv)
{
        return cli_run_group("tessera session", "Compute sessions: containers running an image with resources.",
                             session_leaves, argc, argv);
}
