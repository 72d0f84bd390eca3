/* gql-internal.h - the tree of a parsed GraphQL document and what the files
 * behind gql.h share.
 *
 * gql_check_source() refuses what no GraphQL document holds (NUL bytes,
 * invalid UTF-8), so the lexer may trust the bytes; gql_lex() reads one token
 * ahead for a recursive-descent parser (spec §2, one function per
 * production) that builds the tree in an arena the document owns;
 * gql_validate() then resolves fragment spreads and checks the
 * document-wide rules.  After gql_parse() returns, nothing writes to a
 * document again.  Lists are built as linked lists through each node's
 * `next` and turned into arrays when complete.
 *
 * The files:
 *   gql_lex.c       the source's checks, tokens, strings, block strings,
 *                   and "LINE:COLUMN: " errors
 *   gql_parse.c     the grammar into nodes, the arena, gql_parse(),
 *                   gql_doc_free() and the operations' accessors
 *   gql_validate.c  names, fragments and their cycles, depth, variables used
 *   gql_vars.c      values as JSON, gql_coerce_variables()
 *   gql_collect.c   gql_collect_fields(), gql_fields_release()
 *   gql_print.c     gql_doc_print() */
#ifndef TESS_GQL_INTERNAL_H
#define TESS_GQL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/gql.h"

/* The tree ------------------------------------------------------------- */

enum value_kind {
        VAL_VARIABLE,
        VAL_INT,
        VAL_FLOAT,
        VAL_STRING,
        VAL_BOOLEAN,
        VAL_NULL,
        VAL_ENUM,
        VAL_LIST,
        VAL_OBJECT,
};

struct arg; /* an argument, or a field of an object value */

struct value {
        enum value_kind kind;
        unsigned line, column;
        const char *text;     /* variable or enum name, number as written, string's value */
        size_t len;           /* of a string's value */
        json_int_t i;         /* VAL_INT */
        double f;             /* VAL_FLOAT */
        bool b;               /* VAL_BOOLEAN */
        struct value **items; /* VAL_LIST */
        struct arg **fields;  /* VAL_OBJECT */
        size_t n;             /* items or fields */
        struct value *next;
};

struct arg {
        const char *name;
        struct value *value;
        unsigned line, column;
        struct arg *next;
};

struct directive {
        const char *name;
        struct arg **args;
        size_t n_args;
        unsigned line, column;
        struct directive *next;
};

enum selection_kind {
        SEL_FIELD,
        SEL_SPREAD,
        SEL_INLINE,
};

struct fragment;

struct selection {
        enum selection_kind kind;
        unsigned line, column;
        const char *alias;     /* field: NULL when none */
        const char *name;      /* field's name, spread's fragment */
        const char *type_cond; /* inline fragment: NULL when none */
        struct arg **args;
        size_t n_args;
        struct directive **dirs;
        size_t n_dirs;
        struct gql_selection_set *set; /* field (NULL for a leaf), inline fragment */
        struct fragment *frag;         /* spread: resolved by gql_validate() */
        struct selection *next;
};

struct gql_selection_set {
        struct selection **v;
        size_t n;
        unsigned line, column;
};

enum type_kind {
        TYPE_NAMED,
        TYPE_LIST,
        TYPE_NON_NULL,
};

struct type {
        enum type_kind kind;
        const char *name; /* TYPE_NAMED */
        struct type *of;  /* TYPE_LIST, TYPE_NON_NULL */
};

struct vardef {
        const char *name; /* without the $ */
        struct type *type;
        struct value *def; /* NULL when none */
        struct directive **dirs;
        size_t n_dirs;
        unsigned line, column;
        struct vardef *next;
};

struct gql_operation {
        enum gql_op_type type;
        const char *name; /* NULL when anonymous */
        struct vardef **vars;
        size_t n_vars;
        struct directive **dirs;
        size_t n_dirs;
        struct gql_selection_set *set;
        size_t def_index; /* among the document's definitions */
        unsigned line, column;
        struct gql_operation *next;
};

struct fragment {
        const char *name;
        const char *type_cond;
        struct directive **dirs;
        size_t n_dirs;
        struct gql_selection_set *set;
        size_t index;     /* among the fragments */
        size_t def_index; /* among the document's definitions */
        unsigned line, column;
        struct fragment *next;
};

struct chunk; /* of the arena (gql_parse.c) */

struct gql_doc {
        struct chunk *chunks;
        struct gql_operation **ops;
        size_t n_ops;
        struct fragment **frags;
        size_t n_frags;
};

/* Tokens and the parser's state, shared with the lexer ---------------------- */

enum token_kind {
        TOK_EOF,
        TOK_PUNCT, /* ! $ & ( ) ... : = @ [ ] { | } */
        TOK_NAME,
        TOK_INT,
        TOK_FLOAT,
        TOK_STRING,
        TOK_BLOCK_STRING,
};

struct token {
        enum token_kind kind;
        const char *start; /* its text in the source */
        size_t len;
        const char *value; /* strings: the value (arena), value_len bytes */
        size_t value_len;
        unsigned line, column;
};

struct parser {
        const char *s;
        size_t len, pos;
        unsigned line, column; /* of s[pos] */
        struct token tok;      /* the next token */
        struct gql_doc *doc;
        struct buf sbuf; /* a string being read */
        int depth;
        size_t nodes;
        struct tess_error **err;
};

/* gql_lex.c ------------------------------------------------------------------ */

/* Set *err to "LINE:COLUMN: message" (EINVAL); RET -EINVAL. */
int gql_err_at(struct tess_error **err, unsigned line, unsigned column, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* The same, into p->err. */
int gql_fail(struct parser *p, unsigned line, unsigned column, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Refuse a document that is too long, holds a NUL byte or is not UTF-8. */
int gql_check_source(const char *s, size_t len, struct tess_error **err);

/* Read the next token into p->tok. */
int gql_lex(struct parser *p);

/* \X in a string: X in gql_escapes stands for the byte at its place in
 * gql_escaped. */
extern const char gql_escapes[], gql_escaped[];

/* gql_parse.c ---------------------------------------------------------------- */

/* A NUL-terminated copy of the n bytes at s, in the document's arena: it
 * lives as long as the document. */
char *gql_arena_strndup(struct gql_doc *d, const char *s, size_t n);

/* gql_validate.c ------------------------------------------------------------- */

/* Resolve the fragment spreads of a parsed document and check what
 * execution needs (spec §5). */
int gql_validate(struct gql_doc *doc, struct tess_error **err);

/* gql_vars.c ----------------------------------------------------------------- */

/* An object of the arguments' values, variables substituted from vars (an
 * argument whose variable vars lacks is left out). */
json_t *gql_args_json(struct arg *const *args, size_t n, const json_t *vars);

/* gql_print.c ---------------------------------------------------------------- */

/* Append a type as written: "[Int!]!". */
void gql_type_print(struct buf *b, const struct type *t);

#endif
