/* admin_domains.c - /admin/domains: the domain table.  Domains are named
 * by their primary key, so a domain is never renamed; it cannot be deleted
 * while users or projects belong to it. */
#include "common/compat.h"

#include "manager/admin/admin-internal.h"

static const struct field domain_fields[] = {
        { "id", "id", FT_TEXT, FF_RO },
        { "name", "name", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 64, .valid = api_valid_name,
          .hint = ADMIN_NAME_HINT },
        { "description", "description", FT_TEXT, 0, .max = 1024 },
        { "is_active", "is_active", FT_BOOL },
        { "total_resource_slots", "total_resource_slots", FT_SLOTS },
        { "allowed_vfolder_hosts", "allowed_vfolder_hosts", FT_OBJECT, .check = vf_allowed_hosts_check },
        { "allowed_docker_registries", "allowed_docker_registries", FT_LIST, .min = 1, .max = 512 },
        { "created_at", "created_at", FT_TIME, FF_RO },
        { "modified_at", "modified_at", FT_TIME, FF_RO },
        {},
};

static const struct filter domain_filters[] = {
        { "name", " AND d.name = ?" },
        { "is_active", " AND d.is_active = ?", FT_BOOL },
        {},
};

static const struct in_use domain_in_use[] = {
        { "SELECT 1 FROM users WHERE domain_name = ? LIMIT 1", "still has users" },
        { "SELECT 1 FROM projects WHERE domain_name = ? LIMIT 1", "still has projects" },
        {},
};

const struct entity admin_domains = {
        .path = "/admin/domains",
        .noun = "domain",
        .table = "domains",
        .alias = "d",
        .pk = "name",
        .key = "name",
        .label = "name",
        .order = "d.name",
        .fields = domain_fields,
        .filters = domain_filters,
        .in_use = domain_in_use,
        .domain_scope = "d.name = ?",
        .create_roles = ROLES_SUPER,
        .update_roles = ROLES_SUPER,
        .delete_roles = ROLES_SUPER,
        .gen_id = true,
        .created_at = true,
        .modified_at = true,
};
