/* main.c - the one `tessera` binary: daemons and client.
 *
 * `tessera dev` and `tessera manager` run the daemons (src/manager);
 * every other command is the client (src/cli). */
#include "common/compat.h"

#include "cli/cli.h"
#include "manager/manager.h"

int main(int argc, char **argv)
{
        if (argc >= 2 && streq(argv[1], "manager"))
                return manager_main(argc - 1, argv + 1);
        if (argc >= 2 && streq(argv[1], "dev"))
                return dev_main(argc - 1, argv + 1);
        return cli_main(argc, argv);
}
