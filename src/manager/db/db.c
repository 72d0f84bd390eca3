/* db.c - driver dispatch, transactions, and outages (see db.h).
 *
 * A transaction is open from the outermost db_begin to the outermost
 * db_commit or db_rollback.  When it ends under its statements (the
 * engine rolled it back after an error, the connection broke, a nested
 * db_rollback) it is "broken": its later statements and its COMMIT fail
 * with the error that broke it, so that nothing half done is reported as
 * done and no statement runs outside of it by surprise. */
#include "common/compat.h"

#include <inttypes.h>

#include "common/log.h"
#include "common/timeutil.h"
#include "manager/db/db-internal.h"

int db_open(const char *url, bool sqlite_sync_full, struct db **ret, struct tess_error **err)
{
        struct db *db = xcalloc(1, sizeof(*db));
        int r;

        if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0) {
                db->kind = DB_POSTGRES;
                db->ops = &db_pg_ops;
                r = db_pg_open(db, url, err);
        } else {
                if (strncmp(url, "sqlite:", 7) == 0)
                        url += 7;
                db->kind = DB_SQLITE;
                db->ops = &db_sqlite_ops;
                r = db_sqlite_open(db, url, sqlite_sync_full, err);
        }
        if (r < 0) {
                free(db);
                return r;
        }
        *ret = db;
        return 0;
}

struct db *db_close(struct db *db)
{
        if (db) {
                db->ops->close(db);
                tess_error_free(db->tx_broken);
                free(db);
        }
        return NULL;
}

enum db_kind db_kind(const struct db *db)
{
        return db->kind;
}

const char *db_kind_name(const struct db *db)
{
        return db->ops->name;
}

bool db_unavailable(const struct db *db)
{
        return db->health.down;
}

/* ---- outages (for the drivers) ---- */

void db_down(struct db *db, bool reads_work, int64_t retry_in, const char *why)
{
        if (db_health_failed(&db->health, monotonic_usec(), retry_in, reads_work))
                log_warn("database unavailable%s: %s; answering 50x until it is back", reads_work ? " for writes" : "",
                         why);
}

void db_refused(struct db *db)
{
        db_health_refused(&db->health);
}

bool db_may_try(const struct db *db)
{
        return !db->health.down || db_health_may_try(&db->health, monotonic_usec());
}

void db_up(struct db *db, bool wrote)
{
        int64_t usec;
        uint64_t failed;

        if (db->health.down && db_health_ok(&db->health, monotonic_usec(), wrote, &usec, &failed)) {
                db->outage_ended_at = monotonic_usec();
                log_notice("database available again after %.1f s (%" PRIu64 " requests failed meanwhile)",
                           (double)usec / USEC_PER_SEC, failed);
        }
}

int64_t db_outage_ended_at(const struct db *db)
{
        return db->outage_ended_at;
}

void db_tx_broken(struct db *db, int code, const char *why)
{
        if (!db->in_tx || db->tx_broken)
                return;
        db->tx_broken = xcalloc(1, sizeof(*db->tx_broken));
        db->tx_broken->code = code > 0 ? code : EIO;
        db->tx_broken->msg = xasprintf("the transaction was rolled back: %s", why);
}

static int tx_broken_err(struct db *db, struct tess_error **err)
{
        return tess_err(err, db->tx_broken->code, "%s", db->tx_broken->msg);
}

/* ---- statements ---- */

int db_query(struct db *db, const char *sql, const struct db_arg *args, int nargs, struct db_rows **ret,
             struct tess_error **err)
{
        if (db->in_tx && db->tx_broken)
                return tx_broken_err(db, err);
        int64_t t0 = monotonic_usec();
        int r = db->ops->query(db, sql, args, nargs, ret, err);
        db->nqueries++;
        db->query_seconds += (double)(monotonic_usec() - t0) / 1e6;
        if (r < 0 && db->in_tx)
                db->tx_last_code = -r;
        return r;
}

int db_exec_script(struct db *db, const char *sql, struct tess_error **err)
{
        if (db->in_tx && db->tx_broken)
                return tx_broken_err(db, err);
        int r = db->ops->exec_script(db, sql, err);
        if (r < 0 && db->in_tx)
                db->tx_last_code = -r;
        return r;
}

/* ---- transactions ---- */

static void tx_end(struct db *db)
{
        db->tx_depth = 0;
        db->in_tx = false;
        db->tx_broken = tess_error_free(db->tx_broken);
        db->tx_last_code = 0;
}

/* Nested begin/commit pairs collapse into the outermost transaction. */
int db_begin(struct db *db, struct tess_error **err)
{
        if (db->tx_depth++ > 0)
                return 0;
        int r = db->ops->exec_script(db, db->kind == DB_SQLITE ? "BEGIN IMMEDIATE" : "BEGIN", err);
        if (r < 0) {
                db->tx_depth = 0;
                return r;
        }
        db->in_tx = true;
        return 0;
}

int db_commit(struct db *db, struct tess_error **err)
{
        int r;

        if (db->tx_depth == 0)
                return tess_err(err, EINVAL, "commit without a transaction");
        if (--db->tx_depth > 0)
                return db->tx_broken ? tx_broken_err(db, err) : 0;
        if (db->tx_broken) {
                r = tx_broken_err(db, err);
                db->ops->exec_script(db, "ROLLBACK", NULL);
        } else {
                r = db->ops->exec_script(db, "COMMIT", err);
                if (r < 0)
                        db->ops->exec_script(db, "ROLLBACK", NULL);
        }
        tx_end(db);
        return r;
}

/* A nested rollback rolls back the whole transaction at once (its locks
 * are released, nothing of it stays) and breaks it for the callers
 * around, whose statements and commit then fail. */
void db_rollback(struct db *db)
{
        if (db->tx_depth == 0)
                return;
        db->ops->exec_script(db, "ROLLBACK", NULL);
        if (--db->tx_depth > 0) {
                db_tx_broken(db, db->tx_last_code ? db->tx_last_code : EIO, "a part of it failed");
                return;
        }
        tx_end(db);
}

void db_stats(const struct db *db, uint64_t *ret_queries, double *ret_seconds)
{
        *ret_queries = db->nqueries;
        *ret_seconds = db->query_seconds;
}
