/* fuzz_session_body.c - the JSON body of POST /session: the real parser
 * (session_request_parse) and the helpers it uses: typed field getters on
 * the real field names, config.resources through slots_from_json, shmem,
 * starts_at. */
#include "common/compat.h"

#include "common/slots.h"
#include "common/timeutil.h"
#include "fuzz.h"
#include "manager/api/api.h"
#include "manager/sessions/session_request.h"

static const char *const *const strings[] = {
        NAMES("name", "session_name", "clientSessionToken", "sessionName"), NAMES("image", "lang"),
        NAMES("type", "sessionType", "session_type"), NAMES("group", "groupName", "group_name"),
        NAMES("domain", "domainName", "domain_name"), NAMES("startupCommand", "startup_command"),
        NAMES("owner_access_key", "ownerAccessKey"), NAMES("starts_at", "startsAt"),
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_t *body = json_loadb((const char *)data, size, JSON_ALLOW_NUL, NULL), *cfg, *opts;
        struct tess_error *err = NULL;
        const char *s;
        int64_t i, t;
        bool b;

        if (!body)
                return 0;
        for (size_t k = 0; k < ARRAY_SIZE(strings); k++) {
                s = NULL;
                if (api_get_string(body, strings[k], 64, &s, &err) == 0) {
                        FUZZ_ASSERT(!s || strlen(s) <= 64);
                        if (s && (time_parse(s, &t, NULL) == 0 || duration_parse(s, &t) == 0))
                                (void)api_valid_session_name(s);
                }
                err = tess_error_free(err);
        }
        i = -1;
        if (api_get_int(body, NAMES("clusterSize", "cluster_size"), 1, 64, &i, &err) == 0)
                FUZZ_ASSERT(i == -1 || (i >= 1 && i <= 64));
        err = tess_error_free(err);
        (void)api_get_int(body, NAMES("maxWaitSeconds", "max_wait_seconds"), 0, INT64_MAX, &i, &err);
        err = tess_error_free(err);
        (void)api_get_bool(body, NAMES("reuseIfExists", "reuse_if_exists", "reuse"), &b, &err);
        err = tess_error_free(err);

        cfg = api_field(body, NAMES("config"));
        if (json_is_object(cfg)) {
                struct slots res, back;
                if (slots_from_json(&res, api_field(cfg, NAMES("resources")), true, &err) == 0) {
                        /* what is stored in the database must load again */
                        char *text = slots_to_text(&res);
                        FUZZ_ASSERT(slots_from_text(&back, text, &err) == 0 && back.n == res.n);
                        for (int k = 0; k < res.n; k++)
                                FUZZ_ASSERT(slots_get(&back, res.s[k].name) == res.s[k].value);
                        free(text);
                }
                err = tess_error_free(err);
                opts = api_field(cfg, NAMES("resource_opts", "resourceOpts"));
                if (json_is_object(opts) && json_object_get(opts, "shmem"))
                        (void)slot_parse_value("mem", json_object_get(opts, "shmem"), &i, &err);
                err = tess_error_free(err);
        }
        /* the parser itself: what it accepts is within its documented bounds */
        struct session_request q;
        if (session_request_parse(body, &q, &err) == 0) {
                FUZZ_ASSERT(q.name && api_valid_session_name(q.name));
                FUZZ_ASSERT(q.image && *q.image);
                FUZZ_ASSERT(q.cluster_size >= 1 && q.cluster_size <= SESSION_MAX_CLUSTER_SIZE);
                FUZZ_ASSERT(q.priority >= 0 && q.priority <= 100);
                FUZZ_ASSERT(!streq(q.type, "batch") || (q.startup_command && *q.startup_command));
                for (int k = 0; k < q.resources.n; k++)
                        FUZZ_ASSERT(slot_type_find(q.resources.s[k].name) && q.resources.s[k].value >= 0 &&
                                    q.resources.s[k].value != SLOT_INFINITY);
        } else {
                FUZZ_ASSERT(err && err->code == EINVAL && err->msg[0]);
        }
        err = tess_error_free(err);
        json_decref(body);
        return 0;
}
