/* gql_roots.h - the root fields of POST /admin/gql's queries (api_gql.c),
 * each resolved into a JSON value that holds every field of its type,
 * objects naming their type in "__typename" (Backend.AI's type names):
 *
 *   keypair                     KeyPair: the caller's own
 *   compute_session_list(limit, offset, status, access_key, group_id,
 *                        domain_name)              ComputeSessionList
 *   compute_session(id)         ComputeSession (with its containers)
 *   vfolder_list(limit, offset, group_id)          VirtualFolderList
 *   images(is_installed, is_operation)             [Image]
 *   image(reference, architecture)                 Image
 *   user(email)                 User: the caller's own, or (admins) another
 *   user_from_uuid(user_id)     User: the same, by id
 *   domain(name)                Domain (default: the caller's)
 *   group(id)                   Group
 *   groups_by_name(name, domain_name)               [Group]
 *   scaling_group(name)         ScalingGroup
 *   user_list, keypair_list(limit, offset)          {items, total_count}
 *   users, keypairs, domains, groups, scaling_groups,
 *   keypair_resource_policies   [...] what the /admin/... list routes show
 *                               the caller (admins; others get an error),
 *                               their arguments (domain_name, group_id,
 *                               status, email, is_active, name) as the
 *                               routes' filters
 *   keypair_resource_policy(name)  KeyPairResourcePolicy (default: the
 *                               caller's keypair's), as the list shows it
 *   agent_list(limit, offset, status, scaling_group)   AgentList
 *   agents(status, scaling_group)  [Agent]   GET /admin/agents' agents,
 *   agent(agent_id)             Agent        with what their kernels use
 *                               now (mem_cur_bytes, cpu_cur_pct, live_stat)
 *   storage_volume_list(limit, offset)  StorageVolumeList  the folder
 *   storage_volume(id)          StorageVolume   hosts (superadmins, as GET
 *                               /folders/_/all-hosts)
 *
 * Each uses the REST routes' queries and rules (GET /sessions,
 * /session/{id}, /folders, /folders/_/all-hosts, /images, /admin/...), so
 * a caller sees here exactly what it sees there.  Backend.AI's filter and
 * order expressions (its own query language) are refused by the agent and
 * storage roots rather than ignored. */
#ifndef TESS_MANAGER_GQL_ROOTS_H
#define TESS_MANAGER_GQL_ROOTS_H

#include <jansson.h>

#include "common/error.h"
#include "common/gql.h"

struct api_ctx;

/* Resolve root field f for c's caller: *ret (caller owns), or -errno with
 * *err (EINVAL: a bad argument; ENOENT: an unknown root field). */
int gql_resolve_root(struct api_ctx *c, const struct gql_field *f, json_t **ret, struct tess_error **err);

/* Rows of GET `path` (an /admin list route with a Backend.AI type:
 * users, keypairs, domains, projects, resource groups, keypair policies)
 * as that type, with what a row does not hold (users' and keypairs'
 * projects): the objects lists and mutations answer with. */
int gql_admin_objects(struct api_ctx *c, const char *path, const json_t *rows, json_t **ret, struct tess_error **err);
/* One row so. */
int gql_admin_object(struct api_ctx *c, const char *path, const json_t *row, json_t **ret, struct tess_error **err);

#endif
