/* image_from_manager.h - images in the manager's registry: those imported
 * into it (`tessera image import`) and the sessions agents commit.  The
 * manager serves them as an OCI registry to agents
 * (src/manager/images/api_registry.c); the agent's registry client pulls from it
 * and its push client pushes to it like to any registry, their requests
 * signed with the cluster secret as every request to the manager. */
#ifndef TESSERA_AGENT_IMAGE_FROM_MANAGER_H
#define TESSERA_AGENT_IMAGE_FROM_MANAGER_H

#include <stdint.h>

#include "common/error.h"

struct agent_ctx;
struct image_push_stream;

/* Pull `image` ("name:tag", as the manager names it) into ctx->images,
 * tagged there as `image`.
 * RET 0; -ENOENT the manager has no such image; else as registry_pull(). */
int image_pull_from_manager(struct agent_ctx *ctx, const char *image, struct tess_error **err);

/* Push the image of ctx->images whose manifest is `manifest` to the
 * manager as `image` ("name:tag"); `progress` (optional) is told the
 * bytes uploaded so far. */
int image_push_to_manager(struct agent_ctx *ctx, const char *image, const char *manifest,
                          void (*progress)(void *data, int64_t sent), void *data, struct tess_error **err);

/* Upload the blob being written to `path` to the manager's repository of
 * `image` while it is written (image_push_stream_*, image_push.h), so that
 * image_push_to_manager() of an image naming it finds it there. */
int image_push_stream_to_manager(struct agent_ctx *ctx, const char *image, const char *path,
                                 struct image_push_stream **ret, struct tess_error **err);

#endif
