/*
 * cmd_get.h: papo get, a shared file fetched by the running daemon and
 * saved here.  Main thread.
 */
#ifndef PAPO_CMD_GET_H
#define PAPO_CMD_GET_H

#include "server/cli/cmd.h"

int cli_get(const struct cli_cmd *c, int argc, char **argv);

#endif
