/*
 * cmd_nodisk.c: the front's stand-in for cmd_disk.c.  The front hands
 * papo history to papo-full when no daemon runs (cli.c), so these run
 * only when the daemon stopped after the front looked, and say so.
 */
#include <stdio.h>

#include "node/node.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_disk.h"

static int
cli_nodisk(const char *home)
{
	char err[PAPO_ERR_LEN];

	snprintf(err, sizeof(err), "papo serve on %s stopped meanwhile: run "
	    "the command again", home);
	return cli_fail(err);
}

int
cli_history_disk(const char *home, const char *room, size_t n, char **text,
    struct cJSON **ans)
{
	(void)room, (void)n, (void)text, (void)ans;
	return cli_nodisk(home);
}

int
cli_search_disk(const char *home, const struct node_offline_query *q,
    char **text, struct cJSON **ans)
{
	(void)q, (void)text, (void)ans;
	return cli_nodisk(home);
}
