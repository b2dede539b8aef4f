/*
 * cmd.c: what papo's commands share (cmd.h): their options, parsed by
 * getopt_long and filled from the environment where a command takes them
 * there (papo serve's come from the settings table instead), the home,
 * usage errors, one-line errors and --help.  Main thread.
 */
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/node.h"
#include "server/cli/cmd.h"
#include "server/cli/settings.h"

int
cli_usage(const struct cli_cmd *c, const char *fmt, const char *arg)
{
	fprintf(stderr, "papo %s: ", c->name);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: %s\n", c->usage);
	return CLI_USAGE;
}

int
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

static const char *
cli_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* Parses the options of c into o.  Returns -1 after printing usage. */
static int
cli_parse(const struct cli_cmd *c, int argc, char **argv, struct cli_opts *o,
    int *help)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'm' },
		{ "about", required_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'f' },
		{ "listen", required_argument, NULL, 'l' },
		{ "http", required_argument, NULL, 'H' },
		{ "token", required_argument, NULL, 't' },
		{ "to", required_argument, NULL, 'T' },
		{ "reply-to", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "channels", no_argument, NULL, 'c' },
		{ "agent", required_argument, NULL, 'g' },
		{ "new-room", no_argument, NULL, 'N' },
		{ "advertise", required_argument, NULL, 'A' },
		{ "turn", required_argument, NULL, 'U' },
		{ "room", required_argument, NULL, 'R' },
		{ "tls", required_argument, NULL, 'S' },
		{ "delete", no_argument, NULL, 'D' },
		{ "file", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "wait", no_argument, NULL, 'W' },
		{ "query", required_argument, NULL, 'q' },
		{ "from", required_argument, NULL, 'Z' },
		{ "since", required_argument, NULL, 's' },
		{ "before", required_argument, NULL, 'b' },
		{ "after", required_argument, NULL, 'e' },
		{ "thread", required_argument, NULL, 'P' },
		{ "files", no_argument, NULL, 'I' },
		{ "all-rooms", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	*help = 0;
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "hn:o:q:", longopts,
	    NULL)) != -1) {
		const char *flag = argv[optind - 1];

		if (ch != 'h' && strchr(c->opts, ch) == NULL)
			ch = '?';
		switch (ch) {
		case 'm': o->name = optarg; o->name_flag = 1; break;
		case 'a': o->about = optarg; break;
		case 'f': o->force = 1; break;
		case 'l': o->listen = optarg; o->listen_given = 1; break;
		case 'H': o->http = optarg; break;
		case 't': o->token = optarg; break;
		case 'T': o->to = optarg; break;
		case 'r': o->reply_to = optarg; break;
		case 'j': o->json = 1; break;
		case 'n': o->count = optarg; break;
		case 'c': o->channels = 1; break;
		case 'g': o->agent = optarg; break;
		case 'N': o->new_room = 1; break;
		case 'U': o->turn = optarg; break;
		case 'R': o->room = optarg; o->room_flag = 1; break;
		case 'S': o->tls = optarg; break;
		case 'D': o->delete = 1; break;
		case 'o': o->output = optarg; break;
		case 'W': o->wait = 1; break;
		case 'q': o->query = optarg; break;
		case 'Z': o->from = optarg; break;
		case 's': o->since = optarg; break;
		case 'b': o->before = optarg; break;
		case 'e': o->after = optarg; break;
		case 'P': o->thread = optarg; break;
		case 'I': o->files_only = 1; break;
		case 'Y': o->all_rooms = 1; break;
		case 'F':
			if (o->nfiles == CLI_FILES_MAX) {
				cli_usage(c, "a message names at most 16 files, "
				    "not more ('%s')", flag);
				return -1;
			}
			o->files[o->nfiles++] = optarg;
			break;
		case 'A':
			if (strlen(o->advertise) + strlen(optarg) + 2 >
			    sizeof(o->advertise)) {
				cli_usage(c, "too many addresses in '%s'", flag);
				return -1;
			}
			if (o->advertise[0] != '\0')
				strcat(o->advertise, ",");
			strcat(o->advertise, optarg);
			break;
		case 'h': *help = 1; return 0;
		default:
			cli_usage(c, "unknown or incomplete option '%s'", flag);
			return -1;
		}
	}
	/* papo serve's settings, these among them, are the settings table's;
	 * the other commands that take a name, an about, a room or a QUIC
	 * address read them here as they always have. */
	if (c->settings)
		return 0;
	if (o->name == NULL)
		o->name = getenv("PAPO_NAME");
	if (o->about == NULL)
		o->about = getenv("PAPO_ABOUT");
	if (o->room == NULL)
		o->room = cli_env("PAPO_ROOM");
	if (o->listen == NULL)
		o->listen = cli_env("PAPO_LISTEN");
	if (o->listen == NULL)
		o->listen = PAPO_DEFAULT_LISTEN;
	return 0;
}

int
cli_help(const struct cli_cmd *c)
{
	printf("usage: %s\n\n%s\n", c->usage, c->help);
	if (c->settings)
		settings_help(stdout);
	return CLI_OK;
}

/*
 * Parses the options of a command that takes exactly npos positional
 * arguments.  Returns -1 when the command is done (help shown, or usage
 * error), with its exit status in *rc.
 */
int
cli_start(const struct cli_cmd *c, int argc, char **argv, struct cli_opts *o,
    int npos, int *rc)
{
	int help;

	if (cli_parse(c, argc, argv, o, &help) == -1) {
		*rc = CLI_USAGE;
		return -1;
	}
	if (help) {
		*rc = cli_help(c);
		return -1;
	}
	if (argc - optind > npos) {
		*rc = cli_usage(c, "unexpected argument '%s'", argv[optind + npos]);
		return -1;
	}
	if (cli_home(o->home, sizeof(o->home)) == -1) {
		*rc = cli_fail("cannot tell the home directory: set PAPO_HOME");
		return -1;
	}
	return 0;
}
