/* login_guard.c - see login_guard.h. */
#include "common/compat.h"

#include <ctype.h>

#include "manager/api/api.h"
#include "manager/api/login_guard.h"
#include "manager/db/db.h"
#include "manager/http/http.h"

#define GUARD_SLOTS 512

struct guard_entry {
        char key[264]; /* "u:<user id>", "n:<name>" or "a:<address>" */
        int failures;
        int64_t first, blocked_until;
};

struct login_guard {
        struct guard_entry e[GUARD_SLOTS];
};

struct login_guard *login_guard_new(void)
{
        return xcalloc(1, sizeof(struct login_guard));
}

struct login_guard *login_guard_free(struct login_guard *g)
{
        free(g);
        return NULL;
}

char *login_guard_key(const char *user_id, const char *typed)
{
        if (user_id)
                return xasprintf("u:%s", user_id);
        char *k = xasprintf("n:%s", typed ? typed : "");
        for (char *s = k; *s; s++)
                *s = (char)tolower((unsigned char)*s);
        return k;
}

/* The entry of key, or (create) a free or the oldest one made its. */
static struct guard_entry *guard_find(struct login_guard *g, const char *key, bool create)
{
        struct guard_entry *oldest = &g->e[0];

        for (int i = 0; i < GUARD_SLOTS; i++) {
                if (streq(g->e[i].key, key))
                        return &g->e[i];
                if (g->e[i].first < oldest->first)
                        oldest = &g->e[i];
        }
        if (!create)
                return NULL;
        *oldest = (struct guard_entry){ 0 };
        snprintf(oldest->key, sizeof(oldest->key), "%s", key);
        return oldest;
}

static int64_t blocked_for(struct login_guard *g, const char *key, int64_t now)
{
        struct guard_entry *e = guard_find(g, key, false);
        return e && e->blocked_until > now ? (e->blocked_until - now) / USEC_PER_SEC + 1 : 0;
}

static void fail(struct login_guard *g, const char *key, int limit, int64_t now)
{
        struct guard_entry *e = guard_find(g, key, true);

        if (now - e->first > LOGIN_GUARD_WINDOW) {
                e->first = now;
                e->failures = 0;
        }
        if (++e->failures >= limit)
                e->blocked_until = now + LOGIN_GUARD_WINDOW;
}

static char *addr_key(struct api_ctx *c)
{
        return xasprintf("a:%s", http_remote_addr(c->req));
}

int64_t login_guard_blocked(struct login_guard *g, struct api_ctx *c, char *const *keys, int n)
{
        _cleanup_free_ char *a = addr_key(c);
        int64_t now = now_usec(), wait = blocked_for(g, a, now);

        for (int i = 0; i < n; i++) {
                int64_t w = blocked_for(g, keys[i], now);
                if (w > wait)
                        wait = w;
        }
        return wait;
}

void login_guard_failed(struct login_guard *g, struct api_ctx *c, char *const *keys, int n)
{
        _cleanup_free_ char *a = addr_key(c);
        int64_t now = now_usec();

        for (int i = 0; i < n; i++)
                fail(g, keys[i], LOGIN_USER_FAILURES, now);
        fail(g, a, LOGIN_ADDR_FAILURES, now);
}

void login_guard_succeeded(struct login_guard *g, char *const *keys, int n)
{
        for (int i = 0; i < n; i++) {
                struct guard_entry *e = guard_find(g, keys[i], false);
                if (e)
                        *e = (struct guard_entry){ 0 };
        }
}

void login_guard_refuse(struct api_ctx *c, int64_t secs)
{
        char v[32];

        snprintf(v, sizeof(v), "%lld", (long long)secs);
        http_add_header(c->req, "Retry-After", v);
        api_problem(c, 429, "too-many-requests", "too many failed logins: try again in %lld seconds", (long long)secs);
}

void login_try_free(void *data)
{
        struct login_try *t = data;

        db_rows_free(t->rows);
        for (int i = 0; i < t->nkeys; i++)
                free(t->keys[i]);
        free(t->keys);
        free(t);
}

int64_t login_try_guard(struct login_guard *g, struct api_ctx *c, struct login_try *t, const char *typed)
{
        t->nkeys = t->rows->nrows ? t->rows->nrows : 1;
        t->keys = xcalloc((size_t)t->nkeys, sizeof(*t->keys));
        for (int i = 0; i < t->nkeys; i++)
                t->keys[i] = login_guard_key(t->rows->nrows ? db_getn(t->rows, i, "id") : NULL, typed);
        int64_t wait = login_guard_blocked(g, c, t->keys, t->nkeys);
        if (wait)
                login_guard_refuse(c, wait);
        return wait;
}
