/* main.c - the `tessera` client: global options and the command table.
 *
 * `tessera [--endpoint URL] [--json] <command> [<args>]`.  Each command
 * group lives in its own cmd_*.c; this file only picks the row.  Exit
 * codes: 0 success, 1 error (`error: ...` on stderr), 2 usage. */
#include "common/compat.h"

#include <curl/curl.h>

#include "common/version.h"
#include "cli/cli-internal.h"
#include "cli/cli.h"
#include "cli/client.h"

const char *arg_endpoint;

static int cmd_help(int argc, char **argv);

static const struct command {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *help;
} commands[] = {
        { "session", cmd_session, "create, list, inspect, follow and destroy compute sessions" },
        { "admin", cmd_admin, "manage domains, projects, users, keypairs, policies, resource groups, presets, "
                              "images, agents; read the audit log" },
        { "vfolder", cmd_vfolder, "virtual folders: create, share, upload and download files, mount into sessions" },
        { "image", cmd_image, "build images from recipes, push them to registries, import OCI layouts or docker save archives" },
        { "api", cmd_api, "send a raw signed request and print the answer" },
        { "login", cmd_login, "log in with e-mail and password; save the endpoint and keypair" },
        { "logout", cmd_logout, "forget the saved endpoint and keypair" },
        { "version", cmd_version, "print the client's and the server's versions" },
        { "help", cmd_help, "show help for a command" },
        {},
};

static void main_help(FILE *f)
{
        fputs("usage: tessera [--endpoint URL] [--json] <command> [<args>]\n\n"
              "The Tessera client: signed requests to a Tessera (or Backend.AI) manager.\n\n"
              "commands:\n",
              f);
        for (const struct command *c = commands; c->name; c++)
                fprintf(f, "  %-8s  %s\n", c->name, c->help);
        fputs("\nglobal options:\n"
              "  --endpoint URL  the manager (default: $BACKEND_ENDPOINT, $TESSERA_ENDPOINT, the login config,\n"
              "                  http://127.0.0.1:8090)\n"
              "  --json          print the server's JSON answers\n"
              "  --help          show this help\n\n"
              "Keys come from $BACKEND_ACCESS_KEY and $BACKEND_SECRET_KEY (or TESSERA_ACCESS_KEY and\n"
              "TESSERA_SECRET_KEY), else from the file 'tessera login' writes.\n"
              "Run 'tessera <command> --help' for the options of a command.\n",
              f);
}

static const struct command *find_command(const char *name)
{
        for (const struct command *c = commands; c->name; c++)
                if (streq(c->name, name))
                        return c;
        return NULL;
}

/* `tessera help [command [sub...]]` is `tessera command [sub...] --help`. */
static int cmd_help(int argc, char **argv)
{
        if (argc < 2 || streq(argv[1], "help")) {
                main_help(stdout);
                return CLI_EXIT_OK;
        }
        const struct command *c = find_command(argv[1]);
        if (!c)
                return cli_usage_error("tessera", "'%s' is not a tessera command", argv[1]);
        _cleanup_free_ char **args = xcalloc((size_t)argc + 1, sizeof(char *));
        for (int i = 1; i < argc; i++)
                args[i - 1] = argv[i];
        args[argc - 1] = (char *)"--help";
        return c->fn(argc, args);
}

/* Global options before the command; returns the index of the command. */
static int parse_globals(int argc, char **argv, int *ret_exit)
{
        int i = 1;

        for (; i < argc && argv[i][0] == '-'; i++) {
                const char *a = argv[i];
                if (streq(a, "--json")) {
                        arg_json = true;
                } else if (streq(a, "--endpoint") && i + 1 < argc) {
                        arg_endpoint = argv[++i];
                } else if (!strncmp(a, "--endpoint=", 11)) {
                        arg_endpoint = a + 11;
                } else if (streq(a, "--help") || streq(a, "-h")) {
                        main_help(stdout);
                        *ret_exit = CLI_EXIT_OK;
                        return -1;
                } else if (streq(a, "--version")) {
                        printf("tessera %s\n", TESSERA_VERSION);
                        *ret_exit = CLI_EXIT_OK;
                        return -1;
                } else {
                        *ret_exit = cli_usage_error("tessera", "unknown global option '%s'", a);
                        return -1;
                }
        }
        if (i >= argc) {
                main_help(stderr);
                *ret_exit = CLI_EXIT_USAGE;
                return -1;
        }
        return i;
}

int cli_main(int argc, char **argv)
{
        const struct command *c;
        int r = CLI_EXIT_ERROR, i;

        i = parse_globals(argc, argv, &r);
        if (i < 0)
                return r;
        c = find_command(argv[i]);
        if (!c)
                return cli_usage_error("tessera", "'%s' is not a tessera command", argv[i]);
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                fputs("error: cannot initialise libcurl\n", stderr);
                return CLI_EXIT_ERROR;
        }
        client_set_endpoint(arg_endpoint);
        r = c->fn(argc - i, argv + i);
        client_close();
        curl_global_cleanup();
        if (fflush(stdout) != 0 && r == CLI_EXIT_OK) {
                fprintf(stderr, "error: writing the output failed: %s\n", strerror(errno));
                r = CLI_EXIT_ERROR;
        }
        return r;
}
