/* msg.c - the runner's JSON reader and writer and its request validator
 * (see msg.h).  No dependencies but libc and xrealloc: fuzzed by
 * tests/fuzz/fuzz_runner_msg.c, which includes this file. */
#include "common/compat.h"

#include <stdarg.h>

#include "common/utf8.h"
#include "runner/msg.h"

/* ---- reader ---- */

struct parser {
        char *p, *end;
        struct rmsg_doc *d;
        const char *err;
        int depth;
};

static int fail(struct parser *ps, const char *msg)
{
        if (!ps->err)
                ps->err = msg;
        return -1;
}

static int new_node(struct parser *ps, enum rmsg_type type)
{
        struct rmsg_doc *d = ps->d;

        if (d->n >= RMSG_NODES_MAX)
                return fail(ps, "too many values");
        if (d->n == d->cap) {
                d->cap = d->cap ? d->cap * 2 : 64;
                d->nodes = xrealloc(d->nodes, (size_t)d->cap * sizeof(*d->nodes));
        }
        d->nodes[d->n] = (struct rmsg_node){ .type = type, .child = -1, .next = -1 };
        return d->n++;
}

static void skip_ws(struct parser *ps)
{
        while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
                ps->p++;
}

static int hex4(const char *p, unsigned *ret)
{
        unsigned v = 0;

        for (int i = 0; i < 4; i++) {
                char c = p[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (unsigned)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (unsigned)(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (unsigned)(c - 'A' + 10);
                else
                        return -1;
        }
        *ret = v;
        return 0;
}

static char *put_utf8(char *out, unsigned cp)
{
        if (cp < 0x80) {
                *out++ = (char)cp;
        } else if (cp < 0x800) {
                *out++ = (char)(0xc0 | (cp >> 6));
                *out++ = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
                *out++ = (char)(0xe0 | (cp >> 12));
                *out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
                *out++ = (char)(0x80 | (cp & 0x3f));
        } else {
                *out++ = (char)(0xf0 | (cp >> 18));
                *out++ = (char)(0x80 | ((cp >> 12) & 0x3f));
                *out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
                *out++ = (char)(0x80 | (cp & 0x3f));
        }
        return out;
}

/* An escape after the backslash at ps->p; writes the decoded bytes at *out
 * (never past the escape's own text). */
static int parse_escape(struct parser *ps, char **out)
{
        unsigned cp, lo;
        char c;

        if (ps->end - ps->p < 2)
                return fail(ps, "truncated escape");
        c = ps->p[1];
        ps->p += 2;
        switch (c) {
        case '"': case '\\': case '/': *(*out)++ = c; return 0;
        case 'b': *(*out)++ = '\b'; return 0;
        case 'f': *(*out)++ = '\f'; return 0;
        case 'n': *(*out)++ = '\n'; return 0;
        case 'r': *(*out)++ = '\r'; return 0;
        case 't': *(*out)++ = '\t'; return 0;
        case 'u': break;
        default: return fail(ps, "bad escape");
        }
        if (ps->end - ps->p < 4 || hex4(ps->p, &cp) < 0)
                return fail(ps, "bad \\u escape");
        ps->p += 4;
        if (cp == 0)
                return fail(ps, "\\u0000 in a string");
        if (cp >= 0xdc00 && cp <= 0xdfff)
                return fail(ps, "lone low surrogate");
        if (cp >= 0xd800 && cp <= 0xdbff) {
                if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' || hex4(ps->p + 2, &lo) < 0 ||
                    lo < 0xdc00 || lo > 0xdfff)
                        return fail(ps, "lone high surrogate");
                ps->p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        *out = put_utf8(*out, cp);
        return 0;
}

/* A string at ps->p (the opening quote), decoded in place.  The decoded
 * text is never longer than its escaped form, so the terminating NUL lands
 * at or before the closing quote, which has been consumed by then. */
static int parse_string(struct parser *ps)
{
        char *start, *out;
        int i = new_node(ps, RMSG_STRING);

        if (i < 0)
                return -1;
        start = out = ++ps->p;
        for (;;) {
                if (ps->p >= ps->end)
                        return fail(ps, "unterminated string");
                unsigned char c = (unsigned char)*ps->p;
                if (c == '"')
                        break;
                if (c < 0x20)
                        return fail(ps, "control byte in a string");
                if (c == '\\') {
                        if (parse_escape(ps, &out) < 0)
                                return -1;
                        continue;
                }
                *out++ = (char)c;
                ps->p++;
        }
        ps->p++;
        *out = '\0';
        ps->d->nodes[i].s = start;
        ps->d->nodes[i].len = (size_t)(out - start);
        return i;
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static int parse_number(struct parser *ps)
{
        char *start = ps->p;
        int i;

        if (ps->p < ps->end && *ps->p == '-')
                ps->p++;
        if (ps->p >= ps->end || !is_digit(*ps->p))
                return fail(ps, "bad number");
        if (*ps->p == '0')
                ps->p++;
        else
                while (ps->p < ps->end && is_digit(*ps->p))
                        ps->p++;
        if (ps->p < ps->end && *ps->p == '.') {
                ps->p++;
                if (ps->p >= ps->end || !is_digit(*ps->p))
                        return fail(ps, "bad number");
                while (ps->p < ps->end && is_digit(*ps->p))
                        ps->p++;
        }
        if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
                ps->p++;
                if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
                        ps->p++;
                if (ps->p >= ps->end || !is_digit(*ps->p))
                        return fail(ps, "bad number");
                while (ps->p < ps->end && is_digit(*ps->p))
                        ps->p++;
        }
        i = new_node(ps, RMSG_NUMBER);
        if (i < 0)
                return -1;
        ps->d->nodes[i].s = start;
        ps->d->nodes[i].len = (size_t)(ps->p - start);
        return i;
}

static int parse_literal(struct parser *ps, const char *word, enum rmsg_type type, bool b)
{
        size_t n = strlen(word);
        int i;

        if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
                return fail(ps, "bad literal");
        ps->p += n;
        i = new_node(ps, type);
        if (i >= 0)
                ps->d->nodes[i].b = b;
        return i;
}

static int parse_value(struct parser *ps);

/* An array or object at ps->p; members are linked through `next`. */
static int parse_container(struct parser *ps, bool object)
{
        char close = object ? '}' : ']';
        int i, last = -1;
        size_t count = 0;

        if (++ps->depth > RMSG_DEPTH_MAX)
                return fail(ps, "nested too deep");
        i = new_node(ps, object ? RMSG_OBJECT : RMSG_ARRAY);
        if (i < 0)
                return -1;
        ps->p++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                ps->depth--;
                return i;
        }
        for (;;) {
                int k = -1, v;
                if (object) {
                        if (ps->p >= ps->end || *ps->p != '"')
                                return fail(ps, "expected a member name");
                        k = parse_string(ps);
                        if (k < 0)
                                return -1;
                        skip_ws(ps);
                        if (ps->p >= ps->end || *ps->p != ':')
                                return fail(ps, "expected ':'");
                        ps->p++;
                        skip_ws(ps);
                }
                v = parse_value(ps);
                if (v < 0)
                        return -1;
                if (object)
                        ps->d->nodes[k].next = v;
                if (last < 0)
                        ps->d->nodes[i].child = object ? k : v;
                else
                        ps->d->nodes[last].next = object ? k : v;
                last = v;
                count++;
                skip_ws(ps);
                if (ps->p < ps->end && *ps->p == ',') {
                        ps->p++;
                        skip_ws(ps);
                        continue;
                }
                if (ps->p < ps->end && *ps->p == close) {
                        ps->p++;
                        break;
                }
                return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        ps->d->nodes[i].len = count;
        ps->depth--;
        return i;
}

static int parse_value(struct parser *ps)
{
        if (ps->p >= ps->end)
                return fail(ps, "unexpected end");
        switch (*ps->p) {
        case '{': return parse_container(ps, true);
        case '[': return parse_container(ps, false);
        case '"': return parse_string(ps);
        case 't': return parse_literal(ps, "true", RMSG_BOOL, true);
        case 'f': return parse_literal(ps, "false", RMSG_BOOL, false);
        case 'n': return parse_literal(ps, "null", RMSG_NULL, false);
        default: return parse_number(ps);
        }
}

int rmsg_parse(struct rmsg_doc *d, char *text, size_t len, const char **ret_err)
{
        struct parser ps = { .p = text, .end = text + len, .d = d };

        d->n = 0;
        skip_ws(&ps);
        if (parse_value(&ps) < 0) {
                *ret_err = ps.err;
                return -1;
        }
        skip_ws(&ps);
        if (ps.p != ps.end) {
                *ret_err = "trailing bytes after the value";
                return -1;
        }
        return 0;
}

void rmsg_doc_release(struct rmsg_doc *d)
{
        free(d->nodes);
        *d = (struct rmsg_doc)RMSG_DOC_INIT;
}

int rmsg_get(const struct rmsg_doc *d, int obj, const char *key)
{
        size_t klen = strlen(key);

        if (obj < 0 || obj >= d->n || d->nodes[obj].type != RMSG_OBJECT)
                return -1;
        for (int k = d->nodes[obj].child; k >= 0; k = d->nodes[d->nodes[k].next].next)
                if (d->nodes[k].len == klen && memcmp(d->nodes[k].s, key, klen) == 0)
                        return d->nodes[k].next;
        return -1;
}

int rmsg_int(const struct rmsg_node *n, int64_t *ret)
{
        size_t i = 0;
        bool neg = false;
        int64_t v = 0;

        if (n->type != RMSG_NUMBER || n->len == 0)
                return -1;
        if (n->s[0] == '-') {
                neg = true;
                i = 1;
        }
        if (i == n->len || n->len - i > 18)
                return -1;
        for (; i < n->len; i++) {
                if (!is_digit(n->s[i]))
                        return -1;
                v = v * 10 + (n->s[i] - '0');
        }
        *ret = neg ? -v : v;
        return 0;
}

/* ---- requests ---- */

static const struct {
        const char *name;
        enum rmsg_op op;
} ops[] = {
        { "ping", RMSG_OP_PING },
        { "exec", RMSG_OP_EXEC },
        { "interrupt", RMSG_OP_INTERRUPT },
        { "pty", RMSG_OP_PTY },
        { "upload", RMSG_OP_UPLOAD },
        { "download", RMSG_OP_DOWNLOAD },
        { "list", RMSG_OP_LIST },
        { "start-service", RMSG_OP_START_SERVICE },
        { "shutdown", RMSG_OP_SHUTDOWN },
        { "shutdown-service", RMSG_OP_SHUTDOWN_SERVICE },
        { "restart", RMSG_OP_RESTART },
};

static const char *const modes[] = {
        [RMSG_MODE_QUERY] = "query",       [RMSG_MODE_BATCH] = "batch", [RMSG_MODE_CONTINUE] = "continue",
        [RMSG_MODE_INPUT] = "input",       [RMSG_MODE_COMPLETE] = "complete",
};

const char *rmsg_op_name(enum rmsg_op op)
{
        for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
                if (ops[i].op == op)
                        return ops[i].name;
        return "?";
}

static bool name_chars(const char *s, size_t len, size_t max, const char *extra)
{
        if (len == 0 || len > max)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !is_digit(c) && (c == '\0' || !strchr(extra, c)))
                        return false;
        }
        return true;
}

bool rmsg_path_check(const char *path, bool allow_root)
{
        size_t len = strlen(path);
        bool named = false;
        const char *p = path;

        if (len > RMSG_PATH_MAX || path[0] == '/')
                return false;
        while (*p) {
                size_t n = strcspn(p, "/");
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return false;
                if (n > 0 && !(n == 1 && p[0] == '.'))
                        named = true;
                p += n;
                if (*p == '/')
                        p++;
        }
        if (allow_root)
                return true;
        if (!named || path[len - 1] == '/')
                return false;
        return !(len == 1 ? path[0] == '.' : (path[len - 1] == '.' && path[len - 2] == '/'));
}

struct req_ctx {
        const struct rmsg_doc *d;
        struct rmsg_req *r;
        const char *err;
};

static const struct rmsg_node *node(struct req_ctx *x, int i)
{
        return &x->d->nodes[i];
}

static int want_string(struct req_ctx *x, int v, size_t max, const char **ret, const char *what)
{
        if (node(x, v)->type != RMSG_STRING || node(x, v)->len > max) {
                x->err = what;
                return -1;
        }
        *ret = node(x, v)->s;
        return 0;
}

static int want_int(struct req_ctx *x, int v, int64_t lo, int64_t hi, int64_t *ret, const char *what)
{
        int64_t n;

        if (rmsg_int(node(x, v), &n) < 0 || n < lo || n > hi) {
                x->err = what;
                return -1;
        }
        *ret = n;
        return 0;
}

static int f_id(struct req_ctx *x, int v)
{
        return want_int(x, v, 0, INT64_C(1) << 53, &x->r->id, "\"id\" must be an integer >= 0");
}

static int f_mode(struct req_ctx *x, int v)
{
        const struct rmsg_node *n = node(x, v);

        if (n->type == RMSG_STRING)
                for (size_t m = 1; m < ARRAY_SIZE(modes); m++)
                        if (streq(n->s, modes[m])) {
                                x->r->mode = (enum rmsg_mode)m;
                                return 0;
                        }
        x->err = "\"mode\" must be query, batch, continue, input or complete";
        return -1;
}

static int f_code(struct req_ctx *x, int v)
{
        if (want_string(x, v, RMSG_LINE_MAX, &x->r->code, "\"code\" must be a string") < 0)
                return -1;
        x->r->code_len = node(x, v)->len;
        return 0;
}

static int f_run_id(struct req_ctx *x, int v)
{
        if (node(x, v)->type == RMSG_NULL)
                return 0;
        if (node(x, v)->type != RMSG_STRING || !name_chars(node(x, v)->s, node(x, v)->len, RMSG_RUNID_MAX, "._:-")) {
                x->err = "\"runId\" must be 1-64 of [A-Za-z0-9._:-]";
                return -1;
        }
        x->r->run_id = node(x, v)->s;
        return 0;
}

static int f_options(struct req_ctx *x, int v)
{
        static const char *const keys[] = { "exec", "build", "clean" };
        const char **dst[] = { &x->r->opt_exec, &x->r->opt_build, &x->r->opt_clean };

        if (node(x, v)->type == RMSG_NULL)
                return 0;
        if (node(x, v)->type != RMSG_OBJECT) {
                x->err = "\"options\" must be an object";
                return -1;
        }
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                int o = rmsg_get(x->d, v, keys[i]);
                if (o < 0 || node(x, o)->type == RMSG_NULL)
                        continue;
                if (want_string(x, o, RMSG_CMD_MAX, dst[i], "options.exec/build/clean must be strings") < 0)
                        return -1;
                if (strcmp(*dst[i], "*") == 0) /* Backend.AI's "the default": none here (exec: the code) */
                        *dst[i] = NULL;
        }
        return 0;
}

static int f_path(struct req_ctx *x, int v)
{
        if (node(x, v)->type != RMSG_STRING || !rmsg_path_check(node(x, v)->s, true)) {
                x->err = "\"path\" must be a relative path without '..'";
                return -1;
        }
        x->r->path = node(x, v)->s;
        return 0;
}

static int f_size(struct req_ctx *x, int v)
{
        return want_int(x, v, 0, INT64_C(1) << 50, &x->r->size, "\"size\" must be an integer >= 0");
}

static int f_small(struct req_ctx *x, int v, int64_t lo, int64_t hi, int *dst, const char *what)
{
        int64_t n;

        if (want_int(x, v, lo, hi, &n, what) < 0)
                return -1;
        *dst = (int)n;
        return 0;
}

static int f_perm(struct req_ctx *x, int v)
{
        return f_small(x, v, 0, 07777, &x->r->perm, "\"perm\" must be a file mode 0..07777");
}

static int f_rows(struct req_ctx *x, int v)
{
        return f_small(x, v, 1, 4096, &x->r->rows, "\"rows\" must be 1..4096");
}

static int f_cols(struct req_ctx *x, int v)
{
        return f_small(x, v, 1, 4096, &x->r->cols, "\"cols\" must be 1..4096");
}

static int f_port(struct req_ctx *x, int v)
{
        return f_small(x, v, 0, 65535, &x->r->port, "\"port\" must be 0..65535");
}

static int f_wait(struct req_ctx *x, int v)
{
        return want_int(x, v, 0, RMSG_WAIT_MAX_MS, &x->r->wait_ms, "\"wait\" must be 0..600000 (ms)");
}

static int f_name(struct req_ctx *x, int v)
{
        if (node(x, v)->type != RMSG_STRING || !name_chars(node(x, v)->s, node(x, v)->len, RMSG_NAME_MAX, "._-")) {
                x->err = "\"name\" must be 1-64 of [A-Za-z0-9._-]";
                return -1;
        }
        x->r->name = node(x, v)->s;
        return 0;
}

static int string_array(struct req_ctx *x, int v, const char **dst, int *ret_n, bool env, const char *what)
{
        int n = 0;

        if (node(x, v)->type != RMSG_ARRAY || node(x, v)->len > RMSG_ARGV_MAX) {
                x->err = what;
                return -1;
        }
        for (int e = node(x, v)->child; e >= 0; e = node(x, e)->next) {
                const struct rmsg_node *s = node(x, e);
                if (s->type != RMSG_STRING || s->len > RMSG_CMD_MAX) {
                        x->err = what;
                        return -1;
                }
                if (env) {
                        const char *eq = strchr(s->s, '=');
                        if (!eq || is_digit(s->s[0]) ||
                            !name_chars(s->s, (size_t)(eq - s->s), 256, "_")) {
                                x->err = "\"env\" entries must be KEY=value with KEY a shell name";
                                return -1;
                        }
                }
                dst[n++] = s->s;
        }
        dst[n] = NULL;
        *ret_n = n;
        return 0;
}

static int f_argv(struct req_ctx *x, int v)
{
        if (string_array(x, v, x->r->argv, &x->r->argc, false, "\"argv\" must be an array of at most 256 strings") < 0)
                return -1;
        if (x->r->argc > 0 && x->r->argv[0][0] == '\0') {
                x->err = "\"argv\"[0] must not be empty";
                return -1;
        }
        return 0;
}

static int f_env(struct req_ctx *x, int v)
{
        return string_array(x, v, x->r->env, &x->r->envc, true, "\"env\" must be an array of at most 256 strings");
}

enum {
        F_ID = 1 << 0, F_MODE = 1 << 1, F_CODE = 1 << 2, F_RUNID = 1 << 3, F_OPTIONS = 1 << 4,
        F_PATH = 1 << 5, F_SIZE = 1 << 6, F_PERM = 1 << 7, F_ROWS = 1 << 8, F_COLS = 1 << 9,
        F_NAME = 1 << 10, F_ARGV = 1 << 11, F_ENV = 1 << 12, F_PORT = 1 << 13, F_WAIT = 1 << 14,
};

/* Every member a request may carry; unknown members are ignored. */
static const struct {
        const char *key;
        unsigned flag;
        int (*parse)(struct req_ctx *x, int v);
} fields[] = {
        { "id", F_ID, f_id },         { "mode", F_MODE, f_mode },       { "code", F_CODE, f_code },
        { "runId", F_RUNID, f_run_id }, { "options", F_OPTIONS, f_options }, { "path", F_PATH, f_path },
        { "size", F_SIZE, f_size },   { "perm", F_PERM, f_perm },       { "rows", F_ROWS, f_rows },
        { "cols", F_COLS, f_cols },   { "name", F_NAME, f_name },       { "argv", F_ARGV, f_argv },
        { "env", F_ENV, f_env },      { "port", F_PORT, f_port },       { "wait", F_WAIT, f_wait },
};

/* What each op needs beyond the member types (checked after all members). */
static const char *check_op(const struct rmsg_req *r, unsigned seen)
{
        switch (r->op) {
        case RMSG_OP_EXEC:
                if (!(seen & F_MODE))
                        return "exec needs \"mode\"";
                if ((r->mode == RMSG_MODE_CONTINUE || r->mode == RMSG_MODE_INPUT) && !r->run_id)
                        return "continue and input need \"runId\"";
                if (r->mode == RMSG_MODE_INPUT && !r->code)
                        return "input needs \"code\" (the text to send)";
                if (r->mode == RMSG_MODE_QUERY && !r->code)
                        return "query needs \"code\"";
                if (r->mode == RMSG_MODE_BATCH && !(r->opt_exec && *r->opt_exec) && !(r->code && *r->code))
                        return "batch needs options.exec or \"code\"";
                return NULL;
        case RMSG_OP_UPLOAD:
                if (!r->path || r->size < 0)
                        return "upload needs \"path\" and \"size\"";
                return rmsg_path_check(r->path, false) ? NULL : "upload needs a file path";
        case RMSG_OP_DOWNLOAD:
                if (!r->path)
                        return "download needs \"path\"";
                return rmsg_path_check(r->path, false) ? NULL : "download needs a file path";
        case RMSG_OP_START_SERVICE:
                return r->name && r->argc > 0 ? NULL : "start-service needs \"name\" and \"argv\"";
        case RMSG_OP_SHUTDOWN_SERVICE:
                return r->name ? NULL : "shutdown-service needs \"name\"";
        default:
                return NULL;
        }
}

int rmsg_req_parse(struct rmsg_doc *d, char *line, size_t len, struct rmsg_req *ret, const char **ret_err)
{
        struct req_ctx x = { .d = d, .r = ret };
        unsigned seen = 0;
        int top = 0, opv;

        *ret = (struct rmsg_req){ .op = _RMSG_OP_MAX, .id = -1, .size = -1, .perm = -1, .rows = 24, .cols = 80,
                                  .wait_ms = -1 };
        if (rmsg_parse(d, line, len, ret_err) < 0)
                return -1;
        if (d->nodes[top].type != RMSG_OBJECT) {
                *ret_err = "a request is a JSON object";
                return -1;
        }
        opv = rmsg_get(d, top, "op");
        if (opv < 0 || d->nodes[opv].type != RMSG_STRING) {
                *ret_err = "missing \"op\"";
                return -1;
        }
        for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
                if (streq(d->nodes[opv].s, ops[i].name))
                        ret->op = ops[i].op;
        if (ret->op == _RMSG_OP_MAX) {
                *ret_err = "unknown \"op\"";
                return -1;
        }
        /* the id first, so that even a refusal carries it */
        int idv = rmsg_get(d, top, "id");
        if (idv >= 0 && f_id(&x, idv) < 0)
                ret->id = -1;
        for (int k = d->nodes[top].child; k >= 0; k = d->nodes[d->nodes[k].next].next) {
                for (size_t f = 0; f < ARRAY_SIZE(fields); f++) {
                        if (!streq(d->nodes[k].s, fields[f].key))
                                continue;
                        if (seen & fields[f].flag) {
                                *ret_err = "duplicate member";
                                return -1;
                        }
                        seen |= fields[f].flag;
                        if (fields[f].parse(&x, d->nodes[k].next) < 0) {
                                *ret_err = x.err;
                                return -1;
                        }
                }
        }
        *ret_err = check_op(ret, seen);
        return *ret_err ? -1 : 0;
}

/* ---- writer ---- */

void rbuf_reserve(struct rbuf *b, size_t extra)
{
        size_t cap = b->cap ? b->cap : 256;

        if (b->len + extra + 1 <= b->cap)
                return;
        while (cap < b->len + extra + 1)
                cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
}

void rbuf_append(struct rbuf *b, const void *p, size_t n)
{
        rbuf_reserve(b, n);
        if (n)
                memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
}

void rbuf_puts(struct rbuf *b, const char *s)
{
        rbuf_append(b, s, strlen(s));
}

void rbuf_printf(struct rbuf *b, const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        rbuf_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
}

void rbuf_json_str(struct rbuf *b, const char *s, size_t n)
{
        static const char hex[] = "0123456789abcdef";
        const unsigned char *p = (const unsigned char *)s;
        size_t i = 0, run = 0;

        rbuf_append(b, "\"", 1);
        while (i < n) {
                unsigned char c = p[i];
                size_t l = c >= 0x20 && c < 0x80 && c != '"' && c != '\\' ? 1 : c >= 0x80 ? utf8_seq_len(p + i, n - i) : 0;
                if (l) {
                        i += l;
                        run += l;
                        continue;
                }
                rbuf_append(b, p + i - run, run);
                run = 0;
                if (c == '"' || c == '\\') {
                        char e[2] = { '\\', (char)c };
                        rbuf_append(b, e, 2);
                } else if (c == '\n') {
                        rbuf_append(b, "\\n", 2);
                } else if (c == '\t') {
                        rbuf_append(b, "\\t", 2);
                } else if (c == '\r') {
                        rbuf_append(b, "\\r", 2);
                } else if (c < 0x20) {
                        char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                        rbuf_append(b, e, 6);
                } else {
                        rbuf_append(b, "\xef\xbf\xbd", 3); /* U+FFFD */
                }
                i++;
        }
        rbuf_append(b, p + i - run, run);
        rbuf_append(b, "\"", 1);
}

void rbuf_consume(struct rbuf *b, size_t n)
{
        if (n >= b->len) {
                b->len = 0;
        } else {
                memmove(b->data, b->data + n, b->len - n);
                b->len -= n;
        }
        if (b->data)
                b->data[b->len] = '\0';
}

void rbuf_release(struct rbuf *b)
{
        free(b->data);
        *b = (struct rbuf)RBUF_INIT;
}

size_t rmsg_utf8_prefix(const char *s, size_t n)
{
        const unsigned char *p = (const unsigned char *)s;

        /* look back at most 3 bytes for the lead byte of the last sequence */
        for (size_t back = 1; back <= 3 && back <= n; back++) {
                unsigned c = p[n - back];
                size_t need;
                if ((c & 0xc0) == 0x80)
                        continue;
                need = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 1;
                if (need > back && c >= 0xc2 && c <= 0xf4) {
                        /* only hold back what could still become valid */
                        for (size_t i = 1; i < back; i++)
                                if ((p[n - back + i] & 0xc0) != 0x80)
                                        return n;
                        return n - back;
                }
                return n;
        }
        return n;
}
