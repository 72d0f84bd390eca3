/* db.h - the database layer: one interface, two drivers (SQLite, PostgreSQL).
 *
 * SQL is written once, in the subset both engines speak, with `?`
 * placeholders (the PostgreSQL driver rewrites them to $n).  Arguments are
 * typed (text, integer, NULL); results are materialized as strings, NULL
 * for SQL NULL.  Prepared statements are cached per connection by SQL text.
 * Errors: a unique-constraint violation is -EEXIST, a foreign-key violation
 * -ENOENT, a database that cannot serve now -EBUSY (locked by another
 * process, connection lost or refused, a serialization failure: try again
 * later), a full disk under it -ENOSPC, anything else -EIO.
 *
 * The manager is single-threaded: one connection, used from the event loop.
 * Nothing here blocks it for long while the database is away: after a
 * failed attempt the drivers fail fast for a while (db_health.h), the
 * PostgreSQL driver reconnects without blocking, SQLite waits less for a
 * lock held elsewhere.  An outage is logged once when it begins and once
 * when it ends. */
#ifndef TESS_DB_H
#define TESS_DB_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

enum db_kind {
        DB_SQLITE,
        DB_POSTGRES,
};

enum db_arg_type {
        DB_ARG_NULL,
        DB_ARG_TEXT,
        DB_ARG_INT,
};

struct db_arg {
        enum db_arg_type type;
        const char *text;
        int64_t i;
};

static inline struct db_arg db_text(const char *s)
{
        return (struct db_arg){ .type = s ? DB_ARG_TEXT : DB_ARG_NULL, .text = s };
}
#define DB_TEXT(s) db_text(s)
#define DB_INT(v) ((struct db_arg){ .type = DB_ARG_INT, .i = (v) })
#define DB_BOOL(v) DB_INT((v) ? 1 : 0)
#define DB_NULLARG ((struct db_arg){ .type = DB_ARG_NULL })

struct db_rows {
        int nrows;
        int ncols;
        char **names; /* ncols column names */
        char **cells; /* nrows * ncols, NULL for SQL NULL */
        int64_t changes; /* rows changed by INSERT/UPDATE/DELETE */
        int last_col;    /* db_getn starts looking after the last match */
        /* all names and cells live in one arena (db.c) */
        char *arena;
        size_t arena_len, arena_cap;
        size_t *offs; /* while building: offsets into the arena */
};

struct db;

/* Open "sqlite:PATH", a plain path, or "postgresql://..." / "postgres://...". */
/* -EBUSY when the database cannot be reached now but may be later (a
 * PostgreSQL not up yet); other errors will not go away by themselves. */
int db_open(const char *url, bool sqlite_sync_full, struct db **ret, struct tess_error **err);
struct db *db_close(struct db *db);
enum db_kind db_kind(const struct db *db);
const char *db_kind_name(const struct db *db);
/* Whether the database is in an outage: the last attempt failed with
 * -EBUSY or -ENOSPC and none succeeded since. */
bool db_unavailable(const struct db *db);
/* When the last outage ended (monotonic usec), 0 if there was none: what
 * was not written meanwhile (agents' heartbeats) was not missing. */
int64_t db_outage_ended_at(const struct db *db);

/* Run one statement.  *ret (optional) receives the rows; returns the number
 * of changed rows (>= 0) or a negative errno. */
int db_query(struct db *db, const char *sql, const struct db_arg *args, int nargs, struct db_rows **ret,
             struct tess_error **err);
/* Run several ;-separated statements without arguments (migrations). */
int db_exec_script(struct db *db, const char *sql, struct tess_error **err);

/* A transaction that ends under its statements (rolled back by the engine
 * after an error, the connection lost, a nested db_rollback) makes its
 * later statements and its commit fail with the error that ended it. */
int db_begin(struct db *db, struct tess_error **err);
int db_commit(struct db *db, struct tess_error **err);
void db_rollback(struct db *db);

/* Total time spent in queries and their count, for /metrics. */
void db_stats(const struct db *db, uint64_t *ret_queries, double *ret_seconds);

struct db_rows *db_rows_free(struct db_rows *r);
const char *db_get(const struct db_rows *r, int row, int col);
/* Column by name; NULL if the value is NULL or there is no such column. */
const char *db_getn(const struct db_rows *r, int row, const char *name);
int64_t db_get_int(const struct db_rows *r, int row, const char *name);

static inline void db_rows_freep(struct db_rows **r)
{
        db_rows_free(*r);
}
#define _cleanup_rows_ __attribute__((cleanup(db_rows_freep)))

#define DB_NARGS(...) ((int)(sizeof((const struct db_arg[]){ __VA_ARGS__ }) / sizeof(struct db_arg)))
/* DBQ(db, sql, &rows, err, DB_TEXT(a), DB_INT(b)) */
#define DBQ(db, sql, ret, err, ...) \
        db_query((db), (sql), (const struct db_arg[]){ __VA_ARGS__ }, DB_NARGS(__VA_ARGS__), (ret), (err))

/* Apply pending schema migrations (db_schema.c); runs at start. */
int db_migrate(struct db *db, struct tess_error **err);
int db_schema_version(struct db *db, struct tess_error **err);

#endif
