/* test_usage.c - usage accounting arithmetic: days, splitting intervals at
 * UTC midnights, exact slot-seconds and fair-share weights; measured use
 * from cumulative counters (usage_measure.h). */
#include "common/compat.h"

#include <math.h>

#include "../lib/test.h"
#include "common/timeutil.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/usage/usage.h"
#include "manager/usage/usage_measure.h"

#define S USEC_PER_SEC
#define DAY (USAGE_SEC_PER_DAY * S)
/* 2025-07-22T00:00:00Z, day 20291 */
#define D0 (1753142400LL * S)

static void test_usage_days(void)
{
        char buf[16];
        int32_t d = -1;

        CHECK_INTEQ(usage_day_of(0), 0);
        CHECK_INTEQ(usage_day_of(DAY - 1), 0);
        CHECK_INTEQ(usage_day_of(DAY), 1);
        CHECK_INTEQ(usage_day_of(-1), -1); /* floors before the epoch */
        CHECK_INTEQ(usage_day_of(D0), 20291);
        CHECK_INTEQ(usage_day_start(20291), D0);
        CHECK_STREQ(usage_day_format(0, buf, sizeof(buf)), "1970-01-01");
        CHECK_STREQ(usage_day_format(20291, buf, sizeof(buf)), "2025-07-22");
        CHECK_STREQ(usage_day_format(11016, buf, sizeof(buf)), "2000-02-29");
        CHECK_STREQ(usage_day_format(-1, buf, sizeof(buf)), "1969-12-31");

        CHECK(usage_day_parse("start_date", "20250722", &d, NULL) == 0 && d == 20291);
        CHECK(usage_day_parse("start_date", "2025-07-22", &d, NULL) == 0 && d == 20291);
        CHECK(usage_day_parse("start_date", "20000229", &d, NULL) == 0 && d == 11016);
        CHECK(usage_day_parse("start_date", "19700101", &d, NULL) == 0 && d == 0);
        /* every day of 1970..2100 round-trips */
        for (int32_t x = 0; x < 47000; x++) {
                int32_t y = -1;
                if (usage_day_parse("d", usage_day_format(x, buf, sizeof(buf)), &y, NULL) < 0 || y != x) {
                        test_fail(__FILE__, __LINE__, "day %d does not round-trip ('%s' -> %d)", x, buf, y);
                        break;
                }
        }
}

static void test_usage_day_parse_errors(void)
{
        static const char *const bad_format[] = { "", "2025072", "202507221", "2025/07/22", "2025-7-22",
                                                  "20250722 ", "x0250722", "2025-07-2x", "-2025072" };
        static const char *const bad_date[] = { "20250230", "20251301", "20250000", "20250732", "19691231",
                                                "20230229", "21000229", "2025-02-29" };
        struct tess_error *err = NULL;
        int32_t d = 42;

        for (size_t i = 0; i < ARRAY_SIZE(bad_format); i++) {
                CHECK(usage_day_parse("start_date", bad_format[i], &d, &err) == -EINVAL);
                CHECK(err && strstr(err->msg, "'start_date' must be a date written YYYYMMDD"));
                err = tess_error_free(err);
        }
        for (size_t i = 0; i < ARRAY_SIZE(bad_date); i++) {
                CHECK(usage_day_parse("end_date", bad_date[i], &d, &err) == -EINVAL);
                CHECK(err && strstr(err->msg, "'end_date' is not a calendar date"));
                err = tess_error_free(err);
        }
        CHECK_INTEQ(d, 42); /* untouched on failure */
}

static void test_usage_split_one_day(void)
{
        struct usage_span s[4];

        /* 10:00 to 11:00 */
        CHECK_INTEQ(usage_split_days(D0 + 10 * 3600 * S, D0 + 11 * 3600 * S, s, 4), 1);
        CHECK_INTEQ(s[0].day, 20291);
        CHECK_INTEQ(s[0].seconds, 3600);
        /* a whole day is exactly one span */
        CHECK_INTEQ(usage_split_days(D0, D0 + DAY, s, 4), 1);
        CHECK_INTEQ(s[0].seconds, 86400);
        /* ends are cut to whole seconds: [10.9 s, 12.2 s) is [10, 12) */
        CHECK_INTEQ(usage_split_days(D0 + 10 * S + 900000, D0 + 12 * S + 200000, s, 4), 1);
        CHECK_INTEQ(s[0].seconds, 2);
        /* shorter than a second, empty and reversed intervals: nothing */
        CHECK_INTEQ(usage_split_days(D0 + 100, D0 + 900000, s, 4), 0);
        CHECK_INTEQ(usage_split_days(D0, D0, s, 4), 0);
        CHECK_INTEQ(usage_split_days(D0 + S, D0, s, 4), 0);
}

static void test_usage_split_midnights(void)
{
        struct usage_span s[8];

        /* 23:00 to 01:00 the next day: one hour on each */
        CHECK_INTEQ(usage_split_days(D0 - 3600 * S, D0 + 3600 * S, s, 8), 2);
        CHECK_INTEQ(s[0].day, 20290);
        CHECK_INTEQ(s[0].seconds, 3600);
        CHECK_INTEQ(s[1].day, 20291);
        CHECK_INTEQ(s[1].seconds, 3600);
        /* ending exactly at midnight does not touch the next day */
        CHECK_INTEQ(usage_split_days(D0 - 60 * S, D0, s, 8), 1);
        CHECK_INTEQ(s[0].day, 20290);
        CHECK_INTEQ(s[0].seconds, 60);
        /* starting exactly at midnight */
        CHECK_INTEQ(usage_split_days(D0, D0 + 60 * S, s, 8), 1);
        CHECK_INTEQ(s[0].day, 20291);
        /* 12:00 on day 0 to 06:00 on day 3: 12 h, 24 h, 24 h, 6 h */
        CHECK_INTEQ(usage_split_days(D0 + 12 * 3600 * S, D0 + 3 * DAY + 6 * 3600 * S, s, 8), 4);
        CHECK_INTEQ(s[0].seconds, 12 * 3600);
        CHECK_INTEQ(s[1].seconds, 86400);
        CHECK_INTEQ(s[2].seconds, 86400);
        CHECK_INTEQ(s[3].seconds, 6 * 3600);
        CHECK_INTEQ(s[3].day, 20294);
        /* before the epoch too */
        CHECK_INTEQ(usage_split_days(-10 * S, 10 * S, s, 8), 2);
        CHECK_INTEQ(s[0].day, -1);
        CHECK_INTEQ(s[0].seconds, 10);
        CHECK_INTEQ(s[1].seconds, 10);
}

static void test_usage_split_counts_like_snprintf(void)
{
        struct usage_span s[3] = { { 7, 7 }, { 7, 7 }, { 7, 7 } };
        int64_t from = D0 + 5 * S, to = D0 + 400 * DAY + 5 * S, total = 0;

        CHECK_INTEQ(usage_split_days(from, to, NULL, 0), 401);
        CHECK_INTEQ(usage_split_days(from, to, s, 2), 401);
        CHECK_INTEQ(s[2].day, 7); /* not written beyond max */
        CHECK_INTEQ(s[0].seconds, 86400 - 5);

        /* the spans always add up to the whole (cut) interval */
        struct usage_span *all = xcalloc(401, sizeof(*all));
        usage_split_days(from, to, all, 401);
        for (int i = 0; i < 401; i++) {
                total += all[i].seconds;
                if (i > 0)
                        CHECK_INTEQ(all[i].day, all[i - 1].day + 1);
        }
        CHECK_INTEQ(total, 400 * 86400);
        free(all);
}

static void test_usage_amount_exact(void)
{
        struct usage_amount a;
        struct slots s;
        char *text;

        CHECK(slots_from_text(&s, "{\"cpu\": \"2\", \"mem\": \"4294967296\", \"cuda.shares\": \"0.5\"}", NULL) == 0);
        usage_amount_init(&a);
        CHECK(usage_amount_add_slots(&a, &s, 3600, NULL) == 0);
        text = usage_amount_to_text(&a);
        CHECK_STREQ(text, "{\"cpu\":\"7200\",\"cuda.shares\":\"1800\",\"mem\":\"15461882265600\"}");
        free(text);
        CHECK(usage_amount_units(&a, "cpu") == 7200.0);
        CHECK(usage_amount_units(&a, "cuda.shares") == 1800.0);

        /* fractions of a core for an odd number of seconds stay exact */
        CHECK(slots_from_text(&s, "{\"cpu\": \"0.001\", \"cuda.shares\": \"0.01\"}", NULL) == 0);
        usage_amount_init(&a);
        CHECK(usage_amount_add_slots(&a, &s, 7, NULL) == 0);
        text = usage_amount_to_text(&a);
        CHECK_STREQ(text, "{\"cpu\":\"0.007\",\"cuda.shares\":\"0.07\"}");
        free(text);

        /* the stored text reads back to the same amount, and adds */
        struct usage_amount b;
        CHECK(usage_amount_from_text(&b, "{\"cpu\":\"0.007\",\"cuda.shares\":\"0.07\"}", NULL) == 0);
        CHECK(usage_amount_add(&a, &b, NULL) == 0);
        text = usage_amount_to_text(&a);
        CHECK_STREQ(text, "{\"cpu\":\"0.014\",\"cuda.shares\":\"0.14\"}");
        free(text);
        CHECK(usage_amount_from_text(&b, "{}", NULL) == 0 && b.n == 0);
        CHECK(usage_amount_from_text(&b, NULL, NULL) == 0 && b.n == 0);
        CHECK(usage_amount_from_text(&b, "{\"cpu\": \"x\"}", NULL) < 0);
        CHECK(usage_amount_from_text(&b, "{\"cpu\": \"0.0001\"}", NULL) < 0);
        CHECK(usage_amount_from_text(&b, "{\"cpu\": true}", NULL) < 0);
        CHECK(usage_amount_from_text(&b, "[", NULL) < 0);
}

static void test_usage_amount_beyond_64_bits(void)
{
        struct usage_amount a;
        struct slots s;
        char buf[64];

        /* 1 PiB of memory for 100 days: 1.1e22 byte-seconds, past INT64_MAX */
        CHECK(slots_from_text(&s, "{\"mem\": \"1125899906842624\"}", NULL) == 0);
        usage_amount_init(&a);
        for (int i = 0; i < 100; i++)
                CHECK(usage_amount_add_slots(&a, &s, 86400, NULL) == 0);
        CHECK_STREQ(usage_value_format("mem", usage_amount_get(&a, "mem"), buf, sizeof(buf)),
                    "9727775195120271360000");
        /* and it parses back */
        struct usage_amount b;
        CHECK(usage_amount_from_text(&b, "{\"mem\": \"9727775195120271360000\"}", NULL) == 0);
        CHECK(usage_amount_get(&b, "mem") == usage_amount_get(&a, "mem"));
        /* unlimited values are not usage */
        CHECK(slots_from_text(&s, "{\"cpu\": \"Infinity\"}", NULL) == 0);
        usage_amount_init(&a);
        CHECK(usage_amount_add_slots(&a, &s, 10, NULL) == 0);
        CHECK_INTEQ(a.n, 0);
}

static void test_usage_weights(void)
{
        struct usage_amount a;
        struct slots s;

        /* an hour of 4 cores, 16 GiB and one GPU: 3600 x (4 + 2 + 10) */
        CHECK(slots_from_text(&s, "{\"cpu\": 4, \"mem\": \"16g\", \"cuda.device\": 1}", NULL) == 0);
        usage_amount_init(&a);
        CHECK(usage_amount_add_slots(&a, &s, 3600, NULL) == 0);
        CHECK(fabs(usage_weight(&a) - 57600.0) < 1e-6);
        /* half an fGPU for an hour weighs like 5 GPU-less cores */
        CHECK(slots_from_text(&s, "{\"cuda.shares\": \"0.5\"}", NULL) == 0);
        usage_amount_init(&a);
        CHECK(usage_amount_add_slots(&a, &s, 3600, NULL) == 0);
        CHECK(fabs(usage_weight(&a) - 18000.0) < 1e-6);
        /* an unknown slot weighs 1 per unit-second */
        CHECK(slots_from_text(&s, "{\"rocm.device\": 2}", NULL) == 0);
        usage_amount_init(&a);
        CHECK(usage_amount_add_slots(&a, &s, 10, NULL) == 0);
        CHECK(fabs(usage_weight(&a) - 20.0) < 1e-9);
        usage_amount_init(&a);
        CHECK(usage_weight(&a) == 0.0);
}

/* ---- against a real (SQLite) database ---- */

struct db_fixture {
        char dir[64];
        struct manager m;
};

static bool fixture_open(struct db_fixture *f)
{
        _cleanup_free_ char *url = NULL;
        struct tess_error *err = NULL;

        memset(f, 0, sizeof(*f));
        snprintf(f->dir, sizeof(f->dir), "/tmp/tessera-test-usage.XXXXXX");
        if (!mkdtemp(f->dir))
                return false;
        url = xasprintf("sqlite:%s/t.db", f->dir);
        if (db_open(url, false, &f->m.db, &err) < 0 || db_migrate(f->m.db, &err) < 0) {
                test_fail(__FILE__, __LINE__, "opening %s: %s", url, err ? err->msg : "?");
                tess_error_free(err);
                return false;
        }
        return true;
}

static void fixture_close(struct db_fixture *f)
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", f->dir);
        f->m.db = db_close(f->m.db);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "could not remove %s", f->dir);
}

/* A live session (the columns usage reads; the rest defaulted). */
static void add_session(struct db_fixture *f, const char *id, const char *user, const char *status,
                        int64_t occupied_at, const char *slots)
{
        int r = DBQ(f->m.db,
                    "INSERT INTO sessions (id, name, domain_name, project_id, user_id, access_key, image, status,"
                    " status_changed_at, created_at, occupied_at, occupying_slots) VALUES (?, ?, 'default', 'p1',"
                    " ?, 'AK', 'img', ?, 0, 0, ?, ?)",
                    NULL, NULL, DB_TEXT(id), DB_TEXT(id), DB_TEXT(user), DB_TEXT(status), DB_INT(occupied_at),
                    DB_TEXT(slots));
        CHECK(r == 1);
}

static void test_usage_record_adds_per_day(void)
{
        struct db_fixture f;
        _cleanup_rows_ struct db_rows *rows = NULL;

        if (!fixture_open(&f))
                return;
        /* 23:00 to 02:00, then 03:00 to 04:00 on the same (second) day */
        CHECK(usage_record(&f.m, "s1", "u1", "p1", "default", NULL, "{\"cpu\": \"2\"}", D0 - 3600 * S,
                           D0 + 2 * 3600 * S, NULL) == 0);
        CHECK(usage_record(&f.m, "s1", "u1", "p1", "default", "rg", "{\"cpu\": \"2\"}", D0 + 3 * 3600 * S,
                           D0 + 4 * 3600 * S, NULL) == 0);
        /* nothing for an empty interval */
        CHECK(usage_record(&f.m, "s2", "u1", "p1", "default", NULL, "{}", D0, D0, NULL) == 0);
        CHECK(db_query(f.m.db, "SELECT day, seconds, slot_seconds, resource_group FROM usage_daily ORDER BY day",
                       NULL, 0, &rows, NULL) >= 0);
        CHECK_INTEQ(rows->nrows, 2);
        if (rows->nrows == 2) {
                CHECK_STREQ(db_get(rows, 0, 0), "2025-07-21");
                CHECK_STREQ(db_get(rows, 0, 1), "3600");
                CHECK_STREQ(db_get(rows, 0, 2), "{\"cpu\":\"7200\"}");
                CHECK_STREQ(db_get(rows, 0, 3), "");
                CHECK_STREQ(db_get(rows, 1, 0), "2025-07-22");
                CHECK_STREQ(db_get(rows, 1, 1), "10800");
                CHECK_STREQ(db_get(rows, 1, 2), "{\"cpu\":\"21600\"}");
        }
        /* bad slots are an error naming the session */
        struct tess_error *err = NULL;
        CHECK(usage_record(&f.m, "s3", "u1", "p1", "default", NULL, "{\"cpu\": \"-1\"}", D0, D0 + S, &err) < 0);
        CHECK(err && strstr(err->msg, "session 's3'"));
        tess_error_free(err);
        fixture_close(&f);
}

struct pieces {
        int n, counted, open;
        int64_t seconds;
};

static int count_piece(const struct usage_piece *p, void *data, struct tess_error **err UNUSED)
{
        struct pieces *c = data;
        c->n++;
        c->counted += p->counted;
        c->open += p->open;
        c->seconds += p->seconds;
        return 0;
}

static int sum_measured(const struct usage_piece *p, void *data, struct tess_error **err UNUSED)
{
        usage_measured_add(data, &p->measured);
        return 0;
}

static double fair_u1, fair_u2;
static int fair_calls;

static void fair_fn(const char *user, double usage, void *data UNUSED)
{
        fair_calls++;
        if (streq(user, "u1"))
                fair_u1 = usage;
        else if (streq(user, "u2"))
                fair_u2 = usage;
}

static void test_usage_foreach_and_fair_share(void)
{
        struct db_fixture f;
        int64_t now = D0 + 12 * 3600 * S;

        if (!fixture_open(&f))
                return;
        /* u1: 1 h of 2 cores yesterday, 3 h today, and running again since 11:00 */
        CHECK(usage_record(&f.m, "s1", "u1", "p1", "default", "", "{\"cpu\": \"2\"}", D0 - 3600 * S,
                           D0 + 2 * 3600 * S, NULL) == 0);
        add_session(&f, "s1", "u1", "RUNNING", D0 + 11 * 3600 * S, "{\"cpu\": \"2\"}");
        /* u2: one core since 11:00; a PENDING one with a stale occupied_at counts nothing */
        add_session(&f, "s2", "u2", "SCHEDULED", D0 + 11 * 3600 * S, "{\"cpu\": \"1\"}");
        add_session(&f, "s3", "u2", "PENDING", D0, "{\"cpu\": \"64\"}");
        add_session(&f, "s4", "u2", "TERMINATED", D0, "{\"cpu\": \"64\"}");

        struct pieces c = { 0 };
        struct usage_filter all = { .first_day = 20290, .last_day = 20291 };
        CHECK(usage_foreach(&f.m, &all, now, count_piece, &c, NULL) == 0);
        CHECK_INTEQ(c.n, 4);       /* two recorded days, two open intervals today */
        CHECK_INTEQ(c.open, 2);
        CHECK_INTEQ(c.counted, 3); /* s1 today is one session-day, not two */
        CHECK_INTEQ(c.seconds, 3600 + 7200 + 3600 + 3600);

        /* filters: one user, one day; a day after now sees no open time */
        struct pieces c2 = { 0 };
        struct usage_filter u2 = { .first_day = 20291, .last_day = 20291, .user_id = "u2" };
        CHECK(usage_foreach(&f.m, &u2, now, count_piece, &c2, NULL) == 0);
        CHECK_INTEQ(c2.n, 1);
        CHECK_INTEQ(c2.seconds, 3600);
        struct pieces c3 = { 0 };
        struct usage_filter yesterday = { .first_day = 20290, .last_day = 20290 };
        CHECK(usage_foreach(&f.m, &yesterday, now, count_piece, &c3, NULL) == 0);
        CHECK_INTEQ(c3.n, 1);
        CHECK_INTEQ(c3.open, 0);

        /* half-life one day: yesterday's 7200 core-seconds count half */
        CHECK(usage_fair_share(&f.m, now, USAGE_SEC_PER_DAY * S, 7 * USAGE_SEC_PER_DAY * S, fair_fn, NULL, NULL) ==
              0);
        CHECK_INTEQ(fair_calls, 2);
        CHECK(fabs(fair_u1 - (3600.0 + 14400.0 + 7200.0)) < 1e-6);
        CHECK(fabs(fair_u2 - 3600.0) < 1e-6);
        /* no decay; a lookback of one hour still reads today only */
        CHECK(usage_fair_share(&f.m, now, 0, 3600 * S, fair_fn, NULL, NULL) == 0);
        CHECK(fabs(fair_u1 - (14400.0 + 7200.0)) < 1e-6);
        fixture_close(&f);
}


/* ---- measured use ---- */

static void test_usage_counters_from_stat(void)
{
        struct usage_counters c;
        json_t *st = json_loads("{\"cpu_used\": {\"current\": \"1234.5\", \"unit_hint\": \"msec\"},"
                                " \"io_read\": {\"current\": \"4096\"}, \"io_write\": {\"current\": 512},"
                                " \"mem\": {\"current\": \"1048576\", \"capacity\": \"268435456\"}}",
                                0, NULL);

        usage_counters_from_stat(st, &c);
        CHECK_INTEQ(c.cpu_used_usec, 1234500);
        CHECK_INTEQ(c.io_read, 4096);
        CHECK_INTEQ(c.io_write, 512);
        CHECK_INTEQ(c.mem, 1048576);
        json_decref(st);

        /* finer than usec is dropped; missing, negative and malformed are -1 */
        st = json_loads("{\"cpu_used\": {\"current\": \"0.12345\"}, \"io_read\": {\"current\": \"-1\"},"
                        " \"io_write\": {\"current\": \"1e3\"}}",
                        0, NULL);
        usage_counters_from_stat(st, &c);
        CHECK_INTEQ(c.cpu_used_usec, 123);
        CHECK_INTEQ(c.io_read, -1);
        CHECK_INTEQ(c.io_write, -1);
        CHECK_INTEQ(c.mem, -1);
        json_decref(st);
        st = json_loads("{\"cpu_used\": {\"current\": \"99999999999999999999\"}, \"mem\": 5}", 0, NULL);
        usage_counters_from_stat(st, &c);
        CHECK_INTEQ(c.cpu_used_usec, -1); /* beyond int64 */
        CHECK_INTEQ(c.mem, -1);
        json_decref(st);
        usage_counters_from_stat(NULL, &c);
        CHECK_INTEQ(c.cpu_used_usec, -1);
}

static void test_usage_counter_increase(void)
{
        CHECK_INTEQ(usage_counter_increase(-1, 500), 500); /* first report: all since the start */
        CHECK_INTEQ(usage_counter_increase(500, 800), 300);
        CHECK_INTEQ(usage_counter_increase(800, 800), 0); /* repeated */
        CHECK_INTEQ(usage_counter_increase(800, 100), 100); /* started over */
        CHECK_INTEQ(usage_counter_increase(800, -1), 0);    /* not reported */
        CHECK_INTEQ(usage_counter_increase(-1, -1), 0);
}

static void add_kernel(struct db_fixture *f, const char *id, const char *session, const char *agent)
{
        int r = DBQ(f->m.db,
                    "INSERT INTO kernels (id, session_id, agent_id, image, status, created_at)"
                    " VALUES (?, ?, ?, 'img', 'RUNNING', 0)",
                    NULL, NULL, DB_TEXT(id), DB_TEXT(session), DB_TEXT(agent));
        CHECK(r == 1);
}

static void measure(struct db_fixture *f, const char *agent, const char *kernel, const char *stat, int64_t now)
{
        json_t *st = json_loads(stat, 0, NULL);
        struct tess_error *err = NULL;

        CHECK(st != NULL);
        CHECK(db_begin(f->m.db, NULL) == 0);
        CHECK(usage_measure_kernel(&f->m, agent, kernel, st, now, &err) == 0);
        CHECK(db_commit(f->m.db, NULL) == 0);
        if (err)
                test_fail(__FILE__, __LINE__, "%s", err->msg);
        tess_error_free(err);
        json_decref(st);
}

#define STAT(cpu, rd, wr, mem)                                                                          \
        "{\"cpu_used\": {\"current\": \"" cpu "\"}, \"io_read\": {\"current\": \"" rd "\"},"  \
        " \"io_write\": {\"current\": \"" wr "\"}, \"mem\": {\"current\": \"" mem "\"}}"

/* The measured columns of session s1's row of `day`. */
static void check_day(struct db_fixture *f, const char *day, int64_t cpu, int64_t rd, int64_t wr, int64_t mem)
{
        _cleanup_rows_ struct db_rows *rows = NULL;

        CHECK(DBQ(f->m.db,
                  "SELECT cpu_used_usec, io_read_bytes, io_write_bytes, mem_peak_bytes, seconds FROM usage_daily"
                  " WHERE day = ? AND session_id = 's1'",
                  &rows, NULL, DB_TEXT(day)) >= 0);
        CHECK_INTEQ(rows->nrows, 1);
        if (rows->nrows != 1)
                return;
        CHECK_INTEQ(db_get_int(rows, 0, "cpu_used_usec"), cpu);
        CHECK_INTEQ(db_get_int(rows, 0, "io_read_bytes"), rd);
        CHECK_INTEQ(db_get_int(rows, 0, "io_write_bytes"), wr);
        CHECK_INTEQ(db_get_int(rows, 0, "mem_peak_bytes"), mem);
}

static void test_usage_measure_kernel(void)
{
        struct db_fixture f;
        struct pieces c = { 0 };

        if (!fixture_open(&f))
                return;
        add_session(&f, "s1", "u1", "RUNNING", D0, "{\"cpu\": \"2\"}");
        add_kernel(&f, "k1", "s1", "a1");
        add_kernel(&f, "k2", "s1", "a1"); /* a cluster session's second kernel */

        measure(&f, "a1", "k1", STAT("1000.5", "100", "10", "4096"), D0 + S);
        check_day(&f, "2025-07-22", 1000500, 100, 10, 4096);
        /* the same report again adds nothing */
        measure(&f, "a1", "k1", STAT("1000.5", "100", "10", "4096"), D0 + 2 * S);
        check_day(&f, "2025-07-22", 1000500, 100, 10, 4096);
        /* increases; memory keeps its peak */
        measure(&f, "a1", "k1", STAT("3000.5", "150", "10", "1024"), D0 + 3 * S);
        check_day(&f, "2025-07-22", 3000500, 150, 10, 4096);
        /* the other kernel adds its own; another agent's report is ignored */
        measure(&f, "a1", "k2", STAT("500", "0", "0", "8192"), D0 + 3 * S);
        measure(&f, "a2", "k1", STAT("999999", "999", "999", "999999"), D0 + 3 * S);
        measure(&f, "a1", "nope", STAT("999999", "999", "999", "999999"), D0 + 3 * S);
        check_day(&f, "2025-07-22", 3500500, 150, 10, 8192);
        /* the container started over: its new value counts whole, on the next day */
        measure(&f, "a1", "k1", STAT("200", "50", "5", "2048"), D0 + DAY + S);
        check_day(&f, "2025-07-23", 200000, 50, 5, 2048);
        check_day(&f, "2025-07-22", 3500500, 150, 10, 8192);
        /* a report without io counters keeps the last ones */
        measure(&f, "a1", "k1", "{\"cpu_used\": {\"current\": \"300\"}}", D0 + DAY + 2 * S);
        measure(&f, "a1", "k1", STAT("300", "60", "5", "0"), D0 + DAY + 3 * S);
        check_day(&f, "2025-07-23", 300000, 60, 5, 2048);

        /* reports read them back, recorded occupancy too */
        CHECK(usage_record(&f.m, "s1", "u1", "p1", "default", NULL, "{\"cpu\": \"2\"}", D0, D0 + 10 * S, NULL) ==
              0);
        check_day(&f, "2025-07-22", 3500500, 150, 10, 8192);
        struct usage_measured sum = { 0 };
        struct usage_filter all = { .first_day = 20291, .last_day = 20292 };
        CHECK(usage_foreach(&f.m, &all, D0 + DAY + 10 * S, count_piece, &c, NULL) == 0);
        CHECK_INTEQ(c.n, 4); /* two recorded days, the open interval's two days */
        CHECK_INTEQ(c.seconds, 10 + USAGE_SEC_PER_DAY + 10);
        CHECK(usage_foreach(&f.m, &all, D0 + DAY + 10 * S, sum_measured, &sum, NULL) == 0);
        CHECK_INTEQ(sum.cpu_used_usec, 3800500);
        CHECK_INTEQ(sum.io_read_bytes, 210);
        CHECK_INTEQ(sum.io_write_bytes, 15);
        CHECK_INTEQ(sum.mem_peak_bytes, 8192);
        fixture_close(&f);
}

static void test_usage_measure_agent(void)
{
        struct db_fixture f;
        struct tess_error *err = NULL;
        json_t *stats = json_pack("{s:o, s:o, s:o, s:o}", "k1", json_loads(STAT("1000", "10", "0", "4096"), 0, NULL),
                                  "k2", json_loads(STAT("500", "0", "0", "8192"), 0, NULL), "k3",
                                  json_loads(STAT("99999", "0", "0", "99999"), 0, NULL), "k4",
                                  json_loads(STAT("99999", "0", "0", "99999"), 0, NULL));

        if (!fixture_open(&f))
                return;
        add_session(&f, "s1", "u1", "RUNNING", D0, "{\"cpu\": \"2\"}");
        add_session(&f, "s2", "u1", "TERMINATED", D0, "{\"cpu\": \"2\"}");
        add_kernel(&f, "k1", "s1", "a1");
        add_kernel(&f, "k2", "s1", "a1");
        add_kernel(&f, "k3", "s2", "a1");
        CHECK(DBQ(f.m.db, "UPDATE kernels SET status = 'TERMINATED' WHERE id = 'k3'", NULL, NULL) == 1);
        add_kernel(&f, "k4", "s1", "a2"); /* another agent's */

        CHECK(db_begin(f.m.db, NULL) == 0);
        CHECK(usage_measure_agent(&f.m, "a1", stats, D0 + S, &err) == 0);
        CHECK(db_commit(f.m.db, NULL) == 0);
        /* k1 and k2 of s1; k3's session ended (its exited event counts it), k4 is a2's */
        check_day(&f, "2025-07-22", 1500000, 10, 0, 8192);
        _cleanup_rows_ struct db_rows *rows = NULL;
        CHECK(DBQ(f.m.db, "SELECT count(*) AS n FROM usage_daily", &rows, NULL) >= 0);
        CHECK_INTEQ(db_get_int(rows, 0, "n"), 1);
        /* again: nothing new */
        CHECK(db_begin(f.m.db, NULL) == 0);
        CHECK(usage_measure_agent(&f.m, "a1", stats, D0 + 2 * S, &err) == 0);
        CHECK(db_commit(f.m.db, NULL) == 0);
        check_day(&f, "2025-07-22", 1500000, 10, 0, 8192);
        CHECK(err == NULL);
        tess_error_free(err);
        json_decref(stats);
        fixture_close(&f);
}

static const struct test tests[] = {
        TEST(test_usage_days),
        TEST(test_usage_day_parse_errors),
        TEST(test_usage_split_one_day),
        TEST(test_usage_split_midnights),
        TEST(test_usage_split_counts_like_snprintf),
        TEST(test_usage_amount_exact),
        TEST(test_usage_amount_beyond_64_bits),
        TEST(test_usage_weights),
        TEST(test_usage_record_adds_per_day),
        TEST(test_usage_foreach_and_fair_share),
        TEST(test_usage_counters_from_stat),
        TEST(test_usage_counter_increase),
        TEST(test_usage_measure_kernel),
        TEST(test_usage_measure_agent),
        {},
};

int main(void)
{
        return test_main(tests);
}
