/* app_token.h - the app proxy's credentials (docs/app-proxy.md): rows of
 * app_tokens, each named by the SHA-256 of a random value that only the
 * client holds (the database's copy cannot be replayed).
 *
 *   open     the link's token, answered by start-service to its caller;
 *            opens the app (GET /apps/_/open?token= on the app origin)
 *            for that caller's web login only, until it expires
 *            (app_token_ttl)
 *   code     one-time, APP_CODE_TTL: what the web UI's origin hands back
 *            to the app origin once it saw the caller's login
 *            (api_app_login.c); its row is named by the SHA-256 of the
 *            code and the app origin's state cookie, so that it opens the
 *            app only in the browser that asked for it
 *   cookie   what the code sets: the cookie tessera_app, Path=the app's
 *            prefix, for the app's own pages (app_cookie_ttl)
 *
 * Each names one session, one app (its segment of the prefix, see
 * app_prefix) and port, and the user and keypair it was given to.
 * Nothing else opens an app; every use checks again that the user and
 * keypair are active and may still use the session (app_access.h). */
#ifndef TESS_APP_TOKEN_H
#define TESS_APP_TOKEN_H

#include "common/error.h"
#include "common/timeutil.h"

#define APP_TOKEN_LEN   64 /* hex of 32 random bytes */
#define APP_COOKIE      "tessera_app"
#define APP_SEGMENT_MAX 48 /* "name" or "name.port" */
#define APP_STATE_COOKIE "tessera_app_state" /* the app origin's half of a code (api_apps.c) */
#define APP_CODE_TTL    (60 * USEC_PER_SEC)

struct manager;

enum app_token_kind {
        APP_TOKEN_OPEN,
        APP_TOKEN_CODE,
        APP_TOKEN_COOKIE,
};

struct app_grant {
        char session[40];
        char app[APP_SEGMENT_MAX + 1]; /* the prefix's segment */
        int port;
        char user[40];
        char access_key[24]; /* the keypair it was given to */
};

/* A new token for g, valid for ttl_usec, into ret_token; expired rows of
 * every grant are removed on the way.  bound_to (NULL but for codes): a
 * value the token is only good with (the state cookie). */
int app_token_issue(struct manager *m, enum app_token_kind kind, const struct app_grant *g, int64_t ttl_usec,
                    const char *bound_to, char ret_token[APP_TOKEN_LEN + 1], struct tess_error **err);

/* The grant of a token of that kind (with the bound_to it was issued
 * with); a code is used up.  RET 0; -EACCES when it is unknown, malformed,
 * expired or (a code) used already. */
int app_token_check(struct manager *m, enum app_token_kind kind, const char *token, const char *bound_to,
                    struct app_grant *ret, struct tess_error **err);

/* The row name (app_tokens.token_hash) of a token issued without
 * bound_to, as an app cookie. */
void app_token_row(const char *token, char ret_row[65]);
/* Whether the app cookie of that row is still valid (not removed, not
 * expired): RET 1; 0; -errno. */
int app_cookie_alive(struct manager *m, const char *row, struct tess_error **err);

/* A new random token (hex) into out, without recording it. */
int app_token_random(char out[APP_TOKEN_LEN + 1], struct tess_error **err);
/* Whether token looks like one (APP_TOKEN_LEN lowercase hex). */
bool app_token_well_formed(const char *token);

/* "/apps/<session>/<app>/" into out. */
void app_prefix(const char *session, const char *app, char *out, size_t len);

#endif
