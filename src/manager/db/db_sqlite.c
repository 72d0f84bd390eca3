/* db_sqlite.c - the SQLite driver (WAL, the embedded default).
 *
 * synchronous=NORMAL in WAL mode keeps every committed transaction across a
 * crash or kill of the process; synchronous=FULL (config `sqlite_sync =
 * full`) also across power loss, at the cost of an fsync per commit.
 *
 * A write lock held by another process: the manager's one thread waits
 * BUSY_WAIT_MS for it, then answers -EBUSY; during such an outage writes
 * wait BUSY_PROBE_MS once per RETRY_USEC and not at all in between, until
 * one succeeds.  A full disk: -ENOSPC; the failed statement or transaction
 * is rolled back by SQLite (the database stays whole) and reads go on.
 * Both end at the first write that changes something. */
#include "common/compat.h"

#include <inttypes.h>
#include <sqlite3.h>

#include "common/timeutil.h"
#include "manager/db/db-internal.h"

#define STMT_CACHE 256
#define BUSY_WAIT_MS 2000
#define BUSY_PROBE_MS 100
#define RETRY_USEC (1 * USEC_PER_SEC)

struct cached_stmt {
        char *sql;
        sqlite3_stmt *stmt;
};

struct sqlite_impl {
        sqlite3 *h;
        int busy_ms; /* the busy timeout set now */
        int64_t changes_at_begin; /* sqlite3_total_changes() at BEGIN */
        struct cached_stmt cache[STMT_CACHE];
        /* SQL text pointer -> cache slot: most SQL is a string that lives
         * as long as the program, so hashing its address (verified with
         * strcmp) is cheaper than hashing its kilobyte of text */
        const char *by_ptr_key[STMT_CACHE];
        size_t by_ptr_slot[STMT_CACHE];
};

/* How long the next statement may wait for a lock held elsewhere. */
static int busy_wait(struct db *db, struct sqlite_impl *im)
{
        int ms = !db_unavailable(db) ? BUSY_WAIT_MS : db_may_try(db) ? BUSY_PROBE_MS : 0;

        if (ms != im->busy_ms) {
                sqlite3_busy_timeout(im->h, ms);
                im->busy_ms = ms;
        }
        return ms;
}

static bool disk_full(sqlite3 *h, int rc)
{
        return rc == SQLITE_FULL || ((rc & 0xff) == SQLITE_IOERR && sqlite3_system_errno(h) == ENOSPC);
}

/* A failed statement (rc) that waited waited_ms for locks. */
static int map_error(struct db *db, sqlite3 *h, int rc, int waited_ms, struct tess_error **err)
{
        int ext = sqlite3_extended_errcode(h);
        const char *msg = sqlite3_errmsg(h);
        int r;

        if (ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY)
                r = tess_err(err, EEXIST, "sqlite: %s", msg);
        else if (ext == SQLITE_CONSTRAINT_FOREIGNKEY)
                r = tess_err(err, ENOENT, "sqlite: %s", msg);
        else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
                if (waited_ms > 0) {
                        _cleanup_free_ char *why = xasprintf("sqlite: %s (locked by another process)", msg);
                        db_down(db, true, RETRY_USEC, why);
                } else {
                        db_refused(db);
                }
                r = tess_err(err, EBUSY, "the database is locked by another process, try again later");
        } else if (disk_full(h, rc)) {
                int e = sqlite3_system_errno(h);
                _cleanup_free_ char *why = xasprintf("sqlite: %s%s%s", msg, e ? ": " : "", e ? strerror(e) : "");
                db_down(db, true, 0, why);
                r = tess_err(err, ENOSPC, "the database's disk is full: changes cannot be saved until space is freed");
        } else
                r = tess_err(err, EIO, "sqlite: %s", msg);
        /* SQLite may roll a whole transaction back at an error (SQLITE_FULL,
         * _BUSY, _IOERR, _NOMEM): its later statements would run alone */
        if (db->in_tx && sqlite3_get_autocommit(h))
                db_tx_broken(db, -r, msg);
        return r;
}

static int get_stmt(struct db *db, struct sqlite_impl *im, const char *sql, sqlite3_stmt **ret,
                    struct tess_error **err)
{
        size_t p = ((uintptr_t)sql >> 3) % STMT_CACHE;
        if (im->by_ptr_key[p] == sql) {
                struct cached_stmt *c = &im->cache[im->by_ptr_slot[p]];
                if (c->sql && streq(c->sql, sql)) {
                        *ret = c->stmt;
                        return 0;
                }
        }
        size_t slot = hash_str(sql) % STMT_CACHE;
        struct cached_stmt *c = &im->cache[slot];
        int rc;

        im->by_ptr_key[p] = sql;
        im->by_ptr_slot[p] = slot;
        if (c->sql && streq(c->sql, sql)) {
                *ret = c->stmt;
                return 0;
        }
        sqlite3_stmt *st;
        rc = sqlite3_prepare_v2(im->h, sql, -1, &st, NULL);
        if (rc != SQLITE_OK)
                return map_error(db, im->h, rc, im->busy_ms, err);
        if (c->sql) {
                sqlite3_finalize(c->stmt);
                free(c->sql);
        }
        c->sql = xstrdup(sql);
        c->stmt = st;
        *ret = st;
        return 0;
}

static int sqlite_query(struct db *db, const char *sql, const struct db_arg *args, int nargs, struct db_rows **ret,
                        struct tess_error **err)
{
        struct sqlite_impl *im = db->impl;
        sqlite3_stmt *st = NULL;
        struct db_rows *rows = NULL;
        int waited_ms = busy_wait(db, im), r, rc;

        r = get_stmt(db, im, sql, &st, err);
        if (r < 0)
                return r;
        for (int i = 0; i < nargs; i++) {
                switch (args[i].type) {
                case DB_ARG_NULL: rc = sqlite3_bind_null(st, i + 1); break;
                case DB_ARG_TEXT: rc = sqlite3_bind_text(st, i + 1, args[i].text, -1, SQLITE_STATIC); break;
                case DB_ARG_INT: rc = sqlite3_bind_int64(st, i + 1, args[i].i); break;
                default: rc = SQLITE_MISUSE;
                }
                if (rc != SQLITE_OK) {
                        r = map_error(db, im->h, rc, waited_ms, err);
                        goto out_reset;
                }
        }
        if (ret) {
                int nc = sqlite3_column_count(st);
                if (nc > DB_MAX_COLUMNS) {
                        r = tess_err(err, EINVAL, "a query returns more than %d columns", DB_MAX_COLUMNS);
                        goto out_reset;
                }
                rows = db_rows_new(nc);
                for (int c = 0; c < nc; c++)
                        db_rows_set_name(rows, c, sqlite3_column_name(st, c));
        }
        for (;;) {
                rc = sqlite3_step(st);
                if (rc == SQLITE_DONE)
                        break;
                if (rc != SQLITE_ROW) {
                        r = map_error(db, im->h, rc, waited_ms, err);
                        goto out_reset;
                }
                if (rows) {
                        const char *cells[DB_MAX_COLUMNS];
                        for (int c = 0; c < rows->ncols; c++)
                                cells[c] = (const char *)sqlite3_column_text(st, c);
                        db_rows_add(rows, cells);
                }
        }
        r = sqlite3_changes(im->h);
        /* inside a transaction only its COMMIT proves that writes work */
        db_up(db, !db->in_tx && r > 0 && !sqlite3_stmt_readonly(st));
        if (rows) {
                rows->changes = r;
                db_rows_finish(rows);
                *ret = TAKE_PTR(rows);
        }
out_reset:
        db_rows_free(rows);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return r;
}

static int sqlite_exec_script(struct db *db, const char *sql, struct tess_error **err)
{
        struct sqlite_impl *im = db->impl;
        int waited_ms = busy_wait(db, im);
        char *msg = NULL;
        int rc = sqlite3_exec(im->h, sql, NULL, NULL, &msg);

        sqlite3_free(msg);
        if (rc != SQLITE_OK)
                return map_error(db, im->h, rc, waited_ms, err);
        if (strncmp(sql, "BEGIN", 5) == 0)
                im->changes_at_begin = sqlite3_total_changes64(im->h);
        else if (streq(sql, "COMMIT"))
                db_up(db, sqlite3_total_changes64(im->h) != im->changes_at_begin);
        else if (strncmp(sql, "ROLLBACK", 8) != 0)
                db_up(db, true); /* a script: migrations */
        return 0;
}

static void sqlite_close(struct db *db)
{
        struct sqlite_impl *im = db->impl;
        if (!im)
                return;
        for (int i = 0; i < STMT_CACHE; i++) {
                if (im->cache[i].sql) {
                        sqlite3_finalize(im->cache[i].stmt);
                        free(im->cache[i].sql);
                }
        }
        sqlite3_close(im->h);
        free(im);
        db->impl = NULL;
}

const struct db_ops db_sqlite_ops = {
        .name = "sqlite",
        .query = sqlite_query,
        .exec_script = sqlite_exec_script,
        .close = sqlite_close,
};

int db_sqlite_open(struct db *db, const char *path, bool sync_full, struct tess_error **err)
{
        struct sqlite_impl *im = xcalloc(1, sizeof(*im));
        int rc;

        rc = sqlite3_open_v2(path, &im->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
        if (rc != SQLITE_OK) {
                int r = tess_err(err, EIO, "opening sqlite database '%s': %s", path,
                                 im->h ? sqlite3_errmsg(im->h) : "out of memory");
                sqlite3_close(im->h);
                free(im);
                return r;
        }
        db->impl = im;
        im->busy_ms = -1;
        rc = sqlite_exec_script(db,
                                sync_full ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"
                                          : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
                                err);
        if (rc < 0) {
                sqlite_close(db);
                return tess_err_wrap(err, "configuring sqlite database '%s'", path);
        }
        return 0;
}
