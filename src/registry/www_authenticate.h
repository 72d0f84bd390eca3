/* www_authenticate.h - the WWW-Authenticate header of an HTTP 401 answer
 * (RFC 9110 11.6.1), parsed into its challenges: a registry answers
 * `Bearer realm="https://auth.example/token",service="registry",
 * scope="repository:app:pull"` or `Basic realm="registry"`.
 *
 *     challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
 *     auth-param = token BWS "=" BWS ( token / quoted-string )
 *
 * Several challenges may share one header, separated by commas; so may the
 * values of several header lines joined with ", ".  Quoted strings may
 * hold commas and backslash escapes.  The parser keeps no state, takes
 * (pointer, length), and bounds what it allocates: at most 16 KiB of input,
 * 16 challenges of 32 parameters each. */
#ifndef TESSERA_WWW_AUTHENTICATE_H
#define TESSERA_WWW_AUTHENTICATE_H

#include <stddef.h>

#include "common/error.h"

#define WWW_AUTH_MAX_LEN 16384
#define WWW_AUTH_MAX_CHALLENGES 16
#define WWW_AUTH_MAX_PARAMS 32

struct auth_param {
        char *name;  /* lowercased */
        char *value; /* unquoted, escapes resolved */
};

struct auth_challenge {
        char *scheme;  /* as sent: compare without case */
        char *token68; /* NULL unless the challenge carries one */
        struct auth_param *params;
        size_t n_params;
};

struct auth_challenges {
        struct auth_challenge *v;
        size_t n;
};

/* Parse a header value.
 * IN  p, len - the value (not NUL-terminated; NUL bytes are an error)
 * OUT ret - caller owns; release with auth_challenges_release()
 * RET 0 (even for an empty value: no challenges), -EINVAL with the offset
 *     of what is wrong */
int www_authenticate_parse(const char *p, size_t len, struct auth_challenges *ret, struct tess_error **err);
void auth_challenges_release(struct auth_challenges *c);

/* The first challenge of `scheme` (no case), or NULL. */
const struct auth_challenge *auth_challenges_find(const struct auth_challenges *c, const char *scheme);
/* The value of parameter `name` (lowercase), or NULL. */
const char *auth_challenge_param(const struct auth_challenge *c, const char *name);

#endif
