/* held_conn.c - connections cut when their credential is revoked; see
 * held_conn.h.  Everything here runs on the manager's loop. */
#include "common/compat.h"

#include "common/log.h"
#include "common/loop.h"
#include "manager/api/auth.h"
#include "manager/api/held_conn.h"
#include "manager/api/web_session.h"
#include "manager/core/manager.h"

struct held {
        uint64_t id;
        struct held_cred cred;
        void (*cut)(void *data);
        void *data;
        bool is_cut;
};

struct held_conns {
        struct held *v;
        size_t n, cap;
        uint64_t next_id;
        uint64_t timer; /* the periodic check, 0 while nothing is held */
        uint64_t soon;  /* held_conns_check_soon's */
};

struct held_conns *held_conns_new(void)
{
        return xcalloc(1, sizeof(struct held_conns));
}

struct held_conns *held_conns_free(struct held_conns *h)
{
        if (h) {
                /* (the loop, and its timers, are gone already) */
                free(h->v);
                free(h);
        }
        return NULL;
}

void held_cred_of(const struct api_ctx *c, struct held_cred *ret)
{
        memset(ret, 0, sizeof(*ret));
        snprintf(ret->access_key, sizeof(ret->access_key), "%s", c->who.access_key);
        snprintf(ret->user_id, sizeof(ret->user_id), "%s", c->who.user_id);
        ret->role = c->who.role;
        snprintf(ret->web_login, sizeof(ret->web_login), "%s", c->web_login);
}

static void on_timer(struct loop *l UNUSED, void *data)
{
        struct manager *m = data;

        m->held->timer = 0;
        held_conns_check(m);
        if (m->held->n > 0 && !m->held->timer)
                m->held->timer = loop_add_timer(m->loop, HELD_CHECK_EVERY, on_timer, m);
}

uint64_t held_conn_add(struct manager *m, const struct held_cred *cred, void (*cut)(void *data), void *data)
{
        struct held_conns *h = m->held;

        if (h->n == h->cap) {
                h->cap = h->cap ? 2 * h->cap : 16;
                h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
        }
        h->v[h->n++] = (struct held){ .id = ++h->next_id, .cred = *cred, .cut = cut, .data = data };
        if (!h->timer)
                h->timer = loop_add_timer(m->loop, HELD_CHECK_EVERY, on_timer, m);
        return h->next_id;
}

static struct held *find(struct held_conns *h, uint64_t id)
{
        for (size_t i = 0; i < h->n; i++)
                if (h->v[i].id == id)
                        return &h->v[i];
        return NULL;
}

void held_conn_drop(struct manager *m, uint64_t id)
{
        struct held_conns *h = m->held;
        struct held *x = id ? find(h, id) : NULL;

        if (!x)
                return;
        *x = h->v[--h->n];
        if (h->n == 0 && h->timer) {
                loop_cancel_timer(m->loop, h->timer);
                h->timer = 0;
        }
}

/* Why cred no longer holds, or NULL while it does (or when the database
 * cannot tell: an outage cuts nothing). */
static const char *revoked(struct manager *m, const struct held_cred *cred)
{
        struct tess_error *err = NULL;
        struct principal p;
        int r = auth_lookup_keypair(m, cred->access_key, &p, NULL, &err);

        if (r == -ENOENT) {
                tess_error_free(err);
                return "the keypair, its user or its domain is no longer active";
        }
        if (r == 0 && (!streq(p.user_id, cred->user_id) || p.role != cred->role))
                return "the user's role changed";
        if (r == 0 && *cred->web_login) {
                if (p.must_change_password)
                        return "the user must change the password";
                r = web_session_alive(m, cred->web_login, &err);
                if (r == 0)
                        return "the web login ended";
        }
        if (r >= 0 && cred->check) {
                r = cred->check(m, cred->check_arg, &err);
                if (r == 0)
                        return "its token is no longer valid";
        }
        if (r < 0) {
                log_warn("held connections: cannot check a credential now: %s", err->msg);
                tess_error_free(err);
        }
        return NULL;
}

void held_conns_check(struct manager *m)
{
        struct held_conns *h = m->held;
        size_t n = h->n;
        _cleanup_free_ uint64_t *ids = xcalloc(n ? n : 1, sizeof(*ids));

        /* a cut may drop connections, its own or others': walk a copy of
         * the ids and look each up again */
        for (size_t i = 0; i < n; i++)
                ids[i] = h->v[i].id;
        for (size_t i = 0; i < n; i++) {
                struct held *x = find(h, ids[i]);
                if (!x || x->is_cut)
                        continue;
                const char *why = revoked(m, &x->cred);
                if (!why)
                        continue;
                x->is_cut = true;
                log_info("cutting a connection of user %s (keypair %s): %s", x->cred.user_id, x->cred.access_key,
                         why);
                x->cut(x->data);
        }
}

static void on_soon(struct loop *l UNUSED, void *data)
{
        struct manager *m = data;

        m->held->soon = 0;
        held_conns_check(m);
}

void held_conns_check_soon(struct manager *m)
{
        if (m->held->n > 0 && !m->held->soon)
                m->held->soon = loop_add_timer(m->loop, 0, on_soon, m);
}
