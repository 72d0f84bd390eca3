/* agent_report.h - what an agent tells the manager, parsed and checked:
 * the Authorization header of agent requests and the heartbeat body
 * (see api_agent.c for the protocol).  Both parse outside bytes and are
 * fuzzed (tests/fuzz/fuzz_agent_report.c). */
#ifndef TESS_AGENT_REPORT_H
#define TESS_AGENT_REPORT_H

#include <jansson.h>

#include "../common/error.h"
#include "../common/sign.h"
#include "../common/slots.h"

#define AGENT_ID_MAX 39

/* "TesseraAgent id=ID, signature=HEX": -EINVAL unless well formed. */
int agent_auth_parse(const char *value, char id[AGENT_ID_MAX + 1], char sig[SIGN_HEX_MAX]);

struct agent_report {
        const char *id, *address, *rg, *arch, *version, *runtime; /* borrowed from the body */
        struct slots slots; /* available_slots, GPU slot = sum of the devices */
        char *devices;      /* stored JSON form of the devices (owned) */
};

/* -EINVAL with a message naming the field on anything wrong. */
int agent_report_parse(const json_t *body, struct agent_report *ret, struct tess_error **err);
void agent_report_release(struct agent_report *r);

#endif
