/* test_yaml_json.c - YAML documents as users write them (Backend.AI's
 * session templates) turned into JSON: PyYAML's scalar rules, documents,
 * and every refusal with its line. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/yaml_json.h"

/* The documents of text as compact JSON with sorted keys, or "error: MSG". */
static const char *convert(const char *text)
{
        static char out[4096];
        struct tess_error *err = NULL;
        json_t *docs = NULL;

        if (yaml_to_json(text, strlen(text), &docs, &err) < 0) {
                CHECK(err && err->code == EINVAL && docs == NULL);
                snprintf(out, sizeof(out), "error: %s", err ? err->msg : "(none)");
                tess_error_free(err);
                return out;
        }
        char *s = json_dumps(docs, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        snprintf(out, sizeof(out), "%s", s);
        free(s);
        json_decref(docs);
        return out;
}

static void test_session_template(void)
{
        CHECK_STREQ(convert("api_version: v1\n"
                            "kind: taskTemplate\n"
                            "metadata:\n"
                            "  name: template1234\n"
                            "  tag: example-tag\n"
                            "spec:\n"
                            "  kernel:\n"
                            "    environ:\n"
                            "      MYCONFIG: XXX\n"
                            "    image: cr.backend.ai/multiarch/python:3.9-ubuntu20.04\n"
                            "    run:\n"
                            "      bootstrap: |\n"
                            "        pip install -r requirements.txt\n"
                            "        echo done\n"
                            "  resources:\n"
                            "    cpu: '2'\n"
                            "    mem: 4g\n"
                            "  mounts:\n"
                            "    data: /home/work/data\n"
                            "    scratch:\n"
                            "  sessionType: 'interactive'\n"),
                    "[{\"api_version\":\"v1\",\"kind\":\"taskTemplate\",\"metadata\":{\"name\":\"template1234\","
                    "\"tag\":\"example-tag\"},\"spec\":{\"kernel\":{\"environ\":{\"MYCONFIG\":\"XXX\"},\"image\":"
                    "\"cr.backend.ai/multiarch/python:3.9-ubuntu20.04\",\"run\":{\"bootstrap\":\"pip install -r "
                    "requirements.txt\\necho done\\n\"}},\"mounts\":{\"data\":\"/home/work/data\",\"scratch\":null},"
                    "\"resources\":{\"cpu\":\"2\",\"mem\":\"4g\"},\"sessionType\":\"interactive\"}}]");
}

static void test_plain_scalars_as_pyyaml(void)
{
        CHECK_STREQ(convert("[~, null, NULL, '', true, Yes, off, ON, 'yes', \"no\", !!str true]"),
                    "[[null,null,null,\"\",true,true,false,true,\"yes\",\"no\",\"true\"]]");
        CHECK_STREQ(convert("[0, 12, -7, +3, 1_000, 0x1F, 0b101, 017, 09, 0o17, 9223372036854775807, "
                            "9223372036854775808]"),
                    "[[0,12,-7,3,1000,31,5,15,\"09\",\"0o17\",9223372036854775807,\"9223372036854775808\"]]");
        CHECK_STREQ(convert("[1.5, -0.25, .5, 2., 1.0e+3, 1e3, 1.0e3, .inf, .nan, 1_0.5]"),
                    "[[1.5,-0.25,0.5,2.0,1000.0,\"1e3\",\"1.0e3\",\".inf\",\".nan\",10.5]]");
        /* keys are text */
        CHECK_STREQ(convert("{1: a, true: b, null: c}"), "[{\"1\":\"a\",\"null\":\"c\",\"true\":\"b\"}]");
        CHECK_STREQ(convert("{\"json\": [1, {\"x\": null}]}"), "[{\"json\":[1,{\"x\":null}]}]");
}

static void test_documents(void)
{
        CHECK_STREQ(convert(""), "[]");
        CHECK_STREQ(convert("# only a comment\n"), "[]");
        CHECK_STREQ(convert("---\n"), "[null]");
        CHECK_STREQ(convert("a: 1\n---\nb: 2\n...\n"), "[{\"a\":1},{\"b\":2}]");
        CHECK_STREQ(convert("- x\n- - y\n  - z\n"), "[[\"x\",[\"y\",\"z\"]]]");
}

static void test_refusals(void)
{
        CHECK_STREQ(convert("a: &x [1]\nb: *x\n"), "error: line 2: aliases (*x) are not accepted");
        CHECK_STREQ(convert("a: 1\na: 2\n"), "error: line 2: key 'a' appears twice");
        CHECK_STREQ(convert("? [k]\n: v\n"), "error: line 1: a mapping key must be a scalar");
        CHECK_STREQ(convert("a: [1, 2\n"), "error: line 2: did not find expected ',' or ']' while parsing a flow "
                                           "sequence");
        CHECK(strncmp(convert("\xff\xfe: x"), "error: line 1:", 14) == 0);

        char deep[2 * YAML_JSON_DEPTH_MAX + 8];
        memset(deep, '[', YAML_JSON_DEPTH_MAX + 1);
        memset(deep + YAML_JSON_DEPTH_MAX + 1, ']', YAML_JSON_DEPTH_MAX + 1);
        deep[2 * YAML_JSON_DEPTH_MAX + 2] = '\0';
        CHECK_STREQ(convert(deep), "error: line 1: nested deeper than 64 levels");
        deep[YAML_JSON_DEPTH_MAX] = ' ';
        deep[YAML_JSON_DEPTH_MAX + 1] = ' ';
        CHECK(strncmp(convert(deep), "[[[", 3) == 0); /* 64 levels are fine */
}

static const struct test tests[] = {
        TEST(test_session_template),
        TEST(test_plain_scalars_as_pyyaml),
        TEST(test_documents),
        TEST(test_refusals),
        {},
};

int main(void)
{
        return test_main(tests);
}
