/* fuzz_agent_report.c - what agents send: the first line of the input is
 * an Authorization header value (agent_auth_parse), the rest a heartbeat
 * body (agent_report_parse: ids, slots, GPU devices).  Invariants: a parsed
 * id is a valid name of at most AGENT_ID_MAX characters, the signature is
 * hex, and an accepted report's GPU slot equals the sum of its devices;
 * the body's `events`, if any, go through agent_event_parse (POST
 * /agent/events): accepted ones are within bounds, refused ones say why. */
#include "common/compat.h"

#include "common/slots.h"
#include "fuzz.h"
#include "manager/agent_link/agent_report.h"
#include "manager/api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *nl = memchr(data, '\n', size);
        size_t hlen = nl ? (size_t)(nl - (const char *)data) : size;
        char *header = xmalloc(hlen + 1), id[AGENT_ID_MAX + 1], sig[SIGN_HEX_MAX];
        struct tess_error *err = NULL;
        struct agent_report rep;

        memcpy(header, data, hlen);
        header[hlen] = '\0';
        if (strlen(header) == hlen && agent_auth_parse(header, id, sig) == 0) {
                FUZZ_ASSERT(strlen(id) > 0 && strlen(id) <= AGENT_ID_MAX);
                FUZZ_ASSERT(strspn(sig, "0123456789abcdefABCDEF") == strlen(sig));
        }
        free(header);
        if (!nl)
                return 0;
        json_t *body = json_loadb(nl + 1, size - hlen - 1, 0, NULL);
        if (!body)
                return 0;
        if (agent_report_parse(body, &rep, &err) == 0) {
                FUZZ_ASSERT(api_valid_name(rep.id) && strlen(rep.id) <= AGENT_ID_MAX);
                json_t *devs = json_loads(rep.devices, 0, NULL);
                int64_t sum = 0, v;
                size_t i;
                json_t *d;
                const char *slot = NULL;
                FUZZ_ASSERT(json_is_array(devs));
                json_array_foreach(devs, i, d) {
                        slot = json_string_value(json_object_get(d, "slot"));
                        FUZZ_ASSERT(slot && slot_parse_value(slot, json_object_get(d, "capacity"), &v, NULL) == 0);
                        sum += v;
                }
                if (slot)
                        FUZZ_ASSERT(slots_get(&rep.slots, slot) == sum);
                json_decref(devs);
                agent_report_release(&rep);
        }
        err = tess_error_free(err);
        /* a POST /agent/events body: every event parses or says why */
        json_t *events = json_object_get(body, "events"), *e;
        size_t i;
        json_array_foreach(events, i, e) {
                struct agent_event ev;
                if (agent_event_parse(e, &ev, &err) == 0) {
                        FUZZ_ASSERT(ev.seq > 0 && ev.kernel && strlen(ev.kernel) <= 36);
                        FUZZ_ASSERT(ev.kind >= AGENT_EV_PREPARING && ev.kind <= AGENT_EV_FAILED);
                        FUZZ_ASSERT(ev.exit_code >= -1 && ev.exit_code <= 255);
                } else {
                        FUZZ_ASSERT(err && err->code == EINVAL && err->msg);
                        err = tess_error_free(err);
                }
        }
        json_decref(body);
        return 0;
}
