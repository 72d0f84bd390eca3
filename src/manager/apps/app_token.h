/* app_token.h - the app proxy's credentials (docs/app-proxy.md): rows of
 * app_tokens, each named by the SHA-256 of a random value that only the
 * client holds (the database's copy cannot be replayed).
 *
 *   open     answered by start-service to the session's owner; opens the
 *            app (GET /apps/_/open?token=) until it expires (app_token_ttl)
 *   cookie   what opening sets: the cookie tessera_app, Path=the app's
 *            prefix, for the app's own pages (app_cookie_ttl)
 *
 * Each names one session, one app (its segment of the prefix, see
 * app_prefix) and port, and the user it was given to.  Nothing else opens
 * an app; both kinds are refused once expired or once the session is not
 * RUNNING (api_apps.c checks). */
#ifndef TESS_APP_TOKEN_H
#define TESS_APP_TOKEN_H

#include "common/error.h"

#define APP_TOKEN_LEN   64 /* hex of 32 random bytes */
#define APP_COOKIE      "tessera_app"
#define APP_SEGMENT_MAX 48 /* "name" or "name.port" */

struct manager;

enum app_token_kind {
        APP_TOKEN_OPEN,
        APP_TOKEN_COOKIE,
};

struct app_grant {
        char session[40];
        char app[APP_SEGMENT_MAX + 1]; /* the prefix's segment */
        int port;
        char user[40];
};

/* A new token for g, valid for ttl_usec, into ret_token; expired rows of
 * every grant are removed on the way. */
int app_token_issue(struct manager *m, enum app_token_kind kind, const struct app_grant *g, int64_t ttl_usec,
                    char ret_token[APP_TOKEN_LEN + 1], struct tess_error **err);

/* The grant of a token of that kind.  RET 0; -EACCES when it is unknown,
 * malformed or expired. */
int app_token_check(struct manager *m, enum app_token_kind kind, const char *token, struct app_grant *ret,
                    struct tess_error **err);

/* "/apps/<session>/<app>/" into out. */
void app_prefix(const char *session, const char *app, char *out, size_t len);

#endif
