/* session_list.c - see session_list.h. */
#include "common/compat.h"

#include "common/buf.h"
#include "manager/sessions/session_list.h"

static int add_arg(struct session_list_query *q, struct db_arg a, struct tess_error **err)
{
        if (q->nargs >= (int)ARRAY_SIZE(q->args))
                return tess_err(err, EINVAL, "the session list query has too many arguments");
        q->args[q->nargs++] = a;
        return 0;
}

/* The statuses named in `list` (comma-separated) as a set. */
static int parse_statuses(const char *list, bool set[_SESSION_STATUS_MAX], struct tess_error **err)
{
        int n = 0;

        for (const char *p = list; *p;) {
                size_t len = strcspn(p, ",");
                if (len > 0) {
                        _cleanup_free_ char *name = xstrndup(p, len);
                        enum session_status st = session_status_from_string(name);
                        if (st < 0)
                                return tess_err(err, EINVAL, "unknown session status '%.32s'", name);
                        if (!set[st])
                                n++;
                        set[st] = true;
                }
                p += len;
                if (*p == ',')
                        p++;
        }
        if (n == 0)
                return tess_err(err, EINVAL, "'status' names no session status (give one or more, comma-separated)");
        return n;
}

int session_list_build(const struct session_list_params *p, struct session_list_query *q, struct tess_error **err)
{
        static const struct {
                size_t offset;
                const char *sql;
                int binds;
        } filters[] = {
                { offsetof(struct session_list_params, owner), " AND (s.access_key = ? OR u.email = ?)", 2 },
                { offsetof(struct session_list_params, group), " AND p.name = ?", 1 },
                { offsetof(struct session_list_params, type), " AND s.session_type = ?", 1 },
                { offsetof(struct session_list_params, name), " AND s.name = ?", 1 },
                { offsetof(struct session_list_params, resource_group), " AND s.resource_group = ?", 1 },
                { offsetof(struct session_list_params, domain_name), " AND s.domain_name = ?", 1 },
        };
        struct buf where = BUF_INIT;
        int r = 0;

        *q = (struct session_list_query){ 0 };
        buf_puts(&where, "1 = 1");
        struct db_arg scope[AUTHZ_SCOPE_MAX_ARGS];
        int nscope = 0;
        authz_scope_sql(p->who, "s.user_id", "s.domain_name", "u.role", &where, scope, &nscope);
        for (int i = 0; i < nscope && r >= 0; i++)
                r = add_arg(q, scope[i], err);
        if (r >= 0 && p->status) {
                bool set[_SESSION_STATUS_MAX] = { false };
                r = parse_statuses(p->status, set, err);
                if (r >= 0) {
                        const char *sep = " AND s.status IN (?";
                        for (int st = 0; st < _SESSION_STATUS_MAX && r >= 0; st++) {
                                if (!set[st])
                                        continue;
                                buf_puts(&where, sep);
                                sep = ", ?";
                                r = add_arg(q, DB_TEXT(session_status_to_string((enum session_status)st)), err);
                        }
                        buf_puts(&where, ")");
                }
        }
        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(filters); i++) {
                const char *v = *(const char *const *)((const char *)p + filters[i].offset);
                if (!v)
                        continue;
                buf_puts(&where, filters[i].sql);
                for (int k = 0; k < filters[i].binds && r >= 0; k++)
                        r = add_arg(q, DB_TEXT(v), err);
        }
        if (r < 0) {
                buf_release(&where);
                return r;
        }
        q->count_nargs = q->nargs;
        q->count_sql = xasprintf("SELECT COUNT(*)%s WHERE %s", session_from, where.data);
        buf_puts(&where, " ORDER BY s.created_at DESC, s.id LIMIT ? OFFSET ?");
        r = add_arg(q, DB_INT(p->limit), err);
        if (r >= 0)
                r = add_arg(q, DB_INT(p->offset), err);
        if (r >= 0)
                q->page_sql = session_select(where.data);
        buf_release(&where);
        if (r < 0)
                session_list_release(q);
        return r < 0 ? r : 0;
}

void session_list_release(struct session_list_query *q)
{
        free(q->count_sql);
        free(q->page_sql);
        q->count_sql = q->page_sql = NULL;
        q->nargs = q->count_nargs = 0;
}
