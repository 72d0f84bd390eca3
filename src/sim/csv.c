/* csv.c - reading comma-separated records from memory, with line numbers,
 * and the number formats of the simulator's inputs (see sim-internal.h).
 * Input is untrusted (traces from anywhere): every path is bounded and
 * ends in a message naming the line. */
#include "common/compat.h"

#include <ctype.h>

#include "sim/sim-internal.h"

void sim_csv_init(struct sim_csv *c, const char *origin, const char *p, size_t len)
{
        *c = (struct sim_csv){ .origin = origin, .p = p, .end = p + len, .next_line = 1, .fields = BUF_INIT };
        if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
                c->p += 3;
}

void sim_csv_release(struct sim_csv *c)
{
        buf_release(&c->fields);
}

int sim_csv_error(const struct sim_csv *c, struct tess_error **err, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        _cleanup_free_ char *msg = xvasprintf(fmt, ap);
        va_end(ap);
        return tess_err(err, EINVAL, "%s:%lld: %s", c->origin, (long long)c->line, msg);
}

static bool is_blank(const char *p, const char *end)
{
        for (; p < end; p++)
                if (*p != ' ' && *p != '\t' && *p != '\r')
                        return false;
        return true;
}

/* Split the line [p, end) into fields. */
static int split(struct sim_csv *c, const char *p, const char *end, struct tess_error **err)
{
        buf_reset(&c->fields);
        c->n = 0;
        for (;;) {
                if (c->n == SIM_CSV_MAX_FIELDS)
                        return sim_csv_error(c, err, "more than %d fields", SIM_CSV_MAX_FIELDS);
                c->off[c->n++] = c->fields.len;
                while (p < end && (*p == ' ' || *p == '\t'))
                        p++;
                if (p < end && *p == '"') {
                        p++;
                        for (;;) {
                                if (p == end)
                                        return sim_csv_error(c, err, "field %d: unterminated quote", c->n);
                                if (*p == '"') {
                                        if (p + 1 < end && p[1] == '"') {
                                                buf_putc(&c->fields, '"');
                                                p += 2;
                                                continue;
                                        }
                                        p++;
                                        break;
                                }
                                buf_putc(&c->fields, *p++);
                        }
                        while (p < end && (*p == ' ' || *p == '\t'))
                                p++;
                        if (p < end && *p != ',')
                                return sim_csv_error(c, err, "field %d: text after the closing quote", c->n);
                } else {
                        const char *s = p;
                        while (p < end && *p != ',') {
                                if (*p == '"')
                                        return sim_csv_error(c, err,
                                                             "field %d: a quote inside an unquoted field", c->n);
                                p++;
                        }
                        const char *e = p;
                        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
                                e--;
                        buf_append(&c->fields, s, (size_t)(e - s));
                }
                buf_putc(&c->fields, '\0');
                if (p == end)
                        return 1;
                p++; /* the comma */
        }
}

int sim_csv_next(struct sim_csv *c, struct tess_error **err)
{
        while (c->p < c->end) {
                const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
                const char *eol = nl ? nl : c->end;
                const char *line = c->p;

                c->line = c->next_line++;
                c->p = nl ? nl + 1 : c->end;
                if (eol - line > SIM_CSV_MAX_LINE)
                        return sim_csv_error(c, err, "line longer than %d bytes", SIM_CSV_MAX_LINE);
                if (memchr(line, '\0', (size_t)(eol - line)))
                        return sim_csv_error(c, err, "NUL byte in the line");
                if (eol > line && eol[-1] == '\r')
                        eol--;
                if (is_blank(line, eol) || *line == '#')
                        continue;
                return split(c, line, eol, err);
        }
        return 0;
}

/* ---- numbers ---- */

int sim_parse_fixed(const char *s, int64_t scale, int64_t max, int64_t *ret)
{
        int64_t ip = 0, fp = 0, f = scale;
        const char *p = s;

        if (*p == '+')
                p++;
        if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
                return -EINVAL;
        for (; isdigit((unsigned char)*p); p++) {
                if (ip > (INT64_MAX - 9) / 10)
                        return -ERANGE;
                ip = ip * 10 + (*p - '0');
        }
        if (*p == '.') {
                p++;
                if (!isdigit((unsigned char)*p) && p - 1 == s)
                        return -EINVAL;
                for (; isdigit((unsigned char)*p); p++) {
                        f /= 10;
                        if (f == 0) {
                                if (*p != '0')
                                        return -EDOM; /* finer than the quantum */
                                f = 0;
                                continue;
                        }
                        fp += (*p - '0') * f;
                }
        }
        if (*p)
                return -EINVAL;
        if (ip > max / scale || ip * scale > max - fp)
                return -ERANGE;
        *ret = ip * scale + fp;
        return 0;
}

int sim_parse_seconds(const char *s, int64_t *ret_usec)
{
        return sim_parse_fixed(s, 1000000, SIM_TIME_MAX, ret_usec);
}

int sim_parse_int(const char *s, int64_t min, int64_t max, int64_t *ret)
{
        int64_t v = 0;
        bool neg = false;
        const char *p = s;

        if (*p == '-' || *p == '+')
                neg = *p++ == '-';
        if (!isdigit((unsigned char)*p))
                return -EINVAL;
        for (; isdigit((unsigned char)*p); p++) {
                if (v > (INT64_MAX - 9) / 10)
                        return -ERANGE;
                v = v * 10 + (*p - '0');
        }
        if (*p)
                return -EINVAL;
        if (neg)
                v = -v;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

bool sim_name_ok(const char *s, size_t len)
{
        if (len == 0 || len >= SIM_NAME_MAX || s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t')
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)s[i];
                if (ch < 0x20 || ch == 0x7f || ch == ',' || ch == '"')
                        return false;
        }
        return true;
}
