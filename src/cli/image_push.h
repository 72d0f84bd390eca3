/* image_push.h - push an OCI image layout to a registry through the OCI
 * distribution API (`tessera image push`, `tessera image build --push`).
 *
 * For the layout's image (its index.json's one entry, or the linux/<host
 * arch> manifest of an index it names): each blob, config and layers
 * first, is looked up with HEAD /v2/<name>/blobs/<digest> and, when the
 * registry lacks it, uploaded monolithically (POST /v2/<name>/blobs/uploads/,
 * then PUT <location>?digest=...); then the manifest is PUT under the
 * reference's tag (or digest).  Authentication is the agent's pull client's
 * (src/agent/registry_auth.c: Basic, or the Bearer token flow; a push asks
 * for the scope the registry's challenge names, "repository:<name>:pull,push"),
 * with credentials from TESSERA_REGISTRY_USER / TESSERA_REGISTRY_PASSWORD.
 * Loopback registries and those in `insecure` are reached over http.
 *
 * Layering: the CLI borrows the agent's registry client here, as
 * cmd_image.c borrows its importer. */
#ifndef TESS_CLI_IMAGE_PUSH_H
#define TESS_CLI_IMAGE_PUSH_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/error.h"

struct image_push_result {
        char manifest[72];  /* the manifest's digest */
        size_t blobs, sent; /* blobs of the image; those uploaded */
        long long bytes_sent;
};

/* IN layout - an OCI layout directory; ref - "host[:port]/name[:tag]";
 *    insecure - NULL-terminated registries reached over http (may be NULL);
 *    verbose - print a line per blob on stderr
 * OUT ret - what was pushed */
int image_push(const char *layout, const char *ref, const char *const *insecure, bool verbose,
               struct image_push_result *ret, struct tess_error **err);

#endif
