/* cmd_session_app.c - `tessera session app start|stop NAME APP`: an app
 * of a session's image (its ai.backend.service-ports label) through
 * Backend.AI's routes, POST /session/{name}/start-service {app, port?,
 * envs?, arguments?} (prints the link that opens it in a browser) and
 * POST /session/{name}/shutdown-service {service_name}
 * (docs/app-proxy.md). */
#include "common/compat.h"

#include "common/buf.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"

const struct cli_opt session_app_opts[] = {
        { "port", 'p', OPT_INT, DEST_BODY, "port", 0, 0, "PORT", "start: another of the app's ports" },
        { "env", 'e', OPT_MAP, DEST_BODY, "envs", 0, 0, "KEY=VALUE", "start: the app's environment, repeatable" },
        { "arg", 'a', OPT_MAP, DEST_BODY, "arguments", 0, 0, "FLAG=VALUE",
          "start: an argument after the app's command (--flag=value), repeatable" },
        { "owner", 0, OPT_STR, DEST_QUERY, "owner_access_key", 0, 0, "ACCESS_KEY",
          "the session of this keypair (admins)" },
        {},
};

struct app_arg {
        const char *session, *app;
};

static void print_started(const json_t *answer, const void *arg UNUSED)
{
        printf("%s\n", json_string_value(json_object_get(answer, "url")) ?: "");
        fprintf(stderr, "(the link works for %lld s; the app's own cookie keeps it open after that)\n",
                (long long)json_integer_value(json_object_get(answer, "expires_in")));
}

static void print_stopped(const json_t *answer UNUSED, const void *arg)
{
        const struct app_arg *a = arg;
        printf("app '%s' of session '%s' stopped\n", a->app, a->session);
}

int session_app_cmd(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        const char *verb = a->pos[0];
        struct app_arg arg = { a->pos[1], a->pos[2] };
        bool start = streq(verb, "start");
        struct buf path = BUF_INIT;
        int r;

        if (!start && !streq(verb, "stop"))
                return cli_usage_error(call->prefix, "'%s' is neither start nor stop", verb);
        if (!start && a->has_body)
                return cli_usage_error(call->prefix, "--port, --env and --arg are for start");
        buf_puts(&path, "/session/");
        buf_percent_encode(&path, arg.session);
        buf_puts(&path, start ? "/start-service" : "/shutdown-service");
        client_query(&path, a->query);
        json_object_set_new(a->body, start ? "app" : "service_name", json_string(arg.app));
        r = cli_request("POST", path.data, a->body, start ? print_started : print_stopped, &arg);
        buf_release(&path);
        return r;
}
