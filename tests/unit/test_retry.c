/* test_retry.c - the agent's delays between tries of the manager
 * (src/agent/retry.h): within their bounds, growing up to the cap, spread
 * by jitter, Retry-After honoured within the cap, replayable from a seed. */
#include "common/compat.h"

#include "../lib/test.h"
#include "agent/retry.h"

#define SEC USEC_PER_SEC

/* The ceiling of the n-th error answer in a row (n from 1). */
static int64_t ceiling_of(unsigned n)
{
        int64_t c = RETRY_BASE;
        for (unsigned i = 1; i < n && c < RETRY_CAP; i++)
                c *= 2;
        return c < RETRY_CAP ? c : RETRY_CAP;
}

static void test_unreachable_about_every_second(void)
{
        struct retry r;
        int64_t lo = INT64_MAX, hi = 0;

        retry_init(&r, 1);
        for (int i = 0; i < 1000; i++) { /* however long the manager is away */
                int64_t d = retry_failed(&r, 0, 0);
                CHECK(d >= 500 * USEC_PER_MSEC && d <= 1500 * USEC_PER_MSEC);
                lo = d < lo ? d : lo;
                hi = d > hi ? d : hi;
        }
        /* spread over the whole second: agents do not come back in step */
        CHECK(lo < 600 * USEC_PER_MSEC);
        CHECK(hi > 1400 * USEC_PER_MSEC);
}

static void test_errors_back_off_to_the_cap(void)
{
        for (uint64_t seed = 1; seed <= 200; seed++) {
                struct retry r;
                int64_t prev_ceiling = 0;
                retry_init(&r, seed);
                for (unsigned n = 1; n <= 12; n++) {
                        int64_t d = retry_failed(&r, 503, 0), c = ceiling_of(n);
                        CHECK(d >= c / 2 && d <= c);
                        CHECK(d <= 30 * SEC);
                        CHECK(c >= prev_ceiling);
                        prev_ceiling = c;
                }
        }
        CHECK_INTEQ(ceiling_of(1), 1 * SEC);
        CHECK_INTEQ(ceiling_of(5), 16 * SEC);
        CHECK_INTEQ(ceiling_of(6), 30 * SEC);
}

static void test_errors_grow_on_average(void)
{
        int64_t sum[9] = { 0 };

        for (uint64_t seed = 1; seed <= 500; seed++) {
                struct retry r;
                retry_init(&r, seed);
                for (unsigned n = 1; n <= 8; n++)
                        sum[n] += retry_failed(&r, 500, 0);
        }
        for (unsigned n = 2; n <= 6; n++)
                CHECK(sum[n] > sum[n - 1] * 3 / 2);                   /* about doubling */
        CHECK(sum[8] > sum[7] * 9 / 10 && sum[8] < sum[7] * 11 / 10); /* at the cap */
}

static void test_retry_after_within_the_cap(void)
{
        struct retry r;

        retry_init(&r, 7);
        for (int i = 0; i < 100; i++) {
                int64_t d = retry_failed(&r, 503, 5 * SEC);
                CHECK(d >= 5 * SEC && d <= 6 * SEC);
        }
        CHECK_INTEQ(retry_failed(&r, 429, 3600 * SEC), 30 * SEC);
        CHECK_INTEQ(retry_failed(&r, 503, 29900 * USEC_PER_MSEC) >= 29900 * USEC_PER_MSEC, 1);
}

static void test_success_starts_over(void)
{
        struct retry r;

        retry_init(&r, 3);
        for (int i = 0; i < 10; i++)
                retry_failed(&r, 503, 0);
        CHECK(retry_failed(&r, 503, 0) >= 15 * SEC);
        CHECK_INTEQ(retry_succeeded(&r), 11);
        CHECK_INTEQ(retry_succeeded(&r), 0);
        CHECK(retry_failed(&r, 503, 0) <= 1 * SEC);
}

static void test_unreachable_does_not_raise_the_exponent(void)
{
        struct retry r;

        /* a manager away for a minute, then answering 503 while it starts */
        retry_init(&r, 5);
        for (int i = 0; i < 60; i++)
                retry_failed(&r, 0, 0);
        CHECK(retry_failed(&r, 503, 0) <= 1 * SEC);
        CHECK_INTEQ(retry_succeeded(&r), 61);
}

static void test_seeded_replay(void)
{
        struct retry a, b, c;
        bool differ = false;

        retry_init(&a, 42);
        retry_init(&b, 42);
        retry_init(&c, 43);
        for (int i = 0; i < 20; i++) {
                long status = i % 3 ? 503 : 0;
                int64_t da = retry_failed(&a, status, 0);
                CHECK_INTEQ(da, retry_failed(&b, status, 0));
                differ |= da != retry_failed(&c, status, 0);
        }
        CHECK(differ);
        CHECK(retry_seed() != retry_seed() || retry_seed() != retry_seed());
}

static const struct test tests[] = {
        TEST(test_unreachable_about_every_second),
        TEST(test_errors_back_off_to_the_cap),
        TEST(test_errors_grow_on_average),
        TEST(test_retry_after_within_the_cap),
        TEST(test_success_starts_over),
        TEST(test_unreachable_does_not_raise_the_exponent),
        TEST(test_seeded_replay),
        {},
};

int main(void)
{
        return test_main(tests);
}
