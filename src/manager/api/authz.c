/* authz.c - the one authorization rule for objects users own (authz.h). */
#include "common/compat.h"

#include "manager/api/auth.h"
#include "manager/api/authz.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"

enum authz_access authz_access_of(const struct api_ctx *c)
{
        return c->route && (c->route->flags & ROUTE_READ) ? AUTHZ_READ : AUTHZ_WRITE;
}

/* The stored role of user `user_id`; _ROLE_INVALID when there is none. */
static int owner_role(struct manager *m, const char *user_id, enum role *ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db, "SELECT role FROM users WHERE id = ?", &rows, err, DB_TEXT(user_id));

        if (r < 0)
                return r;
        *ret = rows->nrows ? role_from_string(db_get(rows, 0, 0)) : _ROLE_INVALID;
        return 0;
}

int authz_check(struct api_ctx *c, const struct authz_owner *o, enum authz_access access, struct tess_error **err)
{
        const struct principal *who = &c->who;
        enum role role;

        if (who->role == ROLE_SUPERADMIN)
                return 0;
        if (!o->user_id || !*who->user_id)
                return tess_err(err, ENOENT, "not found");
        if (!streq(o->user_id, who->user_id)) {
                if (who->role != ROLE_ADMIN && who->role != ROLE_MONITOR)
                        return tess_err(err, ENOENT, "not found");
                if (!o->domain || !streq(o->domain, who->domain))
                        return tess_err(err, ENOENT, "not found");
                if (o->role) {
                        role = role_from_string(o->role);
                } else {
                        int r = owner_role(c->m, o->user_id, &role, err);
                        if (r < 0)
                                return r;
                }
                /* an unknown role counts as the highest: fail closed */
                if (role == ROLE_SUPERADMIN || role < 0)
                        return tess_err(err, ENOENT, "not found");
        }
        if (access == AUTHZ_WRITE && who->role == ROLE_MONITOR)
                return tess_err(err, EACCES, "monitors may only read");
        return 0;
}

bool authz_sees(struct api_ctx *c, const struct authz_owner *o)
{
        struct tess_error *err = NULL;
        int r = authz_check(c, o, AUTHZ_READ, &err);

        tess_error_free(err);
        return r == 0;
}

int authz_owner_keypair(struct api_ctx *c, const char *owner_ak, enum authz_access access, struct principal *ret,
                        struct tess_error **err)
{
        if (!owner_ak || !*owner_ak || streq(owner_ak, c->who.access_key)) {
                *ret = c->who;
                return 0;
        }
        if (c->who.role == ROLE_USER)
                return tess_err(err, EACCES, "only admins may act for another keypair (owner_access_key)");
        if (c->who.role == ROLE_MONITOR && access == AUTHZ_WRITE)
                return tess_err(err, EACCES, "monitors may only read");
        int r = auth_lookup_keypair(c->m, owner_ak, ret, NULL, err);
        if (r == -ENOENT) {
                tess_error_free(*err);
                *err = NULL;
        } else if (r < 0) {
                return r;
        } else {
                const char *role = role_to_string(ret->role);
                struct authz_owner o = { ret->user_id, ret->domain, role };
                r = authz_check(c, &o, access, err);
                if (r == -ENOENT) {
                        tess_error_free(*err);
                        *err = NULL;
                } else {
                        return r;
                }
        }
        return tess_err(err, ENOENT, "access key '%.24s' not found", owner_ak);
}

void authz_scope_sql(const struct principal *who, const char *user_col, const char *domain_col, const char *role_col,
                     struct buf *where, struct db_arg *args, int *nargs)
{
        switch (who->role) {
        case ROLE_SUPERADMIN:
                return;
        case ROLE_ADMIN:
        case ROLE_MONITOR:
                buf_printf(where, " AND (%s = ? AND %s <> 'superadmin')", domain_col, role_col);
                args[(*nargs)++] = DB_TEXT(who->domain);
                return;
        default:
                buf_printf(where, " AND %s = ?", user_col);
                args[(*nargs)++] = DB_TEXT(who->user_id);
                return;
        }
}
