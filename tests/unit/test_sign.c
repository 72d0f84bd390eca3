/* test_sign.c - Backend.AI request signing. */
#include "common/compat.h"

#include "../lib/test.h"
#include "common/sign.h"
#include "common/timeutil.h"

#define SECRET "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
#define HOST "127.0.0.1:8090"

/* Expected signatures, computed independently with OpenSSL's command line:
 *
 *   H=sha256 SECRET=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn HOST=127.0.0.1:8090 YMD=20250722
 *   hmac() { openssl dgst -$H -mac HMAC -macopt "$1" -hex | sed 's/.*= //'; }
 *   E=$(printf '' | openssl dgst -$H -hex | sed 's/.*= //')
 *   K1=$(printf %s "$YMD" | hmac "key:$SECRET")
 *   K2=$(printf %s "$HOST" | hmac "hexkey:$K1")
 *   printf 'GET\n/session/foo?x=1\n2025-07-22T10:00:00.123456+00:00\nhost:%s\n'\
 *   'content-type:application/json\nx-backendai-version:v9.20250722\n%s' "$HOST" "$E" | hmac "hexkey:$K2"
 *
 * (and H=sha512 for the second one; cross-checked with Python's hmac module). */
#define SIG_GET_SHA256 "fc2ca17c29b184681bbec66b9a3cf22fee8da3cf1e8c93e7ffb84094f446cd3a"
#define SIG_GET_SHA512                                                     \
        "7e3400d87c3f693646e6d1e10ecc3f4db76eca4de98adcd0f333ab7926efc476" \
        "b88ec558289ad2485537b3c7c19ca0422e944cac747d9fe21232638b4e32eba7"
/* Same recipe with YMD=20250723 (the date as written in a +09:00 header) and
 *   printf 'POST\n/session\n2025-07-23T01:00:00+09:00\nhost:%s\n'\
 *   'content-type:application/json\nx-backendai-version:v9.20250722\n%s' "$HOST" "$E" */
#define SIG_POST_TOKYO "e5057e8e1b9830a4716ff04f7c946c03bb267aba28e9f0cdb5b4c180b463dc43"
/* The body bound with X-Tessera-Content-Hash: YMD=20250722 and
 *   B=$(printf '{"a":1}' | openssl dgst -$H -hex | sed 's/.*= //')
 *   printf 'POST\n/session\n2025-07-22T10:00:00.123456+00:00\nhost:%s\n'\
 *   'content-type:application/json\nx-backendai-version:v9.20250722\n%s' "$HOST" "$B" */
#define BODY_SHA256 "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
#define SIG_POST_BODY "d1ca230b0efa00cc04e72e119becc7ae28111ba741815f0d893191b04a5f5398"

static void test_sign_compute_known_answer(void)
{
        struct tess_error *err = NULL;
        char hex[SIGN_HEX_MAX];

        CHECK_INTEQ(sign_compute("sha256", SECRET, "GET", "/session/foo?x=1", "2025-07-22T10:00:00.123456+00:00",
                                 "20250722", HOST, "application/json", "v9.20250722", NULL, hex, &err),
                    0);
        CHECK_STREQ(hex, SIG_GET_SHA256);
        CHECK_INTEQ(sign_compute("sha512", SECRET, "GET", "/session/foo?x=1", "2025-07-22T10:00:00.123456+00:00",
                                 "20250722", HOST, "application/json", "v9.20250722", NULL, hex, &err),
                    0);
        CHECK_STREQ(hex, SIG_GET_SHA512);
        CHECK(err == NULL);

        /* any change of an input changes the signature */
        CHECK_INTEQ(sign_compute("sha256", SECRET, "GET", "/session/foo?x=2", "2025-07-22T10:00:00.123456+00:00",
                                 "20250722", HOST, "application/json", "v9.20250722", NULL, hex, &err),
                    0);
        CHECK(!sign_equal(hex, SIG_GET_SHA256));
        CHECK_INTEQ(sign_compute("sha256", SECRET, "GET", "/session/foo?x=1", "2025-07-22T10:00:00.123456+00:00",
                                 "20250722", "localhost:8090", "application/json", "v9.20250722", NULL, hex, &err),
                    0);
        CHECK(!sign_equal(hex, SIG_GET_SHA256));

        CHECK(sign_compute("md5", SECRET, "GET", "/", "x", "20250722", HOST, "", "v9.20250722", NULL, hex, &err) ==
              -EINVAL);
        err = tess_error_free(err);
}

/* The key derivation uses the date as written, not its UTC date. */
static void test_sign_with_time_parse(void)
{
        const char *date = "2025-07-23T01:00:00+09:00";
        struct tess_error *err = NULL;
        char ymd[9], hex[SIGN_HEX_MAX];
        int64_t usec;

        CHECK_INTEQ(time_parse(date, &usec, ymd), 0);
        CHECK_STREQ(ymd, "20250723");
        CHECK_INTEQ(usec, 1753200000LL * USEC_PER_SEC); /* 2025-07-22T16:00:00Z */
        CHECK_INTEQ(sign_compute("sha256", SECRET, "POST", "/session", date, ymd, HOST, "application/json",
                                 "v9.20250722", NULL, hex, &err),
                    0);
        CHECK_STREQ(hex, SIG_POST_TOKYO);
}

/* A body hash takes the empty body's place on the last line. */
static void test_sign_body_hash(void)
{
        struct tess_error *err = NULL;
        char body_hex[SIGN_HEX_MAX], hex[SIGN_HEX_MAX];

        CHECK_INTEQ(sign_body_hash("sha256", "{\"a\":1}", 7, body_hex, &err), 0);
        CHECK_STREQ(body_hex, BODY_SHA256);
        CHECK_INTEQ(sign_compute("sha256", SECRET, "POST", "/session", "2025-07-22T10:00:00.123456+00:00", "20250722",
                                 HOST, "application/json", "v9.20250722", body_hex, hex, &err),
                    0);
        CHECK_STREQ(hex, SIG_POST_BODY);
        CHECK_INTEQ(sign_body_hash("sha256", "{\"a\":2}", 7, body_hex, &err), 0);
        CHECK(!streq(body_hex, BODY_SHA256));
        CHECK(sign_body_hash("md5", "", 0, body_hex, &err) == -EINVAL);
        err = tess_error_free(err);
}

static int parse_auth(const char *value, struct sign_auth *a)
{
        struct tess_error *err = NULL;
        int r = sign_parse_authorization(value, a, &err);

        if (r < 0) {
                CHECK(err && err->code == EINVAL);
                tess_error_free(err);
        } else {
                CHECK(err == NULL);
        }
        return r;
}

static void test_sign_parse_authorization_good(void)
{
        struct sign_auth a;

        CHECK_INTEQ(parse_auth("BackendAI signMethod=HMAC-SHA256, credential=AKIAIOSFODNN7EXAMPLE:" SIG_GET_SHA256,
                               &a),
                    0);
        CHECK_STREQ(a.hash, "sha256");
        CHECK_STREQ(a.access_key, "AKIAIOSFODNN7EXAMPLE");
        CHECK_STREQ(a.signature, SIG_GET_SHA256);

        CHECK_INTEQ(parse_auth("BackendAI signMethod=HMAC-SHA512,credential=AK:" SIG_GET_SHA512, &a), 0);
        CHECK_STREQ(a.hash, "sha512");
        CHECK_STREQ(a.signature, SIG_GET_SHA512);

        CHECK_INTEQ(parse_auth("BackendAI signMethod=hmac-sha1, credential=AK:abcd", &a), 0);
        CHECK_STREQ(a.hash, "sha1");

        /* the legacy scheme name, and signMethod defaulting to sha256 */
        CHECK_INTEQ(parse_auth("Sorna credential=AK:abcd", &a), 0);
        CHECK_STREQ(a.hash, "sha256");
        CHECK_STREQ(a.access_key, "AK");
        CHECK_STREQ(a.signature, "abcd");

        /* trailing blanks and unknown parameters are ignored */
        CHECK_INTEQ(parse_auth("BackendAI credential=AK:abcd  , foo=bar", &a), 0);
        CHECK_STREQ(a.signature, "abcd");
}

static void test_sign_parse_authorization_bad(void)
{
        static const char *const bad[] = {
                "",
                "Bearer abc",
                "BackendAI",
                "BackendAI ",
                "backendai credential=AK:abcd",
                "BackendAI signMethod=HMAC-SHA256",
                "BackendAI signMethod=HMAC-MD5, credential=AK:abcd",
                "BackendAI signMethod=SHA256, credential=AK:abcd",
                "BackendAI signMethod=HMAC-, credential=AK:abcd",
                "BackendAI signMethod=HMAC-SHA256000, credential=AK:abcd",
                "BackendAI credential=AKabcd",
                "BackendAI credential=:abcd",
                "BackendAI credential=AK:",
                "BackendAI credential",
                "BackendAI credential=AK:abcd, garbage",
                /* access key longer than 63 */
                "BackendAI credential=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:abcd",
                /* signature longer than 128 hex */
                "BackendAI credential=AK:" SIG_GET_SHA512 "00",
        };
        struct sign_auth a;

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                if (parse_auth(bad[i], &a) >= 0)
                        test_fail(__FILE__, __LINE__, "accepted bad Authorization '%s'", bad[i]);
        }
}

static int check_version(const char *v)
{
        struct tess_error *err = NULL;
        int r = sign_check_version(v, &err);

        CHECK(r == 0 ? err == NULL : err != NULL && err->code == EINVAL);
        tess_error_free(err);
        return r;
}

static void test_sign_check_version(void)
{
        CHECK_INTEQ(check_version(API_VERSION_OLDEST), 0);
        CHECK_INTEQ(check_version(API_VERSION_NEWEST), 0);
        CHECK_INTEQ(check_version("v4.20181215"), 0);
        CHECK_INTEQ(check_version("v9.20250722"), 0);
        CHECK_INTEQ(check_version("v6.20220615"), 0);
        CHECK_INTEQ(check_version("v8.20240915"), 0);
        CHECK(check_version("v3.20170615") < 0);
        CHECK(check_version("v3.20181215") < 0);
        CHECK(check_version("v4.20181214") < 0);
        CHECK(check_version("v9.20250723") < 0);
        CHECK(check_version("v9.20990101") < 0);
        CHECK(check_version("v10.20250101") < 0);
        CHECK(check_version("9.20250722") < 0);
        CHECK(check_version("v9.2025072") < 0);
        CHECK(check_version("v9.202507221") < 0);
        CHECK(check_version("v9.20250722 ") < 0);
        CHECK(check_version("v9") < 0);
}

/* sscanf's %u takes a sign and blanks: "v-4294967287" wraps around to 9.
 * Only "v<digit>.<8 digits>" is a version. */
static void test_sign_check_version_strict(void)
{
        CHECK(check_version("v+9.20250722") < 0);
        CHECK(check_version("v 9.20250722") < 0);
        CHECK(check_version("v-4294967287.20250722") < 0);
        CHECK(check_version("v009.20250722") < 0);
        CHECK(check_version("") < 0);
        CHECK(check_version(NULL) < 0);
}

static void test_sign_mimetype(void)
{
        char m[64], tiny[8];

        sign_mimetype("application/json", m, sizeof(m));
        CHECK_STREQ(m, "application/json");
        sign_mimetype("Application/JSON; charset=UTF-8", m, sizeof(m));
        CHECK_STREQ(m, "application/json");
        sign_mimetype("  text/plain ;charset=utf-8", m, sizeof(m));
        CHECK_STREQ(m, "text/plain");
        sign_mimetype("multipart/form-data; boundary=xyz", m, sizeof(m));
        CHECK_STREQ(m, "multipart/form-data");
        sign_mimetype(NULL, m, sizeof(m));
        CHECK_STREQ(m, "");
        sign_mimetype("", m, sizeof(m));
        CHECK_STREQ(m, "");
        sign_mimetype("application/json", tiny, sizeof(tiny));
        CHECK_STREQ(tiny, "applica");
}

static void test_sign_equal(void)
{
        CHECK(sign_equal("abcd", "abcd"));
        CHECK(!sign_equal("abcd", "abce"));
        CHECK(!sign_equal("abcd", "abc"));
        CHECK(!sign_equal("", "a"));
        CHECK(sign_equal("", ""));
}

static const struct test tests[] = {
        TEST(test_sign_compute_known_answer),
        TEST(test_sign_body_hash),
        TEST(test_sign_with_time_parse),
        TEST(test_sign_parse_authorization_good),
        TEST(test_sign_parse_authorization_bad),
        TEST(test_sign_check_version),
        TEST(test_sign_check_version_strict),
        TEST(test_sign_mimetype),
        TEST(test_sign_equal),
        {},
};

int main(void)
{
        return test_main(tests);
}
