/* fuzz_session_list.c - the queries of GET /sessions (session_list_build)
 * from what a client sends: line 1 the caller's role (monitor, user, admin,
 * superadmin), line 2 the query string as sent (status lists, every filter,
 * limit and offset).
 *
 * Checked for both databases: the arguments stay within
 * SESSION_LIST_MAX_ARGS; each query's placeholders, counted as the
 * PostgreSQL driver rewrites them to $n, match its arguments; no empty
 * `IN ()` (SQLite takes it, PostgreSQL does not); and both queries run on
 * a migrated SQLite database in memory.  With FUZZ_SESSION_LIST_PG set to a
 * postgresql:// URL (a scratch database) they also run on PostgreSQL. */
#include "common/compat.h"

#include <stdlib.h>

#include "fuzz.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/sessions/session_list.h"

/* `?` outside quotes: what db_pg.c turns into $1..$n. */
static int placeholders(const char *sql)
{
        int n = 0;
        char quote = 0;

        for (const char *p = sql; *p; p++) {
                if (quote) {
                        if (*p == quote)
                                quote = 0;
                } else if (*p == '\'' || *p == '"') {
                        quote = *p;
                } else if (*p == '?') {
                        n++;
                }
        }
        return n;
}

static struct db *open_db(const char *url)
{
        struct db *db = NULL;
        struct tess_error *err = NULL;

        if (db_open(url, false, &db, &err) < 0 || db_migrate(db, &err) < 0) {
                fprintf(stderr, "%s: %s\n", url, (err ? err->msg : "?"));
                abort();
        }
        return db;
}

static void run_on(struct db *db, const struct session_list_query *q)
{
        struct db_rows *rows = NULL;
        struct tess_error *err = NULL;

        if (!db)
                return;
        int r = db_query(db, q->count_sql, q->args, q->count_nargs, &rows, &err);
        if (r < 0)
                fprintf(stderr, "%s: %s\n", q->count_sql, (err ? err->msg : "?"));
        FUZZ_ASSERT(r >= 0 && rows->nrows == 1);
        rows = db_rows_free(rows);
        r = db_query(db, q->page_sql, q->args, q->nargs, &rows, &err);
        if (r < 0)
                fprintf(stderr, "%s: %s\n", q->page_sql, (err ? err->msg : "?"));
        FUZZ_ASSERT(r >= 0);
        db_rows_free(rows);
}

/* The first value of `name` in the decoded query, as http_query() gives it. */
static const char *arg(char **keys, char **vals, int n, const char *name)
{
        for (int i = 0; i < n; i++)
                if (strcmp(keys[i], name) == 0)
                        return vals[i];
        return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct db *sqlite, *pg;
        static bool opened;
        char *text = fuzz_strndup(data, size), *save = NULL, *keys[64], *vals[64];
        char *nl = strchr(text, '\n');
        int n = 0;
        struct tess_error *err = NULL;

        if (!opened) {
                opened = true;
                sqlite = open_db("sqlite::memory:");
                if (getenv("FUZZ_SESSION_LIST_PG"))
                        pg = open_db(getenv("FUZZ_SESSION_LIST_PG"));
        }
        if (!nl) {
                free(text);
                return 0;
        }
        *nl = '\0';
        struct principal who = { .role = role_from_string(text), .user_id = "00000000-0000-4000-8000-000000000001",
                                 .domain = "default" };
        if (who.role < 0)
                who.role = ROLE_USER;
        struct session_list_params p = { .who = &who, .limit = 20 };
        char *query = nl + 1;
        query[strcspn(query, "\n")] = '\0';
        for (char *part = strtok_r(query, "&", &save); part && n < 64; part = strtok_r(NULL, "&", &save)) {
                char *eq = strchr(part, '=');
                if (eq)
                        *eq = '\0';
                if (http_percent_decode(part, true) < 0 || (eq && http_percent_decode(eq + 1, true) < 0))
                        continue;
                keys[n] = part;
                vals[n++] = eq ? eq + 1 : part + strlen(part);
        }
        p.status = arg(keys, vals, n, "status");
        p.owner = arg(keys, vals, n, "owner");
        p.group = arg(keys, vals, n, "group");
        p.type = arg(keys, vals, n, "type");
        p.name = arg(keys, vals, n, "name");
        p.resource_group = arg(keys, vals, n, "resource_group");
        p.domain_name = arg(keys, vals, n, "domain");
        const char *v;
        if ((v = arg(keys, vals, n, "limit")))
                p.limit = 1 + llabs(strtoll(v, NULL, 10) % 1000); /* api_page: 1 to 1000 */
        if ((v = arg(keys, vals, n, "offset")))
                p.offset = llabs(strtoll(v, NULL, 10) % 1000000);

        struct session_list_query q;
        if (session_list_build(&p, &q, &err) == 0) {
                FUZZ_ASSERT(q.count_nargs <= q.nargs && q.nargs <= SESSION_LIST_MAX_ARGS);
                FUZZ_ASSERT(placeholders(q.count_sql) == q.count_nargs);
                FUZZ_ASSERT(placeholders(q.page_sql) == q.nargs);
                FUZZ_ASSERT(!strstr(q.count_sql, "()") && !strstr(q.page_sql, "()"));
                for (int i = 0; i < q.nargs; i++)
                        FUZZ_ASSERT(q.args[i].type != DB_ARG_TEXT || q.args[i].text);
                run_on(sqlite, &q);
                run_on(pg, &q);
                session_list_release(&q);
        } else {
                FUZZ_ASSERT(err && err->code == EINVAL);
        }
        tess_error_free(err);
        free(text);
        return 0;
}
