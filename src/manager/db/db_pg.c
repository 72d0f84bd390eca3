/* db_pg.c - the PostgreSQL driver (libpq, one connection, text protocol).
 *
 * `?` placeholders are rewritten to $1..$n outside of quoted strings;
 * statements are prepared once per connection and cached by SQL text.
 *
 * A lost connection (the server restarted, stopped or cut off) fails its
 * statement with -EBUSY and is dropped; the next statement starts a new
 * one without blocking (PQconnectStartParams, then PQconnectPoll driven by
 * poll() on its socket: the statement that starts it waits CONNECT_WAIT_MS
 * at most, later ones not at all, and an attempt gives up after
 * CONNECT_TIMEOUT_S).  After a failed attempt every statement fails fast
 * for RETRY_USEC.  Inside a transaction nothing reconnects: its statements
 * would go to a new session; they fail instead (db.c).  TCP keepalives and
 * a TCP user timeout notice a server gone silent in about ten seconds
 * instead of the kernel's minutes (a statement in flight still waits that
 * long).  The URL may override every option given here.  A host name in
 * it is resolved blocking at each attempt: give an address (hostaddr=) or
 * a Unix socket where DNS may hang. */
#include "common/compat.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>

#include "common/buf.h"
#include "common/timeutil.h"
#include "manager/db/db-internal.h"

#define STMT_CACHE 256
#define CONNECT_TIMEOUT_S 5
#define CONNECT_WAIT_MS 50
#define RETRY_USEC (1 * USEC_PER_SEC)

struct cached_stmt {
        char *sql;
        char name[16];
};

struct pg_impl {
        char *url;
        PGconn *conn;    /* NULL while there is none */
        bool connecting; /* conn is being made: polling says what it waits for */
        PostgresPollingStatusType polling;
        int64_t connect_started; /* monotonic */
        struct cached_stmt cache[STMT_CACHE];
        unsigned next_id;
};

/* libpq's options: those before "dbname" yield to the URL's. */
static const char *const conn_keys[] = {
        "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
        "tcp_user_timeout", "dbname", NULL,
};

static PGconn *conn_start(const char *url, bool blocking)
{
        char timeout[16];
        snprintf(timeout, sizeof(timeout), "%d", CONNECT_TIMEOUT_S);
        const char *values[] = { timeout, "1", "5", "2", "3", "10000", url, NULL };

        return blocking ? PQconnectdbParams(conn_keys, values, 1) : PQconnectStartParams(conn_keys, values, 1);
}

/* libpq's message on one line (a copy): its line breaks and tabs become
 * single spaces, trailing ones go. */
static char *one_line(const char *msg)
{
        struct buf b = BUF_INIT;

        for (const char *p = msg ? msg : ""; *p; p++) {
                if (*p == '\n' || *p == '\t' || *p == ' ') {
                        if (b.len > 0 && b.data[b.len - 1] != ' ')
                                buf_putc(&b, ' ');
                } else {
                        buf_putc(&b, *p);
                }
        }
        if (b.len > 0 && b.data[b.len - 1] == ' ')
                b.data[--b.len] = 0;
        return buf_detach(&b, NULL);
}

static void cache_clear(struct pg_impl *im)
{
        for (int i = 0; i < STMT_CACHE; i++) {
                free(im->cache[i].sql);
                im->cache[i].sql = NULL;
        }
}

/* Forget the connection; the prepared statements died with its session. */
static void conn_drop(struct pg_impl *im)
{
        PQfinish(im->conn);
        im->conn = NULL;
        im->connecting = false;
        cache_clear(im);
}

static void pg_notice_quiet(void *arg UNUSED, const char *message UNUSED)
{
}

static int unreachable(struct tess_error **err)
{
        return tess_err(err, EBUSY, "the database is unreachable, try again later");
}

/* Advance the connection being made, waiting for its socket wait_ms at
 * most in all: 1 when it is made, 0 not yet, -1 failed. */
static int connect_drive(struct pg_impl *im, int wait_ms)
{
        int64_t deadline = monotonic_usec() + wait_ms * USEC_PER_MSEC;

        for (;;) {
                switch (im->polling) {
                case PGRES_POLLING_OK: return 1;
                case PGRES_POLLING_FAILED: return -1;
                case PGRES_POLLING_READING:
                case PGRES_POLLING_WRITING: break;
                default: /* PGRES_POLLING_ACTIVE, unused since 7.4: just call again */
                        im->polling = PQconnectPoll(im->conn);
                        continue;
                }
                struct pollfd p = {
                        .fd = PQsocket(im->conn),
                        .events = im->polling == PGRES_POLLING_READING ? POLLIN : POLLOUT,
                };
                if (p.fd < 0)
                        return -1;
                int64_t left = deadline - monotonic_usec();
                int n = poll(&p, 1, left > 0 ? (int)((left + USEC_PER_MSEC - 1) / USEC_PER_MSEC) : 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return 0;
                im->polling = PQconnectPoll(im->conn);
        }
}

/* A connection to run a statement on: the one there is, or a new one if
 * it can be made at once; -EBUSY while the database is unreachable. */
static int conn_ready(struct db *db, struct pg_impl *im, struct tess_error **err)
{
        int wait_ms = 0, r;

        if (im->conn && !im->connecting && PQstatus(im->conn) == CONNECTION_OK)
                return 0;
        if (db->in_tx)
                return tess_err(err, EBUSY,
                                "the connection to the database broke during a transaction, try again later");
        if (im->conn && !im->connecting) { /* noticed broken outside of a statement */
                _cleanup_free_ char *why = one_line(PQerrorMessage(im->conn));
                conn_drop(im);
                db_down(db, false, 0, why);
        }
        if (!im->connecting) {
                if (!db_may_try(db)) {
                        db_refused(db);
                        return unreachable(err);
                }
                im->conn = conn_start(im->url, false);
                if (!im->conn)
                        return tess_err(err, ENOMEM, "connecting to postgresql: out of memory");
                im->connecting = true;
                im->polling = PQstatus(im->conn) == CONNECTION_BAD ? PGRES_POLLING_FAILED : PGRES_POLLING_WRITING;
                im->connect_started = monotonic_usec();
                wait_ms = CONNECT_WAIT_MS;
        }
        r = connect_drive(im, wait_ms);
        if (r > 0) {
                im->connecting = false;
                cache_clear(im);
                PQsetNoticeProcessor(im->conn, pg_notice_quiet, NULL);
                return 0;
        }
        if (r == 0 && monotonic_usec() - im->connect_started < CONNECT_TIMEOUT_S * USEC_PER_SEC) {
                db_refused(db);
                return unreachable(err);
        }
        _cleanup_free_ char *why = r < 0 ? one_line(PQerrorMessage(im->conn))
                                         : xasprintf("connecting to postgresql: no answer within %d s",
                                                     CONNECT_TIMEOUT_S);
        conn_drop(im);
        db_down(db, false, RETRY_USEC, why);
        return unreachable(err);
}

/* errno-style code of a failed statement's SQLSTATE. */
static int state_code(const char *state)
{
        if (!state)
                return EIO;
        if (streq(state, "23505"))
                return EEXIST;
        if (streq(state, "23503"))
                return ENOENT;
        if (streq(state, "40001") || streq(state, "40P01") || streq(state, "55P03"))
                return EBUSY;
        if (streq(state, "53100")) /* disk_full */
                return ENOSPC;
        return EIO;
}

/* Whether a statement failed because the connection is gone, or going
 * (the server shuts down): nothing more can be sent on it.  Errors of the
 * server have a SQLSTATE; libpq's own have none, and after a server's
 * immediate shutdown its "server closed the connection unexpectedly" may
 * leave the connection's status CONNECTION_OK. */
static bool conn_lost(PGconn *conn, const char *state)
{
        if (PQstatus(conn) != CONNECTION_OK || !state)
                return true;
        return strncmp(state, "08", 2) == 0 || streq(state, "57P01") || streq(state, "57P02") ||
               streq(state, "57P03");
}

/* A statement's failure (res may be NULL: out of memory, or no answer). */
static int stmt_failed(struct db *db, struct pg_impl *im, PGresult *res, struct tess_error **err)
{
        const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
        _cleanup_free_ char *msg = one_line(res ? PQresultErrorMessage(res) : PQerrorMessage(im->conn));

        if (conn_lost(im->conn, state)) {
                db_tx_broken(db, EBUSY, "the connection to the database broke");
                conn_drop(im);
                db_down(db, false, 0, *msg ? msg : "the connection to postgresql broke");
                return unreachable(err);
        }
        int code = state_code(state);
        db_tx_broken(db, code, msg); /* postgresql ends a transaction at its first error */
        if (code == ENOSPC) {
                db_down(db, true, 0, msg);
                return tess_err(err, ENOSPC, "the database's disk is full (%s)", msg);
        }
        return tess_err(err, code, "postgresql: %s", msg);
}

static char *rewrite_placeholders(const char *sql)
{
        struct buf b = BUF_INIT;
        int n = 0;
        char quote = 0;

        for (const char *p = sql; *p; p++) {
                if (quote) {
                        if (*p == quote)
                                quote = 0;
                        buf_putc(&b, *p);
                } else if (*p == '\'' || *p == '"') {
                        quote = *p;
                        buf_putc(&b, *p);
                } else if (*p == '?') {
                        buf_printf(&b, "$%d", ++n);
                } else {
                        buf_putc(&b, *p);
                }
        }
        return buf_detach(&b, NULL);
}

static int get_stmt(struct db *db, struct pg_impl *im, const char *sql, int nargs, const char **ret_name,
                    struct tess_error **err)
{
        size_t slot = hash_str(sql) % STMT_CACHE;
        struct cached_stmt *c = &im->cache[slot];

        if (c->sql && streq(c->sql, sql)) {
                *ret_name = c->name;
                return 0;
        }
        _cleanup_free_ char *rewritten = rewrite_placeholders(sql);
        char name[16];
        snprintf(name, sizeof(name), "t%u", im->next_id++);
        PGresult *res = PQprepare(im->conn, name, rewritten, nargs, NULL);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
                int r = stmt_failed(db, im, res, err);
                PQclear(res);
                return r;
        }
        PQclear(res);
        if (c->sql) {
                _cleanup_free_ char *dealloc = xasprintf("DEALLOCATE %s", c->name);
                PQclear(PQexec(im->conn, dealloc));
                free(c->sql);
        }
        c->sql = xstrdup(sql);
        memcpy(c->name, name, sizeof(name));
        *ret_name = c->name;
        return 0;
}

/* Did a statement that succeeded change something (for db_up)? */
static bool wrote(PGresult *res)
{
        const char *tag = PQcmdStatus(res);
        return tag && strncmp(tag, "SELECT", 6) != 0 && strncmp(tag, "BEGIN", 5) != 0 &&
               strncmp(tag, "ROLLBACK", 8) != 0;
}

static int pg_query(struct db *db, const char *sql, const struct db_arg *args, int nargs, struct db_rows **ret,
                    struct tess_error **err)
{
        struct pg_impl *im = db->impl;
        const char *name = NULL;
        int r;

        if (nargs > 65535) /* the protocol's limit */
                return tess_err(err, EINVAL, "too many query arguments");
        _cleanup_free_ const char **values = xmalloc((size_t)(nargs ? nargs : 1) * sizeof(*values));
        _cleanup_free_ char(*ints)[24] = xmalloc((size_t)(nargs ? nargs : 1) * sizeof(*ints));
        r = conn_ready(db, im, err);
        if (r < 0)
                return r;
        r = get_stmt(db, im, sql, nargs, &name, err);
        if (r < 0)
                return r;
        for (int i = 0; i < nargs; i++) {
                switch (args[i].type) {
                case DB_ARG_TEXT: values[i] = args[i].text; break;
                case DB_ARG_INT:
                        snprintf(ints[i], sizeof(ints[i]), "%" PRId64, args[i].i);
                        values[i] = ints[i];
                        break;
                default: values[i] = NULL;
                }
        }
        PGresult *res = PQexecPrepared(im->conn, name, nargs, values, NULL, NULL, 0);
        ExecStatusType st = PQresultStatus(res);
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
                r = stmt_failed(db, im, res, err);
                PQclear(res);
                return r;
        }
        db_up(db, wrote(res));
        const char *tuples = PQcmdTuples(res);
        r = (tuples && *tuples) ? (int)strtol(tuples, NULL, 10) : 0;
        if (ret) {
                int nc = PQnfields(res), nr = PQntuples(res);
                if (nc > DB_MAX_COLUMNS) {
                        PQclear(res);
                        return tess_err(err, EINVAL, "a query returns more than %d columns", DB_MAX_COLUMNS);
                }
                struct db_rows *rows = db_rows_new(nc);
                const char *cells[DB_MAX_COLUMNS];
                for (int c = 0; c < nc; c++)
                        db_rows_set_name(rows, c, PQfname(res, c));
                for (int row = 0; row < nr; row++) {
                        for (int c = 0; c < nc; c++)
                                cells[c] = PQgetisnull(res, row, c) ? NULL : PQgetvalue(res, row, c);
                        db_rows_add(rows, cells);
                }
                rows->changes = r;
                db_rows_finish(rows);
                *ret = rows;
        }
        PQclear(res);
        return r;
}

static int pg_exec_script(struct db *db, const char *sql, struct tess_error **err)
{
        struct pg_impl *im = db->impl;
        int r = conn_ready(db, im, err);

        if (r < 0)
                return r;
        PGresult *res = PQexec(im->conn, sql);
        ExecStatusType st = PQresultStatus(res);
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
                r = stmt_failed(db, im, res, err);
                PQclear(res);
                return r;
        }
        /* COMMIT of a transaction postgresql had ended at an error answers
         * ROLLBACK, not an error (db.c breaks such a transaction first) */
        if (streq(sql, "COMMIT") && streq(PQcmdStatus(res), "ROLLBACK")) {
                PQclear(res);
                return tess_err(err, EIO, "postgresql rolled the transaction back");
        }
        db_up(db, wrote(res));
        PQclear(res);
        return 0;
}

static void pg_close(struct db *db)
{
        struct pg_impl *im = db->impl;
        if (!im)
                return;
        conn_drop(im);
        free(im->url);
        free(im);
        db->impl = NULL;
}

const struct db_ops db_pg_ops = {
        .name = "postgresql",
        .query = pg_query,
        .exec_script = pg_exec_script,
        .close = pg_close,
};

/* The first connection blocks (start-up: connect_timeout bounds it). */
/* Whether a failed connection may work later by itself (the server is
 * not up yet, restarting, or not reachable now), as opposed to a
 * configuration that never will (a password, a database's name). */
static bool connect_may_work_later(const char *msg)
{
        static const char *const transient[] = {
                "Connection refused", "No such file or directory", "timeout expired", "Connection timed out",
                "No route to host", "Network is unreachable", "the database system is starting up",
                "the database system is shutting down", "the database system is in recovery mode",
                "server closed the connection unexpectedly", NULL,
        };

        for (const char *const *t = transient; *t; t++)
                if (strstr(msg, *t))
                        return true;
        return false;
}

int db_pg_open(struct db *db, const char *url, struct tess_error **err)
{
        struct pg_impl *im = xcalloc(1, sizeof(*im));

        im->conn = conn_start(url, true);
        if (PQstatus(im->conn) != CONNECTION_OK) {
                _cleanup_free_ char *msg = one_line(PQerrorMessage(im->conn));
                int r = tess_err(err, connect_may_work_later(msg) ? EBUSY : EIO, "connecting to postgresql: %s", msg);
                PQfinish(im->conn);
                free(im);
                return r;
        }
        PQsetNoticeProcessor(im->conn, pg_notice_quiet, NULL);
        im->url = xstrdup(url);
        db->impl = im;
        return 0;
}
