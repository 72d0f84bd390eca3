/* cmd_admin.c - `tessera admin <entity> <verb>`: one generic command over
 * Tessera's admin REST routes (docs/design/admin-api.md).
 *
 * Each collection is a row of `entities[]`: its path, the field its key
 * names, the verbs it has, one option table mapping flags to JSON fields
 * (each option says for which verbs it counts, and whether it goes to the
 * body or the query string) and the columns of its list.  The verbs are
 * the rows of `verbs[]`: method, whether they act on the collection or on
 * /{key}, a path suffix, and how to print the answer.  Adding a field is
 * adding an option row; adding a collection is adding an entity row. */
#include "common/compat.h"

#include "common/buf.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/task_follow.h"

enum {
        V_CREATE = 1 << 0,
        V_LIST = 1 << 1,
        V_SHOW = 1 << 2,
        V_UPDATE = 1 << 3,
        V_DELETE = 1 << 4,
        V_MEMBERS = 1 << 5,
        V_ADD_MEMBER = 1 << 6,
        V_REMOVE_MEMBER = 1 << 7,
        V_ALLOW = 1 << 8,
        V_DISALLOW = 1 << 9,
        V_FORGET = 1 << 10,
        V_RESCAN = 1 << 11,
};
#define V_CU (V_CREATE | V_UPDATE)
#define V_CRUD (V_CREATE | V_LIST | V_SHOW | V_UPDATE | V_DELETE)
#define V_MEMBER_VERBS (V_MEMBERS | V_ADD_MEMBER | V_REMOVE_MEMBER)
#define V_ON_KEY (V_SHOW | V_UPDATE | V_DELETE | V_MEMBER_VERBS | V_FORGET | V_RESCAN)

enum verb_target {
        ON_COLLECTION, /* /admin/<things> */
        ON_KEY,        /* /admin/<things>/{key}<suffix> */
        ON_EACH_KEY,   /* the same, once for each key given */
};

enum verb_print {
        PRINT_OBJECT,
        PRINT_LIST,
        PRINT_DELETED,
        PRINT_FORGOTTEN,
};

struct admin_verb {
        const char *name, *alias;
        unsigned bit;
        const char *method;
        enum verb_target target;
        const char *suffix;     /* after /{key} */
        const char *rest_field; /* the arguments after the key: a list at this body path */
        const char *rest_meta;  /* and their synopsis */
        enum verb_print print;
        const struct column *columns; /* instead of the entity's */
        const char *help;
        /* instead of one request printed: run the verb on path (its exit code) */
        int (*run)(const char *path, const struct cli_args *a);
};

static int registry_rescan_run(const char *path, const struct cli_args *a);

enum key_kind {
        KEY_FIELD,     /* create puts the key into key_field */
        KEY_IMAGE_REF, /* NAME:TAG, split into name and tag */
};

struct admin_entity {
        const char *name, *alias;
        const char *path;
        const char *key_field; /* the body field create's positional fills */
        const char *key_meta;  /* "EMAIL" */
        enum key_kind key_kind;
        bool create_key_optional;
        unsigned verbs;
        const struct cli_opt *opts;
        const struct column *columns;
        const char *help;
};

static const struct column member_columns[] = {
        { "EMAIL", "email", COL_TEXT },
        { "ROLE", "role", COL_TEXT },
        { "USER ID", "user_id", COL_TEXT },
        {},
};

static const struct admin_verb verbs[] = {
        { "create", NULL, V_CREATE, "POST", ON_COLLECTION, NULL, NULL, NULL, PRINT_OBJECT, NULL, "create one" },
        { "list", "ls", V_LIST, "GET", ON_COLLECTION, NULL, NULL, NULL, PRINT_LIST, NULL, "list them" },
        { "show", "info", V_SHOW, "GET", ON_KEY, NULL, NULL, NULL, PRINT_OBJECT, NULL, "show one" },
        { "update", NULL, V_UPDATE, "PATCH", ON_KEY, NULL, NULL, NULL, PRINT_OBJECT, NULL,
          "change the fields given" },
        { "delete", "rm", V_DELETE, "DELETE", ON_EACH_KEY, NULL, NULL, NULL, PRINT_DELETED, NULL,
          "delete one or more" },
        { "members", NULL, V_MEMBERS, "GET", ON_KEY, "/members", NULL, NULL, PRINT_LIST, member_columns,
          "list the members" },
        { "add-member", NULL, V_ADD_MEMBER, "POST", ON_KEY, "/members", "add", "EMAIL...", PRINT_LIST,
          member_columns, "add users (by e-mail) as members" },
        { "remove-member", NULL, V_REMOVE_MEMBER, "POST", ON_KEY, "/members", "remove", "EMAIL...", PRINT_LIST,
          member_columns, "remove members (by e-mail)" },
        { "allow", NULL, V_ALLOW, "POST", ON_KEY, "/access", NULL, NULL, PRINT_OBJECT, NULL,
          "let domains, projects or keypairs use the group" },
        { "disallow", NULL, V_DISALLOW, "POST", ON_KEY, "/access", NULL, NULL, PRINT_OBJECT, NULL,
          "take that back" },
        { "forget", "rm", V_FORGET, "DELETE", ON_EACH_KEY, NULL, NULL, NULL, PRINT_FORGOTTEN, NULL,
          "forget images: no longer offered (their registry keeps them; a rescan brings them back)" },
        { "rescan", NULL, V_RESCAN, "POST", ON_KEY, "/rescan", NULL, NULL, PRINT_OBJECT, NULL,
          "register the images of the registry's catalog; follows the task to its end", registry_rescan_run },
};

/* ---- option tables: flag -> JSON field, per verb ---- */

#define DESCRIPTION_OPT { "description", 0, OPT_STR, DEST_BODY, "description", V_CU, 0, "TEXT", "description" }
#define ACTIVE_OPT                                                                                   \
        { "active", 0, OPT_BOOL, DEST_BODY, "is_active", V_CU, 0, "true|false",                      \
          "whether it may be used (default true)" }
#define TOTAL_OPT                                                                                    \
        { "total", 0, OPT_SLOTS, DEST_BODY, "total_resource_slots", V_CU, 0, "SLOT=VALUE",           \
          "resource limit, repeatable: --total cpu=4 --total mem=8g ('none': unlimited)" }

#define VFOLDER_HOSTS_OPT                                                                            \
        { "vfolder-hosts", 0, OPT_JSON, DEST_BODY, "allowed_vfolder_hosts", V_CU, 0, "JSON",           \
          "storage hosts and what may be done on them: '{\"local\": [\"create-vfolder\", ...]}'" }
#define VFOLDER_LIMIT_OPTS                                                                           \
        { "max-vfolder-count", 0, OPT_INT, DEST_BODY, "max_vfolder_count", V_CU, 0, "N",            \
          "folders one owner may have, trash included (0: unlimited)" },                            \
        { "max-quota-scope-size", 0, OPT_STR, DEST_BODY, "max_quota_scope_size", V_CU, 0, "SIZE",   \
          "bytes the owner's folders may hold on a host, e.g. 100g (0: unlimited)" }

static const struct cli_opt domain_opts[] = {
        DESCRIPTION_OPT,
        ACTIVE_OPT,
        TOTAL_OPT,
        { "allowed-registry", 0, OPT_LIST, DEST_BODY, "allowed_docker_registries", V_CU, 0, "REGISTRY",
          "a registry its images may come from, repeatable" },
        VFOLDER_HOSTS_OPT,
        {},
};

static const struct cli_opt project_opts[] = {
        { "domain", 'd', OPT_STR, DEST_BODY, "domain", V_CREATE, 0, "DOMAIN",
          "its domain (default: yours)" },
        { "domain", 'd', OPT_STR, DEST_QUERY, "domain", V_LIST | V_ON_KEY, 0, "DOMAIN",
          "the domain the project name is in (default: yours)" },
        DESCRIPTION_OPT,
        ACTIVE_OPT,
        TOTAL_OPT,
        VFOLDER_HOSTS_OPT,
        VFOLDER_LIMIT_OPTS,
        {},
};

static const struct cli_opt user_opts[] = {
        { "password-stdin", 0, OPT_STDIN, DEST_BODY, "password", V_CU, 0, NULL,
          "read the password (8 characters or more) from standard input" },
        { "password", 0, OPT_STR, DEST_BODY, "password", V_CU, 0, "PASSWORD",
          "the password (visible to other local users: prefer --password-stdin)" },
        { "username", 0, OPT_STR, DEST_BODY, "username", V_CU, 0, "NAME", "user name (default: the e-mail)" },
        { "full-name", 0, OPT_STR, DEST_BODY, "full_name", V_CU, 0, "NAME", "full name" },
        DESCRIPTION_OPT,
        { "role", 0, OPT_STR, DEST_BODY, "role", V_CU, 0, "ROLE", "superadmin, admin, user (default) or monitor" },
        { "status", 0, OPT_STR, DEST_BODY, "status", V_CU, 0, "STATUS", "active (default) or inactive" },
        { "need-password-change", 0, OPT_BOOL, DEST_BODY, "need_password_change", V_CU, 0, "true|false",
          "ask for a new password at the next login" },
        TOTAL_OPT,
        { "domain", 'd', OPT_STR, DEST_BODY, "domain", V_CREATE, 0, "DOMAIN", "its domain (default: yours)" },
        { "project", 'p', OPT_LIST, DEST_BODY, "projects", V_CREATE, 0, "PROJECT",
          "a project to join, repeatable (default: default)" },
        { "resource-policy", 0, OPT_STR, DEST_BODY, "resource_policy", V_CREATE, 0, "POLICY",
          "policy of its main keypair (default: default)" },
        {},
};

static const struct cli_opt keypair_opts[] = {
        { "user", 'u', OPT_STR, DEST_BODY, "user", V_CREATE, 0, "EMAIL", "whose keypair (default: yours)" },
        { "user", 'u', OPT_STR, DEST_QUERY, "user", V_LIST, 0, "EMAIL", "only this user's keypairs" },
        { "resource-policy", 0, OPT_STR, DEST_BODY, "resource_policy", V_CU, 0, "POLICY",
          "keypair resource policy (default: default)" },
        ACTIVE_OPT,
        { "main", 0, OPT_BOOL, DEST_BODY, "is_main", V_CU, 0, "true|false", "make it the user's main keypair" },
        { "rate-limit", 0, OPT_INT, DEST_BODY, "rate_limit", V_CU, 0, "N",
          "requests per rate-limit window (0: unlimited)" },
        { "secret-key", 0, OPT_STR, DEST_BODY, "secret_key", V_CREATE, 0, "KEY",
          "the secret key (40 characters; default: generated; admins only)" },
        { "password-stdin", 0, OPT_STDIN, DEST_BODY, "password", V_CREATE, 0, NULL,
          "read your password from standard input: a user creating its own keypair must give it" },
        {},
};

static const struct cli_opt policy_opts[] = {
        TOTAL_OPT,
        { "max-concurrent-sessions", 0, OPT_INT, DEST_BODY, "max_concurrent_sessions", V_CU, 0, "N",
          "sessions running at once (0: unlimited)" },
        { "max-pending-count", 0, OPT_INT, DEST_BODY, "max_pending_session_count", V_CU, OPT_NULLABLE, "N",
          "sessions waiting at once ('null': unlimited)" },
        { "max-pending-slots", 0, OPT_SLOTS, DEST_BODY, "max_pending_session_resource_slots", V_CU, OPT_NULLABLE,
          "SLOT=VALUE", "resources waiting at once, repeatable ('null': unlimited)" },
        { "max-containers-per-session", 0, OPT_INT, DEST_BODY, "max_containers_per_session", V_CU, 0, "N",
          "largest cluster size" },
        { "idle-timeout", 0, OPT_INT, DEST_BODY, "idle_timeout", V_CU, 0, "SECONDS",
          "terminate idle sessions after this long (0: never)" },
        { "max-session-lifetime", 0, OPT_INT, DEST_BODY, "max_session_lifetime", V_CU, 0, "SECONDS",
          "terminate sessions after this long (0: never)" },
        VFOLDER_HOSTS_OPT,
        VFOLDER_LIMIT_OPTS,
        { "max-customized-image-count", 0, OPT_INT, DEST_BODY, "max_customized_image_count", V_CU, 0, "N",
          "private images (session commits) one user may have (0: unlimited)" },
        { "max-keypairs-per-user", 0, OPT_INT, DEST_BODY, "max_keypairs_per_user", V_CU, 0, "N",
          "keypairs one user may hold, counted when one is created (0: unlimited)" },
        { "allow-user-keypairs", 0, OPT_BOOL, DEST_BODY, "allow_user_keypairs", V_CU, 0, "true|false",
          "may users create their own keypairs (with their password)" },
        { "max-session-priority", 0, OPT_INT, DEST_BODY, "max_session_priority", V_CU, 0, "N",
          "highest session priority a user (not an admin) may ask for, 0 to 100" },
        { "max-container-disk", 0, OPT_STR, DEST_BODY, "max_container_disk", V_CU, 0, "SIZE",
          "what a session's containers may write outside their folders, e.g. 20g (0: the node's container_disk)" },
        {},
};

static const struct cli_opt rgroup_opts[] = {
        DESCRIPTION_OPT,
        ACTIVE_OPT,
        { "public", 0, OPT_BOOL, DEST_BODY, "is_public", V_CU, 0, "true|false", "open to every domain" },
        { "scheduler", 0, OPT_STR, DEST_BODY, "scheduler", V_CU, 0, "NAME", "fifo, lifo, drf or fair-share" },
        { "scheduler-opts", 0, OPT_JSON, DEST_BODY, "scheduler_opts", V_CU, 0, "JSON",
          "scheduler options (a JSON object)" },
        { "wsproxy-addr", 0, OPT_STR, DEST_BODY, "wsproxy_addr", V_CU, 0, "URL", "address of its app proxy" },
        { "domain", 'd', OPT_LIST, DEST_BODY, "add.domains", V_ALLOW, 0, "DOMAIN", "a domain, repeatable" },
        { "project", 'p', OPT_LIST, DEST_BODY, "add.projects", V_ALLOW, 0, "DOMAIN/PROJECT",
          "a project (domain/name or id), repeatable" },
        { "keypair", 'k', OPT_LIST, DEST_BODY, "add.keypairs", V_ALLOW, 0, "ACCESS_KEY", "a keypair, repeatable" },
        { "domain", 'd', OPT_LIST, DEST_BODY, "remove.domains", V_DISALLOW, 0, "DOMAIN", "a domain, repeatable" },
        { "project", 'p', OPT_LIST, DEST_BODY, "remove.projects", V_DISALLOW, 0, "DOMAIN/PROJECT",
          "a project (domain/name or id), repeatable" },
        { "keypair", 'k', OPT_LIST, DEST_BODY, "remove.keypairs", V_DISALLOW, 0, "ACCESS_KEY",
          "a keypair, repeatable" },
        {},
};

static const struct cli_opt preset_opts[] = {
        { "resource", 'r', OPT_SLOTS, DEST_BODY, "resource_slots", V_CU, 0, "SLOT=VALUE",
          "resources, repeatable: -r cpu=2 -r mem=4g (required)" },
        { "shared-memory", 0, OPT_STR, DEST_BODY, "shared_memory", V_CU, OPT_NULLABLE, "SIZE",
          "shared memory, like 64m ('null': none)" },
        { "resource-group", 0, OPT_STR, DEST_BODY, "resource_group", V_CU, OPT_NULLABLE, "NAME",
          "only in this resource group ('null': all)" },
        {},
};

static const struct cli_opt image_opts[] = {
        { "architecture", 0, OPT_STR, DEST_BODY, "architecture", V_CREATE, 0, "ARCH", "x86_64 (default), aarch64" },
        { "registry", 0, OPT_STR, DEST_BODY, "registry", V_CU, 0, "REGISTRY", "registry it comes from" },
        { "digest", 0, OPT_STR, DEST_BODY, "digest", V_CU, 0, "DIGEST", "content digest (sha256:...)" },
        { "label", 'l', OPT_MAP, DEST_BODY, "labels", V_CU, 0, "KEY=VALUE", "image label, repeatable" },
        { "min", 0, OPT_SLOTS, DEST_BODY, "min_resources", V_CU, 0, "SLOT=VALUE",
          "least resources a session needs, repeatable" },
        { "max", 0, OPT_SLOTS, DEST_BODY, "max_resources", V_CU, 0, "SLOT=VALUE",
          "most resources a session may have, repeatable" },
        { "size", 0, OPT_INT, DEST_BODY, "size_bytes", V_CU, 0, "BYTES", "image size" },
        { "hidden", 0, OPT_BOOL, DEST_BODY, "hidden", V_CU, 0, "true|false",
          "hidden images are not listed to users and refused for new sessions" },
        {},
};

static const struct cli_opt registry_opts[] = {
        { "url", 0, OPT_STR, DEST_BODY, "url", V_CU, 0, "URL",
          "where its API is: http://HOST[:PORT] or https://HOST[:PORT] (required)" },
        { "project", 0, OPT_STR, DEST_BODY, "project", V_CU, 0, "PREFIX",
          "scan only the repositories under this prefix ('': all)" },
        { "username", 0, OPT_STR, DEST_BODY, "username", V_CU, 0, "NAME", "user name for the registry" },
        { "password-stdin", 0, OPT_STDIN, DEST_BODY, "password", V_CU, 0, NULL,
          "read the registry password from standard input (never shown again)" },
        { "password", 0, OPT_STR, DEST_BODY, "password", V_CU, 0, "PASSWORD",
          "the registry password (visible to other local users: prefer --password-stdin)" },
        {},
};

static const struct cli_opt image_alias_opts[] = {
        { "image-id", 0, OPT_STR, DEST_BODY, "image_id", V_CREATE, 0, "ID", "the image it names (required)" },
        {},
};

static const struct cli_opt agent_opts[] = {
        { "schedulable", 0, OPT_BOOL, DEST_BODY, "schedulable", V_UPDATE, 0, "true|false",
          "whether new sessions may go there" },
        { "resource-group", 0, OPT_STR, DEST_BODY, "resource_group", V_UPDATE, 0, "NAME",
          "the resource group it serves" },
        {},
};

static const struct cli_opt audit_opts[] = {
        { "user", 'u', OPT_STR, DEST_QUERY, "user", V_LIST, 0, "EMAIL", "only this user's requests" },
        { "since", 0, OPT_STR, DEST_QUERY, "since", V_LIST, 0, "TIME", "only from this time (ISO 8601)" },
        { "until", 0, OPT_STR, DEST_QUERY, "until", V_LIST, 0, "TIME", "only before this time (ISO 8601)" },
        { "action", 0, OPT_STR, DEST_QUERY, "action", V_LIST, 0, "ACTION", "only this action" },
        {},
};

/* ---- list columns ---- */

static const struct column domain_columns[] = {
        { "NAME", "name", COL_TEXT },
        { "ACTIVE", "is_active", COL_TEXT },
        { "TOTAL RESOURCES", "total_resource_slots", COL_SLOTS },
        { "DESCRIPTION", "description", COL_TEXT },
        { "CREATED", "created_at", COL_TIME },
        {},
};

static const struct column project_columns[] = {
        { "NAME", "name", COL_TEXT },
        { "DOMAIN", "domain", COL_TEXT },
        { "ACTIVE", "is_active", COL_TEXT },
        { "MEMBERS", "members_count", COL_TEXT },
        { "TOTAL RESOURCES", "total_resource_slots", COL_SLOTS },
        { "ID", "id", COL_TEXT },
        {},
};

static const struct column user_columns[] = {
        { "EMAIL", "email", COL_TEXT },
        { "ROLE", "role", COL_TEXT },
        { "STATUS", "status", COL_TEXT },
        { "DOMAIN", "domain", COL_TEXT },
        { "PROJECTS", "projects", COL_TEXT },
        { "FULL NAME", "full_name", COL_TEXT },
        {},
};

static const struct column keypair_columns[] = {
        { "ACCESS KEY", "access_key", COL_TEXT },
        { "USER", "email", COL_TEXT },
        { "POLICY", "resource_policy", COL_TEXT },
        { "ACTIVE", "is_active", COL_TEXT },
        { "MAIN", "is_main", COL_TEXT },
        { "RATE LIMIT", "rate_limit", COL_TEXT },
        { "LAST USED", "last_used", COL_TIME },
        {},
};

static const struct column policy_columns[] = {
        { "NAME", "name", COL_TEXT },
        { "TOTAL RESOURCES", "total_resource_slots", COL_SLOTS },
        { "MAX SESSIONS", "max_concurrent_sessions", COL_TEXT },
        { "MAX PENDING", "max_pending_session_count", COL_TEXT },
        { "MAX CONTAINERS", "max_containers_per_session", COL_TEXT },
        { "IDLE TIMEOUT", "idle_timeout", COL_TEXT },
        {},
};

static const struct column rgroup_columns[] = {
        { "NAME", "name", COL_TEXT },
        { "ACTIVE", "is_active", COL_TEXT },
        { "PUBLIC", "is_public", COL_TEXT },
        { "SCHEDULER", "scheduler", COL_TEXT },
        { "DOMAINS", "domains", COL_TEXT },
        { "PROJECTS", "projects", COL_TEXT },
        { "KEYPAIRS", "keypairs", COL_TEXT },
        {},
};

static const struct column preset_columns[] = {
        { "NAME", "name", COL_TEXT },
        { "RESOURCES", "resource_slots", COL_SLOTS },
        { "SHARED MEMORY", "shared_memory", COL_TEXT },
        { "RESOURCE GROUP", "resource_group", COL_TEXT },
        {},
};

static const struct column image_columns[] = {
        { "NAME", "name", COL_TEXT },
        { "TAG", "tag", COL_TEXT },
        { "ARCH", "architecture", COL_TEXT },
        { "MIN RESOURCES", "min_resources", COL_SLOTS },
        { "ID", "id", COL_SHORTID },
        {},
};

static const struct column registry_columns[] = {
        { "NAME", "name", COL_TEXT },
        { "URL", "url", COL_TEXT },
        { "PROJECT", "project", COL_TEXT },
        { "USERNAME", "username", COL_TEXT },
        { "IMAGES", "images", COL_TEXT },
        { "LAST SCAN", "last_scan_at", COL_TIME },
        {},
};

static const struct column image_alias_columns[] = {
        { "ALIAS", "alias", COL_TEXT },
        { "IMAGE", "image", COL_TEXT },
        { "ARCH", "architecture", COL_TEXT },
        { "IMAGE ID", "image_id", COL_SHORTID },
        {},
};

static const struct column agent_columns[] = {
        { "ID", "id", COL_TEXT },
        { "STATUS", "status", COL_TEXT },
        { "SCHEDULABLE", "schedulable", COL_TEXT },
        { "RESOURCE GROUP", "resource_group", COL_TEXT },
        { "AVAILABLE", "available_slots", COL_SLOTS },
        { "OCCUPIED", "occupied_slots", COL_SLOTS },
        { "LAST HEARTBEAT", "last_heartbeat", COL_TIME },
        {},
};

static const struct column audit_columns[] = {
        { "TIME", "ts", COL_TIME },
        { "USER", "user_email", COL_TEXT },
        { "METHOD", "method", COL_TEXT },
        { "PATH", "path", COL_TEXT },
        { "ACTION", "action", COL_TEXT },
        { "TARGET", "target", COL_TEXT },
        { "STATUS", "status", COL_TEXT },
        {},
};

static const struct admin_entity entities[] = {
        { "domain", NULL, "/admin/domains", "name", "NAME", KEY_FIELD, false, V_CRUD, domain_opts, domain_columns,
          "Domains: the top tenancy level; users and projects belong to one." },
        { "project", NULL, "/admin/projects", "name", "PROJECT", KEY_FIELD, false, V_CRUD | V_MEMBER_VERBS,
          project_opts, project_columns, "Projects (groups) of a domain and their members." },
        { "user", NULL, "/admin/users", "email", "EMAIL", KEY_FIELD, false, V_CRUD, user_opts, user_columns,
          "Users; creating one also creates its main keypair." },
        { "keypair", NULL, "/admin/keypairs", "access_key", "ACCESS_KEY", KEY_FIELD, true, V_CRUD, keypair_opts,
          keypair_columns, "Keypairs (access key + secret key) of users." },
        { "policy", "keypair-policy", "/admin/keypair-policies", "name", "NAME", KEY_FIELD, false, V_CRUD,
          policy_opts, policy_columns, "Keypair resource policies: what a keypair may use at once." },
        { "resource-group", "rg", "/admin/resource-groups", "name", "NAME", KEY_FIELD, false,
          V_CRUD | V_ALLOW | V_DISALLOW, rgroup_opts, rgroup_columns,
          "Resource groups (scaling groups) of agents, and who may use them." },
        { "preset", NULL, "/admin/presets", "name", "NAME", KEY_FIELD, false, V_CRUD, preset_opts, preset_columns,
          "Resource presets offered to users." },
        { "image", NULL, "/admin/images", NULL, "NAME:TAG", KEY_IMAGE_REF, false,
          V_CREATE | V_LIST | V_SHOW | V_UPDATE | V_FORGET, image_opts, image_columns,
          "Registered images (key: NAME:TAG or id)." },
        { "image-alias", NULL, "/admin/image-aliases", "alias", "ALIAS", KEY_FIELD, false,
          V_CREATE | V_LIST | V_SHOW | V_DELETE, image_alias_opts, image_alias_columns,
          "Image aliases: short names sessions may use for an image." },
        { "registry", NULL, "/admin/container-registries", "name", "NAME", KEY_FIELD, false, V_CRUD | V_RESCAN,
          registry_opts, registry_columns, "Container registries whose catalogs are scanned for images." },
        { "agent", NULL, "/admin/agents", "id", "ID", KEY_FIELD, false, V_LIST | V_SHOW | V_UPDATE | V_DELETE,
          agent_opts, agent_columns, "Agents (nodes); they register themselves." },
        { "audit-log", NULL, "/admin/audit-log", NULL, NULL, KEY_FIELD, false, V_LIST, audit_opts, audit_columns,
          "The audit log of requests, newest first." },
};

struct admin_call {
        const struct admin_entity *e;
        const struct admin_verb *v;
};

/* ---- running a verb ---- */

/* Create's key into the body: the key field, or an image's name and tag. */
static void key_into_body(const struct admin_entity *e, const char *key, json_t *body)
{
        if (e->key_kind == KEY_IMAGE_REF) {
                const char *slash = strrchr(key, '/'), *colon = strrchr(key, ':');
                if (colon && (!slash || colon > slash)) {
                        json_object_set_new(body, "name", json_stringn(key, (size_t)(colon - key)));
                        json_object_set_new(body, "tag", json_string(colon + 1));
                } else {
                        json_object_set_new(body, "name", json_string(key));
                        json_object_set_new(body, "tag", json_string("latest"));
                }
        } else {
                json_object_set_new(body, e->key_field, json_string(key));
        }
}

struct admin_answer {
        const struct admin_call *ac;
        const char *key;
};

static void print_answer(const json_t *answer, const void *arg)
{
        const struct admin_answer *aa = arg;
        const struct admin_call *ac = aa->ac;

        switch (ac->v->print) {
        case PRINT_OBJECT: out_object(answer); break;
        case PRINT_DELETED: printf("%s '%s' deleted\n", ac->e->name, aa->key); break;
        case PRINT_FORGOTTEN: printf("%s '%s' forgotten\n", ac->e->name, aa->key); break;
        case PRINT_LIST: out_list(ac->v->columns ? ac->v->columns : ac->e->columns, answer); break;
        }
}

/* One request of the verb; key is NULL on the collection. */
static int admin_request(const struct admin_call *ac, struct cli_args *a, const char *key)
{
        _cleanup_(buf_release) struct buf path = BUF_INIT;
        bool has_body = streq(ac->v->method, "POST") || streq(ac->v->method, "PATCH");
        struct admin_answer aa = { ac, key };

        buf_puts(&path, ac->e->path);
        if (ac->v->target != ON_COLLECTION) {
                buf_putc(&path, '/');
                buf_percent_encode(&path, key);
        }
        if (ac->v->suffix)
                buf_puts(&path, ac->v->suffix);
        client_query(&path, a->query);
        if (ac->v->run)
                return ac->v->run(path.data, a);
        return cli_request(ac->v->method, path.data, has_body ? a->body : NULL, print_answer, &aa);
}

static int admin_run(struct cli_call *call)
{
        const struct admin_call *ac = call->leaf->data;
        struct cli_args *a = &call->args;
        int ret = CLI_EXIT_OK;

        if (ac->v->target == ON_EACH_KEY) {
                for (int i = 0; i < a->npos; i++)
                        if (admin_request(ac, a, a->pos[i]) != CLI_EXIT_OK)
                                ret = CLI_EXIT_ERROR;
                return ret;
        }
        if (ac->v->bit == V_CREATE && a->npos > 0)
                key_into_body(ac->e, a->pos[0], a->body);
        if (ac->v->rest_field) {
                json_t *rest = json_array();
                for (int i = 1; i < a->npos; i++)
                        json_array_append_new(rest, json_string(a->pos[i]));
                json_object_set_new(a->body, ac->v->rest_field, rest);
        }
        return admin_request(ac, a, ac->v->target == ON_COLLECTION ? NULL : a->pos[0]);
}

/* ---- registry rescan: start the task, follow it, print its result ---- */

static void print_rescan(const json_t *task)
{
        static const char *const counts[] = { "repositories", "images", "added", "updated", "unchanged",
                                              "error_count", NULL };
        const json_t *result = json_object_get(task, "result"), *v;
        size_t i;

        printf("status: %s\n", json_string_value(json_object_get(task, "status")) ?: "?");
        printf("message: %s\n", json_string_value(json_object_get(task, "message")) ?: "");
        for (const char *const *k = counts; *k; k++)
                if (json_is_integer(json_object_get(result, *k)))
                        printf("%s: %" JSON_INTEGER_FORMAT "\n", *k, json_integer_value(json_object_get(result, *k)));
        json_array_foreach(json_object_get(result, "errors"), i, v) {
                const char *tag = json_string_value(json_object_get(v, "tag"));
                printf("error: %s%s%s: %s\n", json_string_value(json_object_get(v, "repository")) ?: "?",
                       tag ? ":" : "", tag ? tag : "", json_string_value(json_object_get(v, "error")) ?: "");
        }
        json_array_foreach(json_object_get(result, "missing"), i, v)
                printf("missing: %s (%s) %s\n", json_string_value(json_object_get(v, "image")) ?: "?",
                       json_string_value(json_object_get(v, "architecture")) ?: "?",
                       json_string_value(json_object_get(v, "id")) ?: "?");
}

static int registry_rescan_run(const char *path, const struct cli_args *a UNUSED)
{
        struct tess_error *err = NULL;
        json_t *answer = NULL, *task = NULL;
        const char *id;
        int ret;

        if (client_json("POST", path, NULL, CLIENT_SIGNED, &answer, &err) < 0)
                return cli_fail(err);
        id = json_string_value(json_object_get(answer, "task_id"));
        if (!id) {
                json_decref(answer);
                return cli_error("the manager answered no task_id");
        }
        if (!arg_json)
                fprintf(stderr, "rescan: task %s\n", id);
        if (task_follow(id, "rescan", &task, &err) < 0) {
                json_decref(answer);
                return cli_fail(err);
        }
        if (arg_json)
                out_json(task);
        else
                print_rescan(task);
        ret = streq_ptr(json_string_value(json_object_get(task, "status")), "done") ? CLI_EXIT_OK : CLI_EXIT_ERROR;
        json_decref(task);
        json_decref(answer);
        return ret;
}

/* The entity's verbs as a table of leaves (args synopses allocated). */
static struct cli_leaf *entity_leaves(const struct admin_entity *e, struct admin_call *calls)
{
        struct cli_leaf *leaves = xcalloc(ARRAY_SIZE(verbs) + 1, sizeof(*leaves));
        size_t n = 0;

        for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
                const struct admin_verb *v = &verbs[i];
                struct cli_leaf *l = &leaves[n];
                if (!(e->verbs & v->bit))
                        continue;
                calls[n] = (struct admin_call){ e, v };
                *l = (struct cli_leaf){ .name = v->name, .alias = v->alias, .fn = admin_run, .verb = v->bit,
                                        .data = &calls[n] };
                l->help = xasprintf("%s (%s %s%s%s)", v->help, v->method, e->path,
                                    v->target == ON_COLLECTION ? "" : "/{key}", v->suffix ? v->suffix : "");
                l->opts[0] = e->opts;
                l->opts[1] = v->bit == V_LIST ? cli_page_opts : NULL;
                if (v->target == ON_COLLECTION && v->bit == V_CREATE) {
                        l->min_pos = e->create_key_optional ? 0 : 1;
                        l->max_pos = 1;
                        l->args = xasprintf(e->create_key_optional ? "[%s]" : "%s", e->key_meta);
                } else if (v->target == ON_COLLECTION) {
                        l->max_pos = 0;
                } else if (v->target == ON_EACH_KEY) {
                        l->min_pos = 1, l->max_pos = -1;
                        l->args = xasprintf("%s...", e->key_meta);
                } else if (v->rest_field) {
                        l->min_pos = 2, l->max_pos = -1;
                        l->args = xasprintf("%s %s", e->key_meta, v->rest_meta);
                } else {
                        l->min_pos = 1, l->max_pos = 1;
                        l->args = xstrdup(e->key_meta);
                }
                n++;
        }
        return leaves;
}

static void leaves_free(struct cli_leaf *leaves)
{
        for (struct cli_leaf *l = leaves; l->name; l++) {
                free((char *)l->args);
                free((char *)l->help);
        }
        free(leaves);
}

static void admin_help(FILE *f)
{
        fputs("usage: tessera admin <collection> <command> [options] [<args>]\n\n"
              "Administration over Tessera's /admin REST routes.\n\ncollections:\n",
              f);
        for (size_t i = 0; i < ARRAY_SIZE(entities); i++)
                fprintf(f, "  %-14s  %s\n", entities[i].name, entities[i].help);
        fprintf(f, "  %-14s  %s\n", "usage", "Resource usage per user, project or domain per day.");
        fputs("\ncommands: create, list (ls), show (info), update, delete (rm); project members, add-member,\n"
              "remove-member; resource-group allow, disallow; image forget (rm); registry rescan.\n"
              "Run 'tessera admin <collection> --help' for its commands, and\n"
              "'tessera admin <collection> <command> --help' for their options.\n",
              f);
}

int cmd_admin(int argc, char **argv)
{
        const struct admin_entity *e = NULL;

        if (argc < 2) {
                admin_help(stderr);
                return CLI_EXIT_USAGE;
        }
        if (streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "help")) {
                admin_help(stdout);
                return CLI_EXIT_OK;
        }
        if (streq(argv[1], "--json") && argc > 2) {
                arg_json = true;
                return cmd_admin(argc - 1, argv + 1);
        }
        if (streq(argv[1], "usage"))
                return cmd_admin_usage(argc - 1, argv + 1); /* cmd_usage.c */
        for (size_t i = 0; i < ARRAY_SIZE(entities); i++)
                if (streq(entities[i].name, argv[1]) || (entities[i].alias && streq(entities[i].alias, argv[1])))
                        e = &entities[i];
        if (!e)
                return cli_usage_error("tessera admin", "'%s' is not an admin collection", argv[1]);

        struct admin_call calls[ARRAY_SIZE(verbs)];
        struct cli_leaf *leaves = entity_leaves(e, calls);
        _cleanup_free_ char *prefix = xasprintf("tessera admin %s", e->name);
        _cleanup_free_ char *help = xasprintf("%s (%s)", e->help, e->path);
        int n = argc - 1, r;
        char **v = argv + 1; /* v[0]: the collection */

        /* a collection with one verb (audit-log) runs it without naming it */
        if (!leaves[1].name && (n < 2 || !(streq(v[1], leaves[0].name) || streq_ptr(v[1], leaves[0].alias))))
                r = cli_run_leaf(prefix, &leaves[0], n, v);
        else
                r = cli_run_group(prefix, help, leaves, n, v);
        leaves_free(leaves);
        return r;
}
