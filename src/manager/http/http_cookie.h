/* http_cookie.h - reading one cookie of a request's Cookie header
 * (RFC 6265 §4.2: "name=value" pairs joined by "; "). */
#ifndef TESS_HTTP_COOKIE_H
#define TESS_HTTP_COOKIE_H

#include <stddef.h>

/* Copy the value of cookie `name` of `header` (NULL: none) into out (of
 * outlen bytes, NUL-terminated), dropping the quotes of a quoted value.
 * RET 0; -ENOENT no such cookie; -EINVAL its value is not cookie-octets
 * or does not fit. */
int http_cookie_get(const char *header, const char *name, char *out, size_t outlen);

#endif
