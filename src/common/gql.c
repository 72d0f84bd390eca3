/* gql.c - see gql.h.
 *
 * check_source() refuses what no GraphQL document holds (NUL bytes, invalid
 * UTF-8), so the lexer may trust the bytes; lex() reads one token ahead for
 * a recursive-descent parser (spec §2, one function per production) that
 * builds the tree in an arena the document owns; validate() then resolves
 * fragment spreads and checks the document-wide rules.  After gql_parse()
 * returns, nothing writes to a document again.  Lists are built as linked
 * lists through each node's `next` and turned into arrays when complete. */
#include "common/compat.h"

#include <jansson.h>

#include "common/buf.h"
#include "common/gql.h"
#include "common/strmap.h"
#include "common/utf8.h"

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
        struct fragment *frag;         /* spread: resolved by validate() */
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

struct chunk {
        struct chunk *next;
        size_t used, cap;
        max_align_t data[];
};

struct gql_doc {
        struct chunk *chunks;
        struct gql_operation **ops;
        size_t n_ops;
        struct fragment **frags;
        size_t n_frags;
};

#define CHUNK_SIZE 16384

/* Zeroed memory that lives as long as the document. */
static void *arena_alloc(struct gql_doc *d, size_t n)
{
        struct chunk *c = d->chunks;

        n = (n + 15) & ~(size_t)15;
        if (!c || c->cap - c->used < n) {
                size_t cap = n > CHUNK_SIZE / 4 ? n : CHUNK_SIZE;
                struct chunk *nc = xmalloc(sizeof(*nc) + cap);
                nc->used = 0;
                nc->cap = cap;
                if (c && cap != CHUNK_SIZE) { /* a big one: keep filling the current chunk */
                        nc->next = c->next;
                        c->next = nc;
                } else {
                        nc->next = c;
                        d->chunks = nc;
                }
                c = nc;
        }
        void *p = (char *)c->data + c->used;
        c->used += n;
        memset(p, 0, n);
        return p;
}

static char *arena_strndup(struct gql_doc *d, const char *s, size_t n)
{
        char *p = arena_alloc(d, n + 1);
        memcpy(p, s, n);
        return p;
}

struct gql_doc *gql_doc_free(struct gql_doc *doc)
{
        if (!doc)
                return NULL;
        for (struct chunk *c = doc->chunks, *next; c; c = next) {
                next = c->next;
                free(c);
        }
        free(doc);
        return NULL;
}

#define LIST_APPEND(head, tail, x)          \
        do {                                \
                if (tail)                   \
                        (tail)->next = (x); \
                else                        \
                        (head) = (x);       \
                (tail) = (x);               \
        } while (0)

/* ret = an arena array of the n nodes of the list at head. */
#define LIST_TO_ARRAY(doc, head, n, ret)                              \
        do {                                                          \
                size_t i_ = 0;                                        \
                (ret) = arena_alloc((doc), (n) * sizeof(*(ret)));     \
                for (__typeof__(head) x_ = (head); x_; x_ = x_->next) \
                        (ret)[i_++] = x_;                             \
        } while (0)

/* Errors ------------------------------------------------------------------ */

static int verr_at(struct tess_error **err, unsigned line, unsigned column, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));

static int verr_at(struct tess_error **err, unsigned line, unsigned column, const char *fmt, va_list ap)
{
        char *msg = xvasprintf(fmt, ap);
        int r = tess_err(err, EINVAL, "%u:%u: %s", line, column, msg);

        free(msg);
        return r;
}

/* Set *err to "LINE:COLUMN: message" (EINVAL). */
static int err_at(struct tess_error **err, unsigned line, unsigned column, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int err_at(struct tess_error **err, unsigned line, unsigned column, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = verr_at(err, line, column, fmt, ap);
        va_end(ap);
        return r;
}

/* How many of the first n bytes of s are printable ASCII but '"', at most
 * max: the part of the source an error message may quote (in quotes) and
 * stay valid UTF-8. */
static int printable_len(const char *s, size_t n, size_t max)
{
        size_t i = 0;

        while (i < n && i < max && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"')
                i++;
        return (int)i;
}

/* The source ---------------------------------------------------------------- */

/* Line and column (1-based, in characters) of s[off]. */
static void position_of(const char *s, size_t off, unsigned *ret_line, unsigned *ret_column)
{
        unsigned line = 1, column = 1;

        for (size_t i = 0; i < off; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '\r' || (c == '\n' && !(i > 0 && s[i - 1] == '\r'))) {
                        line++;
                        column = 1;
                } else if (c != '\n' && (c & 0xc0) != 0x80) {
                        column++;
                }
        }
        *ret_line = line;
        *ret_column = column;
}

static int check_source(const char *s, size_t len, struct tess_error **err)
{
        unsigned line, column;

        if (len > GQL_DOC_MAX)
                return tess_err(err, EINVAL, "the document is longer than %d bytes", GQL_DOC_MAX);
        for (size_t i = 0; i < len;) {
                size_t n = s[i] ? utf8_seq_len((const unsigned char *)s + i, len - i) : 0;
                if (n == 0) {
                        position_of(s, i, &line, &column);
                        return err_at(err, line, column, s[i] ? "invalid UTF-8" : "unexpected NUL byte");
                }
                i += n;
        }
        return 0;
}

/* The lexer (spec §2.1) ------------------------------------------------------ */

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

static bool is_digit(int c)
{
        return c >= '0' && c <= '9';
}

static bool is_name_start(int c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_name_char(int c)
{
        return is_name_start(c) || is_digit(c);
}

static int hex_value(int c)
{
        if (is_digit(c))
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* The byte i after the current one, or -1 past the end. */
static int peek(const struct parser *p, size_t i)
{
        return p->pos + i < p->len ? (unsigned char)p->s[p->pos + i] : -1;
}

/* Consume one byte, keeping line and column: CR LF, LF and CR end a line. */
static void eat(struct parser *p)
{
        unsigned char c = (unsigned char)p->s[p->pos++];

        if (c == '\r' || (c == '\n' && !(p->pos >= 2 && p->s[p->pos - 2] == '\r'))) {
                p->line++;
                p->column = 1;
        } else if (c != '\n' && (c & 0xc0) != 0x80) {
                p->column++;
        }
}

static void eat_n(struct parser *p, size_t n)
{
        while (n--)
                eat(p);
}

static int fail(struct parser *p, unsigned line, unsigned column, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(struct parser *p, unsigned line, unsigned column, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = verr_at(p->err, line, column, fmt, ap);
        va_end(ap);
        return r;
}

/* The character at s[pos] for a message: "x", or U+XXXX when not printable. */
static void char_desc(const struct parser *p, size_t pos, char *out, size_t n)
{
        const unsigned char *u = (const unsigned char *)p->s + pos;
        size_t len = utf8_seq_len(u, p->len - pos);
        unsigned cp = u[0];

        if (cp >= 0x21 && cp < 0x7f) {
                snprintf(out, n, "\"%c\"", cp);
                return;
        }
        if (len > 1) {
                cp &= 0xff >> (len + 1);
                for (size_t i = 1; i < len; i++)
                        cp = (cp << 6) | (u[i] & 0x3f);
        }
        snprintf(out, n, "U+%04X", cp);
}

static void skip_ignored(struct parser *p)
{
        for (;;) {
                int c = peek(p, 0);
                if (c == ' ' || c == '\t' || c == ',' || c == '\n' || c == '\r') {
                        eat(p);
                } else if (c == '#') {
                        while ((c = peek(p, 0)) >= 0 && c != '\n' && c != '\r')
                                eat(p);
                } else if (c == 0xef && peek(p, 1) == 0xbb && peek(p, 2) == 0xbf) {
                        eat_n(p, 3); /* U+FEFF, the byte order mark */
                } else {
                        return;
                }
        }
}

static int number_error(struct parser *p, size_t start, bool with_next, const char *why)
{
        size_t n = p->pos - start + (with_next && p->pos < p->len ? 1 : 0);
        int shown = printable_len(p->s + start, n, 40);

        return fail(p, p->tok.line, p->tok.column, "invalid number \"%.*s%s\": %s", shown, p->s + start,
                    (size_t)shown < n ? "..." : "", why);
}

/* IntValue and FloatValue, with the lookahead rule: no digit, "." or name
 * start may follow. */
static int lex_number(struct parser *p)
{
        size_t start = p->pos;
        bool is_float = false;
        int c;

        if (peek(p, 0) == '-')
                eat(p);
        c = peek(p, 0);
        if (c == '0') {
                eat(p);
                if (is_digit(peek(p, 0)))
                        return number_error(p, start, true, "unexpected digit after 0");
        } else if (is_digit(c)) {
                while (is_digit(peek(p, 0)))
                        eat(p);
        } else {
                return number_error(p, start, false, "expected a digit after \"-\"");
        }
        if (peek(p, 0) == '.') {
                eat(p);
                is_float = true;
                if (!is_digit(peek(p, 0)))
                        return number_error(p, start, false, "expected a digit after \".\"");
                while (is_digit(peek(p, 0)))
                        eat(p);
        }
        c = peek(p, 0);
        if (c == 'e' || c == 'E') {
                eat(p);
                is_float = true;
                c = peek(p, 0);
                if (c == '+' || c == '-')
                        eat(p);
                if (!is_digit(peek(p, 0)))
                        return number_error(p, start, false, "expected a digit in the exponent");
                while (is_digit(peek(p, 0)))
                        eat(p);
        }
        c = peek(p, 0);
        if (c == '.' || is_name_start(c)) {
                char why[64];
                snprintf(why, sizeof(why), "unexpected \"%c\" after a number", c);
                return number_error(p, start, true, why);
        }
        p->tok.kind = is_float ? TOK_FLOAT : TOK_INT;
        p->tok.len = p->pos - start;
        return 0;
}

static void put_utf8(struct buf *b, uint32_t cp)
{
        char u[4];

        if (cp < 0x80) {
                buf_putc(b, (char)cp);
        } else if (cp < 0x800) {
                u[0] = (char)(0xc0 | (cp >> 6));
                u[1] = (char)(0x80 | (cp & 0x3f));
                buf_append(b, u, 2);
        } else if (cp < 0x10000) {
                u[0] = (char)(0xe0 | (cp >> 12));
                u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                u[2] = (char)(0x80 | (cp & 0x3f));
                buf_append(b, u, 3);
        } else {
                u[0] = (char)(0xf0 | (cp >> 18));
                u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
                u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
                u[3] = (char)(0x80 | (cp & 0x3f));
                buf_append(b, u, 4);
        }
}

/* The 4 hexadecimal digits at peek(p, i), or -1. */
static long hex4(const struct parser *p, size_t i)
{
        long v = 0;

        for (size_t k = 0; k < 4; k++) {
                int h = hex_value(peek(p, i + k));
                if (h < 0)
                        return -1;
                v = v * 16 + h;
        }
        return v;
}

/* After "\u" (at esc, line:column): \u{X...} or \uXXXX, a surrogate pair
 * in the second form. */
static int lex_unicode_escape(struct parser *p, size_t esc, unsigned line, unsigned column)
{
        uint32_t cp = 0;

        if (peek(p, 0) == '{') {
                size_t digits = 0;
                int h;
                eat(p);
                while ((h = hex_value(peek(p, 0))) >= 0 && cp <= 0x10ffff) {
                        cp = cp * 16 + (uint32_t)h;
                        digits++;
                        eat(p);
                }
                if (digits == 0 || peek(p, 0) != '}' || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                        size_t n = p->pos - esc + (p->pos < p->len ? 1 : 0);
                        return fail(p, line, column, "invalid Unicode escape \"%.*s\": %s",
                                    printable_len(p->s + esc, n, 24), p->s + esc,
                                    digits == 0 || (peek(p, 0) != '}' && cp <= 0x10ffff)
                                            ? "expected hexadecimal digits and \"}\""
                                            : "not a Unicode scalar value");
                }
                eat(p);
        } else {
                long v = hex4(p, 0);
                if (v < 0)
                        return fail(p, line, column, "invalid Unicode escape \"%.*s\": expected 4 hexadecimal digits",
                                    printable_len(p->s + esc, p->len - esc, 6), p->s + esc);
                eat_n(p, 4);
                cp = (uint32_t)v;
                if (cp >= 0xd800 && cp <= 0xdbff) {
                        long lo = peek(p, 0) == '\\' && peek(p, 1) == 'u' ? hex4(p, 2) : -1;
                        if (lo < 0xdc00 || lo > 0xdfff)
                                return fail(p, line, column,
                                            "invalid Unicode escape \"\\u%04X\": a leading surrogate without a "
                                            "trailing one",
                                            cp);
                        eat_n(p, 6);
                        cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
                } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                        return fail(p, line, column,
                                    "invalid Unicode escape \"\\u%04X\": a trailing surrogate without a leading one",
                                    cp);
                }
        }
        if (cp == 0)
                return fail(p, line, column, "invalid Unicode escape: U+0000 is not allowed in a string");
        put_utf8(&p->sbuf, cp);
        return 0;
}

/* \X in a string: X in escapes stands for the byte at its place in escaped. */
static const char escapes[] = "\"\\/bfnrt", escaped[] = "\"\\/\b\f\n\r\t";

static int lex_string(struct parser *p)
{
        eat(p); /* " */
        buf_reset(&p->sbuf);
        for (;;) {
                int c = peek(p, 0);
                if (c < 0 || c == '\n' || c == '\r')
                        return fail(p, p->tok.line, p->tok.column, "unterminated string");
                if (c == '"') {
                        eat(p);
                        break;
                }
                if (c != '\\') {
                        buf_putc(&p->sbuf, (char)c);
                        eat(p);
                        continue;
                }
                size_t esc = p->pos;
                unsigned line = p->line, column = p->column;
                eat(p);
                c = peek(p, 0);
                const char *e = c > 0 ? strchr(escapes, c) : NULL;
                if (e) {
                        buf_putc(&p->sbuf, escaped[e - escapes]);
                        eat(p);
                        continue;
                }
                if (c == 'u') {
                        eat(p);
                        int r = lex_unicode_escape(p, esc, line, column);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (c < 0)
                        return fail(p, p->tok.line, p->tok.column, "unterminated string");
                if (c >= 0x21 && c < 0x7f)
                        return fail(p, line, column, "invalid escape sequence \"\\%c\"", c);
                char what[16];
                char_desc(p, p->pos, what, sizeof(what));
                return fail(p, line, column, "invalid escape sequence: \"\\\" before %s", what);
        }
        p->tok.kind = TOK_STRING;
        p->tok.value_len = p->sbuf.len;
        p->tok.value = arena_strndup(p->doc, p->sbuf.data, p->sbuf.len);
        return 0;
}

static bool is_blank_line(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (s[i] != ' ' && s[i] != '\t')
                        return false;
        return true;
}

/* BlockStringValue(raw) (spec §2.9.4): common indentation and blank first
 * and last lines removed, lines joined with LF. */
static char *block_string_value(struct gql_doc *doc, const char *raw, size_t n, size_t *ret_len)
{
        struct span {
                size_t off, len;
        } * lines;
        size_t n_lines = 1, common = SIZE_MAX, first = 0, last, k = 0;
        struct buf out = BUF_INIT;

        for (size_t i = 0; i < n; i++)
                if (raw[i] == '\n' || (raw[i] == '\r' && !(i + 1 < n && raw[i + 1] == '\n')))
                        n_lines++;
        lines = xmalloc(n_lines * sizeof(*lines));
        for (size_t i = 0, start = 0; i <= n; i++) {
                if (i < n && raw[i] != '\n' && raw[i] != '\r')
                        continue;
                lines[k++] = (struct span){ start, i - start };
                if (i < n && raw[i] == '\r' && i + 1 < n && raw[i + 1] == '\n')
                        i++;
                start = i + 1;
        }
        for (size_t i = 1; i < n_lines; i++) {
                size_t indent = 0;
                while (indent < lines[i].len &&
                       (raw[lines[i].off + indent] == ' ' || raw[lines[i].off + indent] == '\t'))
                        indent++;
                if (indent < lines[i].len && indent < common)
                        common = indent;
        }
        if (common != SIZE_MAX) {
                for (size_t i = 1; i < n_lines; i++) {
                        size_t cut = common < lines[i].len ? common : lines[i].len;
                        lines[i].off += cut;
                        lines[i].len -= cut;
                }
        }
        while (first < n_lines && is_blank_line(raw + lines[first].off, lines[first].len))
                first++;
        last = n_lines;
        while (last > first && is_blank_line(raw + lines[last - 1].off, lines[last - 1].len))
                last--;
        for (size_t i = first; i < last; i++) {
                if (i > first)
                        buf_putc(&out, '\n');
                buf_append(&out, raw + lines[i].off, lines[i].len);
        }
        free(lines);
        char *v = arena_strndup(doc, out.data, out.len);
        *ret_len = out.len;
        buf_release(&out);
        return v;
}

static int lex_block_string(struct parser *p)
{
        eat_n(p, 3);
        buf_reset(&p->sbuf);
        for (;;) {
                int c = peek(p, 0);
                if (c < 0)
                        return fail(p, p->tok.line, p->tok.column, "unterminated block string");
                if (c == '"' && peek(p, 1) == '"' && peek(p, 2) == '"') {
                        eat_n(p, 3);
                        break;
                }
                if (c == '\\' && peek(p, 1) == '"' && peek(p, 2) == '"' && peek(p, 3) == '"') {
                        buf_append(&p->sbuf, "\"\"\"", 3);
                        eat_n(p, 4);
                        continue;
                }
                buf_putc(&p->sbuf, (char)c);
                eat(p);
        }
        p->tok.kind = TOK_BLOCK_STRING;
        p->tok.value = block_string_value(p->doc, p->sbuf.data, p->sbuf.len, &p->tok.value_len);
        return 0;
}

/* Read the next token into p->tok. */
static int lex(struct parser *p)
{
        int c;

        skip_ignored(p);
        p->tok = (struct token){ .line = p->line, .column = p->column, .start = p->s + p->pos };
        c = peek(p, 0);
        if (c < 0) {
                p->tok.kind = TOK_EOF;
                return 0;
        }
        if (strchr("!$&():=@[]{|}", c)) {
                eat(p);
                p->tok.kind = TOK_PUNCT;
                p->tok.len = 1;
                return 0;
        }
        if (c == '.' && peek(p, 1) == '.' && peek(p, 2) == '.') {
                eat_n(p, 3);
                p->tok.kind = TOK_PUNCT;
                p->tok.len = 3;
                return 0;
        }
        if (is_name_start(c)) {
                while (is_name_char(peek(p, 0)))
                        eat(p);
                p->tok.kind = TOK_NAME;
                p->tok.len = (size_t)(p->s + p->pos - p->tok.start);
                return 0;
        }
        if (c == '-' || is_digit(c))
                return lex_number(p);
        if (c == '"')
                return peek(p, 1) == '"' && peek(p, 2) == '"' ? lex_block_string(p) : lex_string(p);
        char what[16];
        char_desc(p, p->pos, what, sizeof(what));
        return fail(p, p->line, p->column, "unexpected character %s", what);
}

/* The parser (spec §2.2-2.12) ---------------------------------------------- */

/* The current token for a message: "{", "name", a string, ... */
static void token_desc(const struct token *t, char *out, size_t n)
{
        int shown;

        switch (t->kind) {
        case TOK_EOF:
                snprintf(out, n, "the end of the document");
                return;
        case TOK_STRING:
                snprintf(out, n, "a string");
                return;
        case TOK_BLOCK_STRING:
                snprintf(out, n, "a block string");
                return;
        default:
                shown = t->len > 40 ? 37 : (int)t->len;
                snprintf(out, n, "\"%.*s%s\"", shown, t->start, (size_t)shown < t->len ? "..." : "");
        }
}

static int unexpected(struct parser *p, const char *expected)
{
        char found[64];

        token_desc(&p->tok, found, sizeof(found));
        return fail(p, p->tok.line, p->tok.column, "expected %s, found %s", expected, found);
}

static bool at_punct(const struct parser *p, char c)
{
        return p->tok.kind == TOK_PUNCT && p->tok.start[0] == c;
}

static bool at_name(const struct parser *p, const char *name)
{
        return p->tok.kind == TOK_NAME && p->tok.len == strlen(name) && memcmp(p->tok.start, name, p->tok.len) == 0;
}

static int expect_punct(struct parser *p, char c)
{
        char what[8];

        if (!at_punct(p, c)) {
                snprintf(what, sizeof(what), "\"%s\"", c == '.' ? "..." : (char[]){ c, 0 });
                return unexpected(p, what);
        }
        return lex(p);
}

static int parse_name(struct parser *p, const char **ret)
{
        if (p->tok.kind != TOK_NAME)
                return unexpected(p, "a name");
        *ret = arena_strndup(p->doc, p->tok.start, p->tok.len);
        return lex(p);
}

/* A zeroed node at the current token, counted against GQL_NODES_MAX. */
static void *new_node(struct parser *p, size_t size)
{
        if (++p->nodes > GQL_NODES_MAX) {
                fail(p, p->tok.line, p->tok.column, "the document has more than %d nodes", GQL_NODES_MAX);
                return NULL;
        }
        return arena_alloc(p->doc, size);
}

static int enter(struct parser *p)
{
        if (++p->depth > GQL_DEPTH_MAX)
                return fail(p, p->tok.line, p->tok.column, "nested more than %d levels deep", GQL_DEPTH_MAX);
        return 0;
}

/* The index of the later of two equal names, or -1; frees names. */
static ssize_t duplicate_name(const char **names, size_t n)
{
        struct strmap seen;
        ssize_t dup = -1;

        if (n <= 16) {
                for (size_t i = 1; i < n; i++)
                        for (size_t j = 0; j < i; j++)
                                if (streq(names[i], names[j])) {
                                        free(names);
                                        return (ssize_t)i;
                                }
                free(names);
                return -1;
        }
        strmap_init(&seen);
        for (size_t i = 0; i < n && dup < 0; i++) {
                if (strmap_get(&seen, names[i]) >= 0)
                        dup = (ssize_t)i;
                strmap_put(&seen, names[i], 0);
        }
        strmap_free(&seen);
        free(names);
        return dup;
}

static int parse_value(struct parser *p, bool constant, struct value **ret);

/* Name : Value, for arguments and object fields; ends at `close`. */
static int parse_arg_list(struct parser *p, bool constant, char close, struct arg ***ret, size_t *ret_n)
{
        struct arg *head = NULL, *tail = NULL;
        size_t n = 0;
        int r;

        do {
                struct arg *a = new_node(p, sizeof(*a));
                if (!a)
                        return -EINVAL;
                a->line = p->tok.line;
                a->column = p->tok.column;
                if ((r = parse_name(p, &a->name)) < 0 || (r = expect_punct(p, ':')) < 0 ||
                    (r = parse_value(p, constant, &a->value)) < 0)
                        return r;
                LIST_APPEND(head, tail, a);
                n++;
        } while (!at_punct(p, close));
        LIST_TO_ARRAY(p->doc, head, n, *ret);
        *ret_n = n;
        const char **names = xmalloc((n + 1) * sizeof(*names));
        for (size_t i = 0; i < n; i++)
                names[i] = (*ret)[i]->name;
        ssize_t k = duplicate_name(names, n);
        if (k >= 0) {
                const struct arg *dup = (*ret)[k];
                return fail(p, dup->line, dup->column,
                            close == ')' ? "argument \"%s\" is given twice"
                                         : "field \"%s\" is given twice in an object",
                            dup->name);
        }
        return lex(p);
}

static int parse_value(struct parser *p, bool constant, struct value **ret)
{
        struct value *v = new_node(p, sizeof(*v));
        json_error_t jerr;
        int r;

        if (!v)
                return -EINVAL;
        v->line = p->tok.line;
        v->column = p->tok.column;
        *ret = v;
        switch (p->tok.kind) {
        case TOK_PUNCT:
                if (at_punct(p, '$') && !constant) {
                        v->kind = VAL_VARIABLE;
                        if ((r = lex(p)) < 0)
                                return r;
                        return parse_name(p, &v->text);
                }
                if (at_punct(p, '[')) {
                        struct value *head = NULL, *tail = NULL;
                        v->kind = VAL_LIST;
                        if ((r = enter(p)) < 0 || (r = lex(p)) < 0)
                                return r;
                        while (!at_punct(p, ']')) {
                                struct value *item = NULL;
                                if ((r = parse_value(p, constant, &item)) < 0)
                                        return r;
                                LIST_APPEND(head, tail, item);
                                v->n++;
                        }
                        LIST_TO_ARRAY(p->doc, head, v->n, v->items);
                        p->depth--;
                        return lex(p);
                }
                if (at_punct(p, '{')) {
                        v->kind = VAL_OBJECT;
                        if ((r = enter(p)) < 0 || (r = lex(p)) < 0)
                                return r;
                        if (at_punct(p, '}')) {
                                p->depth--;
                                return lex(p);
                        }
                        if ((r = parse_arg_list(p, constant, '}', &v->fields, &v->n)) < 0)
                                return r;
                        p->depth--;
                        return 0;
                }
                break;
        case TOK_INT:
        case TOK_FLOAT: {
                /* The grammar of both is JSON's: let jansson convert them. */
                json_t *j = json_loadb(p->tok.start, p->tok.len, JSON_DECODE_ANY, &jerr);
                bool is_int = p->tok.kind == TOK_INT;
                if (!j || (is_int ? !json_is_integer(j) : !json_is_real(j))) {
                        json_decref(j);
                        int shown = p->tok.len > 40 ? 37 : (int)p->tok.len;
                        return fail(p, v->line, v->column, "%s \"%.*s%s\" is out of range",
                                    is_int ? "integer" : "float", shown, p->tok.start,
                                    (size_t)shown < p->tok.len ? "..." : "");
                }
                v->kind = is_int ? VAL_INT : VAL_FLOAT;
                if (is_int)
                        v->i = json_integer_value(j);
                else
                        v->f = json_real_value(j);
                json_decref(j);
                v->text = arena_strndup(p->doc, p->tok.start, p->tok.len);
                return lex(p);
        }
        case TOK_STRING:
        case TOK_BLOCK_STRING:
                v->kind = VAL_STRING;
                v->text = p->tok.value;
                v->len = p->tok.value_len;
                return lex(p);
        case TOK_NAME:
                if (at_name(p, "true") || at_name(p, "false")) {
                        v->kind = VAL_BOOLEAN;
                        v->b = at_name(p, "true");
                } else {
                        v->kind = at_name(p, "null") ? VAL_NULL : VAL_ENUM;
                }
                return parse_name(p, &v->text);
        default:
                break;
        }
        return unexpected(p, constant ? "a constant value" : "a value");
}

static int parse_args(struct parser *p, bool constant, struct arg ***ret, size_t *ret_n)
{
        int r;

        if (!at_punct(p, '('))
                return 0;
        if ((r = lex(p)) < 0)
                return r;
        return parse_arg_list(p, constant, ')', ret, ret_n);
}

static int parse_directives(struct parser *p, bool constant, struct directive ***ret, size_t *ret_n)
{
        struct directive *head = NULL, *tail = NULL;
        size_t n = 0;
        int r;

        while (at_punct(p, '@')) {
                struct directive *d = new_node(p, sizeof(*d));
                if (!d)
                        return -EINVAL;
                d->line = p->tok.line;
                d->column = p->tok.column;
                if ((r = lex(p)) < 0 || (r = parse_name(p, &d->name)) < 0 ||
                    (r = parse_args(p, constant, &d->args, &d->n_args)) < 0)
                        return r;
                LIST_APPEND(head, tail, d);
                n++;
        }
        LIST_TO_ARRAY(p->doc, head, n, *ret);
        *ret_n = n;
        return 0;
}

static int parse_selection_set(struct parser *p, struct gql_selection_set **ret);

/* "...": a fragment spread, or an inline fragment. */
static int parse_fragment_selection(struct parser *p, struct selection *s)
{
        int r;

        if ((r = lex(p)) < 0)
                return r;
        if (p->tok.kind == TOK_NAME && !at_name(p, "on")) {
                s->kind = SEL_SPREAD;
                if ((r = parse_name(p, &s->name)) < 0)
                        return r;
                return parse_directives(p, false, &s->dirs, &s->n_dirs);
        }
        s->kind = SEL_INLINE;
        if (at_name(p, "on") && ((r = lex(p)) < 0 || (r = parse_name(p, &s->type_cond)) < 0))
                return r;
        if ((r = parse_directives(p, false, &s->dirs, &s->n_dirs)) < 0)
                return r;
        return parse_selection_set(p, &s->set);
}

static int parse_selection(struct parser *p, struct selection **ret)
{
        struct selection *s;
        int r;

        if (!at_punct(p, '.') && p->tok.kind != TOK_NAME)
                return unexpected(p, "a field or \"...\"");
        s = new_node(p, sizeof(*s));
        if (!s)
                return -EINVAL;
        s->line = p->tok.line;
        s->column = p->tok.column;
        *ret = s;
        if (at_punct(p, '.'))
                return parse_fragment_selection(p, s);
        s->kind = SEL_FIELD;
        if ((r = parse_name(p, &s->name)) < 0)
                return r;
        if (at_punct(p, ':')) {
                s->alias = s->name;
                if ((r = lex(p)) < 0 || (r = parse_name(p, &s->name)) < 0)
                        return r;
        }
        if ((r = parse_args(p, false, &s->args, &s->n_args)) < 0 ||
            (r = parse_directives(p, false, &s->dirs, &s->n_dirs)) < 0)
                return r;
        if (at_punct(p, '{'))
                return parse_selection_set(p, &s->set);
        return 0;
}

static int parse_selection_set(struct parser *p, struct gql_selection_set **ret)
{
        struct gql_selection_set *set;
        struct selection *head = NULL, *tail = NULL;
        int r;

        if (!at_punct(p, '{'))
                return unexpected(p, "\"{\"");
        set = new_node(p, sizeof(*set));
        if (!set)
                return -EINVAL;
        set->line = p->tok.line;
        set->column = p->tok.column;
        if ((r = enter(p)) < 0 || (r = lex(p)) < 0)
                return r;
        do {
                struct selection *s = NULL;
                if ((r = parse_selection(p, &s)) < 0)
                        return r;
                LIST_APPEND(head, tail, s);
                set->n++;
        } while (!at_punct(p, '}'));
        LIST_TO_ARRAY(p->doc, head, set->n, set->v);
        p->depth--;
        *ret = set;
        return lex(p);
}

static int parse_type(struct parser *p, struct type **ret)
{
        struct type *t = new_node(p, sizeof(*t));
        int r;

        if (!t)
                return -EINVAL;
        if (at_punct(p, '[')) {
                t->kind = TYPE_LIST;
                if ((r = enter(p)) < 0 || (r = lex(p)) < 0 || (r = parse_type(p, &t->of)) < 0 ||
                    (r = expect_punct(p, ']')) < 0)
                        return r;
                p->depth--;
        } else if (p->tok.kind == TOK_NAME) {
                t->kind = TYPE_NAMED;
                if ((r = parse_name(p, &t->name)) < 0)
                        return r;
        } else {
                return unexpected(p, "a type");
        }
        if (at_punct(p, '!')) {
                struct type *nn = new_node(p, sizeof(*nn));
                if (!nn)
                        return -EINVAL;
                nn->kind = TYPE_NON_NULL;
                nn->of = t;
                t = nn;
                if ((r = lex(p)) < 0)
                        return r;
        }
        *ret = t;
        return 0;
}

static int parse_variable_definitions(struct parser *p, struct gql_operation *op)
{
        struct vardef *head = NULL, *tail = NULL;
        int r;

        if (!at_punct(p, '('))
                return 0;
        if ((r = lex(p)) < 0)
                return r;
        do {
                struct vardef *d = new_node(p, sizeof(*d));
                if (!d)
                        return -EINVAL;
                d->line = p->tok.line;
                d->column = p->tok.column;
                if (!at_punct(p, '$'))
                        return unexpected(p, "a variable");
                if ((r = lex(p)) < 0 || (r = parse_name(p, &d->name)) < 0 || (r = expect_punct(p, ':')) < 0 ||
                    (r = parse_type(p, &d->type)) < 0)
                        return r;
                if (at_punct(p, '=') && ((r = lex(p)) < 0 || (r = parse_value(p, true, &d->def)) < 0))
                        return r;
                if ((r = parse_directives(p, true, &d->dirs, &d->n_dirs)) < 0)
                        return r;
                LIST_APPEND(head, tail, d);
                op->n_vars++;
        } while (!at_punct(p, ')'));
        LIST_TO_ARRAY(p->doc, head, op->n_vars, op->vars);
        const char **names = xmalloc((op->n_vars + 1) * sizeof(*names));
        for (size_t i = 0; i < op->n_vars; i++)
                names[i] = op->vars[i]->name;
        ssize_t k = duplicate_name(names, op->n_vars);
        if (k >= 0)
                return fail(p, op->vars[k]->line, op->vars[k]->column, "variable \"$%s\" is defined twice",
                            op->vars[k]->name);
        return lex(p);
}

static int parse_operation(struct parser *p, struct gql_operation *op)
{
        int r;

        op->type = GQL_QUERY;
        if (at_punct(p, '{'))
                return parse_selection_set(p, &op->set);
        if (at_name(p, "mutation"))
                op->type = GQL_MUTATION;
        else if (at_name(p, "subscription"))
                op->type = GQL_SUBSCRIPTION;
        if ((r = lex(p)) < 0)
                return r;
        if (p->tok.kind == TOK_NAME && (r = parse_name(p, &op->name)) < 0)
                return r;
        if ((r = parse_variable_definitions(p, op)) < 0 || (r = parse_directives(p, false, &op->dirs, &op->n_dirs)) < 0)
                return r;
        return parse_selection_set(p, &op->set);
}

static int parse_fragment(struct parser *p, struct fragment *f)
{
        int r;

        if ((r = lex(p)) < 0)
                return r;
        if (p->tok.kind != TOK_NAME || at_name(p, "on"))
                return unexpected(p, "a fragment name");
        if ((r = parse_name(p, &f->name)) < 0)
                return r;
        if (!at_name(p, "on"))
                return unexpected(p, "\"on\"");
        if ((r = lex(p)) < 0 || (r = parse_name(p, &f->type_cond)) < 0 ||
            (r = parse_directives(p, false, &f->dirs, &f->n_dirs)) < 0)
                return r;
        return parse_selection_set(p, &f->set);
}

static const char *const type_system_keywords[] = {
        "schema", "scalar", "type", "interface", "union", "enum", "input", "directive", "extend",
};

#define DEFINITION_EXPECTED "\"query\", \"mutation\", \"subscription\", \"fragment\" or \"{\""

static int parse_document(struct parser *p)
{
        struct gql_operation *ops = NULL, *ops_tail = NULL;
        struct fragment *frags = NULL, *frags_tail = NULL;
        size_t n_defs = 0;
        int r;

        if ((r = lex(p)) < 0)
                return r;
        do {
                unsigned line = p->tok.line, column = p->tok.column;
                if (at_punct(p, '{') || at_name(p, "query") || at_name(p, "mutation") || at_name(p, "subscription")) {
                        struct gql_operation *op = new_node(p, sizeof(*op));
                        if (!op)
                                return -EINVAL;
                        if (p->doc->n_ops == GQL_OPERATIONS_MAX)
                                return fail(p, line, column, "the document has more than %d operations",
                                            GQL_OPERATIONS_MAX);
                        op->line = line;
                        op->column = column;
                        op->def_index = n_defs++;
                        if ((r = parse_operation(p, op)) < 0)
                                return r;
                        LIST_APPEND(ops, ops_tail, op);
                        p->doc->n_ops++;
                        continue;
                }
                if (at_name(p, "fragment")) {
                        struct fragment *f = new_node(p, sizeof(*f));
                        if (!f)
                                return -EINVAL;
                        f->line = line;
                        f->column = column;
                        f->def_index = n_defs++;
                        f->index = p->doc->n_frags;
                        if ((r = parse_fragment(p, f)) < 0)
                                return r;
                        LIST_APPEND(frags, frags_tail, f);
                        p->doc->n_frags++;
                        continue;
                }
                for (size_t i = 0; i < ARRAY_SIZE(type_system_keywords); i++)
                        if (at_name(p, type_system_keywords[i]))
                                return fail(p, line, column, "only executable definitions are supported, found \"%s\"",
                                            type_system_keywords[i]);
                if (p->tok.kind == TOK_STRING || p->tok.kind == TOK_BLOCK_STRING)
                        return fail(p, line, column, "only executable definitions are supported, found a description");
                return unexpected(p, DEFINITION_EXPECTED);
        } while (p->tok.kind != TOK_EOF);
        LIST_TO_ARRAY(p->doc, ops, p->doc->n_ops, p->doc->ops);
        LIST_TO_ARRAY(p->doc, frags, p->doc->n_frags, p->doc->frags);
        return 0;
}

/* Validation (spec §5, what execution needs) --------------------------------- */

enum {
        WHITE, /* not visited yet */
        GRAY,  /* on the stack of fragments being walked */
        BLACK, /* done: depth known */
};

struct validator {
        struct gql_doc *doc;
        struct tess_error **err;
        struct strmap frag_index;
        unsigned char *color;
        unsigned *depth;                                 /* of a BLACK fragment's selection set */
        const struct fragment *stack[GQL_DEPTH_MAX + 1]; /* the GRAY fragments */
        size_t n_stack;
};

static int too_deep(struct validator *v, unsigned line, unsigned column)
{
        return err_at(v->err, line, column, "selection sets nest more than %d levels deep (fragments included)",
                      GQL_DEPTH_MAX);
}

static int fragment_cycle(struct validator *v, const struct selection *spread, const struct fragment *f)
{
        struct buf path = BUF_INIT;
        size_t i = 0;
        int r;

        while (v->stack[i] != f)
                i++;
        for (; i < v->n_stack; i++)
                buf_printf(&path, "%.64s -> ", v->stack[i]->name);
        buf_printf(&path, "%.64s", f->name);
        r = err_at(v->err, spread->line, spread->column, "fragment \"%s\" spreads itself: %s", f->name, path.data);
        buf_release(&path);
        return r;
}

static int walk_set(struct validator *v, struct gql_selection_set *set, unsigned level, unsigned *ret_max);

/* Walk a fragment first reached from a selection set at level (0 for a
 * fragment no operation spreads), at line:column. */
static int walk_fragment(struct validator *v, struct fragment *f, unsigned level, unsigned line, unsigned column)
{
        unsigned max;
        int r;

        if (level + 1 > GQL_DEPTH_MAX)
                return too_deep(v, line, column);
        v->color[f->index] = GRAY;
        v->stack[v->n_stack++] = f;
        r = walk_set(v, f->set, level + 1, &max);
        if (r < 0)
                return r;
        v->n_stack--;
        v->color[f->index] = BLACK;
        v->depth[f->index] = max - level;
        return 0;
}

/* Resolve the spreads of set (at nesting level), find cycles, and set
 * *ret_max to the deepest level reached through fields and fragments. */
static int walk_set(struct validator *v, struct gql_selection_set *set, unsigned level, unsigned *ret_max)
{
        unsigned max = level, m;
        int r;

        for (size_t i = 0; i < set->n; i++) {
                struct selection *s = set->v[i];
                if (s->kind != SEL_SPREAD) {
                        if (!s->set)
                                continue;
                        if (level + 1 > GQL_DEPTH_MAX)
                                return too_deep(v, s->set->line, s->set->column);
                        if ((r = walk_set(v, s->set, level + 1, &m)) < 0)
                                return r;
                        max = m > max ? m : max;
                        continue;
                }
                int k = strmap_get(&v->frag_index, s->name);
                if (k < 0)
                        return err_at(v->err, s->line, s->column, "unknown fragment \"%s\"", s->name);
                s->frag = v->doc->frags[k];
                if (v->color[k] == GRAY)
                        return fragment_cycle(v, s, s->frag);
                if (v->color[k] == WHITE && (r = walk_fragment(v, s->frag, level, s->line, s->column)) < 0)
                        return r;
                if (level + v->depth[k] > GQL_DEPTH_MAX)
                        return too_deep(v, s->line, s->column);
                m = level + v->depth[k];
                max = m > max ? m : max;
        }
        *ret_max = max;
        return 0;
}

/* "All Variable Uses Defined" (spec §5.8.3).  Each definition's variable
 * uses and fragment spreads are gathered once, each name once, so checking
 * an operation costs what it and the fragments it reaches use, not their
 * size times the number of operations. */
struct uses {
        const struct value **vars; /* the first use of each variable */
        size_t n_vars;
        const struct fragment **spreads; /* each fragment spread, once */
        size_t n_spreads;
};

struct uses_builder {
        struct uses *u;
        struct strmap names;
        size_t *spread_mark; /* per fragment: mark+1 of the definition that spreads it */
        size_t mark;
};

static void uses_add_value(struct uses_builder *b, const struct value *v)
{
        if (v->kind == VAL_VARIABLE && strmap_get(&b->names, v->text) < 0) {
                strmap_put(&b->names, v->text, 0);
                b->u->vars = xrealloc(b->u->vars, (b->u->n_vars + 1) * sizeof(*b->u->vars));
                b->u->vars[b->u->n_vars++] = v;
        }
        for (size_t i = 0; v->kind == VAL_LIST && i < v->n; i++)
                uses_add_value(b, v->items[i]);
        for (size_t i = 0; v->kind == VAL_OBJECT && i < v->n; i++)
                uses_add_value(b, v->fields[i]->value);
}

static void uses_add_args(struct uses_builder *b, struct arg *const *args, size_t n)
{
        for (size_t i = 0; i < n; i++)
                uses_add_value(b, args[i]->value);
}

static void uses_add_dirs(struct uses_builder *b, struct directive *const *dirs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                uses_add_args(b, dirs[i]->args, dirs[i]->n_args);
}

static void uses_add_set(struct uses_builder *b, const struct gql_selection_set *set)
{
        for (size_t i = 0; i < set->n; i++) {
                const struct selection *s = set->v[i];
                uses_add_dirs(b, s->dirs, s->n_dirs);
                uses_add_args(b, s->args, s->n_args);
                if (s->kind == SEL_SPREAD && b->spread_mark[s->frag->index] != b->mark + 1) {
                        b->spread_mark[s->frag->index] = b->mark + 1;
                        b->u->spreads = xrealloc(b->u->spreads, (b->u->n_spreads + 1) * sizeof(*b->u->spreads));
                        b->u->spreads[b->u->n_spreads++] = s->frag;
                } else if (s->set) {
                        uses_add_set(b, s->set);
                }
        }
}

/* What the definition with these directives and set uses, into *u. */
static void uses_gather(struct uses_builder *b, struct uses *u, struct directive *const *dirs, size_t n_dirs,
                        const struct gql_selection_set *set)
{
        b->u = u;
        b->mark++;
        strmap_init(&b->names);
        uses_add_dirs(b, dirs, n_dirs);
        uses_add_set(b, set);
        strmap_free(&b->names);
}

static void uses_release(struct uses *u)
{
        free(u->vars);
        free(u->spreads);
}

static int check_uses(const struct gql_operation *op, const struct strmap *defined, const struct uses *u,
                      struct tess_error **err)
{
        for (size_t i = 0; i < u->n_vars; i++) {
                const struct value *v = u->vars[i];
                if (strmap_get(defined, v->text) >= 0)
                        continue;
                if (op->name)
                        return err_at(err, v->line, v->column, "variable \"$%s\" is not defined by operation \"%s\"",
                                      v->text, op->name);
                return err_at(err, v->line, v->column, "variable \"$%s\" is not defined by the operation", v->text);
        }
        return 0;
}

/* Check op against its own uses and those of every fragment it reaches;
 * seen and queue have room for every fragment. */
static int check_operation_vars(const struct gql_doc *doc, const struct gql_operation *op, const struct uses *frag_uses,
                                unsigned char *seen, const struct fragment **queue, struct tess_error **err)
{
        struct uses_builder b = { .spread_mark = NULL };
        struct uses own = { .vars = NULL };
        struct strmap defined;
        size_t head = 0, tail = 0;
        int r;

        b.spread_mark = xcalloc(doc->n_frags + 1, sizeof(*b.spread_mark));
        uses_gather(&b, &own, op->dirs, op->n_dirs, op->set);
        free(b.spread_mark);
        strmap_init(&defined);
        for (size_t i = 0; i < op->n_vars; i++)
                strmap_put(&defined, op->vars[i]->name, (int)i);
        memset(seen, 0, doc->n_frags + 1);
        r = check_uses(op, &defined, &own, err);
        for (const struct uses *u = &own; r >= 0 && u;) {
                for (size_t i = 0; i < u->n_spreads; i++) {
                        if (!seen[u->spreads[i]->index]) {
                                seen[u->spreads[i]->index] = 1;
                                queue[tail++] = u->spreads[i];
                        }
                }
                u = head < tail ? &frag_uses[queue[head++]->index] : NULL;
                if (u)
                        r = check_uses(op, &defined, u, err);
        }
        strmap_free(&defined);
        uses_release(&own);
        return r;
}

static int validate_variables(const struct gql_doc *doc, struct tess_error **err)
{
        struct uses *frag_uses = xcalloc(doc->n_frags + 1, sizeof(*frag_uses));
        struct uses_builder b = { .spread_mark = xcalloc(doc->n_frags + 1, sizeof(*b.spread_mark)) };
        unsigned char *seen = xmalloc(doc->n_frags + 1);
        const struct fragment **queue = xmalloc((doc->n_frags + 1) * sizeof(*queue));
        int r = 0;

        for (size_t i = 0; i < doc->n_frags; i++)
                uses_gather(&b, &frag_uses[i], doc->frags[i]->dirs, doc->frags[i]->n_dirs, doc->frags[i]->set);
        for (size_t i = 0; i < doc->n_ops && r >= 0; i++)
                r = check_operation_vars(doc, doc->ops[i], frag_uses, seen, queue, err);
        for (size_t i = 0; i < doc->n_frags; i++)
                uses_release(&frag_uses[i]);
        free(frag_uses);
        free(b.spread_mark);
        free(seen);
        free(queue);
        return r;
}

static int validate_names(struct validator *v)
{
        struct gql_doc *doc = v->doc;
        struct strmap ops;
        int r = 0;

        strmap_init(&ops);
        for (size_t i = 0; i < doc->n_ops && r >= 0; i++) {
                const struct gql_operation *op = doc->ops[i];
                if (!op->name && doc->n_ops > 1)
                        r = err_at(v->err, op->line, op->column,
                                   "an anonymous operation must be the only operation in the document");
                else if (op->name && strmap_get(&ops, op->name) >= 0)
                        r = err_at(v->err, op->line, op->column, "there are two operations named \"%s\"", op->name);
                else if (op->name)
                        strmap_put(&ops, op->name, (int)i);
        }
        strmap_free(&ops);
        for (size_t i = 0; i < doc->n_frags && r >= 0; i++) {
                const struct fragment *f = doc->frags[i];
                if (strmap_get(&v->frag_index, f->name) >= 0)
                        r = err_at(v->err, f->line, f->column, "there are two fragments named \"%s\"", f->name);
                else
                        strmap_put(&v->frag_index, f->name, (int)i);
        }
        return r;
}

static int validate(struct gql_doc *doc, struct tess_error **err)
{
        struct validator v = { .doc = doc, .err = err };
        unsigned max;
        int r;

        strmap_init(&v.frag_index);
        v.color = xcalloc(doc->n_frags + 1, 1);
        v.depth = xcalloc(doc->n_frags + 1, sizeof(*v.depth));
        r = validate_names(&v);
        for (size_t i = 0; i < doc->n_ops && r >= 0; i++)
                r = walk_set(&v, doc->ops[i]->set, 1, &max);
        for (size_t i = 0; i < doc->n_frags && r >= 0; i++)
                if (v.color[i] == WHITE)
                        r = walk_fragment(&v, doc->frags[i], 0, doc->frags[i]->line, doc->frags[i]->column);
        if (r >= 0)
                r = validate_variables(doc, err);
        strmap_free(&v.frag_index);
        free(v.color);
        free(v.depth);
        return r;
}

int gql_parse(const char *text, size_t len, struct gql_doc **ret_doc, struct tess_error **err)
{
        struct parser p = { .s = text, .len = len, .line = 1, .column = 1, .sbuf = BUF_INIT, .err = err };
        int r;

        r = check_source(text, len, err);
        if (r < 0)
                return r;
        p.doc = xcalloc(1, sizeof(*p.doc));
        r = parse_document(&p);
        buf_release(&p.sbuf);
        if (r >= 0)
                r = validate(p.doc, err);
        if (r < 0) {
                gql_doc_free(p.doc);
                return r;
        }
        *ret_doc = p.doc;
        return 0;
}

/* Operations ------------------------------------------------------------------ */

int gql_doc_operation(const struct gql_doc *doc, const char *name, const struct gql_operation **ret_op,
                      struct tess_error **err)
{
        if (!name) {
                if (doc->n_ops == 0)
                        return tess_err(err, EINVAL, "the document has no operation");
                if (doc->n_ops > 1)
                        return tess_err(err, EINVAL,
                                        "operationName is required when the document has several operations");
                *ret_op = doc->ops[0];
                return 0;
        }
        for (size_t i = 0; i < doc->n_ops; i++) {
                if (doc->ops[i]->name && streq(doc->ops[i]->name, name)) {
                        *ret_op = doc->ops[i];
                        return 0;
                }
        }
        return tess_err(err, EINVAL, "the document has no operation named \"%.64s\"", name);
}

size_t gql_doc_n_operations(const struct gql_doc *doc)
{
        return doc->n_ops;
}

const struct gql_operation *gql_doc_operation_at(const struct gql_doc *doc, size_t i)
{
        return i < doc->n_ops ? doc->ops[i] : NULL;
}

const char *gql_operation_name(const struct gql_operation *op)
{
        return op->name;
}

enum gql_op_type gql_operation_type(const struct gql_operation *op)
{
        return op->type;
}

const struct gql_selection_set *gql_operation_selection(const struct gql_operation *op)
{
        return op->set;
}

const char *gql_op_type_to_string(enum gql_op_type t)
{
        switch (t) {
        case GQL_QUERY:
                return "query";
        case GQL_MUTATION:
                return "mutation";
        case GQL_SUBSCRIPTION:
                return "subscription";
        }
        return NULL;
}

/* Values as JSON --------------------------------------------------------------- */

/* jansson returns NULL only when out of memory here: abort, as xmalloc. */
static json_t *jnew(json_t *j)
{
        if (!j) {
                fputs("fatal: out of memory\n", stderr);
                abort();
        }
        return j;
}

/* The JSON of a value, NULL for a variable absent from vars. */
static json_t *value_json(const struct value *v, const json_t *vars)
{
        json_t *j;

        switch (v->kind) {
        case VAL_VARIABLE:
                j = vars ? json_object_get(vars, v->text) : NULL;
                return j ? json_incref(j) : NULL;
        case VAL_INT:
                return jnew(json_integer(v->i));
        case VAL_FLOAT:
                return jnew(json_real(v->f));
        case VAL_STRING:
                return jnew(json_stringn(v->text, v->len));
        case VAL_BOOLEAN:
                return json_boolean(v->b);
        case VAL_NULL:
                return json_null();
        case VAL_ENUM:
                return jnew(json_string(v->text));
        case VAL_LIST:
                j = jnew(json_array());
                for (size_t i = 0; i < v->n; i++) {
                        json_t *item = value_json(v->items[i], vars);
                        json_array_append_new(j, item ? item : json_null());
                }
                return j;
        case VAL_OBJECT:
                j = jnew(json_object());
                for (size_t i = 0; i < v->n; i++) {
                        json_t *item = value_json(v->fields[i]->value, vars);
                        if (item)
                                json_object_set_new(j, v->fields[i]->name, item);
                }
                return j;
        }
        return json_null();
}

static json_t *args_json(struct arg *const *args, size_t n, const json_t *vars)
{
        json_t *o = jnew(json_object());

        for (size_t i = 0; i < n; i++) {
                json_t *v = value_json(args[i]->value, vars);
                if (v)
                        json_object_set_new(o, args[i]->name, v);
        }
        return o;
}

/* Variables (spec §6.1.2) ----------------------------------------------------- */

static void type_print(struct buf *b, const struct type *t)
{
        switch (t->kind) {
        case TYPE_NAMED:
                buf_puts(b, t->name);
                break;
        case TYPE_LIST:
                buf_putc(b, '[');
                type_print(b, t->of);
                buf_putc(b, ']');
                break;
        case TYPE_NON_NULL:
                type_print(b, t->of);
                buf_putc(b, '!');
                break;
        }
}

static const char *json_desc(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "a list";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
        case JSON_REAL:
                return "a number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a Boolean";
        case JSON_NULL:
                break;
        }
        return "null";
}

static int coerce_scalar(const char *type, const json_t *v, json_t **ret, struct tess_error **err)
{
        if (streq(type, "Int")) {
                if (json_is_real(v)) { /* 2.0 is 2, as JSON does not tell them apart */
                        double d = json_real_value(v);
                        if (!(d >= INT32_MIN && d <= INT32_MAX && d == (double)(int32_t)d))
                                return tess_err(err, EINVAL, "expected an Int, found %g", d);
                        *ret = jnew(json_integer((json_int_t)d));
                        return 0;
                }
                if (!json_is_integer(v))
                        return tess_err(err, EINVAL, "expected an Int, found %s", json_desc(v));
                if (json_integer_value(v) < INT32_MIN || json_integer_value(v) > INT32_MAX)
                        return tess_err(err, EINVAL, "expected an Int, found %" JSON_INTEGER_FORMAT " (Int is 32 bits)",
                                        json_integer_value(v));
        } else if (streq(type, "Float")) {
                if (!json_is_number(v))
                        return tess_err(err, EINVAL, "expected a Float, found %s", json_desc(v));
                *ret = jnew(json_real(json_number_value(v)));
                return 0;
        } else if (streq(type, "String")) {
                if (!json_is_string(v))
                        return tess_err(err, EINVAL, "expected a String, found %s", json_desc(v));
        } else if (streq(type, "Boolean")) {
                if (!json_is_boolean(v))
                        return tess_err(err, EINVAL, "expected a Boolean, found %s", json_desc(v));
        } else if (streq(type, "ID")) {
                if (json_is_integer(v)) {
                        *ret = jnew(json_sprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v)));
                        return 0;
                }
                if (!json_is_string(v))
                        return tess_err(err, EINVAL, "expected an ID (a string or an integer), found %s", json_desc(v));
        }
        *ret = json_incref((json_t *)v);
        return 0;
}

static int coerce_value(const struct type *t, const json_t *v, json_t **ret, struct tess_error **err)
{
        json_t *list, *item;
        int r;

        if (t->kind == TYPE_NON_NULL) {
                if (json_is_null(v))
                        return tess_err(err, EINVAL, "expected a value, found null");
                return coerce_value(t->of, v, ret, err);
        }
        if (json_is_null(v)) {
                *ret = json_null();
                return 0;
        }
        if (t->kind == TYPE_NAMED)
                return coerce_scalar(t->name, v, ret, err);
        list = jnew(json_array());
        if (!json_is_array(v)) { /* a single value is a list of one */
                if ((r = coerce_value(t->of, v, &item, err)) < 0) {
                        json_decref(list);
                        return r;
                }
                json_array_append_new(list, item);
                *ret = list;
                return 0;
        }
        for (size_t i = 0; i < json_array_size(v); i++) {
                if ((r = coerce_value(t->of, json_array_get(v, i), &item, err)) < 0) {
                        json_decref(list);
                        return tess_err_wrap(err, "element %zu", i);
                }
                json_array_append_new(list, item);
        }
        *ret = list;
        return 0;
}

int gql_coerce_variables(const struct gql_operation *op, const json_t *given, json_t **ret_vars,
                         struct tess_error **err)
{
        json_t *out;

        if (given && !json_is_object(given))
                return tess_err(err, EINVAL, "variables must be a JSON object, found %s", json_desc(given));
        out = jnew(json_object());
        for (size_t i = 0; i < op->n_vars; i++) {
                const struct vardef *d = op->vars[i];
                const json_t *v = given ? json_object_get(given, d->name) : NULL;
                json_t *def = NULL, *c = NULL;
                bool from_default = !v;
                struct buf type = BUF_INIT;
                int r;

                if (!v && !d->def && d->type->kind != TYPE_NON_NULL)
                        continue;
                type_print(&type, d->type);
                if (!v && !d->def) {
                        r = err_at(err, d->line, d->column, "variable \"$%s\" of required type \"%s\" was not provided",
                                   d->name, type.data);
                } else {
                        if (!v)
                                v = def = value_json(d->def, NULL);
                        r = coerce_value(d->type, v, &c, err);
                        json_decref(def);
                        if (r < 0)
                                r = tess_err_wrap(err, "%u:%u: variable \"$%s\" of type \"%s\"%s", d->line, d->column,
                                                  d->name, type.data,
                                                  from_default ? " has a default value that does not fit" : "");
                }
                buf_release(&type);
                if (r < 0) {
                        json_decref(out);
                        return r;
                }
                json_object_set_new(out, d->name, c);
        }
        *ret_vars = out;
        return 0;
}

/* CollectFields (spec §6.3.2) ---------------------------------------------------- */

struct group {
        const struct selection *first;
        json_t *args;
        const struct gql_selection_set **sets;
        size_t n_sets, cap_sets;
};

struct collector {
        const char *type_name;
        const char *const *also_types;
        const json_t *vars;
        struct group *groups;
        size_t n, cap;
        struct strmap keys; /* response key -> group */
        unsigned char *visited;
        struct tess_error **err;
};

static bool type_applies(const struct collector *c, const char *type_cond)
{
        if (!type_cond || streq(type_cond, c->type_name))
                return true;
        for (const char *const *t = c->also_types; t && *t; t++)
                if (streq(type_cond, *t))
                        return true;
        return false;
}

/* Whether @skip and @include let a selection in. */
static int included(const struct collector *c, struct directive *const *dirs, size_t n, bool *ret)
{
        *ret = true;
        for (size_t i = 0; i < n; i++) {
                const struct directive *d = dirs[i];
                const struct value *v = NULL;
                const json_t *j;
                bool skip = streq(d->name, "skip");
                if (!skip && !streq(d->name, "include"))
                        continue;
                for (size_t k = 0; k < d->n_args; k++)
                        if (streq(d->args[k]->name, "if"))
                                v = d->args[k]->value;
                if (!v)
                        return err_at(c->err, d->line, d->column, "@%s needs the argument \"if\"", d->name);
                if (v->kind == VAL_BOOLEAN) {
                        if (v->b == skip)
                                *ret = false;
                        continue;
                }
                j = v->kind == VAL_VARIABLE && c->vars ? json_object_get(c->vars, v->text) : NULL;
                if (!json_is_boolean(j))
                        return err_at(c->err, v->line, v->column, "@%s(if:) must be a Boolean", d->name);
                if (json_is_true(j) == skip)
                        *ret = false;
        }
        return 0;
}

static void group_add_set(struct group *g, const struct gql_selection_set *set)
{
        if (g->n_sets == g->cap_sets) {
                g->cap_sets = g->cap_sets ? 2 * g->cap_sets : 2;
                g->sets = xrealloc(g->sets, g->cap_sets * sizeof(*g->sets));
        }
        g->sets[g->n_sets++] = set;
}

static int add_field(struct collector *c, const struct selection *s)
{
        const char *key = s->alias ? s->alias : s->name;
        json_t *args = args_json(s->args, s->n_args, c->vars);
        int k = strmap_get(&c->keys, key);
        struct group *g;
        int r = 0;

        if (k < 0) {
                if (c->n == c->cap) {
                        c->cap = c->cap ? 2 * c->cap : 8;
                        c->groups = xrealloc(c->groups, c->cap * sizeof(*c->groups));
                }
                g = &c->groups[c->n];
                *g = (struct group){ .first = s, .args = args };
                if (s->set)
                        group_add_set(g, s->set);
                strmap_put(&c->keys, key, (int)c->n++);
                return 0;
        }
        g = &c->groups[k];
        if (!streq(g->first->name, s->name))
                r = err_at(c->err, s->line, s->column, "fields \"%s\" conflict: \"%s\" and \"%s\" are different fields",
                           key, g->first->name, s->name);
        else if (!json_equal(g->args, args))
                r = err_at(c->err, s->line, s->column, "fields \"%s\" conflict: they have different arguments", key);
        else if (!g->first->set != !s->set)
                r = err_at(c->err, s->line, s->column,
                           "fields \"%s\" conflict: one has a selection set and the other not", key);
        else if (s->set)
                group_add_set(g, s->set);
        json_decref(args);
        return r;
}

static int collect_set(struct collector *c, const struct gql_selection_set *set)
{
        int r = 0;

        for (size_t i = 0; i < set->n && r >= 0; i++) {
                const struct selection *s = set->v[i];
                bool in;
                if ((r = included(c, s->dirs, s->n_dirs, &in)) < 0 || !in)
                        continue;
                switch (s->kind) {
                case SEL_FIELD:
                        r = add_field(c, s);
                        break;
                case SEL_SPREAD:
                        if (c->visited[s->frag->index])
                                break;
                        c->visited[s->frag->index] = 1;
                        if (type_applies(c, s->frag->type_cond))
                                r = collect_set(c, s->frag->set);
                        break;
                case SEL_INLINE:
                        if (type_applies(c, s->type_cond))
                                r = collect_set(c, s->set);
                        break;
                }
        }
        return r;
}

int gql_collect_fields(const struct gql_doc *doc, const struct gql_selection_set *set, const char *type_name,
                       const char *const *also_types, const json_t *vars, struct gql_fields *ret,
                       struct tess_error **err)
{
        struct collector c = { .type_name = type_name, .also_types = also_types, .vars = vars, .err = err };
        struct gql_fields out = GQL_FIELDS_INIT;
        int r;

        strmap_init(&c.keys);
        c.visited = xcalloc(doc->n_frags + 1, 1);
        r = collect_set(&c, set);
        if (r >= 0) {
                out.v = xcalloc(c.n + 1, sizeof(*out.v));
                out.merged = xcalloc(c.n + 1, sizeof(*out.merged));
        }
        for (size_t i = 0; i < c.n; i++) {
                struct group *g = &c.groups[i];
                if (r < 0) {
                        json_decref(g->args);
                        free(g->sets);
                        continue;
                }
                struct gql_field *f = &out.v[out.n++];
                *f = (struct gql_field){ .key = g->first->alias ? g->first->alias : g->first->name,
                                         .name = g->first->name,
                                         .args = g->args,
                                         .line = g->first->line,
                                         .column = g->first->column };
                if (g->n_sets == 1) {
                        f->selection = g->sets[0];
                } else if (g->n_sets > 1) {
                        struct gql_selection_set *m = xcalloc(1, sizeof(*m));
                        for (size_t k = 0; k < g->n_sets; k++)
                                m->n += g->sets[k]->n;
                        m->v = xmalloc(m->n * sizeof(*m->v));
                        for (size_t k = 0, at = 0; k < g->n_sets; at += g->sets[k]->n, k++)
                                memcpy(m->v + at, g->sets[k]->v, g->sets[k]->n * sizeof(*m->v));
                        m->line = g->sets[0]->line;
                        m->column = g->sets[0]->column;
                        out.merged[out.n_merged++] = m;
                        f->selection = m;
                }
                free(g->sets);
        }
        free(c.groups);
        free(c.visited);
        strmap_free(&c.keys);
        if (r < 0)
                return r;
        *ret = out;
        return 0;
}

void gql_fields_release(struct gql_fields *f)
{
        for (size_t i = 0; i < f->n; i++)
                json_decref(f->v[i].args);
        for (size_t i = 0; i < f->n_merged; i++) {
                free(f->merged[i]->v);
                free(f->merged[i]);
        }
        free(f->v);
        free(f->merged);
        *f = (struct gql_fields)GQL_FIELDS_INIT;
}

/* Printing ------------------------------------------------------------------------ */

static void print_string(struct buf *b, const char *s, size_t n)
{
        buf_putc(b, '"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                const char *e = c && c != '/' ? memchr(escaped, c, sizeof(escaped) - 1) : NULL;
                if (e)
                        buf_printf(b, "\\%c", escapes[e - escaped]);
                else if (c < 0x20 || c == 0x7f)
                        buf_printf(b, "\\u%04X", c);
                else
                        buf_putc(b, (char)c);
        }
        buf_putc(b, '"');
}

static void print_args(struct buf *b, struct arg *const *args, size_t n, char open, char close);

static void print_value(struct buf *b, const struct value *v)
{
        switch (v->kind) {
        case VAL_VARIABLE:
                buf_printf(b, "$%s", v->text);
                break;
        case VAL_STRING:
                print_string(b, v->text, v->len);
                break;
        case VAL_LIST:
                buf_putc(b, '[');
                for (size_t i = 0; i < v->n; i++) {
                        if (i > 0)
                                buf_puts(b, ", ");
                        print_value(b, v->items[i]);
                }
                buf_putc(b, ']');
                break;
        case VAL_OBJECT:
                if (v->n == 0)
                        buf_puts(b, "{}");
                print_args(b, v->fields, v->n, '{', '}');
                break;
        default: /* numbers as written, true, false, null, enum values */
                buf_puts(b, v->text);
        }
}

static void print_args(struct buf *b, struct arg *const *args, size_t n, char open, char close)
{
        for (size_t i = 0; i < n; i++) {
                buf_puts(b, i == 0 ? (char[]){ open, 0 } : ", ");
                buf_printf(b, "%s: ", args[i]->name);
                print_value(b, args[i]->value);
        }
        if (n > 0)
                buf_putc(b, close);
}

static void print_directives(struct buf *b, struct directive *const *dirs, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                buf_printf(b, " @%s", dirs[i]->name);
                print_args(b, dirs[i]->args, dirs[i]->n_args, '(', ')');
        }
}

static void print_set(struct buf *b, const struct gql_selection_set *set)
{
        buf_putc(b, '{');
        for (size_t i = 0; i < set->n; i++) {
                const struct selection *s = set->v[i];
                buf_putc(b, ' ');
                if (s->kind == SEL_FIELD) {
                        if (s->alias)
                                buf_printf(b, "%s: ", s->alias);
                        buf_puts(b, s->name);
                        print_args(b, s->args, s->n_args, '(', ')');
                } else if (s->kind == SEL_SPREAD) {
                        buf_printf(b, "...%s", s->name);
                } else {
                        buf_puts(b, "...");
                        if (s->type_cond)
                                buf_printf(b, " on %s", s->type_cond);
                }
                print_directives(b, s->dirs, s->n_dirs);
                if (s->set) {
                        buf_putc(b, ' ');
                        print_set(b, s->set);
                }
        }
        buf_puts(b, " }");
}

static void print_operation(struct buf *b, const struct gql_operation *op)
{
        if (op->type == GQL_QUERY && !op->name && op->n_vars == 0 && op->n_dirs == 0) {
                print_set(b, op->set);
                return;
        }
        buf_puts(b, gql_op_type_to_string(op->type));
        if (op->name)
                buf_printf(b, " %s", op->name);
        for (size_t i = 0; i < op->n_vars; i++) {
                const struct vardef *d = op->vars[i];
                buf_printf(b, "%s$%s: ", i == 0 ? "(" : ", ", d->name);
                type_print(b, d->type);
                if (d->def) {
                        buf_puts(b, " = ");
                        print_value(b, d->def);
                }
                print_directives(b, d->dirs, d->n_dirs);
        }
        if (op->n_vars > 0)
                buf_putc(b, ')');
        print_directives(b, op->dirs, op->n_dirs);
        buf_putc(b, ' ');
        print_set(b, op->set);
}

void gql_doc_print(const struct gql_doc *doc, struct buf *out)
{
        size_t o = 0, f = 0;

        while (o < doc->n_ops || f < doc->n_frags) {
                if (o + f > 0)
                        buf_putc(out, '\n');
                if (f == doc->n_frags || (o < doc->n_ops && doc->ops[o]->def_index < doc->frags[f]->def_index)) {
                        print_operation(out, doc->ops[o++]);
                        continue;
                }
                const struct fragment *fr = doc->frags[f++];
                buf_printf(out, "fragment %s on %s", fr->name, fr->type_cond);
                print_directives(out, fr->dirs, fr->n_dirs);
                buf_putc(out, ' ');
                print_set(out, fr->set);
        }
}
