/*
 * cmd_msg.h: papo say, history and tail (cli.c's table).
 */
#ifndef PAPO_CMD_MSG_H
#define PAPO_CMD_MSG_H

#include "server/cli/cmd.h"

int cli_say(const struct cli_cmd *c, int argc, char **argv);
int cli_history(const struct cli_cmd *c, int argc, char **argv);
int cli_tail(const struct cli_cmd *c, int argc, char **argv);

#endif
