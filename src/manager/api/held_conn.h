/* held_conn.h - the connections a request holds open after its answer
 * (a terminal, an app's WebSocket, an event stream) and the credential
 * that opened each, so that revoking the credential cuts them
 * (docs/design/security.md, "Tokens and cookies").
 *
 * A connection is cut when, checked again:
 *   - its keypair, user or domain is no longer active, or is gone;
 *   - its user's role changed (an admin made a user);
 *   - it came through a web login that ended (logout, a password change,
 *     the user's deactivation) or that must change its password now;
 *   - its own check (held_cred.check) says so: an app cookie whose row
 *     is gone or expired.
 * The check runs on this manager's loop after every write to /admin/ or
 * /auth/ that succeeded (held_conns_check), and every HELD_CHECK_EVERY,
 * which covers revocations made through another manager. */
#ifndef TESS_HELD_CONN_H
#define TESS_HELD_CONN_H

#include <stdint.h>

#include "common/error.h"
#include "common/timeutil.h"
#include "manager/api/api.h"

#define HELD_CHECK_EVERY (5 * USEC_PER_SEC)

struct held_cred {
        char access_key[24];
        char user_id[40];
        enum role role;
        char web_login[65]; /* web_sessions.id, "" for a signed request */
        /* optional, a credential of the connection's own (an app cookie,
         * app_token.h): RET 1 still valid; 0 revoked; -errno */
        int (*check)(struct manager *m, const char *arg, struct tess_error **err);
        char check_arg[65];
};

struct held_conns;

struct held_conns *held_conns_new(void);
struct held_conns *held_conns_free(struct held_conns *h);

/* The credential of request c (its keypair, and its web login if any). */
void held_cred_of(const struct api_ctx *c, struct held_cred *ret);

/* Hold a connection: cut(data) runs on the loop when its credential no
 * longer holds, at most once; the owner then still calls
 * held_conn_drop when the connection ends.  RET an id > 0. */
uint64_t held_conn_add(struct manager *m, const struct held_cred *cred, void (*cut)(void *data), void *data);
/* Forget a connection (0 and unknown ids are ignored). */
void held_conn_drop(struct manager *m, uint64_t id);

/* Check every held connection's credential now; cut those revoked.
 * _soon: on the loop's next turn (from a request's completion). */
void held_conns_check(struct manager *m);
void held_conns_check_soon(struct manager *m);

#endif
