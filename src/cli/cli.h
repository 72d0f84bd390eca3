/* cli.h - the `tessera` client: git-style subcommands over the signed API. */
#ifndef TESS_CLI_H
#define TESS_CLI_H

/* Exit codes: 0 success, 1 error, 2 usage. */
int cli_main(int argc, char **argv);

#endif
