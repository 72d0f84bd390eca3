/* error.c - see error.h. */
#include "common/compat.h"

#include <stdarg.h>

#include "common/error.h"

int tess_err(struct tess_error **err, int code, const char *fmt, ...)
{
        va_list ap;

        if (code <= 0)
                code = EIO;
        if (!err)
                return -code;
        /* format first: the arguments may point into the error replaced */
        struct tess_error *e = xmalloc(sizeof(*e));
        e->code = code;
        va_start(ap, fmt);
        e->msg = xvasprintf(fmt, ap);
        va_end(ap);
        tess_error_free(*err);
        *err = e;
        return -code;
}

int tess_err_wrap(struct tess_error **err, const char *fmt, ...)
{
        _cleanup_free_ char *prefix = NULL;
        va_list ap;
        char *msg;

        if (!err || !*err)
                return -EIO;
        va_start(ap, fmt);
        prefix = xvasprintf(fmt, ap);
        va_end(ap);
        msg = xasprintf("%s: %s", prefix, (*err)->msg);
        free((*err)->msg);
        (*err)->msg = msg;
        return -(*err)->code;
}

struct tess_error *tess_error_free(struct tess_error *err)
{
        if (err) {
                free(err->msg);
                free(err);
        }
        return NULL;
}
