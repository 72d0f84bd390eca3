/* msg.h - the runner's wire messages (docs/design/runner.md): a small JSON
 * reader that decodes in place into a bounded node array, a JSON writer
 * (struct rbuf), and the validator that turns one request line into a
 * struct rmsg_req.
 *
 * msg.c depends on libc only (and the x-allocators declared in compat.h):
 * the static runner links it, and tests/fuzz/fuzz_runner_msg.c includes it.
 * Every limit below is enforced by the parser; strings in a parsed request
 * point into the caller's line, which the parser rewrites in place. */
#ifndef TESSERA_RUNNER_MSG_H
#define TESSERA_RUNNER_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RMSG_LINE_MAX    (4u << 20) /* one request line, code included */
#define RMSG_DEPTH_MAX   16         /* nesting of arrays and objects */
#define RMSG_NODES_MAX   4096       /* values in one message */
#define RMSG_ARGV_MAX    256        /* "argv" and "env" elements */
#define RMSG_PATH_MAX    4096
#define RMSG_RUNID_MAX   64
#define RMSG_NAME_MAX    64
#define RMSG_CMD_MAX     (1u << 20) /* options.exec / build / clean */
#define RMSG_WAIT_MAX_MS 600000

/* ---- JSON reader ---- */

enum rmsg_type { RMSG_NULL, RMSG_BOOL, RMSG_NUMBER, RMSG_STRING, RMSG_ARRAY, RMSG_OBJECT };

struct rmsg_node {
        enum rmsg_type type;
        bool b;        /* BOOL */
        const char *s; /* STRING: decoded and NUL-terminated; NUMBER: its text, not terminated */
        size_t len;    /* STRING, NUMBER: bytes; ARRAY: elements; OBJECT: members */
        int child;     /* ARRAY: first element; OBJECT: first key (its value is key's next) */
        int next;      /* next sibling, -1 at the end */
};

struct rmsg_doc {
        struct rmsg_node *nodes; /* nodes[0] is the top value */
        int n, cap;
};
#define RMSG_DOC_INIT { NULL, 0, 0 }

/* Parse one JSON value from text[0..len), decoding strings in place (text is
 * modified; strings stay valid as long as text).  Rejects: control bytes in
 * strings, \u0000, lone surrogates, nesting deeper than RMSG_DEPTH_MAX, more
 * than RMSG_NODES_MAX values, trailing bytes.  0 or -1 with *ret_err set to
 * a static message.  The doc may be reused; free it with rmsg_doc_release. */
int rmsg_parse(struct rmsg_doc *d, char *text, size_t len, const char **ret_err);
void rmsg_doc_release(struct rmsg_doc *d);
/* Value of member `key` of object node `obj`: a node index, or -1. */
int rmsg_get(const struct rmsg_doc *d, int obj, const char *key);
/* An integer NUMBER node (no fraction or exponent, |v| < 10^18): 0 or -1. */
int rmsg_int(const struct rmsg_node *n, int64_t *ret);

/* ---- requests ---- */

enum rmsg_op {
        RMSG_OP_PING,
        RMSG_OP_EXEC,
        RMSG_OP_INTERRUPT,
        RMSG_OP_PTY,
        RMSG_OP_UPLOAD,
        RMSG_OP_DOWNLOAD,
        RMSG_OP_LIST,
        RMSG_OP_START_SERVICE,
        RMSG_OP_SHUTDOWN,
        RMSG_OP_SHUTDOWN_SERVICE,
        RMSG_OP_RESTART,
        _RMSG_OP_MAX,
};

enum rmsg_mode { RMSG_MODE_NONE, RMSG_MODE_QUERY, RMSG_MODE_BATCH, RMSG_MODE_CONTINUE, RMSG_MODE_INPUT, RMSG_MODE_COMPLETE };

/* One validated request.  Absent fields: NULL strings, -1 numbers, 0 counts
 * (rows/cols default to 24x80).  argv and env are NULL-terminated. */
struct rmsg_req {
        enum rmsg_op op;
        int64_t id;
        enum rmsg_mode mode;
        const char *code;
        size_t code_len;
        const char *run_id; /* [A-Za-z0-9._:-]{1,64} */
        const char *opt_exec, *opt_build, *opt_clean; /* NULL: none ("*", the client's "default", too) */
        const char *path;   /* passed rmsg_path_check */
        int64_t size;       /* upload bytes */
        int perm;           /* upload file mode, 0..07777 */
        int rows, cols;     /* pty, 1..4096 */
        const char *name;   /* service, [A-Za-z0-9._-]{1,64} */
        int argc, envc;
        const char *argv[RMSG_ARGV_MAX + 1];
        const char *env[RMSG_ARGV_MAX + 1]; /* "KEY=value", KEY a shell name */
        int port;           /* 0..65535 */
        int64_t wait_ms;    /* 0..RMSG_WAIT_MAX_MS */
};

/* Parse and validate one request line (without its '\n'); line is rewritten
 * in place and *ret points into it.  d is scratch space the caller releases.
 * 0, or -1 with *ret_err a static message. */
int rmsg_req_parse(struct rmsg_doc *d, char *line, size_t len, struct rmsg_req *ret, const char **ret_err);
const char *rmsg_op_name(enum rmsg_op op);
/* A relative path under the home directory: no leading '/', no ".."
 * component, no NUL, at most RMSG_PATH_MAX bytes.  Unless allow_root, it
 * must name something below home (not "", "." or "a/.."-style roots) and
 * must not end in '/' or "/.". */
bool rmsg_path_check(const char *path, bool allow_root);

/* ---- JSON writer ---- */

/* Growable byte buffer; data is NULL until the first append and
 * NUL-terminated after it.  Allocation failure aborts (xrealloc). */
struct rbuf {
        char *data;
        size_t len, cap;
};
#define RBUF_INIT { NULL, 0, 0 }

void rbuf_append(struct rbuf *b, const void *p, size_t n);
/* Room for `extra` more bytes after len (len unchanged). */
void rbuf_reserve(struct rbuf *b, size_t extra);
void rbuf_puts(struct rbuf *b, const char *s);
void rbuf_printf(struct rbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal, quoted: control bytes escaped, each byte that is
 * not part of valid UTF-8 written as U+FFFD, so the output is always valid
 * JSON in valid UTF-8. */
void rbuf_json_str(struct rbuf *b, const char *p, size_t n);
/* Drop the first n bytes. */
void rbuf_consume(struct rbuf *b, size_t n);
void rbuf_release(struct rbuf *b);

/* Length of the longest prefix of p[0..n) that does not end inside a
 * UTF-8 sequence that more bytes could still complete. */
size_t rmsg_utf8_prefix(const char *p, size_t n);

#endif
