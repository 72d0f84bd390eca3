/* test.h - the unit-test harness (after redis testhelp.h and crun's RUN_TEST).
 *
 * A test is a `void f(void)` that makes CHECKs; a failed CHECK prints
 * `# file:line: CHECK(cond) failed` and the test goes on, so one run shows
 * every broken expectation.  A test that needs something missing calls
 * SKIP("why").  test_main() runs a zero-terminated table and prints TAP:
 *
 *     ok 1 - test_buf_append
 *     not ok 2 - test_buf_detach
 *     # tests/unit/test_buf.c:42: CHECK(b.len == 0) failed
 *     ok 3 - test_needs_root # SKIP needs root
 *     # 1 skipped
 *     1..3
 *     1 passed, 1 failed
 *
 * The last line always has exactly the form `N passed, N failed`; the exit
 * status is 0 when nothing failed, else 1.  TEST_FILTER=substring in the
 * environment runs only the tests whose name contains it. */
#ifndef TESS_TEST_H
#define TESS_TEST_H

#include <stdint.h>

struct test {
        const char *name;
        void (*fn)(void);
};
#define TEST(f) { #f, f }

#define TEST_SKIP 77 /* exit status of a skipped program (automake) */

void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void test_skip(const char *why);
int test_main(const struct test *tests);

#define CHECK(cond)                                                            \
        do {                                                                   \
                if (!(cond))                                                   \
                        test_fail(__FILE__, __LINE__, "CHECK(%s) failed", #cond); \
        } while (0)

#define CHECK_STREQ(a, b)                                                                                     \
        do {                                                                                                  \
                const char *_a_ = (a), *_b_ = (b);                                                           \
                if (!_a_ || !_b_ || strcmp(_a_, _b_) != 0)                                                    \
                        test_fail(__FILE__, __LINE__, "CHECK_STREQ(%s, %s) failed: \"%s\" != \"%s\"", #a, #b, \
                                  _a_ ? _a_ : "(null)", _b_ ? _b_ : "(null)");                                \
        } while (0)

#define CHECK_INTEQ(a, b)                                                                                  \
        do {                                                                                               \
                intmax_t _a_ = (intmax_t)(a), _b_ = (intmax_t)(b);                                         \
                if (_a_ != _b_)                                                                            \
                        test_fail(__FILE__, __LINE__, "CHECK_INTEQ(%s, %s) failed: %jd != %jd", #a, #b, _a_, _b_); \
        } while (0)

/* Skip the rest of the current test. */
#define SKIP(why)                       \
        do {                            \
                test_skip(why);         \
                return;                 \
        } while (0)

#endif
