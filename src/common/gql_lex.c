/* gql_lex.c - the lexer of GraphQL (spec §2.1): the source's checks, tokens,
 * numbers, strings with their escapes, block strings; and the
 * "LINE:COLUMN: " errors of all the gql files (see gql-internal.h). */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/gql-internal.h"
#include "common/utf8.h"

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

int gql_err_at(struct tess_error **err, unsigned line, unsigned column, const char *fmt, ...)
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

int gql_check_source(const char *s, size_t len, struct tess_error **err)
{
        unsigned line, column;

        if (len > GQL_DOC_MAX)
                return tess_err(err, EINVAL, "the document is longer than %d bytes", GQL_DOC_MAX);
        for (size_t i = 0; i < len;) {
                size_t n = s[i] ? utf8_seq_len((const unsigned char *)s + i, len - i) : 0;
                if (n == 0) {
                        position_of(s, i, &line, &column);
                        return gql_err_at(err, line, column, s[i] ? "invalid UTF-8" : "unexpected NUL byte");
                }
                i += n;
        }
        return 0;
}

/* The lexer (spec §2.1) ------------------------------------------------------ */

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

int gql_fail(struct parser *p, unsigned line, unsigned column, const char *fmt, ...)
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

        return gql_fail(p, p->tok.line, p->tok.column, "invalid number \"%.*s%s\": %s", shown, p->s + start,
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
                int h = hex_digit_value(peek(p, i + k));
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
                while ((h = hex_digit_value(peek(p, 0))) >= 0 && cp <= 0x10ffff) {
                        cp = cp * 16 + (uint32_t)h;
                        digits++;
                        eat(p);
                }
                if (digits == 0 || peek(p, 0) != '}' || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                        size_t n = p->pos - esc + (p->pos < p->len ? 1 : 0);
                        return gql_fail(p, line, column, "invalid Unicode escape \"%.*s\": %s",
                                        printable_len(p->s + esc, n, 24), p->s + esc,
                                        digits == 0 || (peek(p, 0) != '}' && cp <= 0x10ffff)
                                                ? "expected hexadecimal digits and \"}\""
                                                : "not a Unicode scalar value");
                }
                eat(p);
        } else {
                long v = hex4(p, 0);
                if (v < 0)
                        return gql_fail(p, line, column,
                                        "invalid Unicode escape \"%.*s\": expected 4 hexadecimal digits",
                                        printable_len(p->s + esc, p->len - esc, 6), p->s + esc);
                eat_n(p, 4);
                cp = (uint32_t)v;
                if (cp >= 0xd800 && cp <= 0xdbff) {
                        long lo = peek(p, 0) == '\\' && peek(p, 1) == 'u' ? hex4(p, 2) : -1;
                        if (lo < 0xdc00 || lo > 0xdfff)
                                return gql_fail(p, line, column,
                                                "invalid Unicode escape \"\\u%04X\": a leading surrogate without a "
                                                "trailing one",
                                                cp);
                        eat_n(p, 6);
                        cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
                } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                        return gql_fail(
                                p, line, column,
                                "invalid Unicode escape \"\\u%04X\": a trailing surrogate without a leading one", cp);
                }
        }
        if (cp == 0)
                return gql_fail(p, line, column, "invalid Unicode escape: U+0000 is not allowed in a string");
        put_utf8(&p->sbuf, cp);
        return 0;
}

/* See gql-internal.h. */
const char gql_escapes[] = "\"\\/bfnrt", gql_escaped[] = "\"\\/\b\f\n\r\t";

static int lex_string(struct parser *p)
{
        eat(p); /* " */
        buf_reset(&p->sbuf);
        for (;;) {
                int c = peek(p, 0);
                if (c < 0 || c == '\n' || c == '\r')
                        return gql_fail(p, p->tok.line, p->tok.column, "unterminated string");
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
                const char *e = c > 0 ? strchr(gql_escapes, c) : NULL;
                if (e) {
                        buf_putc(&p->sbuf, gql_escaped[e - gql_escapes]);
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
                        return gql_fail(p, p->tok.line, p->tok.column, "unterminated string");
                if (c >= 0x21 && c < 0x7f)
                        return gql_fail(p, line, column, "invalid escape sequence \"\\%c\"", c);
                char what[16];
                char_desc(p, p->pos, what, sizeof(what));
                return gql_fail(p, line, column, "invalid escape sequence: \"\\\" before %s", what);
        }
        p->tok.kind = TOK_STRING;
        p->tok.value_len = p->sbuf.len;
        p->tok.value = gql_arena_strndup(p->doc, p->sbuf.data, p->sbuf.len);
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
        char *v = gql_arena_strndup(doc, out.data, out.len);
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
                        return gql_fail(p, p->tok.line, p->tok.column, "unterminated block string");
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

int gql_lex(struct parser *p)
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
        return gql_fail(p, p->line, p->column, "unexpected character %s", what);
}
