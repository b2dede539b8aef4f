/*
 * cmd_serve.h: papo serve, mcp, hook and setup (cli.c's table).
 */
#ifndef PAPO_CMD_SERVE_H
#define PAPO_CMD_SERVE_H

#include "server/cli/cmd.h"

int cli_serve(const struct cli_cmd *c, int argc, char **argv);
int cli_mcp(const struct cli_cmd *c, int argc, char **argv);
int cli_hook(const struct cli_cmd *c, int argc, char **argv);
int cli_setup(const struct cli_cmd *c, int argc, char **argv);

#endif
