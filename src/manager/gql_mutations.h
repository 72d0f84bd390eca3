/* gql_mutations.h - the mutations of POST /admin/gql (api_gql.c): the
 * writes of Backend.AI's admin CLI and SDK, each run as Tessera's own
 * /admin REST routes for the same caller (api_subcall), so that the
 * roles, validation, rules and audit entries are those of the routes:
 *
 *   create_keypair(user_id, props)  modify_keypair(access_key, props)
 *   delete_keypair(access_key)      /admin/keypairs
 *   create_user(email, props)       modify_user(email, props)
 *   delete_user(email): inactive    purge_user(email): deleted   /admin/users
 *   create_domain(name, props)      modify_domain(name, props)
 *   delete_domain(name): inactive   purge_domain(name)           /admin/domains
 *   create_group(name, props)       modify_group(gid, props) (with
 *   user_update_mode add/remove: members)  delete_group(gid): inactive
 *   purge_group(gid)                /admin/projects
 *   create_, modify_, delete_keypair_resource_policy   /admin/keypair-policies
 *   create_, modify_, delete_scaling_group             /admin/resource-groups
 *   associate_ and disassociate_scaling_group_with_domain,
 *   ..._with_user_group, disassociate_all_scaling_groups_with_domain,
 *   ..._with_group                  /admin/resource-groups/{name}/access
 *   alias_image(alias, target, architecture)  dealias_image(alias)
 *                                   /admin/image-aliases
 *   rescan_images(registry)         /admin/container-registries/{name}/rescan
 *
 * Each answers as Backend.AI does: {ok, msg} (plus the object made, and
 * rescan_images' task_id), where a refused change is ok false with the
 * route's own message, not a GraphQL error.  Props are Backend.AI's input
 * objects: a null prop means "unchanged"; what Tessera has no such thing
 * for is accepted only at the value that changes nothing. */
#ifndef TESS_MANAGER_GQL_MUTATIONS_H
#define TESS_MANAGER_GQL_MUTATIONS_H

#include <jansson.h>

#include "common/error.h"
#include "common/gql.h"

struct api_ctx;

/* payload: the mutation's result object (the callee owns it), or NULL
 * with err (an argument GraphQL itself would refuse; the callee frees). */
typedef void (*gql_mutation_done_fn)(struct api_ctx *c, json_t *payload, struct tess_error *err, void *data);

/* Run mutation field f for c's caller; done runs once, now or later (the
 * request suspended meanwhile), unless the request ends first. */
void gql_mutate(struct api_ctx *c, const struct gql_field *f, gql_mutation_done_fn done, void *data);

#endif
