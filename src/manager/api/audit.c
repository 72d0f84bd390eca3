/* audit.c - see audit.h. */
#include "common/compat.h"

#include "common/crypto.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/api/api.h"
#include "manager/api/audit.h"
#include "manager/api/subcall.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/http/http.h"

#define AUDIT_BATCH 64
#define AUDIT_DELAY (200 * USEC_PER_MSEC)

struct audit_entry {
        char id[UUID_STR_LEN];
        int64_t ts;
        unsigned status;
        char *access_key, *user_id, *remote_addr, *method, *path, *action, *target;
};

struct audit {
        struct audit_entry e[AUDIT_BATCH];
        int n;
        uint64_t timer;
};

struct audit *audit_new(void)
{
        return xcalloc(1, sizeof(struct audit));
}

static void entry_release(struct audit_entry *e)
{
        free(e->access_key);
        free(e->user_id);
        free(e->remote_addr);
        free(e->method);
        free(e->path);
        free(e->action);
        free(e->target);
}

struct audit *audit_free(struct audit *a)
{
        if (a) {
                for (int i = 0; i < a->n; i++)
                        entry_release(&a->e[i]);
                free(a);
        }
        return NULL;
}

void audit_flush(struct manager *m)
{
        struct audit *a = m->audit;
        struct tess_error *err = NULL;
        int r;

        if (a->timer) {
                loop_cancel_timer(m->loop, a->timer);
                a->timer = 0;
        }
        if (a->n == 0)
                return;
        r = db_begin(m->db, &err);
        for (int i = 0; i < a->n && r >= 0; i++) {
                struct audit_entry *e = &a->e[i];
                r = DBQ(m->db,
                        "INSERT INTO audit_log(id, ts, access_key, user_id, remote_addr, method, path, action, target,"
                        " status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        NULL, &err, DB_TEXT(e->id), DB_INT(e->ts), DB_TEXT(e->access_key), DB_TEXT(e->user_id),
                        DB_TEXT(e->remote_addr), DB_TEXT(e->method), DB_TEXT(e->path), DB_TEXT(e->action),
                        DB_TEXT(e->target), DB_INT(e->status));
        }
        if (r >= 0)
                r = db_commit(m->db, &err);
        else
                db_rollback(m->db);
        if (r < 0 && db_unavailable(m->db)) { /* the database logs its outage once */
                log_debug("writing %d audit log entries failed: %s, ignoring", a->n, err->msg);
                tess_error_free(err);
        } else if (r < 0) {
                log_warn("writing %d audit log entries failed: %s, ignoring", a->n, err->msg);
                tess_error_free(err);
        }
        for (int i = 0; i < a->n; i++)
                entry_release(&a->e[i]);
        a->n = 0;
}

static void on_timer(struct loop *l UNUSED, void *data)
{
        struct manager *m = data;
        m->audit->timer = 0;
        audit_flush(m);
}

static char *dup_or_null(const char *s)
{
        return s && *s ? xstrdup(s) : NULL;
}

void audit_record(struct manager *m, const struct api_ctx *c, unsigned status)
{
        struct audit *a = m->audit;
        struct audit_entry *e = &a->e[a->n++];

        uuid_generate_str(e->id);
        e->ts = now_usec();
        e->status = status;
        e->access_key = dup_or_null(c->who.access_key);
        e->user_id = dup_or_null(c->who.user_id);
        e->remote_addr = dup_or_null(http_remote_addr(c->req));
        e->method = xstrdup(api_method(c));
        e->path = xstrdup(api_path(c));
        e->action = xasprintf("%s %s", api_method(c), c->route->pattern);
        e->target = dup_or_null(c->audit_target);
        if (a->n == AUDIT_BATCH)
                audit_flush(m);
        else if (!a->timer)
                a->timer = loop_add_timer(m->loop, AUDIT_DELAY, on_timer, m);
}
