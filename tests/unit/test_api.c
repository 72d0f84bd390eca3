/* test_api.c - request body helpers and name validation of the REST API. */
#include "common/compat.h"

#include "../lib/test.h"
#include "manager/api/api.h"

static json_t *body(const char *text)
{
        json_t *j = json_loads(text, JSON_ALLOW_NUL, NULL);
        CHECK(j != NULL);
        return j;
}

static void test_api_get_string(void)
{
        json_t *b = body("{\"name\": \"alpha\", \"sessionName\": \"beta\", \"n\": 1, \"nul\": \"a\\u0000b\","
                         " \"none\": null}");
        struct tess_error *err = NULL;
        const char *s = NULL;

        CHECK_INTEQ(api_get_string(b, NAMES("name"), 64, &s, &err), 0);
        CHECK_STREQ(s, "alpha");
        /* the first present alias wins; null counts as absent */
        CHECK_INTEQ(api_get_string(b, NAMES("none", "sessionName", "name"), 64, &s, &err), 0);
        CHECK_STREQ(s, "beta");
        s = "untouched";
        CHECK_INTEQ(api_get_string(b, NAMES("missing"), 64, &s, &err), 0);
        CHECK_STREQ(s, "untouched");
        CHECK(api_get_string(b, NAMES("n"), 64, &s, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "'n'"));
        err = tess_error_free(err);
        CHECK(api_get_string(b, NAMES("name"), 3, &s, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(api_get_string(b, NAMES("nul"), 64, &s, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK_INTEQ(api_get_string(NULL, NAMES("name"), 64, &s, &err), 0);
        json_decref(b);
}

static void test_api_get_int(void)
{
        json_t *b = body("{\"i\": 42, \"r\": 3.0, \"f\": 3.5, \"s\": \"17\", \"bad\": \"17x\", \"empty\": \"\","
                         " \"neg\": -5, \"huge\": 1e300, \"big\": \"99999999999999999999\", \"t\": true}");
        struct tess_error *err = NULL;
        int64_t v = -1;

        CHECK_INTEQ(api_get_int(b, NAMES("i"), 0, 100, &v, &err), 0);
        CHECK_INTEQ(v, 42);
        CHECK_INTEQ(api_get_int(b, NAMES("r"), 0, 100, &v, &err), 0);
        CHECK_INTEQ(v, 3);
        CHECK_INTEQ(api_get_int(b, NAMES("s"), 0, 100, &v, &err), 0);
        CHECK_INTEQ(v, 17);
        v = 7;
        CHECK_INTEQ(api_get_int(b, NAMES("absent"), 0, 100, &v, &err), 0);
        CHECK_INTEQ(v, 7);
        static const char *const bad[] = { "f", "bad", "empty", "neg", "huge", "big", "t" };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                const char *names[] = { bad[i], NULL };
                if (api_get_int(b, names, 0, 100, &v, &err) != -EINVAL)
                        test_fail(__FILE__, __LINE__, "accepted '%s' as an integer in [0, 100]", bad[i]);
                err = tess_error_free(err);
        }
        CHECK_INTEQ(v, 7);
        CHECK(api_get_int(b, NAMES("i"), 0, 41, &v, &err) == -EINVAL);
        CHECK(err && strstr(err->msg, "between 0 and 41"));
        err = tess_error_free(err);
        json_decref(b);
}

static void test_api_get_bool(void)
{
        json_t *b = body("{\"t\": true, \"f\": false, \"st\": \"True\", \"s1\": \"1\", \"sf\": \"false\","
                         " \"s0\": \"0\", \"n\": 1, \"s\": \"yes\"}");
        struct tess_error *err = NULL;
        bool v = false;

        CHECK_INTEQ(api_get_bool(b, NAMES("t"), &v, &err), 0);
        CHECK(v);
        CHECK_INTEQ(api_get_bool(b, NAMES("f"), &v, &err), 0);
        CHECK(!v);
        CHECK_INTEQ(api_get_bool(b, NAMES("st"), &v, &err), 0);
        CHECK(v);
        CHECK_INTEQ(api_get_bool(b, NAMES("sf"), &v, &err), 0);
        CHECK(!v);
        CHECK_INTEQ(api_get_bool(b, NAMES("s1"), &v, &err), 0);
        CHECK(v);
        CHECK_INTEQ(api_get_bool(b, NAMES("s0"), &v, &err), 0);
        CHECK(!v);
        CHECK(api_get_bool(b, NAMES("n"), &v, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(api_get_bool(b, NAMES("s"), &v, &err) == -EINVAL);
        err = tess_error_free(err);
        json_decref(b);
}

static void test_api_valid_names(void)
{
        CHECK(api_valid_name("default"));
        CHECK(api_valid_name("a"));
        CHECK(api_valid_name("my-project_2.x"));
        CHECK(!api_valid_name(""));
        CHECK(!api_valid_name("-x"));
        CHECK(!api_valid_name("a b"));
        CHECK(!api_valid_name("a/b"));
        CHECK(!api_valid_name("0123456789012345678901234567890123456789012345678901234567890123x"));

        CHECK(api_valid_session_name("my-session"));
        CHECK(api_valid_session_name("_abc"));
        CHECK(!api_valid_session_name("abc"));
        CHECK(!api_valid_session_name("abc-"));
        CHECK(!api_valid_session_name("-abc"));
        CHECK(!api_valid_session_name("ab cd"));
        CHECK(!api_valid_session_name("sess\xc3\xa9on"));

        CHECK(api_valid_email("admin@tessera.local"));
        CHECK(!api_valid_email("admin"));
        CHECK(!api_valid_email("@x"));
        CHECK(!api_valid_email("a@"));
        CHECK(!api_valid_email("a@b@c"));
        CHECK(!api_valid_email("a b@c"));
}

static void test_api_roles(void)
{
        CHECK_STREQ(role_to_string(ROLE_SUPERADMIN), "superadmin");
        CHECK_STREQ(role_to_string(ROLE_MONITOR), "monitor");
        CHECK(role_to_string(_ROLE_MAX) == NULL);
        CHECK_INTEQ(role_from_string("admin"), ROLE_ADMIN);
        CHECK_INTEQ(role_from_string("user"), ROLE_USER);
        CHECK_INTEQ(role_from_string("root"), _ROLE_INVALID);
        CHECK_INTEQ(role_from_string(NULL), _ROLE_INVALID);
}

static const struct test tests[] = {
        TEST(test_api_get_string),
        TEST(test_api_get_int),
        TEST(test_api_get_bool),
        TEST(test_api_valid_names),
        TEST(test_api_roles),
        {},
};

int main(void)
{
        return test_main(tests);
}
