/* db_batch.c - many rows through a few UPDATE ... FROM (VALUES ...)
 * statements (see db_batch.h). */
#include "common/compat.h"

#include "common/buf.h"
#include "manager/db/db_batch.h"

/* Rows per statement at most: 128 rows of 5 values stay far below
 * SQLite's and PostgreSQL's limits on parameters. */
#define BATCH_MAX_ROWS 128

void db_batch_init(struct db_batch *b, const char *head, const char *tail, int width)
{
        *b = (struct db_batch){ .head = head, .tail = tail, .width = width };
}

void db_batch_fixed(struct db_batch *b, struct db_arg arg)
{
        if (b->nfixed < (int)ARRAY_SIZE(b->fixed))
                b->fixed[b->nfixed++] = arg;
}

void db_batch_row(struct db_batch *b, const struct db_arg *values)
{
        if (b->nrows == b->cap) {
                b->cap = b->cap ? 2 * b->cap : 64;
                b->args = xrealloc(b->args, (size_t)b->cap * b->width * sizeof(*b->args));
        }
        memcpy(b->args + (size_t)b->nrows * b->width, values, b->width * sizeof(*values));
        b->nrows++;
}

const char *db_batch_keep(struct db_batch *b, char *s)
{
        if (b->nkept == b->kept_cap) {
                b->kept_cap = b->kept_cap ? 2 * b->kept_cap : 64;
                b->kept = xrealloc(b->kept, (size_t)b->kept_cap * sizeof(*b->kept));
        }
        b->kept[b->nkept++] = s;
        return s;
}

static char *chunk_sql(const struct db_batch *b, int rows)
{
        struct buf sql = BUF_INIT;

        buf_puts(&sql, b->head);
        buf_puts(&sql, " (VALUES ");
        for (int r = 0; r < rows; r++) {
                buf_puts(&sql, r ? ", (" : "(");
                for (int c = 0; c < b->width; c++)
                        buf_puts(&sql, c ? ", ?" : "?");
                buf_putc(&sql, ')');
        }
        buf_puts(&sql, ") AS v ");
        buf_puts(&sql, b->tail);
        return buf_detach(&sql, NULL);
}

/* The chunks stand or fall together: one transaction (the caller's, when
 * one is open), so that a failure, a lost connection say, between two of
 * them leaves nothing half written. */
int db_batch_run(struct db *db, struct db_batch *b, struct tess_error **err)
{
        int total = 0, r;

        if (b->nrows == 0)
                return 0;
        r = db_begin(db, err);
        if (r < 0)
                return r;
        _cleanup_free_ struct db_arg *args =
                xmalloc((size_t)(b->nfixed + BATCH_MAX_ROWS * b->width) * sizeof(*args));
        memcpy(args, b->fixed, b->nfixed * sizeof(*args));
        for (int done = 0; done < b->nrows;) {
                int rows = BATCH_MAX_ROWS;
                while (rows > b->nrows - done)
                        rows /= 2;
                _cleanup_free_ char *sql = chunk_sql(b, rows);
                memcpy(args + b->nfixed, b->args + (size_t)done * b->width, (size_t)rows * b->width * sizeof(*args));
                r = db_query(db, sql, args, b->nfixed + rows * b->width, NULL, err);
                if (r < 0) {
                        db_rollback(db);
                        return r;
                }
                total += r;
                done += rows;
        }
        r = db_commit(db, err);
        return r < 0 ? r : total;
}

void db_batch_done(struct db_batch *b)
{
        for (int i = 0; i < b->nkept; i++)
                free(b->kept[i]);
        free(b->kept);
        free(b->args);
        *b = (struct db_batch){ 0 };
}
