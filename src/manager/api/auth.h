/* auth.h - authenticating API requests: Backend.AI HMAC signing or a web
 * login's cookie (auth.c, web_session.h), agents' requests signed with the
 * cluster secret (auth.c), and the keypairs behind access keys
 * (auth_keypair.c). */
#ifndef TESS_AUTH_H
#define TESS_AUTH_H

#include "common/error.h"
#include "manager/api/api.h"

#define AUTH_MAX_SKEW_USEC (15LL * 60 * 1000000)

/* Verified keypairs are cached for a few seconds (conf auth_cache_ttl) so
 * that a signed request costs no database query; any state-changing admin
 * or auth request on this manager empties the cache at once, and other
 * managers sharing the database see a change within the TTL. */
struct auth_cache;
struct auth_cache *auth_cache_new(void);
struct auth_cache *auth_cache_free(struct auth_cache *ac);
void auth_cache_clear(struct auth_cache *ac);

/* Verify the request's signature and date, fill ctx->who, apply the rate
 * limit.  -EACCES (401) or -EDQUOT (429) with a message. */
int auth_request(struct api_ctx *ctx, struct tess_error **err);

/* When the body is in: a request signed with SIGN_BODY_HASH_HEADER (which
 * auth_request verified on the headers) must carry that body; -EACCES. */
int auth_check_body(struct api_ctx *c, struct tess_error **err);

/* Load the principal of an access key (active keypair, active user), and
 * optionally its decrypted secret key (*ret_secret, caller frees).
 * -ENOENT if unknown or inactive. */
int auth_lookup_keypair(struct manager *m, const char *access_key, struct principal *ret, char **ret_secret,
                        struct tess_error **err);

/* Verify an agent's request (ROUTE_AGENT): its TesseraAgent signature with
 * the cluster secret and its time; c->who names the agent.  -EACCES. */
int api_agent_auth(struct api_ctx *c, struct tess_error **err);

#endif
