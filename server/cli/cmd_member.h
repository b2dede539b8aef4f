/*
 * cmd_member.h: papo status, admin, rotate, remove and tokens (cli.c's
 * table).
 */
#ifndef PAPO_CMD_MEMBER_H
#define PAPO_CMD_MEMBER_H

#include "server/cli/cmd.h"

int cli_status(const struct cli_cmd *c, int argc, char **argv);
int cli_admin(const struct cli_cmd *c, int argc, char **argv);
int cli_rotate(const struct cli_cmd *c, int argc, char **argv);
int cli_remove(const struct cli_cmd *c, int argc, char **argv);
int cli_tokens(const struct cli_cmd *c, int argc, char **argv);

#endif
