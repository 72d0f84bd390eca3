/* fuzz_image_recipe.c - the recipes of `tessera image build`
 * (src/cli/image_recipe.c): what parses prints in canonical form, which
 * parses back and prints the same; what fails fails with EINVAL and a
 * message that names the file. */
#include "common/compat.h"

#include "cli/image_recipe.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct recipe r = { 0 }, back = { 0 };
        struct buf one = BUF_INIT, two = BUF_INIT;
        struct tess_error *err = NULL;

        if (recipe_parse((const char *)data, size, "fuzz.recipe", &r, &err) == 0) {
                FUZZ_ASSERT(r.name && r.suite && r.tag && r.variant && r.workdir && r.packages && r.cmd);
                recipe_print(&r, &one);
                FUZZ_ASSERT(recipe_parse(one.data, one.len, "printed", &back, &err) == 0);
                recipe_print(&back, &two);
                FUZZ_ASSERT(one.len == two.len && memcmp(one.data, two.data, one.len) == 0);
                FUZZ_ASSERT(back.n_labels == r.n_labels && back.n_env == r.n_env);
        } else {
                FUZZ_ASSERT(err && err->code == EINVAL && strncmp(err->msg, "fuzz.recipe", 11) == 0);
                err = tess_error_free(err);
        }
        recipe_release(&r);
        recipe_release(&back);
        buf_release(&one);
        buf_release(&two);
        return 0;
}
