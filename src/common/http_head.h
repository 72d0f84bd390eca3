/* http_head.h - the head of an HTTP/1.1 answer read from a socket the
 * caller owns, for protocol upgrades: after a 101 the bytes are no longer
 * HTTP, so libcurl (which reads whole answers) cannot be used.  The
 * terminal's WebSocket (ws.c), the agent tunnels and the WebSockets of the
 * app proxy (src/manager/apps/app_proxy*.c) read their handshake answers here.
 *
 * The parser takes what an app in a session wrote: fuzzed
 * (tests/fuzz/fuzz_http_head.c). */
#ifndef TESS_HTTP_HEAD_H
#define TESS_HTTP_HEAD_H

#include <stddef.h>

#include "common/buf.h"
#include "common/error.h"

#define HTTP_HEAD_MAX        16384 /* bytes of one head */
#define HTTP_HEAD_FIELDS_MAX 64

struct http_head_field {
        struct str name, value; /* value without surrounding blanks */
};

struct http_head {
        int status; /* 100-599 */
        struct str reason;
        struct http_head_field fields[HTTP_HEAD_FIELDS_MAX];
        int nfields;
};

/* Read from fd (blocking or not) until `in` holds a whole head ("...\r\n\r\n"),
 * for at most timeout_ms.  `in` gets all that was read: the head and what
 * came after it.  RET the head's length (the empty line included);
 * -ETIMEDOUT, -ECONNRESET (closed first), -E2BIG (over HTTP_HEAD_MAX). */
int http_head_read(int fd, int timeout_ms, struct buf *in, struct tess_error **err);

/* Parse a head of len bytes (status line, fields, the empty line): views
 * into p.  Obsolete line folding and fields over HTTP_HEAD_FIELDS_MAX are
 * refused.  RET 0; -EINVAL. */
int http_head_parse(const char *p, size_t len, struct http_head *ret, struct tess_error **err);

/* The value of the first field called name (case-insensitive); NULL if none. */
const struct str *http_head_get(const struct http_head *h, const char *name);

#endif
