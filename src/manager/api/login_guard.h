/* login_guard.h - the guessing limit of every password route (/server/login,
 * /auth/authorize, /auth/update-password).
 *
 * Failures are counted per user found, not per string typed (a user's
 * email and username are one count), per name when no user matches, and
 * per client address: LOGIN_USER_FAILURES failures of a user, or
 * LOGIN_ADDR_FAILURES of an address, within LOGIN_GUARD_WINDOW block
 * further tries for the rest of the window (429 with Retry-After), before
 * any password is hashed.  A success forgets the user's failures.  Counts
 * live in this manager's memory, in a fixed table whose oldest entries
 * make room for new ones. */
#ifndef TESS_LOGIN_GUARD_H
#define TESS_LOGIN_GUARD_H

#include <stdint.h>

#include "common/timeutil.h"

#define LOGIN_GUARD_WINDOW  (15 * 60 * USEC_PER_SEC)
#define LOGIN_USER_FAILURES 5
#define LOGIN_ADDR_FAILURES 20

struct api_ctx;
struct login_guard;

struct login_guard *login_guard_new(void);
struct login_guard *login_guard_free(struct login_guard *g);

/* The key of a user found ("u:<id>") or, with id NULL, of the name typed
 * ("n:<lowercased name>"); caller frees. */
char *login_guard_key(const char *user_id, const char *typed);
/* Seconds until keys[0..n) and the request's address may try again, 0 if
 * they may now. */
int64_t login_guard_blocked(struct login_guard *g, struct api_ctx *c, char *const *keys, int n);
/* A wrong password (or unknown or inactive user) for keys and the address. */
void login_guard_failed(struct login_guard *g, struct api_ctx *c, char *const *keys, int n);
void login_guard_succeeded(struct login_guard *g, char *const *keys, int n);
/* Answer 429 with Retry-After: secs. */
void login_guard_refuse(struct api_ctx *c, int64_t secs);

/* A password route's try while its password is checked (password_check.h):
 * the users its name matched (or the caller: a column "id"), and their
 * keys. */
struct login_try {
        struct db_rows *rows;
        char **keys;
        int nkeys;
};
void login_try_free(void *data);
/* Key t by each user of t->rows, else by the name typed; RET the seconds
 * the guard still blocks them (answered 429 then), else 0. */
int64_t login_try_guard(struct login_guard *g, struct api_ctx *c, struct login_try *t, const char *typed);

#endif
