/* fuzz_registry_manifest.c - a registry's answer to GET /v2/<name>/
 * manifests/<ref>: line 1 the Content-Type, the rest the manifest or index
 * JSON; what parses has only sha256 digests and sizes >= 0, within limits. */
#include "common/compat.h"

#include "fuzz.h"
#include "registry/registry-internal.h"

static void check_descriptor(const struct registry_descriptor *d)
{
        FUZZ_ASSERT(image_digest_valid(d->digest) && d->size >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *nl = memchr(data, '\n', size);
        size_t ct_len = nl ? (size_t)(nl - data) : 0;
        char *ctype = fuzz_strndup(data, ct_len);
        const char *body = (const char *)data + (nl ? ct_len + 1 : 0);
        size_t body_len = size - (size_t)(body - (const char *)data);
        struct tess_error *err = NULL;
        struct registry_manifest m;

        if (registry_manifest_parse(body, body_len, ct_len ? ctype : NULL, &m, &err) < 0) {
                FUZZ_ASSERT(err && err->code == EINVAL && strncmp(err->msg, "manifest: ", 10) == 0);
                tess_error_free(err);
        } else {
                FUZZ_ASSERT(!err && m.media_type);
                if (m.kind == MANIFEST_IMAGE) {
                        check_descriptor(&m.config);
                        FUZZ_ASSERT(m.n_entries <= REGISTRY_LAYERS_MAX);
                } else {
                        FUZZ_ASSERT(m.n_entries <= REGISTRY_INDEX_MAX);
                        const struct registry_descriptor *d = registry_manifest_pick(&m, "amd64");
                        FUZZ_ASSERT(!d || (streq(d->os, "linux") && streq(d->architecture, "amd64")));
                }
                for (size_t i = 0; i < m.n_entries; i++)
                        check_descriptor(&m.entries[i]);
                registry_manifest_release(&m);
        }
        free(ctype);
        return 0;
}
