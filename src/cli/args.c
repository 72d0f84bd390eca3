/* args.c - the option-table parser, sub-command dispatch and help texts
 * (see cli-internal.h). */
#include "common/compat.h"

#include <ctype.h>
#include <stdarg.h>

#include "common/buf.h"
#include "cli/cli-internal.h"

#define STDIN_OPT_MAX (1u << 20)

/* --json, given before the command (main.c) or after it (here) */
bool arg_json;

/* Options every command accepts, looked up after the command's own. */
static const struct cli_opt common_opts[] = {
        { "json", 0, OPT_FLAG, DEST_LOCAL, "json", 0, 0, NULL, "print the server's JSON answer" },
        { "help", 'h', OPT_FLAG, DEST_LOCAL, "help", 0, 0, NULL, "show this help" },
        {},
};

const struct cli_opt cli_page_opts[] = {
        { "limit", 0, OPT_INT, DEST_QUERY, "limit", 0, 0, "N", "show at most N items (server default 100)" },
        { "offset", 0, OPT_INT, DEST_QUERY, "offset", 0, 0, "N", "skip the first N items" },
        {},
};

/* ---- JSON paths ---- */

json_t *json_path_get(const json_t *root, const char *path)
{
        const char *dot;
        json_t *v = (json_t *)root;

        while (v && (dot = strchr(path, '.'))) {
                _cleanup_free_ char *part = xstrndup(path, (size_t)(dot - path));
                v = json_object_get(v, part);
                path = dot + 1;
        }
        return v ? json_object_get(v, path) : NULL;
}

int json_path_set(json_t *root, const char *path, json_t *value, struct tess_error **err)
{
        const char *dot;
        json_t *v = root;

        while ((dot = strchr(path, '.'))) {
                _cleanup_free_ char *part = xstrndup(path, (size_t)(dot - path));
                json_t *next = json_object_get(v, part);
                if (!next) {
                        next = json_object();
                        json_object_set_new(v, part, next);
                } else if (!json_is_object(next)) {
                        json_decref(value);
                        return tess_err(err, EINVAL, "'%s' is given twice in different forms", part);
                }
                v = next;
                path = dot + 1;
        }
        json_object_set_new(v, path, value);
        return 0;
}

/* The container (object or list) at path, created when absent or null. */
static json_t *path_container(json_t *root, const char *path, bool list, struct tess_error **err)
{
        json_t *v = json_path_get(root, path);

        if (v && (list ? json_is_array(v) : json_is_object(v)))
                return v;
        v = list ? json_array() : json_object();
        if (json_path_set(root, path, json_incref(v), err) < 0) {
                json_decref(v);
                return NULL;
        }
        json_decref(v);
        return v;
}

/* ---- values ---- */

static int parse_bool(const char *s, bool *ret)
{
        static const char *const yes[] = { "true", "yes", "on", "1" }, *const no[] = { "false", "no", "off", "0" };

        for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
                if (!strcasecmp(s, yes[i]))
                        return *ret = true, 0;
                if (!strcasecmp(s, no[i]))
                        return *ret = false, 0;
        }
        return -EINVAL;
}

int cli_read_stdin(size_t max, char **ret, size_t *ret_len, struct tess_error **err)
{
        struct buf b = BUF_INIT;
        char tmp[8192];
        size_t n;

        while ((n = fread(tmp, 1, sizeof(tmp), stdin)) > 0) {
                buf_append(&b, tmp, n);
                if (b.len > max) {
                        buf_release(&b);
                        return tess_err(err, EFBIG, "standard input is larger than %zu bytes", max);
                }
        }
        if (ferror(stdin)) {
                buf_release(&b);
                return tess_err(err, EIO, "reading standard input failed");
        }
        *ret = buf_detach(&b, ret_len);
        return 0;
}

/* Split "KEY=VALUE" into the object at the option's path. */
static int store_pair(const struct cli_opt *o, json_t *root, const char *item, struct tess_error **err)
{
        const char *eq = strchr(item, '=');

        if (!eq || eq == item)
                return tess_err(err, EINVAL, "option '--%s' wants %s, not '%s'", o->name, o->metavar, item);
        json_t *obj = path_container(root, o->field, false, err);
        if (!obj)
                return -EINVAL;
        _cleanup_free_ char *key = xstrndup(item, (size_t)(eq - item));
        json_object_set_new(obj, key, json_string(eq + 1));
        return 0;
}

static int store_slots(const struct cli_opt *o, json_t *root, const char *value, struct tess_error **err)
{
        if (streq(value, "none") || streq(value, "null"))
                return json_path_set(root, o->field, (o->flags & OPT_NULLABLE) ? json_null() : json_object(), err);
        _cleanup_free_ char *copy = xstrdup(value);
        char *save = NULL;
        for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
                int r = store_pair(o, root, item, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int opt_store(const struct cli_opt *o, const char *value, struct cli_args *a, struct tess_error **err)
{
        json_t *root = o->dest == DEST_BODY ? a->body : o->dest == DEST_QUERY ? a->query : a->local;
        json_t *v = NULL;
        json_error_t jerr;
        char *end;

        if (o->dest == DEST_BODY)
                a->has_body = true;
        if ((o->flags & OPT_NULLABLE) && value && (streq(value, "null") || streq(value, "none")) &&
            o->type != OPT_SLOTS)
                return json_path_set(root, o->field, json_null(), err);
        switch (o->type) {
        case OPT_FLAG: v = json_true(); break;
        case OPT_UNSET: v = json_false(); break;
        case OPT_STR: v = json_string(value); break;
        case OPT_INT: {
                errno = 0;
                long long x = strtoll(value, &end, 10);
                if (!*value || *end || errno)
                        return tess_err(err, EINVAL, "option '--%s' wants an integer, not '%s'", o->name, value);
                v = json_integer(x);
                break;
        }
        case OPT_BOOL: {
                bool b;
                if (parse_bool(value, &b) < 0)
                        return tess_err(err, EINVAL, "option '--%s' wants true or false, not '%s'", o->name, value);
                v = json_boolean(b);
                break;
        }
        case OPT_JSON:
                v = json_loads(value, JSON_DECODE_ANY, &jerr);
                if (!v)
                        return tess_err(err, EINVAL, "option '--%s': malformed JSON: %s", o->name, jerr.text);
                break;
        case OPT_LIST: {
                json_t *list = path_container(root, o->field, true, err);
                if (!list)
                        return -EINVAL;
                json_array_append_new(list, json_string(value));
                return 0;
        }
        case OPT_MAP: return store_pair(o, root, value, err);
        case OPT_SLOTS: return store_slots(o, root, value, err);
        case OPT_STDIN: {
                char *text;
                size_t len;
                int r = cli_read_stdin(STDIN_OPT_MAX, &text, &len, err);
                if (r < 0)
                        return r;
                if (len && text[len - 1] == '\n')
                        text[--len] = '\0';
                if (len && text[len - 1] == '\r')
                        text[--len] = '\0';
                v = json_stringn(text, len);
                explicit_bzero(text, len);
                free(text);
                break;
        }
        }
        if (!v)
                return tess_err(err, EINVAL, "option '--%s': the value is not valid UTF-8", o->name);
        return json_path_set(root, o->field, v, err);
}

static bool takes_value(const struct cli_opt *o)
{
        return o->type != OPT_FLAG && o->type != OPT_UNSET && o->type != OPT_STDIN;
}

static bool opt_applies(const struct cli_opt *o, unsigned verb)
{
        return !o->verbs || (o->verbs & verb);
}

static const struct cli_opt *find_opt(const struct cli_leaf *leaf, const char *name, size_t len, char short_name)
{
        const struct cli_opt *tables[CLI_MAX_OPT_TABLES + 1] = { 0 };
        size_t n = 0;

        for (; n < CLI_MAX_OPT_TABLES && leaf->opts[n]; n++)
                tables[n] = leaf->opts[n];
        tables[n] = common_opts;
        for (size_t t = 0; t <= n; t++) {
                for (const struct cli_opt *o = tables[t]; o->name; o++) {
                        if (!opt_applies(o, leaf->verb))
                                continue;
                        if (short_name ? o->short_name == short_name
                                       : strlen(o->name) == len && !strncmp(o->name, name, len))
                                return o;
                }
        }
        return NULL;
}

void cli_args_release(struct cli_args *a)
{
        json_decref(a->body);
        json_decref(a->query);
        json_decref(a->local);
        free(a->pos);
        memset(a, 0, sizeof(*a));
}

int cli_parse(const struct cli_leaf *leaf, int argc, char **argv, struct cli_args *ret, struct tess_error **err)
{
        bool only_pos = false;

        memset(ret, 0, sizeof(*ret));
        ret->body = json_object();
        ret->query = json_object();
        ret->local = json_object();
        ret->pos = xcalloc((size_t)argc + 1, sizeof(char *));
        for (int i = 1; i < argc; i++) {
                const char *s = argv[i], *value = NULL;
                const struct cli_opt *o;

                if (only_pos || s[0] != '-' || !s[1]) {
                        ret->pos[ret->npos++] = argv[i];
                        continue;
                }
                if (streq(s, "--")) {
                        only_pos = true;
                        continue;
                }
                if (s[1] == '-') {
                        const char *eq = strchr(s + 2, '=');
                        size_t len = eq ? (size_t)(eq - s - 2) : strlen(s + 2);
                        o = find_opt(leaf, s + 2, len, 0);
                        if (!o)
                                return tess_err(err, EINVAL, "unknown option '--%.*s'", (int)len, s + 2);
                        if (eq && !takes_value(o))
                                return tess_err(err, EINVAL, "option '--%s' takes no value", o->name);
                        value = eq ? eq + 1 : NULL;
                } else {
                        o = find_opt(leaf, NULL, 0, s[1]);
                        if (!o)
                                return tess_err(err, EINVAL, "unknown option '-%c'", s[1]);
                        if (s[2] && !takes_value(o))
                                return tess_err(err, EINVAL, "option '-%c' takes no value", s[1]);
                        value = s[2] ? s + 2 : NULL;
                }
                if (takes_value(o) && !value) {
                        if (i + 1 >= argc)
                                return tess_err(err, EINVAL, "option '--%s' needs a value (%s)", o->name,
                                                o->metavar ? o->metavar : "VALUE");
                        value = argv[++i];
                }
                int r = opt_store(o, value, ret, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

const char *cli_local_str(const struct cli_args *a, const char *name)
{
        return json_string_value(json_object_get(a->local, name));
}

bool cli_local_flag(const struct cli_args *a, const char *name)
{
        return json_is_true(json_object_get(a->local, name));
}

long long cli_local_int(const struct cli_args *a, const char *name, long long def)
{
        json_t *v = json_object_get(a->local, name);
        return json_is_integer(v) ? json_integer_value(v) : def;
}

/* ---- errors ---- */

int cli_fail(struct tess_error *err)
{
        fprintf(stderr, "error: %s\n", err ? err->msg : "unknown error");
        tess_error_free(err);
        return CLI_EXIT_ERROR;
}

int cli_error(const char *fmt, ...)
{
        va_list ap;

        fputs("error: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return CLI_EXIT_ERROR;
}

int cli_usage_error(const char *prefix, const char *fmt, ...)
{
        va_list ap;

        fputs("error: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry '%s --help'.\n", prefix);
        return CLI_EXIT_USAGE;
}

/* ---- help ---- */

static void option_synopsis(struct buf *b, const struct cli_opt *o)
{
        if (o->short_name)
                buf_printf(b, "-%c, ", o->short_name);
        else
                buf_puts(b, "    ");
        buf_printf(b, "--%s", o->name);
        if (takes_value(o))
                buf_printf(b, " %s", o->metavar ? o->metavar : "VALUE");
}

static void print_options(FILE *f, const struct cli_leaf *leaf)
{
        const struct cli_opt *tables[CLI_MAX_OPT_TABLES + 1] = { 0 };
        size_t n = 0, width = 0;
        struct buf b = BUF_INIT;

        for (; n < CLI_MAX_OPT_TABLES && leaf->opts[n]; n++)
                tables[n] = leaf->opts[n];
        tables[n] = common_opts;
        for (int pass = 0; pass < 2; pass++) {
                for (size_t t = 0; t <= n; t++) {
                        for (const struct cli_opt *o = tables[t]; o->name; o++) {
                                if (!opt_applies(o, leaf->verb))
                                        continue;
                                buf_reset(&b);
                                option_synopsis(&b, o);
                                if (pass == 0 && b.len > width)
                                        width = b.len;
                                if (pass == 1)
                                        fprintf(f, "  %-*s  %s\n", (int)width, b.data, o->help ? o->help : "");
                        }
                }
        }
        buf_release(&b);
}

void cli_leaf_help(FILE *f, const char *prefix, const struct cli_leaf *leaf)
{
        fprintf(f, "usage: %s [options]%s%s\n\n%s\n\noptions:\n", prefix, leaf->args ? " " : "",
                leaf->args ? leaf->args : "", leaf->help);
        print_options(f, leaf);
}

void cli_group_help(FILE *f, const char *prefix, const char *help, const struct cli_leaf *leaves)
{
        int width = 0;

        fprintf(f, "usage: %s <command> [options] [<args>]\n\n%s\n\ncommands:\n", prefix, help);
        for (const struct cli_leaf *l = leaves; l->name; l++)
                if ((int)strlen(l->name) > width)
                        width = (int)strlen(l->name);
        for (const struct cli_leaf *l = leaves; l->name; l++)
                fprintf(f, "  %-*s  %s%s%s%s\n", width, l->name, l->help, l->alias ? " (alias: " : "",
                        l->alias ? l->alias : "", l->alias ? ")" : "");
        fprintf(f, "\nRun '%s <command> --help' for the options of a command.\n", prefix);
}

/* ---- dispatch ---- */

int cli_run_leaf(const char *prefix, const struct cli_leaf *leaf, int argc, char **argv)
{
        struct cli_call call = { .leaf = leaf, .prefix = prefix };
        struct tess_error *err = NULL;
        int r;

        r = cli_parse(leaf, argc, argv, &call.args, &err);
        if (r < 0) {
                r = cli_usage_error(prefix, "%s", err->msg);
                goto out;
        }
        if (cli_local_flag(&call.args, "help")) {
                cli_leaf_help(stdout, prefix, leaf);
                r = CLI_EXIT_OK;
                goto out;
        }
        if (cli_local_flag(&call.args, "json"))
                arg_json = true;
        if (call.args.npos < leaf->min_pos || (leaf->max_pos >= 0 && call.args.npos > leaf->max_pos)) {
                if (call.args.npos < leaf->min_pos)
                        r = cli_usage_error(prefix, "missing argument: %s", leaf->args);
                else
                        r = cli_usage_error(prefix, "unexpected argument '%s'", call.args.pos[leaf->max_pos]);
                goto out;
        }
        r = leaf->fn(&call);
out:
        tess_error_free(err);
        cli_args_release(&call.args);
        return r;
}

static bool is_help(const char *s)
{
        return streq(s, "--help") || streq(s, "-h") || streq(s, "help");
}

int cli_run_group(const char *prefix, const char *help, const struct cli_leaf *leaves, int argc, char **argv)
{
        if (argc < 2) {
                cli_group_help(stderr, prefix, help, leaves);
                return CLI_EXIT_USAGE;
        }
        if (is_help(argv[1])) {
                cli_group_help(stdout, prefix, help, leaves);
                return CLI_EXIT_OK;
        }
        if (streq(argv[1], "--json") && argc > 2) {
                arg_json = true;
                return cli_run_group(prefix, help, leaves, argc - 1, argv + 1);
        }
        for (const struct cli_leaf *l = leaves; l->name; l++) {
                if (streq(l->name, argv[1]) || (l->alias && streq(l->alias, argv[1]))) {
                        _cleanup_free_ char *sub = xasprintf("%s %s", prefix, l->name);
                        return cli_run_leaf(sub, l, argc - 1, argv + 1);
                }
        }
        return cli_usage_error(prefix, "'%s' is not a command of '%s'", argv[1], prefix);
}
