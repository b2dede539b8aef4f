/*
 * cmd_room.h: papo new, join, invite, rooms, leave and rename (cli.c's
 * table).
 */
#ifndef PAPO_CMD_ROOM_H
#define PAPO_CMD_ROOM_H

#include "server/cli/cmd.h"

int cli_new(const struct cli_cmd *c, int argc, char **argv);
int cli_join(const struct cli_cmd *c, int argc, char **argv);
int cli_invite(const struct cli_cmd *c, int argc, char **argv);
int cli_rooms(const struct cli_cmd *c, int argc, char **argv);
int cli_leave(const struct cli_cmd *c, int argc, char **argv);
int cli_rename(const struct cli_cmd *c, int argc, char **argv);
/* Whether papo serve runs on home (its serve.json answers). */
int cli_running(const char *home);

#endif
