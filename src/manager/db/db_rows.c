/* db_rows.c - the rows a query returns (db.h): the drivers build them
 * (db_rows_new, db_rows_add, db_rows_finish, db-internal.h), the callers
 * read their cells by index or column name. */
#include "common/compat.h"

#include "manager/db/db-internal.h"

#define NO_CELL SIZE_MAX

struct db_rows *db_rows_new(int ncols)
{
        struct db_rows *r = xcalloc(1, sizeof(*r));
        r->ncols = ncols;
        r->offs = xcalloc((size_t)(ncols ? ncols : 1), sizeof(size_t));
        return r;
}

static size_t arena_put(struct db_rows *r, const char *s)
{
        if (!s)
                return NO_CELL;
        size_t n = strlen(s) + 1, at = r->arena_len;
        if (r->arena_len + n > r->arena_cap) {
                r->arena_cap = r->arena_cap ? r->arena_cap * 2 : 1024;
                while (r->arena_len + n > r->arena_cap)
                        r->arena_cap *= 2;
                r->arena = xrealloc(r->arena, r->arena_cap);
        }
        memcpy(r->arena + at, s, n);
        r->arena_len += n;
        return at;
}

void db_rows_set_name(struct db_rows *r, int col, const char *name)
{
        r->offs[col] = arena_put(r, name);
}

void db_rows_add(struct db_rows *r, const char *const *cells)
{
        size_t base = (size_t)(r->nrows + 1) * (size_t)r->ncols;
        r->offs = xrealloc(r->offs, sizeof(size_t) * (base + (size_t)r->ncols + 1));
        for (int c = 0; c < r->ncols; c++)
                r->offs[base + (size_t)c] = arena_put(r, cells[c]);
        r->nrows++;
}

void db_rows_finish(struct db_rows *r)
{
        size_t n = (size_t)(r->nrows + 1) * (size_t)r->ncols;
        char **p = xmalloc(sizeof(char *) * (n ? n : 1));

        for (size_t i = 0; i < n; i++)
                p[i] = r->offs[i] == NO_CELL ? NULL : r->arena + r->offs[i];
        r->names = p;
        r->cells = p + r->ncols;
        free(r->offs);
        r->offs = NULL;
}

struct db_rows *db_rows_free(struct db_rows *r)
{
        if (!r)
                return NULL;
        free(r->names);
        free(r->offs);
        free(r->arena);
        free(r);
        return NULL;
}

const char *db_get(const struct db_rows *r, int row, int col)
{
        if (!r || row < 0 || row >= r->nrows || col < 0 || col >= r->ncols)
                return NULL;
        return r->cells[row * r->ncols + col];
}

/* Columns are usually read in select order: start after the last match. */
const char *db_getn(const struct db_rows *r, int row, const char *name)
{
        struct db_rows *rw = (struct db_rows *)r;

        if (!r || r->ncols == 0)
                return NULL;
        for (int i = 0; i < r->ncols; i++) {
                int c = (r->last_col + 1 + i) % r->ncols;
                if (streq(r->names[c], name)) {
                        rw->last_col = c;
                        return db_get(r, row, c);
                }
        }
        return NULL;
}

int64_t db_get_int(const struct db_rows *r, int row, const char *name)
{
        const char *v = db_getn(r, row, name);
        return v ? strtoll(v, NULL, 10) : 0;
}
