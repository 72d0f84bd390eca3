/* test_conf.c - table-driven configuration files. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/conf.h"
#include "common/timeutil.h"

struct demo_conf {
        char *name;
        char *path;
        uint64_t workers;
        uint64_t max_body;
        bool verbose;
        int64_t timeout;
};

#define DC struct demo_conf
static const struct conf_opt demo_opts[] = {
        CONF_OPT("name", CONF_T_STR, DC, name, "tessera", 0, 0, false, "a name"),
        CONF_OPT("path", CONF_T_STR, DC, path, NULL, 0, 0, false, "no default"),
        CONF_OPT("workers", CONF_T_U64, DC, workers, "4", 1, 64, true, "between 1 and 64"),
        CONF_OPT("max_body", CONF_T_SIZE, DC, max_body, "1m", 0, 0, false, "a size"),
        CONF_OPT("verbose", CONF_T_BOOL, DC, verbose, "false", 0, 0, true, NULL),
        CONF_OPT("timeout", CONF_T_USEC, DC, timeout, "30s", 0, 0, true, "a duration"),
        {},
};
#undef DC

static void demo_init(struct demo_conf *c)
{
        struct tess_error *err = NULL;

        memset(c, 0, sizeof(*c));
        CHECK_INTEQ(conf_defaults(demo_opts, c, &err), 0);
        CHECK(err == NULL);
}

/* Parse text on top of the defaults; returns the error message or NULL. */
static char *parse(struct demo_conf *c, const char *text)
{
        struct tess_error *err = NULL;
        char *msg = NULL;

        if (conf_parse(demo_opts, c, "demo.conf", text, strlen(text), &err) < 0) {
                CHECK(err && err->code == EINVAL);
                msg = xstrdup(err->msg);
                tess_error_free(err);
        }
        return msg;
}

static void test_conf_defaults(void)
{
        struct demo_conf c;

        demo_init(&c);
        CHECK_STREQ(c.name, "tessera");
        CHECK(c.path == NULL);
        CHECK_INTEQ(c.workers, 4);
        CHECK_INTEQ(c.max_body, 1 << 20);
        CHECK(!c.verbose);
        CHECK_INTEQ(c.timeout, 30 * USEC_PER_SEC);
        conf_release(demo_opts, &c);
        CHECK(c.name == NULL);
}

static void test_conf_parse_values(void)
{
        struct demo_conf c;
        char *msg;

        demo_init(&c);
        msg = parse(&c, "# a comment\n"
                        "\n"
                        "name = alpha\n"
                        "   path=/var/lib/x   \n"
                        "workers = 16  # trailing comment\n"
                        "max_body = 4m\n"
                        "verbose = yes\n"
                        "timeout = 5m\n");
        CHECK(msg == NULL);
        CHECK_STREQ(c.name, "alpha");
        CHECK_STREQ(c.path, "/var/lib/x");
        CHECK_INTEQ(c.workers, 16);
        CHECK_INTEQ(c.max_body, 4 << 20);
        CHECK(c.verbose);
        CHECK_INTEQ(c.timeout, 300 * USEC_PER_SEC);

        /* later lines win; CRLF line ends work; no final newline is fine */
        msg = parse(&c, "workers = 2\r\nworkers = 3\r\nverbose = off");
        CHECK(msg == NULL);
        CHECK_INTEQ(c.workers, 3);
        CHECK(!c.verbose);
        conf_release(demo_opts, &c);
}

static void test_conf_quoted_values(void)
{
        struct demo_conf c;
        char *msg;

        demo_init(&c);
        msg = parse(&c, "name = \"hello world # not a comment\"\npath = \"\"\n");
        CHECK(msg == NULL);
        CHECK_STREQ(c.name, "hello world # not a comment");
        CHECK_STREQ(c.path, "");
        msg = parse(&c, "name = \"a=b\"\n");
        CHECK(msg == NULL);
        CHECK_STREQ(c.name, "a=b");
        msg = parse(&c, "name = \"\n");
        CHECK(msg == NULL);
        CHECK_STREQ(c.name, "\""); /* a lone quote is just a character */
        conf_release(demo_opts, &c);
}

static void test_conf_errors_name_file_and_line(void)
{
        struct demo_conf c;
        char *msg;

        demo_init(&c);
        msg = parse(&c, "name = x\n\n# c\nbogus = 1\n");
        CHECK(msg != NULL);
        CHECK(msg && strstr(msg, "demo.conf:4"));
        CHECK(msg && strstr(msg, "bogus"));
        CHECK(msg && strstr(msg, "unknown option"));
        free(msg);

        msg = parse(&c, "workers = many\n");
        CHECK(msg && strstr(msg, "demo.conf:1"));
        CHECK(msg && strstr(msg, "workers"));
        CHECK(msg && strstr(msg, "many"));
        free(msg);

        msg = parse(&c, "\njust a line\n");
        CHECK(msg && strstr(msg, "demo.conf:2"));
        free(msg);

        conf_release(demo_opts, &c);
}

static void test_conf_bad_values(void)
{
        static const char *const bad[] = {
                "workers = -1",          "workers = 0",         "workers = 65",  "workers = 1.5",
                "workers = 99999999999999999999999", "workers =",  "workers = 4x", "max_body = 4q",
                "max_body = -4m",        "max_body = m",        "max_body = 4mx", "max_body = 99999999999999g",
                "verbose = maybe",       "verbose = TRUEISH",   "timeout = soon", "timeout = -1s",
                "= value",
        };
        struct demo_conf c;

        demo_init(&c);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                char *msg = parse(&c, bad[i]);
                if (!msg)
                        test_fail(__FILE__, __LINE__, "accepted '%s'", bad[i]);
                free(msg);
        }
        /* nothing above changed a value */
        CHECK_INTEQ(c.workers, 4);
        CHECK_INTEQ(c.max_body, 1 << 20);
        conf_release(demo_opts, &c);
}

static void test_conf_sizes(void)
{
        static const struct {
                const char *text;
                uint64_t want;
        } sizes[] = {
                { "0", 0 },           { "1024", 1024 },   { "4k", 4096 },      { "4K", 4096 },
                { "4m", 4 << 20 },    { "4mb", 4 << 20 }, { "4MiB", 4 << 20 }, { "2g", 2ULL << 30 },
        };
        struct tess_error *err = NULL;
        struct demo_conf c;

        demo_init(&c);
        for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
                CHECK_INTEQ(conf_set(demo_opts, &c, "max_body", sizes[i].text, &err), 0);
                CHECK_INTEQ(c.max_body, sizes[i].want);
        }
        CHECK(err == NULL);
        conf_release(demo_opts, &c);
}

static void test_conf_nul_byte(void)
{
        static const char text[] = "name = a\0b\n";
        struct tess_error *err = NULL;
        struct demo_conf c;

        demo_init(&c);
        CHECK(conf_parse(demo_opts, &c, "demo.conf", text, sizeof(text) - 1, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "NUL"));
        tess_error_free(err);
        conf_release(demo_opts, &c);
}

static void test_conf_print_and_load_file(void)
{
        struct tess_error *err = NULL;
        struct demo_conf c, back;
        struct buf out = BUF_INIT;
        char path[] = "/tmp/tessera-test-conf-XXXXXX";
        int fd;

        demo_init(&c);
        CHECK(parse(&c, "name = \"two words\"\nworkers = 7\nmax_body = 2k\nverbose = 1\ntimeout = 1h\n") == NULL);
        conf_print(demo_opts, &c, &out);
        CHECK(strstr(out.data, "# a name\n") != NULL);
        CHECK(strstr(out.data, "name = \"two words\"\n") != NULL);
        CHECK(strstr(out.data, "workers = 7\n") != NULL);
        CHECK(strstr(out.data, "verbose = true\n") != NULL);
        CHECK(strstr(out.data, "timeout = 3600s\n") != NULL);

        /* what conf_print writes loads back to the same values */
        fd = mkstemp(path);
        CHECK(fd >= 0);
        if (fd >= 0) {
                CHECK(write(fd, out.data, out.len) == (ssize_t)out.len);
                close(fd);
                demo_init(&back);
                CHECK_INTEQ(conf_load_file(demo_opts, &back, path, &err), 0);
                CHECK_STREQ(back.name, "two words");
                CHECK_STREQ(back.path, "");
                CHECK_INTEQ(back.workers, 7);
                CHECK_INTEQ(back.max_body, 2048);
                CHECK(back.verbose);
                CHECK_INTEQ(back.timeout, 3600 * USEC_PER_SEC);
                conf_release(demo_opts, &back);
                unlink(path);
        }
        CHECK(conf_load_file(demo_opts, &c, "/nonexistent/tessera.conf", &err) == -ENOENT);
        CHECK(err && strstr(err->msg, "/nonexistent/tessera.conf"));
        tess_error_free(err);
        buf_release(&out);
        conf_release(demo_opts, &c);
}

/* --print-config output must load back to the same configuration, also for
 * durations that are not whole seconds. */
static void test_conf_print_keeps_subsecond_durations(void)
{
        struct tess_error *err = NULL;
        struct demo_conf c, back;
        struct buf out = BUF_INIT;

        demo_init(&c);
        demo_init(&back);
        CHECK(parse(&c, "timeout = 1.5s\n") == NULL);
        CHECK_INTEQ(c.timeout, 1500000);
        conf_print(demo_opts, &c, &out);
        CHECK_INTEQ(conf_parse(demo_opts, &back, "printed", out.data, out.len, &err), 0);
        CHECK_INTEQ(back.timeout, c.timeout);
        tess_error_free(err);
        buf_release(&out);
        conf_release(demo_opts, &c);
        conf_release(demo_opts, &back);
}

static const struct test tests[] = {
        TEST(test_conf_defaults),
        TEST(test_conf_parse_values),
        TEST(test_conf_quoted_values),
        TEST(test_conf_errors_name_file_and_line),
        TEST(test_conf_bad_values),
        TEST(test_conf_sizes),
        TEST(test_conf_nul_byte),
        TEST(test_conf_print_and_load_file),
        TEST(test_conf_print_keeps_subsecond_durations),
        {},
};

int main(void)
{
        return test_main(tests);
}
