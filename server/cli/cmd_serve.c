/*
 * cmd_serve.c: the commands that run a long-lived part of papo: papo
 * serve (the daemon, from the settings table), papo mcp (the stdio
 * bridge), papo hook and papo setup (an agent harness's side).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/node.h"
#include "server/cli/bridge.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_serve.h"
#include "server/cli/full.h"
#include "server/cli/hook.h"
#include "server/cli/settings.h"
#include "server/cli/setup.h"
#include "server/daemon/serve.h"

int
cli_serve(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN];
	struct serve_config sc;
	struct cli_opts o;
	char *token = NULL;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	/* --token's value is in argv, which every local user reads in
	 * /proc/PID/cmdline (ps): copied, then its bytes overwritten, so
	 * it shows there only while papo serve starts.  PAPO_TOKEN never
	 * shows (docs/SECURITY.md). */
	if (o.token != NULL) {
		if ((token = strdup(o.token)) == NULL)
			return cli_fail("out of memory");
		memset((char *)o.token, 'x', strlen(o.token));
		o.token = token;
	}
	{
		const struct setting_arg args[] = {
			{ "--http", o.http }, { "--listen", o.listen },
			{ "--token", o.token }, { "--name", o.name },
			{ "--about", o.about }, { "--room", o.room },
			{ "--turn", o.turn }, { "--tls", o.tls },
			{ "--advertise", o.advertise[0] != '\0' ?
			    o.advertise : NULL },
		};

		sc.node.home = o.home;
		/* A bad value is refused before anything starts. */
		if (settings_load(err, &sc, args, sizeof(args) /
		    sizeof(args[0])) == -1 || serve_run(err, &sc) == -1)
			rc = cli_fail(err);
		else
			rc = CLI_OK;
	}
	if (token != NULL) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	return rc;
}

int
cli_mcp(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN];
	struct cli_opts o;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	rc = bridge_run(err, o.home, o.channels, o.agent, o.room_flag ? o.room :
	    NULL, o.new_room);
	if (rc == -1)
		return cli_fail(err);
	/* The daemon it started serves HTTPS: the front's bridge cannot
	 * reach it, papo-full's can (nothing was read of stdin yet). */
	if (rc == 1)
		return cli_full(c, argc, argv);
	return CLI_OK;
}

int
cli_hook(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	return hook_run(o.home, o.agent, optind < argc ? argv[optind] : NULL);
}

_Static_assert(SETUP_OK == CLI_OK && SETUP_ERROR == CLI_ERROR &&
    SETUP_USAGE == CLI_USAGE, "papo setup's exit statuses are the CLI's");

/* papo setup parses its own options (--http is a switch there). */
int
cli_setup(const struct cli_cmd *c, int argc, char **argv)
{
	return setup_main(c->usage, c->help, argc, argv);
}
