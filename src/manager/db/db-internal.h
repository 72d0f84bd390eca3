/* db-internal.h - what a database driver implements (db_sqlite.c, db_pg.c). */
#ifndef TESS_DB_INTERNAL_H
#define TESS_DB_INTERNAL_H

#include "manager/db/db.h"

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
        uint64_t nqueries;
        double query_seconds;
};

extern const struct db_ops db_sqlite_ops;
extern const struct db_ops db_pg_ops;

int db_sqlite_open(struct db *db, const char *path, bool sync_full, struct tess_error **err);
int db_pg_open(struct db *db, const char *url, struct tess_error **err);

/* Building a result: new, a name per column, rows, then finish (which
 * turns the arena offsets into the names[] and cells[] pointers). */
struct db_rows *db_rows_new(int ncols);
void db_rows_set_name(struct db_rows *r, int col, const char *name);
/* Append a row; cells are copied (NULL stays NULL). */
void db_rows_add(struct db_rows *r, const char *const *cells);
void db_rows_finish(struct db_rows *r);

#endif
