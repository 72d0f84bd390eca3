/* session_list.h - the SQL of GET /sessions: the caller's scope, a list of
 * statuses, the filters and a page, turned into one COUNT and one page
 * query with their arguments (fuzzed: tests/fuzz/fuzz_session_list.c).
 *
 * Every argument comes from a request, so their number is bounded by
 * construction: the statuses are a set (each named once however often the
 * request repeats it), each filter binds at most twice, and
 * SESSION_LIST_MAX_ARGS is the worst case; adding past it is refused
 * (EINVAL), never written. */
#ifndef TESS_SESSION_LIST_H
#define TESS_SESSION_LIST_H

#include <stdint.h>

#include "common/error.h"
#include "manager/api/api.h"
#include "manager/api/authz.h"
#include "manager/db/db.h"
#include "manager/sessions/session.h"

/* scope + every status + six filters (owner binds twice) + LIMIT, OFFSET */
#define SESSION_LIST_MAX_ARGS (AUTHZ_SCOPE_MAX_ARGS + _SESSION_STATUS_MAX + 7 + 2)

struct session_list_params {
        const struct principal *who; /* the caller: what it may see (authz_scope_sql) */
        const char *status;  /* "A,B,..." or NULL for any */
        const char *owner;   /* access key or email, or NULL */
        const char *group;   /* project name */
        const char *type;    /* session type */
        const char *name;    /* session name */
        const char *resource_group;
        const char *domain_name; /* the domain filter (admins of several) */
        int64_t limit, offset;
};

struct session_list_query {
        char *count_sql; /* takes args[0 .. count_nargs) */
        char *page_sql;  /* takes args[0 .. nargs) */
        struct db_arg args[SESSION_LIST_MAX_ARGS];
        int count_nargs, nargs;
};

/* Build both queries; strings of p are referenced, not copied.  EINVAL
 * with a message for the client on an unknown or empty status list. */
int session_list_build(const struct session_list_params *p, struct session_list_query *q, struct tess_error **err);
void session_list_release(struct session_list_query *q);

#endif
