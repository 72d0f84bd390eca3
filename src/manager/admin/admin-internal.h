/* admin-internal.h - the table-driven CRUD engine behind /admin/...
 *
 * Each collection is a `struct entity`: its table, the fields it shows and
 * accepts (`struct field`: JSON name, column, type, flags), how its {key}
 * path parameter finds a row, which rows each role sees (SQL conditions
 * bound to the caller's domain or user id), which roles may write, what
 * keeps a row from being deleted, and optional hooks for what the table
 * cannot say (users' main keypair, keypair generation, access lists).
 *
 * The generic handlers (admin.c) list, show, create, update and delete any
 * entity; they find the entity of a request by its route's path prefix.
 * The body parser and the row-to-JSON writer live in admin_fields.c, the
 * visibility-checked queries in admin_rows.c, the entity tables and their
 * hooks in admin_<collection>.c.
 *
 * To add a collection: write its `struct entity` (fields, scope, roles),
 * list it in entities[] and add its CRUD() row to admin_routes[] (admin.c). */
#ifndef TESS_ADMIN_INTERNAL_H
#define TESS_ADMIN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/error.h"
#include "manager/api/api.h"
#include "manager/db/db.h"
#include "manager/vfolder/vfolder.h"

#define ADMIN_MAX_FIELDS 24
#define ADMIN_MAX_ARGS 32

/* Role bit masks for entity write permissions. */
#define ROLE_BIT(r) (1u << (r))
#define ROLES_SUPER ROLE_BIT(ROLE_SUPERADMIN)
#define ROLES_ADMINS (ROLE_BIT(ROLE_ADMIN) | ROLE_BIT(ROLE_SUPERADMIN))

#define ADMIN_NAME_HINT "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
#define ADMIN_SQL_DOMAIN "SELECT 1 FROM domains WHERE name = ?"
#define ADMIN_SQL_POLICY "SELECT 1 FROM keypair_resource_policies WHERE name = ?"
#define ADMIN_SQL_RGROUP "SELECT 1 FROM resource_groups WHERE name = ?"

/* Sessions that still hold or wait for resources. */
#define ADMIN_LIVE_SESSIONS "status NOT IN ('TERMINATED', 'CANCELLED', 'ERROR')"

enum field_type {
        FT_TEXT,   /* string: length bounds, choices or a validator */
        FT_INT,    /* JSON integer within [min, max] */
        FT_BOOL,   /* JSON boolean, stored as INTEGER 0/1 */
        FT_SLOTS,  /* resource slots, stored as JSON text of decimal strings */
        FT_OBJECT, /* JSON object, stored as text */
        FT_LIST,   /* JSON list of strings, stored as text */
        FT_SIZE,   /* byte size ("64m" or a number), BIGINT; shown as a decimal string */
        FT_TIME,   /* BIGINT microseconds, shown as ISO 8601 (never input) */
};

enum field_flags {
        FF_RO = 1 << 0,       /* shown, never accepted */
        FF_CREATE = 1 << 1,   /* accepted on create only */
        FF_WO = 1 << 2,       /* accepted, never shown */
        FF_REQUIRED = 1 << 3, /* required on create */
        FF_NULL = 1 << 4,     /* JSON null stores SQL NULL */
        FF_VIRTUAL = 1 << 5,  /* no column: consumed by the entity's hooks */
        FF_DOMAIN = 1 << 6,   /* a domain the caller must see; defaults to the caller's */
        FF_FINITE = 1 << 7,   /* FT_SLOTS: "Infinity" is refused */
};

struct field {
        const char *name;   /* JSON name */
        const char *column; /* table column (written; read as alias.column) */
        enum field_type type;
        unsigned flags;
        const char *expr;             /* SQL read instead of the column (joins, subqueries) */
        int64_t min, max;             /* FT_INT bounds; FT_TEXT/FT_LIST length (max 0: 256); FT_SIZE: min (0 too) */
        const char *const *choices;   /* FT_TEXT: the allowed values (NULL-terminated) */
        bool (*valid)(const char *s); /* FT_TEXT: validator ... */
        const char *hint;             /* ... and what it wants: "must be ..." */
        const char *ref;              /* "SELECT 1 FROM t WHERE c = ?": the value must exist (else 400) */
        char *(*encode)(const char *s); /* stored form of a text (password hash); caller frees */
        int (*check)(const json_t *v, struct tess_error **err); /* extra check of the JSON value */
};

/* Query filters of a list: ?param=value binds each `?` of sql. */
struct filter {
        const char *param;
        const char *sql;    /* " AND u.email = ?" */
        enum field_type type; /* FT_TEXT; FT_TIME for ISO 8601 values; FT_BOOL for true/false (bound 1/0) */
};

/* Delete refused (409) while `sql` (each ? bound to the primary key)
 * counts more than zero rows: "<noun> '<key>' <reason>". */
struct in_use {
        const char *sql;
        const char *reason;
};

/* Parsed body: for each field of the entity, whether it was given and its
 * value (a JSON value borrowed from the request body). */
struct admin_values {
        const struct entity *e;
        bool given[ADMIN_MAX_FIELDS];
        const json_t *json[ADMIN_MAX_FIELDS]; /* NULL when given as null */
        int n;                                /* number of fields given */
        const char *domain;                   /* FF_DOMAIN value (given or the caller's) */
        const char *encoded; /* the encode()d value of the field that has one (a password's hash), made
                              * off the loop before the write (admin.c), or NULL */
};

struct entity {
        const char *path;   /* "/admin/users": the routes it serves */
        const char *noun;   /* "user": messages and audit targets */
        const char *table;  /* "users" */
        const char *alias;  /* "u" */
        const char *from;   /* FROM clause with joins; default "table alias" */
        const char *pk;     /* primary key column */
        const char *key;    /* column the {key} path parameter names (default filter) */
        const char *label;  /* JSON field naming a row in audit targets */
        const char *order;  /* ORDER BY of lists */
        const char *conflict; /* 409 message of a create breaking a unique key; default
                               * "<noun> '<label>' already exists" */
        const struct field *fields; /* terminated by a zero row */
        const struct filter *filters;
        const struct in_use *in_use;
        /* Visibility: every `?` is bound to the caller's domain (admin,
         * monitor) or user id (user).  NULL domain_scope: admins and
         * monitors see all rows; NULL user_scope: users see none. */
        const char *domain_scope;
        const char *user_scope;
        unsigned create_roles, update_roles, delete_roles; /* ROLE_BIT masks */
        bool gen_id;      /* create: a new UUID in column "id" */
        bool created_at;  /* create: stamp created_at */
        bool modified_at; /* create and update: stamp modified_at */

        /* Hooks, all optional.  `rows`/`row` is the current row of the
         * entity's select (see admin_row_get), NULL on create. */
        int (*key_filter)(struct api_ctx *c, const char *key, struct buf *where, struct db_arg *args, int *nargs,
                          struct tess_error **err);
        int (*check_write)(struct api_ctx *c, const struct db_rows *rows, int row, const struct admin_values *v,
                           struct tess_error **err);
        /* Replaces the generic INSERT (inside the transaction); writes the
         * new row's primary key to ret_pk and may add fields to *ret_extra
         * (created as {}), shown once in the create answer. */
        int (*create)(struct api_ctx *c, const struct admin_values *v, char *ret_pk, size_t pk_len,
                      json_t *ret_extra, struct tess_error **err);
        /* After the INSERT or UPDATE, inside the transaction. */
        int (*after_write)(struct api_ctx *c, const char *pk, const struct admin_values *v,
                           struct tess_error **err);
        /* Extra fields of a shown row (access lists, memberships). */
        int (*decorate)(struct api_ctx *c, const struct db_rows *rows, int row, json_t *obj,
                        struct tess_error **err);
};

/* The entities (admin_*.c). */
extern const struct entity admin_domains, admin_projects, admin_users, admin_keypairs, admin_policies,
        admin_rgroups, admin_presets, admin_images, admin_image_aliases, admin_registries, admin_agents, admin_audit;

/* Handlers beyond the generic ones. */
void admin_members_list(struct api_ctx *c);   /* admin_projects.c */
void admin_members_change(struct api_ctx *c);
void admin_rgroup_access(struct api_ctx *c);  /* admin_rgroups.c */
void admin_registry_rescan(struct api_ctx *c); /* admin_registries.c */

/* ---- admin_fields.c ---- */

/* Parse a create (creating=true) or update body into *ret: unknown,
 * read-only, create-only (on update) and mistyped fields are -EINVAL naming
 * the field; references to things that do not exist are -EINVAL naming
 * them; required fields are checked on create; FF_DOMAIN fields default to
 * the caller's domain. */
int admin_parse(struct api_ctx *c, const struct entity *e, const json_t *body, bool creating,
                struct admin_values *ret, struct tess_error **err);
/* The given value of field `name`, or NULL (not given, or null). */
const json_t *admin_value(const struct admin_values *v, const char *name);
const char *admin_value_text(const struct admin_values *v, const char *name);
bool admin_value_given(const struct admin_values *v, const char *name);
/* Database argument of field i (stored form); *ret_owned gets what to free. */
struct db_arg admin_value_arg(const struct admin_values *v, int i, char **ret_owned);
/* The same for the field called name (which v must give). */
struct db_arg admin_value_arg_of(const struct admin_values *v, const char *name, char **ret_owned);

/* "SELECT alias.pk, <readable fields> FROM ..." */
void admin_select_sql(const struct entity *e, struct buf *b);
/* " FROM <from>" */
void admin_from_sql(const struct entity *e, struct buf *b);
/* A readable field of row `row` by JSON name (NULL if SQL NULL); "_pk" is the primary key. */
const char *admin_row_get(const struct entity *e, const struct db_rows *rows, int row, const char *name);
/* The JSON object of a row (readable fields only). */
json_t *admin_row_json(const struct entity *e, const struct db_rows *rows, int row);
/* Append `sql` to where, binding `value` to each of its `?`. */
void admin_where(struct buf *where, struct db_arg *args, int *nargs, const char *sql, struct db_arg value);
/* Does `sql` (every `?` bound to value) return a row?  1 yes, 0 no. */
int admin_exists(struct api_ctx *c, const char *sql, const char *value, struct tess_error **err);

/* ---- admin_rows.c ---- */

/* Find the row {key} names among those the caller sees: -ENOENT if none. */
int admin_find(struct api_ctx *c, const struct entity *e, const char *key, struct db_rows **ret,
               struct tess_error **err);
/* One page of the rows the caller sees, filtered by the entity's filters
 * (values from `filters`, an object of strings, or when NULL from the
 * query string), as a JSON array (*ret_items, caller owns) and the total
 * count. */
int admin_list_rows(struct api_ctx *c, const struct entity *e, const json_t *filters, int64_t limit, int64_t offset,
                    json_t **ret_items, int64_t *ret_total, struct tess_error **err);
/* Load a row by primary key (no visibility check). */
int admin_load(struct api_ctx *c, const struct entity *e, const char *pk, struct db_rows **ret,
               struct tess_error **err);
/* The JSON of a row with its decorations. */
int admin_show_json(struct api_ctx *c, const struct entity *e, const struct db_rows *rows, int row, json_t **ret,
                    struct tess_error **err);
/* Record "<noun>:<label>" (spaces in the noun as '-') as the audit target. */
void admin_audit_target(struct api_ctx *c, const struct entity *e, const char *label);
/* For POST .../{key}/members and .../access: find the row {key} names,
 * record it as the audit target, and check the body is {"add", "remove"}. */
int admin_find_for_change(struct api_ctx *c, const struct entity *e, struct db_rows **ret, struct tess_error **err);
/* -EINVAL naming the first key of obj not in allowed (NULL-terminated). */
int admin_only_keys(const json_t *obj, const char *const *allowed, const char *where, struct tess_error **err);
/* Each element of the JSON list `v` of field `name` must be a string. */
int admin_string_list(const json_t *v, const char *name, struct tess_error **err);

#endif
