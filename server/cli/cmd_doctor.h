/*
 * cmd_doctor.h: papo doctor, what a user pastes into a bug report: the
 * version and system, the home and its files' modes, the settings set,
 * the ports and who holds them, how the daemon is reached (addresses,
 * NAT, port mapping, relay), its rooms and each member's clock against
 * ours, and what looks wrong, each with what to do.  It never prints a
 * secret: no invite, key, token or relay password, only that one is set.
 * Works with the daemon stopped, checking what it can without it.
 * Main thread; exit status 0 when nothing looks wrong, 1 when something
 * does (listed on stdout, one line on stderr), 2 a usage error.
 */
#ifndef PAPO_CMD_DOCTOR_H
#define PAPO_CMD_DOCTOR_H

#include "server/cli/cmd.h"

int cli_doctor(const struct cli_cmd *c, int argc, char **argv);

#endif
