/* test_timeutil.c - wire date formats and durations. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/timeutil.h"

/* 2025-07-22T10:00:00Z */
#define T0 (1753178400LL * USEC_PER_SEC)

static int64_t parse_ok(const char *s, const char *want_ymd)
{
        int64_t usec = -1;
        char ymd[9] = "";

        if (time_parse(s, &usec, ymd) < 0) {
                test_fail(__FILE__, __LINE__, "time_parse rejected '%s'", s);
                return -1;
        }
        if (want_ymd)
                CHECK_STREQ(ymd, want_ymd);
        return usec;
}

static void test_time_iso8601(void)
{
        CHECK_INTEQ(parse_ok("2025-07-22T10:00:00.123456+00:00", "20250722"), T0 + 123456);
        CHECK_INTEQ(parse_ok("2025-07-22T10:00:00Z", "20250722"), T0);
        CHECK_INTEQ(parse_ok("2025-07-22T10:00:00z", "20250722"), T0);
        CHECK_INTEQ(parse_ok("2025-07-22T10:00:00.5Z", "20250722"), T0 + 500000);
        CHECK_INTEQ(parse_ok("2025-07-22T10:00:00,25Z", "20250722"), T0 + 250000);
        CHECK_INTEQ(parse_ok("2025-07-22T10:00:00", "20250722"), T0); /* no offset is UTC */
        CHECK_INTEQ(parse_ok("2025-07-22 10:00:00", "20250722"), T0);
        CHECK_INTEQ(parse_ok("2025-07-22T10:00Z", "20250722"), T0);
        CHECK_INTEQ(parse_ok("2025-07-22", "20250722"), T0 - 10 * 3600 * USEC_PER_SEC);
        /* more digits than microseconds are truncated */
        CHECK_INTEQ(parse_ok("2025-07-22T10:00:00.1234567Z", "20250722"), T0 + 123456);
        CHECK_INTEQ(parse_ok("1970-01-01T00:00:00Z", "19700101"), 0);
        CHECK_INTEQ(parse_ok("2000-02-29T00:00:00Z", "20000229"), 951782400LL * USEC_PER_SEC);
}

static void test_time_offsets(void)
{
        /* ymd is the date as written; usec is UTC */
        CHECK_INTEQ(parse_ok("2025-07-23T01:00:00+09:00", "20250723"), T0 + 6 * 3600 * USEC_PER_SEC);
        CHECK_INTEQ(parse_ok("2025-07-22T19:00:00+09:00", "20250722"), T0);
        CHECK_INTEQ(parse_ok("2025-07-22T19:00:00+0900", "20250722"), T0);
        CHECK_INTEQ(parse_ok("2025-07-22T19:00:00+09", "20250722"), T0);
        CHECK_INTEQ(parse_ok("2025-07-21T23:00:00-11:00", "20250721"), T0);
        CHECK_INTEQ(parse_ok("2025-07-22T15:30:00.000001+05:30", "20250722"), T0 + 1);
        CHECK_INTEQ(parse_ok("2025-07-22T10:00:00-00:00", "20250722"), T0);
}

static void test_time_rfc1123(void)
{
        CHECK_INTEQ(parse_ok("Tue, 22 Jul 2025 10:00:00 GMT", "20250722"), T0);
        CHECK_INTEQ(parse_ok("Sun, 06 Nov 1994 08:49:37 GMT", "19941106"), 784111777LL * USEC_PER_SEC);
        CHECK_INTEQ(parse_ok("Tue, 22 Jul 2025 10:00:00 UTC", "20250722"), T0);
        CHECK_INTEQ(parse_ok("Tue, 22 Jul 2025 10:00:00 +0000", "20250722"), T0);
}

static void test_time_bad_dates(void)
{
        static const char *const bad[] = {
                "",
                "yesterday",
                "2025",
                "2025-07",
                "2025-7-22",
                "25-07-22",
                "2025-13-01T00:00:00Z",
                "2025-00-10T00:00:00Z",
                "2025-07-32T00:00:00Z",
                "2025-07-00T00:00:00Z",
                "2025-07-22T24:00:00Z",
                "2025-07-22T10:60:00Z",
                "2025-07-22T10:00:61Z",
                "2025-07-22T10:00:00.Z",
                "2025-07-22T10:00:00+25:00",
                "2025-07-22T10:00:00+09:60",
                "2025-07-22T10:00:00+9",
                "2025-07-22T10:00:00Zjunk",
                "2025-07-22T10:00:00 GMT",
                "2025-07-22T10",
                "2025-07-22T1:00:00Z",
                "Tue, 22 Jul 2025 10:00:00",
                "Tue, 22 Jul 2025 10:00:00 PST",
                "Tue, 22 Foo 2025 10:00:00 GMT",
                "Tue, 22 ulA 2025 10:00:00 GMT",
                "Tue, 2 Jul 2025 10:00:00 GMT",
                "Tue, 22 Jul 25 10:00:00 GMT",
                "Tue, 22 Jul 2025 10:00 GMT",
                "2025-07-22T10:00:00.000000000000000000000000000000000000000000000000000000000000000Z",
        };
        int64_t usec;
        char ymd[9];

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                if (time_parse(bad[i], &usec, ymd) != -EINVAL)
                        test_fail(__FILE__, __LINE__, "time_parse accepted '%s'", bad[i]);
        CHECK(time_parse(NULL, &usec, ymd) == -EINVAL);
}

/* RFC 1123 dates cut short inside the month name: the month must not be
 * read past the end of the string (a Date header is parsed before any
 * authentication). */
static void test_time_rfc1123_truncated(void)
{
        static const char *const bad[] = { "Tue, 22 J", "Tue, 22 Ju", "Tue, 22 ", "Tue,", "," };
        int64_t usec;
        char ymd[9];

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                /* exact-size heap copies, so ASan sees any over-read */
                char *s = xstrdup(bad[i]);
                if (time_parse(s, &usec, ymd) != -EINVAL)
                        test_fail(__FILE__, __LINE__, "time_parse accepted '%s'", bad[i]);
                free(s);
        }
}

static void test_time_format_iso(void)
{
        char buf[64];
        int64_t back;
        char ymd[9];

        CHECK_STREQ(time_format_iso(T0 + 123456, buf, sizeof(buf)), "2025-07-22T10:00:00.123456+00:00");
        CHECK_STREQ(time_format_iso(1795319699271072LL, buf, sizeof(buf)), "2026-11-22T03:54:59.271072+00:00");
        CHECK_STREQ(time_format_iso(0, buf, sizeof(buf)), "1970-01-01T00:00:00.000000+00:00");
        CHECK_INTEQ(time_parse(buf, &back, ymd), 0);
        CHECK_INTEQ(back, 0);

        /* now formats and parses back to itself */
        int64_t now = now_usec();
        time_format_iso(now, buf, sizeof(buf));
        CHECK_INTEQ(time_parse(buf, &back, ymd), 0);
        CHECK_INTEQ(back, now);
        CHECK(now > T0);
        CHECK(monotonic_usec() > 0);
}

static int64_t dur(const char *s)
{
        int64_t v = -1;
        return duration_parse(s, &v) < 0 ? -1 : v;
}

static void test_duration_parse(void)
{
        CHECK_INTEQ(dur("30s"), 30 * USEC_PER_SEC);
        CHECK_INTEQ(dur("30"), 30 * USEC_PER_SEC);
        CHECK_INTEQ(dur("5m"), 300 * USEC_PER_SEC);
        CHECK_INTEQ(dur("1h"), 3600 * USEC_PER_SEC);
        CHECK_INTEQ(dur("2d"), 2 * 86400 * USEC_PER_SEC);
        CHECK_INTEQ(dur("1w"), 7 * 86400 * USEC_PER_SEC);
        CHECK_INTEQ(dur("1.5s"), 1500000);
        CHECK_INTEQ(dur("0"), 0);
        CHECK_INTEQ(dur("0.000001"), 1);
        CHECK_INTEQ(dur(""), -1);
        CHECK_INTEQ(dur("s"), -1);
        CHECK_INTEQ(dur("-5s"), -1);
        CHECK_INTEQ(dur("5x"), -1);
        CHECK_INTEQ(dur("5ss"), -1);
        CHECK_INTEQ(dur("5 s"), -1);
        CHECK_INTEQ(dur("1e300"), -1);
        CHECK_INTEQ(dur("999999999999w"), -1);
        CHECK_INTEQ(dur(NULL), -1);
}

static const struct test tests[] = {
        TEST(test_time_iso8601),
        TEST(test_time_offsets),
        TEST(test_time_rfc1123),
        TEST(test_time_bad_dates),
        TEST(test_time_format_iso),
        TEST(test_duration_parse),
        TEST(test_time_rfc1123_truncated),
        {},
};

int main(void)
{
        return test_main(tests);
}
