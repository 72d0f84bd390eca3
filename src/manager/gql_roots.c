/* gql_roots.c - the query root fields of POST /admin/gql (gql_roots.h). */
#include "common/compat.h"

#include <ctype.h>
#include <sys/statvfs.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/timeutil.h"
#include "manager/admin/admin.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/gql_roots.h"
#include "manager/images/api_images.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session_list.h"
#include "manager/usage/usage.h"
#include "manager/vfolder/api_vfolder.h"
#include "manager/vfolder/vfolder.h"

#define PAGE_MAX 100 /* Backend.AI's clients ask for at most 100 a page */

/* ---- arguments ---- */

static const char *arg_string(const struct gql_field *f, const char *name)
{
        return json_string_value(json_object_get(f->args, name));
}

/* An Int argument in [min, max], def when absent or null. */
static int arg_int(const struct gql_field *f, const char *name, int64_t min, int64_t max, int64_t def, int64_t *ret,
                   struct tess_error **err)
{
        json_t *v = json_object_get(f->args, name);
        if (!v || json_is_null(v)) {
                *ret = def;
                return 0;
        }
        if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
                return tess_err(err, EINVAL, "%s(%s:): an Int from %lld to %lld", f->name, name, (long long)min,
                                (long long)max);
        *ret = json_integer_value(v);
        return 0;
}

static int page_args(const struct gql_field *f, int64_t *limit, int64_t *offset, struct tess_error **err)
{
        if (arg_int(f, "limit", 1, PAGE_MAX, PAGE_MAX, limit, err) < 0 ||
            arg_int(f, "offset", 0, INT32_MAX, 0, offset, err) < 0)
                return -EINVAL;
        return 0;
}

/* Backend.AI's filter and order arguments are expressions of its own
 * query language, which is not served: refused rather than ignored, so
 * that nobody takes a whole list for the part asked. */
static int no_filter_order(const struct gql_field *f, struct tess_error **err)
{
        static const char *const names[] = { "filter", "order" };
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (arg_string(f, names[i]))
                        return tess_err(err, EINVAL, "%s(%s:): Backend.AI's query expressions are not served", f->name,
                                        names[i]);
        return 0;
}

/* ---- values ---- */

static json_t *iso_or_null(const char *usec)
{
        char buf[48];
        return usec && *usec ? json_string(time_format_iso(strtoll(usec, NULL, 10), buf, sizeof(buf))) : json_null();
}

/* Seconds since the epoch (GET /folders' times) as Backend.AI's DateTime. */
static json_t *iso_of_seconds(const json_t *v)
{
        char buf[48];
        return json_is_integer(v) ? json_string(time_format_iso(json_integer_value(v) * USEC_PER_SEC, buf, sizeof(buf)))
                                  : json_null();
}

/* A JSON value as Backend.AI's JSONString fields carry it: its text. */
static json_t *json_text_of(const json_t *v)
{
        char *text = v && !json_is_null(v) ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        json_t *s = text ? json_string(text) : json_null();
        free(text);
        return s;
}

/* s in upper (or lower) case, as Backend.AI's enums are written. */
static json_t *with_case(const char *s, int (*to)(int))
{
        char buf[64];
        size_t i = 0;
        for (; s && s[i] && i < sizeof(buf) - 1; i++)
                buf[i] = (char)to((unsigned char)s[i]);
        buf[i] = '\0';
        return s ? json_string(buf) : json_null();
}

static json_t *upper(const char *s)
{
        return with_case(s, toupper);
}

/* ---- keypair ---- */

static int resolve_keypair(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *ak = arg_string(f, "access_key");
        _cleanup_rows_ struct db_rows *rows = NULL;
        _cleanup_free_ char *secret = NULL;

        if (ak && !streq(ak, c->who.access_key))
                return tess_err(err, EACCES,
                                "keypair(access_key:): only your own keypair here; admins see others at "
                                "GET /admin/keypairs");
        if (DBQ(c->m->db,
                "SELECT k.access_key, k.secret_key_sealed, k.is_active, k.resource_policy, k.rate_limit,"
                " k.num_queries, k.last_used, k.created_at, u.email, u.id AS uid, u.role, u.full_name,"
                " (SELECT COUNT(*) FROM sessions s WHERE s.access_key = k.access_key AND s.status NOT IN"
                " ('TERMINATED', 'CANCELLED', 'ERROR')) AS concurrency_used"
                " FROM keypairs k JOIN users u ON u.id = k.user_id WHERE k.access_key = ?",
                &rows, err, DB_TEXT(c->who.access_key)) < 0)
                return -1;
        if (rows->nrows == 0)
                return tess_err(err, ENOENT, "keypair: yours is gone");
        /* the secret only to a request signed with it (a browser's login never sees it) */
        if (!c->web_login[0] && secret_open(c->m->master_key, db_getn(rows, 0, "secret_key_sealed"), &secret, err) < 0)
                return -1;
        const char *role = db_getn(rows, 0, "role");
        *ret = json_pack(
                "{s:s, s:s, s:s, s:o, s:s, s:o, s:b, s:b, s:o, s:o, s:o, s:s, s:I, s:I, s:I, s:n, s:n,"
                " s:{s:s, s:s, s:s?}}",
                "__typename", "KeyPair", "user_id", db_getn(rows, 0, "email"), "user", db_getn(rows, 0, "uid"),
                "access_key", json_string(db_getn(rows, 0, "access_key")), "full_name", "", "secret_key",
                secret ? json_string(secret) : json_null(), "is_active", db_get_int(rows, 0, "is_active") != 0,
                "is_admin", streq(role, "admin") || streq(role, "superadmin"), "created_at",
                iso_or_null(db_getn(rows, 0, "created_at")), "modified_at", iso_or_null(db_getn(rows, 0, "created_at")),
                "last_used", iso_or_null(db_getn(rows, 0, "last_used")), "resource_policy",
                db_getn(rows, 0, "resource_policy"), "rate_limit", (json_int_t)db_get_int(rows, 0, "rate_limit"),
                "num_queries", (json_int_t)db_get_int(rows, 0, "num_queries"), "concurrency_used",
                (json_int_t)db_get_int(rows, 0, "concurrency_used"), "ssh_public_key", "dotfiles", "user_info",
                "__typename", "UserInfo", "email", db_getn(rows, 0, "email"), "full_name",
                db_getn(rows, 0, "full_name"));
        json_object_set_new(*ret, "full_name", json_string(db_getn(rows, 0, "full_name") ?: ""));
        return 0;
}

/* ---- sessions ---- */

/* A JSON text column as its value (null when it does not parse). */
static json_t *json_column(const char *text)
{
        json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
        return v ? v : json_null();
}

/* The session's kernels as ComputeContainer objects. */
#define KERNEL_COLUMNS                                                                                        \
        "SELECT id, session_id, cluster_role, cluster_idx, cluster_hostname, agent_id, status, status_info,"   \
        " status_data, status_history, image, occupied_slots, container_id FROM kernels"

/* Whether list (of strings) holds s. */
static bool in_json_list(const json_t *list, const char *s)
{
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v)
                if (streq(json_string_value(v) ?: "", s))
                        return true;
        return false;
}

/* Row i of KERNEL_COLUMNS as a ComputeContainer. */
static json_t *compute_container(const struct db_rows *k, int i)
{
        const char *status = db_getn(k, i, "status");
        json_t *history = json_column(db_getn(k, i, "status_history"));
        json_t *o = json_pack(
                "{s:s, s:s, s:s, s:s?, s:I, s:s?, s:s?, s:s, s:s?, s:o, s:O?, s:s, s:s, s:o, s:n, s:n, s:n,"
                " s:s?}",
                "__typename", "ComputeContainer", "id", db_getn(k, i, "id"), "session_id", db_getn(k, i, "session_id"),
                "cluster_role", db_getn(k, i, "cluster_role"), "cluster_idx", (json_int_t)db_get_int(k, i, "cluster_idx"),
                "cluster_hostname", db_getn(k, i, "cluster_hostname"), "agent", db_getn(k, i, "agent_id"), "status",
                status, "status_info", db_getn(k, i, "status_info"), "status_data",
                json_string(db_getn(k, i, "status_data")), "status_changed", json_object_get(history, status), "image",
                db_getn(k, i, "image"), "registry", "", "occupied_slots", json_string(db_getn(k, i, "occupied_slots")),
                "resource_opts", "live_stat", "last_stat", "container_id", db_getn(k, i, "container_id"));
        json_object_set(o, "role", json_object_get(o, "cluster_role"));
        json_object_set(o, "idx", json_object_get(o, "cluster_idx"));
        json_object_set_new(o, "preopen_ports", json_null());
        json_decref(history);
        return o;
}

/* `head` IN (?, ...) `tail` with the n keys: the rows of many objects in
 * one query (*ret NULL when n is 0). */
static int query_in(struct api_ctx *c, const char *head, const char *const *keys, int n, const char *tail,
                    struct db_rows **ret, struct tess_error **err)
{
        _cleanup_(buf_release) struct buf q = BUF_INIT;
        struct db_arg *args = xcalloc((size_t)n + 1, sizeof(*args));

        *ret = NULL;
        buf_printf(&q, "%s IN (", head);
        for (int i = 0; i < n; i++) {
                buf_puts(&q, i ? ", ?" : "?");
                args[i] = DB_TEXT(keys[i]);
        }
        buf_printf(&q, ")%s", tail);
        int r = n ? db_query(c->m->db, q.data, args, n, ret, err) : 0;
        free(args);
        return r < 0 ? r : 0;
}

/* The containers of the sessions of rows (their "id" column), in one
 * query: *ret maps each session id to its list, by cluster_idx. */
static int sessions_containers(struct api_ctx *c, const struct db_rows *sessions, json_t **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *k = NULL;
        const char **ids = xcalloc((size_t)sessions->nrows + 1, sizeof(*ids));

        *ret = json_object();
        for (int i = 0; i < sessions->nrows; i++) {
                ids[i] = db_getn(sessions, i, "id");
                json_object_set_new(*ret, ids[i], json_array());
        }
        int r = query_in(c, KERNEL_COLUMNS " WHERE session_id", ids, sessions->nrows, " ORDER BY session_id, cluster_idx",
                         &k, err);
        free(ids);
        if (r < 0) {
                *ret = (json_decref(*ret), NULL);
                return r;
        }
        for (int i = 0; k && i < k->nrows; i++)
                json_array_append_new(json_object_get(*ret, db_getn(k, i, "session_id")), compute_container(k, i));
        return 0;
}

/* A session (session_info_json()'s object) as Backend.AI's ComputeSession. */
static json_t *compute_session(const json_t *s, json_t *containers)
{
        const char *status = json_string_value(json_object_get(s, "status"));
        json_t *history = json_object_get(s, "statusHistory");
        json_t *o = json_pack(
                "{s:s, s:O, s:O, s:O, s:O, s:o, s:O, s:O, s:O, s:O, s:n, s:s, s:O, s:O, s:O, s:O,"
                " s:O, s:O, s:O, s:O, s:s?, s:O, s:o, s:O, s:O, s:O, s:n, s:o, s:O, s:O, s:o,"
                " s:o, s:o, s:o, s:O, s:o, s:[]}",
                "__typename", "ComputeSession", "id", json_object_get(s, "sessionId"), "session_id",
                json_object_get(s, "sessionId"), "name", json_object_get(s, "sessionName"), "tag",
                json_object_get(s, "tag"), "type", upper(json_string_value(json_object_get(s, "type"))), "image",
                json_object_get(s, "image"), "architecture", json_object_get(s, "architecture"), "registry",
                json_object_get(s, "registry"), "cluster_size", json_object_get(s, "clusterSize"), "cluster_template",
                "cluster_mode", "single-node", "domain_name", json_object_get(s, "domainName"), "group_id",
                json_object_get(s, "groupId"), "group_name", json_object_get(s, "groupName"), "user_id",
                json_object_get(s, "userId"), "user_email", json_object_get(s, "userEmail"), "access_key",
                json_object_get(s, "ownerAccessKey"), "created_user_id", json_object_get(s, "userId"),
                "created_user_email", json_object_get(s, "userEmail"), "status", status, "status_info",
                json_object_get(s, "statusInfo"), "status_data", json_text_of(json_object_get(s, "statusData")),
                "status_changed", json_object_get(history, status ? status : ""), "created_at",
                json_object_get(s, "creationTime"), "terminated_at", json_object_get(s, "terminationTime"), "starts_at",
                "result", upper(json_string_value(json_object_get(s, "result"))), "scaling_group",
                json_object_get(s, "resourceGroup"), "num_queries", json_object_get(s, "numQueriesExecuted"),
                "occupied_slots", json_text_of(json_object_get(s, "occupiedSlots")), "occupying_slots",
                json_text_of(json_object_get(s, "occupyingSlots")), "requested_slots",
                json_text_of(json_object_get(s, "requestedSlots")), "resource_opts",
                json_text_of(json_object_get(s, "resourceOpts")), "mounts", json_object_get(s, "mounts"), "containers",
                containers ? containers : json_array(), "dependencies");
        if (!json_object_get(o, "status_changed"))
                json_object_set_new(o, "status_changed", json_null());
        json_object_set_new(o, "startup_command", json_null());
        json_object_set_new(o, "service_ports", json_null());
        /* what 23.09's and 24.03's clients ask too */
        json_t *scheduled = json_object_get(history, "SCHEDULED"), *agents = json_array(), *k;
        size_t i;
        json_object_set_new(o, "main_kernel_id", json_null());
        json_array_foreach(json_object_get(o, "containers"), i, k) {
                const char *agent = json_string_value(json_object_get(k, "agent"));
                if (streq(json_string_value(json_object_get(k, "cluster_role")) ?: "", "main"))
                        json_object_set(o, "main_kernel_id", json_object_get(k, "id"));
                if (agent && !in_json_list(agents, agent))
                        json_array_append_new(agents, json_string(agent));
        }
        json_object_set_new(o, "agent_ids", agents);
        json_object_set_new(o, "scheduled_at", scheduled ? json_incref(scheduled) : json_null());
        json_object_set_new(o, "idle_checks", json_null());
        json_object_set_new(o, "abusing_reports", json_array());
        json_object_set_new(o, "vfolder_mounts", json_null());
        return o;
}

/* Backend.AI's statuses that no Tessera session is ever in (its CLI
 * lists them in every `ps`): they match nothing, as they would there. */
static const char *const never_statuses[] = { "BUILDING", "RESTARTING",       "RESIZING", "SUSPENDED",
                                              "PREPARED", "RUNNING_DEGRADED", NULL };

/* list without never_statuses' names (caller frees); "" when nothing is left. */
static char *statuses_tessera_has(const char *list)
{
        struct buf b = BUF_INIT;
        for (const char *p = list; *p;) {
                size_t n = strcspn(p, ",");
                bool never = false;
                for (const char *const *x = never_statuses; *x; x++)
                        never = never || (strlen(*x) == n && strncmp(*x, p, n) == 0);
                if (!never && n)
                        buf_printf(&b, "%s%.*s", b.len ? "," : "", (int)n, p);
                p += n + (p[n] == ',');
        }
        return b.len ? buf_detach(&b, NULL) : (buf_release(&b), xstrdup(""));
}

static int empty_session_list(json_t **ret)
{
        *ret = json_pack("{s:s, s:[], s:i}", "__typename", "ComputeSessionList", "items", "total_count", 0);
        return 0;
}

static int resolve_session_list(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *group_id = arg_string(f, "group_id");
        _cleanup_rows_ struct db_rows *project = NULL, *rows = NULL, *count = NULL;
        struct session_list_params p = {
                .who = &c->who,
                .status = arg_string(f, "status"),
                .owner = arg_string(f, "access_key"),
                .domain_name = arg_string(f, "domain_name"),
        };
        struct session_list_query q;

        if (page_args(f, &p.limit, &p.offset, err) < 0)
                return -EINVAL;
        _cleanup_free_ char *statuses = p.status ? statuses_tessera_has(p.status) : NULL;
        if (statuses && !*statuses) /* only statuses no session is in */
                return empty_session_list(ret);
        p.status = statuses;
        if (group_id) { /* Backend.AI names the project by id, GET /sessions by name */
                if (DBQ(c->m->db, "SELECT name FROM projects WHERE id = ?", &project, err, DB_TEXT(group_id)) < 0)
                        return -1;
                if (!project->nrows) /* no such project: none of its sessions */
                        return empty_session_list(ret);
                p.group = db_get(project, 0, 0);
        }
        if (session_list_build(&p, &q, err) < 0)
                return -EINVAL;
        int r = db_query(c->m->db, q.count_sql, q.args, q.count_nargs, &count, err);
        if (r >= 0)
                r = db_query(c->m->db, q.page_sql, q.args, q.nargs, &rows, err);
        session_list_release(&q);
        if (r < 0)
                return r;
        json_t *containers, *items = json_array();
        if (sessions_containers(c, rows, &containers, err) < 0) {
                json_decref(items);
                return -1;
        }
        for (int i = 0; i < rows->nrows; i++) {
                json_t *s = session_info_json(rows, i);
                json_array_append_new(items,
                                      compute_session(s, json_incref(json_object_get(containers, db_getn(rows, i, "id")))));
                json_decref(s);
        }
        json_decref(containers);
        *ret = json_pack("{s:s, s:o, s:I}", "__typename", "ComputeSessionList", "items", items, "total_count",
                         (json_int_t)strtoll(db_get(count, 0, 0), NULL, 10));
        return 0;
}

static int resolve_session(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *id = arg_string(f, "id");
        _cleanup_rows_ struct db_rows *rows = NULL;
        json_t *containers = NULL;

        if (!id)
                return tess_err(err, EINVAL, "compute_session(id:): the session's id is required");
        int r = api_find_session(c, id, NULL, false, &rows, err);
        if (r == -ENOENT) { /* none the caller may see: null, as Backend.AI answers */
                *err = tess_error_free(*err);
                *ret = json_null();
                return 0;
        }
        if (r < 0 || sessions_containers(c, rows, &containers, err) < 0)
                return -1;
        json_t *s = session_info_json(rows, 0);
        *ret = compute_session(s, json_incref(json_object_get(containers, db_getn(rows, 0, "id"))));
        json_decref(containers);
        json_decref(s);
        return 0;
}

/* ---- folders ---- */

/* Which of the caller's folders a list holds. */
enum vfolder_kind {
        VF_ALL,
        VF_OWN,     /* its own (user-owned, its) */
        VF_INVITED, /* user-owned, shared with it */
        VF_PROJECT, /* its projects' */
};

static bool vfolder_is(const json_t *v, enum vfolder_kind kind)
{
        bool user = streq(json_string_value(json_object_get(v, "ownership_type")) ?: "", "user");
        bool owner = json_is_true(json_object_get(v, "is_owner"));
        switch (kind) {
        case VF_ALL: return true;
        case VF_OWN: return user && owner;
        case VF_INVITED: return user && !owner;
        case VF_PROJECT: return !user;
        }
        return false;
}

static int vfolder_list_of(struct api_ctx *c, const struct gql_field *f, enum vfolder_kind kind, json_t **ret,
                           struct tess_error **err)
{
        const char *group_id = arg_string(f, "group_id");
        int64_t limit, offset;
        json_t *all = NULL, *v;
        size_t i;

        if (page_args(f, &limit, &offset, err) < 0)
                return -EINVAL;
        if (group_id && !uuid_valid(group_id))
                return tess_err(err, EINVAL, "vfolder_list(group_id:): a project id");
        if (no_filter_order(f, err) < 0 || vf_list(c, VF_STATUS_READY, false, group_id, &all, err) < 0)
                return -1;
        json_t *items = json_array();
        int64_t n = 0;
        json_array_foreach(all, i, v) {
                if (!vfolder_is(v, kind))
                        continue;
                n++;
                if (n - 1 < offset || n - 1 >= offset + limit)
                        continue;
                const char *type = json_string_value(json_object_get(v, "ownership_type"));
                json_array_append_new(
                        items,
                        json_pack("{s:s, s:O, s:O, s:O, s:O?, s:O?, s:O, s:n, s:O, s:O, s:O, s:n, s:n, s:o,"
                                  " s:n, s:n, s:n, s:O, s:O}",
                                  "__typename", "VirtualFolder", "id", json_object_get(v, "id"), "host",
                                  json_object_get(v, "host"), "name", json_object_get(v, "name"), "user",
                                  streq(type ? type : "", "user") ? json_object_get(v, "user") : NULL, "group",
                                  streq(type ? type : "", "project") ? json_object_get(v, "group") : NULL, "creator",
                                  json_object_get(v, "creator"), "unmanaged_path", "usage_mode",
                                  json_object_get(v, "usage_mode"), "permission", json_object_get(v, "permission"),
                                  "ownership_type", json_object_get(v, "ownership_type"), "max_files", "max_size",
                                  "created_at", iso_of_seconds(json_object_get(v, "created_at")), "last_used",
                                  "num_files", "cur_size", "cloneable", json_object_get(v, "cloneable"), "status",
                                  json_object_get(v, "status")));
        }
        *ret = json_pack("{s:s, s:o, s:I}", "__typename", "VirtualFolderList", "items", items, "total_count",
                         (json_int_t)n);
        json_decref(all);
        return 0;
}

/* vfolder_list and, as 23.09's client splits it, vfolder_own_list,
 * vfolder_invited_list and vfolder_project_list. */
static int resolve_vfolder_list(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        return vfolder_list_of(c, f, VF_ALL, ret, err);
}

static int resolve_vfolder_own_list(struct api_ctx *c, const struct gql_field *f, json_t **ret,
                                    struct tess_error **err)
{
        return vfolder_list_of(c, f, VF_OWN, ret, err);
}

static int resolve_vfolder_invited_list(struct api_ctx *c, const struct gql_field *f, json_t **ret,
                                        struct tess_error **err)
{
        return vfolder_list_of(c, f, VF_INVITED, ret, err);
}

static int resolve_vfolder_project_list(struct api_ctx *c, const struct gql_field *f, json_t **ret,
                                        struct tess_error **err)
{
        return vfolder_list_of(c, f, VF_PROJECT, ret, err);
}

/* vfolder_host_permissions: every permission a folder host may grant. */
static int resolve_host_permissions(struct api_ctx *c UNUSED, const struct gql_field *f UNUSED, json_t **ret,
                                    struct tess_error **err UNUSED)
{
        *ret = json_pack("{s:s, s:o}", "__typename", "PredefinedAtomicPermission", "vfolder_host_permission_list",
                         vf_host_perms_json(VFH_ALL));
        return 0;
}

/* ---- images ---- */

static json_t *gql_image(const json_t *v)
{
        json_t *labels = json_array(), *value;
        const char *key;
        json_object_foreach(json_object_get(v, "labels"), key, value)
                json_array_append_new(labels,
                                      json_pack("{s:s, s:s, s:O}", "__typename", "KVPair", "key", key, "value", value));
        return json_pack("{s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:o, s:[], s:b, s:[], s:b, s:b}",
                         "__typename", "Image", "id", json_object_get(v, "id"), "name", json_object_get(v, "name"),
                         "registry", json_object_get(v, "registry"), "architecture", json_object_get(v, "architecture"),
                         "tag", json_object_get(v, "tag"), "digest", json_object_get(v, "digest"), "hash",
                         json_object_get(v, "digest"), "aliases", json_object_get(v, "aliases"), "size_bytes",
                         json_object_get(v, "size_bytes"), "labels", labels, "resource_limits", "installed", true,
                         "installed_agents", "is_local", false, "supported_accelerators_known", false);
}

static int resolve_images(struct api_ctx *c, const struct gql_field *f UNUSED, json_t **ret, struct tess_error **err)
{
        json_t *flat, *v;
        size_t i;
        if (images_visible(c, &flat, err) < 0)
                return -1;
        *ret = json_array();
        json_array_foreach(flat, i, v)
                json_array_append_new(*ret, gql_image(v));
        json_decref(flat);
        return 0;
}

/* image(reference, architecture): by "name:tag", "registry/name:tag" or an
 * alias, among the images the caller may use. */
static int resolve_image(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *ref = arg_string(f, "reference"), *arch = arg_string(f, "architecture");
        json_t *flat, *v, *a;
        size_t i, j;

        if (!ref)
                return tess_err(err, EINVAL, "image(reference:): the image's reference is required");
        if (images_visible(c, &flat, err) < 0)
                return -1;
        *ret = json_null();
        json_array_foreach(flat, i, v) {
                const char *name = json_string_value(json_object_get(v, "name")),
                           *tag = json_string_value(json_object_get(v, "tag")),
                           *registry = json_string_value(json_object_get(v, "registry"));
                _cleanup_free_ char *short_ref = xasprintf("%s:%s", name, tag);
                _cleanup_free_ char *full_ref = xasprintf("%s%s%s:%s", registry, *registry ? "/" : "", name, tag);
                bool hit = streq(ref, short_ref) || streq(ref, full_ref);
                json_array_foreach(json_object_get(v, "aliases"), j, a)
                        hit = hit || streq(ref, json_string_value(a));
                if (hit && (!arch || streq(arch, json_string_value(json_object_get(v, "architecture"))))) {
                        json_decref(*ret);
                        *ret = gql_image(v);
                        break;
                }
        }
        json_decref(flat);
        return 0;
}

/* ---- admin lists: the /admin/... list routes, in Backend.AI's names ---- */

enum conv {
        AS_IS,   /* the REST field's value */
        AS_TEXT, /* its JSON text (Backend.AI's JSONString fields) */
        NONE,    /* null: Tessera has no such thing */
        NO,      /* false: a switch Tessera has no such thing for is off */
};

struct field_map {
        const char *to, *from;
        enum conv conv;
};

static const struct field_map user_map[] = {
        { "id", "id" },
        { "uuid", "id" },
        { "username", "username" },
        { "email", "email" },
        { "need_password_change", "need_password_change" },
        { "full_name", "full_name" },
        { "description", "description" },
        { "status", "status" },
        { "status_info", NULL, NONE },
        { "created_at", "created_at" },
        { "modified_at", "modified_at" },
        { "domain_name", "domain" },
        { "role", "role" },
        { "resource_policy", NULL, NONE },
        { "allowed_client_ip", NULL, NONE },
        { "totp_activated", NULL, NONE },
        { "sudo_session_enabled", NULL, NO },
        { "main_access_key", "main_access_key" },
        {}, /* + is_active, groups: user_extras(), memberships() */
};

static const struct field_map keypair_map[] = {
        { "user_id", "email" },
        { "user", "user_id" },
        { "access_key", "access_key" },
        { "secret_key", NULL, NONE }, /* never listed: shown once, at creation */
        { "is_active", "is_active" },
        { "is_admin", NULL, NONE },
        { "resource_policy", "resource_policy" },
        { "rate_limit", "rate_limit" },
        { "num_queries", "num_queries" },
        { "created_at", "created_at" },
        { "modified_at", "created_at" },
        { "last_used", "last_used" },
        { "concurrency_used", NULL, NONE },
        { "ssh_public_key", NULL, NONE },
        { "ssh_private_key", NULL, NONE },
        { "bootstrap_script", NULL, NONE },
        {}, /* + user_info: keypair_extras(); projects: memberships() */
};

static const struct field_map agent_map[] = {
        { "id", "id" },
        { "status", "status" },
        { "status_changed", NULL, NONE },
        { "region", NULL, NONE },
        { "scaling_group", "resource_group" },
        { "schedulable", "schedulable" },
        { "available_slots", "available_slots", AS_TEXT },
        { "occupied_slots", "occupied_slots", AS_TEXT },
        { "addr", "address" },
        { "architecture", "architecture" },
        { "first_contact", "first_contact" },
        { "lost_at", "lost_at" },
        { "version", "version" },
        { "compute_plugins", NULL, NONE },
        { "hardware_metadata", NULL, NONE },
        { "local_config", NULL, NONE },
        { "compute_containers", NULL, NONE },
        {}, /* + live_stat, container_count, cpu_cur_pct, mem_cur_bytes: gql_agent() */
};

/* Backend.AI's KeyPairResourcePolicy (its 22.03 fields) from GET
 * /admin/keypair-policies' rows; + policy_extras(). */
static const struct field_map policy_map[] = {
        { "name", "name" },
        { "created_at", "created_at" },
        { "total_resource_slots", "total_resource_slots", AS_TEXT },
        { "max_session_lifetime", "max_session_lifetime" },
        { "max_concurrent_sessions", "max_concurrent_sessions" },
        { "max_containers_per_session", "max_containers_per_session" },
        { "idle_timeout", "idle_timeout" },
        { "max_vfolder_count", "max_vfolder_count" },
        { "max_pending_session_count", "max_pending_session_count" },
        { "max_pending_session_resource_slots", "max_pending_session_resource_slots", AS_TEXT },
        { "max_concurrent_sftp_sessions", NULL, NONE },
        {},
};

static const struct field_map domain_map[] = {
        { "name", "name" },
        { "description", "description" },
        { "is_active", "is_active" },
        { "created_at", "created_at" },
        { "modified_at", "modified_at" },
        { "total_resource_slots", "total_resource_slots", AS_TEXT },
        { "allowed_vfolder_hosts", "allowed_vfolder_hosts", AS_TEXT },
        { "allowed_docker_registries", "allowed_docker_registries" },
        { "integration_id", NULL, NONE },
        { "scaling_groups", NULL, NONE },
        {},
};

static const struct field_map group_map[] = {
        { "id", "id" },
        { "name", "name" },
        { "description", "description" },
        { "is_active", "is_active" },
        { "created_at", "created_at" },
        { "modified_at", "modified_at" },
        { "domain_name", "domain" },
        { "total_resource_slots", "total_resource_slots", AS_TEXT },
        { "allowed_vfolder_hosts", "allowed_vfolder_hosts", AS_TEXT },
        { "integration_id", NULL, NONE },
        { "scaling_groups", NULL, NONE },
        {},
};

static const struct field_map scaling_group_map[] = {
        { "name", "name" },
        { "description", "description" },
        { "is_active", "is_active" },
        { "is_public", "is_public" },
        { "created_at", "created_at" },
        { "driver", NULL, NONE },
        { "driver_opts", NULL, NONE },
        { "scheduler", "scheduler" },
        { "scheduler_opts", "scheduler_opts", AS_TEXT },
        { "wsproxy_addr", "wsproxy_addr" },
        { "wsproxy_api_token", NULL, NONE },
        { "use_host_network", NULL, NO },
        {},
};

static json_t *map_object(const json_t *src, const char *type, const struct field_map *m)
{
        json_t *o = json_pack("{s:s}", "__typename", type);
        for (; m->to; m++) {
                json_t *v = m->from ? json_object_get(src, m->from) : NULL;
                json_object_set_new(o, m->to,
                                    m->conv == NO         ? json_false()
                                    : m->conv == NONE || !v ? json_null()
                                    : m->conv == AS_TEXT  ? json_text_of(v)
                                                          : json_incref(v));
        }
        return o;
}

/* What a list needs beyond its fields' names. */
static void user_extras(json_t *o, const json_t *src)
{
        json_object_set_new(o, "is_active",
                            json_boolean(streq(json_string_value(json_object_get(src, "status")) ?: "", "active")));
}

static void keypair_extras(json_t *o, const json_t *src)
{
        json_object_set_new(o, "user_info",
                            json_pack("{s:s, s:O?, s:n}", "__typename", "UserInfo", "email",
                                      json_object_get(src, "email"), "full_name"));
}

static void policy_extras(json_t *o, const json_t *src)
{
        const char *size = json_string_value(json_object_get(src, "max_quota_scope_size"));
        json_t *hosts = json_array(), *perms;
        const char *host;

        /* a slot the policy does not name is not limited (scheduler_snapshot.c) */
        json_object_set_new(o, "default_for_unspecified", json_string("UNLIMITED"));
        /* the most one owner's folders on a host may hold (docs/design/vfolders.md),
         * so also the most one folder may */
        json_object_set_new(o, "max_vfolder_size", json_integer(size ? strtoll(size, NULL, 10) : 0));
        /* Backend.AI 22.03 lists the hosts; Tessera keeps each one's permissions too */
        json_object_foreach(json_object_get(src, "allowed_vfolder_hosts"), host, perms)
                json_array_append_new(hosts, json_string(host));
        json_object_set_new(o, "allowed_vfolder_hosts", hosts);
}

/* A list's argument, as the filter (query parameter) of its REST list:
 * a String as is, a Boolean as true/false. */
struct arg_filter {
        const char *arg, *param;
};

#define MAX_ARG_FILTERS 4
static const struct arg_filter user_args[MAX_ARG_FILTERS] = {
        { "domain_name", "domain" }, { "group_id", "project" }, { "status", "status" }, { "is_active", "status" }
};
static const struct arg_filter keypair_args[MAX_ARG_FILTERS] = {
        { "domain_name", "domain" }, { "email", "user" }, { "user_id", "user" }, { "is_active", "is_active" }
};
static const struct arg_filter domain_args[MAX_ARG_FILTERS] = { { "is_active", "is_active" } };
static const struct arg_filter group_args[MAX_ARG_FILTERS] = { { "domain_name", "domain" },
                                                               { "is_active", "is_active" } };
static const struct arg_filter scaling_group_args[MAX_ARG_FILTERS] = { { "name", "name" },
                                                                       { "is_active", "is_active" } };

static const struct admin_list {
        const char *root, *path, *list_type, *type;
        const struct field_map *map;
        void (*extras)(json_t *o, const json_t *src);
        bool paged; /* (limit, offset) -> {items, total_count}; else every row as a list */
        const struct arg_filter *args;
        const char *member; /* the field of a row naming a user whose projects the object lists */
} admin_lists[] = {
        { "user_list", "/admin/users", "UserList", "User", user_map, user_extras, true, user_args, "id" },
        { "users", "/admin/users", NULL, "User", user_map, user_extras, false, user_args, "id" },
        { "keypair_list", "/admin/keypairs", "KeyPairList", "KeyPair", keypair_map, keypair_extras, true,
          keypair_args, "user_id" },
        { "keypairs", "/admin/keypairs", NULL, "KeyPair", keypair_map, keypair_extras, false, keypair_args,
          "user_id" },
        { "domains", "/admin/domains", NULL, "Domain", domain_map, NULL, false, domain_args },
        { "groups", "/admin/projects", NULL, "Group", group_map, NULL, false, group_args },
        { "scaling_groups", "/admin/resource-groups", NULL, "ScalingGroup", scaling_group_map, NULL, false,
          scaling_group_args },
        { "keypair_resource_policies", "/admin/keypair-policies", NULL, "KeyPairResourcePolicy", policy_map,
          policy_extras, false },
};

/* f's arguments as the filters of list l (*ret NULL: none given). */
static int list_filters(const struct admin_list *l, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        *ret = NULL;
        for (int i = 0; l->args && i < MAX_ARG_FILTERS && l->args[i].arg; i++) {
                const struct arg_filter *a = &l->args[i];
                json_t *v = json_object_get(f->args, a->arg), *text;
                if (!v || json_is_null(v))
                        continue;
                if (json_is_boolean(v) && streq(a->param, "status")) /* users' is_active */
                        text = json_string(json_is_true(v) ? "active" : "inactive");
                else if (json_is_boolean(v))
                        text = json_string(json_is_true(v) ? "true" : "false");
                else if (json_is_string(v) && streq(a->param, "status")) /* Backend.AI's ACTIVE */
                        text = with_case(json_string_value(v), tolower);
                else if (json_is_string(v))
                        text = json_incref(v);
                else {
                        json_decref(*ret);
                        return tess_err(err, EINVAL, "%s(%s:): a String or Boolean", f->name, a->arg);
                }
                if (!*ret)
                        *ret = json_object();
                json_object_set_new(*ret, a->param, text);
        }
        return 0;
}

#define UNPAGED_MAX 10000 /* rows of a list asked for without paging */

static const struct admin_list *list_of(const char *path)
{
        for (size_t i = 0; i < ARRAY_SIZE(admin_lists); i++)
                if (streq(admin_lists[i].path, path))
                        return &admin_lists[i];
        abort(); /* a path without a Backend.AI type */
}

/* The projects of the users that rows name (by field l->member), in one
 * query, into each object: a user's groups [{id, name}], a keypair's
 * projects [name]. */
static int memberships(struct api_ctx *c, const struct admin_list *l, const json_t *rows, json_t *objects,
                       struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *m = NULL;
        size_t n = json_array_size(rows), i;
        const char **ids = xcalloc(n + 1, sizeof(*ids));
        json_t *by_user = json_object(), *row;
        bool user = streq(l->type, "User");

        json_array_foreach(rows, i, row) {
                ids[i] = json_string_value(json_object_get(row, l->member)) ?: "";
                json_object_set_new(by_user, ids[i], json_array());
        }
        int r = query_in(c,
                         "SELECT m.user_id, p.id, p.name FROM project_members m JOIN projects p ON p.id = m.project_id"
                         " WHERE m.user_id",
                         ids, (int)n, " ORDER BY p.name", &m, err);
        free(ids);
        for (int k = 0; r >= 0 && m && k < m->nrows; k++)
                json_array_append_new(json_object_get(by_user, db_get(m, k, 0)),
                                      user ? json_pack("{s:s, s:s, s:s}", "__typename", "UserGroup", "id",
                                                       db_get(m, k, 1), "name", db_get(m, k, 2))
                                           : json_string(db_get(m, k, 2)));
        json_array_foreach(rows, i, row) {
                json_t *list = json_object_get(by_user, json_string_value(json_object_get(row, l->member)) ?: "");
                json_object_set(json_array_get(objects, i), user ? "groups" : "projects", list ? list : json_null());
        }
        json_decref(by_user);
        return r < 0 ? r : 0;
}

int gql_admin_objects(struct api_ctx *c, const char *path, const json_t *rows, json_t **ret, struct tess_error **err)
{
        const struct admin_list *l = list_of(path);
        json_t *row;
        size_t i;

        *ret = json_array();
        json_array_foreach(rows, i, row) {
                json_t *o = map_object(row, l->type, l->map);
                if (l->extras)
                        l->extras(o, row);
                json_array_append_new(*ret, o);
        }
        if (l->member && memberships(c, l, rows, *ret, err) < 0) {
                *ret = (json_decref(*ret), NULL);
                return -1;
        }
        return 0;
}

int gql_admin_object(struct api_ctx *c, const char *path, const json_t *row, json_t **ret, struct tess_error **err)
{
        json_t *rows = json_pack("[O]", row), *objects;
        int r = gql_admin_objects(c, path, rows, &objects, err);
        json_decref(rows);
        *ret = r < 0 ? NULL : json_incref(json_array_get(objects, 0));
        json_decref(objects);
        return r;
}

/* The caller's own user as GET /admin/users shows one. */
static int own_user(struct api_ctx *c, json_t **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *u = NULL;
        char created[48], modified[48];

        if (DBQ(c->m->db,
                "SELECT id, email, username, full_name, description, role, status, domain_name, need_password_change,"
                " created_at, modified_at, (SELECT k.access_key FROM keypairs k WHERE k.user_id = users.id AND"
                " k.is_main = 1 ORDER BY k.created_at LIMIT 1) AS main_access_key FROM users WHERE id = ?",
                &u, err, DB_TEXT(c->who.user_id)) < 0)
                return -1;
        if (u->nrows == 0)
                return tess_err(err, ENOENT, "user: yours is gone");
        *ret = json_pack(
                "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:s?}", "id", db_getn(u, 0, "id"), "email",
                db_getn(u, 0, "email"), "username", db_getn(u, 0, "username"), "full_name", db_getn(u, 0, "full_name"),
                "description", db_getn(u, 0, "description"), "role", db_getn(u, 0, "role"), "status",
                db_getn(u, 0, "status"), "domain", db_getn(u, 0, "domain_name"), "need_password_change",
                db_get_int(u, 0, "need_password_change") != 0, "created_at",
                time_format_iso(db_get_int(u, 0, "created_at"), created, sizeof(created)), "modified_at",
                time_format_iso(db_get_int(u, 0, "modified_at"), modified, sizeof(modified)), "main_access_key",
                db_getn(u, 0, "main_access_key"));
        return 0;
}

static int resolve_user(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err);

/* The row of GET `path` whose filter `param` is `value`, among those
 * that list shows the caller (*ret NULL when none). */
static int admin_item_of(struct api_ctx *c, const char *path, const char *param, const char *value, json_t **ret,
                         struct tess_error **err)
{
        json_t *filters = json_pack("{s:s}", param, value), *items;
        int64_t total;

        *ret = NULL;
        int r = admin_list_of(c, path, filters, 1, 0, &items, &total, err);
        json_decref(filters);
        if (r < 0)
                return -1;
        if (json_array_size(items))
                *ret = json_incref(json_array_get(items, 0));
        json_decref(items);
        return 0;
}

/* One object of an /admin list by a filter, as its Backend.AI type (null
 * when the caller sees none). */
static int resolve_item(struct api_ctx *c, const char *path, const char *param, const char *value, json_t **ret,
                        struct tess_error **err)
{
        json_t *src;
        if (admin_item_of(c, path, param, value, &src, err) < 0)
                return -1;
        if (!src) {
                *ret = json_null();
                return 0;
        }
        int r = gql_admin_object(c, path, src, ret, err);
        json_decref(src);
        return r;
}

/* domain(name): the caller's own domain by default. */
static int resolve_domain(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        return resolve_item(c, "/admin/domains", "name", arg_string(f, "name") ?: c->who.domain, ret, err);
}

static int resolve_group(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *id = arg_string(f, "id");
        if (!id)
                return tess_err(err, EINVAL, "group(id:): a UUID is required");
        return resolve_item(c, "/admin/projects", "id", id, ret, err);
}

static int resolve_scaling_group(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *name = arg_string(f, "name");
        if (!name)
                return tess_err(err, EINVAL, "scaling_group(name:): a String is required");
        return resolve_item(c, "/admin/resource-groups", "name", name, ret, err);
}

static int resolve_user_from_uuid(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *id = arg_string(f, "user_id");
        if (!id || streq(id, c->who.user_id))
                return resolve_user(c, f, ret, err); /* the caller's own */
        return resolve_item(c, "/admin/users", "id", id, ret, err);
}

/* groups_by_name(name, domain_name): the projects of that name the
 * caller sees (in that domain). */
static int resolve_groups_by_name(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *name = arg_string(f, "name"), *domain = arg_string(f, "domain_name");
        json_t *filters, *items;
        int64_t total;

        if (!name)
                return tess_err(err, EINVAL, "groups_by_name(name:): a String is required");
        filters = json_pack("{s:s}", "name", name);
        if (domain)
                json_object_set_new(filters, "domain", json_string(domain));
        int r = admin_list_of(c, "/admin/projects", filters, UNPAGED_MAX, 0, &items, &total, err);
        json_decref(filters);
        if (r < 0)
                return -1;
        r = gql_admin_objects(c, "/admin/projects", items, ret, err);
        json_decref(items);
        return r;
}

/* user(email): the caller's own (no email, or theirs); another's for who
 * may list users, among those GET /admin/users shows them. */
static int resolve_user(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *email = arg_string(f, "email");
        json_t *src = NULL;

        if (email && !streq(email, c->who.email))
                return resolve_item(c, "/admin/users", "email", email, ret, err);
        if (own_user(c, &src, err) < 0)
                return -1;
        int r = gql_admin_object(c, "/admin/users", src, ret, err);
        json_decref(src);
        return r;
}

static int resolve_admin_list(struct api_ctx *c, const struct admin_list *l, const struct gql_field *f, json_t **ret,
                              struct tess_error **err)
{
        int64_t limit = UNPAGED_MAX, offset = 0, total;
        json_t *items, *out, *filters;

        if ((l->paged && page_args(f, &limit, &offset, err) < 0) || no_filter_order(f, err) < 0 ||
            list_filters(l, f, &filters, err) < 0)
                return -EINVAL;
        int r = admin_list_of(c, l->path, filters, limit, offset, &items, &total, err);
        json_decref(filters);
        if (r < 0)
                return -1;
        r = gql_admin_objects(c, l->path, items, &out, err);
        json_decref(items);
        if (r < 0)
                return -1;
        *ret = l->paged ? json_pack("{s:s, s:o, s:I}", "__typename", l->list_type, "items", out, "total_count",
                                    (json_int_t)total)
                        : out;
        return 0;
}

/* keypair_resource_policy(name): the caller's keypair's policy when no
 * name is given, as Backend.AI's; for who may list policies (GET
 * /admin/keypair-policies' roles), null when there is no such policy. */
static int resolve_policy(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        return resolve_item(c, "/admin/keypair-policies", "name", arg_string(f, "name") ?: c->who.resource_policy, ret,
                            err);
}

/* ---- agents: GET /admin/agents' rows with what they run now ---- */

/* Whether s is one of the comma-separated names of list. */
static bool in_list(const char *list, const char *s)
{
        size_t n = strlen(s);
        for (const char *p = list; *p;) {
                size_t len = strcspn(p, ",");
                if (len == n && strncmp(p, s, n) == 0)
                        return true;
                p += len + (p[len] == ',');
        }
        return false;
}

/* A number in lastStat's shape: {"current": "12.5"} (a string or a
 * number); 0 when missing, negative, too large or not a number. */
static double stat_current(const json_t *stat, const char *key)
{
        const json_t *v = json_object_get(json_object_get(stat, key), "current");
        double x = json_is_string(v)   ? strtod(json_string_value(v), NULL)
                   : json_is_number(v) ? json_number_value(v)
                                       : 0;
        return x >= 0 && x <= 1e18 ? x : 0;
}

/* Add `kernels` and what `stat` (a lastStat, or NULL) says they use to the
 * agent's entry of uses. */
static void add_use(json_t *uses, const char *agent, int64_t kernels, const json_t *stat)
{
        json_t *use = json_object_get(uses, agent);
        if (!use) {
                use = json_pack("{s:I, s:I, s:f}", "kernels", (json_int_t)0, "mem", (json_int_t)0, "cpu", 0.0);
                json_object_set_new(uses, agent, use);
        }
        kernels += json_integer_value(json_object_get(use, "kernels"));
        json_int_t mem = json_integer_value(json_object_get(use, "mem")) + (json_int_t)stat_current(stat, "mem");
        double cpu = json_real_value(json_object_get(use, "cpu")) + stat_current(stat, "cpu_util");
        json_object_set_new(use, "kernels", json_integer(kernels));
        json_object_set_new(use, "mem", json_integer(mem));
        json_object_set_new(use, "cpu", json_real(cpu));
}

/* What each agent runs now, {"<agent id>": {kernels, mem, cpu}}: its
 * kernels that hold resources, and the memory (bytes) and CPU (percent of
 * one core) its sessions last reported.  The manager keeps what the
 * heartbeats report per session (its lastStat, api_agent.c): that of the
 * kernel that reported last.  So a session counts on its agent when all
 * its kernels are there, and a session spread over several agents counts
 * on none (which of its kernels the numbers are is not known); a session
 * of several kernels on one agent counts one kernel's numbers.  An agent
 * that runs nothing, or whose kernels have not reported yet, uses 0. */
static int agents_use(struct api_ctx *c, json_t **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;

        if (DBQ(c->m->db,
                "SELECT k.agent_id, s.last_stat, COUNT(*) AS kernels,"
                " (SELECT COUNT(DISTINCT k2.agent_id) FROM kernels k2 WHERE k2.session_id = s.id"
                " AND k2.status IN " USAGE_OCCUPYING_STATUSES ") AS agents"
                " FROM kernels k JOIN sessions s ON s.id = k.session_id"
                " WHERE k.agent_id IS NOT NULL AND k.status IN " USAGE_OCCUPYING_STATUSES
                " GROUP BY k.agent_id, s.id, s.last_stat",
                &rows, err) < 0)
                return -1;
        *ret = json_object();
        for (int i = 0; i < rows->nrows; i++) {
                json_t *stat = json_column(db_getn(rows, i, "last_stat"));
                add_use(*ret, db_getn(rows, i, "agent_id"), db_get_int(rows, i, "kernels"),
                        db_get_int(rows, i, "agents") == 1 ? stat : NULL);
                json_decref(stat);
        }
        return 0;
}

/* Backend.AI's live_stat (a JSONString) of what the agent's kernels use:
 * {"node": {"mem": {current, capacity, pct, unit_hint}}, "devices": {}}.
 * Its CLI prints node cpu_util with the number of devices.cpu_util (its
 * cores), which the manager does not know: the CPU is cpu_cur_pct. */
static json_t *agent_live_stat(const json_t *src, int64_t mem)
{
        const char *cap = json_string_value(json_object_get(json_object_get(src, "available_slots"), "mem"));
        int64_t capacity = cap ? strtoll(cap, NULL, 10) : 0;
        char current[32], capacity_text[32], pct[32];

        snprintf(current, sizeof(current), "%lld", (long long)mem);
        snprintf(capacity_text, sizeof(capacity_text), "%lld", (long long)capacity);
        snprintf(pct, sizeof(pct), "%.2f", capacity > 0 ? 100.0 * (double)mem / (double)capacity : 0.0);
        json_t *stat = json_pack("{s:{s:{s:s, s:s, s:s, s:s}}, s:{}}", "node", "mem", "current", current, "capacity",
                                 capacity_text, "pct", pct, "unit_hint", "bytes", "devices");
        json_t *text = json_text_of(stat);
        json_decref(stat);
        return text;
}

static json_t *gql_agent(const json_t *src, const json_t *uses)
{
        const json_t *use = json_object_get(uses, json_string_value(json_object_get(src, "id")));
        int64_t mem = json_integer_value(json_object_get(use, "mem"));
        json_t *o = map_object(src, "Agent", agent_map);

        json_object_set_new(o, "container_count", json_integer(json_integer_value(json_object_get(use, "kernels"))));
        json_object_set_new(o, "mem_cur_bytes", json_integer(mem));
        json_object_set_new(o, "cpu_cur_pct", json_real(json_real_value(json_object_get(use, "cpu"))));
        json_object_set_new(o, "live_stat", agent_live_stat(src, mem));
        return o;
}

/* The agents GET /admin/agents shows the caller (its roles and rules), of
 * status (one or several, comma-separated) and scaling_group when given,
 * from the offset-th, at most limit, as Backend.AI's Agent objects; *total
 * all that match. */
static int gql_agents(struct api_ctx *c, const struct gql_field *f, int64_t limit, int64_t offset, json_t **ret,
                      int64_t *total, struct tess_error **err)
{
        const char *status = arg_string(f, "status"), *group = arg_string(f, "scaling_group");
        json_t *all, *uses, *v;
        int64_t n;
        size_t i;

        if (admin_list_of(c, "/admin/agents", NULL, UNPAGED_MAX, 0, &all, &n, err) < 0)
                return -1;
        if (agents_use(c, &uses, err) < 0) {
                json_decref(all);
                return -1;
        }
        *ret = json_array();
        *total = 0;
        json_array_foreach(all, i, v) {
                if ((status && !in_list(status, json_string_value(json_object_get(v, "status")) ?: "")) ||
                    (group && !streq(group, json_string_value(json_object_get(v, "resource_group")) ?: "")))
                        continue;
                if (*total >= offset && *total < offset + limit)
                        json_array_append_new(*ret, gql_agent(v, uses));
                (*total)++;
        }
        json_decref(uses);
        json_decref(all);
        return 0;
}

/* agent_list(limit, offset, status, scaling_group): {items, total_count} */
static int resolve_agent_list(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        int64_t limit, offset, total;
        json_t *items;

        if (page_args(f, &limit, &offset, err) < 0 || no_filter_order(f, err) < 0)
                return -EINVAL;
        if (gql_agents(c, f, limit, offset, &items, &total, err) < 0)
                return -1;
        *ret = json_pack("{s:s, s:o, s:I}", "__typename", "AgentList", "items", items, "total_count",
                         (json_int_t)total);
        return 0;
}

/* agents(status, scaling_group): every one that matches */
static int resolve_agents(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        int64_t total;
        return gql_agents(c, f, UNPAGED_MAX, 0, ret, &total, err);
}

/* agent(agent_id): null when the caller sees no such agent */
static int resolve_agent(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *id = arg_string(f, "agent_id");
        json_t *src, *uses;

        if (!id)
                return tess_err(err, EINVAL, "agent(agent_id:): the agent's id is required");
        if (admin_item_of(c, "/admin/agents", "id", id, &src, err) < 0)
                return -1;
        if (!src) {
                *ret = json_null();
                return 0;
        }
        if (agents_use(c, &uses, err) < 0) {
                json_decref(src);
                return -1;
        }
        *ret = gql_agent(src, uses);
        json_decref(uses);
        json_decref(src);
        return 0;
}

/* ---- storage volumes: the folder hosts, under GET /folders/_/all-hosts' roles ---- */

static int may_list_hosts(struct api_ctx *c, struct tess_error **err)
{
        const struct route *r = vfolder_routes;
        while (r->method && !(streq(r->method, "GET") && streq(r->pattern, "/folders/_/all-hosts")))
                r++;
        if (!r->method)
                abort(); /* the route the storage roots stand for is gone */
        if (!api_role_may_use(c, r))
                return tess_err(err, EACCES, "your role (%s) may not list storage volumes (GET %s)",
                                role_to_string(c->who.role), r->pattern);
        return 0;
}

/* A folder host as Backend.AI's StorageVolume: its JSON fields
 * (hardware_metadata, performance_metric, usage) are JSON texts.  Folders
 * live in the host's directory itself (fsprefix "."); the manager measures
 * no I/O (performance_metric {}). */
static json_t *storage_volume(const struct vf_host *h)
{
        struct statvfs st;
        json_t *usage = json_object(), *hw;

        if (statvfs(h->path, &st) == 0 && st.f_blocks) {
                uint64_t total = (uint64_t)st.f_blocks * st.f_frsize, avail = (uint64_t)st.f_bavail * st.f_frsize;
                json_object_set_new(usage, "capacity_bytes", json_integer((json_int_t)total));
                json_object_set_new(usage, "used_bytes", json_integer((json_int_t)(total - avail)));
                hw = json_pack("{s:s, s:n, s:{}}", "status", "healthy", "status_info", "metadata");
        } else {
                hw = json_pack("{s:s, s:s, s:{}}", "status", "unavailable", "status_info",
                               "its directory cannot be read", "metadata");
        }
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[s, s], s:o, s:s, s:o}", "__typename", "StorageVolume", "id",
                              h->name, "backend", "vfs", "fsprefix", ".", "path", h->path, "capabilities", "vfolder",
                              "quota", "hardware_metadata", json_text_of(hw), "performance_metric", "{}", "usage",
                              json_text_of(usage));
        json_decref(hw);
        json_decref(usage);
        return o;
}

/* storage_volume_list(limit, offset): {items, total_count} */
static int resolve_storage_list(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const struct vf_hosts *hosts = &c->m->vfolder_hosts;
        int64_t limit, offset;

        if (page_args(f, &limit, &offset, err) < 0 || no_filter_order(f, err) < 0)
                return -EINVAL;
        if (may_list_hosts(c, err) < 0)
                return -1;
        json_t *items = json_array();
        for (size_t i = (size_t)offset; i < hosts->n && (int64_t)i < offset + limit; i++)
                json_array_append_new(items, storage_volume(&hosts->v[i]));
        *ret = json_pack("{s:s, s:o, s:I}", "__typename", "StorageVolumeList", "items", items, "total_count",
                         (json_int_t)hosts->n);
        return 0;
}

/* storage_volume(id): the host of that name, or null */
static int resolve_storage(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        const char *id = arg_string(f, "id");
        const struct vf_host *h;

        if (!id)
                return tess_err(err, EINVAL, "storage_volume(id:): the volume's id (a folder host) is required");
        if (may_list_hosts(c, err) < 0)
                return -1;
        h = vf_hosts_find(&c->m->vfolder_hosts, id);
        *ret = h ? storage_volume(h) : json_null();
        return 0;
}

static const struct {
        const char *name;
        int (*resolve)(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err);
} roots[] = {
        { "keypair", resolve_keypair },
        { "compute_session_list", resolve_session_list },
        { "compute_session", resolve_session },
        { "vfolder_list", resolve_vfolder_list },
        { "vfolder_own_list", resolve_vfolder_own_list },
        { "vfolder_invited_list", resolve_vfolder_invited_list },
        { "vfolder_project_list", resolve_vfolder_project_list },
        { "vfolder_host_permissions", resolve_host_permissions },
        { "images", resolve_images },
        { "image", resolve_image },
        { "user", resolve_user },
        { "user_from_uuid", resolve_user_from_uuid },
        { "domain", resolve_domain },
        { "group", resolve_group },
        { "groups_by_name", resolve_groups_by_name },
        { "scaling_group", resolve_scaling_group },
        { "keypair_resource_policy", resolve_policy },
        { "agent_list", resolve_agent_list },
        { "agents", resolve_agents },
        { "agent", resolve_agent },
        { "storage_volume_list", resolve_storage_list },
        { "storage_volume", resolve_storage },
};

int gql_resolve_root(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err)
{
        for (size_t i = 0; i < ARRAY_SIZE(roots); i++)
                if (streq(roots[i].name, f->name))
                        return roots[i].resolve(c, f, ret, err);
        for (size_t i = 0; i < ARRAY_SIZE(admin_lists); i++)
                if (streq(admin_lists[i].root, f->name))
                        return resolve_admin_list(c, &admin_lists[i], f, ret, err);
        return tess_err(err, ENOENT, "Cannot query field \"%s\" on type \"Queries\".", f->name);
}
