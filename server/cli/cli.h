/*
 * cli.h: the command line.  cli_main runs one command and returns the
 * process's exit status: 0 done, 1 an error explained in one line on
 * stderr, 2 a usage error.
 */
#ifndef PAPO_CLI_H
#define PAPO_CLI_H

#include "server/cli/cmd.h"    /* CLI_OK, CLI_ERROR, CLI_USAGE */

int cli_main(int argc, char **argv);

#endif
