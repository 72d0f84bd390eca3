/* admin.h - Tessera's own admin REST routes (/admin/...): CRUD of domains,
 * projects and members, users, keypairs, keypair resource policies,
 * resource groups and their access lists, resource presets, images,
 * agents, and the audit log.  Described by table in admin.c. */
#ifndef TESS_ADMIN_H
#define TESS_ADMIN_H

#include "manager/api/api.h"

extern const struct route admin_routes[];

#endif
