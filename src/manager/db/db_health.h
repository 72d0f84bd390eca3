/* db_health.h - whether the database can serve: an outage's start and end,
 * and when to try it again.
 *
 * A driver reports each attempt that failed because the database cannot
 * serve now (connection lost or refused, locked by another process, disk
 * full), each answer it refused without trying (failing fast until
 * retry_at), and each attempt that proved the database well again.  The
 * first failure of an outage and the first success after it are the two
 * moments worth a log line, however many requests failed in between
 * (db.c logs them).  Pure: the caller passes the clock (monotonic usec). */
#ifndef TESS_DB_HEALTH_H
#define TESS_DB_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

struct db_health {
        bool down;        /* in an outage */
        bool reads_work;  /* only writes fail (a lock held elsewhere, a full disk) */
        int64_t since;    /* when its first failure was seen */
        int64_t retry_at; /* no new attempt before this: fail fast */
        uint64_t failed;  /* requests failed during the outage, attempted or refused */
};

/* An attempt failed at `now`; the next may be made `retry_in` later.
 * reads_work: the failure concerns writes only, so that only a write
 * ends the outage.  True when this begins an outage. */
bool db_health_failed(struct db_health *h, int64_t now, int64_t retry_in, bool reads_work);
/* An answer refused without an attempt (counted for the recovery line). */
void db_health_refused(struct db_health *h);
/* May an attempt be made at `now`, or should the caller fail fast? */
bool db_health_may_try(const struct db_health *h, int64_t now);
/* An attempt succeeded; `wrote`: it changed something.  True when this
 * ends an outage; then *ret_usec (how long it lasted) and *ret_failed
 * (requests failed meanwhile) say what it was, and *h is well again. */
bool db_health_ok(struct db_health *h, int64_t now, bool wrote, int64_t *ret_usec, uint64_t *ret_failed);

#endif
