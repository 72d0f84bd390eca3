/* fuzz_http_head.c - the head of an answer that an app in a session, or
 * an agent, sends to a protocol upgrade (common/http_head.c): the fields
 * found lie within the input, and lookups find them. */
#include "common/compat.h"

#include "common/http_head.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *p = (const char *)data;
        struct http_head h;
        struct tess_error *err = NULL;

        if (http_head_parse(p, size, &h, &err) < 0) {
                FUZZ_ASSERT(err && err->code == EINVAL);
                tess_error_free(err);
                return 0;
        }
        FUZZ_ASSERT(h.status >= 100 && h.status <= 599);
        FUZZ_ASSERT(h.nfields >= 0 && h.nfields <= HTTP_HEAD_FIELDS_MAX);
        for (int i = 0; i < h.nfields; i++) {
                const struct http_head_field *f = &h.fields[i];
                FUZZ_ASSERT(f->name.len > 0 && f->name.p >= p && f->name.p + f->name.len <= p + size);
                FUZZ_ASSERT(f->value.p >= p && f->value.p + f->value.len <= p + size);
                FUZZ_ASSERT(!memchr(f->value.p, '\n', f->value.len) && !memchr(f->value.p, '\r', f->value.len));
                char name[64];
                if (f->name.len < sizeof(name)) {
                        memcpy(name, f->name.p, f->name.len);
                        name[f->name.len] = '\0';
                        FUZZ_ASSERT(http_head_get(&h, name) != NULL);
                }
        }
        return 0;
}
