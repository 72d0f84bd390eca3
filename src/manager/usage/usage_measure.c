/* usage_measure.c - see usage_measure.h. */
#include "common/compat.h"

#include <ctype.h>

#include "common/strmap.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/db/db_batch.h"
#include "manager/usage/usage.h"
#include "manager/usage/usage_measure.h"

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

/* What measuring a kernel reads: its last counters, its session, and
 * the peak its session has on the day (NULL when it has no row yet). */
#define KERNEL_COLUMNS                                                                                  \
        "SELECT k.id, k.session_id, k.stat_cpu_used_usec, k.stat_io_read_bytes, k.stat_io_write_bytes," \
        " s.user_id, s.project_id, s.domain_name, s.resource_group, d.mem_peak_bytes AS day_peak"       \
        " FROM kernels k JOIN sessions s ON s.id = k.session_id"                                        \
        " LEFT JOIN usage_daily d ON d.session_id = k.session_id AND d.day = ?"

/* A stored number of row i (NULL: -1). */
static int64_t stored(const struct db_rows *r, int i, const char *col)
{
        const char *v = db_getn(r, i, col);
        return v ? strtoll(v, NULL, 10) : -1;
}

/* What to store now: the new value, else the old one. */
static struct db_arg counter_arg(int64_t cur, int64_t prev)
{
        int64_t v = cur >= 0 ? cur : prev;
        return v >= 0 ? DB_INT(v) : DB_NULLARG;
}

/* One session's part of a report: the sums of its kernels' increases, the
 * largest memory, and a row of KERNEL_COLUMNS for its names. */
struct session_sum {
        int row;
        int64_t cpu, rd, wr, mem;
};

struct measure {
        struct db_batch kernels; /* id, cpu, read, write: the last counters */
        struct db_batch days;    /* session, user, project, domain, group, cpu, read, write, mem */
        struct strmap index;     /* session id -> position in sums */
        struct session_sum *sums;
        int n;
};

static void measure_init(struct measure *w, const char *day, int nrows)
{
        db_batch_init(&w->kernels,
                      "UPDATE kernels SET stat_cpu_used_usec = CAST(v.column2 AS BIGINT),"
                      " stat_io_read_bytes = CAST(v.column3 AS BIGINT),"
                      " stat_io_write_bytes = CAST(v.column4 AS BIGINT) FROM",
                      "WHERE kernels.id = v.column1", 4);
        /* WHERE true: SQLite reads ON CONFLICT after a bare FROM as a join's */
        db_batch_init(&w->days,
                      "INSERT INTO usage_daily (day, session_id, user_id, project_id, domain_name, resource_group,"
                      " cpu_used_usec, io_read_bytes, io_write_bytes, mem_peak_bytes)"
                      " SELECT ?, v.column1, v.column2, v.column3, v.column4, v.column5, CAST(v.column6 AS BIGINT),"
                      " CAST(v.column7 AS BIGINT), CAST(v.column8 AS BIGINT), CAST(v.column9 AS BIGINT) FROM",
                      "WHERE true ON CONFLICT (day, session_id) DO UPDATE SET"
                      " cpu_used_usec = usage_daily.cpu_used_usec + excluded.cpu_used_usec,"
                      " io_read_bytes = usage_daily.io_read_bytes + excluded.io_read_bytes,"
                      " io_write_bytes = usage_daily.io_write_bytes + excluded.io_write_bytes,"
                      " mem_peak_bytes = CASE WHEN excluded.mem_peak_bytes > usage_daily.mem_peak_bytes"
                      " THEN excluded.mem_peak_bytes ELSE usage_daily.mem_peak_bytes END",
                      9);
        db_batch_fixed(&w->days, DB_TEXT(day));
        strmap_init(&w->index);
        w->sums = xcalloc((size_t)nrows + 1, sizeof(*w->sums));
        w->n = 0;
}

static void measure_done(struct measure *w)
{
        db_batch_done(&w->kernels);
        db_batch_done(&w->days);
        strmap_free(&w->index);
        free(w->sums);
}

/* The statistics of the kernel of row i (KERNEL_COLUMNS): its new
 * counters into the kernels batch, its increases into its session's sum. */
static void measure_kernel_row(struct measure *w, const struct db_rows *k, int i, const json_t *stat)
{
        struct usage_counters c;

        usage_counters_from_stat(stat, &c);
        int64_t p_cpu = stored(k, i, "stat_cpu_used_usec"), p_read = stored(k, i, "stat_io_read_bytes"),
                p_write = stored(k, i, "stat_io_write_bytes");
        int64_t cpu = usage_counter_increase(p_cpu, c.cpu_used_usec), rd = usage_counter_increase(p_read, c.io_read),
                wr = usage_counter_increase(p_write, c.io_write);

        if (cpu || rd || wr)
                db_batch_row(&w->kernels,
                             (struct db_arg[]){ DB_TEXT(db_getn(k, i, "id")), counter_arg(c.cpu_used_usec, p_cpu),
                                                counter_arg(c.io_read, p_read), counter_arg(c.io_write, p_write) });
        const char *session = db_getn(k, i, "session_id");
        int s = strmap_get(&w->index, session);
        if (s < 0) {
                s = w->n++;
                w->sums[s] = (struct session_sum){ .row = i };
                strmap_put(&w->index, session, s);
        }
        w->sums[s].cpu += cpu;
        w->sums[s].rd += rd;
        w->sums[s].wr += wr;
        if (c.mem > w->sums[s].mem)
                w->sums[s].mem = c.mem;
}

/* Account the kernels of rows k that `stats` ({"<kernel id>": stat}) has,
 * in two statements (more for thousands of rows).  A session whose
 * kernels used nothing new, with no more memory than its peak of the day,
 * writes nothing. */
static int measure_rows(struct manager *m, const struct db_rows *k, const json_t *stats, const char *day,
                        struct tess_error **err)
{
        struct measure w;
        int r;

        measure_init(&w, day, k->nrows);
        for (int i = 0; i < k->nrows; i++) {
                const json_t *stat = json_object_get(stats, db_getn(k, i, "id"));
                if (stat)
                        measure_kernel_row(&w, k, i, stat);
        }
        for (int s = 0; s < w.n; s++) {
                const struct session_sum *u = &w.sums[s];
                const char *rg = db_getn(k, u->row, "resource_group");
                if (u->cpu == 0 && u->rd == 0 && u->wr == 0 && u->mem <= stored(k, u->row, "day_peak"))
                        continue;
                db_batch_row(&w.days,
                             (struct db_arg[]){ DB_TEXT(db_getn(k, u->row, "session_id")),
                                                DB_TEXT(db_getn(k, u->row, "user_id")),
                                                DB_TEXT(db_getn(k, u->row, "project_id")),
                                                DB_TEXT(db_getn(k, u->row, "domain_name")), DB_TEXT(rg ? rg : ""),
                                                DB_INT(u->cpu), DB_INT(u->rd), DB_INT(u->wr), DB_INT(u->mem) });
        }
        r = db_batch_run(m->db, &w.kernels, err);
        if (r >= 0)
                r = db_batch_run(m->db, &w.days, err);
        measure_done(&w);
        return r < 0 ? r : 0;
}

int usage_measure_kernel(struct manager *m, const char *agent_id, const char *kernel_id, const json_t *stat,
                         int64_t now, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *k = NULL;
        char day[16];
        int r;

        usage_day_format(usage_day_of(now), day, sizeof(day));
        r = DBQ(m->db, KERNEL_COLUMNS " WHERE k.id = ? AND k.agent_id = ?", &k, err, DB_TEXT(day), DB_TEXT(kernel_id),
                DB_TEXT(agent_id));
        if (r < 0 || k->nrows == 0)
                return r < 0 ? r : 0;
        json_t *stats = json_pack("{s:O}", kernel_id, stat);
        r = measure_rows(m, k, stats, day, err);
        json_decref(stats);
        return r;
}

int usage_measure_agent(struct manager *m, const char *agent_id, const json_t *stats, int64_t now,
                        struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *k = NULL;
        char day[16];
        int r;

        if (json_object_size(stats) == 0)
                return 0;
        usage_day_format(usage_day_of(now), day, sizeof(day));
        /* one query for all: a statement per kernel is a round trip each on PostgreSQL */
        r = DBQ(m->db, KERNEL_COLUMNS " WHERE k.agent_id = ? AND k.status IN " USAGE_OCCUPYING_STATUSES, &k, err,
                DB_TEXT(day), DB_TEXT(agent_id));
        return r < 0 ? r : measure_rows(m, k, stats, day, err);
}
