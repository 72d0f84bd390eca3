/* cmd_version.c - `tessera version`: the client's version and the server's
 * answer to GET / (its newest API version and manager version). */
#include "common/compat.h"

#include "common/sign.h"
#include "common/version.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"

static int version_run(struct cli_call *call)
{
        struct tess_error *err = NULL;
        const char *endpoint;
        json_t *server = NULL;
        int r;

        (void)call;
        if (!(endpoint = client_endpoint(&err)))
                return cli_fail(err);
        r = client_json("GET", "/", NULL, CLIENT_UNSIGNED, &server, &err);
        if (arg_json) {
                json_t *j = json_pack("{s:{s:s, s:s}, s:s, s:O?}", "client", "version", TESSERA_VERSION, "api_version",
                                      API_VERSION_NEWEST, "endpoint", endpoint, "server", r < 0 ? NULL : server);
                out_json(j);
                json_decref(j);
        } else {
                printf("client: tessera %s (API %s)\n", TESSERA_VERSION, API_VERSION_NEWEST);
                if (r >= 0)
                        printf("server: %s: manager %s, API %s\n", endpoint,
                               json_string_value(json_object_get(server, "manager")) ?: "unknown",
                               json_string_value(json_object_get(server, "version")) ?: "unknown");
        }
        json_decref(server);
        return r < 0 ? cli_fail(err) : CLI_EXIT_OK;
}

static const struct cli_leaf version_leaf = {
        "version", NULL, version_run, { NULL }, 0, 0, 0, NULL,
        "Print the client's version and the server's (GET /).", NULL,
};

int cmd_version(int argc, char **argv)
{
        return cli_run_leaf("tessera version", &version_leaf, argc, argv);
}
