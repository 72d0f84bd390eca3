/* image_from_manager.h - pulling an image imported into the manager
 * (`tessera image import`): the manager serves such images as an OCI
 * registry to agents (src/manager/api_registry.c), and the agent's
 * registry client pulls from it like from any registry, its requests
 * signed with the cluster secret as every request to the manager. */
#ifndef TESSERA_AGENT_IMAGE_FROM_MANAGER_H
#define TESSERA_AGENT_IMAGE_FROM_MANAGER_H

#include "../common/error.h"

struct agent_ctx;

/* Pull `image` ("name:tag", as the manager names it) into ctx->images,
 * tagged there as `image`.
 * RET 0; -ENOENT the manager has no such image; else as registry_pull(). */
int image_pull_from_manager(struct agent_ctx *ctx, const char *image, struct tess_error **err);

#endif
