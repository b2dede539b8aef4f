/*
 * cli.c: papo's commands, as a table of name, usage, options, help and
 * handler (the contract is SPEC's command table; README.md gives a tour).
 * Runs on the main thread
 * of a short-lived process; every error is one line on stderr starting
 * with "papo: ", and the exit status says which kind (cli.h).
 */
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/node.h"
#include "server/cli.h"

struct cli_cmd {
	const char *name;
	const char *usage;
	const char *opts;     /* the option codes it accepts: n a f l */
	const char *help;
	int (*run)(const struct cli_cmd *, int, char **);
};

/* Options shared by the commands that take them. */
struct cli_opts {
	const char *name;
	const char *about;
	int force;
	const char *listen;
};

static int cli_new(const struct cli_cmd *, int, char **);
static int cli_join(const struct cli_cmd *, int, char **);
static int cli_invite(const struct cli_cmd *, int, char **);

static const struct cli_cmd cli_cmds[] = {
	{ "new", "papo new --name NAME [--about TEXT] [--force]", "naf",
	  "Create this member's identity (if it has none) and a new room, and\n"
	  "print the invite that lets others join it.  --name may also come\n"
	  "from PAPO_NAME.  Refuses to replace an existing room without --force.",
	  cli_new },
	{ "join", "papo join INVITE --name NAME [--about TEXT] [--force]", "naf",
	  "Store the room of INVITE (a papo1... string) as this member's room.\n"
	  "--name may also come from PAPO_NAME.  Refuses to replace an existing\n"
	  "room without --force.",
	  cli_join },
	{ "invite", "papo invite [--listen ADDR:PORT]", "l",
	  "Print this room's invite, carrying this member's id and the addresses\n"
	  "its daemon listens on (--listen, PAPO_LISTEN, default "
	  PAPO_DEFAULT_LISTEN ").",
	  cli_invite },
};
#define CLI_NCMDS (sizeof(cli_cmds) / sizeof(cli_cmds[0]))

static void
cli_print_commands(FILE *f)
{
	fprintf(f, "usage: papo COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < CLI_NCMDS; i++)
		fprintf(f, "  %s\n", cli_cmds[i].usage);
	fprintf(f, "\n'papo COMMAND --help' tells more.  State lives in "
	    "$PAPO_HOME (default ~/.papo).\n");
}

static int
cli_usage(const struct cli_cmd *c, const char *fmt, const char *arg)
{
	fprintf(stderr, "papo %s: ", c->name);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: %s\n", c->usage);
	return CLI_USAGE;
}

static int
cli_fail(const char *err)
{
	fprintf(stderr, "papo: %s\n", err);
	return CLI_ERROR;
}

/* $PAPO_HOME, else ~/.papo. */
static int
cli_home(char *out, size_t n)
{
	const char *home = getenv("PAPO_HOME");
	const char *user_home;
	struct passwd *pw;

	if (home != NULL && home[0] != '\0') {
		if ((size_t)snprintf(out, n, "%s", home) >= n)
			return -1;
		return 0;
	}
	user_home = getenv("HOME");
	if ((user_home == NULL || user_home[0] == '\0') &&
	    (pw = getpwuid(getuid())) != NULL)
		user_home = pw->pw_dir;
	if (user_home == NULL)
		return -1;
	return (size_t)snprintf(out, n, "%s/.papo", user_home) >= n ? -1 : 0;
}

/* Parses the options of c into o.  Returns -1 after printing usage. */
static int
cli_parse(const struct cli_cmd *c, int argc, char **argv, struct cli_opts *o,
    int *help)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "about", required_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'f' },
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	*help = 0;
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		const char *flag = argv[optind - 1];

		if (ch != 'h' && strchr(c->opts, ch) == NULL)
			ch = '?';
		switch (ch) {
		case 'n': o->name = optarg; break;
		case 'a': o->about = optarg; break;
		case 'f': o->force = 1; break;
		case 'l': o->listen = optarg; break;
		case 'h': *help = 1; return 0;
		default:
			cli_usage(c, "unknown or incomplete option '%s'", flag);
			return -1;
		}
	}
	if (o->name == NULL)
		o->name = getenv("PAPO_NAME");
	if (o->listen == NULL)
		o->listen = getenv("PAPO_LISTEN");
	if (o->listen == NULL || o->listen[0] == '\0')
		o->listen = PAPO_DEFAULT_LISTEN;
	return 0;
}

static int
cli_help(const struct cli_cmd *c)
{
	printf("usage: %s\n\n%s\n", c->usage, c->help);
	return CLI_OK;
}

static int
cli_new(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], home[4096];
	struct cli_opts o;
	char *invite = NULL;
	int help;

	if (cli_parse(c, argc, argv, &o, &help) == -1)
		return CLI_USAGE;
	if (help)
		return cli_help(c);
	if (optind != argc)
		return cli_usage(c, "unexpected argument '%s'", argv[optind]);
	if (o.name == NULL)
		return cli_usage(c, "%s", "--name NAME is required");
	if (cli_home(home, sizeof(home)) == -1)
		return cli_fail("cannot tell the home directory: set PAPO_HOME");
	if (room_create(err, home, o.name, o.about, o.force, o.listen,
	    &invite) == -1)
		return cli_fail(err);
	printf("new room created; you are %s.\n"
	    "share this invite with the other members:\n%s\n", o.name, invite);
	free(invite);
	return CLI_OK;
}

static int
cli_join(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], home[4096];
	struct cli_opts o;
	int help;

	if (cli_parse(c, argc, argv, &o, &help) == -1)
		return CLI_USAGE;
	if (help)
		return cli_help(c);
	if (optind == argc)
		return cli_usage(c, "%s", "the INVITE is missing");
	if (optind + 1 != argc)
		return cli_usage(c, "unexpected argument '%s'", argv[optind + 1]);
	if (o.name == NULL)
		return cli_usage(c, "%s", "--name NAME is required");
	if (cli_home(home, sizeof(home)) == -1)
		return cli_fail("cannot tell the home directory: set PAPO_HOME");
	if (room_join(err, home, argv[optind], o.name, o.about, o.force) == -1)
		return cli_fail(err);
	printf("joined the room as %s; start the daemon with 'papo serve'.\n",
	    o.name);
	return CLI_OK;
}

static int
cli_invite(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], home[4096];
	struct cli_opts o;
	char *invite = NULL;
	int help;

	if (cli_parse(c, argc, argv, &o, &help) == -1)
		return CLI_USAGE;
	if (help)
		return cli_help(c);
	if (optind != argc)
		return cli_usage(c, "unexpected argument '%s'", argv[optind]);
	if (cli_home(home, sizeof(home)) == -1)
		return cli_fail("cannot tell the home directory: set PAPO_HOME");
	if (room_invite(err, home, o.listen, &invite) == -1)
		return cli_fail(err);
	printf("%s\n", invite);
	free(invite);
	return CLI_OK;
}

int
cli_main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (cmd == NULL) {
		cli_print_commands(stderr);
		return CLI_USAGE;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "-h") == 0) {
		cli_print_commands(stdout);
		return CLI_OK;
	}
	for (size_t i = 0; i < CLI_NCMDS; i++)
		if (strcmp(cmd, cli_cmds[i].name) == 0)
			return cli_cmds[i].run(&cli_cmds[i], argc - 1, argv + 1);
	fprintf(stderr, "papo: unknown command '%s'\n", cmd);
	cli_print_commands(stderr);
	return CLI_USAGE;
}
