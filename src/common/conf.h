/* conf.h - table-driven configuration files.
 *
 * Format: one `key = value` per line; `#` starts a comment; blank lines are
 * ignored; values may be double-quoted.  Every daemon describes its keys in
 * one static table of struct conf_opt (name, type, offset, default, help),
 * which drives parsing, defaults, validation and --print-config.  Errors
 * carry `file:line: key: message`.  Parsing fills a fresh struct; the
 * caller swaps it in only when parsing fully succeeded (SIGHUP reload). */
#ifndef TESS_CONF_H
#define TESS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"

enum conf_type {
        CONF_T_STR,   /* char * (owned) */
        CONF_T_U64,   /* uint64_t */
        CONF_T_BOOL,  /* bool */
        CONF_T_SIZE,  /* uint64_t bytes, "4m" */
        CONF_T_USEC,  /* int64_t microseconds, "30s" */
};

struct conf_opt {
        const char *name;
        enum conf_type type;
        size_t offset;
        const char *def;  /* default, in file syntax */
        uint64_t min, max; /* for U64 (0, 0 = unbounded) */
        bool reloadable;   /* SIGHUP may change it */
        const char *help;
};

#define CONF_OPT(n, t, st, field, def, min, max, rel, help) \
        { n, t, offsetof(st, field), def, min, max, rel, help }

/* Set every option of `opts` in `out` to its default. */
int conf_defaults(const struct conf_opt *opts, void *out, struct tess_error **err);
/* Set one option from its text value. */
int conf_set(const struct conf_opt *opts, void *out, const char *key, const char *value, struct tess_error **err);
/* Parse file text (name used in errors) on top of what `out` holds. */
int conf_parse(const struct conf_opt *opts, void *out, const char *name, const char *text, size_t len,
               struct tess_error **err);
/* One line of the format, split in place: 0 for a blank or comment line,
 * 1 with *ret_key and *ret_val (unquoted, trailing " # comment" dropped),
 * -EINVAL when there is no '='.  Also the syntax of image recipes. */
int conf_split_line(char *line, char **ret_key, char **ret_val);
int conf_load_file(const struct conf_opt *opts, void *out, const char *path, struct tess_error **err);
/* Free owned strings. */
void conf_release(const struct conf_opt *opts, void *out);
/* Print "key = value" for each option. */
void conf_print(const struct conf_opt *opts, const void *in, struct buf *out);

#endif
