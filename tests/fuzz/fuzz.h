/* fuzz.h - helpers shared by the fuzz targets (tests/fuzz/fuzz_*.c). */
#ifndef TESS_FUZZ_H
#define TESS_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant of the code under test; aborts so both libFuzzer and the
 * replayer report the input. */
#define FUZZ_ASSERT(cond)                                                                        \
        do {                                                                                     \
                if (!(cond)) {                                                                   \
                        fprintf(stderr, "%s:%d: FUZZ_ASSERT(%s) failed\n", __FILE__, __LINE__, #cond); \
                        abort();                                                                 \
                }                                                                                \
        } while (0)

/* NUL-terminated copy of n bytes in a buffer of exactly n + 1 bytes. */
static inline char *fuzz_strndup(const void *p, size_t n)
{
        char *s = malloc(n + 1);
        if (!s)
                abort();
        memcpy(s, p, n);
        s[n] = '\0';
        return s;
}

#endif
