/* test_www_authenticate.c - WWW-Authenticate challenges as registries and
 * other servers send them (www_authenticate.c). */
#include "common/compat.h"

#include "../lib/test.h"
#include "registry/www_authenticate.h"

static int parse(const char *s, struct auth_challenges *c)
{
        struct tess_error *err = NULL;
        int r = www_authenticate_parse(s, strlen(s), c, &err);

        if (r < 0) {
                test_fail(__FILE__, __LINE__, "'%s' does not parse: %s", s, err->msg);
                tess_error_free(err);
                *c = (struct auth_challenges){ 0 };
        }
        return r;
}

/* s (of n bytes) must fail with EINVAL and exactly this message. */
static void check_bad_n(const char *s, size_t n, const char *msg)
{
        struct tess_error *err = NULL;
        struct auth_challenges c = { 0 };

        if (www_authenticate_parse(s, n, &c, &err) == 0) {
                test_fail(__FILE__, __LINE__, "'%s' parses (%zu challenges)", s, c.n);
                auth_challenges_release(&c);
                return;
        }
        CHECK(err && err->code == EINVAL);
        if (err)
                CHECK_STREQ(err->msg, msg);
        CHECK(c.n == 0 && c.v == NULL);
        tess_error_free(err);
}

static void check_bad(const char *s, const char *msg)
{
        check_bad_n(s, strlen(s), msg);
}

static void test_www_authenticate_bearer(void)
{
        struct auth_challenges c;
        const struct auth_challenge *b;

        if (parse("Bearer realm=\"https://auth.example/token\",service=\"registry.example\","
                  "scope=\"repository:library/busybox:pull\"", &c) < 0)
                return;
        CHECK_INTEQ(c.n, 1);
        b = auth_challenges_find(&c, "bearer");
        CHECK(b != NULL);
        if (b) {
                CHECK_STREQ(b->scheme, "Bearer");
                CHECK_INTEQ(b->n_params, 3);
                CHECK_STREQ(auth_challenge_param(b, "realm"), "https://auth.example/token");
                CHECK_STREQ(auth_challenge_param(b, "service"), "registry.example");
                CHECK_STREQ(auth_challenge_param(b, "scope"), "repository:library/busybox:pull");
                CHECK(auth_challenge_param(b, "error") == NULL);
                CHECK(b->token68 == NULL);
        }
        CHECK(auth_challenges_find(&c, "Basic") == NULL);
        auth_challenges_release(&c);
}

static void test_www_authenticate_quoting(void)
{
        struct auth_challenges c;

        /* commas and escapes inside quotes; case of names; BWS around '=' */
        if (parse("bearer REALM = \"a,b\" ,Scope=\"repository:x:pull,push\", error=\"say \\\"no\\\" \\\\ twice\"",
                  &c) < 0)
                return;
        CHECK_INTEQ(c.n, 1);
        if (c.n == 1) {
                CHECK_STREQ(c.v[0].scheme, "bearer");
                CHECK_STREQ(auth_challenge_param(&c.v[0], "realm"), "a,b");
                CHECK_STREQ(auth_challenge_param(&c.v[0], "scope"), "repository:x:pull,push");
                CHECK_STREQ(auth_challenge_param(&c.v[0], "error"), "say \"no\" \\ twice");
        }
        auth_challenges_release(&c);

        /* unquoted values, an empty quoted one, a trailing comma */
        if (parse("Bearer realm=tok.en,service=reg,scope=\"\",", &c) < 0)
                return;
        CHECK_STREQ(auth_challenge_param(&c.v[0], "realm"), "tok.en");
        CHECK_STREQ(auth_challenge_param(&c.v[0], "service"), "reg");
        CHECK_STREQ(auth_challenge_param(&c.v[0], "scope"), "");
        auth_challenges_release(&c);
}

static void test_www_authenticate_several(void)
{
        struct auth_challenges c;

        /* as two header lines joined with ", " */
        if (parse("Basic realm=\"Registry Realm\", Bearer realm=\"http://127.0.0.1:1/token\",service=\"s\"", &c) < 0)
                return;
        CHECK_INTEQ(c.n, 2);
        if (c.n == 2) {
                CHECK_STREQ(c.v[0].scheme, "Basic");
                CHECK_STREQ(auth_challenge_param(&c.v[0], "realm"), "Registry Realm");
                CHECK_STREQ(c.v[1].scheme, "Bearer");
                CHECK_INTEQ(c.v[1].n_params, 2);
                CHECK(auth_challenges_find(&c, "BEARER") == &c.v[1]);
        }
        auth_challenges_release(&c);

        /* schemes alone, token68, empty list elements */
        if (parse(", Negotiate, NTLM abc/+==  ,, Basic realm=x", &c) < 0)
                return;
        CHECK_INTEQ(c.n, 3);
        if (c.n == 3) {
                CHECK_STREQ(c.v[0].scheme, "Negotiate");
                CHECK(c.v[0].n_params == 0 && c.v[0].token68 == NULL);
                CHECK_STREQ(c.v[1].scheme, "NTLM");
                CHECK_STREQ(c.v[1].token68, "abc/+==");
                CHECK_STREQ(auth_challenge_param(&c.v[2], "realm"), "x");
        }
        auth_challenges_release(&c);

        /* "a=" alone is a token68, not a parameter without a value */
        if (parse("Custom a=", &c) < 0)
                return;
        CHECK_STREQ(c.v[0].token68, "a=");
        CHECK_INTEQ(c.v[0].n_params, 0);
        auth_challenges_release(&c);

        if (parse("", &c) < 0)
                return;
        CHECK_INTEQ(c.n, 0);
        auth_challenges_release(&c);
}

static void test_www_authenticate_bad(void)
{
        char big[WWW_AUTH_MAX_LEN + 2];
        struct {
                char s[2048];
        } many;
        size_t n = 0;

        check_bad("Bearer realm=\"https://a/t", "WWW-Authenticate: unterminated quoted string at offset 25");
        check_bad("Bearer realm=\"a\\", "WWW-Authenticate: unterminated quoted string at offset 16");
        check_bad("Bearer realm=\"a\x01\"", "WWW-Authenticate: control character in a quoted string at offset 15");
        check_bad("=realm", "WWW-Authenticate: expected an authentication scheme at offset 0");
        check_bad("Bearer realm=\"x\" junk", "WWW-Authenticate: expected ',' after a parameter at offset 17");
        check_bad("Bearer realm=a,Realm=b", "WWW-Authenticate: repeated parameter at offset 15");
        check_bad("Bearer\trealm=a", "WWW-Authenticate: expected a space after the scheme at offset 6");
        /* a URL is no token: it must be quoted */
        check_bad("Bearer realm=https://a/t", "WWW-Authenticate: expected ',' after a parameter at offset 18");
        check_bad("Bearer @", "WWW-Authenticate: unexpected character at offset 7");
        check_bad("Basic abc== x", "WWW-Authenticate: unexpected character at offset 6");
        check_bad_n("Bearer realm=\"a\0b\"", 18, "WWW-Authenticate: control character in a quoted string at offset 15");
        check_bad_n("Bearer realm=a\0", 15, "WWW-Authenticate: expected ',' after a parameter at offset 14");

        for (int i = 0; i <= WWW_AUTH_MAX_CHALLENGES; i++)
                n += (size_t)snprintf(many.s + n, sizeof(many.s) - n, "S%d,", i);
        check_bad(many.s, "WWW-Authenticate: too many challenges at offset 54");
        n = (size_t)snprintf(many.s, sizeof(many.s), "Bearer ");
        for (int i = 0; i <= WWW_AUTH_MAX_PARAMS; i++)
                n += (size_t)snprintf(many.s + n, sizeof(many.s) - n, "p%d=v,", i);
        check_bad(many.s, "WWW-Authenticate: too many parameters at offset 189");

        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        check_bad(big, "WWW-Authenticate: longer than 16384 bytes");
}

static const struct test tests[] = {
        TEST(test_www_authenticate_bearer),
        TEST(test_www_authenticate_quoting),
        TEST(test_www_authenticate_several),
        TEST(test_www_authenticate_bad),
        {},
};

int main(void)
{
        return test_main(tests);
}
