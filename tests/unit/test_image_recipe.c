/* test_image_recipe.c - recipes of `tessera image build` (src/cli/image_recipe.c). */
#include "common/compat.h"

#include "../lib/test.h"
#include "cli/image_recipe.h"

static int parse(const char *text, struct recipe *r, struct tess_error **err)
{
        return recipe_parse(text, strlen(text), "t.recipe", r, err);
}

static void test_recipe_fields(void)
{
        struct recipe r;
        struct tess_error *err = NULL;

        CHECK(parse("# c\nname = python\ntag = 3.11\nsuite = bookworm\npackages = python3  ca-certificates\n"
                    "cmd = /usr/bin/python3 -q\nenv.LANG = C.UTF-8\nlabel.ai.backend.kernelspec = 1\n"
                    "label.ai.backend.service-ports = \"jupyter:http:8888\"\n",
                    &r, &err) == 0);
        CHECK_STREQ(r.name, "python");
        CHECK_STREQ(r.tag, "3.11");
        CHECK_STREQ(r.variant, "minbase");
        CHECK_STREQ(r.workdir, "/home/work");
        CHECK(r.mirror == NULL);
        CHECK_STREQ(r.packages[0], "python3");
        CHECK_STREQ(r.packages[1], "ca-certificates");
        CHECK(r.packages[2] == NULL);
        CHECK_STREQ(r.cmd[1], "-q");
        CHECK(r.entrypoint[0] == NULL);
        CHECK_INTEQ(r.n_env, 1);
        CHECK_STREQ(r.labels[1].key, "ai.backend.service-ports");
        CHECK_STREQ(r.labels[1].value, "jupyter:http:8888");
        recipe_release(&r);
}

static void test_recipe_print_round_trip(void)
{
        struct recipe r, back;
        struct buf one = BUF_INIT, two = BUF_INIT;
        struct tess_error *err = NULL;

        CHECK(parse("suite = trixie\nname = x\nlabel.b = 2\nlabel.a = \" one # two \"\nmirror = http://m/debian\n"
                    "cmd = \"  /b  #c  \"\n",
                    &r, &err) == 0);
        recipe_print(&r, &one);
        CHECK(strstr(one.data, "label.a = \" one # two \"\nlabel.b = \"2\"\n") != NULL);
        CHECK(strstr(one.data, "cmd = \"/b #c\"\n") != NULL); /* found by fuzzing: '#' starting a word */
        CHECK(recipe_parse(one.data, one.len, "printed", &back, &err) == 0);
        recipe_print(&back, &two);
        CHECK_STREQ(one.data, two.data);
        recipe_release(&r);
        recipe_release(&back);
        buf_release(&one);
        buf_release(&two);
}

static void test_recipe_errors(void)
{
        static const struct {
                const char *text, *msg;
        } bad[] = {
                { "suite = bookworm\n", "t.recipe: 'name' and 'suite' are required" },
                { "name = x\nsuite = b\nwhat = 1\n", "t.recipe:3: unknown key 'what'" },
                { "name = x\nname = y\n", "t.recipe:2: 'name' is set twice" },
                { "name = x\nsuite = b\nlabel.a = 1\nlabel.a = 2\n", "t.recipe:4: label 'a' is set twice" },
                { "name = x\nsuite = b\npackages = a;rm\n", "t.recipe:3: packages: 'a;rm' is not a package name" },
                { "name = x\nsuite = b\nmirror = file:///x\n",
                  "t.recipe:3: mirror: 'file:///x' is not an http(s) URL" },
                { "name = x\nno equals\n", "t.recipe:2: expected 'key = value'" },
                { "name = x\nsuite = b\nenv.A B = 1\n", "t.recipe:3: bad variable name 'A B'" },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct recipe r;
                struct tess_error *err = NULL;
                CHECK(parse(bad[i].text, &r, &err) == -EINVAL);
                CHECK_STREQ(err ? err->msg : "", bad[i].msg);
                tess_error_free(err);
        }
}

static const struct test tests[] = {
        TEST(test_recipe_fields),
        TEST(test_recipe_print_round_trip),
        TEST(test_recipe_errors),
        {},
};

int main(void)
{
        return test_main(tests);
}
