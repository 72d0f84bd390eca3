/* fuzz_fgpu_config.c - the fGPU hook's config file (src/fgpu/config.c), as
 * the agent writes it and the hook reads it in every GPU process: any
 * bytes give limits within bounds, or a closed configuration that says
 * why. */
#include "common/compat.h"

#include "fgpu/fgpu.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fgpu_config c;

        fgpu_config_parse_file((const char *)data, size, &c);
        if (c.closed) {
                FUZZ_ASSERT(c.error[0] != '\0');
                return 0;
        }
        FUZZ_ASSERT(memchr(c.region, '\0', sizeof(c.region)) != NULL);
        for (int d = 0; d < FGPU_MAX_DEVICES; d++) {
                FUZZ_ASSERT(c.sm[d] <= 100);
                FUZZ_ASSERT(!c.memory[d] || c.memory_limited);
                FUZZ_ASSERT(!(c.sm[d] > 0 && c.sm[d] < 100) || c.sm_limited);
        }
        return 0;
}
