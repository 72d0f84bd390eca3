/* fuzz_http_range.c - Range and tus Upload-Offset/Upload-Length headers
 * and a registry chunk's Content-Range (manager/http/http_range.c): a range
 * that parses lies within the resource, a number that parses prints back
 * as the same digits, a chunk range ends at or after its start. */
#include "common/compat.h"

#include "fuzz.h"
#include "manager/http/http_range.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *in = fuzz_strndup(data, size);
        static const uint64_t sizes[] = { 0, 1, 100, 1ull << 40, UINT64_MAX };
        uint64_t start, len, v;

        for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
                if (http_range_parse(in, sizes[i], &start, &len) == HTTP_RANGE_OK)
                        FUZZ_ASSERT(len > 0 && start < sizes[i] && len <= sizes[i] - start);
        }
        if (http_parse_u64(in, &v) == 0) {
                char back[32];
                snprintf(back, sizeof(back), "%llu", (unsigned long long)v);
                FUZZ_ASSERT(v <= INT64_MAX &&
                            (streq(back, in) || (in[0] == '0' && strspn(in, "0123456789") == strlen(in))));
        }
        if (http_chunk_range_parse(in, &start, &v) == 0)
                FUZZ_ASSERT(v >= start && v <= INT64_MAX);
        free(in);
        return 0;
}
