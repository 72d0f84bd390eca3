/* db.c - driver dispatch and transactions (see db.h). */
#include "common/compat.h"

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

int db_query(struct db *db, const char *sql, const struct db_arg *args, int nargs, struct db_rows **ret,
             struct tess_error **err)
{
        int64_t t0 = monotonic_usec();
        int r = db->ops->query(db, sql, args, nargs, ret, err);
        db->nqueries++;
        db->query_seconds += (double)(monotonic_usec() - t0) / 1e6;
        return r;
}

int db_exec_script(struct db *db, const char *sql, struct tess_error **err)
{
        return db->ops->exec_script(db, sql, err);
}

/* Nested begin/commit pairs collapse into the outermost transaction. */
int db_begin(struct db *db, struct tess_error **err)
{
        if (db->tx_depth++ > 0)
                return 0;
        int r = db_exec_script(db, db->kind == DB_SQLITE ? "BEGIN IMMEDIATE" : "BEGIN", err);
        if (r < 0)
                db->tx_depth = 0;
        return r;
}

int db_commit(struct db *db, struct tess_error **err)
{
        if (db->tx_depth == 0)
                return tess_err(err, EINVAL, "commit without a transaction");
        if (--db->tx_depth > 0)
                return 0;
        int r = db_exec_script(db, "COMMIT", err);
        if (r < 0)
                db_exec_script(db, "ROLLBACK", NULL);
        return r;
}

void db_rollback(struct db *db)
{
        if (db->tx_depth == 0)
                return;
        db->tx_depth = 0;
        db_exec_script(db, "ROLLBACK", NULL);
}

void db_stats(const struct db *db, uint64_t *ret_queries, double *ret_seconds)
{
        *ret_queries = db->nqueries;
        *ret_seconds = db->query_seconds;
}
