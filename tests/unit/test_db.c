/* test_db.c - outages and transactions of the database layer: when an
 * outage begins and ends (db_health), SQLite locked by another process or
 * out of room, transactions that end under their statements, and a
 * PostgreSQL connection killed under the driver (TESSERA_TEST_PG_URL, or
 * a private server of scripts/pg-test.sh; skipped without either). */
#include "common/compat.h"

#include <libpq-fe.h>
#include <sqlite3.h>

#include "../lib/test.h"
#include "common/timeutil.h"
#include "manager/db/db.h"
#include "manager/db/db_health.h"

#define S USEC_PER_SEC

/* ---- db_health ---- */

static void test_db_health_outage(void)
{
        struct db_health h = { 0 };
        int64_t usec = -1;
        uint64_t failed = 0;

        CHECK(db_health_may_try(&h, 0));
        CHECK(!db_health_ok(&h, 1 * S, true, &usec, &failed)); /* nothing to end */
        CHECK(db_health_failed(&h, 10 * S, 1 * S, false));     /* begins: log it */
        CHECK(!db_health_failed(&h, 10 * S + 1, 1 * S, false)); /* goes on: do not */
        CHECK(!db_health_may_try(&h, 10 * S + 500000));         /* fail fast for a second */
        db_health_refused(&h);
        db_health_refused(&h);
        CHECK(db_health_may_try(&h, 11 * S + 1));
        CHECK(db_health_ok(&h, 13 * S, false, &usec, &failed)); /* any answer ends a lost connection */
        CHECK_INTEQ(usec, 3 * S);
        CHECK_INTEQ(failed, 4);
        CHECK(!h.down);
        CHECK(!db_health_ok(&h, 14 * S, true, &usec, &failed));
        /* the next outage counts afresh */
        CHECK(db_health_failed(&h, 20 * S, 0, false));
        CHECK(db_health_may_try(&h, 20 * S)); /* retry_in 0: try at once */
        CHECK(db_health_ok(&h, 21 * S, true, &usec, &failed));
        CHECK_INTEQ(failed, 1);
}

static void test_db_health_writes_only(void)
{
        struct db_health h = { 0 };
        int64_t usec;
        uint64_t failed;

        CHECK(db_health_failed(&h, 5 * S, 0, true)); /* a full disk: reads work */
        CHECK(!db_health_ok(&h, 6 * S, false, &usec, &failed)); /* a read proves nothing */
        CHECK(h.down);
        CHECK(db_health_ok(&h, 7 * S, true, &usec, &failed));
        CHECK_INTEQ(usec, 2 * S);
}

/* ---- SQLite ---- */

struct fixture {
        char dir[64];
        char *path;
        struct db *db;
};

static bool fixture_open(struct fixture *f)
{
        _cleanup_free_ char *url = NULL;
        struct tess_error *err = NULL;

        memset(f, 0, sizeof(*f));
        snprintf(f->dir, sizeof(f->dir), "/tmp/tessera-test-db.XXXXXX");
        if (!mkdtemp(f->dir))
                return false;
        f->path = xasprintf("%s/t.db", f->dir);
        url = xasprintf("sqlite:%s", f->path);
        if (db_open(url, false, &f->db, &err) < 0 ||
            db_exec_script(f->db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)", &err) < 0) {
                test_fail(__FILE__, __LINE__, "opening %s: %s", url, err ? err->msg : "?");
                tess_error_free(err);
                return false;
        }
        return true;
}

static void fixture_close(struct fixture *f)
{
        _cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", f->dir);
        f->db = db_close(f->db);
        free(f->path);
        if (system(cmd) != 0)
                test_fail(__FILE__, __LINE__, "could not remove %s", f->dir);
}

static int insert(struct fixture *f, int id, const char *v, struct tess_error **err)
{
        return DBQ(f->db, "INSERT INTO t (id, v) VALUES (?, ?)", NULL, err, DB_INT(id), DB_TEXT(v));
}

static int64_t count_rows(struct fixture *f)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        if (db_query(f->db, "SELECT COUNT(*) AS n FROM t", NULL, 0, &rows, NULL) < 0)
                return -1;
        return db_get_int(rows, 0, "n");
}

/* Another process's write lock: -EBUSY after the wait, then failing fast
 * (not waiting again at every write), reads go on, and writes work again
 * once it is released. */
static void test_db_sqlite_locked_elsewhere(void)
{
        struct fixture f;
        struct tess_error *err = NULL;
        sqlite3 *other = NULL;

        if (!fixture_open(&f))
                return;
        CHECK(insert(&f, 1, "before", NULL) == 1);
        CHECK(sqlite3_open(f.path, &other) == SQLITE_OK);
        CHECK(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);

        CHECK(insert(&f, 2, "locked", &err) == -EBUSY);
        CHECK(err && strstr(err->msg, "locked by another process"));
        err = tess_error_free(err);
        CHECK(db_unavailable(f.db));
        /* the next write does not wait the full busy timeout again */
        int64_t t0 = monotonic_usec();
        CHECK(insert(&f, 3, "still locked", NULL) == -EBUSY);
        CHECK(monotonic_usec() - t0 < 1500 * USEC_PER_MSEC);
        CHECK_INTEQ(count_rows(&f), 1); /* reads work */
        CHECK(db_begin(f.db, &err) == -EBUSY);
        err = tess_error_free(err);

        CHECK(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(other);
        CHECK(insert(&f, 4, "after", NULL) == 1);
        CHECK(!db_unavailable(f.db));
        CHECK_INTEQ(count_rows(&f), 2);
        fixture_close(&f);
}

/* No room left (max_page_count stands in for a full disk): -ENOSPC, reads
 * go on, a transaction is either committed whole or reported failed, and
 * writes work again once there is room. */
static void test_db_sqlite_full(void)
{
        struct fixture f;
        struct tess_error *err = NULL;
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *big = xmalloc(64 * 1024 + 1);

        if (!fixture_open(&f))
                return;
        memset(big, 'x', 64 * 1024);
        big[64 * 1024] = 0;
        CHECK(insert(&f, 1, "before", NULL) == 1);
        CHECK(db_query(f.db, "PRAGMA page_count", NULL, 0, &rows, NULL) >= 0);
        _cleanup_free_ char *limit = xasprintf("PRAGMA max_page_count = %s", db_get(rows, 0, 0));
        CHECK(db_exec_script(f.db, limit, NULL) == 0);

        CHECK(insert(&f, 2, big, &err) == -ENOSPC);
        CHECK(err && strstr(err->msg, "disk is full"));
        err = tess_error_free(err);
        CHECK(db_unavailable(f.db));
        CHECK_INTEQ(count_rows(&f), 1);
        CHECK(db_unavailable(f.db)); /* a read does not end it */

        CHECK(db_begin(f.db, NULL) == 0);
        int small = insert(&f, 3, "small", NULL);
        CHECK(insert(&f, 4, big, NULL) == -ENOSPC);
        int committed = db_commit(f.db, NULL);
        db_rollback(f.db);
        _cleanup_rows_ struct db_rows *r3 = NULL;
        CHECK(db_query(f.db, "SELECT COUNT(*) AS n FROM t WHERE id = 3", NULL, 0, &r3, NULL) >= 0);
        /* reported committed exactly when the row is there */
        CHECK_INTEQ(small == 1 && committed == 0, db_get_int(r3, 0, "n") == 1);

        CHECK(db_exec_script(f.db, "PRAGMA max_page_count = 1000000", NULL) == 0);
        CHECK(insert(&f, 5, big, NULL) == 1);
        CHECK(!db_unavailable(f.db));
        _cleanup_rows_ struct db_rows *ok = NULL;
        CHECK(db_query(f.db, "PRAGMA integrity_check", NULL, 0, &ok, NULL) >= 0);
        CHECK_STREQ(db_get(ok, 0, 0), "ok");
        fixture_close(&f);
}

/* A nested rollback ends the whole transaction: the statements around it
 * fail instead of running alone, and the outer commit fails. */
static void test_db_nested_rollback_breaks_the_transaction(void)
{
        struct fixture f;
        struct tess_error *err = NULL;

        if (!fixture_open(&f))
                return;
        CHECK(db_begin(f.db, NULL) == 0);
        CHECK(insert(&f, 1, "outer", NULL) == 1);
        CHECK(db_begin(f.db, NULL) == 0);
        CHECK(insert(&f, 1, "inner, a duplicate", NULL) == -EEXIST);
        db_rollback(f.db); /* the inner part gives up */
        CHECK(insert(&f, 2, "outer, after", &err) == -EEXIST);
        CHECK(err && strstr(err->msg, "rolled back"));
        err = tess_error_free(err);
        CHECK(db_commit(f.db, &err) == -EEXIST);
        err = tess_error_free(err);
        CHECK_INTEQ(count_rows(&f), 0);
        /* and the next transaction is a fresh one */
        CHECK(db_begin(f.db, NULL) == 0);
        CHECK(insert(&f, 3, "next", NULL) == 1);
        CHECK(db_commit(f.db, NULL) == 0);
        CHECK_INTEQ(count_rows(&f), 1);
        fixture_close(&f);
}

/* A failed statement alone does not end a SQLite transaction. */
static void test_db_statement_error_keeps_the_transaction(void)
{
        struct fixture f;

        if (!fixture_open(&f))
                return;
        CHECK(db_begin(f.db, NULL) == 0);
        CHECK(insert(&f, 1, "a", NULL) == 1);
        CHECK(insert(&f, 1, "a again", NULL) == -EEXIST);
        CHECK(insert(&f, 2, "b", NULL) == 1);
        CHECK(db_commit(f.db, NULL) == 0);
        CHECK_INTEQ(count_rows(&f), 2);
        fixture_close(&f);
}

/* ---- PostgreSQL: the connection killed under the driver ---- */

struct pg_fixture {
        struct db *db;
};

/* A private server, started by the first test that needs one and stopped
 * at exit; or the shared one of TESSERA_TEST_PG_URL. */
static char pg_dir[64];
static char *pg_url;

static void pg_server_stop(void)
{
        _cleanup_free_ char *cmd = xasprintf("scripts/pg-test.sh stop '%s' >/dev/null 2>&1", pg_dir);
        if (system(cmd) != 0)
                fprintf(stderr, "# could not stop the server in %s\n", pg_dir);
}

static const char *pg_server(void)
{
        const char *shared = getenv("TESSERA_TEST_PG_URL");

        if (pg_url)
                return pg_url;
        if (shared && *shared)
                return pg_url = xstrdup(shared);
        if (access("scripts/pg-test.sh", X_OK) != 0 || access("/usr/bin/psql", X_OK) != 0)
                return NULL;
        snprintf(pg_dir, sizeof(pg_dir), "/tmp/tessera-test-db-pg.XXXXXX");
        if (!mkdtemp(pg_dir))
                return NULL;
        _cleanup_free_ char *cmd = xasprintf("scripts/pg-test.sh start '%s' 2>/dev/null", pg_dir);
        FILE *p = popen(cmd, "r");
        char line[512] = "";
        bool got = p && fgets(line, sizeof(line), p);
        if ((p ? pclose(p) : -1) != 0 || !got) {
                pg_server_stop();
                return NULL;
        }
        atexit(pg_server_stop);
        line[strcspn(line, "\n")] = 0;
        return pg_url = xstrdup(line);
}

static void pg_fixture_close(struct pg_fixture *f)
{
        if (f->db)
                db_exec_script(f->db, "DROP TABLE IF EXISTS test_db_t", NULL);
        f->db = db_close(f->db);
}

static bool pg_fixture_open(struct pg_fixture *f)
{
        struct tess_error *err = NULL;

        memset(f, 0, sizeof(*f));
        if (!pg_server()) {
                test_skip("no TESSERA_TEST_PG_URL, and scripts/pg-test.sh could not start a PostgreSQL");
                return false;
        }
        if (db_open(pg_url, false, &f->db, &err) < 0 ||
            db_exec_script(f->db, "DROP TABLE IF EXISTS test_db_t; CREATE TABLE test_db_t (id INTEGER PRIMARY KEY)",
                           &err) < 0) {
                test_fail(__FILE__, __LINE__, "opening %s: %s", pg_url, err ? err->msg : "?");
                tess_error_free(err);
                pg_fixture_close(f);
                return false;
        }
        return true;
}

/* End the driver's session from another connection, as a server restart
 * or an administrator would. */
static void pg_kill_session(struct pg_fixture *f)
{
        _cleanup_rows_ struct db_rows *rows = NULL;

        CHECK(db_query(f->db, "SELECT pg_backend_pid() AS pid", NULL, 0, &rows, NULL) >= 0);
        if (!rows)
                return;
        PGconn *other = PQconnectdb(pg_url);
        _cleanup_free_ char *sql = xasprintf("SELECT pg_terminate_backend(%s)", db_getn(rows, 0, "pid"));
        PGresult *res = PQexec(other, sql);
        CHECK(PQresultStatus(res) == PGRES_TUPLES_OK);
        PQclear(res);
        PQfinish(other);
}

static int pg_insert(struct pg_fixture *f, int id, struct tess_error **err)
{
        return DBQ(f->db, "INSERT INTO test_db_t (id) VALUES (?)", NULL, err, DB_INT(id));
}

static int64_t pg_count(struct pg_fixture *f, const char *where)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *sql = xasprintf("SELECT COUNT(*) AS n FROM test_db_t WHERE %s", where);
        if (db_query(f->db, sql, NULL, 0, &rows, NULL) < 0)
                return -1;
        return db_get_int(rows, 0, "n");
}

/* A statement on a killed connection fails with -EBUSY (503, not 500);
 * the next one reconnects by itself, and statements prepared on the old
 * session are prepared again.  Inside a transaction nothing reconnects:
 * its statements and its commit fail, and nothing of it is stored. */
static void test_db_pg_connection_killed(void)
{
        struct pg_fixture f;
        struct tess_error *err = NULL;

        if (!pg_fixture_open(&f))
                return;
        CHECK(pg_insert(&f, 1, NULL) == 1); /* prepared and cached */
        pg_kill_session(&f);
        CHECK(pg_insert(&f, 2, &err) == -EBUSY);
        CHECK(err && strstr(err->msg, "unreachable"));
        err = tess_error_free(err);
        CHECK(db_unavailable(f.db));
        CHECK(pg_insert(&f, 3, &err) == 1); /* the cached statement, on a new session */
        if (err)
                test_fail(__FILE__, __LINE__, "after the reconnection: %s", err->msg);
        err = tess_error_free(err);
        CHECK(!db_unavailable(f.db));

        CHECK(db_begin(f.db, NULL) == 0);
        CHECK(pg_insert(&f, 10, NULL) == 1);
        pg_kill_session(&f);
        CHECK(pg_insert(&f, 11, NULL) == -EBUSY);
        CHECK(pg_insert(&f, 12, NULL) == -EBUSY); /* not on a new session, outside the transaction */
        CHECK(db_commit(f.db, &err) == -EBUSY);
        err = tess_error_free(err);
        CHECK_INTEQ(pg_count(&f, "id >= 10"), 0);
        CHECK_INTEQ(pg_count(&f, "id < 10"), 2);
        pg_fixture_close(&f);
}

/* Postgresql ends a transaction at its first error: the statements after
 * it fail with that error (not "current transaction is aborted", a 500),
 * and its COMMIT is not a success. */
static void test_db_pg_error_ends_the_transaction(void)
{
        struct pg_fixture f;
        struct tess_error *err = NULL;

        if (!pg_fixture_open(&f))
                return;
        CHECK(db_begin(f.db, NULL) == 0);
        CHECK(pg_insert(&f, 1, NULL) == 1);
        CHECK(pg_insert(&f, 1, NULL) == -EEXIST);
        CHECK(pg_insert(&f, 2, NULL) == -EEXIST);
        CHECK(db_commit(f.db, &err) == -EEXIST);
        err = tess_error_free(err);
        CHECK_INTEQ(pg_count(&f, "TRUE"), 0);
        pg_fixture_close(&f);
}

static const struct test tests[] = {
        TEST(test_db_health_outage),
        TEST(test_db_health_writes_only),
        TEST(test_db_sqlite_locked_elsewhere),
        TEST(test_db_sqlite_full),
        TEST(test_db_nested_rollback_breaks_the_transaction),
        TEST(test_db_statement_error_keeps_the_transaction),
        TEST(test_db_pg_connection_killed),
        TEST(test_db_pg_error_ends_the_transaction),
        {},
};

int main(void)
{
        return test_main(tests);
}
