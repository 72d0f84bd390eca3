/* db_batch.h - one UPDATE ... FROM (VALUES ...) for many rows.
 *
 * The scheduler writes thousands of rows per pass; one statement per row
 * costs a round trip each on PostgreSQL.  A batch collects rows of `width`
 * values and runs them as a few statements of the form
 *
 *     HEAD (VALUES (?, ?), (?, ?), ...) AS v TAIL
 *
 * where HEAD and TAIL name the values v.column1 .. v.columnN (the default
 * column names of a VALUES list on both SQLite and PostgreSQL; values
 * arrive as text on PostgreSQL, so compare numbers through CAST).  Rows go
 * in chunks whose sizes are powers of two, so that few distinct statements
 * are prepared and cached, in one transaction (the caller's, when one is
 * open).  Strings handed to db_batch_keep are freed with the batch. */
#ifndef TESSERA_DB_BATCH_H
#define TESSERA_DB_BATCH_H

#include "manager/db/db.h"

struct db_batch {
        const char *head, *tail;
        int width;
        struct db_arg fixed[4]; /* arguments placed in HEAD before the VALUES */
        int nfixed;
        struct db_arg *args; /* nrows * width */
        int nrows, cap;
        char **kept;
        int nkept, kept_cap;
};

void db_batch_init(struct db_batch *b, const char *head, const char *tail, int width);
void db_batch_fixed(struct db_batch *b, struct db_arg arg);
/* Append one row of `width` values. */
void db_batch_row(struct db_batch *b, const struct db_arg *values);
/* Own `s` until db_batch_done; returns it. */
const char *db_batch_keep(struct db_batch *b, char *s);
/* Run every row; returns the total of changed rows or a negative errno. */
int db_batch_run(struct db *db, struct db_batch *b, struct tess_error **err);
void db_batch_done(struct db_batch *b);

#endif
