/* image_cli.c - `tessera agent image [--store DIR] COMMAND`: the agent's
 * local image store from the command line.  Each command is a row of
 * `commands[]` (name, function, positional arguments, help), which also
 * prints --help.  Exit codes: 0, 1 (`error: ...`), 2 (usage).
 *
 * gc spares the layers of the containers of the agent whose state_dir
 * holds the store (<state_dir>/images, the agent's own), and waits for the
 * agent's pulls and container starts (image_hold) to end. */
#include "common/compat.h"

#include <curl/curl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <sys/stat.h>

#include "agent/container/container.h"
#include "agent/image_cli.h"
#include "common/conf.h"
#include "common/timeutil.h"
#include "image/image.h"
#include "registry/registry.h"

#define EXIT_USAGE 2
#define DEFAULT_STORE "/var/lib/tessera/images"
#define SHORT_ID_LEN 12

struct image_args {
        const char *store;
        const char *ref;
        uint64_t budget; /* gc --budget */
        bool has_budget;
        bool json;
        int npos;
        char **pos;
};

struct image_command {
        const char *name;
        int (*fn)(struct image_store *st, const struct image_args *a, struct tess_error **err);
        int min_pos, max_pos; /* max_pos -1: any */
        bool takes_ref, takes_budget;
        const char *usage;
        const char *help;
};

/* ---- output ---- */

/* 12 hex digits of a digest, or "-". */
static const char *short_id(const char *digest, char out[SHORT_ID_LEN + 1])
{
        if (!digest || strlen(digest) < 7 + SHORT_ID_LEN)
                return "-";
        memcpy(out, digest + 7, SHORT_ID_LEN);
        out[SHORT_ID_LEN] = '\0';
        return out;
}

/* Bytes in SI units as docker prints them: "4.26MB". */
static const char *human_size(int64_t n, char out[32])
{
        static const char *const units[] = { "B", "kB", "MB", "GB", "TB", "PB" };
        double v = (double)n;
        size_t u = 0;

        while (v >= 1000 && u + 1 < ARRAY_SIZE(units)) {
                v /= 1000;
                u++;
        }
        snprintf(out, 32, "%.3g%s", v, units[u]);
        return out;
}

/* "2024-05-01 12:34:56" from an RFC 3339 time, or "-". */
static const char *created_text(const char *created, char out[20])
{
        if (!created || strlen(created) < 19)
                return "-";
        memcpy(out, created, 19);
        out[10] = ' ';
        out[19] = '\0';
        return out;
}

/* An ISO time of usec since the epoch (0: unknown) into out[40], or NULL. */
static const char *iso_or_null(int64_t usec, char out[40])
{
        return usec > 0 ? time_format_iso(usec, out, 40) : NULL;
}

static json_t *strv_json(char **v)
{
        json_t *a;

        if (!v)
                return json_null();
        a = json_array();
        for (char **p = v; *p; p++)
                json_array_append_new(a, json_string(*p));
        return a;
}

static json_t *labels_json(char **labels)
{
        json_t *o = json_object();

        for (char **p = labels; p && *p; p++) {
                const char *eq = strchr(*p, '=');
                _cleanup_free_ char *key = xstrndup(*p, eq ? (size_t)(eq - *p) : strlen(*p));
                json_object_set_new(o, key, json_string(eq ? eq + 1 : ""));
        }
        return o;
}

static json_t *info_json(const struct image_info *i)
{
        char used[40];

        return json_pack("{s:s, s:s?, s:s?, s:s?, s:I, s:s?, s:s?, s:o, s:o, s:o, s:o, s:s?, s:s?, s:o}", "ref", i->ref,
                         "id", i->config_digest, "manifest_digest", i->manifest_digest, "architecture",
                         i->architecture, "size", (json_int_t)i->size, "created", i->created, "last_used",
                         iso_or_null(i->last_used, used), "labels", labels_json(i->labels), "env", strv_json(i->env),
                         "entrypoint", strv_json(i->entrypoint), "cmd", strv_json(i->cmd), "working_dir",
                         i->working_dir, "user", i->user, "layers", strv_json(i->layer_dirs));
}

static void print_json(json_t *j)
{
        json_dumpf(j, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        json_decref(j);
}

/* ---- commands ---- */

static int cmp_info(const void *a, const void *b)
{
        return strcmp(((const struct image_info *)a)->ref, ((const struct image_info *)b)->ref);
}

static int cmd_ls(struct image_store *st, const struct image_args *a, struct tess_error **err)
{
        struct image_info *infos;
        int n, width = (int)strlen("REFERENCE");
        int r = image_store_list(st, &infos, &n, err);

        if (r < 0)
                return r;
        qsort(infos, (size_t)n, sizeof(*infos), cmp_info);
        if (a->json) {
                json_t *list = json_array();
                for (int i = 0; i < n; i++)
                        json_array_append_new(list, info_json(&infos[i]));
                print_json(list);
        } else {
                for (int i = 0; i < n; i++)
                        width = (int)strlen(infos[i].ref) > width ? (int)strlen(infos[i].ref) : width;
                printf("%-*s  %-12s  %-8s  %-19s  %s\n", width, "REFERENCE", "IMAGE ID", "SIZE", "CREATED",
                       "LAST USED");
                for (int i = 0; i < n; i++) {
                        char id[SHORT_ID_LEN + 1], size[32], created[20], iso[40], used[20];
                        printf("%-*s  %-12s  %-8s  %-19s  %s\n", width, infos[i].ref,
                               short_id(infos[i].config_digest, id), human_size(infos[i].size, size),
                               created_text(infos[i].created, created),
                               created_text(iso_or_null(infos[i].last_used, iso), used));
                }
        }
        for (int i = 0; i < n; i++)
                image_info_free(&infos[i]);
        free(infos);
        return 0;
}

static int cmd_import(struct image_store *st, const struct image_args *a, struct tess_error **err)
{
        struct image_hold *hold = NULL;
        char **refs = NULL;
        int r = image_hold_begin(st, &hold, err); /* the agent's gc keeps off the blobs until tagged */

        if (r >= 0)
                r = image_import(st, a->pos[0], a->ref, &refs, err);
        image_hold_end(hold);
        if (r < 0)
                return r;
        if (a->json) {
                json_t *o = json_object();
                json_object_set_new(o, "refs", strv_json(refs));
                print_json(o);
        } else {
                for (char **p = refs; *p; p++)
                        printf("imported %s\n", *p);
        }
        for (char **p = refs; *p; p++)
                free(*p);
        free(refs);
        return 0;
}

static int cmd_rm(struct image_store *st, const struct image_args *a, struct tess_error **err)
{
        for (int i = 0; i < a->npos; i++) {
                int r = image_store_remove(st, a->pos[i], err);
                if (r < 0)
                        return r;
                if (!a->json)
                        printf("removed %s\n", a->pos[i]);
        }
        return 0;
}

/* The layers the containers of the agent whose state_dir holds the store
 * use (none when the store is not <state_dir>/images of an agent). */
static int containers_in_use(void *data, char ***ret, struct tess_error **err)
{
        _cleanup_free_ char *store = xstrdup(data);
        const char *state_dir = dirname(store);
        _cleanup_free_ char *containers = xasprintf("%s/containers", state_dir);
        struct stat s;

        if (stat(containers, &s) < 0 || !S_ISDIR(s.st_mode)) {
                *ret = xcalloc(1, sizeof(char *));
                return 0;
        }
        return container_layers_in_use(&(struct container_config){ .state_dir = state_dir }, ret, err);
}

static int gc_budget(struct image_store *st, const struct image_args *a, struct tess_error **err)
{
        struct image_budget_report rep;
        char size[32], kept[32], cap[32], when[40];
        int64_t budget = a->budget > INT64_MAX ? INT64_MAX : (int64_t)a->budget;
        int r = image_store_apply_budget(st, budget, true, containers_in_use, (void *)a->store, &rep, err);

        if (r < 0)
                return r;
        if (a->json) {
                json_t *removed = json_array();
                for (size_t i = 0; i < rep.n_removed; i++)
                        json_array_append_new(removed,
                                              json_pack("{s:s, s:s?, s:I}", "ref", rep.removed[i].ref, "last_used",
                                                        iso_or_null(rep.removed[i].last_used, when), "bytes",
                                                        (json_int_t)rep.removed[i].bytes));
                print_json(json_pack("{s:I, s:I, s:I, s:I, s:o}", "budget", (json_int_t)budget, "before",
                                     (json_int_t)rep.before, "after", (json_int_t)rep.after, "freed_bytes",
                                     (json_int_t)(rep.before - rep.after), "removed", removed));
        } else {
                for (size_t i = 0; i < rep.n_removed; i++)
                        printf("removed %s (last used %s, %s)\n", rep.removed[i].ref,
                               iso_or_null(rep.removed[i].last_used, when) ?: "-",
                               human_size(rep.removed[i].bytes, size));
                printf("freed %s; the store takes %s, its budget %s%s\n", human_size(rep.before - rep.after, size),
                       human_size(rep.after, kept), human_size(budget, cap),
                       rep.after > budget ? " (exceeded by the images in use)" : "");
        }
        image_budget_report_release(&rep);
        return 0;
}

static int cmd_gc(struct image_store *st, const struct image_args *a, struct tess_error **err)
{
        char **in_use = NULL;
        int64_t freed = 0;
        char size[32];
        int r;

        if (a->has_budget)
                return gc_budget(st, a, err);
        r = containers_in_use((void *)a->store, &in_use, err);
        if (r >= 0)
                r = image_store_gc(st, (const char *const *)in_use, &freed, err);
        for (char **p = in_use; p && *p; p++)
                free(*p);
        free(in_use);
        if (r < 0)
                return r;
        if (a->json)
                print_json(json_pack("{s:I}", "freed_bytes", (json_int_t)freed));
        else
                printf("freed %s\n", human_size(freed, size));
        return 0;
}

static int cmd_inspect(struct image_store *st, const struct image_args *a, struct tess_error **err)
{
        struct image_info info;
        int r = image_store_get(st, a->pos[0], &info, err);

        if (r < 0)
                return r;
        print_json(info_json(&info));
        image_info_free(&info);
        return 0;
}

/* `pull REF`: the agent's own pull (registry.c), as a worker runs it for a
 * session: anonymous, https unless the registry is on loopback. */
static int cmd_pull(struct image_store *st, const struct image_args *a, struct tess_error **err)
{
        _cleanup_free_ char *digest = NULL;
        struct image_hold *hold = NULL;
        int r;

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return tess_err(err, EIO, "cannot initialise libcurl");
        r = image_hold_begin(st, &hold, err); /* the agent's gc keeps off the blobs until tagged */
        if (r >= 0)
                r = registry_pull(st, a->pos[0], NULL, &digest, err);
        image_hold_end(hold);
        curl_global_cleanup();
        if (r < 0)
                return r;
        if (a->json)
                print_json(json_pack("{s:s, s:s}", "ref", a->pos[0], "manifest_digest", digest));
        else
                printf("pulled %s %s\n", a->pos[0], digest);
        return 0;
}

static const struct image_command commands[] = {
        { "ls", cmd_ls, 0, 0, false, false, "ls [--json]",
          "list the images: reference, image id, size, creation and last use" },
        { "import", cmd_import, 1, 1, true, false, "import [--ref REF] PATH",
          "import an OCI image layout or a docker save archive (a directory or a tar)" },
        { "rm", cmd_rm, 1, -1, false, false, "rm REF...", "untag images; gc frees their space" },
        { "gc", cmd_gc, 0, 0, false, true, "gc [--budget SIZE] [--json]",
          "delete the blobs and layers no image or container uses; with --budget (e.g. 20g), first untag "
          "the least recently used images no container uses until the store fits" },
        { "inspect", cmd_inspect, 1, 1, false, false, "inspect REF", "print an image's manifest and config as JSON" },
        { "pull", cmd_pull, 1, 1, false, false, "pull [--json] REF",
          "pull an image from its registry, as the agent does (http on loopback, else https)" },
};

/* ---- entry point ---- */

static void usage(FILE *f)
{
        fprintf(f, "usage: tessera agent image [--store DIR] COMMAND [ARGS]\n\n"
                   "The agent's local image store (default " DEFAULT_STORE ").\n\n");
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
                fprintf(f, "  %-26s %s\n", commands[i].usage, commands[i].help);
        fprintf(f, "\n  --store DIR                the store directory\n"
                   "  --json                     JSON output\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
        va_list ap;

        fputs("error: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs("\n\n", stderr);
        usage(stderr);
        return EXIT_USAGE;
}

/* --budget SIZE reads as the agent's image_disk_budget does ("20g"). */
static const struct conf_opt budget_opts[] = {
        CONF_OPT("--budget", CONF_T_SIZE, struct image_args, budget, NULL, 0, 0, false, "the store's disk budget"),
        { 0 },
};

static int parse_args(int argc, char **argv, struct image_args *a, bool *help)
{
        static const struct option opts[] = {
                { "store", required_argument, NULL, 's' }, { "ref", required_argument, NULL, 'r' },
                { "json", no_argument, NULL, 'j' },        { "help", no_argument, NULL, 'h' },
                { "budget", required_argument, NULL, 'b' }, {},
        };
        struct tess_error *err = NULL;
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 's':
                        a->store = optarg;
                        break;
                case 'r':
                        a->ref = optarg;
                        break;
                case 'j':
                        a->json = true;
                        break;
                case 'b':
                        if (conf_set(budget_opts, a, "--budget", optarg, &err) < 0) {
                                c = usage_error("%s", err->msg);
                                tess_error_free(err);
                                return c;
                        }
                        a->has_budget = true;
                        break;
                case 'h':
                        *help = true;
                        break;
                default:
                        return usage_error("unknown option or missing value: '%s'", argv[optind - 1]);
                }
        }
        a->npos = argc - optind;
        a->pos = argv + optind;
        return 0;
}

int agent_image_main(int argc, char **argv)
{
        struct image_args a = { .store = DEFAULT_STORE };
        const struct image_command *cmd = NULL;
        struct image_store *st = NULL;
        struct tess_error *err = NULL;
        bool help = false;
        int r;

        r = parse_args(argc, argv, &a, &help);
        if (r)
                return r;
        if (help) {
                usage(stdout);
                return 0;
        }
        if (a.npos == 0)
                return usage_error("a command is missing");
        for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
                if (streq(commands[i].name, a.pos[0]))
                        cmd = &commands[i];
        }
        if (!cmd)
                return usage_error("unknown command '%s'", a.pos[0]);
        a.npos--;
        a.pos++;
        if (a.npos < cmd->min_pos || (cmd->max_pos >= 0 && a.npos > cmd->max_pos))
                return usage_error("wrong number of arguments: tessera agent image %s", cmd->usage);
        if (a.ref && !cmd->takes_ref)
                return usage_error("--ref applies to import only");
        if (a.has_budget && !cmd->takes_budget)
                return usage_error("--budget applies to gc only");

        r = image_store_open(a.store, &st, &err);
        if (r >= 0)
                r = cmd->fn(st, &a, &err);
        image_store_close(st);
        if (r < 0) {
                fprintf(stderr, "error: %s\n", err->msg);
                tess_error_free(err);
                return 1;
        }
        return 0;
}
