/* admin.h - Tessera's own admin REST routes (/admin/...): CRUD of domains,
 * projects and members, users, keypairs, keypair resource policies,
 * resource groups and their access lists, resource presets, images,
 * agents, and the audit log.  Described by table in admin.c. */
#ifndef TESS_ADMIN_H
#define TESS_ADMIN_H

#include "manager/api/api.h"

extern const struct route admin_routes[];

/* One page of what GET `path` ("/admin/users", a list route of the table)
 * shows c's caller, under that route's roles and rules, with `filters`
 * (its query parameters as an object of strings, or NULL): for other
 * ways of asking (POST /admin/gql).  EACCES when the caller's role may
 * not. */
int admin_list_of(struct api_ctx *c, const char *path, const json_t *filters, int64_t limit, int64_t offset,
                  json_t **ret_items, int64_t *ret_total, struct tess_error **err);

#endif
