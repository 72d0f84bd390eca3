/* auth.h - authenticating API requests (Backend.AI HMAC signing) and
 * looking up keypairs. */
#ifndef TESS_AUTH_H
#define TESS_AUTH_H

#include "../common/error.h"
#include "api.h"

#define AUTH_MAX_SKEW_USEC (15LL * 60 * 1000000)

/* Verify the request's signature and date, fill ctx->who, apply the rate
 * limit.  -EACCES (401) or -EDQUOT (429) with a message. */
int auth_request(struct api_ctx *ctx, struct tess_error **err);

/* Load the principal of an access key (active keypair, active user), and
 * optionally its decrypted secret key (*ret_secret, caller frees).
 * -ENOENT if unknown or inactive. */
int auth_lookup_keypair(struct manager *m, const char *access_key, struct principal *ret, char **ret_secret,
                        struct tess_error **err);

#endif
