/* layer_inflate.c - a layer blob decompressed as it is read (the inflater
 * thread of image_unpack.c).  What the blob is, its first bytes say (the
 * OCI layer media types: tar, tar+gzip, tar+zstd):
 *
 *   1f 8b          gzip: each member's header read here (its CRC-16 checked
 *                  when it has one), its deflate data inflated by ISA-L's
 *                  isal_inflate (igzip), which checks the CRC-32 and size
 *                  after it.  (ISA-L 2.30 parses headers too, but refuses a
 *                  valid header CRC when the header comes in two pieces.)
 *                  Members follow one another (gzip a b > ab; pigz): after
 *                  one ends, the next starts when the bytes that follow
 *                  begin with 1f 8b; anything else after a complete member
 *                  (the zero padding some tools write, or other bytes) ends
 *                  the stream and is ignored, as libarchive, zlib's gzread,
 *                  igzip and GNU gzip do.  A stream that ends inside a
 *                  member is truncated.
 *   28 b5 2f fd    zstd (or a skippable frame, 5? 2a 4d 18), through libzstd's
 *                  ZSTD_decompressStream: frames one after another to the
 *                  end; bytes that are not a frame are an error, and so is
 *                  a stream that ends inside a frame (as in libarchive).
 *   anything else  an uncompressed tar: passed through as it is, for the
 *                  tar reader to judge.
 *
 * No other format, and nothing that runs a program. */
#include "common/compat.h"

#include <assert.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>
#include <zstd.h>

#include "image/layer_inflate.h"

#define OUT_SIZE ((size_t)256 << 10)
#define FEED_MAX ((size_t)1 << 30) /* isal_inflate's avail_in is 32 bits */

enum layer_kind {
        KIND_UNKNOWN, /* nothing read yet */
        KIND_TAR,
        KIND_GZIP,
        KIND_ZSTD,
};

struct layer_inflate {
        layer_read_fn *read;
        void *data;
        bool eof;  /* read said the end */
        bool done; /* the stream ended: layer_inflate_read returns 0 */
        enum layer_kind kind;
        /* the input not consumed yet: first pre (bytes gathered into head),
         * then in (the rest of the chunk read last) */
        unsigned char head[4];
        const unsigned char *pre, *in;
        size_t pre_n, in_n;
        unsigned char *out;       /* OUT_SIZE: what gzip and zstd decompress into */
        struct inflate_state *gz; /* gzip */
        bool gz_header;           /* a member's header comes next */
        uLong gz_hcrc;            /* the CRC-32 of the header read so far */
        ZSTD_DStream *zs;         /* zstd */
        size_t zs_hint;           /* ZSTD_decompressStream's last answer: 0 between frames */
        bool zs_full;             /* its last call filled out: it may hold more */
};

struct layer_inflate *layer_inflate_new(layer_read_fn *read, void *data)
{
        struct layer_inflate *z = xcalloc(1, sizeof(*z));

        z->read = read;
        z->data = data;
        return z;
}

struct layer_inflate *layer_inflate_free(struct layer_inflate *z)
{
        if (!z)
                return NULL;
        free(z->out);
        free(z->gz);
        ZSTD_freeDStream(z->zs);
        free(z);
        return NULL;
}

/* ---- input ---- */

/* The next chunk into in: 1, 0 at the end, or negative. */
static int refill(struct layer_inflate *z, struct tess_error **err)
{
        const void *p;
        ssize_t n;

        if (z->eof)
                return 0;
        n = z->read(z->data, &p);
        if (n < 0)
                return tess_err(err, (int)-n, "reading the blob: %s", strerror((int)-n));
        if (n == 0) {
                z->eof = true;
                return 0;
        }
        z->in = p;
        z->in_n = (size_t)n;
        return 1;
}

/* The input not consumed yet, as far as it is contiguous: its length. */
static size_t pending(const struct layer_inflate *z, const unsigned char **ret_p)
{
        if (z->pre_n > 0) {
                *ret_p = z->pre;
                return z->pre_n;
        }
        *ret_p = z->in;
        return z->in_n;
}

/* The input not consumed yet, as far as it is contiguous, reading the next
 * chunk when there is none: its length (up to INT_MAX), 0 at the end, or
 * negative. */
static int available(struct layer_inflate *z, const unsigned char **ret_p, struct tess_error **err)
{
        for (;;) {
                size_t k = pending(z, ret_p);
                if (k > 0)
                        return k > INT_MAX ? INT_MAX : (int)k;
                int r = refill(z, err);
                if (r <= 0)
                        return r;
        }
}

/* k bytes of what pending() gave are used. */
static void consume(struct layer_inflate *z, size_t k)
{
        if (z->pre_n > 0) {
                z->pre += k;
                z->pre_n -= k;
        } else {
                z->in += k;
                z->in_n -= k;
        }
}

/* The next `want` bytes of input (fewer at the end) made contiguous at pre,
 * reading chunks as needed (a chunk may be a single byte): their count, or
 * negative. */
static int gather(struct layer_inflate *z, size_t want, struct tess_error **err)
{
        unsigned char got[sizeof(z->head)];
        size_t n = 0;

        assert(want <= sizeof(got));
        while (n < want) {
                const unsigned char *p;
                int r = available(z, &p, err);

                if (r <= 0) {
                        if (r < 0)
                                return r;
                        break;
                }
                size_t k = (size_t)r < want - n ? (size_t)r : want - n;
                memcpy(got + n, p, k);
                consume(z, k);
                n += k;
        }
        memcpy(z->head, got, n);
        z->pre = z->head;
        z->pre_n = n;
        return (int)n;
}

/* ---- gzip ---- */

static const struct {
        int code;
        const char *why;
} isal_errors[] = {
        { ISAL_INCORRECT_CHECKSUM, "checksum mismatch (the data is corrupt)" },
        { ISAL_INVALID_WRAPPER, "invalid header" },
        { ISAL_UNSUPPORTED_METHOD, "unsupported compression method" },
        { ISAL_INVALID_BLOCK, "invalid deflate block" },
        { ISAL_INVALID_SYMBOL, "invalid deflate symbol" },
        { ISAL_INVALID_LOOKBACK, "invalid back-reference distance" },
};

static int gzip_fail(int code, struct tess_error **err)
{
        for (size_t i = 0; i < ARRAY_SIZE(isal_errors); i++) {
                if (isal_errors[i].code == code)
                        return tess_err(err, EBADMSG, "gzip stream: %s", isal_errors[i].why);
        }
        return tess_err(err, EBADMSG, "gzip stream: error %d", code);
}

/* n bytes of a member's header into dst (skipped when dst is NULL), or
 * up to and with a NUL when n is 0 (a name, a comment); into the header's
 * CRC all the same: 0, or negative. */
static int header_bytes(struct layer_inflate *z, unsigned char *dst, size_t n, struct tess_error **err)
{
        bool string = n == 0;

        for (;;) {
                const unsigned char *p, *nul;
                int r = available(z, &p, err);

                if (r < 0)
                        return r;
                if (r == 0)
                        return tess_err(err, EBADMSG, "truncated gzip stream");
                size_t k = (size_t)r;
                if (string) {
                        nul = memchr(p, '\0', k);
                        k = nul ? (size_t)(nul - p) + 1 : k;
                } else {
                        k = k < n ? k : n;
                }
                z->gz_hcrc = crc32(z->gz_hcrc, p, (uInt)k);
                if (dst) {
                        memcpy(dst, p, k);
                        dst += k;
                }
                consume(z, k);
                if (string ? nul != NULL : (n -= k) == 0)
                        return 0;
        }
}

#define GZIP_FHCRC    0x02
#define GZIP_FEXTRA   0x04
#define GZIP_FNAME    0x08
#define GZIP_FCOMMENT 0x10
#define GZIP_RESERVED 0xe0

/* A member's header (RFC 1952 2.3): then its deflate data for isal_inflate,
 * which checks the trailer after it. */
static int gzip_header(struct layer_inflate *z, struct tess_error **err)
{
        unsigned char h[10], x[2];
        unsigned flags;
        int r;

        z->gz_hcrc = crc32(0, NULL, 0);
        r = header_bytes(z, h, sizeof(h), err);
        if (r < 0)
                return r;
        flags = h[3];
        if (h[2] != 8)
                return tess_err(err, EBADMSG, "gzip stream: unsupported compression method");
        if (flags & GZIP_RESERVED)
                return tess_err(err, EBADMSG, "gzip stream: invalid header");
        if (flags & GZIP_FEXTRA) {
                r = header_bytes(z, x, 2, err);
                if (r >= 0 && (x[0] | x[1] << 8) > 0)
                        r = header_bytes(z, NULL, x[0] | x[1] << 8, err);
                if (r < 0)
                        return r;
        }
        if ((flags & GZIP_FNAME) && (r = header_bytes(z, NULL, 0, err)) < 0)
                return r;
        if ((flags & GZIP_FCOMMENT) && (r = header_bytes(z, NULL, 0, err)) < 0)
                return r;
        if (flags & GZIP_FHCRC) {
                unsigned want = z->gz_hcrc & 0xffff;
                r = header_bytes(z, x, 2, err);
                if (r < 0)
                        return r;
                if ((unsigned)(x[0] | x[1] << 8) != want)
                        return tess_err(err, EBADMSG, "gzip stream: header checksum mismatch");
        }
        isal_inflate_reset(z->gz);
        z->gz->crc_flag = ISAL_GZIP_NO_HDR_VER;
        z->gz_header = false;
        return 0;
}

static int gzip_read(struct layer_inflate *z, size_t *ret_n, struct tess_error **err)
{
        struct inflate_state *s = z->gz;
        int r;

        for (;;) {
                const unsigned char *p;
                size_t fed;

                if (s->block_state == ISAL_BLOCK_FINISH && !z->gz_header) { /* is another member next? */
                        r = gather(z, 2, err);
                        if (r < 0)
                                return r;
                        if (r < 2 || z->pre[0] != 0x1f || z->pre[1] != 0x8b) {
                                z->done = true; /* what follows is ignored */
                                return 0;
                        }
                        z->gz_header = true;
                }
                if (z->gz_header && (r = gzip_header(z, err)) < 0)
                        return r;
                fed = pending(z, &p);
                fed = fed < FEED_MAX ? fed : FEED_MAX;
                s->next_in = (uint8_t *)p;
                s->avail_in = (uint32_t)fed;
                s->next_out = z->out;
                s->avail_out = (uint32_t)OUT_SIZE;
                r = isal_inflate(s);
                if (r != ISAL_DECOMP_OK)
                        return gzip_fail(r, err);
                /* (at a member's end it gives back what it read ahead, never
                 * more than it was given in this call: tests feed it a byte
                 * at a time) */
                if (s->avail_in > fed)
                        return tess_err(err, EBADMSG, "gzip stream: invalid deflate data");
                consume(z, fed - s->avail_in);
                if (s->avail_out < OUT_SIZE) {
                        *ret_n = OUT_SIZE - s->avail_out;
                        return 1;
                }
                if (fed == 0 && s->block_state != ISAL_BLOCK_FINISH) { /* it wants more */
                        r = refill(z, err);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                return tess_err(err, EBADMSG, "truncated gzip stream");
                }
        }
}

/* ---- zstd ---- */

static int zstd_read(struct layer_inflate *z, size_t *ret_n, struct tess_error **err)
{
        for (;;) {
                const unsigned char *p;
                size_t fed = pending(z, &p);
                ZSTD_inBuffer in = { p, fed, 0 };
                ZSTD_outBuffer out = { z->out, OUT_SIZE, 0 };
                int r;

                if (fed == 0 && !z->zs_full) {
                        r = refill(z, err);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                continue;
                        if (z->zs_hint != 0)
                                return tess_err(err, EBADMSG, "truncated zstd stream");
                        z->done = true;
                        return 0;
                }
                z->zs_hint = ZSTD_decompressStream(z->zs, &out, &in);
                consume(z, in.pos);
                if (ZSTD_isError(z->zs_hint))
                        return tess_err(err, EBADMSG, "zstd stream: %s", ZSTD_getErrorName(z->zs_hint));
                z->zs_full = out.pos == out.size;
                if (out.pos > 0) {
                        *ret_n = out.pos;
                        return 1;
                }
        }
}

/* ---- the format ---- */

static bool zstd_magic(const unsigned char *p)
{
        static const unsigned char frame[] = { 0x28, 0xb5, 0x2f, 0xfd };

        return memcmp(p, frame, 4) == 0 || ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18);
}

static int detect(struct layer_inflate *z, struct tess_error **err)
{
        int n = gather(z, 4, err);

        if (n < 0)
                return n;
        if (n >= 2 && z->pre[0] == 0x1f && z->pre[1] == 0x8b) {
                z->kind = KIND_GZIP;
                z->gz = xcalloc(1, sizeof(*z->gz));
                isal_inflate_init(z->gz);
                z->gz_header = true;
        } else if (n == 4 && zstd_magic(z->pre)) {
                z->kind = KIND_ZSTD;
                z->zs = ZSTD_createDStream();
                if (!z->zs || ZSTD_isError(ZSTD_initDStream(z->zs)))
                        abort(); /* out of memory */
                z->zs_hint = 1;  /* no frame yet */
        } else {
                z->kind = KIND_TAR;
                return 0;
        }
        z->out = xmalloc(OUT_SIZE);
        return 0;
}

/* The tar as it is: the input's chunks. */
static int tar_read(struct layer_inflate *z, const void **ret_buf, size_t *ret_n, struct tess_error **err)
{
        const unsigned char *p;
        size_t n = pending(z, &p);
        int r;

        if (n == 0) {
                r = refill(z, err);
                if (r <= 0) {
                        z->done = r == 0;
                        return r;
                }
                n = pending(z, &p);
        }
        consume(z, n);
        *ret_buf = p;
        *ret_n = n;
        return 1;
}

int layer_inflate_read(struct layer_inflate *z, const void **ret_buf, size_t *ret_n, struct tess_error **err)
{
        size_t n = 0;
        int r;

        if (z->done)
                return 0;
        if (z->kind == KIND_UNKNOWN) {
                r = detect(z, err);
                if (r < 0)
                        return r;
        }
        if (z->kind == KIND_TAR)
                return tar_read(z, ret_buf, ret_n, err);
        r = z->kind == KIND_GZIP ? gzip_read(z, &n, err) : zstd_read(z, &n, err);
        if (r > 0) {
                *ret_buf = z->out;
                *ret_n = n;
        }
        return r;
}
