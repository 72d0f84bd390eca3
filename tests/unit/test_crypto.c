/* test_crypto.c - identifiers, keypairs, password hashes, sealed secrets. */
#include "common/compat.h"

#include <ctype.h>

#include "../lib/test.h"
#include "common/crypto.h"

static void test_crypto_password_hash_verify(void)
{
        char *h = password_hash("correct horse battery staple");
        char *h2 = password_hash("correct horse battery staple");

        CHECK(strncmp(h, "scrypt$15$8$1$", 14) == 0);
        CHECK(strstr(h, "correct") == NULL);
        CHECK(password_verify("correct horse battery staple", h));
        CHECK(!password_verify("correct horse battery stapl", h));
        CHECK(!password_verify("Correct horse battery staple", h));
        CHECK(!password_verify("", h));
        /* salted: the same password hashes differently each time */
        CHECK(strcmp(h, h2) != 0);
        CHECK(password_verify("correct horse battery staple", h2));
        free(h2);

        /* malformed or foreign stored values never verify */
        CHECK(!password_verify("x", NULL));
        CHECK(!password_verify("x", ""));
        CHECK(!password_verify("x", "x"));
        CHECK(!password_verify("x", "$2b$12$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01"));
        CHECK(!password_verify("x", "scrypt$15$8$1$$"));
        CHECK(!password_verify("x", "scrypt$15$8$1$!!!!$????"));
        /* cost parameters a stored value could use to stall the server are refused */
        CHECK(!password_verify("x", "scrypt$30$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="));
        free(h);

        h = password_hash("");
        CHECK(password_verify("", h));
        CHECK(!password_verify(" ", h));
        free(h);
}

/* Flip the top bit of a base64 digit: always a data bit, never padding. */
static char b64_flip_high_bit(char c)
{
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *p = strchr(b64, c);

        return p ? b64[(p - b64) ^ 32] : c;
}

static void test_crypto_secret_seal_open(void)
{
        unsigned char key[MASTER_KEY_LEN], other[MASTER_KEY_LEN];
        struct tess_error *err = NULL;
        const char *plain = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        char *sealed, *sealed2, *back = NULL;

        CHECK_INTEQ(random_bytes(key, sizeof(key), &err), 0);
        memcpy(other, key, sizeof(key));
        other[0] ^= 1;

        sealed = secret_seal(key, plain);
        CHECK(strncmp(sealed, "v1:", 3) == 0);
        CHECK(strstr(sealed, "wJalr") == NULL);
        CHECK_INTEQ(secret_open(key, sealed, &back, &err), 0);
        CHECK_STREQ(back, plain);
        free(back);
        back = NULL;

        /* a fresh nonce each time */
        sealed2 = secret_seal(key, plain);
        CHECK(strcmp(sealed, sealed2) != 0);
        free(sealed2);

        /* the wrong key does not open it */
        CHECK(secret_open(other, sealed, &back, &err) == -EINVAL);
        CHECK(back == NULL);
        err = tess_error_free(err);

        /* flipping any byte of the ciphertext or tag is detected */
        size_t len = strlen(sealed);
        for (size_t i = 3; i < len; i++) {
                if (sealed[i] == '=')
                        continue;
                char *t = xstrdup(sealed);
                t[i] = b64_flip_high_bit(t[i]);
                if (secret_open(key, t, &back, &err) != -EINVAL) {
                        test_fail(__FILE__, __LINE__, "tampered secret at %zu opened", i);
                        free(back);
                        back = NULL;
                }
                err = tess_error_free(err);
                free(t);
        }
        CHECK(secret_open(key, "v2:AAAA", &back, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(secret_open(key, "v1:", &back, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(secret_open(key, "v1:AAAA", &back, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(secret_open(key, "v1:not base64!", &back, &err) == -EINVAL);
        err = tess_error_free(err);
        CHECK(secret_open(key, NULL, &back, &err) == -EINVAL);
        err = tess_error_free(err);
        free(sealed);

        /* empty secret */
        sealed = secret_seal(key, "");
        CHECK_INTEQ(secret_open(key, sealed, &back, &err), 0);
        CHECK_STREQ(back, "");
        free(back);
        free(sealed);
}

static void test_crypto_uuid(void)
{
        char a[UUID_STR_LEN], b[UUID_STR_LEN];

        uuid_generate_str(a);
        uuid_generate_str(b);
        CHECK_INTEQ(strlen(a), 36);
        CHECK(strcmp(a, b) != 0);
        CHECK(uuid_valid(a));
        CHECK(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
        CHECK(a[14] == '4');                              /* version 4 */
        CHECK(strchr("89ab", a[19]) != NULL);             /* RFC 4122 variant */
        for (int i = 0; i < 36; i++)
                CHECK(a[i] == '-' || isdigit((unsigned char)a[i]) || (a[i] >= 'a' && a[i] <= 'f'));
        CHECK(uuid_valid("123e4567-e89b-12d3-a456-426614174000"));
        CHECK(!uuid_valid("123e4567-e89b-12d3-a456-42661417400"));
        CHECK(!uuid_valid("123e4567e89b-12d3-a456-4266141740000"));
        CHECK(!uuid_valid("123e4567-e89b-12d3-a456-42661417400g"));
        CHECK(!uuid_valid(""));
}

static void test_crypto_keypair_format(void)
{
        char ak[21], ak2[21], sk[41];

        generate_access_key(ak);
        generate_access_key(ak2);
        generate_secret_key(sk);
        CHECK_INTEQ(strlen(ak), 20);
        CHECK(strncmp(ak, "AKIA", 4) == 0);
        CHECK(strcmp(ak, ak2) != 0);
        for (int i = 0; i < 20; i++)
                CHECK(isupper((unsigned char)ak[i]) || isdigit((unsigned char)ak[i]));
        CHECK_INTEQ(strlen(sk), 40);
        for (int i = 0; i < 40; i++)
                CHECK(isalnum((unsigned char)sk[i]));
}

static void test_crypto_random_string(void)
{
        char s[257];
        int seen[2] = { 0, 0 };

        random_string(s, 256, "ab");
        CHECK_INTEQ(strlen(s), 256);
        for (int i = 0; i < 256; i++) {
                CHECK(s[i] == 'a' || s[i] == 'b');
                seen[s[i] == 'b']++;
        }
        CHECK(seen[0] > 0 && seen[1] > 0);
        random_string(s, 0, "ab");
        CHECK_STREQ(s, "");
}

static void test_crypto_sha256_hex(void)
{
        char out[65];

        /* printf '' | sha256sum ; printf abc | sha256sum */
        sha256_hex("", 0, out);
        CHECK_STREQ(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        sha256_hex("abc", 3, out);
        CHECK_STREQ(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static const struct test tests[] = {
        TEST(test_crypto_password_hash_verify),
        TEST(test_crypto_secret_seal_open),
        TEST(test_crypto_uuid),
        TEST(test_crypto_keypair_format),
        TEST(test_crypto_random_string),
        TEST(test_crypto_sha256_hex),
        {},
};

int main(void)
{
        return test_main(tests);
}
