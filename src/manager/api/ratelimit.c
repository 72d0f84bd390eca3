/* ratelimit.c - see ratelimit.h.  Open-addressing hash of access keys. */
#include "common/compat.h"

#include <inttypes.h>

#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/api/ratelimit.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"

struct rl_entry {
        char key[24];
        int64_t window_start;
        int64_t count;
        int64_t unflushed;
};

struct ratelimit {
        struct rl_entry *t;
        size_t cap, n;
};

struct ratelimit *ratelimit_new(void)
{
        struct ratelimit *rl = xcalloc(1, sizeof(*rl));
        rl->cap = 1024;
        rl->t = xcalloc(rl->cap, sizeof(*rl->t));
        return rl;
}

struct ratelimit *ratelimit_free(struct ratelimit *rl)
{
        if (rl) {
                free(rl->t);
                free(rl);
        }
        return NULL;
}

static struct rl_entry *lookup(struct ratelimit *rl, const char *key)
{
        if (rl->n * 2 >= rl->cap) {
                struct rl_entry *old = rl->t;
                size_t oldcap = rl->cap;
                rl->cap *= 2;
                rl->t = xcalloc(rl->cap, sizeof(*rl->t));
                rl->n = 0;
                for (size_t i = 0; i < oldcap; i++) {
                        if (!old[i].key[0])
                                continue;
                        size_t j = hash_str(old[i].key) & (rl->cap - 1);
                        while (rl->t[j].key[0])
                                j = (j + 1) & (rl->cap - 1);
                        rl->t[j] = old[i];
                        rl->n++;
                }
                free(old);
        }
        size_t i = hash_str(key) & (rl->cap - 1);
        while (rl->t[i].key[0] && !streq(rl->t[i].key, key))
                i = (i + 1) & (rl->cap - 1);
        if (!rl->t[i].key[0]) {
                snprintf(rl->t[i].key, sizeof(rl->t[i].key), "%s", key);
                rl->n++;
        }
        return &rl->t[i];
}

int ratelimit_check(struct api_ctx *c, struct tess_error **err)
{
        struct ratelimit *rl = c->m->ratelimit;
        int64_t window = c->m->conf.rate_limit_window, now = monotonic_usec();
        struct rl_entry *e = lookup(rl, c->who.access_key);
        char v[32];

        if (window <= 0)
                window = 15 * 60 * USEC_PER_SEC;
        if (now - e->window_start >= window || e->window_start == 0) {
                e->window_start = now;
                e->count = 0;
        }
        e->count++;
        e->unflushed++;
        if (c->who.rate_limit <= 0)
                return 0;
        int64_t remaining = c->who.rate_limit - e->count;
        snprintf(v, sizeof(v), "%" PRId64, c->who.rate_limit);
        http_add_header(c->req, "X-RateLimit-Limit", v);
        snprintf(v, sizeof(v), "%" PRId64, remaining > 0 ? remaining : 0);
        http_add_header(c->req, "X-RateLimit-Remaining", v);
        snprintf(v, sizeof(v), "%" PRId64, window / USEC_PER_SEC);
        http_add_header(c->req, "X-RateLimit-Window", v);
        if (remaining < 0)
                return tess_err(err, EDQUOT, "rate limit of %" PRId64 " requests per %" PRId64 " s exceeded",
                                c->who.rate_limit, window / USEC_PER_SEC);
        return 0;
}

void ratelimit_drain_counts(struct ratelimit *rl, void (*fn)(const char *key, int64_t delta, void *data), void *data)
{
        for (size_t i = 0; i < rl->cap; i++) {
                if (rl->t[i].key[0] && rl->t[i].unflushed) {
                        fn(rl->t[i].key, rl->t[i].unflushed, data);
                        rl->t[i].unflushed = 0;
                }
        }
}
