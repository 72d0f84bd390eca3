/* password_check.h - a password checked (scrypt, and the new one hashed
 * for a change) on a worker thread, not on the event loop: anonymous
 * logins must not stall everyone else's requests and the agents'
 * heartbeats.
 *
 * At most PASSWORD_THREADS checks run at once; the rest wait in order, at
 * most PASSWORD_QUEUE of them (beyond, 503 with Retry-After).  The request
 * is suspended meanwhile; done(c, ok, new_hash, data) runs on the loop and
 * answers it.  A request whose client went away is not checked at all. */
#ifndef TESS_PASSWORD_CHECK_H
#define TESS_PASSWORD_CHECK_H

#include <stdbool.h>

#define PASSWORD_THREADS 2
#define PASSWORD_QUEUE   128

struct api_ctx;

/* What an unknown user's password is checked against, so that timing
 * does not tell unknown users from known ones. */
#define PASSWORD_DUMMY_HASH "scrypt$15$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

/* new_hash: the hash of new_password when ok and one was given, else
 * NULL; done takes it. */
typedef void (*password_done_fn)(struct api_ctx *c, bool ok, char *new_hash, void *data);

/* Check password against stored (a hash of password_hash()); with
 * new_password, hash it too when the check succeeds.  data is done's and
 * data_free(data) runs when the request ends.  Answers 503 itself (and
 * frees data) when too many wait. */
void password_check(struct api_ctx *c, const char *password, const char *stored, const char *new_password,
                    password_done_fn done, void *data, void (*data_free)(void *data));

/* The same queue for a password to hash only (an admin setting one):
 * done(c, true, its hash, data). */
void password_hash_off_loop(struct api_ctx *c, const char *password, password_done_fn done, void *data,
                            void (*data_free)(void *data));

#endif
