/* db-internal.h - what a database driver implements (db_sqlite.c, db_pg.c). */
#ifndef TESS_DB_INTERNAL_H
#define TESS_DB_INTERNAL_H

#include "manager/db/db.h"
#include "manager/db/db_health.h"

#define DB_MAX_COLUMNS 64

struct db_ops {
        const char *name;
        int (*query)(struct db *db, const char *sql, const struct db_arg *args, int nargs, struct db_rows **ret,
                     struct tess_error **err);
        int (*exec_script)(struct db *db, const char *sql, struct tess_error **err);
        void (*close)(struct db *db);
};

struct db {
        const struct db_ops *ops;
        enum db_kind kind;
        void *impl;
        int tx_depth;
        bool in_tx; /* BEGIN done, COMMIT or ROLLBACK not yet */
        /* the open transaction ended under its statements (the engine
         * rolled it back, the connection broke, a nested rollback): they
         * and its COMMIT fail with this error */
        struct tess_error *tx_broken;
        int tx_last_code; /* the code of its last failed statement */
        struct db_health health;
        int64_t outage_ended_at; /* monotonic usec; 0: no outage yet */
        uint64_t nqueries;
        double query_seconds;
};

extern const struct db_ops db_sqlite_ops;
extern const struct db_ops db_pg_ops;

int db_sqlite_open(struct db *db, const char *path, bool sync_full, struct tess_error **err);
int db_pg_open(struct db *db, const char *url, struct tess_error **err);

/* For the drivers (db.c).  The database cannot serve now, for the reason
 * `why` (logged when this begins an outage): nothing at all, or only
 * writes (reads_work); no new attempt for retry_in usec (db_may_try). */
void db_down(struct db *db, bool reads_work, int64_t retry_in, const char *why);
/* An answer refused without an attempt, failing fast. */
void db_refused(struct db *db);
bool db_may_try(const struct db *db);
/* The database served, and changed something if `wrote` (logged when this
 * ends an outage). */
void db_up(struct db *db, bool wrote);
/* The open transaction ended under its statements, for the reason `why`. */
void db_tx_broken(struct db *db, int code, const char *why);

/* Building a result: new, a name per column, rows, then finish (which
 * turns the arena offsets into the names[] and cells[] pointers). */
struct db_rows *db_rows_new(int ncols);
void db_rows_set_name(struct db_rows *r, int col, const char *name);
/* Append a row; cells are copied (NULL stays NULL). */
void db_rows_add(struct db_rows *r, const char *const *cells);
void db_rows_finish(struct db_rows *r);

#endif
