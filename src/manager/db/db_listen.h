/* db_listen.h - PostgreSQL LISTEN on a connection of its own, watched by
 * the event loop.
 *
 * The connection is made at start (blocking, like db_open) and then lives
 * on the loop without ever blocking it: notifications are read as they
 * come (PQconsumeInput, PQnotifies).  When the connection drops, or the
 * server restarts, it is made again in the background (PQconnectPoll),
 * with a growing pause between tries (0.2 s to 5 s); TCP keepalives find
 * a peer that vanished without a word.  Whoever listens is told when
 * LISTEN is in place again: notifications sent meanwhile are lost, so it
 * should act as if anything may have changed.
 *
 * Sending is not here: NOTIFY is a statement (pg_notify()) run on the
 * connection that made the change, so that it is delivered at its commit. */
#ifndef TESS_DB_LISTEN_H
#define TESS_DB_LISTEN_H

#include <stdbool.h>

#include "common/error.h"

struct loop;
struct db_listen;

struct db_listen_handlers {
        /* one notification on the channel; payload is never NULL */
        void (*notify)(const char *payload, void *data);
        /* LISTEN is in place: again is false the first time, true after a
         * loss (notifications of the time between are lost) */
        void (*up)(bool again, void *data);
        /* LISTEN is no longer in place (why: libpq's message); the next try
         * is under way.  Called once per loss, not for every failed try. */
        void (*down)(const char *why, void *data);
};

/* Listen on `channel` (a plain identifier) of the database at url
 * (postgresql://...).  A first connection that fails is not an error: it
 * is tried again in the background (handlers->down says why). */
int db_listen_start(struct loop *l, const char *url, const char *channel, const struct db_listen_handlers *handlers,
                    void *data, struct db_listen **ret, struct tess_error **err);
struct db_listen *db_listen_stop(struct db_listen *dl);
/* Is LISTEN in place now? */
bool db_listen_up(const struct db_listen *dl);

#endif
