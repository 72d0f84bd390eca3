/* test_registry_catalog.c - listing pages and their Link headers as
 * registries send them (registry_catalog.c). */
#include "common/compat.h"

#include "../lib/test.h"
#include "registry/registry-internal.h"

#define BASE "http://127.0.0.1:5000"

/* The next page's path of a Link header, or "-" for none, or "!<message>". */
static char *next_of(const char *link)
{
        struct tess_error *err = NULL;
        char *path = NULL, *out;

        if (registry_link_next(link, BASE, &path, &err) < 0) {
                out = xasprintf("!%s", err->msg);
                tess_error_free(err);
                return out;
        }
        return path ? path : xstrdup("-");
}

#define CHECK_NEXT(link, want)              \
        do {                                \
                char *got_ = next_of(link); \
                CHECK_STREQ(got_, want);    \
                free(got_);                 \
        } while (0)

static void test_link_next(void)
{
        CHECK_NEXT(NULL, "-");
        CHECK_NEXT("", "-");
        CHECK_NEXT("</v2/_catalog?last=b&n=100>; rel=\"next\"", "/v2/_catalog?last=b&n=100");
        CHECK_NEXT("</v2/_catalog?last=b&n=100>; rel=next", "/v2/_catalog?last=b&n=100");
        CHECK_NEXT("<" BASE "/v2/x/tags/list?last=v1&n=2>;REL=\"Next\"", "/v2/x/tags/list?last=v1&n=2");
        CHECK_NEXT("</v2/a>; rel=\"prev\", </v2/b>; title=\"a;b, c\"; rel=\"first next\"", "/v2/b");
        CHECK_NEXT("</v2/a>; rel=\"prev\"", "-");
        CHECK_NEXT("</v2/a>; rel=\"nextpage\"", "-");
        CHECK_NEXT("/v2/a; rel=\"next\"", "!a Link header value does not start with '<'");
        CHECK_NEXT("</v2/a; rel=\"next\"", "!a Link header target has no '>'");
        CHECK_NEXT("</v2/a> rel=\"next\"", "!a Link header has 'r' where ',' or ';' belongs");
        CHECK_NEXT("<https://other.example.com/v2/a>; rel=\"next\"",
                   "!the next page 'https://other.example.com/v2/a' is not under " BASE "/v2/");
        CHECK_NEXT("</v1/a>; rel=\"next\"", "!the next page '/v1/a' is not under " BASE "/v2/");
        CHECK_NEXT("</v2/a b>; rel=\"next\"", "!the next page '/v2/a b' is not a plain URL path");
        CHECK_NEXT("</v2/a#b>; rel=\"next\"", "!the next page '/v2/a#b' is not a plain URL path");
}

/* The names of a page as "a,b,c", or "!<message>". */
static char *names_of(const char *page, const char *key)
{
        struct tess_error *err = NULL;
        json_t *names = json_array(), *v;
        struct buf b = BUF_INIT;
        size_t i;
        int r = registry_list_parse(page, strlen(page), key, names, &err);

        if (r < 0) {
                buf_printf(&b, "!%s", err->msg);
                tess_error_free(err);
        } else {
                CHECK_INTEQ(r, json_array_size(names));
                json_array_foreach(names, i, v)
                        buf_printf(&b, "%s%s", i ? "," : "", json_string_value(v));
        }
        json_decref(names);
        return buf_detach(&b, NULL);
}

#define CHECK_NAMES(page, key, want)              \
        do {                                      \
                char *got_ = names_of(page, key); \
                CHECK_STREQ(got_, want);          \
                free(got_);                       \
        } while (0)

static void test_list_parse(void)
{
        CHECK_NAMES("{\"repositories\": [\"busybox\", \"team/app\", \"a.b_c__d--e\"]}", "repositories",
                    "busybox,team/app,a.b_c__d--e");
        CHECK_NAMES("{\"repositories\": []}", "repositories", "");
        CHECK_NAMES("{\"name\": \"x\", \"tags\": null}", "tags", "");
        CHECK_NAMES("{\"name\": \"x\"}", "tags", "");
        CHECK_NAMES("{\"name\": \"x\", \"tags\": [\"1.0\", \"Latest\", \"_x\"]}", "tags", "1.0,Latest,_x");
        CHECK_NAMES("[]", "tags", "!a page of tags is not a JSON object");
        CHECK_NAMES("{\"tags\": \"1\"}", "tags", "!\"tags\" is not a list");
        CHECK_NAMES("{\"tags\": [\"-x\"]}", "tags", "!tags[0] is not a tag: '-x'");
        CHECK_NAMES("{\"tags\": [\"a\", 5]}", "tags", "!tags[1] is not a tag: '(not a string)'");
        CHECK_NAMES("{\"tags\": [\"a/b\"]}", "tags", "!tags[0] is not a tag: 'a/b'");
        CHECK_NAMES("{\"repositories\": [\"Team/app\"]}", "repositories",
                    "!repositories[0] is not a repository name: 'Team/app'");
        CHECK_NAMES("{\"repositories\": [\"a:b\"]}", "repositories",
                    "!repositories[0] is not a repository name: 'a:b'");
        CHECK_NAMES("{\"repositories\": [\"a//b\"]}", "repositories",
                    "!repositories[0] is not a repository name: 'a//b'");
        CHECK_NAMES("{\"repositories\": [\"\\u00e9\\u0001\"]}", "repositories",
                    "!repositories[0] is not a repository name: '?\?\?'");
        CHECK_NAMES("{\"tags\": [\"a\"], \"tags\": [\"b\"]}", "tags",
                    "!a page of tags is not JSON: line 1: duplicate object key near '\"tags\"'");
}

static const struct test tests[] = {
        TEST(test_link_next),
        TEST(test_list_parse),
        {},
};

int main(void)
{
        return test_main(tests);
}
