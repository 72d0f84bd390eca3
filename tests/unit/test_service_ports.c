/* test_service_ports.c - the ai.backend.service-ports label. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/service_ports.h"

static int parse(const char *s, struct service_ports *sp)
{
        struct tess_error *err = NULL;
        int r = service_ports_parse(s, strlen(s), sp, &err);

        CHECK((r < 0) == (err != NULL));
        if (err)
                CHECK(err->code == EINVAL && strstr(err->msg, SERVICE_PORTS_LABEL));
        tess_error_free(err);
        return r;
}

static void test_one_app(void)
{
        struct service_ports sp;

        CHECK(parse("jupyter:http:8888", &sp) == 0);
        CHECK(sp.n == 1);
        CHECK_STREQ(sp.apps[0].name, "jupyter");
        CHECK(sp.apps[0].protocol == SERVICE_HTTP);
        CHECK(sp.apps[0].nports == 1 && sp.apps[0].ports[0] == 8888);
        CHECK(service_ports_find(&sp, "jupyter") == &sp.apps[0]);
        CHECK(service_ports_find(&sp, "jupyterlab") == NULL);
}

static void test_several_apps_and_port_lists(void)
{
        struct service_ports sp;

        CHECK(parse(" jupyter:http:8888 , vscode:http:[8180, 8181],ssh:tcp:2200,term:pty:7681,x:preopen:9000", &sp) ==
              0);
        CHECK(sp.n == 4); /* pty skipped */
        CHECK_STREQ(sp.apps[1].name, "vscode");
        CHECK(sp.apps[1].nports == 2 && sp.apps[1].ports[0] == 8180 && sp.apps[1].ports[1] == 8181);
        CHECK(sp.apps[2].protocol == SERVICE_TCP && sp.apps[3].protocol == SERVICE_PREOPEN);
        CHECK_STREQ(service_protocol_to_string(sp.apps[3].protocol), "preopen");
}

static void test_empty_declares_nothing(void)
{
        struct service_ports sp = { .n = 7 };

        CHECK(parse("", &sp) == 0 && sp.n == 0);
        CHECK(parse("  ", &sp) == 0 && sp.n == 0);
        CHECK(parse("a:http:2000,,b:http:2001,", &sp) == 0 && sp.n == 2);
}

static void test_refused(void)
{
        static const char *const bad[] = {
                "jupyter",                                     /* no protocol */
                "jupyter:http",                                /* no port */
                "jupyter:ftp:8888",                            /* protocol */
                "jupyter:http:80",                             /* port <= 1024 */
                "jupyter:http:65536",                          /* port too large */
                "jupyter:http:88a8",                           /* not a number */
                "jupyter:http:8888,lab:http:8888",             /* port twice */
                "a:http:2000,a:http:2001",                     /* name twice */
                "-a:http:2000",                                /* name */
                "a b:http:2000",                               /* name */
                "a:http:2000,2001",                            /* two ports need brackets */
                "a:http:[2000,[2001]]",                        /* nesting */
                "a:http:[2000",                                /* unbalanced */
                "a:http:2000]",                                /* unbalanced */
                "a:http:[]",                                   /* no port */
                "a:http:[1,2,3,4,5,6,7,8,9]",                  /* too many (and too low) */
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:http:2000", /* 33 characters */
        };
        struct service_ports sp = { .n = 5 };

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                if (parse(bad[i], &sp) == 0)
                        fprintf(stderr, "# accepted '%s'\n", bad[i]);
                CHECK(sp.n == 5); /* untouched */
        }
}

static void test_names(void)
{
        CHECK(service_port_name_valid("jupyter"));
        CHECK(service_port_name_valid("Jupyter_lab-2"));
        CHECK(!service_port_name_valid(""));
        CHECK(!service_port_name_valid("_x"));
        CHECK(!service_port_name_valid("a/b"));
        CHECK(!service_port_name_valid(NULL));
}

static const struct test tests[] = {
        TEST(test_one_app),
        TEST(test_several_apps_and_port_lists),
        TEST(test_empty_declares_nothing),
        TEST(test_refused),
        TEST(test_names),
        {},
};

int main(void)
{
        return test_main(tests);
}
