/* utf8.h - UTF-8 validation, one sequence at a time (utf8.c), for what
 * must be valid UTF-8 before it goes into JSON or a path: jansson refuses
 * the rest, so overlong forms, surrogates and code points past U+10FFFF
 * are refused here too. */
#ifndef TESS_COMMON_UTF8_H
#define TESS_COMMON_UTF8_H

#include <stddef.h>

/* The length (1-4) of the valid UTF-8 sequence at p[0..n), or 0 when it
 * is not one or is cut off by n.  n must be at least 1. */
size_t utf8_seq_len(const unsigned char *p, size_t n);

#endif
