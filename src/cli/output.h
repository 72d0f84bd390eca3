/* output.h - how the tessera client prints answers: the server's JSON as
 * is (pretty) for --json, aligned tables for lists, "key: value" lines for
 * one object.  Resource slots are shown human-sized ("cpu=2 mem=4 GiB"). */
#ifndef TESS_CLI_OUTPUT_H
#define TESS_CLI_OUTPUT_H

#include <jansson.h>

#include "common/buf.h"

enum col_format {
        COL_TEXT,    /* any value: strings as is, null "-", lists joined */
        COL_SLOTS,   /* {"cpu": "2", "mem": "4294967296"} -> "cpu=2 mem=4 GiB" */
        COL_TIME,    /* ISO 8601 -> "2026-11-22 03:54:59" */
        COL_SHORTID, /* the first 8 characters of an id */
};

struct column {
        const char *header;
        const char *field; /* dotted path in each item */
        enum col_format format;
};

/* Append the human form of v to b. */
void out_format(struct buf *b, const json_t *v, enum col_format format);
/* Pretty JSON on stdout. */
void out_json(const json_t *v);
/* A table of `items` (a JSON list of objects); columns end with a zero row. */
void out_table(const struct column *cols, const json_t *items);
/* A list answer {"items": [...], "total": N, "offset": O} as a table, and
 * on stderr how many of the total it shows when that is not all. */
void out_list(const struct column *cols, const json_t *answer);
/* One object as aligned "key: value" lines (nested objects flattened as
 * "a.b"; objects named like slots shown as slots). */
void out_object(const json_t *obj);

/* Printers of an answer for cli_request: `arg` is what they were given. */
typedef void (*out_print_fn)(const json_t *answer, const void *arg);
void out_print_object(const json_t *answer, const void *arg);  /* out_object; arg unused */
void out_print_list(const json_t *answer, const void *columns); /* out_list */

/* Send a signed JSON request (body may be NULL) and print the answer: as
 * JSON with --json, else with print(answer, arg).  An error is printed as
 * "error: <problem title> (HTTP n)".  Returns the exit code. */
int cli_request(const char *method, const char *path, const json_t *body, out_print_fn print, const void *arg);

#endif
