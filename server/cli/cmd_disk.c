/*
 * cmd_disk.c: papo history and its search from the disk, the daemon
 * stopped (cmd_disk.h).  Runs on the main thread of papo-full only: it
 * links node/offline.c, and so SQLite.
 */
#include <stdio.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_disk.h"
#include "server/daemon/serve.h"

/* The read done: serve.lock let go, its text (NULL: err says why)
 * parsed into *ans. */
static int
cli_disk_done(int lockfd, const char *err, char **text, cJSON **ans)
{
	if (lockfd != -1)
		close(lockfd);
	if (*text == NULL || (*ans = cJSON_Parse(*text)) == NULL)
		return cli_fail(*text == NULL ? err : "out of memory");
	return CLI_OK;
}

int
cli_history_disk(const char *home, const char *room, size_t n, char **text,
    cJSON **ans)
{
	char err[PAPO_ERR_LEN];
	int lockfd;

	/* serve.lock held: no daemon starts while the log is read. */
	if (serve_hold(err, home, &lockfd) == -1)
		return cli_fail(err);
	*text = node_history_offline(err, home, room, n);
	return cli_disk_done(lockfd, err, text, ans);
}

int
cli_search_disk(const char *home, const struct node_offline_query *q,
    char **text, cJSON **ans)
{
	char err[PAPO_ERR_LEN];
	int lockfd;

	if (serve_hold(err, home, &lockfd) == -1)
		return cli_fail(err);
	*text = node_search_offline(err, home, q);
	return cli_disk_done(lockfd, err, text, ans);
}
