/* auth_keypair.c - the principal behind an access key (auth.h), for the
 * request signatures, web logins and the routes that act for an owner. */
#include "common/compat.h"

#include "common/crypto.h"
#include "manager/api/auth.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"

static void copy_field(char *dst, size_t n, const char *src)
{
        snprintf(dst, n, "%s", src ? src : "");
}

int auth_lookup_keypair(struct manager *m, const char *access_key, struct principal *ret, char **ret_secret,
                        struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r;

        r = DBQ(m->db,
                "SELECT k.access_key, k.secret_key_sealed, k.resource_policy, k.rate_limit, u.id AS user_id,"
                " u.email, u.role, u.domain_name, u.need_password_change, p.max_pending_session_count,"
                " p.max_pending_session_resource_slots, p.max_session_priority, p.max_container_disk"
                " FROM keypairs k JOIN users u ON u.id = k.user_id"
                " JOIN domains d ON d.name = u.domain_name"
                " LEFT JOIN keypair_resource_policies p ON p.name = k.resource_policy"
                " WHERE k.access_key = ? AND k.is_active = 1 AND u.status = 'active' AND d.is_active = 1",
                &rows, err, DB_TEXT(access_key));
        if (r < 0)
                return r;
        if (rows->nrows == 0)
                return tess_err(err, ENOENT, "unknown or inactive access key");
        memset(ret, 0, sizeof(*ret));
        copy_field(ret->access_key, sizeof(ret->access_key), db_getn(rows, 0, "access_key"));
        copy_field(ret->user_id, sizeof(ret->user_id), db_getn(rows, 0, "user_id"));
        copy_field(ret->email, sizeof(ret->email), db_getn(rows, 0, "email"));
        copy_field(ret->domain, sizeof(ret->domain), db_getn(rows, 0, "domain_name"));
        copy_field(ret->resource_policy, sizeof(ret->resource_policy), db_getn(rows, 0, "resource_policy"));
        ret->rate_limit = db_get_int(rows, 0, "rate_limit");
        ret->role = role_from_string(db_getn(rows, 0, "role"));
        ret->must_change_password = db_get_int(rows, 0, "need_password_change") != 0;
        ret->max_session_priority =
                db_getn(rows, 0, "max_session_priority") ? db_get_int(rows, 0, "max_session_priority") : 10;
        ret->max_container_disk = db_get_int(rows, 0, "max_container_disk"); /* (NULL: no policy: 0) */
        const char *max_count = db_getn(rows, 0, "max_pending_session_count");
        const char *max_slots = db_getn(rows, 0, "max_pending_session_resource_slots");
        ret->max_pending_count = max_count ? strtoll(max_count, NULL, 10) : -1;
        ret->has_max_pending_slots = max_slots != NULL;
        r = slots_from_text(&ret->max_pending_slots, max_slots, err);
        if (r < 0)
                return tess_err_wrap(err, "resource policy of '%s'", access_key);
        if (ret->role < 0)
                return tess_err(err, EIO, "user of '%s' has an unknown role", access_key);
        if (ret_secret) {
                r = secret_open(m->master_key, db_getn(rows, 0, "secret_key_sealed"), ret_secret, err);
                if (r < 0)
                        return tess_err_wrap(err, "opening the secret key of '%s'", access_key);
        }
        return 0;
}
