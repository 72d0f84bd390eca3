/* usage_measure.c - see usage_measure.h. */
#include "../common/compat.h"

#include <ctype.h>

#include "db.h"
#include "manager.h"
#include "usage.h"
#include "usage_measure.h"

/* "123", "123.456" as value x 10^decimals, fixed point; digits beyond
 * `decimals` are dropped.  -1 unless well formed and within int64. */
static int64_t parse_fixed(const char *s, int decimals)
{
        int64_t v = 0;
        int d = 0;

        if (!isdigit((unsigned char)*s))
                return -1;
        for (; isdigit((unsigned char)*s); s++)
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
                        return -1;
        if (*s == '.') {
                s++;
                for (; isdigit((unsigned char)*s); s++, d++)
                        if (d < decimals &&
                            (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v)))
                                return -1;
        }
        if (*s)
                return -1;
        for (; d < decimals; d++)
                if (__builtin_mul_overflow(v, 10, &v))
                        return -1;
        return v;
}

/* stat[name].current, scaled by 10^decimals. */
static int64_t counter(const json_t *stat, const char *name, int decimals)
{
        const json_t *cur = json_object_get(json_object_get(stat, name), "current");
        char text[64];

        if (json_is_string(cur))
                return parse_fixed(json_string_value(cur), decimals);
        if (json_is_integer(cur))
                snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(cur));
        else if (json_is_real(cur) && json_real_value(cur) >= 0 && json_real_value(cur) < 1e15)
                snprintf(text, sizeof(text), "%.3f", json_real_value(cur));
        else
                return -1;
        return parse_fixed(text, decimals);
}

void usage_counters_from_stat(const json_t *stat, struct usage_counters *ret)
{
        ret->cpu_used_usec = counter(stat, "cpu_used", 3); /* msec with 3 decimals: usec */
        ret->io_read = counter(stat, "io_read", 0);
        ret->io_write = counter(stat, "io_write", 0);
        ret->mem = counter(stat, "mem", 0);
}

int64_t usage_counter_increase(int64_t prev, int64_t cur)
{
        if (cur < 0)
                return 0;
        if (prev < 0 || cur < prev)
                return cur;
        return cur - prev;
}

/* The stored counter (NULL: -1), and what to store now: the new value,
 * else the old one. */
static int64_t stored(const struct db_rows *r, const char *col)
{
        const char *v = db_getn(r, 0, col);
        return v ? strtoll(v, NULL, 10) : -1;
}

static struct db_arg counter_arg(int64_t cur, int64_t prev)
{
        int64_t v = cur >= 0 ? cur : prev;
        return v >= 0 ? DB_INT(v) : DB_NULLARG;
}

int usage_measure_kernel(struct manager *m, const char *agent_id, const char *kernel_id, const json_t *stat,
                         int64_t now, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *k = NULL;
        struct usage_counters c;
        char day[16];
        int r;

        r = DBQ(m->db,
                "SELECT k.session_id, k.stat_cpu_used_usec, k.stat_io_read_bytes, k.stat_io_write_bytes,"
                " s.user_id, s.project_id, s.domain_name, s.resource_group FROM kernels k"
                " JOIN sessions s ON s.id = k.session_id WHERE k.id = ? AND k.agent_id = ?",
                &k, err, DB_TEXT(kernel_id), DB_TEXT(agent_id));
        if (r < 0 || k->nrows == 0)
                return r < 0 ? r : 0;
        usage_counters_from_stat(stat, &c);
        int64_t p_cpu = stored(k, "stat_cpu_used_usec"), p_read = stored(k, "stat_io_read_bytes"),
                p_write = stored(k, "stat_io_write_bytes");
        int64_t cpu = usage_counter_increase(p_cpu, c.cpu_used_usec), rd = usage_counter_increase(p_read, c.io_read),
                wr = usage_counter_increase(p_write, c.io_write), mem = c.mem > 0 ? c.mem : 0;

        if (cpu == 0 && rd == 0 && wr == 0 && mem == 0)
                return 0;
        if (cpu || rd || wr)
                r = DBQ(m->db,
                        "UPDATE kernels SET stat_cpu_used_usec = ?, stat_io_read_bytes = ?,"
                        " stat_io_write_bytes = ? WHERE id = ?",
                        NULL, err, counter_arg(c.cpu_used_usec, p_cpu), counter_arg(c.io_read, p_read),
                        counter_arg(c.io_write, p_write), DB_TEXT(kernel_id));
        if (r < 0)
                return r;
        usage_day_format(usage_day_of(now), day, sizeof(day));
        r = DBQ(m->db,
                "INSERT INTO usage_daily (day, session_id, user_id, project_id, domain_name, resource_group,"
                " cpu_used_usec, io_read_bytes, io_write_bytes, mem_peak_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (day, session_id) DO UPDATE SET"
                " cpu_used_usec = usage_daily.cpu_used_usec + excluded.cpu_used_usec,"
                " io_read_bytes = usage_daily.io_read_bytes + excluded.io_read_bytes,"
                " io_write_bytes = usage_daily.io_write_bytes + excluded.io_write_bytes,"
                " mem_peak_bytes = CASE WHEN excluded.mem_peak_bytes > usage_daily.mem_peak_bytes"
                " THEN excluded.mem_peak_bytes ELSE usage_daily.mem_peak_bytes END",
                NULL, err, DB_TEXT(day), DB_TEXT(db_getn(k, 0, "session_id")), DB_TEXT(db_getn(k, 0, "user_id")),
                DB_TEXT(db_getn(k, 0, "project_id")), DB_TEXT(db_getn(k, 0, "domain_name")),
                DB_TEXT(db_getn(k, 0, "resource_group") ? db_getn(k, 0, "resource_group") : ""), DB_INT(cpu),
                DB_INT(rd), DB_INT(wr), DB_INT(mem));
        return r < 0 ? r : 0;
}
