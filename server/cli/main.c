/*
 * main.c: process start-up: the log level from PAPO_LOG, then the
 * command (cli.c).  The daemon's start and stop order is serve.c's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lib/log.h"
#include "node/node.h"
#include "server/cli/cli.h"

int
main(int argc, char **argv)
{
	const char *level = getenv("PAPO_LOG");

	if (level != NULL && level[0] != '\0') {
		int l = log_parse_level(level);

		if (l == -1) {
			fprintf(stderr, "papo: PAPO_LOG must be error, warn, info "
			    "or debug, not '%s'\n", level);
			return CLI_USAGE;
		}
		log_set_level((enum log_level)l);
	}
	return cli_main(argc, argv);
}
