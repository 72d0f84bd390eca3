/* layer_inflate.h - a layer blob's bytes decompressed as they are read:
 * gzip (ISA-L's igzip), zstd (libzstd) or an uncompressed tar, told apart
 * by the blob's first bytes.  The inflater thread of image_unpack.c reads
 * through it; hashing, limits and threads are that file's (layer_inflate.c
 * says what each format accepts). */
#ifndef TESS_LAYER_INFLATE_H
#define TESS_LAYER_INFLATE_H

#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"

/* Where a blob's bytes come from: the next chunk in *ret_buf, valid until
 * the next call; its length, 0 at the end, or -errno. */
typedef ssize_t layer_read_fn(void *data, const void **ret_buf);

struct layer_inflate;

/* IN read, data - the blob's bytes; data is borrowed
 * RET - caller owns; free with layer_inflate_free() */
struct layer_inflate *layer_inflate_new(layer_read_fn *read, void *data);
struct layer_inflate *layer_inflate_free(struct layer_inflate *z); /* accepts NULL, returns NULL */

/* The next block of uncompressed bytes in *ret_buf and *ret_n, valid until
 * the next call: 1; 0 at the end; negative when the blob is not a valid
 * stream (EBADMSG: "truncated gzip stream", "gzip stream: ...", "zstd
 * stream: ...") or could not be read (the reader's errno). */
int layer_inflate_read(struct layer_inflate *z, const void **ret_buf, size_t *ret_n, struct tess_error **err);

#endif
