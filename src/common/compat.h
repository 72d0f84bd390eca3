/* compat.h - included first by every .c file of Tessera.
 *
 * Sets the feature macros, pulls in the headers nearly every file needs,
 * defines the cleanup attributes and ownership helpers (TAKE_PTR/TAKE_FD),
 * and bans the C library functions listed in banned.h. */
#ifndef TESS_COMPAT_H
#define TESS_COMPAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED __attribute__((unused))

static inline void freep(void *p)
{
        free(*(void **)p);
}

static inline void closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Hand out ownership of a pointer or fd, leaving the variable empty. */
#define TAKE_PTR(p)                                  \
        ({                                           \
                __typeof__(p) _ptr_ = (p);           \
                (p) = NULL;                          \
                _ptr_;                               \
        })
#define TAKE_FD(fd)                                  \
        ({                                           \
                int _fd_ = (fd);                     \
                (fd) = -1;                           \
                _fd_;                                \
        })

/* Allocators that abort on OOM: daemons and the CLI only (never fgpu). */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* FNV-1a hash of a string, for the small hash tables of the daemons. */
static inline uint64_t hash_str(const char *s)
{
        uint64_t h = 1469598103934665603ULL;
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return h;
}

static inline bool streq(const char *a, const char *b)
{
        return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b)
{
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}

#include "common/banned.h"

#endif
