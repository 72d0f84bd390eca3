/* api_images.h - the image routes: the images a caller may use
 * (api_images.c), an image imported through the API (api_image_import.c:
 * blobs uploaded in chunks, then the manifest), and the manager's own
 * registry that agents pull imported and committed images from
 * (api_registry.c). */
#ifndef TESS_API_IMAGES_H
#define TESS_API_IMAGES_H

#include <jansson.h>

#include "common/error.h"

struct api_ctx;

void api_images_list(struct api_ctx *c); /* api_images.c */
/* The images c's caller may start sessions from, one object per image
 * ({id, name, registry, tag, architecture, digest, labels, aliases,
 * private, size_bytes}), by name, tag and architecture: what GET /images groups. */
int images_visible(struct api_ctx *c, json_t **ret, struct tess_error **err);

void api_image_blob_show(struct api_ctx *c); /* api_image_import.c */
void api_image_blob_append(struct api_ctx *c);
void api_image_blob_finish(struct api_ctx *c);
void api_image_import(struct api_ctx *c);

void api_registry_get(struct api_ctx *c); /* api_registry.c */
void api_registry_push(struct api_ctx *c);

#endif
