/* cmd_login.c - `tessera login` and `tessera logout`.
 *
 * login asks for e-mail and password (or takes --email and
 * --password-stdin), posts them unsigned to /auth/authorize and saves the
 * endpoint and the keypair it answers in the config file (mode 0600).
 * logout removes that file. */
#include "common/compat.h"

#include <termios.h>

#include "common/buf.h"
#include "cli/cli-internal.h"
#include "cli/client.h"

static const struct cli_opt login_opts[] = {
        { "endpoint", 0, OPT_STR, DEST_LOCAL, "endpoint", 0, 0, "URL", "the manager to log in to" },
        { "email", 'e', OPT_STR, DEST_LOCAL, "email", 0, 0, "EMAIL", "your e-mail (default: ask)" },
        { "password-stdin", 0, OPT_STDIN, DEST_LOCAL, "password", 0, 0, NULL,
          "read the password from standard input (default: ask on the terminal)" },
        { "domain", 0, OPT_STR, DEST_LOCAL, "domain", 0, 0, "DOMAIN", "your domain (default: default)" },
        {},
};

/* Ask on the terminal; no echo for secrets.  Caller frees *ret. */
static int prompt(const char *question, bool secret, char **ret, struct tess_error **err)
{
        _cleanup_fclose_ FILE *tty = fopen("/dev/tty", "r+e");
        struct termios old, quiet;
        bool restore = false;
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;

        if (!tty)
                return tess_err(err, ENOTTY, "no terminal to ask for the %s on: use the command-line options",
                                secret ? "password" : "e-mail");
        fputs(question, tty);
        fflush(tty);
        if (secret && tcgetattr(fileno(tty), &old) == 0) {
                quiet = old;
                quiet.c_lflag &= ~(tcflag_t)ECHO;
                restore = tcsetattr(fileno(tty), TCSAFLUSH, &quiet) == 0;
        }
        n = getline(&line, &cap, tty);
        if (restore) {
                tcsetattr(fileno(tty), TCSAFLUSH, &old);
                fputc('\n', tty);
        }
        if (n < 0) {
                free(line);
                return tess_err(err, EIO, "no answer given");
        }
        line[strcspn(line, "\r\n")] = '\0';
        *ret = line;
        return 0;
}

static int login_run(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        _cleanup_free_ char *email = NULL, *password = NULL, *path = NULL;
        struct cli_config conf = { 0 };
        struct tess_error *err = NULL;
        const char *endpoint;
        json_t *answer = NULL;
        int r;

        if (cli_local_str(a, "endpoint"))
                client_set_endpoint(cli_local_str(a, "endpoint"));
        if (!(endpoint = client_endpoint(&err)))
                return cli_fail(err);
        email = cli_local_str(a, "email") ? xstrdup(cli_local_str(a, "email")) : NULL;
        password = cli_local_str(a, "password") ? xstrdup(cli_local_str(a, "password")) : NULL;
        if (!email && prompt("Email: ", false, &email, &err) < 0)
                return cli_fail(err);
        if (!password && prompt("Password: ", true, &password, &err) < 0)
                return cli_fail(err);
        json_t *body = json_pack("{s:s, s:s, s:s, s:s}", "type", "keypair", "domain",
                                 cli_local_str(a, "domain") ?: "default", "username", email, "password", password);
        explicit_bzero(password, strlen(password));
        if (!body)
                return cli_error("the e-mail or password is not valid UTF-8");
        r = client_json("POST", "/auth/authorize", body, CLIENT_UNSIGNED, &answer, &err);
        json_decref(body);
        if (r < 0) {
                tess_err_wrap(&err, "logging in to '%s'", endpoint);
                return cli_fail(err);
        }
        const char *ak = json_string_value(json_path_get(answer, "data.access_key"));
        const char *sk = json_string_value(json_path_get(answer, "data.secret_key"));
        const char *role = json_string_value(json_path_get(answer, "data.role"));
        if (!ak || !sk) {
                json_decref(answer);
                return cli_error("the server's answer has no data.access_key and data.secret_key");
        }
        conf.endpoint = (char *)endpoint;
        conf.access_key = (char *)ak;
        conf.secret_key = (char *)sk;
        r = config_save(&conf, &err);
        if (r >= 0)
                r = config_path(&path, &err);
        if (r >= 0)
                printf("logged in to %s as %s (%s); keypair saved in %s\n", endpoint, email,
                       role ? role : "unknown role", path);
        json_decref(answer);
        if (r < 0)
                return cli_fail(err);
        if (client_keys_from_env())
                fputs("note: BACKEND_ACCESS_KEY/BACKEND_SECRET_KEY (or TESSERA_*) are set and take precedence\n",
                      stderr);
        return CLI_EXIT_OK;
}

static int logout_run(struct cli_call *call)
{
        struct tess_error *err = NULL;
        _cleanup_free_ char *path = NULL;
        int r;

        (void)call;
        if (config_path(&path, &err) < 0)
                return cli_fail(err);
        r = config_remove(&err);
        if (r < 0)
                return cli_fail(err);
        if (r == 0)
                printf("not logged in (no %s)\n", path);
        else
                printf("logged out (removed %s)\n", path);
        return CLI_EXIT_OK;
}

static const struct cli_leaf login_leaf = {
        "login", NULL, login_run, { login_opts }, 0, 0, 0, NULL,
        "Log in with e-mail and password (POST /auth/authorize) and save the endpoint and keypair\n"
        "in $XDG_CONFIG_HOME/tessera/config (or ~/.config/tessera/config), mode 0600.",
        NULL,
};

static const struct cli_leaf logout_leaf = {
        "logout", NULL, logout_run, { NULL }, 0, 0, 0, NULL, "Remove the saved endpoint and keypair.", NULL,
};

int cmd_login(int argc, char **argv)
{
        return cli_run_leaf("tessera login", &login_leaf, argc, argv);
}

int cmd_logout(int argc, char **argv)
{
        return cli_run_leaf("tessera logout", &logout_leaf, argc, argv);
}
