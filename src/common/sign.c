/* sign.c - see sign.h. */
#include "common/compat.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/sign.h"

static const EVP_MD *sign_md(const char *hash)
{
        if (streq(hash, "sha256"))
                return EVP_sha256();
        if (streq(hash, "sha1"))
                return EVP_sha1();
        if (streq(hash, "sha384"))
                return EVP_sha384();
        if (streq(hash, "sha512"))
                return EVP_sha512();
        return NULL;
}

static void skip_spaces(const char **p)
{
        while (**p == ' ' || **p == '\t')
                (*p)++;
}

int sign_parse_authorization(const char *value, struct sign_auth *ret, struct tess_error **err)
{
        const char *p = value;
        bool have_cred = false;

        memset(ret, 0, sizeof(*ret));
        snprintf(ret->hash, sizeof(ret->hash), "sha256");
        if (strncmp(p, "BackendAI ", 10) == 0)
                p += 10;
        else if (strncmp(p, "Sorna ", 6) == 0)
                p += 6;
        else
                return tess_err(err, EINVAL, "authorization scheme must be 'BackendAI'");
        while (*p) {
                skip_spaces(&p);
                const char *key = p, *eq = strchr(p, '=');
                if (!eq)
                        return tess_err(err, EINVAL, "malformed authorization parameter");
                const char *val = eq + 1, *end = strchr(val, ',');
                if (!end)
                        end = val + strlen(val);
                size_t klen = (size_t)(eq - key), vlen = (size_t)(end - val);
                while (vlen > 0 && (val[vlen - 1] == ' ' || val[vlen - 1] == '\t'))
                        vlen--;
                if (klen == 10 && strncmp(key, "signMethod", 10) == 0) {
                        if (vlen < 6 || vlen > 11 || strncasecmp(val, "HMAC-", 5) != 0)
                                return tess_err(err, EINVAL, "unsupported signMethod");
                        for (size_t i = 0; i < vlen - 5; i++)
                                ret->hash[i] = (char)tolower((unsigned char)val[5 + i]);
                        ret->hash[vlen - 5] = '\0';
                        if (!sign_md(ret->hash))
                                return tess_err(err, EINVAL, "unsupported signMethod");
                } else if (klen == 10 && strncmp(key, "credential", 10) == 0) {
                        const char *colon = memchr(val, ':', vlen);
                        if (!colon)
                                return tess_err(err, EINVAL, "malformed credential");
                        size_t aklen = (size_t)(colon - val), siglen = vlen - aklen - 1;
                        if (aklen == 0 || aklen >= sizeof(ret->access_key) || siglen == 0 ||
                            siglen >= sizeof(ret->signature))
                                return tess_err(err, EINVAL, "malformed credential");
                        memcpy(ret->access_key, val, aklen);
                        memcpy(ret->signature, colon + 1, siglen);
                        have_cred = true;
                }
                p = *end ? end + 1 : end;
        }
        if (!have_cred)
                return tess_err(err, EINVAL, "authorization has no credential");
        return 0;
}

int sign_check_version(const char *version, struct tess_error **err)
{
        unsigned major;
        char date[9];
        int n = 0;

        /* exactly v<digit>.<8 digits>: %u alone would take "v+9", "v 9" and "v-4294967287" */
        if (!version || strlen(version) != 11 || version[0] != 'v' || !isdigit((unsigned char)version[1]) ||
            sscanf(version, "v%u.%8[0-9]%n", &major, date, &n) != 2 || (size_t)n != strlen(version) ||
            strlen(date) != 8)
                return tess_err(err, EINVAL, "malformed API version '%.32s'", version ? version : "");
        static const char oldest[] = API_VERSION_OLDEST, newest[] = API_VERSION_NEWEST;
        if (strcmp(date, &oldest[3]) < 0 || strcmp(date, &newest[3]) > 0 || major < 4 ||
            major > 9)
                return tess_err(err, EINVAL, "unsupported API version '%.32s'", version);
        return 0;
}

void sign_mimetype(const char *content_type, char *out, size_t len)
{
        size_t i = 0;

        if (!content_type)
                content_type = "";
        while (*content_type == ' ')
                content_type++;
        for (; content_type[i] && content_type[i] != ';' && i + 1 < len; i++)
                out[i] = (char)tolower((unsigned char)content_type[i]);
        while (i > 0 && out[i - 1] == ' ')
                i--;
        out[i] = '\0';
}

static void to_hex(const unsigned char *d, unsigned n, char *out)
{
        static const char hex[] = "0123456789abcdef";
        for (unsigned i = 0; i < n; i++) {
                out[2 * i] = hex[d[i] >> 4];
                out[2 * i + 1] = hex[d[i] & 15];
        }
        out[2 * n] = '\0';
}

/* One HMAC with the algorithm fetched once (OpenSSL 3's HMAC() fetches it
 * on every call, which dominated a signed request's cost). */
static int hmac(const char *hash, const void *key, size_t keylen, const void *data, size_t n, unsigned char *out,
                unsigned *ret_len)
{
        static EVP_MAC *mac;
        OSSL_PARAM params[2];
        size_t outl = 0;
        int ok;

        if (!mac && !(mac = EVP_MAC_fetch(NULL, "HMAC", NULL)))
                return -EIO;
        EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
        if (!ctx)
                return -ENOMEM;
        params[0] = OSSL_PARAM_construct_utf8_string("digest", (char *)hash, 0);
        params[1] = OSSL_PARAM_construct_end();
        ok = EVP_MAC_init(ctx, key, keylen, params) && EVP_MAC_update(ctx, data, n) &&
             EVP_MAC_final(ctx, out, &outl, EVP_MAX_MD_SIZE);
        EVP_MAC_CTX_free(ctx);
        *ret_len = (unsigned)outl;
        return ok ? 0 : -EIO;
}

int sign_derive_key(const char *hash, const char *secret, const char *ymd, const char *host,
                    unsigned char key[SIGN_KEY_MAX], unsigned *ret_len, struct tess_error **err)
{
        unsigned char k1[EVP_MAX_MD_SIZE];
        unsigned k1n;

        if (!sign_md(hash))
                return tess_err(err, EINVAL, "unsupported hash '%s'", hash);
        if (hmac(hash, secret, strlen(secret), ymd, strlen(ymd), k1, &k1n) < 0 ||
            hmac(hash, k1, k1n, host, strlen(host), key, ret_len) < 0)
                return tess_err(err, EIO, "HMAC failed");
        return 0;
}

/* hex(hash("")), the last line of every string to sign. */
static const char *empty_hash_hex(const char *hash)
{
        if (streq(hash, "sha1"))
                return "da39a3ee5e6b4b0d3255bfef95601890afd80709";
        if (streq(hash, "sha384"))
                return "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b";
        if (streq(hash, "sha512"))
                return "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f6"
                       "3b931bd47417a81a538327af927da3e";
        return "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
}

int sign_with_key(const char *hash, const unsigned char *key, unsigned keylen, const char *method,
                  const char *path_query, const char *date, const char *host, const char *mimetype,
                  const char *version, const char *body_hash, char out_hex[SIGN_HEX_MAX], struct tess_error **err)
{
        unsigned char sig[EVP_MAX_MD_SIZE];
        unsigned sign_n;
        struct buf s = BUF_INIT;
        int r;

        if (!sign_md(hash))
                return tess_err(err, EINVAL, "unsupported hash '%s'", hash);
        buf_printf(&s, "%s\n%s\n%s\nhost:%s\ncontent-type:%s\nx-backendai-version:%s\n%s", method, path_query, date,
                   host, mimetype, version, body_hash ? body_hash : empty_hash_hex(hash));
        r = hmac(hash, key, keylen, s.data, s.len, sig, &sign_n);
        buf_release(&s);
        if (r < 0)
                return tess_err(err, EIO, "HMAC failed");
        to_hex(sig, sign_n, out_hex);
        return 0;
}

int sign_compute(const char *hash, const char *secret, const char *method, const char *path_query,
                 const char *date, const char *ymd, const char *host, const char *mimetype,
                 const char *version, const char *body_hash, char out_hex[SIGN_HEX_MAX], struct tess_error **err)
{
        unsigned char key[SIGN_KEY_MAX];
        unsigned keylen;
        int r = sign_derive_key(hash, secret, ymd, host, key, &keylen, err);
        if (r < 0)
                return r;
        return sign_with_key(hash, key, keylen, method, path_query, date, host, mimetype, version, body_hash,
                             out_hex, err);
}

int sign_body_hash(const char *hash, const void *body, size_t len, char out_hex[SIGN_HEX_MAX],
                   struct tess_error **err)
{
        const EVP_MD *md = sign_md(hash);
        unsigned char d[EVP_MAX_MD_SIZE];
        unsigned n;

        if (!md)
                return tess_err(err, EINVAL, "unsupported hash '%s'", hash);
        if (!EVP_Digest(body, len, d, &n, md, NULL))
                return tess_err(err, EIO, "digest failed");
        to_hex(d, n, out_hex);
        return 0;
}

bool sign_equal(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        if (la != lb)
                return false;
        return CRYPTO_memcmp(a, b, la) == 0;
}

int sign_agent_request(const char *secret, const char *method, const char *path, int64_t ts, const char *agent_id,
                       const void *body, size_t len, char out_hex[SIGN_HEX_MAX], struct tess_error **err)
{
        char body_hash[65];

        sha256_hex(body, len, body_hash);
        return sign_agent_request_hashed(secret, method, path, ts, agent_id, body_hash, out_hex, err);
}

int sign_agent_request_hashed(const char *secret, const char *method, const char *path, int64_t ts,
                              const char *agent_id, const char *body_hash, char out_hex[SIGN_HEX_MAX],
                              struct tess_error **err)
{
        unsigned char mac[EVP_MAX_MD_SIZE];
        unsigned n;

        _cleanup_free_ char *msg = xasprintf("%s\n%s\n%" PRId64 "\n%s\n%s", method, path, ts, agent_id, body_hash);
        if (hmac("sha256", secret, strlen(secret), msg, strlen(msg), mac, &n) < 0)
                return tess_err(err, EIO, "HMAC failed");
        to_hex(mac, n, out_hex);
        return 0;
}

int agent_auth_parse(const char *value, char id[AGENT_ID_MAX + 1], char sig[SIGN_HEX_MAX])
{
        static const char prefix[] = "TesseraAgent id=";
        const char *p, *comma;
        size_t n;

        if (strncmp(value, prefix, sizeof(prefix) - 1) != 0)
                return -EINVAL;
        p = value + sizeof(prefix) - 1;
        comma = strchr(p, ',');
        if (!comma || comma == p || (size_t)(comma - p) > AGENT_ID_MAX)
                return -EINVAL;
        memcpy(id, p, (size_t)(comma - p));
        id[comma - p] = '\0';
        p = comma + 1;
        while (*p == ' ')
                p++;
        if (strncmp(p, "signature=", 10) != 0)
                return -EINVAL;
        p += 10;
        n = strspn(p, "0123456789abcdefABCDEF");
        if (n == 0 || n >= SIGN_HEX_MAX || p[n] != '\0')
                return -EINVAL;
        memcpy(sig, p, n + 1);
        return 0;
}
