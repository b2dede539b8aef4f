/*
 * cmd_version.h: papo version (and papo --version): papo's version, the
 * protocol versions it speaks, and the version of every library it runs
 * with, as a bug report needs them.
 */
#ifndef PAPO_CMD_VERSION_H
#define PAPO_CMD_VERSION_H

#include <stdio.h>

#include "server/cli/cmd.h"

int cli_version(const struct cli_cmd *c, int argc, char **argv);

/* What papo version prints, onto f (papo doctor may print it too):
 * "papo VERSION" first, alone on its line, so that a script can take
 * that line. */
void cmd_version_print(FILE *f);

#endif
