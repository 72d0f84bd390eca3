/* xalloc.c - allocation helpers that abort on out-of-memory (daemons, CLI). */
#include "common/compat.h"

#include <stdarg.h>

static void oom(void)
{
        fputs("fatal: out of memory\n", stderr);
        abort();
}

void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (!p)
                oom();
        return p;
}

void *xcalloc(size_t nmemb, size_t n)
{
        void *p = calloc(nmemb ? nmemb : 1, n ? n : 1);
        if (!p)
                oom();
        return p;
}

void *xrealloc(void *p, size_t n)
{
        p = realloc(p, n ? n : 1);
        if (!p)
                oom();
        return p;
}

char *xstrdup(const char *s)
{
        char *p = strdup(s);
        if (!p)
                oom();
        return p;
}

char *xstrndup(const char *s, size_t n)
{
        char *p = strndup(s, n);
        if (!p)
                oom();
        return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
        char *p;

        if (vasprintf(&p, fmt, ap) < 0)
                oom();
        return p;
}

char *xasprintf(const char *fmt, ...)
{
        va_list ap;
        char *p;

        va_start(ap, fmt);
        p = xvasprintf(fmt, ap);
        va_end(ap);
        return p;
}
