/* main.c - the one `tessera` binary: daemons and client.
 *
 * `tessera dev` and `tessera manager` run the manager (src/manager),
 * `tessera agent` a node's agent (src/agent), `tessera _monitor` the
 * keeper of one container; every other command is the client (src/cli). */
#include "common/compat.h"

#include <jansson.h>

#include "agent/agent.h"
#include "agent/container/monitor.h"
#include "agent/image_cli.h"
#include "cli/cli.h"
#include "manager/main.h"
#include "sim/sim.h"

/* `tessera openapi`: print the API description (docs/openapi.json). */
static int print_openapi(void)
{
        json_t *doc = api_openapi_document(api_route_tables);
        int r = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
        json_decref(doc);
        fputc('\n', stdout);
        return r == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
        if (argc >= 2 && streq(argv[1], "_monitor"))
                return monitor_main(argc - 1, argv + 1);
        if (argc >= 3 && streq(argv[1], "agent") && streq(argv[2], "image"))
                return agent_image_main(argc - 2, argv + 2);
        if (argc >= 2 && streq(argv[1], "agent"))
                return agent_main(argc - 1, argv + 1);
        if (argc >= 2 && streq(argv[1], "manager"))
                return manager_main(argc - 1, argv + 1);
        if (argc >= 2 && streq(argv[1], "dev"))
                return dev_main(argc - 1, argv + 1);
        if (argc >= 2 && streq(argv[1], "sim"))
                return sim_main(argc - 1, argv + 1);
        if (argc == 2 && streq(argv[1], "openapi"))
                return print_openapi();
        return cli_main(argc, argv);
}
