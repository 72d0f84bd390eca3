/* fuzz_service_ports.c - an image's ai.backend.service-ports label
 * (common/service_ports.c): what parses has valid names, protocols and
 * unique ports of 1025-65535. */
#include "common/compat.h"

#include "common/service_ports.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct service_ports sp;
        struct tess_error *err = NULL;

        if (service_ports_parse((const char *)data, size, &sp, &err) < 0) {
                FUZZ_ASSERT(err && err->code == EINVAL);
                tess_error_free(err);
                return 0;
        }
        FUZZ_ASSERT(sp.n >= 0 && sp.n <= SERVICE_PORTS_MAX);
        for (int i = 0; i < sp.n; i++) {
                const struct service_port *a = &sp.apps[i];
                FUZZ_ASSERT(service_port_name_valid(a->name) && service_ports_find(&sp, a->name) == a);
                FUZZ_ASSERT(service_protocol_to_string(a->protocol) != NULL);
                FUZZ_ASSERT(a->nports >= 1 && a->nports <= SERVICE_APP_PORTS_MAX);
                for (int j = 0; j < a->nports; j++) {
                        FUZZ_ASSERT(a->ports[j] > 1024 && a->ports[j] <= 65535);
                        for (int k = 0; k < sp.n; k++)
                                for (int l = 0; l < sp.apps[k].nports; l++)
                                        FUZZ_ASSERT((k == i && l == j) || sp.apps[k].ports[l] != a->ports[j]);
                }
        }
        return 0;
}
