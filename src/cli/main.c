/* main.c - placeholder client entry; replaced by the CLI. */
#include "../common/compat.h"

#include "cli.h"

int cli_main(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        fputs("usage: tessera <command> [<args>]\n", stderr);
        return 2;
}
