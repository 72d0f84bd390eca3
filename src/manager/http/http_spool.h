/* http_spool.h - a request body kept on disk instead of in memory: an
 * unlinked file in the spool folder, written as the bytes come and mapped
 * read-only once the body is whole, so that handlers see it as any other
 * body (http_body) while the manager's memory holds none of it
 * (docs/manager.md, "Limits against denial of service"). */
#ifndef TESS_HTTP_SPOOL_H
#define TESS_HTTP_SPOOL_H

#include <stddef.h>

#include "common/buf.h"
#include "common/error.h"

struct http_spool {
        int fd; /* -1: none */
        size_t len;
        void *map; /* once mapped: len + 1 bytes, the last a NUL */
};

#define HTTP_SPOOL_INIT { .fd = -1 }

/* An unlinked file in dir (0600).  RET 0; -errno. */
int http_spool_open(struct http_spool *sp, const char *dir, struct tess_error **err);

/* Append n bytes.  RET 0; -errno (-ENOSPC: the disk is full). */
int http_spool_write(struct http_spool *sp, const void *p, size_t n);

/* Map the whole body, NUL-terminated, into *ret (which must not be
 * released: http_spool_close unmaps it).  RET 0; -errno. */
int http_spool_map(struct http_spool *sp, struct buf *ret);

void http_spool_close(struct http_spool *sp);

#endif
