/* test_buf.c - the growable byte buffer and error chains. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/buf.h"
#include "common/error.h"

static void test_buf_init_is_empty_string(void)
{
        struct buf b = BUF_INIT;

        CHECK(b.data != NULL);
        CHECK_INTEQ(b.len, 0);
        CHECK_STREQ(b.data, "");
        buf_release(&b); /* releasing an unused buffer is fine */
        buf_release(&b);
        CHECK(b.data == buf_empty);
}

static void test_buf_append_and_printf(void)
{
        struct buf b = BUF_INIT;

        buf_puts(&b, "hello");
        buf_putc(&b, ' ');
        buf_printf(&b, "%s %d", "world", 42);
        CHECK_STREQ(b.data, "hello world 42");
        CHECK_INTEQ(b.len, 14);
        CHECK(b.cap > b.len);
        CHECK(b.data[b.len] == '\0');
        buf_append(&b, "", 0);
        CHECK_INTEQ(b.len, 14);
        buf_printf(&b, "%s", "");
        CHECK_INTEQ(b.len, 14);
        buf_reset(&b);
        CHECK_INTEQ(b.len, 0);
        CHECK_STREQ(b.data, "");
        buf_release(&b);
}

static void test_buf_binary_and_growth(void)
{
        struct buf b = BUF_INIT;
        char chunk[1000];

        memset(chunk, 'x', sizeof(chunk));
        chunk[500] = '\0';
        for (int i = 0; i < 100; i++)
                buf_append(&b, chunk, sizeof(chunk));
        CHECK_INTEQ(b.len, 100000);
        CHECK(b.data[500] == '\0');
        CHECK(b.data[99999] == 'x');
        CHECK(b.data[100000] == '\0');
        buf_release(&b);

        /* a long printf grows the buffer in one go */
        buf_printf(&b, "%0500d|%s", 7, "end");
        CHECK_INTEQ(b.len, 504);
        CHECK_STREQ(b.data + 500, "|end");
        buf_release(&b);
}

static void test_buf_detach(void)
{
        struct buf b = BUF_INIT;
        size_t len = 99;
        char *p;

        p = buf_detach(&b, &len); /* an empty buffer detaches to a fresh "" */
        CHECK_STREQ(p, "");
        CHECK_INTEQ(len, 0);
        free(p);

        buf_puts(&b, "abc");
        p = buf_detach(&b, &len);
        CHECK_STREQ(p, "abc");
        CHECK_INTEQ(len, 3);
        CHECK(b.data == buf_empty && b.len == 0 && b.cap == 0);
        free(p);
        p = buf_detach(&b, NULL);
        free(p);
}

static void test_error_chain(void)
{
        struct tess_error *err = NULL;

        CHECK_INTEQ(tess_err(&err, ENOENT, "open '%s'", "x.json"), -ENOENT);
        CHECK_INTEQ(tess_err_wrap(&err, "loading '%s'", "/var/lib"), -ENOENT);
        CHECK_STREQ(err->msg, "loading '/var/lib': open 'x.json'");
        CHECK_INTEQ(err->code, ENOENT);
        /* setting again replaces (and frees) the old error */
        CHECK_INTEQ(tess_err(&err, 0, "boom"), -EIO);
        CHECK_INTEQ(err->code, EIO);
        err = tess_error_free(err);
        CHECK(err == NULL);
        CHECK(tess_error_free(NULL) == NULL);
        CHECK_INTEQ(tess_err(NULL, EINVAL, "nobody listens"), -EINVAL);
        CHECK_INTEQ(tess_err_wrap(&err, "nothing to wrap"), -EIO);
        {
                _cleanup_error_ struct tess_error *scoped = NULL;
                tess_err(&scoped, EEXIST, "freed at scope end");
        }
}

static const struct test tests[] = {
        TEST(test_buf_init_is_empty_string),
        TEST(test_buf_append_and_printf),
        TEST(test_buf_binary_and_growth),
        TEST(test_buf_detach),
        TEST(test_error_chain),
        {},
};

int main(void)
{
        return test_main(tests);
}
