/* app_start.c - see app_start.h. */
#include "common/compat.h"

#include "common/buf.h"
#include "manager/apps/app_start.h"

/* Well-known apps.  Jupyter listens on the container's loopback only (the
 * agent's tunnel reaches it there), without its own token or password (the
 * proxy's cookie is the app's authentication), under the proxy's prefix,
 * and answers whatever Host the browser used. */
static const struct {
        const char *app;
        const char *const argv[16];
} templates[] = {
        { "jupyter",
          { "jupyter-notebook", "--no-browser", "--ip=127.0.0.1", "--port={port}", "--port-retries=0",
            "--NotebookApp.token=", "--NotebookApp.password=", "--NotebookApp.base_url={prefix}",
            "--NotebookApp.allow_remote_access=True", NULL } },
        { "jupyterlab",
          { "jupyter-lab", "--no-browser", "--ip=127.0.0.1", "--port={port}", "--port-retries=0", "--ServerApp.token=",
            "--ServerApp.password=", "--ServerApp.base_url={prefix}", "--ServerApp.allow_remote_access=True", NULL } },
};

/* word with {port} and {prefix} replaced */
static char *expand(const char *word, int port, const char *prefix)
{
        struct buf b = BUF_INIT;

        for (const char *p = word; *p;) {
                if (strncmp(p, "{port}", 6) == 0) {
                        buf_printf(&b, "%d", port);
                        p += 6;
                } else if (strncmp(p, "{prefix}", 8) == 0) {
                        buf_puts(&b, prefix);
                        p += 8;
                } else {
                        buf_putc(&b, *p++);
                }
        }
        return buf_detach(&b, NULL);
}

struct argv_builder {
        char **v;
        size_t n;
};

static int add(struct argv_builder *a, char *word, struct tess_error **err)
{
        if (a->n == APP_START_ARGS_MAX) {
                free(word);
                return tess_err(err, EINVAL, "an app's command has more than %d words", APP_START_ARGS_MAX);
        }
        a->v[a->n++] = word;
        return 0;
}

static int add_arguments(struct argv_builder *a, const json_t *arguments, struct tess_error **err)
{
        const char *key;
        json_t *v;
        int r = 0;

        if (!arguments || json_is_null(arguments))
                return 0;
        if (!json_is_object(arguments))
                return tess_err(err, EINVAL, "'arguments' must be an object of flags");
        json_object_foreach((json_t *)arguments, key, v) {
                if (!*key || strlen(key) > 256)
                        return tess_err(err, EINVAL, "'arguments' has an empty or too long flag");
                if (json_is_string(v) || json_is_number(v) || json_is_true(v) || json_is_null(v))
                        r = add(a, xstrdup(key), err);
                else
                        return tess_err(err, EINVAL, "'arguments.%.64s' must be a string, a number, true or null", key);
                if (r >= 0 && json_is_string(v))
                        r = add(a, xstrdup(json_string_value(v)), err);
                else if (r >= 0 && json_is_integer(v))
                        r = add(a, xasprintf("%lld", (long long)json_integer_value(v)), err);
                else if (r >= 0 && json_is_real(v))
                        r = add(a, xasprintf("%g", json_real_value(v)), err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void argv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

int app_start_argv(const json_t *labels, const char *app, int port, const char *prefix, const json_t *arguments,
                   char ***ret_argv, struct tess_error **err)
{
        _cleanup_free_ char *label = xasprintf(APP_START_LABEL_PREFIX "%s", app);
        const json_t *custom = NULL;
        const char *const *builtin = NULL;
        struct argv_builder a = { .v = xcalloc(APP_START_ARGS_MAX + 1, sizeof(char *)) };
        int r = 0;

        const char *text = json_string_value(json_object_get(labels, label));
        if (text) {
                json_t *j = json_loads(text, 0, NULL);
                bool ok = json_is_array(j) && json_array_size(j) > 0;
                for (size_t i = 0; ok && i < json_array_size(j); i++)
                        ok = json_is_string(json_array_get(j, i));
                if (!ok) {
                        json_decref(j);
                        free(a.v);
                        return tess_err(err, EINVAL, "the image's label %s is not a JSON array of strings", label);
                }
                custom = j;
        } else {
                for (size_t i = 0; i < ARRAY_SIZE(templates) && !builtin; i++)
                        if (streq(templates[i].app, app))
                                builtin = templates[i].argv;
                if (!builtin) {
                        free(a.v);
                        return tess_err(err, ENOENT, "no way to start app '%s': the image has no label %s", app, label);
                }
        }
        for (size_t i = 0; r >= 0 && (custom ? i < json_array_size(custom) : builtin[i] != NULL); i++)
                r = add(&a, expand(custom ? json_string_value(json_array_get(custom, i)) : builtin[i], port, prefix),
                        err);
        json_decref((json_t *)custom);
        if (r >= 0)
                r = add_arguments(&a, arguments, err);
        if (r < 0) {
                argv_free(a.v);
                return r;
        }
        *ret_argv = a.v;
        return 0;
}

int app_start_request(const json_t *labels, const char *app, const char *name, int port, const char *prefix,
                      const json_t *arguments, const json_t *env, json_t **ret, struct tess_error **err)
{
        char **argv = NULL;
        int r = app_start_argv(labels, app, port, prefix, arguments, &argv, err);

        *ret = NULL;
        if (r < 0)
                return r;
        json_t *argv_j = json_array();
        for (char **a = argv; *a; a++) {
                json_array_append_new(argv_j, json_string(*a));
                free(*a);
        }
        free(argv);
        *ret = json_pack("{s:s, s:i, s:o, s:o, s:i}", "name", name, "port", port, "argv", argv_j, "env",
                         env ? json_incref((json_t *)env) : json_array(), "waitMs", APP_START_WAIT_MS);
        return 0;
}
