/* admin_catalog.c - /admin/images, /admin/agents and /admin/audit-log:
 * what the cluster runs, what it runs on, and who did what. */
#include "common/compat.h"

#include <ctype.h>

#include "common/slots.h"
#include "manager/admin/admin-internal.h"
#include "manager/core/manager.h"
#include "manager/http/http.h"
#include "manager/usage/usage.h"

/* "registry.local:5000/stable/python": no ':' after the last '/'. */
static bool image_name_ok(const char *s)
{
        const char *slash = strrchr(s, '/'), *colon = strrchr(s, ':');

        if (!isalnum((unsigned char)*s) || (colon && (!slash || colon > slash)) || s[strlen(s) - 1] == '/')
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && !strchr("._-/:", *s))
                        return false;
        return true;
}

static bool tag_ok(const char *s)
{
        if (!isalnum((unsigned char)*s) && *s != '_')
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
                        return false;
        return true;
}

static int labels_check(const json_t *v, struct tess_error **err)
{
        const char *key;
        json_t *x;

        json_object_foreach((json_t *)v, key, x) {
                if (!json_is_string(x))
                        return tess_err(err, EINVAL, "'labels.%.64s' must be a string", key);
        }
        return 0;
}

static const struct field image_fields[] = {
        { "id", "id", FT_TEXT, FF_RO },
        { "name", "name", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 512, .valid = image_name_ok,
          .hint = "must be an image name like 'registry.local/stable/python' (letters, digits, '.', '_', '-', '/')" },
        { "tag", "tag", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 128, .valid = tag_ok,
          .hint = "must be letters, digits, '.', '_' or '-', not starting with '.' or '-'" },
        { "architecture", "architecture", FT_TEXT, FF_CREATE, .max = 32, .valid = api_valid_name,
          .hint = "must be an architecture name like x86_64 or aarch64" },
        { "registry", "registry", FT_TEXT, 0, .max = 512 },
        { "digest", "digest", FT_TEXT, 0, .max = 256 },
        { "labels", "labels", FT_OBJECT, .check = labels_check },
        { "min_resources", "min_resources", FT_SLOTS },
        { "max_resources", "max_resources", FT_SLOTS },
        { "size_bytes", "size_bytes", FT_INT, 0, .min = 0, .max = INT64_MAX },
        { "hidden", "hidden", FT_BOOL },            /* hidden: not listed to users, refused at session create */
        { "owner_id", "owner_id", FT_TEXT, FF_RO }, /* a private image's owner (session commit); null: public */
        { "owner", NULL, FT_TEXT, FF_RO, .expr = "(SELECT u.email FROM users u WHERE u.id = i.owner_id)" },
        { "created_at", "created_at", FT_TIME, FF_RO },
        {},
};

static const struct filter image_filters[] = {
        { "name", " AND i.name = ?" },
        { "architecture", " AND i.architecture = ?" },
        { "registry", " AND i.registry = ?" },
        { "owner_id", " AND i.owner_id = ?" },
        { "private", " AND ((i.owner_id IS NOT NULL) = (? = 'true'))" },
        {},
};

/* An id, or "name:tag" (with ?architecture= where several match). */
static int image_key(struct api_ctx *c, const char *key, struct buf *where, struct db_arg *args, int *nargs,
                     struct tess_error **err UNUSED)
{
        const char *slash = strrchr(key, '/'), *colon = strrchr(key, ':');
        const char *arch = http_query(c->req, "architecture");

        admin_where(where, args, nargs, "i.id = ?", DB_TEXT(key));
        if (!colon || (slash && colon < slash))
                return 0;
        admin_where(where, args, nargs, " OR (i.name || ':' || i.tag = ?", DB_TEXT(key));
        if (arch)
                admin_where(where, args, nargs, " AND i.architecture = ?", DB_TEXT(arch));
        buf_puts(where, ")");
        return 0;
}

/* One reference, one image: "registry/name:tag" names the same image
 * whether the registry is a column of its own or the start of the name
 * (session_image.c resolves both), so a second image that a reference
 * would also name is refused. */
static int image_check_write(struct api_ctx *c, const struct db_rows *rows, int row UNUSED,
                             const struct admin_values *v, struct tess_error **err)
{
        if (rows || !v) /* changes keep name, tag and architecture (FF_CREATE) */
                return 0;
        const char *name = admin_value_text(v, "name"), *registry = admin_value_text(v, "registry"),
                   *tag = admin_value_text(v, "tag"), *arch = admin_value_text(v, "architecture");
        _cleanup_free_ char *ref =
                xasprintf("%s%s%s", registry && *registry ? registry : "", registry && *registry ? "/" : "", name);
        _cleanup_rows_ struct db_rows *same = NULL;
        int r = DBQ(c->m->db,
                    "SELECT id FROM images WHERE tag = ? AND architecture = ? AND"
                    " (CASE WHEN registry <> '' THEN registry || '/' || name ELSE name END) = ?",
                    &same, err, DB_TEXT(tag), DB_TEXT(arch ? arch : "x86_64"), DB_TEXT(ref));
        if (r < 0)
                return r;
        if (same->nrows > 0)
                return tess_err(err, EEXIST, "image '%s:%s' (%s) is already registered as %s", ref, tag,
                                arch ? arch : "x86_64", db_get(same, 0, 0));
        return 0;
}

const struct entity admin_images = {
        .path = "/admin/images",
        .noun = "image",
        .table = "images",
        .alias = "i",
        .pk = "id",
        .label = "id",
        .order = "i.name, i.tag, i.architecture",
        .conflict = "an image of that name, tag and architecture already exists",
        .fields = image_fields,
        .filters = image_filters,
        .create_roles = ROLES_SUPER,
        .update_roles = ROLES_SUPER,
        .delete_roles = ROLES_SUPER,
        .gen_id = true,
        .created_at = true,
        .key_filter = image_key,
        .check_write = image_check_write,
        /* domain admins: public images, and the private ones of their domain's users, not a
         * superadmin's (api/authz.h) */
        .domain_scope = "(i.owner_id IS NULL OR EXISTS (SELECT 1 FROM users ou WHERE ou.id = i.owner_id"
                        " AND ou.domain_name = ? AND ou.role <> 'superadmin'))",
};

/* ---- agents: they register themselves; admins move and forget them ---- */

static const struct field agent_fields[] = {
        { "id", "id", FT_TEXT, FF_RO },
        { "address", "address", FT_TEXT, FF_RO },
        { "status", "status", FT_TEXT, FF_RO },
        { "resource_group", "resource_group", FT_TEXT, 0, .max = 64, .ref = ADMIN_SQL_RGROUP },
        { "schedulable", "schedulable", FT_BOOL },
        { "available_slots", "available_slots", FT_SLOTS, FF_RO },
        { "occupied_slots", "occupied_slots", FT_SLOTS, FF_RO },
        /* the GPUs it reported, a list of {id, slot, capacity, model, memory}; + occupied (agent_devices) */
        { "devices", "devices", FT_OBJECT, FF_RO },
        { "architecture", "architecture", FT_TEXT, FF_RO },
        { "version", "version", FT_TEXT, FF_RO },
        { "first_contact", "first_contact", FT_TIME, FF_RO },
        { "last_heartbeat", "last_heartbeat", FT_TIME, FF_RO },
        /* the seconds between heartbeats it promised; silent for three: UNREACHABLE */
        { "heartbeat_interval", NULL, FT_INT, FF_RO, .expr = "a.heartbeat_interval / 1000000" },
        { "unreachable_since", "unreachable_since", FT_TIME, FF_RO },
        { "lost_at", "lost_at", FT_TIME, FF_RO },
        {},
};

static const struct filter agent_filters[] = {
        { "id", " AND a.id = ?" },
        { "status", " AND a.status = ?" },
        { "resource_group", " AND a.resource_group = ?" },
        {},
};

static const struct in_use agent_in_use[] = {
        { "SELECT 1 FROM agents WHERE id = ? AND status <> 'LOST'", "is not LOST; only lost agents can be forgotten" },
        {},
};

/* What the live kernels on the agent hold of each of its devices, as each
 * device's "occupied" (a decimal string of its slot, like "capacity"). */
static int agent_devices(struct api_ctx *c, const struct db_rows *rows, int row, json_t *obj, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *kernels = NULL;
        json_t *devices = json_object_get(obj, "devices"), *dev;
        int64_t occupied[64] = { 0 };
        size_t d;
        int r;

        if (!json_is_array(devices) || json_array_size(devices) == 0)
                return 0;
        r = DBQ(c->m->db, "SELECT device_alloc FROM kernels WHERE agent_id = ? AND status IN " USAGE_OCCUPYING_STATUSES,
                &kernels, err, DB_TEXT(admin_row_get(&admin_agents, rows, row, "_pk")));
        if (r < 0)
                return r;
        for (int k = 0; k < kernels->nrows; k++) {
                json_t *alloc = json_loads(db_get(kernels, k, 0), 0, NULL);
                json_array_foreach(devices, d, dev) {
                        const json_t *amount = json_object_get(alloc, json_string_value(json_object_get(dev, "id")));
                        const char *slot = json_string_value(json_object_get(dev, "slot"));
                        int64_t q = 0;
                        if (d < ARRAY_SIZE(occupied) && amount &&
                            slot_parse_value(slot ? slot : "cuda.shares", amount, &q, NULL) == 0)
                                occupied[d] += q;
                }
                json_decref(alloc);
        }
        json_array_foreach(devices, d, dev) {
                const char *slot = json_string_value(json_object_get(dev, "slot"));
                char text[64];
                slot_format(slot ? slot : "cuda.shares", d < ARRAY_SIZE(occupied) ? occupied[d] : 0, text,
                            sizeof(text));
                json_object_set_new(dev, "occupied", json_string(text));
        }
        return 0;
}

const struct entity admin_agents = {
        .path = "/admin/agents",
        .noun = "agent",
        .table = "agents",
        .alias = "a",
        .pk = "id",
        .key = "id",
        .label = "id",
        .order = "a.id",
        .fields = agent_fields,
        .filters = agent_filters,
        .in_use = agent_in_use,
        .update_roles = ROLES_SUPER,
        .delete_roles = ROLES_SUPER,
        .decorate = agent_devices,
};

/* ---- the audit log (written by audit.c), read-only ---- */

static const struct field audit_fields[] = {
        { "id", "id", FT_TEXT, FF_RO },
        { "ts", "ts", FT_TIME, FF_RO },
        { "access_key", "access_key", FT_TEXT, FF_RO },
        { "user_email", NULL, FT_TEXT, FF_RO, .expr = "u.email" },
        { "remote_addr", "remote_addr", FT_TEXT, FF_RO },
        { "method", "method", FT_TEXT, FF_RO },
        { "path", "path", FT_TEXT, FF_RO },
        { "action", "action", FT_TEXT, FF_RO },
        { "target", "target", FT_TEXT, FF_RO },
        { "status", "status", FT_INT, FF_RO },
        {},
};

static const struct filter audit_filters[] = {
        { "user", " AND u.email = ?" },
        { "since", " AND a.ts >= ?", FT_TIME },
        { "until", " AND a.ts < ?", FT_TIME },
        { "action", " AND a.action = ?" },
        {},
};

const struct entity admin_audit = {
        .path = "/admin/audit-log",
        .noun = "audit log entry",
        .table = "audit_log",
        .alias = "a",
        .from = "audit_log a LEFT JOIN users u ON u.id = a.user_id",
        .pk = "id",
        .key = "id",
        .label = "id",
        .order = "a.ts DESC, a.id DESC",
        .fields = audit_fields,
        .filters = audit_filters,
        .domain_scope = "u.domain_name = ? AND u.role <> 'superadmin'",
};
