/* cli-internal.h - what the files of src/cli share: the global options, the
 * option tables and their parser, and sub-command tables.
 *
 * A command is one row of a table (`struct cli_leaf`): name, function,
 * option tables, how many positional arguments it takes and one line of
 * help.  cli_run_leaf() parses argv against the option tables, answers
 * --help, applies --json, checks the positional count and calls the
 * function; cli_run_group() picks a row of a sub-command table.
 *
 * Options (`struct cli_opt`) say where their value goes: into the JSON body
 * of the request, its query string, or a "local" object the command reads
 * itself, at a dotted path ("config.resources"), so most commands are just
 * tables.  Exit codes: CLI_EXIT_OK, CLI_EXIT_ERROR (error: printed),
 * CLI_EXIT_USAGE. */
#ifndef TESS_CLI_INTERNAL_H
#define TESS_CLI_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "common/error.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 1
#define CLI_EXIT_USAGE 2

/* Global options (given before the command; --json also after it). */
extern bool arg_json;
extern const char *arg_endpoint;

enum cli_opt_type {
        OPT_FLAG,   /* no value: true */
        OPT_UNSET,  /* no value: false ("--no-reuse") */
        OPT_STR,    /* string */
        OPT_INT,    /* integer */
        OPT_BOOL,   /* true|false|yes|no|on|off|1|0 */
        OPT_JSON,   /* a JSON text, any value */
        OPT_LIST,   /* repeatable: list of strings */
        OPT_MAP,    /* repeatable KEY=VALUE: object of strings */
        OPT_SLOTS,  /* repeatable SLOT=VALUE[,SLOT=VALUE]: object of strings; "none" = {} */
        OPT_STDIN,  /* no value: the whole of stdin, less one trailing newline, as a string */
};

enum cli_opt_dest {
        DEST_BODY,  /* the JSON body of the request */
        DEST_QUERY, /* the query string (lists joined with ',') */
        DEST_LOCAL, /* read by the command itself */
};

#define OPT_NULLABLE (1u << 0) /* "null" (and "none") give JSON null */

struct cli_opt {
        const char *name; /* long name, without "--" */
        char short_name;  /* 0: none */
        enum cli_opt_type type;
        enum cli_opt_dest dest;
        const char *field; /* dotted path in the destination object */
        unsigned verbs;    /* the verbs it applies to (admin); 0 = always */
        unsigned flags;    /* OPT_NULLABLE */
        const char *metavar;
        const char *help;
};

/* What a command line parsed into.  body/query/local are always objects;
 * pos points into argv. */
struct cli_args {
        json_t *body, *query, *local;
        bool has_body; /* a body option was given */
        int npos;
        char **pos;
};

void cli_args_release(struct cli_args *a);
/* Local values (NULL/false/def when not given). */
const char *cli_local_str(const struct cli_args *a, const char *name);
bool cli_local_flag(const struct cli_args *a, const char *name);
long long cli_local_int(const struct cli_args *a, const char *name, long long def);

#define CLI_MAX_OPT_TABLES 3

struct cli_call;

struct cli_leaf {
        const char *name, *alias;
        int (*fn)(struct cli_call *call);
        const struct cli_opt *opts[CLI_MAX_OPT_TABLES]; /* searched in order; NULL ends */
        unsigned verb;        /* options with a verb mask apply when it has this bit */
        int min_pos, max_pos; /* max_pos -1: unlimited */
        const char *args;     /* positional synopsis: "NAME..." */
        const char *help;     /* one line */
        const void *data;     /* for fn */
};

struct cli_call {
        const struct cli_leaf *leaf;
        const char *prefix; /* "tessera session create" */
        struct cli_args args;
};

/* Parse argv (argv[0] is the command's name) against the leaf's options.
 * -EINVAL with a message on a usage error. */
int cli_parse(const struct cli_leaf *leaf, int argc, char **argv, struct cli_args *ret, struct tess_error **err);
/* Parse, answer --help, check positionals, run. Returns the exit code. */
int cli_run_leaf(const char *prefix, const struct cli_leaf *leaf, int argc, char **argv);
/* argv[0] is the group's name; leaves end with a zero row. */
int cli_run_group(const char *prefix, const char *help, const struct cli_leaf *leaves, int argc, char **argv);
/* Help texts. */
void cli_leaf_help(FILE *f, const char *prefix, const struct cli_leaf *leaf);
void cli_group_help(FILE *f, const char *prefix, const char *help, const struct cli_leaf *leaves);

/* All of standard input (at most max bytes; -EFBIG beyond); caller frees. */
int cli_read_stdin(size_t max, char **ret, size_t *ret_len, struct tess_error **err);

/* Consume err: print "error: <msg>", return CLI_EXIT_ERROR. */
int cli_fail(struct tess_error *err);
/* Print "error: <msg>", return CLI_EXIT_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "error: <msg>" and a hint to --help; return CLI_EXIT_USAGE. */
int cli_usage_error(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Options shared by list commands: --limit, --offset (for verb bits `verbs`). */
extern const struct cli_opt cli_page_opts[];

/* Dotted-path helpers on JSON objects: get (NULL if absent), and set
 * (creating intermediate objects; steals value). */
json_t *json_path_get(const json_t *root, const char *path);
int json_path_set(json_t *root, const char *path, json_t *value, struct tess_error **err);

/* The command groups (one file each). */
int cmd_session(int argc, char **argv);
int cmd_admin(int argc, char **argv);
int cmd_admin_usage(int argc, char **argv); /* `tessera admin usage` */
int cmd_api(int argc, char **argv);
int cmd_image(int argc, char **argv);
/* `tessera image build` (cmd_image_build.c) and `push` (cmd_image_push.c). */
extern const struct cli_opt image_build_opts[], image_push_opts[];
int image_build_cmd(struct cli_call *call);
int image_list_cmd(struct cli_call *call); /* cmd_image_list.c */
int image_push_cmd(struct cli_call *call);
/* cmd_session_app.c */
extern const struct cli_opt session_app_opts[];
int session_app_cmd(struct cli_call *call);
/* cmd_session_commit.c */
extern const struct cli_opt session_commit_opts[];
int session_commit_cmd(struct cli_call *call);
int cmd_vfolder(int argc, char **argv);
int cmd_login(int argc, char **argv);
int cmd_logout(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
