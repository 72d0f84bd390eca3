/* admin_keypairs.c - /admin/keypairs and /admin/keypair-policies.
 *
 * Users manage their own keypairs (list, show, create, delete) but may not
 * pick a resource policy or rate limit: theirs inherit the calling
 * keypair's.  A user creates one only where that policy allows it
 * (allow_user_keypairs), by giving its password (so that a stolen
 * keypair or login cookie cannot mint keypairs that outlive its
 * revocation), and never chooses the keys.  Nobody gives a user more
 * keypairs than the new keypair's policy allows (max_keypairs_per_user,
 * 0 = unlimited).  A secret key appears only in the answer that creates it.
 * Making a keypair main clears the flag on the user's other keypairs; a
 * main keypair cannot be deleted (make another one main first). */
#include "common/compat.h"

#include "common/container_disk.h"
#include "common/crypto.h"
#include "manager/accounts/model.h"
#include "manager/admin/admin-internal.h"
#include "manager/core/manager.h"

static const struct field keypair_fields[] = {
        { "access_key", "access_key", FT_TEXT, FF_CREATE, .min = 20, .max = 20 },
        { "secret_key", NULL, FT_TEXT, FF_CREATE | FF_WO | FF_VIRTUAL, .min = 40, .max = 40 },
        { "user", NULL, FT_TEXT, FF_CREATE | FF_WO | FF_VIRTUAL, .max = 254 },
        { "password", NULL, FT_TEXT, FF_CREATE | FF_WO | FF_VIRTUAL, .max = 256 },
        { "user_id", "user_id", FT_TEXT, FF_RO },
        { "email", NULL, FT_TEXT, FF_RO, .expr = "u.email" },
        { "resource_policy", "resource_policy", FT_TEXT, 0, .max = 64, .ref = ADMIN_SQL_POLICY },
        { "is_active", "is_active", FT_BOOL },
        { "is_main", "is_main", FT_BOOL },
        { "rate_limit", "rate_limit", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "created_at", "created_at", FT_TIME, FF_RO },
        { "last_used", "last_used", FT_TIME, FF_RO },
        { "num_queries", "num_queries", FT_INT, FF_RO },
        {},
};

static const struct filter keypair_filters[] = {
        { "user", " AND u.email = ?" },
        { "domain", " AND u.domain_name = ?" },
        { "is_active", " AND k.is_active = ?", FT_BOOL },
        {},
};

static const struct in_use keypair_in_use[] = {
        { "SELECT 1 FROM keypairs WHERE access_key = ? AND is_main = 1",
          "is its user's main keypair; make another keypair main first" },
        { "SELECT 1 FROM sessions WHERE access_key = ? AND " ADMIN_LIVE_SESSIONS " LIMIT 1",
          "has sessions that are not terminated" },
        {},
};

/* Admins may not touch the keypairs of a superadmin. */
static int check_owner_role(struct api_ctx *c, const char *role, struct tess_error **err)
{
        if (c->who.role != ROLE_SUPERADMIN && streq(role, "superadmin"))
                return tess_err(err, EACCES, "only a superadmin may manage the keypairs of a superadmin");
        return 0;
}

static int keypair_check_write(struct api_ctx *c, const struct db_rows *rows, int row, const struct admin_values *v,
                               struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *owner = NULL;

        if (c->who.role == ROLE_USER) {
                if (v && (admin_value_given(v, "resource_policy") || admin_value_given(v, "rate_limit")))
                        return tess_err(err, EACCES, "only admins may set 'resource_policy' or 'rate_limit'");
                return 0;
        }
        if (!rows)
                return 0; /* create: checked once the owner is known */
        int r = DBQ(c->m->db, "SELECT role FROM users WHERE id = ?", &owner, err,
                    DB_TEXT(admin_row_get(&admin_keypairs, rows, row, "user_id")));
        if (r < 0)
                return r;
        return owner->nrows ? check_owner_role(c, db_get(owner, 0, 0), err) : 0;
}

/* The owner of a new keypair: the caller, or the user `email` it sees. */
static int keypair_owner(struct api_ctx *c, const char *email, char *ret_id, size_t n, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *u = NULL;

        if (!email || streq(email, c->who.email)) {
                snprintf(ret_id, n, "%s", c->who.user_id);
                return 0;
        }
        if (c->who.role == ROLE_USER)
                return tess_err(err, EACCES, "users may create keypairs only for themselves");
        int r = DBQ(c->m->db, "SELECT id, role, domain_name FROM users WHERE email = ?", &u, err, DB_TEXT(email));
        if (r < 0)
                return r;
        if (u->nrows == 0 || !api_sees_domain(c, db_get(u, 0, 2)))
                return tess_err(err, EINVAL, "user '%s' does not exist", email);
        snprintf(ret_id, n, "%s", db_get(u, 0, 0));
        return check_owner_role(c, db_get(u, 0, 1), err);
}

/* A user's own keypair: allowed by its policy, confirmed with its
 * password, keys generated. */
static int check_self_service(struct api_ctx *c, const struct admin_values *v, const struct db_rows *pol,
                              struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *u = NULL;
        const char *password = admin_value_text(v, "password");

        if (!db_get_int(pol, 0, "allow_user_keypairs"))
                return tess_err(err, EACCES, "resource policy '%s' lets only admins create keypairs: ask one",
                                c->who.resource_policy);
        if (admin_value_given(v, "access_key") || admin_value_given(v, "secret_key"))
                return tess_err(err, EACCES, "only admins may choose a keypair's keys: leave them out");
        if (!password)
                return tess_err(err, EACCES, "creating a keypair needs your password ('password')");
        int r = DBQ(c->m->db, "SELECT password_hash FROM users WHERE id = ?", &u, err, DB_TEXT(c->who.user_id));
        if (r < 0)
                return r;
        if (u->nrows == 0 || !password_verify(password, db_get(u, 0, 0)))
                return tess_err(err, EACCES, "the password is wrong");
        return 0;
}

/* The new keypair's policy lets its user hold one more. */
static int check_keypair_count(struct api_ctx *c, const char *user_id, const char *policy,
                               const struct db_rows *pol, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *n = NULL;
        int64_t most = db_get_int(pol, 0, "max_keypairs_per_user");

        if (most <= 0)
                return 0;
        int r = DBQ(c->m->db, "SELECT COUNT(*) AS n FROM keypairs WHERE user_id = ?", &n, err, DB_TEXT(user_id));
        if (r < 0)
                return r;
        if (db_get_int(n, 0, "n") >= most)
                return tess_err(err, EACCES,
                                "the user has %lld keypairs, the most resource policy '%s' allows"
                                " (max_keypairs_per_user): delete one first",
                                (long long)db_get_int(n, 0, "n"), policy);
        return 0;
}

static int keypair_create(struct api_ctx *c, const struct admin_values *v, char *ret_pk, size_t pk_len,
                          json_t *extra, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *pol = NULL;
        const char *policy = admin_value_text(v, "resource_policy");
        const json_t *active = admin_value(v, "is_active"), *rate = admin_value(v, "rate_limit");
        char user_id[40], ak[21], sk[41];
        int r;

        r = keypair_owner(c, admin_value_text(v, "user"), user_id, sizeof(user_id), err);
        if (r < 0)
                return r;
        if (c->who.role == ROLE_USER)
                policy = c->who.resource_policy;
        if (!policy)
                policy = "default";
        r = DBQ(c->m->db,
                "SELECT max_keypairs_per_user, allow_user_keypairs FROM keypair_resource_policies WHERE name = ?",
                &pol, err, DB_TEXT(policy));
        if (r < 0)
                return r;
        if (pol->nrows == 0)
                return tess_err(err, EINVAL, "resource policy '%s' does not exist", policy);
        if (c->who.role == ROLE_USER && (r = check_self_service(c, v, pol, err)) < 0)
                return r;
        if ((r = check_keypair_count(c, user_id, policy, pol, err)) < 0)
                return r;
        r = model_create_keypair(c->m, user_id, policy, json_is_true(admin_value(v, "is_main")),
                                 admin_value_text(v, "access_key"), admin_value_text(v, "secret_key"), ak, sk, err);
        if (r < 0)
                return r;
        r = DBQ(c->m->db,
                "UPDATE keypairs SET is_active = ?, rate_limit = COALESCE(?, rate_limit) WHERE access_key = ?", NULL,
                err, DB_BOOL(!active || json_is_true(active)),
                rate ? DB_INT(json_integer_value(rate))
                     : (c->who.role == ROLE_USER ? DB_INT(c->who.rate_limit) : DB_NULLARG),
                DB_TEXT(ak));
        if (r < 0)
                return r;
        json_object_set_new(extra, "secret_key", json_string(sk));
        snprintf(ret_pk, pk_len, "%s", ak);
        return 0;
}

static int keypair_after_write(struct api_ctx *c, const char *pk, const struct admin_values *v,
                               struct tess_error **err)
{
        if (!json_is_true(admin_value(v, "is_main")))
                return 0;
        int r = DBQ(c->m->db,
                    "UPDATE keypairs SET is_main = 0 WHERE access_key <> ? AND user_id ="
                    " (SELECT user_id FROM keypairs WHERE access_key = ?)",
                    NULL, err, DB_TEXT(pk), DB_TEXT(pk));
        return r < 0 ? r : 0;
}

const struct entity admin_keypairs = {
        .path = "/admin/keypairs",
        .noun = "keypair",
        .table = "keypairs",
        .alias = "k",
        .from = "keypairs k JOIN users u ON u.id = k.user_id",
        .pk = "access_key",
        .key = "access_key",
        .label = "access_key",
        .order = "u.email, k.created_at, k.access_key",
        .fields = keypair_fields,
        .filters = keypair_filters,
        .in_use = keypair_in_use,
        .domain_scope = "u.domain_name = ? AND u.role <> 'superadmin'",
        .user_scope = "k.user_id = ?",
        .create_roles = ROLES_ADMINS | ROLE_BIT(ROLE_USER),
        .update_roles = ROLES_ADMINS,
        .delete_roles = ROLES_ADMINS | ROLE_BIT(ROLE_USER),
        .check_write = keypair_check_write,
        .create = keypair_create,
        .after_write = keypair_after_write,
};

/* ---- keypair resource policies ---- */

static const struct field policy_fields[] = {
        { "name", "name", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 64, .valid = api_valid_name,
          .hint = ADMIN_NAME_HINT },
        { "total_resource_slots", "total_resource_slots", FT_SLOTS },
        { "max_concurrent_sessions", "max_concurrent_sessions", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "max_pending_session_count", "max_pending_session_count", FT_INT, FF_NULL, .min = 0, .max = INT64_MAX },
        { "max_pending_session_resource_slots", "max_pending_session_resource_slots", FT_SLOTS, FF_NULL },
        { "max_containers_per_session", "max_containers_per_session", FT_INT, 0, .min = 1, .max = INT64_MAX },
        { "idle_timeout", "idle_timeout", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "max_session_lifetime", "max_session_lifetime", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "allowed_vfolder_hosts", "allowed_vfolder_hosts", FT_OBJECT, .check = vf_allowed_hosts_check },
        { "max_vfolder_count", "max_vfolder_count", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "max_customized_image_count", "max_customized_image_count", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "max_quota_scope_size", "max_quota_scope_size", FT_SIZE },
        { "max_keypairs_per_user", "max_keypairs_per_user", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "allow_user_keypairs", "allow_user_keypairs", FT_BOOL },
        { "max_session_priority", "max_session_priority", FT_INT, 0, .min = 0, .max = 100 },
        { "max_container_disk", "max_container_disk", FT_SIZE, 0, .min = CONTAINER_DISK_MIN },
        { "created_at", "created_at", FT_TIME, FF_RO },
        {},
};

static const struct filter policy_filters[] = {
        { "name", " AND r.name = ?" },
        {},
};

static const struct in_use policy_in_use[] = {
        { "SELECT 1 FROM keypairs WHERE resource_policy = ? LIMIT 1", "is used by keypairs" },
        {},
};

const struct entity admin_policies = {
        .path = "/admin/keypair-policies",
        .noun = "keypair resource policy",
        .table = "keypair_resource_policies",
        .alias = "r",
        .pk = "name",
        .key = "name",
        .label = "name",
        .order = "r.name",
        .fields = policy_fields,
        .filters = policy_filters,
        .in_use = policy_in_use,
        .create_roles = ROLES_SUPER,
        .update_roles = ROLES_SUPER,
        .delete_roles = ROLES_SUPER,
        .created_at = true,
};
