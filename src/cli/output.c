/* output.c - JSON, tables and objects on stdout (see output.h). */
#include "common/compat.h"

#include "common/buf.h"
#include "common/slots.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"

static void format_slots(struct buf *b, const json_t *v)
{
        const char *name;
        json_t *x;
        char tmp[64];
        bool first = true;

        json_object_foreach((json_t *)v, name, x) {
                int64_t q;
                if (!first)
                        buf_putc(b, ' ');
                first = false;
                if (slot_parse_value(name, x, &q, NULL) == 0)
                        buf_printf(b, "%s=%s", name, slot_format_human(name, q, tmp, sizeof(tmp)));
                else if (json_is_string(x))
                        buf_printf(b, "%s=%s", name, json_string_value(x));
                else
                        buf_printf(b, "%s=?", name);
        }
        if (first)
                buf_putc(b, '-');
}

static void format_time(struct buf *b, const char *s)
{
        /* "2026-11-22T03:54:59.271072+00:00" -> "2026-11-22 03:54:59" */
        if (strlen(s) >= 19 && s[10] == 'T')
                buf_printf(b, "%.10s %.8s", s, s + 11);
        else
                buf_puts(b, s);
}

void out_format(struct buf *b, const json_t *v, enum col_format format)
{
        size_t i;
        json_t *x;

        if (!v || json_is_null(v)) {
                buf_putc(b, '-');
                return;
        }
        if (format == COL_SLOTS && json_is_object(v))
                return format_slots(b, v);
        if (format == COL_TIME && json_is_string(v))
                return format_time(b, json_string_value(v));
        if (format == COL_SHORTID && json_is_string(v))
                return buf_printf(b, "%.8s", json_string_value(v));
        switch (json_typeof(v)) {
        case JSON_STRING: buf_puts(b, json_string_value(v)); break;
        case JSON_INTEGER: buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
        case JSON_REAL: buf_printf(b, "%g", json_real_value(v)); break;
        case JSON_TRUE: buf_puts(b, "yes"); break;
        case JSON_FALSE: buf_puts(b, "no"); break;
        case JSON_ARRAY:
                if (json_array_size(v) == 0)
                        buf_putc(b, '-');
                json_array_foreach(v, i, x) {
                        if (i)
                                buf_putc(b, ',');
                        if (json_is_object(x) || json_is_array(x)) {
                                char *t = json_dumps(x, JSON_COMPACT);
                                buf_puts(b, t ? t : "?");
                                free(t);
                        } else {
                                out_format(b, x, COL_TEXT);
                        }
                }
                break;
        default: {
                char *t = json_dumps(v, JSON_COMPACT);
                buf_puts(b, t ? t : "?");
                free(t);
        }
        }
}

void out_json(const json_t *v)
{
        json_dumpf(v, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY);
        fputc('\n', stdout);
}

/* Display width: UTF-8 code points; control characters print as '?'. */
static size_t text_width(const char *s)
{
        size_t n = 0;
        for (; *s; s++)
                if (((unsigned char)*s & 0xc0) != 0x80)
                        n++;
        return n;
}

static void put_cell(const char *s, size_t width, bool last)
{
        for (const char *p = s; *p; p++)
                fputc((unsigned char)*p < ' ' ? '?' : *p, stdout);
        if (!last)
                for (size_t w = text_width(s); w < width + 2; w++)
                        fputc(' ', stdout);
}

void out_table(const struct column *cols, const json_t *items)
{
        size_t ncols = 0, nrows = json_array_size(items);

        while (cols[ncols].header)
                ncols++;
        char **cells = xcalloc((nrows + 1) * ncols, sizeof(char *));
        size_t *width = xcalloc(ncols, sizeof(size_t));
        for (size_t c = 0; c < ncols; c++) {
                cells[c] = xstrdup(cols[c].header);
                width[c] = text_width(cells[c]);
        }
        for (size_t r = 0; r < nrows; r++) {
                for (size_t c = 0; c < ncols; c++) {
                        struct buf b = BUF_INIT;
                        out_format(&b, json_path_get(json_array_get(items, r), cols[c].field), cols[c].format);
                        char *s = buf_detach(&b, NULL);
                        if (text_width(s) > width[c])
                                width[c] = text_width(s);
                        cells[(r + 1) * ncols + c] = s;
                }
        }
        for (size_t r = 0; r <= nrows; r++) {
                for (size_t c = 0; c < ncols; c++)
                        put_cell(cells[r * ncols + c], width[c], c + 1 == ncols);
                fputc('\n', stdout);
        }
        for (size_t i = 0; i < (nrows + 1) * ncols; i++)
                free(cells[i]);
        free(cells);
        free(width);
}

void out_list(const struct column *cols, const json_t *answer)
{
        const json_t *items = json_object_get(answer, "items"), *total = json_object_get(answer, "total");
        json_int_t offset = json_integer_value(json_object_get(answer, "offset"));
        size_t n = json_array_size(items);

        out_table(cols, items);
        if (json_is_integer(total) && json_integer_value(total) > offset + (json_int_t)n) {
                fflush(stdout);
                fprintf(stderr, "(%zu of %" JSON_INTEGER_FORMAT " shown; see --limit and --offset)\n", n,
                        json_integer_value(total));
        }
}

/* ---- one object ---- */

struct kv {
        char *key, *value;
};

static bool looks_like_slots(const char *key, const json_t *v)
{
        const char *k;
        json_t *x;

        if (!strstr(key, "slots") && !strstr(key, "Slots") && !strstr(key, "resources"))
                return false;
        json_object_foreach((json_t *)v, k, x) if (!json_is_string(x) && !json_is_number(x)) return false;
        return true;
}

static void flatten(const char *prefix, const json_t *obj, struct kv **list, size_t *n)
{
        const char *k;
        json_t *v;

        json_object_foreach((json_t *)obj, k, v) {
                _cleanup_free_ char *key = prefix ? xasprintf("%s.%s", prefix, k) : xstrdup(k);
                if (json_is_object(v) && json_object_size(v) > 0 && !looks_like_slots(k, v)) {
                        flatten(key, v, list, n);
                        continue;
                }
                struct buf b = BUF_INIT;
                if (json_is_object(v) && json_object_size(v) == 0)
                        buf_puts(&b, looks_like_slots(k, v) ? "-" : "{}");
                else
                        out_format(&b, v, json_is_object(v) ? COL_SLOTS : COL_TEXT);
                *list = xrealloc(*list, sizeof(**list) * (*n + 1));
                (*list)[*n].key = TAKE_PTR(key);
                (*list)[*n].value = buf_detach(&b, NULL);
                (*n)++;
        }
}

void out_object(const json_t *obj)
{
        struct kv *list = NULL;
        size_t n = 0, width = 0;

        if (!json_is_object(obj)) {
                struct buf b = BUF_INIT;
                out_format(&b, obj, COL_TEXT);
                puts(b.data);
                buf_release(&b);
                return;
        }
        flatten(NULL, obj, &list, &n);
        for (size_t i = 0; i < n; i++)
                if (text_width(list[i].key) > width)
                        width = text_width(list[i].key);
        for (size_t i = 0; i < n; i++) {
                printf("%s:", list[i].key);
                for (size_t w = text_width(list[i].key); w < width + 1; w++)
                        fputc(' ', stdout);
                /* multi-line values (logs, scripts) continue on their own lines */
                fputs(list[i].value, stdout);
                fputc('\n', stdout);
                free(list[i].key);
                free(list[i].value);
        }
        free(list);
}

void out_print_object(const json_t *answer, const void *arg UNUSED)
{
        out_object(answer);
}

void out_print_list(const json_t *answer, const void *columns)
{
        out_list(columns, answer);
}

int cli_request(const char *method, const char *path, const json_t *body, out_print_fn print, const void *arg)
{
        struct tess_error *err = NULL;
        json_t *answer = NULL;

        if (client_json(method, path, body, CLIENT_SIGNED, &answer, &err) < 0)
                return cli_fail(err);
        if (arg_json)
                out_json(answer);
        else
                print(answer, arg);
        json_decref(answer);
        return CLI_EXIT_OK;
}
