/* crypto.c - see crypto.h. */
#include "common/compat.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <sys/random.h>

#include "common/crypto.h"

int random_bytes(void *p, size_t n, struct tess_error **err)
{
        if (RAND_bytes(p, (int)n) != 1)
                return tess_err(err, EIO, "no randomness available");
        return 0;
}

static void random_or_die(void *p, size_t n)
{
        if (RAND_bytes(p, (int)n) != 1)
                abort();
}

void uuid_generate_str(char out[UUID_STR_LEN])
{
        unsigned char b[16];

        random_or_die(b, sizeof(b));
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        snprintf(out, UUID_STR_LEN, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

int hex_digit_value(int c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

bool uuid_valid(const char *s)
{
        if (strlen(s) != 36)
                return false;
        for (int i = 0; i < 36; i++) {
                if (i == 8 || i == 13 || i == 18 || i == 23) {
                        if (s[i] != '-')
                                return false;
                } else if (!isxdigit((unsigned char)s[i])) {
                        return false;
                }
        }
        return true;
}

void random_string(char *out, size_t n, const char *alphabet)
{
        size_t alen = strlen(alphabet);
        size_t limit = 256 - 256 % alen; /* rejection sampling: no modulo bias */

        for (size_t i = 0; i < n;) {
                unsigned char b[32];
                random_or_die(b, sizeof(b));
                for (size_t j = 0; j < sizeof(b) && i < n; j++)
                        if (b[j] < limit)
                                out[i++] = alphabet[b[j] % alen];
        }
        out[n] = '\0';
}

void generate_access_key(char out[21])
{
        memcpy(out, "AKIA", 4);
        random_string(out + 4, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
}

void generate_secret_key(char out[41])
{
        random_string(out, 40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
}

char *base64_encode(const void *data, size_t n)
{
        const unsigned char *p = data;
        char *out = xmalloc(4 * ((n + 2) / 3) + 1);
        EVP_EncodeBlock((unsigned char *)out, p, (int)n);
        return out;
}

int base64_decode(const char *s, size_t len, unsigned char *out, size_t cap)
{
        if (len % 4 || len / 4 * 3 > cap)
                return -1;
        int n = EVP_DecodeBlock(out, (const unsigned char *)s, (int)len);
        if (n < 0)
                return -1;
        if (len >= 1 && s[len - 1] == '=')
                n--;
        if (len >= 2 && s[len - 2] == '=')
                n--;
        return n;
}

#define SCRYPT_LOG_N 15
#define SCRYPT_R 8
#define SCRYPT_P 1

static int scrypt(const char *pw, const unsigned char *salt, size_t saltlen, unsigned logn, unsigned r, unsigned p,
                  unsigned char *out, size_t outlen)
{
        if (logn > 20 || r > 16 || p > 4)
                return -1;
        return EVP_PBE_scrypt(pw, strlen(pw), salt, saltlen, 1ULL << logn, r, p, 256ULL * 1024 * 1024, out, outlen) ==
                               1
                       ? 0
                       : -1;
}

char *password_hash(const char *password)
{
        unsigned char salt[16], hash[32];
        _cleanup_free_ char *s64 = NULL, *h64 = NULL;

        random_or_die(salt, sizeof(salt));
        if (scrypt(password, salt, sizeof(salt), SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P, hash, sizeof(hash)) < 0)
                abort();
        s64 = base64_encode(salt, sizeof(salt));
        h64 = base64_encode(hash, sizeof(hash));
        return xasprintf("scrypt$%d$%d$%d$%s$%s", SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P, s64, h64);
}

bool password_verify(const char *password, const char *stored)
{
        unsigned logn, r, p;
        char s64[64], h64[64];
        unsigned char salt[48], want[48], got[48];
        int sn, hn;

        if (!stored || sscanf(stored, "scrypt$%u$%u$%u$%63[^$]$%63s", &logn, &r, &p, s64, h64) != 5)
                return false;
        sn = base64_decode(s64, strlen(s64), salt, sizeof(salt));
        hn = base64_decode(h64, strlen(h64), want, sizeof(want));
        if (sn <= 0 || hn <= 0)
                return false;
        if (scrypt(password, salt, (size_t)sn, logn, r, p, got, (size_t)hn) < 0)
                return false;
        return CRYPTO_memcmp(got, want, (size_t)hn) == 0;
}

char *secret_seal(const unsigned char key[MASTER_KEY_LEN], const char *plain)
{
        size_t n = strlen(plain);
        unsigned char *blob = xmalloc(12 + n + 16);
        int outl = 0, fl = 0;
        EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

        random_or_die(blob, 12);
        if (!c || !EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, blob) ||
            !EVP_EncryptUpdate(c, blob + 12, &outl, (const unsigned char *)plain, (int)n) ||
            !EVP_EncryptFinal_ex(c, blob + 12 + outl, &fl) ||
            !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, blob + 12 + n))
                abort();
        EVP_CIPHER_CTX_free(c);
        _cleanup_free_ char *b64 = base64_encode(blob, 12 + n + 16);
        free(blob);
        return xasprintf("v1:%s", b64);
}

int secret_open(const unsigned char key[MASTER_KEY_LEN], const char *sealed, char **ret, struct tess_error **err)
{
        unsigned char blob[256];
        int n, outl = 0, fl = 0, ok;
        char *plain;

        if (!sealed || strncmp(sealed, "v1:", 3) != 0)
                return tess_err(err, EINVAL, "sealed secret has an unknown format");
        n = base64_decode(sealed + 3, strlen(sealed + 3), blob, sizeof(blob));
        if (n < 12 + 16)
                return tess_err(err, EINVAL, "sealed secret is malformed");
        size_t len = (size_t)n - 28;
        plain = xmalloc(len + 1);
        EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
        ok = c && EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, blob) &&
             EVP_DecryptUpdate(c, (unsigned char *)plain, &outl, blob + 12, (int)len) &&
             EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, blob + 12 + len) &&
             EVP_DecryptFinal_ex(c, (unsigned char *)plain + outl, &fl) > 0;
        EVP_CIPHER_CTX_free(c);
        if (!ok) {
                free(plain);
                return tess_err(err, EINVAL, "sealed secret does not open with this master key");
        }
        plain[len] = '\0';
        *ret = plain;
        return 0;
}

void sha256_hex(const void *data, size_t n, char out[65])
{
        static const char hex[] = "0123456789abcdef";
        unsigned char d[32];
        unsigned dn;

        EVP_Digest(data, n, d, &dn, EVP_sha256(), NULL);
        for (unsigned i = 0; i < 32; i++) {
                out[2 * i] = hex[d[i] >> 4];
                out[2 * i + 1] = hex[d[i] & 15];
        }
        out[64] = '\0';
}
