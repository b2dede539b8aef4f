/*
 * full.h: the front program's way to papo-full, the program that holds
 * every command and the daemon (docs/ARCHITECTURE.md, "The front
 * program").  Only the front links full.c.
 */
#ifndef PAPO_FULL_H
#define PAPO_FULL_H

#include "server/cli/cmd.h"

/*
 * Runs command c (argv[0] its name, as a command's handler is given it)
 * in papo-full, which replaces this process (same pid, same standard
 * streams, same environment): returns only when it cannot be run, after
 * saying why, with CLI_ERROR.
 */
int cli_full(const struct cli_cmd *c, int argc, char **argv);

/* Whether c is papo-full's to run now (its reach): c asks the running
 * daemon (serve.json) and that one is at an https:// URL, which the
 * front cannot reach, or none runs and c then reads the home's files. */
int cli_full_wanted(const struct cli_cmd *c);

#endif
