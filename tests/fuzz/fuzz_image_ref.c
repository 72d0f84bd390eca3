/* fuzz_image_ref.c - an image reference as a user or an API client writes
 * it (`tessera agent image pull REF`, a session's image): parsed with three
 * default registries; what parses formats to a name that parses back to
 * the same fields. */
#include "common/compat.h"

#include "fuzz.h"
#include "registry/registry.h"

static void check_round_trip(const struct image_ref *r)
{
        _cleanup_free_ char *name = image_ref_format(r);
        struct tess_error *err = NULL;
        struct image_ref back;

        if (image_ref_parse(name, NULL, &back, &err) < 0) {
                /* the default registry may push a long name over the limit */
                FUZZ_ASSERT(err && strstr(err->msg, "more than 255 characters"));
                tess_error_free(err);
                return;
        }
        FUZZ_ASSERT(streq(back.registry, r->registry) && streq(back.repository, r->repository));
        FUZZ_ASSERT(streq_ptr(back.digest, r->digest));
        if (!r->digest)
                FUZZ_ASSERT(streq_ptr(back.tag, r->tag));
        image_ref_release(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const defaults[] = { "127.0.0.1:5000", "docker.io", NULL };
        char *s = fuzz_strndup(data, size);

        for (size_t i = 0; i < ARRAY_SIZE(defaults); i++) {
                struct tess_error *err = NULL;
                struct image_ref r;

                if (image_ref_parse(s, defaults[i], &r, &err) < 0) {
                        FUZZ_ASSERT(err && err->code == EINVAL && strncmp(err->msg, "invalid reference '", 19) == 0);
                        tess_error_free(err);
                        continue;
                }
                FUZZ_ASSERT(!err && r.registry[0] && r.repository[0] && (r.tag || r.digest));
                FUZZ_ASSERT(strlen(r.repository) <= 255 + 8 && (!r.tag || strlen(r.tag) <= 128));
                FUZZ_ASSERT(!r.digest || (strlen(r.digest) == 71 && strncmp(r.digest, "sha256:", 7) == 0));
                FUZZ_ASSERT(!strpbrk(r.repository, "ABCDEFGHIJKLMNOPQRSTUVWXYZ:@ ") && !strchr(r.registry, '/'));
                check_round_trip(&r);
                image_ref_release(&r);
        }
        free(s);
        return 0;
}
