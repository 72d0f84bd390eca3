/* slots.c - see slots.h. */
#include "common/compat.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>

#include "common/slots.h"

static const struct slot_type slot_types[] = {
        { "cpu", SLOT_UNIT_COUNT, 1000 },
        { "mem", SLOT_UNIT_BYTES, 1 },
        { "cuda.device", SLOT_UNIT_COUNT, 1 },
        { "cuda.shares", SLOT_UNIT_COUNT, 100 },
};

const struct slot_type *slot_type_find(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(slot_types); i++)
                if (streq(slot_types[i].name, name))
                        return &slot_types[i];
        return NULL;
}

int64_t slot_scale(const char *name)
{
        const struct slot_type *t = slot_type_find(name);
        return t ? t->scale : 1000;
}

static bool slot_is_bytes(const char *name)
{
        const struct slot_type *t = slot_type_find(name);
        return t && t->unit == SLOT_UNIT_BYTES;
}

static int digits_of(int64_t scale)
{
        int d = 0;
        while (scale > 1) {
                scale /= 10;
                d++;
        }
        return d;
}

/* Parse "123", "1.5" into value*scale exactly; reject finer than 1/scale. */
static int parse_decimal(const char *name, const char *p, const char *end, int64_t scale, int64_t *ret,
                         struct tess_error **err)
{
        int64_t ip = 0, fp = 0, fscale = 1;
        int fdigits = 0, maxf = digits_of(scale);
        const char *q = p;

        if (q == end)
                return tess_err(err, EINVAL, "slot '%s': empty value", name);
        while (q < end && isdigit((unsigned char)*q)) {
                if (ip > (INT64_MAX - 9) / 10)
                        return tess_err(err, EINVAL, "slot '%s': value too large", name);
                ip = ip * 10 + (*q++ - '0');
        }
        if (q < end && *q == '.') {
                q++;
                if (q == end || !isdigit((unsigned char)*q))
                        return tess_err(err, EINVAL, "slot '%s': malformed number", name);
                while (q < end && isdigit((unsigned char)*q)) {
                        int d = *q++ - '0';
                        if (fdigits >= maxf) {
                                if (d != 0)
                                        return tess_err(err, EINVAL,
                                                        "slot '%s': value is finer than the quantum 1/%" PRId64,
                                                        name, scale);
                                continue;
                        }
                        fp = fp * 10 + d;
                        fscale *= 10;
                        fdigits++;
                }
        } else if (q == p) {
                return tess_err(err, EINVAL, "slot '%s': malformed number", name);
        }
        if (q != end)
                return tess_err(err, EINVAL, "slot '%s': malformed number", name);
        int64_t v;
        if (__builtin_mul_overflow(ip, scale, &v) || __builtin_add_overflow(v, fp * (scale / fscale), &v))
                return tess_err(err, EINVAL, "slot '%s': value too large", name);
        *ret = v;
        return 0;
}

/* Memory: "4g", "512m", "1.5GiB", "1073741824" (binary multiples, as
 * Backend.AI's BinarySize). */
static int parse_bytes(const char *name, const char *s, int64_t *ret, struct tess_error **err)
{
        static const char units[] = "kmgtpe";
        const char *num_end = s;
        int shift = 0;
        int64_t milli;
        int r;

        while (*num_end && (isdigit((unsigned char)*num_end) || *num_end == '.'))
                num_end++;
        if (*num_end) {
                const char *u = strchr(units, tolower((unsigned char)*num_end));
                const char *rest = num_end + 1;
                if (tolower((unsigned char)*num_end) == 'b' && !num_end[1]) {
                        rest = num_end + 1;
                } else if (!u || !*u) {
                        return tess_err(err, EINVAL, "slot '%s': unknown size suffix in '%.64s'", name, s);
                } else {
                        shift = 10 * (int)(u - units + 1);
                        if (strcasecmp(rest, "") && strcasecmp(rest, "b") && strcasecmp(rest, "ib"))
                                return tess_err(err, EINVAL, "slot '%s': unknown size suffix in '%.64s'", name, s);
                }
        }
        if (shift == 0 && !memchr(s, '.', (size_t)(num_end - s)))
                return parse_decimal(name, s, num_end, 1, ret, err); /* whole bytes: the full int64 range */
        r = parse_decimal(name, s, num_end, 1000, &milli, err);
        if (r < 0)
                return r;
        /* milli-bytes << shift, then it must be a whole number of bytes */
        if (shift > 0 && milli > (INT64_MAX >> shift))
                return tess_err(err, EINVAL, "slot '%s': value too large", name);
        int64_t scaled = milli << shift;
        if (scaled % 1000 != 0)
                return tess_err(err, EINVAL, "slot '%s': '%.64s' is not a whole number of bytes", name, s);
        *ret = scaled / 1000;
        return 0;
}

int slot_parse_string(const char *name, const char *s, int64_t *ret, struct tess_error **err)
{
        while (isspace((unsigned char)*s))
                s++;
        if (strcasecmp(s, "infinity") == 0 || strcasecmp(s, "inf") == 0) {
                *ret = SLOT_INFINITY;
                return 0;
        }
        if (*s == '-')
                return tess_err(err, EINVAL, "slot '%s': negative value '%s'", name, s);
        if (*s == '+')
                s++;
        if (slot_is_bytes(name))
                return parse_bytes(name, s, ret, err);
        return parse_decimal(name, s, s + strlen(s), slot_scale(name), ret, err);
}

int slot_parse_value(const char *name, const json_t *v, int64_t *ret, struct tess_error **err)
{
        int64_t scale = slot_scale(name);

        if (json_is_string(v))
                return slot_parse_string(name, json_string_value(v), ret, err);
        if (json_is_integer(v)) {
                json_int_t i = json_integer_value(v);
                if (i < 0)
                        return tess_err(err, EINVAL, "slot '%s': negative value", name);
                if (i > INT64_MAX / scale)
                        return tess_err(err, EINVAL, "slot '%s': value too large", name);
                *ret = (int64_t)i * scale;
                return 0;
        }
        if (json_is_real(v)) {
                double d = json_real_value(v);
                if (isinf(d) && d > 0) {
                        *ret = SLOT_INFINITY;
                        return 0;
                }
                if (!isfinite(d) || d < 0)
                        return tess_err(err, EINVAL, "slot '%s': value must be a non-negative number", name);
                double q = d * (double)scale;
                if (q >= 9.0e18)
                        return tess_err(err, EINVAL, "slot '%s': value too large", name);
                double rq = nearbyint(q);
                if (fabs(q - rq) > 1e-6 * (rq > 1 ? rq : 1))
                        return tess_err(err, EINVAL, "slot '%s': value is finer than the quantum 1/%" PRId64, name,
                                        scale);
                *ret = (int64_t)rq;
                return 0;
        }
        return tess_err(err, EINVAL, "slot '%s': value must be a number or a string", name);
}

char *slot_format(const char *name, int64_t v, char *buf, size_t len)
{
        int64_t scale = slot_scale(name);

        if (v == SLOT_INFINITY) {
                snprintf(buf, len, "Infinity");
                return buf;
        }
        int64_t ip = v / scale, fp = v % scale;
        if (fp == 0) {
                snprintf(buf, len, "%" PRId64, ip);
                return buf;
        }
        int d = digits_of(scale);
        while (fp % 10 == 0) {
                fp /= 10;
                d--;
        }
        snprintf(buf, len, "%" PRId64 ".%0*" PRId64, ip, d, fp);
        return buf;
}

char *slot_format_human(const char *name, int64_t v, char *buf, size_t len)
{
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };

        if (v == SLOT_INFINITY) {
                snprintf(buf, len, "inf");
                return buf;
        }
        if (!slot_is_bytes(name))
                return slot_format(name, v, buf, len);
        double d = (double)v;
        size_t u = 0;
        while (d >= 1024 && u + 1 < ARRAY_SIZE(units)) {
                d /= 1024;
                u++;
        }
        if (d == (int64_t)d)
                snprintf(buf, len, "%" PRId64 " %s", (int64_t)d, units[u]);
        else
                snprintf(buf, len, "%.1f %s", d, units[u]);
        return buf;
}

void slots_init(struct slots *s)
{
        s->n = 0;
}

static struct slot *slots_find(const struct slots *s, const char *name)
{
        for (int i = 0; i < s->n; i++)
                if (streq(s->s[i].name, name))
                        return (struct slot *)&s->s[i];
        return NULL;
}

int64_t slots_get(const struct slots *s, const char *name)
{
        struct slot *e = slots_find(s, name);
        return e ? e->value : 0;
}

bool slots_has(const struct slots *s, const char *name)
{
        return slots_find(s, name) != NULL;
}

static bool slot_name_valid(const char *name)
{
        size_t n = strlen(name);
        if (n == 0 || n >= SLOT_NAME_MAX)
                return false;
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
                        return false;
        return true;
}

int slots_set(struct slots *s, const char *name, int64_t v, struct tess_error **err)
{
        struct slot *e = slots_find(s, name);

        if (!e) {
                if (!slot_name_valid(name))
                        return tess_err(err, EINVAL, "invalid slot name '%.64s'", name);
                if (s->n >= SLOTS_MAX)
                        return tess_err(err, EINVAL, "too many resource slots (at most %d)", SLOTS_MAX);
                e = &s->s[s->n++];
                snprintf(e->name, sizeof(e->name), "%s", name);
        }
        e->value = v;
        return 0;
}

int slots_add(struct slots *a, const struct slots *b, struct tess_error **err)
{
        for (int i = 0; i < b->n; i++) {
                int64_t cur = slots_get(a, b->s[i].name), add = b->s[i].value, sum;
                if (cur == SLOT_INFINITY || add == SLOT_INFINITY || __builtin_add_overflow(cur, add, &sum))
                        sum = SLOT_INFINITY;
                int r = slots_set(a, b->s[i].name, sum, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool slots_fit(const struct slots *req, const struct slots *limit, bool missing_is_unlimited, const char **ret_slot)
{
        for (int i = 0; i < req->n; i++) {
                const struct slot *l = slots_find(limit, req->s[i].name);
                int64_t lim = l ? l->value : (missing_is_unlimited ? SLOT_INFINITY : 0);
                if (req->s[i].value > lim) {
                        if (ret_slot)
                                *ret_slot = req->s[i].name;
                        return false;
                }
        }
        return true;
}

int slots_from_json(struct slots *s, const json_t *obj, bool only_known, struct tess_error **err)
{
        const char *key;
        json_t *v;

        slots_init(s);
        if (!obj || json_is_null(obj))
                return 0;
        if (!json_is_object(obj))
                return tess_err(err, EINVAL, "resource slots must be an object");
        json_object_foreach((json_t *)obj, key, v) {
                int64_t q;
                int r;
                if (only_known && !slot_type_find(key))
                        return tess_err(err, EINVAL, "unknown resource slot '%.64s'", key);
                r = slot_parse_value(key, v, &q, err);
                if (r < 0)
                        return r;
                r = slots_set(s, key, q, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int slots_from_text(struct slots *s, const char *text, struct tess_error **err)
{
        json_error_t jerr;
        json_t *obj;
        int r;

        slots_init(s);
        if (!text || !*text)
                return 0;
        obj = json_loads(text, 0, &jerr);
        if (!obj)
                return tess_err(err, EINVAL, "resource slots: %s", jerr.text);
        r = slots_from_json(s, obj, false, err);
        json_decref(obj);
        return r;
}

json_t *slots_to_json(const struct slots *s)
{
        json_t *o = json_object();
        char tmp[32];

        for (int i = 0; i < s->n; i++)
                json_object_set_new(o, s->s[i].name,
                                    json_string(slot_format(s->s[i].name, s->s[i].value, tmp, sizeof(tmp))));
        return o;
}

char *slots_to_text(const struct slots *s)
{
        json_t *o = slots_to_json(s);
        char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(o);
        if (!t)
                abort();
        return t;
}
