/*
 * full.c: the front program's hand-over to papo-full (full.h).  The
 * front is the `papo` users and agents' harnesses run; papo-full lies
 * beside it in the build tree, and in PAPO_LIBEXEC (relative to the
 * front's own directory, ../libexec/papo as installed).  Runs on the
 * main thread before the command has read or written anything, so that
 * papo-full finds stdin, stdout and the arguments as they were.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/os.h"
#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/full.h"

#ifndef PAPO_LIBEXEC
#define PAPO_LIBEXEC "../libexec/papo"
#endif
#define FULL_NAME "papo-full"

int
cli_full(const struct cli_cmd *c, int argc, char **argv)
{
	char self[PATH_MAX], path[2][PATH_MAX + 64];
	char **v = NULL;
	char *slash;

	(void)c;
	if (os_self_exe(self, sizeof(self)) == -1) {
		fprintf(stderr, "papo: cannot tell where this program is: %s\n",
		    strerror(errno));
		return CLI_ERROR;
	}
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	/* The build tree's, beside the front; else the installed one. */
	snprintf(path[0], sizeof(path[0]), "%s/%s", self, FULL_NAME);
	snprintf(path[1], sizeof(path[1]), "%s/%s/%s", self, PAPO_LIBEXEC,
	    FULL_NAME);
	if ((v = calloc((size_t)argc + 2, sizeof(*v))) == NULL) {
		fprintf(stderr, "papo: out of memory\n");
		return CLI_ERROR;
	}
	/* ps shows "papo COMMAND ...", as before the split. */
	v[0] = "papo";
	memcpy(v + 1, argv, (size_t)argc * sizeof(*v));
	for (int i = 0; i < 2; i++)
		if (access(path[i], X_OK) == 0)
			execv(path[i], v);
	fprintf(stderr, "papo: cannot run %s (%s, or %s): %s\n", FULL_NAME,
	    path[0], path[1], strerror(errno));
	free(v);
	return CLI_ERROR;
}

int
cli_full_wanted(const struct cli_cmd *c)
{
	char err[PAPO_ERR_LEN], home[4096];
	struct client cl;
	int tls;

	if (c->reach == CLI_LOCAL || cli_home(home, sizeof(home)) == -1)
		return 0;       /* the command says why, as papo-full would */
	if (client_open(err, home, &cl) == -1)
		return c->reach == CLI_DISK;
	tls = strncmp(cl.url, "https://", 8) == 0;
	client_close(&cl);
	return tls;
}
