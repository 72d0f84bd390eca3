/* usage.c - see usage.h. */
#include "common/compat.h"

#include <ctype.h>
#include <math.h>

#include "common/buf.h"
#include "common/strmap.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/usage/usage.h"

/* ---- days ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
        int64_t q = a / b;
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil), and back. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        unsigned yoe = (unsigned)(y - era * 400);
        unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
        unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *ret_y, unsigned *ret_m, unsigned *ret_d)
{
        z += 719468;
        int64_t era = (z >= 0 ? z : z - 146096) / 146097;
        unsigned doe = (unsigned)(z - era * 146097);
        unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        unsigned mp = (5 * doy + 2) / 153;
        unsigned d = doy - (153 * mp + 2) / 5 + 1;
        unsigned m = mp < 10 ? mp + 3 : mp - 9;
        *ret_y = (int64_t)yoe + era * 400 + (m <= 2);
        *ret_m = m;
        *ret_d = d;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
        static const unsigned dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        return m == 2 && leap ? 29 : dm[m - 1];
}

int32_t usage_day_of(int64_t usec)
{
        return (int32_t)floor_div(usec, USAGE_SEC_PER_DAY * USEC_PER_SEC);
}

int64_t usage_day_start(int32_t day)
{
        return (int64_t)day * USAGE_SEC_PER_DAY * USEC_PER_SEC;
}

char *usage_day_format(int32_t day, char *buf, size_t len)
{
        int64_t y;
        unsigned m, d;

        civil_from_days(day, &y, &m, &d);
        snprintf(buf, len, "%04lld-%02u-%02u", (long long)y, m, d);
        return buf;
}

static bool digits(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!isdigit((unsigned char)s[i]))
                        return false;
        return true;
}

static unsigned num(const char *s, size_t n)
{
        unsigned v = 0;
        for (size_t i = 0; i < n; i++)
                v = v * 10 + (unsigned)(s[i] - '0');
        return v;
}

int usage_day_parse(const char *param, const char *s, int32_t *ret, struct tess_error **err)
{
        size_t n = strlen(s);
        unsigned y, m, d;

        if (n == 8 && digits(s, 8)) {
                y = num(s, 4), m = num(s + 4, 2), d = num(s + 6, 2);
        } else if (n == 10 && digits(s, 4) && s[4] == '-' && digits(s + 5, 2) && s[7] == '-' && digits(s + 8, 2)) {
                y = num(s, 4), m = num(s + 5, 2), d = num(s + 8, 2);
        } else {
                return tess_err(err, EINVAL, "'%s' must be a date written YYYYMMDD, not '%.32s'", param, s);
        }
        if (y < 1970 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
                return tess_err(err, EINVAL, "'%s' is not a calendar date from 1970 on: '%s'", param, s);
        *ret = (int32_t)days_from_civil(y, m, d);
        return 0;
}

size_t usage_split_days(int64_t from, int64_t to, struct usage_span *ret, size_t max)
{
        int64_t fs = floor_div(from, USEC_PER_SEC), ts = floor_div(to, USEC_PER_SEC);

        if (ts <= fs)
                return 0;
        int64_t d0 = floor_div(fs, USAGE_SEC_PER_DAY), d1 = floor_div(ts - 1, USAGE_SEC_PER_DAY);
        size_t n = (size_t)(d1 - d0 + 1);
        for (size_t i = 0; i < n && i < max; i++) {
                int64_t day = d0 + (int64_t)i, start = day * USAGE_SEC_PER_DAY, end = start + USAGE_SEC_PER_DAY;
                ret[i].day = (int32_t)day;
                ret[i].seconds = (ts < end ? ts : end) - (fs > start ? fs : start);
        }
        return n;
}

/* ---- slot-seconds ---- */

void usage_amount_init(struct usage_amount *a)
{
        a->n = 0;
}

static int amount_find(const struct usage_amount *a, const char *name)
{
        for (int i = 0; i < a->n; i++)
                if (streq(a->s[i].name, name))
                        return i;
        return -1;
}

usage_int usage_amount_get(const struct usage_amount *a, const char *name)
{
        int i = amount_find(a, name);
        return i < 0 ? 0 : a->s[i].value;
}

static int amount_addv(struct usage_amount *a, const char *name, usage_int v, struct tess_error **err)
{
        int i = amount_find(a, name);

        if (i < 0) {
                if (strlen(name) >= SLOT_NAME_MAX)
                        return tess_err(err, EINVAL, "invalid slot name '%.64s'", name);
                if (a->n >= SLOTS_MAX)
                        return tess_err(err, EINVAL, "too many resource slots (at most %d)", SLOTS_MAX);
                i = a->n++;
                snprintf(a->s[i].name, sizeof(a->s[i].name), "%s", name);
                a->s[i].value = 0;
        }
        if (__builtin_add_overflow(a->s[i].value, v, &a->s[i].value))
                return tess_err(err, EOVERFLOW, "slot-seconds of '%s' overflow", name);
        return 0;
}

int usage_amount_add_slots(struct usage_amount *a, const struct slots *s, int64_t seconds, struct tess_error **err)
{
        for (int i = 0; i < s->n; i++) {
                if (s->s[i].value == SLOT_INFINITY)
                        continue;
                int r = amount_addv(a, s->s[i].name, (usage_int)s->s[i].value * seconds, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int usage_amount_add(struct usage_amount *a, const struct usage_amount *b, struct tess_error **err)
{
        for (int i = 0; i < b->n; i++) {
                int r = amount_addv(a, b->s[i].name, b->s[i].value, err);
                if (r < 0)
                        return r;
        }
        return 0;
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

/* "7200", "7200.5" into quanta-seconds (value x scale); no sign, no
 * exponent, nothing finer than the slot's quantum. */
static int parse_value(const char *name, const char *s, usage_int *ret, struct tess_error **err)
{
        int64_t scale = slot_scale(name);
        int maxf = digits_of(scale), fdigits = 0;
        usage_int ip = 0, fp = 0;
        const char *p = s;

        if (!isdigit((unsigned char)*p))
                return tess_err(err, EINVAL, "slot-seconds of '%s': malformed number '%.32s'", name, s);
        for (; isdigit((unsigned char)*p); p++)
                if (__builtin_mul_overflow(ip, 10, &ip) || __builtin_add_overflow(ip, *p - '0', &ip))
                        return tess_err(err, EINVAL, "slot-seconds of '%s': value too large", name);
        if (*p == '.') {
                p++;
                if (!isdigit((unsigned char)*p))
                        return tess_err(err, EINVAL, "slot-seconds of '%s': malformed number '%.32s'", name, s);
                for (; isdigit((unsigned char)*p); p++) {
                        if (fdigits >= maxf) {
                                if (*p != '0')
                                        return tess_err(err, EINVAL, "slot-seconds of '%s': finer than the quantum",
                                                        name);
                                continue;
                        }
                        fp = fp * 10 + (*p - '0');
                        fdigits++;
                }
        }
        if (*p)
                return tess_err(err, EINVAL, "slot-seconds of '%s': malformed number '%.32s'", name, s);
        for (; fdigits < maxf; fdigits++)
                fp *= 10;
        if (__builtin_mul_overflow(ip, scale, &ip) || __builtin_add_overflow(ip, fp, &ip))
                return tess_err(err, EINVAL, "slot-seconds of '%s': value too large", name);
        *ret = ip;
        return 0;
}

int usage_amount_from_json(struct usage_amount *a, const json_t *obj, struct tess_error **err)
{
        const char *key;
        json_t *v;

        usage_amount_init(a);
        if (!obj || json_is_null(obj))
                return 0;
        if (!json_is_object(obj))
                return tess_err(err, EINVAL, "slot-seconds must be an object");
        json_object_foreach((json_t *)obj, key, v) {
                usage_int q = 0;
                int r = 0;
                if (json_is_integer(v) && json_integer_value(v) >= 0)
                        q = (usage_int)json_integer_value(v) * slot_scale(key);
                else if (json_is_string(v))
                        r = parse_value(key, json_string_value(v), &q, err);
                else
                        r = tess_err(err, EINVAL, "slot-seconds of '%.64s' must be a decimal string", key);
                if (r < 0)
                        return r;
                r = amount_addv(a, key, q, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int usage_amount_from_text(struct usage_amount *a, const char *text, struct tess_error **err)
{
        json_error_t jerr;
        json_t *obj;
        int r;

        usage_amount_init(a);
        if (!text || !*text)
                return 0;
        obj = json_loads(text, 0, &jerr);
        if (!obj)
                return tess_err(err, EINVAL, "slot-seconds: %s", jerr.text);
        r = usage_amount_from_json(a, obj, err);
        json_decref(obj);
        return r;
}

/* Unsigned 128-bit decimal into buf; returns the length. */
static size_t u128_format(unsigned __int128 v, char *buf)
{
        char tmp[48];
        size_t n = 0, i;

        do {
                tmp[n++] = (char)('0' + (int)(v % 10));
                v /= 10;
        } while (v);
        for (i = 0; i < n; i++)
                buf[i] = tmp[n - 1 - i];
        buf[n] = '\0';
        return n;
}

char *usage_value_format(const char *slot, usage_int v, char *buf, size_t len)
{
        int64_t scale = slot_scale(slot);
        char ip[48], fp[24];
        bool neg = v < 0;
        unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
        unsigned long long frac = (unsigned long long)(u % (unsigned)scale);
        int d = digits_of(scale);

        u128_format(u / (unsigned)scale, ip);
        if (frac == 0) {
                snprintf(buf, len, "%s%s", neg ? "-" : "", ip);
                return buf;
        }
        while (frac % 10 == 0) {
                frac /= 10;
                d--;
        }
        snprintf(fp, sizeof(fp), "%0*llu", d, frac);
        snprintf(buf, len, "%s%s.%s", neg ? "-" : "", ip, fp);
        return buf;
}

static int cmp_names(const void *a, const void *b, void *data)
{
        const struct usage_amount *am = data;
        return strcmp(am->s[*(const int *)a].name, am->s[*(const int *)b].name);
}

json_t *usage_amount_to_json(const struct usage_amount *a)
{
        json_t *o = json_object();
        int order[SLOTS_MAX];
        char tmp[64];

        for (int i = 0; i < a->n; i++)
                order[i] = i;
        qsort_r(order, (size_t)a->n, sizeof(int), cmp_names, (void *)a);
        for (int i = 0; i < a->n; i++) {
                int k = order[i];
                json_object_set_new(o, a->s[k].name,
                                    json_string(usage_value_format(a->s[k].name, a->s[k].value, tmp, sizeof(tmp))));
        }
        return o;
}

char *usage_amount_to_text(const struct usage_amount *a)
{
        json_t *o = usage_amount_to_json(a);
        char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(o);
        if (!t)
                abort();
        return t;
}

double usage_amount_units(const struct usage_amount *a, const char *slot)
{
        return (double)usage_amount_get(a, slot) / (double)slot_scale(slot);
}

#define GIB (1024.0 * 1024.0 * 1024.0)

static const struct {
        const char *slot;
        double per_unit_second;
} fair_share_weights[] = {
        { "cpu", 1.0 },
        { "mem", 0.125 / GIB },
        { "cuda.device", 10.0 },
        { "cuda.shares", 10.0 },
};

double usage_weight(const struct usage_amount *a)
{
        double sum = 0;

        for (int i = 0; i < a->n; i++) {
                double w = 1.0;
                for (size_t k = 0; k < ARRAY_SIZE(fair_share_weights); k++)
                        if (streq(fair_share_weights[k].slot, a->s[i].name))
                                w = fair_share_weights[k].per_unit_second;
                sum += w * ((double)a->s[i].value / (double)slot_scale(a->s[i].name));
        }
        return sum;
}

/* ---- records ---- */

/* Add one day's span to its usage_daily row. */
static int record_day(struct manager *m, const char *session_id, const char *user_id, const char *project_id,
                      const char *domain, const char *resource_group, const struct slots *slots,
                      const struct usage_span *span, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *old = NULL;
        _cleanup_free_ char *text = NULL;
        struct usage_amount amount;
        int64_t seconds = span->seconds;
        char day[16];
        int r;

        usage_day_format(span->day, day, sizeof(day));
        r = DBQ(m->db, "SELECT seconds, slot_seconds FROM usage_daily WHERE day = ? AND session_id = ?", &old, err,
                DB_TEXT(day), DB_TEXT(session_id));
        if (r < 0)
                return r;
        usage_amount_init(&amount);
        if (old->nrows > 0) {
                seconds += db_get_int(old, 0, "seconds");
                r = usage_amount_from_text(&amount, db_get(old, 0, 1), err);
                if (r < 0)
                        return r;
        }
        r = usage_amount_add_slots(&amount, slots, span->seconds, err);
        if (r < 0)
                return r;
        text = usage_amount_to_text(&amount);
        r = DBQ(m->db,
                "INSERT INTO usage_daily (day, session_id, user_id, project_id, domain_name, resource_group,"
                " seconds, slot_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day, session_id)"
                " DO UPDATE SET seconds = excluded.seconds, slot_seconds = excluded.slot_seconds",
                NULL, err, DB_TEXT(day), DB_TEXT(session_id), DB_TEXT(user_id), DB_TEXT(project_id), DB_TEXT(domain),
                DB_TEXT(resource_group ? resource_group : ""), DB_INT(seconds), DB_TEXT(text));
        return r < 0 ? r : 0;
}

int usage_record(struct manager *m, const char *session_id, const char *user_id, const char *project_id,
                 const char *domain, const char *resource_group, const char *occupying_slots, int64_t from,
                 int64_t to, struct tess_error **err)
{
        _cleanup_free_ struct usage_span *spans = NULL;
        struct slots slots;
        size_t n = usage_split_days(from, to, NULL, 0);
        int r;

        if (n == 0)
                return 0;
        r = slots_from_text(&slots, occupying_slots, err);
        if (r < 0)
                return tess_err_wrap(err, "recording the usage of session '%s'", session_id);
        spans = xcalloc(n, sizeof(*spans));
        usage_split_days(from, to, spans, n);
        for (size_t i = 0; i < n; i++) {
                r = record_day(m, session_id, user_id, project_id, domain, resource_group, &slots, &spans[i], err);
                if (r < 0)
                        return tess_err_wrap(err, "recording the usage of session '%s'", session_id);
        }
        return 0;
}

void usage_measured_add(struct usage_measured *a, const struct usage_measured *b)
{
        a->cpu_used_usec += b->cpu_used_usec;
        a->io_read_bytes += b->io_read_bytes;
        a->io_write_bytes += b->io_write_bytes;
        if (b->mem_peak_bytes > a->mem_peak_bytes)
                a->mem_peak_bytes = b->mem_peak_bytes;
}

void usage_filter_sql(const struct usage_filter *f, const char *alias, struct buf *sql, struct db_arg *args,
                       int *nargs)
{
        if (f->domain) {
                buf_printf(sql, " AND %s.domain_name = ?", alias);
                args[(*nargs)++] = DB_TEXT(f->domain);
        }
        if (f->user_id) {
                buf_printf(sql, " AND %s.user_id = ?", alias);
                args[(*nargs)++] = DB_TEXT(f->user_id);
        }
        if (f->project_id) {
                buf_printf(sql, " AND %s.project_id = ?", alias);
                args[(*nargs)++] = DB_TEXT(f->project_id);
        }
}

static void seen_key(struct buf *b, int32_t day, const char *session_id)
{
        buf_reset(b);
        buf_printf(b, "%d|%s", (int)day, session_id);
}

int usage_foreach(struct manager *m, const struct usage_filter *f, int64_t now, usage_piece_fn fn, void *data,
                  struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *live = NULL, *rows = NULL;
        _cleanup_(buf_release) struct buf sql = BUF_INIT, key = BUF_INIT;
        struct strmap live_ids, seen;
        struct db_arg args[8];
        char first[16], last[16];
        int nargs = 0, r;
        int64_t range_end = usage_day_start(f->last_day + 1), range_start = usage_day_start(f->first_day);

        if (f->last_day < f->first_day)
                return 0;
        usage_day_format(f->first_day, first, sizeof(first));
        usage_day_format(f->last_day, last, sizeof(last));

        /* live sessions first: their recorded rows mark days already counted */
        buf_puts(&sql, "SELECT s.id, s.user_id, s.project_id, s.domain_name, s.resource_group, s.occupied_at,"
                       " s.occupying_slots, s.requested_slots FROM sessions s WHERE s.occupied_at IS NOT NULL"
                       " AND s.status IN " USAGE_OCCUPYING_STATUSES " AND s.occupied_at < ?");
        args[nargs++] = DB_INT(range_end < now ? range_end : now);
        usage_filter_sql(f, "s", &sql, args, &nargs);
        buf_puts(&sql, " ORDER BY s.id");
        r = db_query(m->db, sql.data, args, nargs, &live, err);
        if (r < 0)
                return r;

        buf_reset(&sql);
        nargs = 0;
        buf_puts(&sql, "SELECT d.day, d.session_id, d.user_id, d.project_id, d.domain_name, d.resource_group,"
                       " d.seconds, d.slot_seconds, d.cpu_used_usec, d.io_read_bytes, d.io_write_bytes,"
                       " d.mem_peak_bytes FROM usage_daily d WHERE d.day >= ? AND d.day <= ?");
        args[nargs++] = DB_TEXT(first);
        args[nargs++] = DB_TEXT(last);
        usage_filter_sql(f, "d", &sql, args, &nargs);
        buf_puts(&sql, " ORDER BY d.day, d.session_id");
        r = db_query(m->db, sql.data, args, nargs, &rows, err);
        if (r < 0)
                return r;

        strmap_init(&live_ids);
        strmap_init(&seen);
        for (int i = 0; i < live->nrows; i++)
                strmap_put(&live_ids, db_get(live, i, 0), i);
        for (int i = 0; i < rows->nrows && r >= 0; i++) {
                struct usage_piece p = {
                        .session_id = db_get(rows, i, 1),
                        .user_id = db_get(rows, i, 2),
                        .project_id = db_get(rows, i, 3),
                        .domain = db_get(rows, i, 4),
                        .resource_group = db_get(rows, i, 5),
                        .seconds = db_get_int(rows, i, "seconds"),
                        .measured = { .cpu_used_usec = db_get_int(rows, i, "cpu_used_usec"),
                                      .io_read_bytes = db_get_int(rows, i, "io_read_bytes"),
                                      .io_write_bytes = db_get_int(rows, i, "io_write_bytes"),
                                      .mem_peak_bytes = db_get_int(rows, i, "mem_peak_bytes") },
                        .counted = true,
                };
                r = usage_day_parse("day", db_get(rows, i, 0), &p.day, err);
                if (r >= 0)
                        r = usage_amount_from_text(&p.amount, db_get(rows, i, 7), err);
                if (r < 0) {
                        r = tess_err_wrap(err, "usage of session '%s' on %s", p.session_id, db_get(rows, i, 0));
                        break;
                }
                if (strmap_get(&live_ids, p.session_id) >= 0) {
                        seen_key(&key, p.day, p.session_id);
                        strmap_put(&seen, key.data, 1);
                }
                r = fn(&p, data, err);
        }
        for (int i = 0; i < live->nrows && r >= 0; i++) {
                const char *occ = db_get(live, i, 6);
                int64_t from = db_get_int(live, i, "occupied_at"), to = now < range_end ? now : range_end;
                struct usage_span spans[32];
                struct slots slots;

                if (from < range_start)
                        from = range_start;
                r = slots_from_text(&slots, occ && strcmp(occ, "{}") ? occ : db_get(live, i, 7), err);
                if (r < 0) {
                        r = tess_err_wrap(err, "usage of session '%s'", db_get(live, i, 0));
                        break;
                }
                /* at most USAGE_MAX_PERIOD_DAYS + 1 days in a report: a few rounds of 32 */
                while (r >= 0) {
                        size_t n = usage_split_days(from, to, spans, ARRAY_SIZE(spans));
                        size_t got = n < ARRAY_SIZE(spans) ? n : ARRAY_SIZE(spans);
                        for (size_t k = 0; k < got && r >= 0; k++) {
                                struct usage_piece p = {
                                        .day = spans[k].day,
                                        .session_id = db_get(live, i, 0),
                                        .user_id = db_get(live, i, 1),
                                        .project_id = db_get(live, i, 2),
                                        .domain = db_get(live, i, 3),
                                        .resource_group = db_get(live, i, 4) ? db_get(live, i, 4) : "",
                                        .seconds = spans[k].seconds,
                                        .open = true,
                                };
                                seen_key(&key, p.day, p.session_id);
                                p.counted = strmap_get(&seen, key.data) < 0;
                                usage_amount_init(&p.amount);
                                r = usage_amount_add_slots(&p.amount, &slots, p.seconds, err);
                                if (r >= 0)
                                        r = fn(&p, data, err);
                        }
                        if (n <= ARRAY_SIZE(spans))
                                break;
                        from = usage_day_start(spans[got - 1].day + 1);
                }
        }
        strmap_free(&live_ids);
        strmap_free(&seen);
        return r < 0 ? r : 0;
}

/* ---- fair share ---- */

struct fair_share_acc {
        struct strmap index; /* user id -> position in users/usage */
        char **users;
        double *usage;
        int n, cap;
        int32_t today;
        int64_t half_life;
};

static int fair_share_piece(const struct usage_piece *p, void *data, struct tess_error **err UNUSED)
{
        struct fair_share_acc *a = data;
        int i = strmap_get(&a->index, p->user_id);
        double decay = 1.0;

        if (i < 0) {
                if (a->n == a->cap) {
                        a->cap = a->cap ? 2 * a->cap : 16;
                        a->users = xrealloc(a->users, (size_t)a->cap * sizeof(*a->users));
                        a->usage = xrealloc(a->usage, (size_t)a->cap * sizeof(*a->usage));
                }
                i = a->n++;
                a->users[i] = xstrdup(p->user_id);
                a->usage[i] = 0;
                strmap_put(&a->index, p->user_id, i);
        }
        if (a->half_life > 0 && p->day < a->today)
                decay = exp2(-(double)(a->today - p->day) * (double)(USAGE_SEC_PER_DAY * USEC_PER_SEC) /
                             (double)a->half_life);
        a->usage[i] += usage_weight(&p->amount) * decay;
        return 0;
}

static int cmp_user_pos(const void *x, const void *y, void *data)
{
        const struct fair_share_acc *a = data;
        return strcmp(a->users[*(const int *)x], a->users[*(const int *)y]);
}

int usage_fair_share(struct manager *m, int64_t now, int64_t half_life, int64_t lookback, usage_user_fn fn,
                     void *data, struct tess_error **err)
{
        struct fair_share_acc a = { .today = usage_day_of(now), .half_life = half_life };
        struct usage_filter f = { .first_day = usage_day_of(now - (lookback > 0 ? lookback : 0)),
                                  .last_day = usage_day_of(now) };
        int r;

        strmap_init(&a.index);
        r = usage_foreach(m, &f, now, fair_share_piece, &a, err);
        if (r >= 0) {
                _cleanup_free_ int *order = xcalloc((size_t)a.n + 1, sizeof(int));
                for (int i = 0; i < a.n; i++)
                        order[i] = i;
                qsort_r(order, (size_t)a.n, sizeof(int), cmp_user_pos, &a);
                for (int i = 0; i < a.n; i++)
                        fn(a.users[order[i]], a.usage[order[i]], data);
        }
        for (int i = 0; i < a.n; i++)
                free(a.users[i]);
        free(a.users);
        free(a.usage);
        strmap_free(&a.index);
        return r < 0 ? tess_err_wrap(err, "reading usage for fair-share") : 0;
}
