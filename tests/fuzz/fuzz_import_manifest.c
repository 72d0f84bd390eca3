/* fuzz_import_manifest.c - what `tessera image import` commits, from the
 * uploader's bytes (src/manager/images/import_manifest.c): line 1 the reference,
 * then the manifest, then after a line "--" the image config.  What parses
 * has a valid name and tag, sha256 digests, sizes >= 0 summing to the
 * image's size, and labels that are strings. */
#include "common/compat.h"

#include "fuzz.h"
#include "manager/images/blob_store.h"
#include "manager/images/import_manifest.h"

static void expect_einval(int r, struct tess_error *err)
{
        FUZZ_ASSERT(r == -EINVAL && err && err->code == EINVAL && err->msg[0]);
        tess_error_free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *p = (const char *)data, *end = p + size;
        const char *nl = memchr(p, '\n', size);
        size_t ref_len = nl ? (size_t)(nl - p) : size;
        char *ref = fuzz_strndup(data, ref_len);
        const char *manifest = nl ? nl + 1 : end, *sep = memmem(manifest, (size_t)(end - manifest), "\n--\n", 4);
        size_t manifest_len = sep ? (size_t)(sep - manifest) : (size_t)(end - manifest);
        const char *config = sep ? sep + 4 : end;
        struct import_image img = { 0 };
        struct tess_error *err = NULL;
        int r;

        r = import_parse_reference(ref, &img, &err);
        if (r < 0) {
                expect_einval(r, err);
                err = NULL;
        } else {
                FUZZ_ASSERT(img.name && *img.name && img.tag && *img.tag && !strchr(img.name, '@'));
                FUZZ_ASSERT(strncmp(img.name, "docker.io/", 10) != 0);
        }
        r = import_parse_manifest(manifest, manifest_len, &img, &err);
        if (r < 0) {
                expect_einval(r, err);
        } else {
                int64_t sum = 0;
                FUZZ_ASSERT(!err && img.media_type && blob_digest_valid(img.config.digest) && img.config.size >= 0);
                FUZZ_ASSERT(img.n_layers <= IMPORT_LAYERS_MAX);
                for (size_t i = 0; i < img.n_layers; i++) {
                        FUZZ_ASSERT(blob_digest_valid(img.layers[i].digest) && img.layers[i].size >= 0);
                        sum += img.layers[i].size;
                }
                FUZZ_ASSERT(sum == img.size_bytes);
                err = NULL;
                r = import_parse_config(config, (size_t)(end - config), &img, &err);
                if (r < 0) {
                        expect_einval(r, err);
                } else {
                        const char *key;
                        json_t *v;
                        FUZZ_ASSERT(img.architecture && *img.architecture && json_is_object(img.labels));
                        json_object_foreach(img.labels, key, v)
                                FUZZ_ASSERT(json_is_string(v));
                }
        }
        import_image_release(&img);
        free(ref);
        return 0;
}
