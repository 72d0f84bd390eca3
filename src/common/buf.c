/* buf.c - see buf.h. */
#include "common/compat.h"

#include <ctype.h>

#include "common/buf.h"

char buf_empty[1];

void buf_grow(struct buf *b, size_t extra)
{
        size_t want = b->len + extra + 1;

        if (want <= b->cap)
                return;
        size_t cap = b->cap ? b->cap : 64;
        while (cap < want)
                cap *= 2;
        if (b->data == buf_empty) {
                b->data = xmalloc(cap);
                b->data[0] = '\0';
        } else {
                b->data = xrealloc(b->data, cap);
        }
        b->cap = cap;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
        if (n == 0)
                return;
        buf_grow(b, n);
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
        buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
        buf_append(b, &c, 1);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
        va_list cp;
        int n;

        va_copy(cp, ap);
        n = vsnprintf(b->data + b->len, b->cap ? b->cap - b->len : 0, fmt, cp);
        va_end(cp);
        if (n < 0)
                return;
        if (b->len + (size_t)n + 1 > b->cap) {
                buf_grow(b, (size_t)n);
                vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        }
        b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        buf_vprintf(b, fmt, ap);
        va_end(ap);
}

void buf_reset(struct buf *b)
{
        b->len = 0;
        b->data[0] = '\0';
}

char *buf_detach(struct buf *b, size_t *ret_len)
{
        char *p = b->data == buf_empty ? xstrdup("") : b->data;

        if (ret_len)
                *ret_len = b->len;
        *b = (struct buf)BUF_INIT;
        return p;
}

void buf_release(struct buf *b)
{
        if (b->data != buf_empty)
                free(b->data);
        *b = (struct buf)BUF_INIT;
}

void buf_percent_encode(struct buf *b, const char *s)
{
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~')
                        buf_putc(b, (char)c);
                else
                        buf_printf(b, "%%%02X", c);
        }
}
