/* fuzz_slots.c - resource slot values: every known slot and one unknown
 * parse the input as a string; the input is also parsed as the stored JSON
 * text.  Whatever parses must format and parse back to the same value. */
#include "common/compat.h"

#include "common/slots.h"
#include "fuzz.h"

static const char *const names[] = { "cpu", "mem", "cuda.device", "cuda.shares", "rocm.device" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = fuzz_strndup(data, size), out[64];
        struct tess_error *err = NULL;
        struct slots a, b;
        int64_t v, back;

        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                if (slot_parse_string(names[i], s, &v, &err) < 0) {
                        FUZZ_ASSERT(err && err->code == EINVAL);
                        err = tess_error_free(err);
                        continue;
                }
                FUZZ_ASSERT(v >= 0);
                slot_format(names[i], v, out, sizeof(out));
                FUZZ_ASSERT(slot_parse_string(names[i], out, &back, &err) == 0 && back == v);
                slot_format_human(names[i], v, out, sizeof(out));
        }
        if (slots_from_text(&a, s, &err) == 0) {
                char *text = slots_to_text(&a);
                FUZZ_ASSERT(slots_from_text(&b, text, &err) == 0);
                FUZZ_ASSERT(a.n == b.n);
                for (int i = 0; i < a.n; i++)
                        FUZZ_ASSERT(a.s[i].value >= 0 && slots_get(&b, a.s[i].name) == a.s[i].value);
                FUZZ_ASSERT(slots_fit(&a, &b, false, NULL));
                FUZZ_ASSERT(slots_add(&b, &a, &err) == 0);
                FUZZ_ASSERT(slots_fit(&a, &b, false, NULL));
                free(text);
        } else {
                FUZZ_ASSERT(err && err->code == EINVAL);
                err = tess_error_free(err);
        }
        free(s);
        return 0;
}
