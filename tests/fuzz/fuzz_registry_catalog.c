/* fuzz_registry_catalog.c - a registry's listing answers: line 1 the Link
 * header of the answer (RFC 8288), the rest a page of GET /v2/_catalog or
 * GET /v2/<name>/tags/list, read both as repositories and as tags.  A next
 * page is a plain path under /v2/; every name kept is one Docker's grammar
 * takes, and the count returned is what was appended. */
#include "common/compat.h"

#include "fuzz.h"
#include "registry/registry-internal.h"

#define BASE "http://127.0.0.1:5000"

static void check_link(const char *link)
{
        struct tess_error *err = NULL;
        char *path = NULL;

        if (registry_link_next(link, BASE, &path, &err) < 0) {
                FUZZ_ASSERT(err && err->code == EINVAL && !path);
                tess_error_free(err);
                return;
        }
        FUZZ_ASSERT(!err);
        if (!path)
                return;
        FUZZ_ASSERT(strncmp(path, "/v2/", 4) == 0);
        for (const char *s = path; *s; s++)
                FUZZ_ASSERT(*s > 0x20 && *s < 0x7f && *s != '#');
        free(path);
}

static void check_page(const char *p, size_t len, const char *key)
{
        struct tess_error *err = NULL;
        json_t *names = json_array(), *v;
        size_t i;
        int r = registry_list_parse(p, len, key, names, &err);

        if (r < 0) {
                FUZZ_ASSERT(err && err->code == EINVAL);
                tess_error_free(err);
        } else {
                FUZZ_ASSERT(!err && (size_t)r == json_array_size(names));
                json_array_foreach(names, i, v) {
                        const char *s = json_string_value(v);
                        FUZZ_ASSERT(s && *s && !strchr(s, '@') && !strchr(s, ':'));
                        FUZZ_ASSERT(streq(key, "repositories") ? !strpbrk(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
                                                               : strlen(s) <= 128 && !strchr(s, '/'));
                }
        }
        json_decref(names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *nl = memchr(data, '\n', size);
        size_t link_len = nl ? (size_t)(nl - data) : size;
        char *link = fuzz_strndup(data, link_len);
        const char *page = (const char *)data + (nl ? link_len + 1 : size);
        size_t page_len = size - (size_t)(page - (const char *)data);

        check_link(link);
        check_page(page, page_len, "repositories");
        check_page(page, page_len, "tags");
        free(link);
        return 0;
}
