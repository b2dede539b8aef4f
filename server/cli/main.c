/*
 * main.c: process start-up of both programs, the front `papo` and
 * papo-full: the process's name, the log level from PAPO_LOG, then the
 * command (cli.c).  The daemon's start and stop order is serve.c's.
 */
#include <stdio.h>

#include "lib/log.h"
#include "lib/os.h"
#include "node/node.h"
#include "server/cli/cli.h"
#include "server/cli/settings.h"

int
main(int argc, char **argv)
{
	char err[PAPO_ERR_LEN];
	int level;

	/* papo-full is papo to ps, top and papo doctor's "taken by pid N
	 * (papo)", as the one program was. */
	os_set_name("papo");
	switch (settings_get(err, "PAPO_LOG", &level)) {
	case -1:
		fprintf(stderr, "papo: %s\n", err);
		return CLI_USAGE;
	case 1:
		log_set_level((enum log_level)level);
		break;
	}
	return cli_main(argc, argv);
}
