/* http_range.h - parsing the request headers of downloads and uploads:
 * a single-range `Range: bytes=...` (RFC 9110 §14), the non-negative
 * decimals of Upload-Offset / Upload-Length (tus 1.0), and the
 * `Content-Range: START-END` of an OCI registry's chunked blob upload. */
#ifndef TESS_HTTP_RANGE_H
#define TESS_HTTP_RANGE_H

#include <stdint.h>

enum http_range_result {
        HTTP_RANGE_NONE = 0,           /* no usable Range: answer the whole (200) */
        HTTP_RANGE_OK = 1,             /* *start, *len: answer 206 */
        HTTP_RANGE_UNSATISFIABLE = -1, /* answer 416 with Content-Range: bytes * / size */
};

/* The Range header h (NULL: none) against a resource of `size` bytes.  A
 * header that is not one well-formed byte range (several ranges, other
 * units, garbage) is ignored, as the RFC allows: HTTP_RANGE_NONE. */
enum http_range_result http_range_parse(const char *h, uint64_t size, uint64_t *start, uint64_t *len);

/* A decimal of 1-19 digits, nothing else; -EINVAL otherwise (or past INT64_MAX). */
int http_parse_u64(const char *s, uint64_t *ret);

/* The first byte of a chunk's "START-END" (the OCI distribution API's
 * form; "bytes START-END" too), with END >= START; -EINVAL otherwise. */
int http_chunk_range_parse(const char *h, uint64_t *ret_start, uint64_t *ret_end);

#endif
