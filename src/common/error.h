/* error.h - the one error idiom of Tessera (after crun's libcrun_error).
 *
 * Every fallible function returns int: >= 0 on success, negative on failure,
 * and takes `struct tess_error **err` last.  On failure exactly one error is
 * set; the caller propagates it, wraps it with context, or consumes it (logs
 * it or turns it into an HTTP answer) and frees it.  See docs/design/errors.md. */
#ifndef TESS_ERROR_H
#define TESS_ERROR_H

struct tess_error {
        int code;  /* positive errno-style value: ENOENT, EINVAL, EEXIST ... */
        char *msg; /* full context chain, outermost first */
};

/* Set *err (if err is non-NULL) and return -code (-EIO when code is 0). */
int tess_err(struct tess_error **err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prefix "<context>: " to the existing *err; return -(*err)->code. */
int tess_err_wrap(struct tess_error **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Free an error; accepts NULL, returns NULL. */
struct tess_error *tess_error_free(struct tess_error *err);

static inline void tess_error_freep(struct tess_error **e)
{
        tess_error_free(*e);
}
#define _cleanup_error_ __attribute__((cleanup(tess_error_freep)))

#endif
