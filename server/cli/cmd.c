/*
 * cmd.c: what papo's commands share (cmd.h): their options, parsed by
 * getopt_long and filled from the environment where a command takes them
 * there (papo serve's come from the settings table instead), the home,
 * usage errors, one-line errors and --help.  Main thread.
 */
#include <ctype.h>
#include <getopt.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/print.h"
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

int
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

/* Every option of papo's commands; each command takes the ones its
 * opts name (struct cli_cmd), and only those are given to getopt_long. */
static const struct option cli_longopts[] = {
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
	{ "public", no_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' },
};

#define CLI_NLONG (sizeof(cli_longopts) / sizeof(cli_longopts[0]))

/* One command's options, as getopt_long and cli_arrange take them:
 * its long options, and -h with the short ones it takes of -n N,
 * -o PATH and -q WORDS. */
struct cli_optset {
	struct option lng[CLI_NLONG + 1];
	size_t nlong;
	char shrt[8];                 /* getopt's optstring: "hn:q:" */
};

static void
cli_optset(const struct cli_cmd *c, struct cli_optset *s)
{
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < CLI_NLONG; i++)
		if (cli_longopts[i].val == 'h' ||
		    strchr(c->opts, cli_longopts[i].val) != NULL)
			s->lng[s->nlong++] = cli_longopts[i];
	s->shrt[n++] = 'h';
	for (const char *p = "noq"; *p != '\0'; p++)
		if (strchr(c->opts, *p) != NULL) {
			s->shrt[n++] = *p;
			s->shrt[n++] = ':';
		}
}

/* Whether ch is a short option with a value that s takes (-n, -o, -q). */
static int
cli_short_value(const struct cli_optset *s, int ch)
{
	return ch != 'h' && ch != ':' && ch != '\0' &&
	    strchr(s->shrt, ch) != NULL;
}

/* The long option "--NAME[=VALUE]" names: exactly, else the one option
 * NAME is the start of (as getopt_long takes them); NULL when none or
 * several. */
static const struct option *
cli_long_find(const struct cli_optset *s, const char *arg)
{
	size_t len = strcspn(arg + 2, "=");
	const struct option *hit = NULL;
	size_t hits = 0;

	for (size_t i = 0; i < s->nlong; i++) {
		if (strncmp(s->lng[i].name, arg + 2, len) != 0)
			continue;
		if (s->lng[i].name[len] == '\0')
			return &s->lng[i];
		hit = &s->lng[i];
		hits++;
	}
	return hits == 1 ? hit : NULL;
}

size_t
cli_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[CLI_WORD_MAX + 1][CLI_WORD_MAX + 1];

	if (la > CLI_WORD_MAX || lb > CLI_WORD_MAX)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]);
			int cb = tolower((unsigned char)b[j - 1]);
			size_t best = d[i - 1][j - 1] + (ca != cb);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			/* Two letters swapped ("sya") cost one edit. */
			if (i > 1 && j > 1 && ca == tolower((unsigned char)
			    b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

int
cli_near(const char *word, size_t d)
{
	return d <= (strlen(word) <= 4 ? 1 : strlen(word) <= 8 ? 2 : 3);
}

/* An unknown option (arg), with the nearest of the command's long
 * options when one is near, and how to give a text that starts with
 * '-'. */
static void
cli_unknown(const struct cli_cmd *c, const struct cli_optset *s,
    const char *arg)
{
	char word[CLI_WORD_MAX + 1], msg[PAPO_ERR_LEN];
	const char *w = arg + (arg[1] == '-' ? 2 : 1);
	size_t best = SIZE_MAX, at = 0;

	snprintf(word, sizeof(word), "%.*s", (int)strcspn(w, "="), w);
	for (size_t i = 0; i < s->nlong; i++) {
		size_t d = cli_distance(word, s->lng[i].name);

		if (d < best) {
			best = d;
			at = i;
		}
	}
	if (cli_near(word, best))
		snprintf(msg, sizeof(msg), "unknown option '%.64s'; did you "
		    "mean '--%s'?", arg, s->lng[at].name);
	else if (strcmp(c->name, "say") == 0)
		snprintf(msg, sizeof(msg), "unknown option '%.64s' (a text "
		    "that starts with '-' goes after '--': papo say -- "
		    "'%.64s')", arg, arg);
	else
		snprintf(msg, sizeof(msg), "unknown option '%.64s' ('papo %s "
		    "--help' lists its options)", arg, c->name);
	cli_usage(c, "%s", msg);
}

/*
 * Whether arg is written as an option: "--" and a letter, "-" and a
 * short option with a value the command takes (-n5, -q WORDS), or "-"
 * and a letter with no space in it (-h, or an option mistyped).  Any
 * other argument that starts with '-' ("- a list item", "-5 degrees",
 * "->", "---") is a positional one, such as a message's TEXT
 * (README.md, after its examples).
 */
static int
cli_optlike(const struct cli_optset *s, const char *arg)
{
	if (arg[0] != '-' || arg[1] == '\0')
		return 0;
	if (arg[1] == '-')
		return isalpha((unsigned char)arg[2]) != 0;
	if (cli_short_value(s, arg[1]))
		return 1;
	return isalpha((unsigned char)arg[1]) &&
	    strpbrk(arg, " \t\n") == NULL;
}

/*
 * Puts argv's options (with their values) first, then "--" when it was
 * given, then the positional arguments in their order: as getopt_long
 * would permute them, but with cli_optlike's rule for what an option
 * is, so getopt_long sees only options.  *nopt gets the count of option
 * elements, *dashes 1 when "--" was given.  -1 after a usage error that
 * names the argument at fault.
 */
static int
cli_arrange(const struct cli_cmd *c, const struct cli_optset *s, int argc,
    char **argv, int *nopt, int *dashes)
{
	char **pos;
	int npos = 0, n = 0, rc = -1;

	*nopt = 0;
	*dashes = 0;
	if ((pos = calloc((size_t)argc + 1, sizeof(*pos))) == NULL) {
		cli_fail("out of memory");
		return -1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int value;

		if (strcmp(a, "--") == 0) {
			*dashes = 1;
			while (++i < argc)
				pos[npos++] = argv[i];
			break;
		}
		if (!cli_optlike(s, a)) {
			pos[npos++] = argv[i];
			continue;
		}
		if (a[1] == '-') {
			const struct option *o = cli_long_find(s, a);

			if (o == NULL) {
				cli_unknown(c, s, a);
				goto out;
			}
			value = o->has_arg == required_argument &&
			    strchr(a, '=') == NULL;
		} else if (strcmp(a, "-h") == 0)
			value = 0;
		else if (cli_short_value(s, a[1]))
			value = a[2] == '\0';
		else {
			cli_unknown(c, s, a);
			goto out;
		}
		argv[1 + n++] = argv[i];
		if (value) {
			if (i + 1 == argc) {
				cli_usage(c, "option '%s' needs a value", a);
				goto out;
			}
			argv[1 + n++] = argv[++i];
		}
	}
	*nopt = n;
	if (*dashes)
		argv[1 + n++] = "--";
	memcpy(argv + 1 + n, pos, (size_t)npos * sizeof(*pos));
	rc = 0;
out:
	free(pos);
	return rc;
}

/* Parses the options of c into o, leaving optind at the first
 * positional argument.  Returns -1 after printing usage. */
static int
cli_parse(const struct cli_cmd *c, int argc, char **argv, struct cli_opts *o,
    int *help)
{
	struct cli_optset s;
	int ch, nopt, dashes;

	memset(o, 0, sizeof(*o));
	*help = 0;
	cli_optset(c, &s);
	if (cli_arrange(c, &s, argc, argv, &nopt, &dashes) == -1)
		return -1;
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(1 + nopt, argv, s.shrt, s.lng, NULL)) != -1) {
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
		case 'B': o->public = 1; break;
		case 'F':
			if (o->nfiles == CLI_FILES_MAX) {
				cli_usage(c, "a message names at most 16 files, "
				    "not more ('%s')", optarg);
				return -1;
			}
			o->files[o->nfiles++] = optarg;
			break;
		case 'A':
			if (strlen(o->advertise) + strlen(optarg) + 2 >
			    sizeof(o->advertise)) {
				cli_usage(c, "too many addresses in '%s'",
				    optarg);
				return -1;
			}
			if (o->advertise[0] != '\0')
				strcat(o->advertise, ",");
			strcat(o->advertise, optarg);
			break;
		case 'h': *help = 1; return 0;
		default:
			/* cli_arrange let through only the command's own
			 * options, each with its value. */
			cli_usage(c, "unknown or incomplete option '%s'",
			    argv[optind - 1]);
			return -1;
		}
	}
	optind = 1 + nopt + dashes;
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

/* Whether the start of s is pre, letters compared case-insensitively. */
static int
cli_starts(const char *s, const char *pre)
{
	return strncasecmp(s, pre, strlen(pre)) == 0;
}

int
cli_room_pick(const char *home, const char *sel, char id[32])
{
	char err[PAPO_ERR_LEN], names[PAPO_ERR_LEN];
	const cJSON *r, *rooms, *hit = NULL;
	struct client cl;
	char *text = NULL;
	long status = 0;
	cJSON *ans = NULL;
	size_t hits = 0, used = 0;
	int rc = 1;

	if (sel == NULL || sel[0] == '\0' || strcmp(sel, "*") == 0 ||
	    client_open(err, home, &cl) == -1)
		return 1;
	if (client_call(err, &cl, "/api/rooms", NULL, &status, &text) == -1 ||
	    status != 200 || (ans = cJSON_Parse(text)) == NULL)
		goto out;
	rooms = cJSON_GetObjectItemCaseSensitive(ans, "rooms");
	/* Its id or its name, exactly; then its name in any case; then the
	 * start of a name or an id. */
	for (int pass = 0; pass < 3 && hits == 0; pass++)
		cJSON_ArrayForEach(r, rooms) {
			const char *rid = cli_str(r, "id");
			const char *name = cli_str(r, "name");

			if (rid == NULL || name == NULL)
				continue;
			if (pass == 0 ? strcmp(rid, sel) == 0 ||
			    strcmp(name, sel) == 0 : pass == 1 ?
			    strcasecmp(name, sel) == 0 :
			    cli_starts(name, sel) || cli_starts(rid, sel)) {
				hit = r;
				hits++;
			}
			if (pass == 0 && strcmp(rid, sel) == 0) {
				hits = 1;
				break;
			}
		}
	if (hits == 1) {
		snprintf(id, 32, "%s", cli_str(hit, "id"));
		rc = 0;
	} else if (hits > 1) {
		names[0] = '\0';
		cJSON_ArrayForEach(r, rooms) {
			const char *rid = cli_str(r, "id");
			const char *name = cli_str(r, "name");

			if (rid == NULL || name == NULL || used >= sizeof(names) ||
			    !(strcasecmp(name, sel) == 0 || cli_starts(name, sel) ||
			    cli_starts(rid, sel)))
				continue;
			used += (size_t)snprintf(names + used, sizeof(names) -
			    used, "%s%s (%.8s)", used > 0 ? ", " : "", name, rid);
		}
		fprintf(stderr, "papo: '%s' names %zu rooms: ", sel, hits);
		fputs(names, stderr);
		fprintf(stderr, "; give more of its name, or its id\n");
		rc = -1;
	}
out:
	cJSON_Delete(ans);
	free(text);
	client_close(&cl);
	return rc;
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
	/* A ROOM names a room the command acts on, but for papo new and
	 * papo serve, where it is a new room's name. */
	if (o->room != NULL && strcmp(c->name, "new") != 0 && !c->settings) {
		switch (cli_room_pick(o->home, o->room, o->room_id)) {
		case 0:
			o->room = o->room_id;
			break;
		case -1:
			*rc = CLI_ERROR;
			return -1;
		}
	}
	return 0;
}
