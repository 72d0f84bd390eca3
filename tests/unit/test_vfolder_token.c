/* test_vfolder_token.c - folder transfer tokens (manager/vfolder/vfolder_token.c)
 * and the Range and tus number parsers (manager/http/http_range.c). */
#include "common/compat.h"

#include "../lib/test.h"
#include "manager/http/http_range.h"
#include "manager/vfolder/vfolder_token.h"

static const unsigned char master[MASTER_KEY_LEN] = "0123456789abcdef0123456789abcdef";

static struct vf_token sample(void)
{
        struct vf_token t = { .op = VFT_UPLOAD, .expires = 2000, .size = 12345 };
        snprintf(t.folder, sizeof(t.folder), "%s", "0f8e7d6c-5b4a-4321-8765-0123456789ab");
        snprintf(t.user, sizeof(t.user), "%s", "11111111-2222-4333-8444-555555555555");
        snprintf(t.access_key, sizeof(t.access_key), "%s", "AKIATESTTESTTESTTEST");
        snprintf(t.path, sizeof(t.path), "%s", "dir/données.bin");
        return t;
}

static int parse(const char *s, int64_t now, struct vf_token *t)
{
        unsigned char key[VF_TOKEN_KEY_LEN];
        struct tess_error *err = NULL;
        vf_token_key(master, key);
        int r = vf_token_parse(key, s, now, t, &err);
        tess_error_free(err);
        return r;
}

static void test_token_round_trip(void)
{
        unsigned char key[VF_TOKEN_KEY_LEN];
        struct vf_token t = sample(), got;

        vf_token_key(master, key);
        _cleanup_free_ char *s = vf_token_make(key, &t);
        CHECK(strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") == strlen(s));
        CHECK_INTEQ(parse(s, 1999, &got), 0);
        CHECK_INTEQ(got.op, VFT_UPLOAD);
        CHECK_STREQ(got.folder, t.folder);
        CHECK_STREQ(got.user, t.user);
        CHECK_STREQ(got.access_key, t.access_key);
        CHECK_STREQ(got.path, t.path);
        CHECK_INTEQ(got.size, 12345);
        CHECK_INTEQ(got.expires, 2000);
        CHECK_INTEQ(parse(s, 2000, &got), -EACCES); /* expired */
}

static void test_token_tampered(void)
{
        unsigned char key[VF_TOKEN_KEY_LEN], other[MASTER_KEY_LEN] = "another key, another manager....";
        struct vf_token t = sample(), got;

        vf_token_key(master, key);
        _cleanup_free_ char *s = vf_token_make(key, &t);
        for (size_t i = 0; s[i]; i++) { /* any one character changed */
                char save = s[i];
                s[i] = save == 'A' ? 'B' : 'A';
                CHECK_INTEQ(parse(s, 0, &got), -EACCES);
                s[i] = save;
        }
        CHECK_INTEQ(parse("", 0, &got), -EACCES);
        CHECK_INTEQ(parse(NULL, 0, &got), -EACCES);
        CHECK_INTEQ(parse("abc", 0, &got), -EACCES);
        vf_token_key(other, key);
        _cleanup_free_ char *o = vf_token_make(key, &t);
        CHECK_INTEQ(parse(o, 0, &got), -EACCES);
        t.path[0] = '\0';
        t.op = VFT_ARCHIVE;
        vf_token_key(master, key);
        _cleanup_free_ char *root = vf_token_make(key, &t);
        CHECK_INTEQ(parse(root, 0, &got), 0);
        CHECK_INTEQ(got.op, VFT_ARCHIVE);
        CHECK_STREQ(got.path, "");
}

/* A token of the first format, which named no keypair (made with this
 * file's master key before the keypair was added): refused, so that no
 * token escapes the check of its keypair at use. */
static void test_token_v1_refused(void)
{
        struct vf_token got;
        CHECK_INTEQ(parse("djEKZG93bmxvYWQKMGY4ZTdkNmMtNWI0YS00MzIxLTg3NjUtMDEyMzQ1Njc4OWFiCjExMTExMTExLTIyMjItNDMz"
                          "My04NDQ0LTU1NTU1NTU1NTU1NQo5OTk5OTk5OTk5CjAKYQ.Vu7hlP3fD4fuNSgyCXJj72FHVBmKvhvZAyvhvDHopK4",
                          0, &got),
                      -EACCES);
}

/* Access keys in tokens: letters and digits, 1 to 20 of them. */
static void test_token_access_key(void)
{
        unsigned char key[VF_TOKEN_KEY_LEN];
        struct vf_token t = sample(), got;

        vf_token_key(master, key);
        snprintf(t.access_key, sizeof(t.access_key), "%s", "AK+/");
        _cleanup_free_ char *bad = vf_token_make(key, &t);
        CHECK_INTEQ(parse(bad, 0, &got), -EACCES);
        t.access_key[0] = '\0';
        _cleanup_free_ char *empty = vf_token_make(key, &t);
        CHECK_INTEQ(parse(empty, 0, &got), -EACCES);
}

static void check_range(const char *h, uint64_t size, int want, uint64_t start, uint64_t len)
{
        uint64_t s = 7, l = 7;
        int r = http_range_parse(h, size, &s, &l);
        if (r != want || (r == HTTP_RANGE_OK && (s != start || l != len)))
                test_fail(__FILE__, __LINE__, "'%s' of %llu: %d %llu+%llu, want %d %llu+%llu", h ? h : "(null)",
                          (unsigned long long)size, r, (unsigned long long)s, (unsigned long long)l, want,
                          (unsigned long long)start, (unsigned long long)len);
}

static void test_range(void)
{
        check_range(NULL, 100, HTTP_RANGE_NONE, 0, 0);
        check_range("bytes=0-99", 100, HTTP_RANGE_OK, 0, 100);
        check_range("bytes=10-19", 100, HTTP_RANGE_OK, 10, 10);
        check_range("bytes=10-", 100, HTTP_RANGE_OK, 10, 90);
        check_range("bytes=90-1000", 100, HTTP_RANGE_OK, 90, 10);
        check_range("bytes=-10", 100, HTTP_RANGE_OK, 90, 10);
        check_range("bytes=-1000", 100, HTTP_RANGE_OK, 0, 100);
        check_range(" Bytes = 5-5 ", 100, HTTP_RANGE_OK, 5, 1);
        check_range("bytes=100-", 100, HTTP_RANGE_UNSATISFIABLE, 0, 0);
        check_range("bytes=-0", 100, HTTP_RANGE_UNSATISFIABLE, 0, 0);
        check_range("bytes=0-", 0, HTTP_RANGE_UNSATISFIABLE, 0, 0);
        check_range("bytes=5-4", 100, HTTP_RANGE_NONE, 0, 0);
        check_range("bytes=0-1,5-6", 100, HTTP_RANGE_NONE, 0, 0);
        check_range("items=0-1", 100, HTTP_RANGE_NONE, 0, 0);
        check_range("bytes=-", 100, HTTP_RANGE_NONE, 0, 0);
        check_range("bytes=99999999999999999999-", 100, HTTP_RANGE_NONE, 0, 0);
        check_range("bytes=0-18446744073709551615", 100, HTTP_RANGE_OK, 0, 100);
}

static void test_u64(void)
{
        uint64_t v = 0;
        CHECK_INTEQ(http_parse_u64("0", &v), 0);
        CHECK_INTEQ(http_parse_u64("1073741824", &v), 0);
        CHECK_INTEQ(v, 1073741824);
        CHECK_INTEQ(http_parse_u64("9223372036854775807", &v), 0);
        CHECK_INTEQ(http_parse_u64("9223372036854775808", &v), -EINVAL);
        CHECK_INTEQ(http_parse_u64("", &v), -EINVAL);
        CHECK_INTEQ(http_parse_u64(NULL, &v), -EINVAL);
        CHECK_INTEQ(http_parse_u64("-1", &v), -EINVAL);
        CHECK_INTEQ(http_parse_u64("12 ", &v), -EINVAL);
        CHECK_INTEQ(http_parse_u64("+1", &v), -EINVAL);
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_token_round_trip), TEST(test_token_tampered), TEST(test_token_v1_refused),
                TEST(test_token_access_key), TEST(test_range), TEST(test_u64), { 0 },
        };
        return test_main(tests);
}
