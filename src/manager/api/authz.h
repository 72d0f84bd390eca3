/* authz.h - authorization: who may see and act on an object that a user
 * owns (a session, its logs, terminal, files, apps, commits and events, a
 * background task).  One rule, in authz.c, that every route applies
 * whatever way the request names the object (by name, by id, for an
 * owner_access_key, through an event filter or a task id):
 *
 *   superadmin      everything
 *   owner           its own objects (a user's, whichever keypair made them)
 *   admin           the objects of users of its domain, except those of a
 *                   superadmin (nor of another domain)
 *   monitor         what an admin of its domain sees, only to read
 *   user            nothing else
 *
 * An object the caller may not see does not exist for it: -ENOENT (404),
 * never telling it exists.  -EACCES (403) only where the answer does not
 * depend on the object: a monitor asking to change something, a user
 * naming another keypair (owner_access_key). */
#ifndef TESS_AUTHZ_H
#define TESS_AUTHZ_H

#include <stdbool.h>

#include "common/buf.h"
#include "common/error.h"
#include "manager/api/api.h"

struct db_arg;

enum authz_access {
        AUTHZ_READ,  /* look: info, logs, events, a task */
        AUTHZ_WRITE, /* act: destroy, execute, files, terminal, apps, commit */
};

/* The access a request's route asks for: READ on a ROUTE_READ route. */
enum authz_access authz_access_of(const struct api_ctx *c);

/* The owner of an object.  role: the owner's role as stored ("user",
 * "superadmin", ...); NULL to look it up by user_id (only when the rule
 * needs it). */
struct authz_owner {
        const char *user_id;
        const char *domain;
        const char *role;
};

/* May the caller have `access` to an object of owner o?  0, -ENOENT (not
 * visible: "not found"), -EACCES (visible, read only), -EIO. */
int authz_check(struct api_ctx *c, const struct authz_owner *o, enum authz_access access, struct tess_error **err);
/* authz_check's yes or no, for filters (events); errors count as no. */
bool authz_sees(struct api_ctx *c, const struct authz_owner *o);

/* The keypair a request acts for: the caller's own, or owner_ak (admins,
 * and monitors to read), under the same rule as the objects it owns: a
 * user naming another keypair -EACCES, a keypair the caller may not see
 * -ENOENT "access key not found". */
int authz_owner_keypair(struct api_ctx *c, const char *owner_ak, enum authz_access access, struct principal *ret,
                        struct tess_error **err);

/* The same rule as SQL, for lists: appends " AND (...)" to `where` with
 * its arguments (at most AUTHZ_SCOPE_MAX_ARGS) naming the owner's columns
 * (user id, domain, role). */
#define AUTHZ_SCOPE_MAX_ARGS 1
void authz_scope_sql(const struct principal *who, const char *user_col, const char *domain_col, const char *role_col,
                     struct buf *where, struct db_arg *args, int *nargs);

#endif
