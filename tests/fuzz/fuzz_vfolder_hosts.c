/* fuzz_vfolder_hosts.c - the vfolder_hosts setting (manager/vfolder/vfolder.c,
 * "NAME=/PATH,..."), read from config files: what parses has unique valid
 * names and absolute paths without trailing slashes; what does not leaves
 * nothing behind and says why. */
#include "common/compat.h"

#include "fuzz.h"
#include "manager/api/api.h"
#include "manager/vfolder/vfolder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *spec = fuzz_strndup(data, size);
        struct tess_error *err = NULL;
        struct vf_hosts h;
        int r = vf_hosts_parse(spec, &h, &err);

        if (r < 0) {
                FUZZ_ASSERT(r == -EINVAL && err && err->msg[0] && h.n == 0 && !h.v);
                tess_error_free(err);
        } else {
                for (size_t i = 0; i < h.n; i++) {
                        size_t len = strlen(h.v[i].path);
                        FUZZ_ASSERT(api_valid_name(h.v[i].name) && h.v[i].path[0] == '/');
                        FUZZ_ASSERT(len == 1 || h.v[i].path[len - 1] != '/');
                        FUZZ_ASSERT(vf_hosts_find(&h, h.v[i].name) == &h.v[i]);
                }
        }
        vf_hosts_release(&h);
        free(spec);
        return 0;
}
