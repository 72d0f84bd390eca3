/* fuzz_yaml.c - a YAML text (common/yaml_json.h): what fails is EINVAL
 * with a message naming its line; what converts is an array of documents
 * that serialise as JSON, whose serialisation (JSON is YAML) converts
 * again to one document holding the same array. */
#include "common/compat.h"

#include "common/yaml_json.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct tess_error *err = NULL;
        json_t *docs = NULL, *again = NULL;

        if (yaml_to_json((const char *)data, size, &docs, &err) < 0) {
                FUZZ_ASSERT(docs == NULL && err && err->code == EINVAL);
                FUZZ_ASSERT(strncmp(err->msg, "line ", 5) == 0);
                tess_error_free(err);
                return 0;
        }
        FUZZ_ASSERT(json_is_array(docs));
        char *text = json_dumps(docs, JSON_COMPACT | JSON_ENCODE_ANY);
        FUZZ_ASSERT(text != NULL);
        if (yaml_to_json(text, strlen(text), &again, &err) == 0) {
                /* numbers may read back as text (1e+300 has no dot); the shape stays */
                FUZZ_ASSERT(json_array_size(again) == 1);
                FUZZ_ASSERT(json_array_size(json_array_get(again, 0)) == json_array_size(docs));
                json_decref(again);
        } else {
                /* JSON text libyaml declines (very long keys, odd escapes) */
                tess_error_free(err);
        }
        free(text);
        json_decref(docs);
        return 0;
}
