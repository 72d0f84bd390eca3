/* test.c - see test.h. */
#include "common/compat.h"

#include <stdarg.h>

#include "common/buf.h"
#include "test.h"

static int cur_failures;
static const char *cur_skip;
static struct buf cur_diag = BUF_INIT; /* printed after the `not ok` line */

void test_fail(const char *file, int line, const char *fmt, ...)
{
        va_list ap;

        cur_failures++;
        buf_printf(&cur_diag, "# %s:%d: ", file, line);
        va_start(ap, fmt);
        buf_vprintf(&cur_diag, fmt, ap);
        va_end(ap);
        buf_putc(&cur_diag, '\n');
}

void test_skip(const char *why)
{
        cur_skip = why && *why ? why : "skipped";
}

int test_main(const struct test *tests)
{
        const char *filter = getenv("TEST_FILTER");
        int n = 0, passed = 0, failed = 0, skipped = 0;

        setvbuf(stdout, NULL, _IOLBF, 0);
        for (const struct test *t = tests; t->name; t++) {
                if (filter && *filter && !strstr(t->name, filter))
                        continue;
                n++;
                cur_failures = 0;
                cur_skip = NULL;
                buf_reset(&cur_diag);
                t->fn();
                if (cur_failures) {
                        printf("not ok %d - %s\n%s", n, t->name, cur_diag.data);
                        failed++;
                } else if (cur_skip) {
                        printf("ok %d - %s # SKIP %s\n", n, t->name, cur_skip);
                        skipped++;
                } else {
                        printf("ok %d - %s\n", n, t->name);
                        passed++;
                }
                fflush(stdout);
        }
        buf_release(&cur_diag);
        if (skipped)
                printf("# %d skipped\n", skipped);
        printf("1..%d\n", n);
        printf("%d passed, %d failed\n", passed, failed);
        fflush(stdout);
        return failed ? 1 : 0;
}
