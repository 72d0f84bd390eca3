/* db_pg.c - the PostgreSQL driver (libpq, one connection, text protocol).
 *
 * `?` placeholders are rewritten to $1..$n outside of quoted strings;
 * statements are prepared once per connection and cached by SQL text.
 * A lost connection is re-established once per query (PQreset). */
#include "common/compat.h"

#include <inttypes.h>
#include <libpq-fe.h>

#include "common/buf.h"
#include "manager/db/db-internal.h"

#define STMT_CACHE 256

struct cached_stmt {
        char *sql;
        char name[16];
};

struct pg_impl {
        PGconn *conn;
        struct cached_stmt cache[STMT_CACHE];
        unsigned next_id;
};

static int map_result(PGresult *res, struct tess_error **err)
{
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        const char *msg = PQresultErrorMessage(res);
        size_t n = strlen(msg);

        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
                n--;
        if (state && streq(state, "23505"))
                return tess_err(err, EEXIST, "postgresql: %.*s", (int)n, msg);
        if (state && streq(state, "23503"))
                return tess_err(err, ENOENT, "postgresql: %.*s", (int)n, msg);
        if (state && (streq(state, "40001") || streq(state, "40P01") || streq(state, "55P03")))
                return tess_err(err, EBUSY, "postgresql: %.*s", (int)n, msg);
        return tess_err(err, EIO, "postgresql: %.*s", (int)n, msg);
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

static bool connection_ok(struct pg_impl *im)
{
        if (PQstatus(im->conn) == CONNECTION_OK)
                return true;
        PQreset(im->conn);
        if (PQstatus(im->conn) != CONNECTION_OK)
                return false;
        /* prepared statements died with the old session */
        for (int i = 0; i < STMT_CACHE; i++) {
                free(im->cache[i].sql);
                im->cache[i].sql = NULL;
        }
        return true;
}

static int get_stmt(struct pg_impl *im, const char *sql, int nargs, const char **ret_name, struct tess_error **err)
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
                int r = map_result(res, err);
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
        if (db->tx_depth == 0 && !connection_ok(im))
                return tess_err(err, EIO, "postgresql: %s", PQerrorMessage(im->conn));
        r = get_stmt(im, sql, nargs, &name, err);
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
                r = map_result(res, err);
                PQclear(res);
                return r;
        }
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

        if (db->tx_depth <= 1 && !connection_ok(im))
                return tess_err(err, EIO, "postgresql: %s", PQerrorMessage(im->conn));
        PGresult *res = PQexec(im->conn, sql);
        ExecStatusType st = PQresultStatus(res);
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
                int r = map_result(res, err);
                PQclear(res);
                return r;
        }
        PQclear(res);
        return 0;
}

static void pg_close(struct db *db)
{
        struct pg_impl *im = db->impl;
        if (!im)
                return;
        for (int i = 0; i < STMT_CACHE; i++)
                free(im->cache[i].sql);
        PQfinish(im->conn);
        free(im);
        db->impl = NULL;
}

const struct db_ops db_pg_ops = {
        .name = "postgresql",
        .query = pg_query,
        .exec_script = pg_exec_script,
        .close = pg_close,
};

static void pg_notice_quiet(void *arg UNUSED, const char *message UNUSED)
{
}

int db_pg_open(struct db *db, const char *url, struct tess_error **err)
{
        struct pg_impl *im = xcalloc(1, sizeof(*im));

        im->conn = PQconnectdb(url);
        if (PQstatus(im->conn) != CONNECTION_OK) {
                char *msg = PQerrorMessage(im->conn);
                size_t n = strlen(msg);
                while (n > 0 && msg[n - 1] == '\n')
                        n--;
                int r = tess_err(err, EIO, "connecting to postgresql: %.*s", (int)n, msg);
                PQfinish(im->conn);
                free(im);
                return r;
        }
        PQsetNoticeProcessor(im->conn, pg_notice_quiet, NULL);
        db->impl = im;
        return 0;
}
