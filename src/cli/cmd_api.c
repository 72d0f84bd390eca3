/* cmd_api.c - `tessera api METHOD PATH [--data JSON|@FILE|-] [-i]`: one raw
 * signed request; prints the answer's body as received (with -i, the
 * status line and headers first).  Exit 0 on a 2xx answer, 1 otherwise.
 *
 * The body is sent byte for byte as given, with Content-Type
 * application/json; without a body the request says text/plain, as
 * Backend.AI's clients do (and sign).  The path is sent and signed as
 * given.  Without keys the request goes unsigned. */
#include "common/compat.h"

#include <ctype.h>

#include "common/fs.h"
#include "cli/cli-internal.h"
#include "cli/client.h"

#define MAX_DATA (64u << 20)

static const struct cli_opt api_opts[] = {
        { "data", 'd', OPT_STR, DEST_LOCAL, "data", 0, 0, "JSON|@FILE|-",
          "request body: the text itself, @ and a file name, or - for standard input" },
        { "include", 'i', OPT_FLAG, DEST_LOCAL, "include", 0, 0, NULL,
          "print the status line and headers before the body" },
        {},
};

static int read_data(const char *spec, char **ret, size_t *ret_len, struct tess_error **err)
{
        if (spec[0] == '@')
                return fs_read_file(spec + 1, MAX_DATA, ret, ret_len, err);
        if (streq(spec, "-"))
                return cli_read_stdin(MAX_DATA, ret, ret_len, err);
        *ret = xstrdup(spec);
        *ret_len = strlen(spec);
        return 0;
}

static int api_run(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        const char *spec = cli_local_str(a, "data");
        struct client_response resp = CLIENT_RESPONSE_INIT;
        struct tess_error *err = NULL;
        _cleanup_free_ char *method = xstrdup(a->pos[0]), *data = NULL;
        size_t data_len = 0;
        int r;

        for (char *p = method; *p; p++) {
                if (!isalpha((unsigned char)*p))
                        return cli_usage_error(call->prefix, "'%s' is not an HTTP method", a->pos[0]);
                *p = (char)toupper((unsigned char)*p);
        }
        if (spec && read_data(spec, &data, &data_len, &err) < 0)
                return cli_fail(err);
        r = client_send(method, a->pos[1], data, data_len, CLIENT_IF_KEYS, &resp, &err);
        if (r < 0) {
                client_response_release(&resp);
                return cli_fail(err);
        }
        if (cli_local_flag(a, "include"))
                fwrite(resp.headers.data, 1, resp.headers.len, stdout);
        fwrite(resp.body.data, 1, resp.body.len, stdout);
        if (resp.body.len && resp.body.data[resp.body.len - 1] != '\n' && isatty(STDOUT_FILENO))
                fputc('\n', stdout);
        r = resp.status >= 200 && resp.status <= 299 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
        client_response_release(&resp);
        return r;
}

static const struct cli_leaf api_leaf = {
        "api", NULL, api_run, { api_opts }, 0, 2, 2, "METHOD PATH",
        "Send one signed request (PATH with its query string, e.g. /sessions?status=RUNNING) and print the\n"
        "answer's body as is. Exit status 0 on a 2xx answer, 1 otherwise.",
        NULL,
};

int cmd_api(int argc, char **argv)
{
        return cli_run_leaf("tessera api", &api_leaf, argc, argv);
}
