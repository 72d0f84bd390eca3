/* test_app_proxy.c - the app proxy's pure parts: how apps start
 * (app_start.c), which headers and cookies pass (app_proxy.c). */
#include "common/compat.h"

#include "../lib/test.h"
#include "manager/apps/app_proxy.h"
#include "manager/apps/app_start.h"

static char *joined(char **argv)
{
        struct buf b = BUF_INIT;
        for (char **a = argv; a && *a; a++)
                buf_printf(&b, "%s%s", a == argv ? "" : " ", *a);
        for (char **a = argv; a && *a; a++)
                free(*a);
        free(argv);
        return buf_detach(&b, NULL);
}

static int start(const char *labels_text, const char *app, const char *args_text, char **ret)
{
        json_t *labels = labels_text ? json_loads(labels_text, 0, NULL) : NULL;
        json_t *args = args_text ? json_loads(args_text, 0, NULL) : NULL;
        struct tess_error *err = NULL;
        char **argv = NULL;
        int r = app_start_argv(labels, app, 8888, "/apps/S/jupyter/", args, &argv, &err);

        *ret = r < 0 ? xstrdup(err->msg) : joined(argv);
        tess_error_free(err);
        json_decref(labels);
        json_decref(args);
        return r;
}

static void test_jupyter_template(void)
{
        _cleanup_free_ char *cmd = NULL;

        CHECK(start(NULL, "jupyter", NULL, &cmd) == 0);
        const char *head = "jupyter-notebook --no-browser --ip=127.0.0.1 --port=8888 ";
        CHECK(strncmp(cmd, head, strlen(head)) == 0);
        CHECK(strstr(cmd, " --NotebookApp.base_url=/apps/S/jupyter/ "));
        CHECK(strstr(cmd, " --NotebookApp.token= "));
}

static void test_label_overrides_and_arguments(void)
{
        _cleanup_free_ char *cmd = NULL, *cmd2 = NULL;

        CHECK(start("{\"ai.backend.service-start.jupyter\": \"[\\\"myjup\\\", \\\"--p={port}{prefix}\\\"]\"}",
                    "jupyter", "{\"--a\": \"b c\", \"--n\": 2, \"--flag\": true, \"--x\": null}", &cmd) == 0);
        CHECK_STREQ(cmd, "myjup --p=8888/apps/S/jupyter/ --a b c --n 2 --flag --x");
        CHECK(start("{\"ai.backend.service-start.web\": \"[\\\"serve\\\"]\"}", "web", NULL, &cmd2) == 0);
        CHECK_STREQ(cmd2, "serve");
}

static void test_refused(void)
{
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

        CHECK(start(NULL, "tensorboard", NULL, &a) == -ENOENT);
        CHECK(strstr(a, "ai.backend.service-start.tensorboard") != NULL);
        CHECK(start("{\"ai.backend.service-start.web\": \"serve\"}", "web", NULL, &b) == -EINVAL);
        CHECK(start("{\"ai.backend.service-start.web\": \"[]\"}", "web", NULL, &c) == -EINVAL);
        CHECK(start(NULL, "jupyter", "{\"--a\": [1]}", &d) == -EINVAL);
}

static char *cookies(const char *header)
{
        struct buf b = BUF_INIT;
        app_proxy_cookies(&b, header);
        return buf_detach(&b, NULL);
}

static void test_manager_cookies_stay(void)
{
        _cleanup_free_ char *a = cookies("tessera_app=abc; _xsrf=2|x; tessera_session=def; b=1");
        _cleanup_free_ char *b = cookies("tessera_session=def");
        _cleanup_free_ char *c = cookies("  tessera_app = abc ;x=y;;");
        _cleanup_free_ char *d = cookies("tessera_apps=1; tessera_app");

        CHECK_STREQ(a, "_xsrf=2|x; b=1");
        CHECK_STREQ(b, "");
        CHECK_STREQ(c, "x=y");
        CHECK_STREQ(d, "tessera_apps=1");
}

static bool passes(const char *name, const char *value)
{
        return app_proxy_answer_header(name, strlen(name), value, strlen(value));
}

static void test_answer_headers(void)
{
        CHECK(passes("Content-Type", "text/html"));
        CHECK(passes("Set-Cookie", "_xsrf=1; Path=/apps/S/jupyter/"));
        CHECK(passes("Location", "/apps/S/jupyter/tree"));
        CHECK(!passes("Set-Cookie", "tessera_session=x; Path=/"));
        CHECK(!passes("set-cookie", " tessera_app=x"));
        CHECK(!passes("Transfer-Encoding", "chunked"));
        CHECK(!passes("content-length", "5"));
        CHECK(!passes("Connection", "keep-alive"));
        CHECK(!passes("Date", "now"));
}

static const struct test tests[] = {
        TEST(test_jupyter_template), TEST(test_label_overrides_and_arguments),
        TEST(test_refused),          TEST(test_manager_cookies_stay),
        TEST(test_answer_headers),   {},
};

int main(void)
{
        return test_main(tests);
}
