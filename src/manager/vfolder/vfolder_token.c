/* vfolder_token.c - see vfolder_token.h. */
#include "common/compat.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/buf.h"
#include "manager/vfolder/vfolder_token.h"

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void b64url_encode(struct buf *b, const unsigned char *p, size_t n)
{
        for (size_t i = 0; i < n; i += 3) {
                unsigned v =
                        (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
                buf_putc(b, b64url[v >> 18 & 63]);
                buf_putc(b, b64url[v >> 12 & 63]);
                if (i + 1 < n)
                        buf_putc(b, b64url[v >> 6 & 63]);
                if (i + 2 < n)
                        buf_putc(b, b64url[v & 63]);
        }
}

static int b64url_value(char c)
{
        const char *p = c ? strchr(b64url, c) : NULL;
        return p ? (int)(p - b64url) : -1;
}

/* Unpadded base64url of len chars into out (cap bytes); the length or -1. */
static ssize_t b64url_decode(const char *s, size_t len, unsigned char *out, size_t cap)
{
        size_t o = 0;
        unsigned acc = 0;
        int bits = 0;

        if (len % 4 == 1)
                return -1;
        for (size_t i = 0; i < len; i++) {
                int v = b64url_value(s[i]);
                if (v < 0)
                        return -1;
                acc = (acc << 6 | (unsigned)v) & 0xffffff;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        if (o >= cap)
                                return -1;
                        out[o++] = (unsigned char)(acc >> bits);
                }
        }
        if (bits > 0 && (acc & ((1u << bits) - 1)))
                return -1; /* non-canonical trailing bits: one text per token */
        return (ssize_t)o;
}

static void mac(const unsigned char key[VF_TOKEN_KEY_LEN], const char *p, size_t n, unsigned char out[32])
{
        unsigned outl = 0;
        if (!HMAC(EVP_sha256(), key, VF_TOKEN_KEY_LEN, (const unsigned char *)p, n, out, &outl) || outl != 32)
                abort();
}

void vf_token_key(const unsigned char master[MASTER_KEY_LEN], unsigned char key[VF_TOKEN_KEY_LEN])
{
        static const char label[] = "tessera vfolder token v1";
        unsigned outl = 0;
        if (!HMAC(EVP_sha256(), master, MASTER_KEY_LEN, (const unsigned char *)label, sizeof(label) - 1, key, &outl))
                abort();
}

static const char *const op_names[] = {
        [VFT_UPLOAD] = "upload", [VFT_DOWNLOAD] = "download", [VFT_ARCHIVE] = "archive"
};

char *vf_token_make(const unsigned char key[VF_TOKEN_KEY_LEN], const struct vf_token *t)
{
        struct buf payload = BUF_INIT, out = BUF_INIT;
        unsigned char m[32];

        buf_printf(&payload, "v2\n%s\n%s\n%s\n%s\n%lld\n%lld\n%s", op_names[t->op], t->folder, t->user,
                   t->access_key, (long long)t->expires, (long long)t->size, t->path);
        b64url_encode(&out, (const unsigned char *)payload.data, payload.len);
        mac(key, out.data, out.len, m);
        buf_putc(&out, '.');
        b64url_encode(&out, m, sizeof(m));
        buf_release(&payload);
        return buf_detach(&out, NULL);
}

/* A decimal in [0, INT64_MAX], digits only, no leading zeros but "0". */
static int parse_i64(const char *s, size_t n, int64_t *ret)
{
        int64_t v = 0;

        if (n == 0 || n > 19 || (n > 1 && s[0] == '0'))
                return -1;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                if (v > (INT64_MAX - (s[i] - '0')) / 10)
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        *ret = v;
        return 0;
}

static int copy_uuid(char out[UUID_STR_LEN], const char *s, size_t n)
{
        if (n != UUID_STR_LEN - 1)
                return -1;
        memcpy(out, s, n);
        out[n] = '\0';
        return uuid_valid(out) ? 0 : -1;
}

/* An access key: 1 to VF_TOKEN_AK_MAX letters and digits. */
static int copy_access_key(char out[VF_TOKEN_AK_MAX + 1], const char *s, size_t n)
{
        if (n == 0 || n > VF_TOKEN_AK_MAX)
                return -1;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
                        return -1;
        memcpy(out, s, n);
        out[n] = '\0';
        return 0;
}

static int parse_payload(const char *p, size_t n, struct vf_token *t)
{
        const char *field[8];
        size_t len[8], k = 0;
        const char *s = p, *end = p + n;

        for (; k < 7; k++) {
                const char *nl = memchr(s, '\n', (size_t)(end - s));
                if (!nl)
                        return -1;
                field[k] = s;
                len[k] = (size_t)(nl - s);
                s = nl + 1;
        }
        field[7] = s; /* the path: the rest, no newline or NUL */
        len[7] = (size_t)(end - s);
        if (memchr(s, '\n', len[7]) || memchr(s, '\0', len[7]) || len[7] > BENEATH_PATH_MAX)
                return -1;
        if (len[0] != 2 || memcmp(field[0], "v2", 2) != 0) /* v1 named no keypair: no longer accepted */
                return -1;
        t->op = 0;
        for (int op = VFT_UPLOAD; op <= VFT_ARCHIVE; op++)
                if (len[1] == strlen(op_names[op]) && memcmp(field[1], op_names[op], len[1]) == 0)
                        t->op = (enum vf_token_op)op;
        if (!t->op || copy_uuid(t->folder, field[2], len[2]) < 0 || copy_uuid(t->user, field[3], len[3]) < 0 ||
            copy_access_key(t->access_key, field[4], len[4]) < 0 || parse_i64(field[5], len[5], &t->expires) < 0 ||
            parse_i64(field[6], len[6], &t->size) < 0)
                return -1;
        memcpy(t->path, field[7], len[7]);
        t->path[len[7]] = '\0';
        return 0;
}

int vf_token_parse(const unsigned char key[VF_TOKEN_KEY_LEN], const char *s, int64_t now, struct vf_token *ret,
                   struct tess_error **err)
{
        size_t n = s ? strnlen(s, VF_TOKEN_MAX + 1) : 0;
        const char *dot = n ? memchr(s, '.', n) : NULL;
        unsigned char want[32], got[33], payload[VF_TOKEN_MAX];
        ssize_t plen;

        if (!s || n == 0)
                return tess_err(err, EACCES, "a token is required (?token=)");
        if (n > VF_TOKEN_MAX || !dot)
                return tess_err(err, EACCES, "the token is malformed");
        mac(key, s, (size_t)(dot - s), want);
        if (b64url_decode(dot + 1, n - (size_t)(dot - s) - 1, got, sizeof(got)) != 32 ||
            CRYPTO_memcmp(got, want, 32) != 0)
                return tess_err(err, EACCES, "the token is not valid (tampered with, or not this manager's)");
        plen = b64url_decode(s, (size_t)(dot - s), payload, sizeof(payload));
        if (plen < 0 || parse_payload((const char *)payload, (size_t)plen, ret) < 0)
                return tess_err(err, EACCES, "the token is malformed");
        if (ret->expires <= now)
                return tess_err(err, EACCES, "the token has expired: request another");
        return 0;
}
