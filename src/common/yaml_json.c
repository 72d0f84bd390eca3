/* yaml_json.c - see yaml_json.h.  libyaml's event parser feeds a stack of
 * the containers being filled. */
#include "common/compat.h"

#include <ctype.h>
#include <math.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/yaml_json.h"

struct level {
        json_t *v;      /* an object or an array */
        char *key;      /* an object's key waiting for its value */
        bool key_known; /* key is set (it may be "") */
};

struct builder {
        struct level stack[YAML_JSON_DEPTH_MAX + 1];
        int depth;
        size_t nodes;
        json_t *docs;
        json_t *doc; /* the document's value once complete */
};

/* ---- plain scalars, resolved as PyYAML's (YAML 1.1) resolver does ---- */

static bool one_of(const char *s, const char *const *words)
{
        for (; *words; words++)
                if (streq(s, *words))
                        return true;
        return false;
}

static bool all_in(const char *s, size_t n, const char *set)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr(set, s[i]))
                        return false;
        return true;
}

/* s without '_' into out (cap bytes); false when it does not fit */
static bool without_underscores(const char *s, char *out, size_t cap)
{
        size_t n = 0;

        for (; *s; s++) {
                if (*s == '_')
                        continue;
                if (n + 1 >= cap)
                        return false;
                out[n++] = *s;
        }
        out[n] = '\0';
        return true;
}

/* [-+]? then 0b[01_]+ | 0x[0-9a-fA-F_]+ | 0[0-7_]+ | 0 | [1-9][0-9_]*;
 * NULL when s is not one, or does not fit an int64 (then a string). */
static json_t *as_integer(const char *s)
{
        const char *p = s + (*s == '-' || *s == '+');
        size_t n = strlen(p);
        int base;
        char digits[80];

        if (n > 2 && p[0] == '0' && p[1] == 'b' && all_in(p + 2, n - 2, "01_"))
                base = 2, p += 2;
        else if (n > 2 && p[0] == '0' && p[1] == 'x' && all_in(p + 2, n - 2, "0123456789abcdefABCDEF_"))
                base = 16, p += 2;
        else if (n > 1 && p[0] == '0' && all_in(p + 1, n - 1, "01234567_"))
                base = 8, p += 1;
        else if ((n == 1 && p[0] == '0') || (n >= 1 && p[0] >= '1' && p[0] <= '9' && all_in(p, n, "0123456789_")))
                base = 10;
        else
                return NULL;
        if (!without_underscores(p, digits + 1, sizeof(digits) - 1) || !digits[1])
                return NULL;
        digits[0] = *s == '-' ? '-' : '+';
        errno = 0;
        char *end;
        long long v = strtoll(digits, &end, base);
        if (errno || *end)
                return NULL;
        return json_integer(v);
}

/* [-+]? ( [0-9][0-9_]* "." [0-9_]* | "." [0-9_]+ ) ( [eE][-+][0-9]+ )?
 * (a dot is needed, and a signed exponent, as in YAML 1.1); NULL when
 * not one.  .inf and .nan have no JSON form: strings. */
static json_t *as_float(const char *s)
{
        const char *p = s + (*s == '-' || *s == '+');
        const char *dot = strchr(p, '.');
        char text[80];

        if (!dot)
                return NULL;
        const char *e = strpbrk(dot, "eE");
        size_t mant = (size_t)((e ? e : p + strlen(p)) - p);
        size_t int_len = (size_t)(dot - p), frac_len = mant - int_len - 1;
        if (int_len > 0 && !(isdigit((unsigned char)p[0]) && all_in(p, int_len, "0123456789_")))
                return NULL;
        if (frac_len > 0 && !all_in(dot + 1, frac_len, "0123456789_"))
                return NULL;
        if (int_len == 0 && frac_len == 0)
                return NULL;
        if (e && !((e[1] == '-' || e[1] == '+') && all_in(e + 2, strlen(e + 2), "0123456789")))
                return NULL;
        if (!without_underscores(s, text, sizeof(text)))
                return NULL;
        char *end;
        double v = strtod(text, &end);
        if (*end || !isfinite(v))
                return NULL;
        return json_real(v);
}

static json_t *plain_scalar(const char *s, size_t n)
{
        static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
        static const char *const trues[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL };
        static const char *const falses[] = { "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL };
        json_t *v;

        if (strlen(s) != n) /* a NUL inside: only a string holds it */
                return json_stringn(s, n);
        if (one_of(s, nulls))
                return json_null();
        if (one_of(s, trues))
                return json_true();
        if (one_of(s, falses))
                return json_false();
        if ((v = as_integer(s)) || (v = as_float(s)))
                return v;
        return json_stringn(s, n);
}

/* ---- the stack ---- */

/* Put v (a new reference, taken) where the innermost container wants it,
 * or make it the document. */
static int place(struct builder *b, json_t *v, const yaml_event_t *ev, struct tess_error **err)
{
        size_t line = ev->start_mark.line + 1;

        if (!v)
                return tess_err(err, EINVAL, "line %zu: a value that cannot be represented", line);
        if (++b->nodes > YAML_JSON_NODES_MAX) {
                json_decref(v);
                return tess_err(err, EINVAL, "line %zu: more than %d values", line, YAML_JSON_NODES_MAX);
        }
        if (b->depth == 0) {
                b->doc = v;
                return 0;
        }
        struct level *l = &b->stack[b->depth - 1];
        if (json_is_array(l->v))
                return json_array_append_new(l->v, v) == 0 ? 0 : tess_err(err, ENOMEM, "out of memory");
        if (!l->key_known) {
                if (!json_is_string(v)) {
                        json_decref(v);
                        return tess_err(err, EINVAL, "line %zu: a mapping key must be a scalar", line);
                }
                l->key = xstrndup(json_string_value(v), json_string_length(v));
                l->key_known = true;
                json_decref(v);
                return 0;
        }
        if (json_object_get(l->v, l->key)) {
                json_decref(v);
                return tess_err(err, EINVAL, "line %zu: key '%s' appears twice", line, l->key);
        }
        json_object_set_new(l->v, l->key, v);
        free(l->key);
        l->key = NULL;
        l->key_known = false;
        return 0;
}

static json_t *scalar_event_value(const yaml_event_t *ev, bool is_key)
{
        const char *s = (const char *)ev->data.scalar.value;
        size_t n = ev->data.scalar.length;
        const char *tag = (const char *)ev->data.scalar.tag;

        /* keys are text whatever they look like ("1: x" has the key "1") */
        if (is_key || ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || (tag && streq(tag, YAML_STR_TAG)))
                return json_stringn(s, n);
        return plain_scalar(s, n);
}

static bool wants_key(const struct builder *b)
{
        return b->depth > 0 && json_is_object(b->stack[b->depth - 1].v) && !b->stack[b->depth - 1].key_known;
}

static int open_container(struct builder *b, json_t *v, const yaml_event_t *ev, struct tess_error **err)
{
        if (wants_key(b)) {
                json_decref(v);
                return tess_err(err, EINVAL, "line %zu: a mapping key must be a scalar",
                                (size_t)ev->start_mark.line + 1);
        }
        if (b->depth == YAML_JSON_DEPTH_MAX) {
                json_decref(v);
                return tess_err(err, EINVAL, "line %zu: nested deeper than %d levels", (size_t)ev->start_mark.line + 1,
                                YAML_JSON_DEPTH_MAX);
        }
        b->stack[b->depth++] = (struct level){ .v = v };
        return 0;
}

static int close_container(struct builder *b, const yaml_event_t *ev, struct tess_error **err)
{
        struct level l = b->stack[--b->depth];
        free(l.key);
        return place(b, l.v, ev, err);
}

static int on_event(struct builder *b, const yaml_event_t *ev, struct tess_error **err)
{
        switch (ev->type) {
        case YAML_SCALAR_EVENT:
                return place(b, scalar_event_value(ev, wants_key(b)), ev, err);
        case YAML_SEQUENCE_START_EVENT:
                return open_container(b, json_array(), ev, err);
        case YAML_MAPPING_START_EVENT:
                return open_container(b, json_object(), ev, err);
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                return close_container(b, ev, err);
        case YAML_ALIAS_EVENT:
                return tess_err(err, EINVAL, "line %zu: aliases (*%s) are not accepted",
                                (size_t)ev->start_mark.line + 1, (const char *)ev->data.alias.anchor);
        case YAML_DOCUMENT_START_EVENT:
                b->doc = NULL;
                return 0;
        case YAML_DOCUMENT_END_EVENT:
                json_array_append_new(b->docs, b->doc ? b->doc : json_null());
                b->doc = NULL;
                return 0;
        default:
                return 0;
        }
}

int yaml_to_json(const char *text, size_t len, json_t **ret, struct tess_error **err)
{
        yaml_parser_t parser;
        struct builder b = { .docs = json_array() };
        int r = 0;
        bool done = false;

        *ret = NULL;
        if (!yaml_parser_initialize(&parser))
                return tess_err(err, ENOMEM, "out of memory");
        yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
        while (r == 0 && !done) {
                yaml_event_t ev;
                if (!yaml_parser_parse(&parser, &ev)) {
                        r = tess_err(err, EINVAL, "line %zu: %s%s%s", (size_t)parser.problem_mark.line + 1,
                                     parser.problem ? parser.problem : "not YAML", parser.context ? " " : "",
                                     parser.context ? parser.context : "");
                        break;
                }
                done = ev.type == YAML_STREAM_END_EVENT;
                r = on_event(&b, &ev, err);
                yaml_event_delete(&ev);
        }
        yaml_parser_delete(&parser);
        while (b.depth > 0) {
                struct level *l = &b.stack[--b.depth];
                json_decref(l->v);
                free(l->key);
        }
        json_decref(b.doc);
        if (r < 0) {
                json_decref(b.docs);
                return r;
        }
        *ret = b.docs;
        return 0;
}
