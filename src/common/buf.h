/* buf.h - the owning, growable, binary-safe byte buffer (after git's strbuf)
 * and the non-owning view `struct str`.
 *
 * Invariants: data is never NULL after BUF_INIT, data[len] == '\0'.
 * Growth aborts on OOM (daemons and CLI). */
#ifndef TESS_BUF_H
#define TESS_BUF_H

#include <stdarg.h>
#include <stddef.h>

extern char buf_empty[];

struct buf {
        char *data;
        size_t len;
        size_t cap;
};
#define BUF_INIT { .data = buf_empty, .len = 0, .cap = 0 }

struct str {
        const char *p;
        size_t len;
};
#define STR_LIT(s) ((struct str){ (s), sizeof(s) - 1 })

void buf_grow(struct buf *b, size_t extra);
void buf_append(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void buf_reset(struct buf *b); /* len = 0, keeps memory */
/* Append s percent-encoded for a URL path segment or query value: all but
 * A-Z a-z 0-9 - . _ ~ become %XX. */
void buf_percent_encode(struct buf *b, const char *s);
/* Caller owns the result (never NULL); b is reset to BUF_INIT. */
char *buf_detach(struct buf *b, size_t *ret_len);
void buf_release(struct buf *b);

#endif
