/* fuzz_http_cookie.c - the Cookie header (manager/http/http_cookie.c): a value
 * found fits, holds only cookie-octets, and appears in the header. */
#include "common/compat.h"

#include "fuzz.h"
#include "manager/http/http_cookie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *in = fuzz_strndup(data, size);
        char v[64];

        if (http_cookie_get(in, "tessera_session", v, sizeof(v)) == 0) {
                FUZZ_ASSERT(strlen(v) < sizeof(v) && strstr(in, v) != NULL);
                for (const char *p = v; *p; p++)
                        FUZZ_ASSERT(*p > 0x20 && *p < 0x7f && *p != ';' && *p != '"');
        }
        free(in);
        return 0;
}
