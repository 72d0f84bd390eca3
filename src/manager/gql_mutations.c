/* gql_mutations.c - see gql_mutations.h.
 *
 * A mutation is planned first: its arguments become one or more REST
 * steps (method, route, parameter, body), then the steps run one after
 * another as subcalls, stopping at the first refusal.  A plan that is
 * refused before any step (an argument Tessera cannot honour) is ok
 * false too, with the reason. */
#include "common/compat.h"

#include "common/buf.h"
#include "manager/admin/admin.h"
#include "manager/api/api.h"
#include "manager/api/subcall.h"
#include "manager/core/manager.h"
#include "manager/gql_mutations.h"
#include "manager/gql_roots.h"
#include "manager/images/session_image.h"
#include "manager/vfolder/vfolder.h"

#define MAX_STEPS 256

struct run {
        struct api_ctx *c;
        const struct mutation *mu;
        struct api_step steps[MAX_STEPS]; /* each param and body owned */
        const char *object_path[MAX_STEPS]; /* the step's answer is the object made, a row of this list */
        size_t n;
        bool ok;
        char *msg;
        json_t *object, *task_id;
        gql_mutation_done_fn done;
        void *data;
};

typedef int (*plan_fn)(struct run *r, const struct gql_field *f, struct tess_error **err);

struct mutation {
        const char *name, *type; /* the root field, its payload's type */
        plan_fn plan;
        const char *object_key; /* where the object made goes: "keypair" */
        bool task;              /* answers the task_id of the (last) background task started */
};

static void add_step(struct run *r, const char *method, const char *pattern, const char *param, json_t *body,
                     const char *object_path)
{
        if (r->n == MAX_STEPS)
                abort(); /* plans bound their steps */
        r->object_path[r->n] = object_path;
        r->steps[r->n++] = (struct api_step){ method, pattern, param ? xstrdup(param) : NULL, body };
}

static void drop_steps(struct run *r)
{
        for (size_t i = 0; i < r->n; i++) {
                free((char *)r->steps[i].param);
                json_decref(r->steps[i].body);
        }
        r->n = 0;
}

static void run_free(void *data)
{
        struct run *r = data;
        drop_steps(r);
        free(r->msg);
        json_decref(r->object);
        json_decref(r->task_id);
        free(r);
}

/* ---- arguments and props ---- */

/* A required String argument. */
/* EPROTO: an argument GraphQL itself refuses (an error of the answer's,
 * not ok false). */
static int arg_text(const struct gql_field *f, const char *name, const char **ret, struct tess_error **err)
{
        *ret = json_string_value(json_object_get(f->args, name));
        if (!*ret)
                return tess_err(err, EPROTO, "%s(%s:): a String is required", f->name, name);
        return 0;
}

enum conv {
        SAME,      /* the REST field's value */
        NAME,      /* the same, but "" is absent (Backend.AI: "the default", e.g. the e-mail as username) */
        JSON_TEXT, /* Backend.AI's JSONString: the text is parsed */
        HOSTS,     /* allowed_vfolder_hosts: a list of hosts, each with every permission */
        ONLY,      /* no such thing in Tessera: null, or `only` (JSON text; NULL: nothing else) */
        MOOT,      /* a limit of something Tessera has none of: accepted, nothing to apply it to */
};

struct prop {
        const char *from, *to;
        enum conv conv;
        const char *only;
        const char *why; /* ONLY: what to say when another value is given */
};

static json_t *parsed_text(const json_t *v)
{
        return json_is_string(v) ? json_loads(json_string_value(v), JSON_DECODE_ANY, NULL) : json_incref((json_t *)v);
}

/* A JSON text, or hosts separated by commas ("local,nfs"). */
static json_t *hosts_text(const char *s)
{
        json_t *v = json_loads(s, JSON_DECODE_ANY, NULL), *list;
        if (v)
                return v;
        list = json_array();
        for (const char *p = s; *p;) {
                size_t n = strcspn(p, ",");
                if (n)
                        json_array_append_new(list, json_stringn(p, n));
                p += n + (p[n] == ',');
        }
        return list;
}

/* Backend.AI names a folder host PROXY:VOLUME ("local:volume1", its CLI's
 * default); Tessera's hosts have one name: VOLUME when that is a host
 * here, else PROXY when that is, else the name as given (refused then). */
static const char *host_name(const struct api_ctx *c, const char *name, char *buf, size_t n)
{
        const char *colon = strchr(name, ':');
        if (!colon)
                return name;
        if (vf_hosts_find(&c->m->vfolder_hosts, colon + 1))
                return colon + 1;
        snprintf(buf, n, "%.*s", (int)(colon - name), name);
        return vf_hosts_find(&c->m->vfolder_hosts, buf) ? buf : name;
}

/* allowed_vfolder_hosts: {host: permissions}, or a list of hosts (each
 * with every permission), in Backend.AI's host names. */
static json_t *hosts_of(const struct api_ctx *c, const json_t *given)
{
        json_t *hosts = json_object(), *v;
        const char *key;
        char buf[128];
        size_t i;

        if (json_is_object(given))
                json_object_foreach((json_t *)given, key, v)
                        json_object_set(hosts, host_name(c, key, buf, sizeof(buf)), v);
        else
                json_array_foreach(given, i, v)
                        if (json_is_string(v))
                                json_object_set_new(hosts, host_name(c, json_string_value(v), buf, sizeof(buf)),
                                                    vf_host_perms_json(VFH_ALL));
        return hosts;
}

static int convert(const struct api_ctx *c, const struct prop *p, const json_t *v, json_t **ret,
                   struct tess_error **err)
{
        json_t *parsed;

        *ret = NULL;
        switch (p->conv) {
        case SAME: *ret = json_incref((json_t *)v); return 0;
        case NAME: *ret = json_is_string(v) && !json_string_length(v) ? NULL : json_incref((json_t *)v); return 0;
        case JSON_TEXT:
                *ret = parsed_text(v);
                return *ret ? 0 : tess_err(err, EINVAL, "'%s' must be JSON text", p->from);
        case HOSTS:
                parsed = json_is_string(v) ? hosts_text(json_string_value(v)) : json_incref((json_t *)v);
                if (!json_is_object(parsed) && !json_is_array(parsed)) {
                        json_decref(parsed);
                        return tess_err(err, EINVAL, "'%s' must be a list of folder hosts", p->from);
                }
                *ret = hosts_of(c, parsed);
                json_decref(parsed);
                return 0;
        case MOOT: return 0;
        case ONLY:
                parsed = p->only ? json_loads(p->only, JSON_DECODE_ANY, NULL) : NULL;
                json_t *given = parsed_text(v);
                bool same = parsed && (json_equal(parsed, v) || (given && json_equal(parsed, given)));
                json_decref(parsed);
                json_decref(given);
                return same ? 0 : tess_err(err, EPERM, "'%s': %s", p->from, p->why);
        }
        return 0;
}

/* The props argument of f into body, by map: null props are left out
 * (unchanged), unknown ones refused. */
static int props_to_body(const struct api_ctx *c, const struct gql_field *f, const struct prop *map, json_t *body,
                         struct tess_error **err)
{
        json_t *props = json_object_get(f->args, "props"), *v;
        const char *key;

        if (props && !json_is_object(props) && !json_is_null(props))
                return tess_err(err, EPROTO, "%s(props:): an input object is required", f->name);
        json_object_foreach(props, key, v) {
                const struct prop *p = map;
                json_t *out;
                if (json_is_null(v)) /* unchanged: also what newer clients send for fields of their own */
                        continue;
                while (p->from && !streq(p->from, key))
                        p++;
                if (!p->from)
                        return tess_err(err, EPROTO, "%s(props:): no input field \"%s\"", f->name, key);
                if (convert(c, p, v, &out, err) < 0)
                        return -1;
                if (out)
                        json_object_set_new(body, p->to, out);
        }
        return 0;
}

static const struct prop keypair_props[] = {
        { "is_active", "is_active" },
        { "resource_policy", "resource_policy" },
        { "rate_limit", "rate_limit" },
        { "is_admin", NULL, ONLY, "false",
          "a Tessera keypair has no admin flag of its own: it acts with its user's role (change the user's role)" },
        {},
};

static const struct prop user_props[] = {
        { "password", "password" },
        { "username", "username", NAME },
        { "full_name", "full_name" },
        { "role", "role" },
        { "status", "status" },
        { "need_password_change", "need_password_change" },
        { "description", "description" },
        { "domain_name", "domain" },
        { "group_ids", "projects" },
        { "allowed_client_ip", NULL, ONLY, NULL, "Tessera has no per-user address list" },
        { "totp_activated", NULL, ONLY, "false", "Tessera has no TOTP" },
        { "sudo_session_enabled", NULL, ONLY, "false", "Tessera's sessions never give their user root" },
        { "resource_policy", "resource_policy" },
        {},
};

static const struct prop user_modify_props[] = {
        { "password", "password" },
        { "username", "username", NAME },
        { "full_name", "full_name" },
        { "role", "role" },
        { "status", "status" },
        { "need_password_change", "need_password_change" },
        { "description", "description" },
        { "domain_name", "domain" },
        { "group_ids", NULL, ONLY, NULL,
          "change a user's projects with modify_group(user_update_mode: \"add\" or \"remove\")" },
        { "allowed_client_ip", NULL, ONLY, NULL, "Tessera has no per-user address list" },
        { "totp_activated", NULL, ONLY, "false", "Tessera has no TOTP" },
        { "sudo_session_enabled", NULL, ONLY, "false", "Tessera's sessions never give their user root" },
        {},
};

static const struct prop domain_props[] = {
        { "name", "name" },
        { "description", "description" },
        { "is_active", "is_active" },
        { "total_resource_slots", "total_resource_slots", JSON_TEXT },
        { "allowed_vfolder_hosts", "allowed_vfolder_hosts", HOSTS },
        { "allowed_docker_registries", "allowed_docker_registries" },
        { "integration_id", NULL, ONLY, NULL, "Tessera has no integrations" },
        {},
};

static const struct prop group_props[] = {
        { "name", "name" },
        { "description", "description" },
        { "is_active", "is_active" },
        { "domain_name", "domain" },
        { "total_resource_slots", "total_resource_slots", JSON_TEXT },
        { "allowed_vfolder_hosts", "allowed_vfolder_hosts", HOSTS },
        { "integration_id", NULL, ONLY, NULL, "Tessera has no integrations" },
        {},
};

static const struct prop policy_props[] = {
        { "default_for_unspecified", NULL, ONLY, "\"UNLIMITED\"",
          "a slot a Tessera policy does not name is unlimited (UNLIMITED)" },
        { "total_resource_slots", "total_resource_slots", JSON_TEXT },
        { "max_session_lifetime", "max_session_lifetime" },
        { "max_concurrent_sessions", "max_concurrent_sessions" },
        { "max_containers_per_session", "max_containers_per_session" },
        { "idle_timeout", "idle_timeout" },
        { "max_vfolder_count", "max_vfolder_count" },
        { "max_vfolder_size", "max_quota_scope_size" },
        { "allowed_vfolder_hosts", "allowed_vfolder_hosts", HOSTS },
        { "max_pending_session_count", "max_pending_session_count" },
        { "max_pending_session_resource_slots", "max_pending_session_resource_slots", JSON_TEXT },
        { "max_concurrent_sftp_sessions", NULL, MOOT }, /* Tessera has no SFTP-only sessions */
        {},
};

static const struct prop scaling_group_props[] = {
        { "description", "description" },
        { "is_active", "is_active" },
        { "is_public", "is_public" },
        { "driver", NULL, ONLY, "\"static\"", "Tessera's resource groups have agents that join them (static)" },
        { "driver_opts", NULL, ONLY, "{}", "the static driver has no options" },
        { "scheduler", "scheduler" },
        { "scheduler_opts", "scheduler_opts", JSON_TEXT },
        { "wsproxy_addr", "wsproxy_addr" },
        { "wsproxy_api_token", NULL, ONLY, NULL, "Tessera's app proxy is the manager's own: it takes no token" },
        { "use_host_network", NULL, ONLY, "false", "a Tessera session never shares the host's network" },
        {},
};

/* ---- plans ---- */

/* One step: METHOD pattern, with {param} from argument `key` (NULL: no
 * parameter) and a body of the props by map (NULL: none), plus the
 * argument `name_arg` as body field `name_field`. */
static int plan_one(struct run *r, const struct gql_field *f, const char *method, const char *pattern,
                    const char *key, const struct prop *map, const char *name_arg, const char *name_field,
                    const char *object_path, struct tess_error **err)
{
        const char *param = NULL, *name = NULL;
        json_t *body = map || name_arg ? json_object() : NULL;

        if ((key && arg_text(f, key, &param, err) < 0) || (name_arg && arg_text(f, name_arg, &name, err) < 0) ||
            (map && props_to_body(r->c, f, map, body, err) < 0)) {
                json_decref(body);
                return -1;
        }
        if (name)
                json_object_set_new(body, name_field, json_string(name));
        add_step(r, method, pattern, param, body, object_path);
        return 0;
}

#define PLAN(fn, method, pattern, key, map, name_arg, name_field, object_path)                          \
        static int fn(struct run *r, const struct gql_field *f, struct tess_error **err)                \
        {                                                                                              \
                return plan_one(r, f, method, pattern, key, map, name_arg, name_field, object_path, err); \
        }

PLAN(plan_create_keypair, "POST", "/admin/keypairs", NULL, keypair_props, "user_id", "user", "/admin/keypairs")
PLAN(plan_modify_keypair, "PATCH", "/admin/keypairs/{access_key}", "access_key", keypair_props, NULL, NULL, NULL)
PLAN(plan_delete_keypair, "DELETE", "/admin/keypairs/{access_key}", "access_key", NULL, NULL, NULL, NULL)
PLAN(plan_create_user, "POST", "/admin/users", NULL, user_props, "email", "email", "/admin/users")
PLAN(plan_modify_user, "PATCH", "/admin/users/{email}", "email", user_modify_props, NULL, NULL, NULL)
PLAN(plan_purge_user, "DELETE", "/admin/users/{email}", "email", NULL, NULL, NULL, NULL)
PLAN(plan_create_domain, "POST", "/admin/domains", NULL, domain_props, "name", "name", "/admin/domains")
PLAN(plan_modify_domain, "PATCH", "/admin/domains/{name}", "name", domain_props, NULL, NULL, NULL)
PLAN(plan_purge_domain, "DELETE", "/admin/domains/{name}", "name", NULL, NULL, NULL, NULL)
PLAN(plan_create_group, "POST", "/admin/projects", NULL, group_props, "name", "name", "/admin/projects")
PLAN(plan_purge_group, "DELETE", "/admin/projects/{project}", "gid", NULL, NULL, NULL, NULL)
PLAN(plan_create_policy, "POST", "/admin/keypair-policies", NULL, policy_props, "name", "name",
     "/admin/keypair-policies")
PLAN(plan_modify_policy, "PATCH", "/admin/keypair-policies/{name}", "name", policy_props, NULL, NULL, NULL)
PLAN(plan_delete_policy, "DELETE", "/admin/keypair-policies/{name}", "name", NULL, NULL, NULL, NULL)
PLAN(plan_create_sgroup, "POST", "/admin/resource-groups", NULL, scaling_group_props, "name", "name",
     "/admin/resource-groups")
PLAN(plan_modify_sgroup, "PATCH", "/admin/resource-groups/{name}", "name", scaling_group_props, NULL, NULL, NULL)
PLAN(plan_delete_sgroup, "DELETE", "/admin/resource-groups/{name}", "name", NULL, NULL, NULL, NULL)
PLAN(plan_dealias_image, "DELETE", "/admin/image-aliases/{alias}", "alias", NULL, NULL, NULL, NULL)

/* Backend.AI's delete_* of users, domains and groups keeps the row and
 * makes it inactive; purge_* deletes it. */
static int plan_deactivate(struct run *r, const struct gql_field *f, const char *pattern, const char *key,
                           json_t *body, struct tess_error **err)
{
        const char *param;
        if (arg_text(f, key, &param, err) < 0) {
                json_decref(body);
                return -1;
        }
        add_step(r, "PATCH", pattern, param, body, NULL);
        return 0;
}

static int plan_delete_user(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        return plan_deactivate(r, f, "/admin/users/{email}", "email", json_pack("{s:s}", "status", "inactive"), err);
}

static int plan_delete_domain(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        return plan_deactivate(r, f, "/admin/domains/{name}", "name", json_pack("{s:b}", "is_active", 0), err);
}

static int plan_delete_group(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        return plan_deactivate(r, f, "/admin/projects/{project}", "gid", json_pack("{s:b}", "is_active", 0), err);
}

static int plan_purge_user_checked(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        static const struct prop purge_props[] = {
                { "purge_shared_vfolders", NULL, ONLY, "false",
                  "Tessera deletes a user's own folders with it and keeps the folders of projects" },
                {},
        };
        json_t *ignored = json_object();
        int ret = props_to_body(r->c, f, purge_props, ignored, err);
        json_decref(ignored);
        return ret < 0 ? ret : plan_purge_user(r, f, err);
}

/* modify_group: the project's fields, then its members (user_update_mode
 * "add" or "remove" of user_uuids). */
static int plan_modify_group(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        json_t *props = json_object_get(f->args, "props");
        json_t *mode = json_object_get(props, "user_update_mode"), *users = json_object_get(props, "user_uuids");
        const char *gid;

        if (arg_text(f, "gid", &gid, err) < 0)
                return -1;
        if (json_is_object(props)) { /* the rest are the project's own fields */
                json_t *own = json_deep_copy(props);
                json_object_del(own, "user_update_mode");
                json_object_del(own, "user_uuids");
                struct gql_field g = *f;
                g.args = json_pack("{s:o}", "props", own);
                json_t *body = json_object();
                int ret = props_to_body(r->c, &g, group_props, body, err);
                json_decref(g.args);
                if (ret < 0) {
                        json_decref(body);
                        return -1;
                }
                if (json_object_size(body) || json_is_null(users) || !users)
                        add_step(r, "PATCH", "/admin/projects/{project}", gid, body, NULL);
                else
                        json_decref(body);
        }
        if (users && !json_is_null(users)) {
                const char *m = json_string_value(mode);
                if (!m || (!streq(m, "add") && !streq(m, "remove")))
                        return tess_err(err, EINVAL, "'user_update_mode' must be \"add\" or \"remove\"");
                add_step(r, "POST", "/admin/projects/{project}/members", gid, json_pack("{s:O}", m, users), NULL);
        }
        if (!r->n)
                return tess_err(err, EINVAL, "modify_group(props:): nothing to change");
        return 0;
}

#define ACCESS_ROUTE "/admin/resource-groups/{name}/access"

/* POST .../access {op: {list: [entry]}} for resource group `group`. */
static void access_step(struct run *r, const char *group, const char *op, const char *list, const char *entry)
{
        add_step(r, "POST", ACCESS_ROUTE, group, json_pack("{s:{s:[s]}}", op, list, entry), NULL);
}

static int plan_access(struct run *r, const struct gql_field *f, const char *op, const char *arg, const char *list,
                       struct tess_error **err)
{
        const char *group, *entry;
        if (arg_text(f, "scaling_group", &group, err) < 0 || arg_text(f, arg, &entry, err) < 0)
                return -1;
        access_step(r, group, op, list, entry);
        return 0;
}

static int plan_assoc_domain(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        return plan_access(r, f, "add", "domain", "domains", err);
}

static int plan_dissoc_domain(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        return plan_access(r, f, "remove", "domain", "domains", err);
}

static int plan_assoc_group(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        return plan_access(r, f, "add", "user_group", "projects", err);
}

static int plan_dissoc_group(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        return plan_access(r, f, "remove", "user_group", "projects", err);
}

/* Every resource group whose access list `list` holds `shown` (as GET
 * /admin/resource-groups shows it): a removal of `entry` from each. */
static int plan_remove_everywhere(struct run *r, const char *list, const char *shown, const char *entry,
                                  struct tess_error **err)
{
        json_t *groups, *g, *e;
        int64_t total;
        size_t i, j;

        if (!api_may_call(r->c, "POST", ACCESS_ROUTE))
                return tess_err(err, EACCES, "your role (%s) may not change who may use a resource group",
                                role_to_string(r->c->who.role));
        if (admin_list_of(r->c, "/admin/resource-groups", NULL, MAX_STEPS, 0, &groups, &total, err) < 0)
                return -1;
        json_array_foreach(groups, i, g)
                json_array_foreach(json_object_get(g, list), j, e)
                        if (streq(json_string_value(e) ?: "", shown))
                                access_step(r, json_string_value(json_object_get(g, "name")), "remove", list, entry);
        json_decref(groups);
        return 0;
}

static int plan_dissoc_all_domain(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        const char *domain;
        if (arg_text(f, "domain", &domain, err) < 0)
                return -1;
        return plan_remove_everywhere(r, "domains", domain, domain, err);
}

/* The groups' lists show a project as "domain/name". */
static int plan_dissoc_all_group(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *p = NULL;
        const char *gid;

        if (arg_text(f, "user_group", &gid, err) < 0)
                return -1;
        if (!api_may_call(r->c, "POST", ACCESS_ROUTE))
                return tess_err(err, EACCES, "your role (%s) may not change who may use a resource group",
                                role_to_string(r->c->who.role));
        if (DBQ(r->c->m->db, "SELECT domain_name || '/' || name FROM projects WHERE id = ?", &p, err, DB_TEXT(gid)) <
            0)
                return -1;
        if (!p->nrows)
                return tess_err(err, ENOENT, "project '%s' not found", gid);
        return plan_remove_everywhere(r, "projects", db_get(p, 0, 0), gid, err);
}

/* alias_image(alias, target, architecture): target is a reference as
 * session create takes it. */
static int plan_alias_image(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *img = NULL;
        const char *alias, *target, *arch = json_string_value(json_object_get(f->args, "architecture"));
        struct api_ctx *c = r->c;

        if (arg_text(f, "alias", &alias, err) < 0 || arg_text(f, "target", &target, err) < 0)
                return -1;
        if (!api_may_call(c, "POST", "/admin/image-aliases"))
                return tess_err(err, EACCES, "your role (%s) may not create image aliases",
                                role_to_string(c->who.role));
        if (session_image_resolve(c->m, target, arch ?: "x86_64", c->who.domain, &IMAGE_VIEWER_OF(c, c->who.user_id),
                                  &img, err) < 0)
                return -1;
        add_step(r, "POST", "/admin/image-aliases", NULL,
                 json_pack("{s:s, s:s}", "alias", alias, "image_id", db_getn(img, 0, "id")), NULL);
        return 0;
}

/* rescan_images(registry): that registry, or (null) every one. */
static int plan_rescan(struct run *r, const struct gql_field *f, struct tess_error **err)
{
        const char *registry = json_string_value(json_object_get(f->args, "registry"));
        json_t *all, *g;
        int64_t total;
        size_t i;

        if (registry) {
                add_step(r, "POST", "/admin/container-registries/{name}/rescan", registry, NULL, NULL);
                return 0;
        }
        if (admin_list_of(r->c, "/admin/container-registries", NULL, MAX_STEPS, 0, &all, &total, err) < 0)
                return -1;
        json_array_foreach(all, i, g)
                add_step(r, "POST", "/admin/container-registries/{name}/rescan",
                         json_string_value(json_object_get(g, "name")), NULL, NULL);
        json_decref(all);
        if (!r->n)
                return tess_err(err, ENOENT, "no container registry is registered (POST /admin/container-registries)");
        return 0;
}

static const struct mutation mutations[] = {
        { "create_keypair", "CreateKeyPair", plan_create_keypair, "keypair" },
        { "modify_keypair", "ModifyKeyPair", plan_modify_keypair },
        { "delete_keypair", "DeleteKeyPair", plan_delete_keypair },
        { "create_user", "CreateUser", plan_create_user, "user" },
        { "modify_user", "ModifyUser", plan_modify_user },
        { "delete_user", "DeleteUser", plan_delete_user },
        { "purge_user", "PurgeUser", plan_purge_user_checked },
        { "create_domain", "CreateDomain", plan_create_domain, "domain" },
        { "modify_domain", "ModifyDomain", plan_modify_domain },
        { "delete_domain", "DeleteDomain", plan_delete_domain },
        { "purge_domain", "PurgeDomain", plan_purge_domain },
        { "create_group", "CreateGroup", plan_create_group, "group" },
        { "modify_group", "ModifyGroup", plan_modify_group },
        { "delete_group", "DeleteGroup", plan_delete_group },
        { "purge_group", "PurgeGroup", plan_purge_group },
        { "create_keypair_resource_policy", "CreateKeyPairResourcePolicy", plan_create_policy, "resource_policy" },
        { "modify_keypair_resource_policy", "ModifyKeyPairResourcePolicy", plan_modify_policy },
        { "delete_keypair_resource_policy", "DeleteKeyPairResourcePolicy", plan_delete_policy },
        { "create_scaling_group", "CreateScalingGroup", plan_create_sgroup, "scaling_group" },
        { "modify_scaling_group", "ModifyScalingGroup", plan_modify_sgroup },
        { "delete_scaling_group", "DeleteScalingGroup", plan_delete_sgroup },
        { "associate_scaling_group_with_domain", "AssociateScalingGroupWithDomain", plan_assoc_domain },
        { "disassociate_scaling_group_with_domain", "DisassociateScalingGroupWithDomain", plan_dissoc_domain },
        { "disassociate_all_scaling_groups_with_domain", "DisassociateAllScalingGroupsWithDomain",
          plan_dissoc_all_domain },
        { "associate_scaling_group_with_user_group", "AssociateScalingGroupWithUserGroup", plan_assoc_group },
        { "disassociate_scaling_group_with_user_group", "DisassociateScalingGroupWithUserGroup", plan_dissoc_group },
        { "disassociate_all_scaling_groups_with_group", "DisassociateAllScalingGroupsWithGroup",
          plan_dissoc_all_group },
        { "alias_image", "AliasImage", plan_alias_image },
        { "dealias_image", "DealiasImage", plan_dealias_image },
        { "rescan_images", "RescanImages", plan_rescan, .task = true },
};

/* ---- running ---- */

static void finish(struct api_ctx *c, void *data)
{
        struct run *r = data;
        json_t *payload = json_pack("{s:s, s:b, s:s}", "__typename", r->mu->type, "ok", r->ok, "msg",
                                    r->msg ? r->msg : r->ok ? "success" : "failed");
        if (r->mu->object_key)
                json_object_set(payload, r->mu->object_key, r->object && r->ok ? r->object : json_null());
        if (r->mu->task)
                json_object_set(payload, "task_id", r->task_id && r->ok ? r->task_id : json_null());
        r->done(c, payload, NULL, r->data);
        run_free(r);
}

/* A step's answer: a refusal ends the mutation (ok false, its message). */
static bool step_done(struct api_ctx *c UNUSED, size_t i, unsigned status, json_t *answer, void *data)
{
        struct run *r = data;

        if (status >= 400) {
                const char *title = json_string_value(json_object_get(answer, "title"));
                r->ok = false;
                free(r->msg);
                r->msg = xstrdup(title ? title : "refused");
                return false;
        }
        if (r->object_path[i]) {
                struct tess_error *err = NULL;
                json_decref(r->object);
                if (gql_admin_object(r->c, r->object_path[i], answer, &r->object, &err) < 0) {
                        r->object = json_null(); /* made, but not read back: say so */
                        free(r->msg);
                        r->msg = xasprintf("done, but reading it back failed: %s", err->msg);
                        tess_error_free(err);
                }
                json_t *secret = json_object_get(answer, "secret_key"); /* shown once, at creation */
                if (secret && json_object_get(r->object, "secret_key"))
                        json_object_set(r->object, "secret_key", secret);
        }
        if (json_object_get(answer, "task_id")) {
                json_decref(r->task_id);
                r->task_id = json_incref(json_object_get(answer, "task_id"));
        }
        return true;
}

void gql_mutate(struct api_ctx *c, const struct gql_field *f, gql_mutation_done_fn done, void *data)
{
        const struct mutation *mu = NULL;
        struct tess_error *err = NULL;

        for (size_t i = 0; i < ARRAY_SIZE(mutations) && !mu; i++)
                if (streq(mutations[i].name, f->name))
                        mu = &mutations[i];
        if (!mu) {
                tess_err(&err, ENOENT, "Cannot query field \"%s\" on type \"Mutations\".", f->name);
                return done(c, NULL, err, data);
        }
        struct run *r = xcalloc(1, sizeof(*r));
        r->c = c;
        r->mu = mu;
        r->ok = true;
        r->done = done;
        r->data = data;
        if (mu->plan(r, f, &err) < 0) {
                if (err->code == EPROTO) {
                        run_free(r);
                        return done(c, NULL, err, data);
                }
                r->ok = false;
                r->msg = xstrdup(err->msg);
                tess_error_free(err);
                drop_steps(r); /* no step runs */
        }
        api_subcall_steps(c, r->steps, r->n, step_done, finish, run_free, r);
}
