/* sign.h - Backend.AI request signing (HMAC), client and server side.
 *
 * Authorization: BackendAI signMethod=HMAC-SHA256, credential=AK:HEXSIG
 * string to sign: METHOD\nPATH?QUERY\nDATE\nhost:HOST\ncontent-type:MIME\n
 *                 x-backendai-version:VER\nBODYHASH
 * key: k1 = HMAC(secret, YYYYMMDD of DATE); k2 = HMAC(k1, HOST).
 * BODYHASH is HEX(HASH("")), as Backend.AI's clients sign every request,
 * or the value of the request's X-Tessera-Content-Hash header, HEX(HASH(body))
 * with the signature's hash, which binds the body too (Tessera's clients
 * send it; docs/api.md). */
#ifndef TESS_SIGN_H
#define TESS_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define SIGN_ACCESS_KEY_LEN 20
#define SIGN_SECRET_KEY_LEN 40
#define SIGN_HEX_MAX 129 /* SHA-512 hex + NUL */

/* Newest and oldest API versions we accept, as "v<major>.<YYYYMMDD>". */
#define API_VERSION_NEWEST "v9.20250722"
#define API_VERSION_OLDEST "v4.20181215"
/* The newest version GET / advertises, which Backend.AI's clients
 * negotiate down to (the smaller of theirs and this): the newest whose
 * client has been run against Tessera and works (docs/backendai-compat.md).
 * Newer clients then speak it, as they do to an older Backend.AI; older
 * ones are told their own (api_misc.c). */
#define API_VERSION_SERVED "v8.20240315"

struct sign_auth {
        char hash[16];          /* "sha256" (lower case) */
        char access_key[64];
        char signature[SIGN_HEX_MAX];
};

/* Parse an Authorization header value; -EINVAL with a message if malformed
 * or the hash is unsupported (sha1, sha256, sha384, sha512 are). */
int sign_parse_authorization(const char *value, struct sign_auth *ret, struct tess_error **err);

/* Check "v<major>.<YYYYMMDD>" lies in [OLDEST, NEWEST]. */
int sign_check_version(const char *version, struct tess_error **err);

/* Bare lower-case mimetype without parameters ("application/json"). */
void sign_mimetype(const char *content_type, char *out, size_t len);

#define SIGN_KEY_MAX 64 /* bytes of a derived key (SHA-512) */

/* The signing key of a day and host: k2 = HMAC(HMAC(secret, ymd), host).
 * It depends on neither the request nor the time of day, so a server may
 * keep it for the day. */
int sign_derive_key(const char *hash, const char *secret, const char *ymd, const char *host,
                    unsigned char key[SIGN_KEY_MAX], unsigned *ret_len, struct tess_error **err);
/* The hex signature of a request with a derived key; body_hash is the
 * X-Tessera-Content-Hash the request carries, or NULL (the empty body's). */
int sign_with_key(const char *hash, const unsigned char *key, unsigned keylen, const char *method,
                  const char *path_query, const char *date, const char *host, const char *mimetype,
                  const char *version, const char *body_hash, char out_hex[SIGN_HEX_MAX], struct tess_error **err);

/* Compute the hex signature; ymd is the YYYYMMDD of the date header. */
int sign_compute(const char *hash, const char *secret, const char *method, const char *path_query,
                 const char *date, const char *ymd, const char *host, const char *mimetype,
                 const char *version, const char *body_hash, char out_hex[SIGN_HEX_MAX], struct tess_error **err);

/* The header that binds a request's body to its signature, and its value:
 * the lower-case hex digest of the body with the signature's hash. */
#define SIGN_BODY_HASH_HEADER "X-Tessera-Content-Hash"
int sign_body_hash(const char *hash, const void *body, size_t len, char out_hex[SIGN_HEX_MAX],
                   struct tess_error **err);

/* Manager <-> agent requests, signed with the cluster secret:
 *   Authorization: TesseraAgent id=AGENT_ID, signature=HEX
 *   X-Tessera-Agent-Time: UNIX_SECONDS
 * HEX = HMAC-SHA256(secret, METHOD\nPATH\nUNIX_SECONDS\nAGENT_ID\nhex(SHA256(body))).
 * The manager's requests to an agent are signed alike, with PATH the raw
 * target (query included) and AGENT_ID "manager:<the agent's id>", and
 * the body's hash sent ahead so the agent can refuse before the body:
 *   Authorization: TesseraManager signature=HEX
 *   X-Tessera-Content-SHA256: hex(SHA256(body)) */
#define SIGN_AGENT_SKEW 300 /* seconds a signature stays valid either way */
#define AGENT_ID_MAX    39  /* an agent's id: a name (api_valid_name) of at most this many bytes */
int sign_agent_request(const char *secret, const char *method, const char *path, int64_t ts, const char *agent_id,
                       const void *body, size_t len, char out_hex[SIGN_HEX_MAX], struct tess_error **err);

/* The same with the body's hex SHA-256 given. */
int sign_agent_request_hashed(const char *secret, const char *method, const char *path, int64_t ts,
                              const char *agent_id, const char *body_hash, char out_hex[SIGN_HEX_MAX],
                              struct tess_error **err);

/* The Authorization header of an agent's request, "TesseraAgent id=ID,
 * signature=HEX": -EINVAL unless well formed. */
int agent_auth_parse(const char *value, char id[AGENT_ID_MAX + 1], char sig[SIGN_HEX_MAX]);

/* Constant-time comparison of two NUL-terminated hex strings. */
bool sign_equal(const char *a, const char *b);

#endif
