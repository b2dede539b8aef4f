/*
 * cli.c: papo's commands, as a table of name, usage, options, help and
 * handler (the contract is SPEC's command table; README.md gives a tour).
 * Runs on the main thread of a short-lived process, except 'serve',
 * which hands the main thread to the daemon (serve.c).  Commands that
 * talk to the daemon go through client.c.  Every error is one line on
 * stderr starting with "papo: ", and the exit status says which kind
 * (cli.h).  Text from other members is printed with control characters
 * replaced, so that it cannot drive the terminal.
 */
#include <ctype.h>
#include <getopt.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/api/api.h"
#include "server/cli/bridge.h"
#include "server/cli/cli.h"
#include "server/cli/client.h"
#include "server/cli/hook.h"
#include "server/cli/settings.h"
#include "server/cli/setup.h"
#include "server/daemon/serve.h"
#include "server/http/http.h"

struct cli_cmd {
	const char *name;
	const char *usage;
	const char *opts;     /* the option codes it accepts (cli_parse) */
	const char *help;
	int (*run)(const struct cli_cmd *, int, char **);
	/* Its settings are the settings table's (settings.c), which reads
	 * their environment variables: cli_parse leaves them alone. */
	int settings;
};

/* Options shared by the commands that take them. */
struct cli_opts {
	const char *name;
	const char *about;
	int force;
	const char *listen;
	int listen_given;     /* --listen itself, not PAPO_LISTEN */
	const char *http;
	const char *token;
	const char *to;
	const char *reply_to;
	int json;
	const char *count;
	int channels;         /* papo mcp: opt in to channel pushes */
	const char *agent;    /* papo mcp, papo hook: the agent's name */
	int new_room;         /* papo mcp: may start serve with no room */
	char advertise[1024]; /* --advertise, each one, comma-separated */
	const char *turn;     /* --turn, else PAPO_TURN */
	const char *room;     /* --room, else PAPO_ROOM: a new room's name;
	                       * for the others, the room they act on */
	int room_flag;        /* --room itself (papo mcp binds only to it) */
	int delete;           /* papo leave --delete */
	const char *tls;      /* --tls, else PAPO_TLS */
	char home[4096];      /* $PAPO_HOME, else ~/.papo */
};

static int cli_new(const struct cli_cmd *, int, char **);
static int cli_join(const struct cli_cmd *, int, char **);
static int cli_invite(const struct cli_cmd *, int, char **);
static int cli_serve(const struct cli_cmd *, int, char **);
static int cli_mcp(const struct cli_cmd *, int, char **);
static int cli_hook(const struct cli_cmd *, int, char **);
static int cli_say(const struct cli_cmd *, int, char **);
static int cli_status(const struct cli_cmd *, int, char **);
static int cli_history(const struct cli_cmd *, int, char **);
static int cli_tail(const struct cli_cmd *, int, char **);
static int cli_admin(const struct cli_cmd *, int, char **);
static int cli_rotate(const struct cli_cmd *, int, char **);
static int cli_remove(const struct cli_cmd *, int, char **);
static int cli_tokens(const struct cli_cmd *, int, char **);
static int cli_setup(const struct cli_cmd *, int, char **);
static int cli_rooms(const struct cli_cmd *, int, char **);
static int cli_leave(const struct cli_cmd *, int, char **);

#define CLI_TAIL_LINE_MAX (256 * 1024)   /* longest stream line */
#define CLI_TAIL_WAIT_S 60                /* for a daemon to come back */

static const struct cli_cmd cli_cmds[] = {
	{ "new", "papo new --name NAME [--about TEXT] [--room ROOM] [--force]",
	  "mafR",
	  "Create this member's identity (if it has none) and a new room, and\n"
	  "print the invite that lets others join it.  --name and --about may\n"
	  "also come from PAPO_NAME and PAPO_ABOUT.  --room (or PAPO_ROOM)\n"
	  "names the room (1 to 64 bytes of UTF-8); the name travels in its\n"
	  "invites, and without one the room is papo- and the start of its id.\n"
	  "A home in rooms already gets this one beside them (at most 64), at\n"
	  "once in its running daemon.  --force replaces the home's first\n"
	  "room instead (its files moved into PAPO_HOME/old-ROOMID-DATE).",
	  cli_new, 0 },
	{ "join", "papo join INVITE --name NAME [--about TEXT] [--force]", "maf",
	  "Join the room of INVITE (a papo1... string), beside the rooms this\n"
	  "member is in already: at once when papo serve runs on PAPO_HOME,\n"
	  "else at its next start.  --name (the name this member has in that\n"
	  "room) and --about may also come from PAPO_NAME and PAPO_ABOUT.\n"
	  "--force replaces the home's first room instead, moving its files\n"
	  "into PAPO_HOME/old-ROOMID-DATE (only while no daemon runs).",
	  cli_join, 0 },
	{ "rooms", "papo rooms [--json] | papo rooms default ROOM", "j",
	  "List the rooms this member is in: name, id, this member's name\n"
	  "there, members online, messages, and which is the default (the one\n"
	  "commands act on without --room, marked *).  'default ROOM' sets\n"
	  "it.  A ROOM is a room's name, its id, or the start of its id.",
	  cli_rooms, 0 },
	{ "leave", "papo leave ROOM [--delete] [--json]", "jD",
	  "Leave ROOM: the running daemon says bye to its members and stops\n"
	  "following it.  Its files are moved into PAPO_HOME/old-ROOMID-DATE\n"
	  "(its history kept), or with --delete deleted.",
	  cli_leave, 0 },
	{ "invite", "papo invite [--room ROOM] [--listen ADDR:PORT]", "lR",
	  "Print a room's invite (the default room's, or --room's), carrying\n"
	  "this member's id and the addresses its daemon listens on: the\n"
	  "running daemon's own invite, else the one for --listen (or\n"
	  "PAPO_LISTEN, default " PAPO_DEFAULT_LISTEN ").",
	  cli_invite, 0 },
	{ "serve", "papo serve [--http ADDR:PORT] [--listen ADDR:PORT] "
	  "[--advertise ADDR:PORT]... [--turn turn:HOST[:PORT]] [--token T] "
	  "[--tls self] [--name NAME] [--about TEXT] [--room ROOM]",
	  "HltmaAURS",
	  "Run the daemon: the node that speaks QUIC with the other members\n"
	  "(--listen), and the HTTP API, MCP and dashboard (--http).  Port 0\n"
	  "picks a free port; serve.json in PAPO_HOME tells the real ones.\n"
	  "It asks the home router for its UDP port (UPnP-IGD, NAT-PMP) and\n"
	  "advertises a public one it gets.  --advertise names where other\n"
	  "members reach this one when it cannot tell (a port forward, a\n"
	  "container on another host): put first in what it tells them and in\n"
	  "its invites.  --turn names a TURN server through which members\n"
	  "with no direct path reach this one, and it them; its credentials\n"
	  "come only from the environment, never the command line.\n"
	  "An HTTP address other than loopback needs a token (32 random\n"
	  "characters or more, openssl rand -hex 32); with one, every request\n"
	  "but /healthz must carry 'Authorization: Bearer T' (the dashboard's\n"
	  "files are open too).  HTTPS: PAPO_TLS_CERT and PAPO_TLS_KEY, or\n"
	  "--tls self.  Requests through a tunnel (PAPO_PUBLIC_URL) always\n"
	  "need the token.  PAPO_OAUTH=on (with a token; on loopback, or with\n"
	  "PAPO_PUBLIC_URL naming the https URL clients reach) adds an OAuth\n"
	  "2.1 server for MCP clients that connect by URL: the person approves\n"
	  "each client with the token; 'papo tokens' lists and revokes what\n"
	  "was granted.\n"
	  "With no room yet, it joins PAPO_INVITE or creates a room (named\n"
	  "--room), as --name (or the login name) with --about; with a room,\n"
	  "a PAPO_INVITE of another room is ignored, with a warning.\n"
	  "PAPO_KEEP bounds the log: older messages are dropped at start and\n"
	  "as the log grows, never fetched back, and history says where it\n"
	  "starts.\n"
	  "It prints the MCP URL, the dashboard URL and the room's name and\n"
	  "fingerprint (which tell rooms apart in logs); the invite, which\n"
	  "holds the room's key, only on the start that made the room and only\n"
	  "to a terminal ('papo invite' prints it any time).  It runs until\n"
	  "SIGINT or SIGTERM.  A bad setting stops it before it starts, with\n"
	  "the reason.",
	  cli_serve, 1 },
	{ "mcp", "papo mcp [--channels] [--agent NAME] [--room ROOM] "
	  "[--new-room]", "cgRN",
	  "Speak MCP over stdio, for clients that only start servers as\n"
	  "programs (such as Claude Code): JSON-RPC messages, one a line, on\n"
	  "stdin and stdout, carried to the running daemon's /mcp, whose\n"
	  "notifications (new room messages) come out on stdout too.\n"
	  "Messages are the agent's through the wait tool; with --channels\n"
	  "(for a client that listens to notifications/claude/channel, such\n"
	  "as Claude Code with channels on) they are given as pushes, and\n"
	  "wait does not return them again.  With --agent, the daemon keeps\n"
	  "what this agent was given apart from its other agents.  With\n"
	  "--room, the session is bound to that room (its name or id): its\n"
	  "tools act on it and only its messages come; without, every room's\n"
	  "come, each naming its room.  Inside\n"
	  "Claude Code it wakes an idle session through its inbox socket\n"
	  "(CLAUDE_CODE_MESSAGING_SOCKET) when a message waits.  When no\n"
	  "daemon runs, it starts 'papo serve' in the background (its output\n"
	  "appended to $PAPO_HOME/serve.log), which keeps running after.  In a\n"
	  "home with no room it refuses (make one first: papo new, or papo\n"
	  "join INVITE), unless PAPO_INVITE names one to join or --new-room\n"
	  "asks it to make a room of its own, as papo serve would.  Ends\n"
	  "the MCP session and exits when stdin closes.  Diagnostics go to\n"
	  "stderr.",
	  cli_mcp, 0 },
	{ "hook", "papo hook [--agent NAME]", "g",
	  "For Claude Code's hooks (papo setup claude-code writes them): reads\n"
	  "the hook's event on stdin.  SessionStart and UserPromptSubmit: when\n"
	  "messages wait for the agent, a line saying who wrote and to call\n"
	  "wait goes into the model's context.  Stop (with asyncRewake): waits\n"
	  "until the idle agent has something new, then exits 2 with that line,\n"
	  "which wakes the session.  Messages are given by wait, never here.",
	  cli_hook, 0 },
	{ "say", "papo say TEXT|- [--to NAME] [--reply-to ID] [--room ROOM] [--json]", "TrjR",
	  "Send TEXT to the room through the running daemon (to one member with\n"
	  "--to, as an answer to message ID with --reply-to).  Prints the\n"
	  "message id and who has it, or who it waits for (also when the\n"
	  "daemon stops meanwhile: the message is kept, and goes out when it\n"
	  "runs again); --json prints the daemon's answer as is.  TEXT - reads\n"
	  "the text from stdin (one final newline taken off).  A text holds at\n"
	  "most 49,152 bytes.",
	  cli_say, 0 },
	{ "status", "papo status [--room ROOM] [--json]", "jR",
	  "Print the room, this member, and every member with its online\n"
	  "state, when it was last seen, and its about text.",
	  cli_status, 0 },
	{ "history", "papo history [-n N] [--room ROOM] [--json]", "njR",
	  "Print the last N messages (default 20, at most 500), oldest first:\n"
	  "time, id, author, \"\u2192 NAME\" when directed, \"\u21b3 ID\" when a\n"
	  "reply, and the text.  When retention (PAPO_KEEP) dropped older\n"
	  "messages, a first line says where the history starts and how many\n"
	  "were dropped.",
	  cli_history, 0 },
	{ "tail", "papo tail [--room ROOM] [--json]", "jR",
	  "Follow the room: print each new message as it arrives, in the form\n"
	  "of 'papo history', until interrupted.  When the daemon restarts,\n"
	  "it comes back and goes on where it left off.  --json prints every\n"
	  "event (message, receipt, presence) as one JSON object a line.",
	  cli_tail, 0 },
	{ "admin", "papo admin NAME [--room ROOM] [--json]", "jR",
	  "Make member NAME (a name or an id) an admin of the room, through\n"
	  "the running daemon.  Only the room's owner (the member who made it)\n"
	  "can; every member learns it from a grant the owner signs.",
	  cli_admin, 0 },
	{ "rotate", "papo rotate [--room ROOM] [--json]", "jR",
	  "Change the room's key, through the running daemon: a new key\n"
	  "epoch, its secret sealed to each member this one knows, in a frame\n"
	  "it signs.  Only the room's owner or an admin can.  Members away get\n"
	  "the new key from any member when they return.",
	  cli_rotate, 0 },
	{ "remove", "papo remove NAME [--room ROOM] [--json]", "jR",
	  "Remove member NAME (a name or an id) from the room, through the\n"
	  "running daemon: the room's key changes (as papo rotate) and NAME is\n"
	  "not given the new one; from then on its connections and the\n"
	  "messages it writes are refused by every member.  Only the room's\n"
	  "owner or an admin can; the owner cannot be removed.  NAME keeps\n"
	  "what it had already read.",
	  cli_remove, 0 },
	{ "tokens", "papo tokens [--json] | papo tokens revoke ID", "j",
	  "List the OAuth grants of the running daemon (PAPO_OAUTH=on): each\n"
	  "one's id, client, when it was made and last used, and when it\n"
	  "expires unless refreshed.  'revoke ID' ends one grant at once: its\n"
	  "access and refresh tokens stop working, and the client must be\n"
	  "approved again.  Needs the daemon's own token (PAPO_TOKEN).",
	  cli_tokens, 0 },
	{ "setup", "papo setup CLIENT [--print] [--remove] [--http] "
	  "[--accept-inbound]", "",
	  "Add papo to an agent harness's own configuration on this machine:\n"
	  "its MCP server, over stdio through 'papo mcp' (this binary, by its\n"
	  "absolute path) or with --http at the running daemon's /mcp URL\n"
	  "(with PAPO_TOKEN as a bearer header), and for Claude Code the hooks\n"
	  "that run 'papo hook'.  PAPO_HOME, when set, goes into the entry.\n"
	  "Running it again changes nothing; every change is said in a line\n"
	  "naming the file, every other setting is kept, and a file that does\n"
	  "not parse is left alone.  --print shows what would be written and\n"
	  "writes nothing; --remove takes out what it added and nothing else.\n"
	  "--accept-inbound (claude-code) sets crossSessionInbound to accept,\n"
	  "which a session that bypasses permissions needs for papo's wakes\n"
	  "to reach it unasked (with --remove: takes it out again).",
	  cli_setup, 0 },
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	*help = 0;
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "hn:", longopts, NULL)) != -1) {
		const char *flag = argv[optind - 1];

		if (ch != 'h' && strchr(c->opts, ch) == NULL)
			ch = '?';
		switch (ch) {
		case 'm': o->name = optarg; break;
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
	if (o->http == NULL)
		o->http = cli_env("PAPO_HTTP");
	if (o->http == NULL)
		o->http = HTTP_DEFAULT_BIND;
	if (o->token == NULL)
		o->token = cli_env("PAPO_TOKEN");
	if (o->turn == NULL)
		o->turn = cli_env("PAPO_TURN");
	if (o->tls == NULL)
		o->tls = cli_env("PAPO_TLS");
	return 0;
}

static int
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
static int
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

/* Where --force put the old room, when it did: one line on stderr. */
static void
cli_said_aside(const char *home, const char *aside)
{
	if (aside[0] != '\0')
		fprintf(stderr, "papo: the old room's files were moved into "
		    "%s/%s\n", home, aside);
}

static int cli_call(const char *home, const char *room, const char *path,
    const char *body, cJSON **out, char **text);
static void cli_put(const char *s);
static const char *cli_str(const cJSON *o, const char *name);

/* Whether papo serve runs on home (its serve.json answers). */
static int
cli_running(const char *home)
{
	char err[PAPO_ERR_LEN];
	struct client cl;

	if (client_open(err, home, &cl) == -1)
		return 0;
	client_close(&cl);
	return 1;
}

/* papo new / papo join while the daemon runs: the room is added to it
 * at once (POST /api/rooms). */
static int
cli_add_room(const struct cli_opts *o, const char *invite)
{
	cJSON *req = cJSON_CreateObject(), *ans = NULL;
	const cJSON *v;
	char *body;
	int rc;

	if (invite != NULL)
		cJSON_AddStringToObject(req, "invite", invite);
	else if (o->room != NULL)
		cJSON_AddStringToObject(req, "room", o->room);
	cJSON_AddStringToObject(req, "name", o->name);
	if (o->about != NULL)
		cJSON_AddStringToObject(req, "about", o->about);
	body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	if (body == NULL)
		return cli_fail("out of memory");
	rc = cli_call(o->home, NULL, "/api/rooms", body, &ans, NULL);
	free(body);
	if (rc != CLI_OK)
		return rc;
	if (invite != NULL) {
		printf("joined room ");
		cli_put(cli_str(ans, "name"));
		printf(" as %s; the daemon follows it now.\n", o->name);
	} else {
		printf("new room ");
		cli_put(cli_str(ans, "name"));
		printf(" created beside the others; you are %s.\n"
		    "share this invite with the other members:\n", o->name);
		if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(ans,
		    "invite")))
			printf("%s\n", v->valuestring);
	}
	cJSON_Delete(ans);
	return CLI_OK;
}

static int
cli_new(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN] = "";
	struct cli_opts o;
	char *invite = NULL;
	int rc, lockfd;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if (o.name == NULL)
		return cli_usage(c, "%s", "--name NAME is required");
	if (!o.force && cli_running(o.home))
		return cli_add_room(&o, NULL);
	/* Held until the new room is written: no daemon starts meanwhile. */
	if (serve_hold(err, o.home, &lockfd) == -1)
		return cli_fail(err);
	rc = room_create(err, o.home, o.name, o.about, o.room,
	    o.force ? aside : NULL, o.listen, &invite);
	if (lockfd != -1)
		close(lockfd);
	cli_said_aside(o.home, aside);
	if (rc == -1)
		return cli_fail(err);
	printf("new room created; you are %s.\n"
	    "share this invite with the other members:\n%s\n", o.name, invite);
	free(invite);
	return CLI_OK;
}

static int
cli_join(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN] = "";
	struct cli_opts o;
	int rc, lockfd;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the INVITE is missing");
	if (o.name == NULL)
		return cli_usage(c, "%s", "--name NAME is required");
	if (!o.force && cli_running(o.home))
		return cli_add_room(&o, argv[optind]);
	if (serve_hold(err, o.home, &lockfd) == -1)
		return cli_fail(err);
	rc = room_join(err, o.home, argv[optind], o.name, o.about,
	    o.force ? aside : NULL);
	if (lockfd != -1)
		close(lockfd);
	cli_said_aside(o.home, aside);
	if (rc == -1)
		return cli_fail(err);
	printf("joined the room as %s; it starts with 'papo serve'.\n", o.name);
	return CLI_OK;
}

static int
cli_invite(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], dir[4096];
	struct cli_opts o;
	char *invite = NULL;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	/* A running daemon's invite carries the port it really bound, and
	 * the addresses it is reached at now. */
	if (!o.listen_given && cli_running(o.home)) {
		cJSON *ans = NULL;

		if ((rc = cli_call(o.home, o.room, "/api/invite", NULL, &ans,
		    NULL)) == CLI_OK)
			printf("%s\n", cli_str(ans, "invite"));
		cJSON_Delete(ans);
		return rc;
	}
	if (o.room != NULL && o.room[0] != '\0') {
		if (room_dir_find(err, o.home, o.room, dir, sizeof(dir)) == -1)
			return cli_fail(err);
	} else if (snprintf(dir, sizeof(dir), "%s", o.home) >= (int)sizeof(dir))
		return cli_fail("PAPO_HOME is too long");
	if (room_invite(err, dir, o.listen, &invite) == -1)
		return cli_fail(err);
	printf("%s\n", invite);
	free(invite);
	return CLI_OK;
}

static int
cli_serve(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN];
	struct serve_config sc;
	struct cli_opts o;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
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
			return cli_fail(err);
	}
	return CLI_OK;
}

static int
cli_hook(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	return hook_run(o.home, o.agent);
}

static int
cli_mcp(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN];
	struct cli_opts o;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if (bridge_run(err, o.home, o.channels, o.agent, o.room_flag ? o.room :
	    NULL, o.new_room) == -1)
		return cli_fail(err);
	return CLI_OK;
}

/*
 * What a send cut short says, after the error, when the daemon's answer
 * did not say (docs/RELIABILITY.md): no answer at all (the daemon died
 * with the request sent), or a 503 (it stopped before the node took the
 * request, which is then not stored; one it took is answered queued).
 */
#define CLI_SEND_UNANSWERED "; the message may have been kept: 'papo " \
	"history' shows it once papo serve runs again, before you send it again"
#define CLI_SEND_UNTAKEN "; the message was not taken: send it again " \
	"once papo serve runs"

/*
 * Asks the running daemon: GET path, or POST body.  On a 2xx answer,
 * returns CLI_OK with the parsed JSON in *out (and the text in *text when
 * text is not NULL); otherwise prints the one-line error and returns
 * CLI_ERROR.  send: the request is a message's (papo say), and an error
 * says whether it was kept.
 */
/* path for the room named (NULL: the default): ?room=ROOM added,
 * percent-encoded.  -1 when it does not fit. */
static int
cli_room_path(char *out, size_t len, const char *path, const char *room)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = (size_t)snprintf(out, len, "%s", path);

	if (n >= len)
		return -1;
	if (room == NULL || room[0] == '\0')
		return 0;
	n += (size_t)snprintf(out + n, len - n, "%croom=",
	    strchr(path, '?') != NULL ? '&' : '?');
	for (const unsigned char *p = (const unsigned char *)room; *p != '\0' &&
	    n + 4 < len; p++) {
		if (isalnum(*p) || strchr("-._~", *p) != NULL)
			out[n++] = (char)*p;
		else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	if (n + 4 >= len)
		return -1;
	out[n] = '\0';
	return 0;
}

static int
cli_request(const char *home, const char *room, const char *path,
    const char *body, cJSON **out, char **text, int send)
{
	char err[PAPO_ERR_LEN], full[1024];
	struct client cl;
	const cJSON *e;
	char *answer = NULL;
	long status = 0;
	int rc = CLI_ERROR;

	*out = NULL;
	if (cli_room_path(full, sizeof(full), path, room) == -1)
		return cli_fail("the room's name is too long");
	path = full;
	if (client_open(err, home, &cl) == -1)
		return cli_fail(err);
	if (client_call(err, &cl, path, body, &status, &answer) == -1) {
		if (send)
			fprintf(stderr, "papo: %s%s\n", err,
			    CLI_SEND_UNANSWERED);
		else
			cli_fail(err);
		goto out;
	}
	*out = cJSON_Parse(answer);
	if (status < 200 || status > 299) {
		e = cJSON_GetObjectItemCaseSensitive(*out, "error");
		if (cJSON_IsString(e))
			snprintf(err, sizeof(err), "%s", e->valuestring);
		else
			snprintf(err, sizeof(err), "papo serve answered HTTP %ld",
			    status);
		fprintf(stderr, "papo: %s%s\n", err, send && status == 503 ?
		    CLI_SEND_UNTAKEN : "");
		goto out;
	}
	if (*out == NULL) {
		cli_fail("papo serve answered with something that is not JSON");
		goto out;
	}
	if (text != NULL) {
		*text = answer;
		answer = NULL;
	}
	rc = CLI_OK;
out:
	if (rc != CLI_OK) {
		cJSON_Delete(*out);
		*out = NULL;
	}
	free(answer);
	client_close(&cl);
	return rc;
}

static int
cli_call(const char *home, const char *room, const char *path,
    const char *body, cJSON **out, char **text)
{
	return cli_request(home, room, path, body, out, text, 0);
}

/*
 * Prints text from the room for a terminal: control characters (C0, DEL,
 * and C1 in UTF-8) as '?', so that a member cannot send escape sequences
 * to another's terminal.  A newline starts a new line beginning with
 * indent (a message's text, printed whole), or with indent NULL shows as
 * a return sign (names, ids: one line).
 */
static void
cli_put_in(const char *s, const char *indent)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++) {
		if (*p == '\n' && indent != NULL)
			printf("\n%s", indent);
		else if (*p == '\n')
			fputs("\xe2\x8f\x8e", stdout);    /* U+23CE */
		else if (*p == '\t')
			putchar(' ');
		else if (*p < 0x20 || *p == 0x7f)
			putchar('?');
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			putchar('?');
			p++;
		} else
			putchar(*p);
	}
}

static void
cli_put(const char *s)
{
	cli_put_in(s, NULL);
}

static const char *
cli_str(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Milliseconds since 1970 as local "YYYY-MM-DD HH:MM:SS". */
static void
cli_time(double ms, char out[32])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || localtime_r(&t, &tm) == NULL ||
	    strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(out, 32, "never");
}

/* Prints the names of a JSON array, comma-separated. */
static void
cli_names(const cJSON *arr)
{
	const cJSON *v;
	int first = 1;

	cJSON_ArrayForEach(v, arr) {
		if (!cJSON_IsString(v))
			continue;
		printf("%s", first ? "" : ", ");
		cli_put(v->valuestring);
		first = 0;
	}
}

/*
 * "papo say -": the text from stdin, one final newline taken off (as
 * "$(...)" does).  NULL after saying why; *len its length, counted past
 * what is kept when it is over the limit.
 */
static char *
cli_say_stdin(size_t *len)
{
	char *t = malloc(PAPO_BODY_MAX + 2);
	char chunk[4096];
	size_t n;

	*len = 0;
	if (t == NULL) {
		cli_fail("out of memory");
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
		if (*len < PAPO_BODY_MAX + 1)
			memcpy(t + *len, chunk, *len + n > PAPO_BODY_MAX + 1 ?
			    PAPO_BODY_MAX + 1 - *len : n);
		*len += n;
	}
	if (ferror(stdin)) {
		free(t);
		cli_fail("cannot read the text from stdin");
		return NULL;
	}
	if (*len <= PAPO_BODY_MAX + 1 && *len > 0 && t[*len - 1] == '\n')
		(*len)--;
	t[*len <= PAPO_BODY_MAX + 1 ? *len : PAPO_BODY_MAX + 1] = '\0';
	return t;
}

static int
cli_say(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *done, *wait;
	const char *id, *state, *msg;
	cJSON *req = NULL, *ans = NULL;
	char *body = NULL, *text = NULL, *in = NULL;
	size_t len, ctl = 0;
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the TEXT is missing (or - to read it "
		    "from stdin)");
	msg = argv[optind];
	len = strlen(msg);
	if (strcmp(msg, "-") == 0) {
		if ((in = cli_say_stdin(&len)) == NULL)
			return CLI_ERROR;
		msg = in;
	}
	rc = CLI_ERROR;
	/* The limits said here, in the text's terms, rather than as the
	 * size of the request that carries it. */
	if (len == 0) {
		cli_fail("the text is empty: nothing to send");
		goto out;
	}
	if (len > PAPO_BODY_MAX) {
		fprintf(stderr, "papo: the text is %zu bytes; at most %d (48 KiB) "
		    "are allowed\n", len, PAPO_BODY_MAX);
		goto out;
	}
	if ((req = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(req, "text", msg) == NULL ||
	    (o.to != NULL &&
	    cJSON_AddStringToObject(req, "to", o.to) == NULL) ||
	    (o.reply_to != NULL &&
	    cJSON_AddStringToObject(req, "reply_to", o.reply_to) == NULL) ||
	    (body = cJSON_PrintUnformatted(req)) == NULL) {
		cli_fail("out of memory");
		goto out;
	}
	if (strlen(body) > HTTP_BODY_MAX) {
		for (size_t i = 0; i < len; i++)
			ctl += (unsigned char)msg[i] < 0x20;
		fprintf(stderr, "papo: the text is %zu bytes, but written out "
		    "(%zu control characters as 6-byte \\u escapes, quotes and "
		    "backslashes as 2) it is over the %d bytes a message may "
		    "take: send it with fewer control characters\n", len, ctl,
		    HTTP_BODY_MAX);
		goto out;
	}
	if ((rc = cli_request(o.home, o.room, "/api/send", body, &ans, &text,
	    1)) != CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	id = cli_str(ans, "id");
	state = cli_str(ans, "state");
	done = cJSON_GetObjectItemCaseSensitive(ans, "delivered_to");
	wait = cJSON_GetObjectItemCaseSensitive(ans, "waiting_for");
	cli_put(id != NULL ? id : "?");
	if (state != NULL && strcmp(state, "delivered") == 0) {
		printf(" delivered to ");
		cli_names(done);
		if (cJSON_GetArraySize(wait) > 0) {
			printf("; waiting for ");
			cli_names(wait);
		}
	} else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans,
	    "stopping"))) {
		/* The daemon stopped while it waited for acks. */
		printf(" kept, queued: papo serve stopped before ");
		if (cJSON_GetArraySize(wait) > 0)
			cli_names(wait);
		else
			printf("anyone");
		printf(" had it; it goes out when papo serve runs again");
	} else if (cJSON_GetArraySize(wait) > 0) {
		printf(" queued: waiting for ");
		cli_names(wait);
	} else {
		printf(" queued: no member can be reached now; it goes out "
		    "when one can");
	}
	printf("\n");
out:
	cJSON_Delete(req);
	cJSON_Delete(ans);
	cJSON_free(body);
	free(text);
	free(in);
	return rc;
}

/* The limits line, and damping's when it holds an exchange back:
 * "damping: on (12/5m): answers to bo refused for 240 s". */
static void
cli_status_limits(const cJSON *ans)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(ans, "limits");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(ans, "damping");
	const cJSON *e, *v;
	const char *s;

	if ((s = cli_str(l, "rate")) != NULL) {
		printf("sending limit: %s", s);
		v = cJSON_GetObjectItemCaseSensitive(l, "receive_per_minute");
		if (cJSON_IsNumber(v))
			printf("; keeping at most %.0f messages a minute from "
			    "any other member", v->valuedouble);
		printf("\n");
	}
	if ((s = cli_str(d, "limit")) == NULL)
		return;
	printf("damping: %s (%s)", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d,
	    "on")) ? "on" : strcmp(s, "off") == 0 ? "off" : "not now", s);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d, "exchanges")) {
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "damped")))
			continue;
		v = cJSON_GetObjectItemCaseSensitive(e, "retry_after_s");
		printf(": answers to ");
		cli_put((s = cli_str(e, "with")) != NULL ? s : "?");
		printf(" refused for %.0f s", cJSON_IsNumber(v) ? v->valuedouble :
		    0);
	}
	printf("\n");
}

/* papo admin and papo remove: POST route {"name": NAME}.  *ans is the
 * answer to print, or NULL when there is nothing more to do (an error
 * said, or --json's text printed). */
static int
cli_member_call(const struct cli_cmd *c, int argc, char **argv,
    const char *route, cJSON **ans)
{
	struct cli_opts o;
	cJSON *req = NULL;
	char *body = NULL, *text = NULL;
	int rc;

	*ans = NULL;
	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the member's NAME is missing");
	rc = CLI_ERROR;
	if ((req = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(req, "name", argv[optind]) == NULL ||
	    (body = cJSON_PrintUnformatted(req)) == NULL)
		cli_fail("out of memory");
	else if ((rc = cli_call(o.home, o.room, route, body, ans, &text)) == CLI_OK &&
	    o.json)
		fputs(text, stdout);
	if (rc != CLI_OK || o.json) {
		cJSON_Delete(*ans);
		*ans = NULL;
	}
	cJSON_Delete(req);
	cJSON_free(body);
	free(text);
	return rc;
}

static int
cli_admin(const struct cli_cmd *c, int argc, char **argv)
{
	cJSON *ans;
	const char *name;
	int rc = cli_member_call(c, argc, argv, "/api/admin", &ans);

	if (ans == NULL)
		return rc;
	name = cli_str(ans, "admin");
	cli_put(name != NULL ? name : "?");
	printf(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans, "already")) ?
	    " was an admin already\n" : " is now an admin of the room\n");
	cJSON_Delete(ans);
	return rc;
}

static int
cli_rotate(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	cJSON *ans = NULL, *n;
	char *text = NULL;
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind != argc)
		return cli_usage(c, "%s", "rotate takes no NAME");
	if ((rc = cli_call(o.home, o.room, "/api/rotate", "{}", &ans, &text)) !=
	    CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	n = cJSON_GetObjectItemCaseSensitive(ans, "epoch");
	printf("the room's key changed (epoch %.0f)\n",
	    cJSON_IsNumber(n) ? n->valuedouble : 0);
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}

static int
cli_remove(const struct cli_cmd *c, int argc, char **argv)
{
	cJSON *ans, *n;
	const char *name;
	int rc = cli_member_call(c, argc, argv, "/api/remove", &ans);

	if (ans == NULL)
		return rc;
	name = cli_str(ans, "removed");
	n = cJSON_GetObjectItemCaseSensitive(ans, "epoch");
	cli_put(name != NULL ? name : "?");
	printf(" was removed from the room; the room's key changed (epoch "
	    "%.0f)\n", cJSON_IsNumber(n) ? n->valuedouble : 0);
	cJSON_Delete(ans);
	return rc;
}

/* ", fingerprint XXXXXXXX": the room's, as papo serve's banner and
 * logs give it, to tell which room a log is of. */
static void
cli_fingerprint(const char *home)
{
	char err[PAPO_ERR_LEN], name[PAPO_NAME_MAX + 1], fpr[PAPO_FPR_LEN + 1];

	if (room_describe(err, home, name, fpr) == 0)
		printf(", fingerprint %s", fpr);
}

static int
cli_status(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *me, *members, *m, *v;
	const char *s;
	cJSON *ans = NULL;
	char *text = NULL, when[32];
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if ((rc = cli_call(o.home, o.room, "/api/status", NULL, &ans, &text)) != CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	printf("room: ");
	cli_put((s = cli_str(ans, "room")) != NULL ? s : "?");
	cli_fingerprint(o.home);
	me = cJSON_GetObjectItemCaseSensitive(ans, "me");
	printf("\nme: ");
	cli_put((s = cli_str(me, "name")) != NULL ? s : "?");
	if ((s = cli_str(me, "id")) != NULL) {
		printf(" (");
		cli_put(s);
		printf(")");
	}
	if ((s = cli_str(me, "about")) != NULL && s[0] != '\0') {
		printf(", ");
		cli_put(s);
	}
	/* Who governs the room: its owner, and the admins it made. */
	v = cJSON_GetObjectItemCaseSensitive(ans, "owner");
	printf("\nowner: ");
	cli_put((s = cli_str(v, "name")) != NULL ? s : "not known yet");
	v = cJSON_GetObjectItemCaseSensitive(ans, "admins");
	if (cJSON_GetArraySize(v) > 0) {
		printf("\nadmins: ");
		cJSON_ArrayForEach(m, v) {
			if (m != v->child)
				printf(", ");
			cli_put((s = cli_str(m, "name")) != NULL ? s : "?");
		}
	}
	/* The room's key, whom it left out, and whether we were. */
	v = cJSON_GetObjectItemCaseSensitive(ans, "epoch");
	if (cJSON_IsNumber(v))
		printf("\nkey epoch: %.0f", v->valuedouble);
	v = cJSON_GetObjectItemCaseSensitive(ans, "removed");
	cJSON_ArrayForEach(m, v) {
		printf("%s", m == v->child ? "\nremoved: " : ", ");
		cli_put((s = cli_str(m, "name")) != NULL ? s : "?");
		printf(" (by ");
		cli_put((s = cli_str(m, "by")) != NULL ? s : "?");
		printf(")");
	}
	v = cJSON_GetObjectItemCaseSensitive(me, "removed");
	if (cJSON_IsObject(v)) {
		printf("\nthis member was removed from the room by ");
		cli_put((s = cli_str(v, "by")) != NULL ? s : "?");
	}
	printf("\nreached at: ");
	v = cJSON_GetObjectItemCaseSensitive(me, "addrs");
	if (cJSON_GetArraySize(v) == 0)
		printf("nowhere yet");
	cJSON_ArrayForEach(m, v)
		if (cJSON_IsString(m))
			printf("%s%s", m == v->child ? "" : " ", m->valuestring);
	if ((s = cli_str(me, "nat")) != NULL)
		printf(" (NAT: %s)", s);
	printf("\n");
	/* The router's port mapping, when there is something to say. */
	v = cJSON_GetObjectItemCaseSensitive(me, "portmap");
	if ((s = cli_str(v, "state")) != NULL && strcmp(s, "off") != 0) {
		const char *ext = cli_str(v, "external");
		const char *why = cli_str(v, "reason");

		printf("port mapping: %s", s);
		if ((s = cli_str(v, "method")) != NULL)
			printf(" by %s", s);
		if (ext != NULL)
			printf(" at %s", ext);
		if (why != NULL) {
			printf(" (");
			cli_put(why);
			printf(")");
		}
		printf("\n");
	}
	/* The TURN relay, when one is set: "allocated at RELAYED on SERVER",
	 * "allocating on SERVER", "failed (REASON)"; "(from the invite)"
	 * when this member was not given one but its invite carried it. */
	v = cJSON_GetObjectItemCaseSensitive(me, "turn");
	if ((s = cli_str(v, "state")) != NULL && strcmp(s, "off") != 0) {
		const char *relayed = cli_str(v, "relayed");
		const char *server = cli_str(v, "server");
		const char *why = cli_str(v, "reason");
		const char *from = cli_str(v, "from");

		printf("relay: %s", s);
		if (relayed != NULL)
			printf(" at %s", relayed);
		if (server != NULL && why == NULL)
			printf(" on %s", server);
		if (from != NULL && strcmp(from, "invite") == 0)
			printf(" (from the invite)");
		if (why != NULL) {
			printf(" (");
			cli_put(why);
			printf(")");
		}
		printf("\n");
	}
	cli_status_limits(ans);
	v = cJSON_GetObjectItemCaseSensitive(ans, "messages");
	if (cJSON_IsNumber(v))
		printf("messages: %.0f", v->valuedouble);
	v = cJSON_GetObjectItemCaseSensitive(ans, "outbox");
	if (cJSON_IsNumber(v))
		printf(", waiting for acks: %.0f", v->valuedouble);
	printf("\nmembers:");
	members = cJSON_GetObjectItemCaseSensitive(ans, "members");
	if (cJSON_GetArraySize(members) == 0)
		printf(" none yet; share the invite ('papo invite')");
	printf("\n");
	cJSON_ArrayForEach(m, members) {
		v = cJSON_GetObjectItemCaseSensitive(m, "last_seen");
		cli_time(cJSON_IsNumber(v) ? v->valuedouble : 0, when);
		printf("  ");
		cli_put((s = cli_str(m, "name")) != NULL ? s : "?");
		printf("  %s  last seen %s",
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "online")) ?
		    "online" : "offline", when);
		if ((s = cli_str(m, "path")) != NULL) {
			printf("  path: ");
			cli_put(s);
			v = cJSON_GetObjectItemCaseSensitive(m, "rtt_ms");
			if (cJSON_IsNumber(v))
				printf(", %.1f ms", v->valuedouble);
		}
		if ((s = cli_str(m, "about")) != NULL && s[0] != '\0') {
			printf("  ");
			cli_put(s);
		}
		v = cJSON_GetObjectItemCaseSensitive(m, "dropped");
		if (cJSON_IsNumber(v) && v->valuedouble > 0)
			printf("  %.0f messages dropped over the limit",
			    v->valuedouble);
		printf("\n");
	}
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}

/* One message, as history and tail print it: time, id, author, "→ TO"
 * when directed, "↳ ID" when a reply, and the text. */
static void
cli_print_message(const cJSON *m)
{
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(m, "ts");
	const char *s;
	char when[32];

	cli_time(cJSON_IsNumber(ts) ? ts->valuedouble : 0, when);
	printf("%s ", when);
	cli_put((s = cli_str(m, "id")) != NULL ? s : "?");
	printf(" ");
	/* The label tells apart members of one name (docs/MCP.md, "Names
	 * are not unique"). */
	if ((s = cli_str(m, "from_label")) == NULL)
		s = cli_str(m, "from");
	cli_put(s != NULL ? s : "?");
	if ((s = cli_str(m, "to")) != NULL) {
		printf(" \xe2\x86\x92 ");          /* → */
		cli_put(s);
	}
	if ((s = cli_str(m, "reply_to")) != NULL) {
		printf(" \xe2\x86\xb3 ");          /* ↳ */
		cli_put(s);
	}
	printf(": ");
	/* A text of several lines is printed whole, its lines after the
	 * first indented under the message's line. */
	cli_put_in((s = cli_str(m, "text")) != NULL ? s : "", "    ");
	printf("\n");
}

/* Where the log starts, when retention (PAPO_KEEP) dropped messages. */
static void
cli_print_retention(const cJSON *r)
{
	const cJSON *starts = cJSON_GetObjectItemCaseSensitive(r, "starts");
	const cJSON *gone = cJSON_GetObjectItemCaseSensitive(r, "dropped");
	const char *keep = cli_str(r, "keep");
	char when[32];

	if (!cJSON_IsNumber(starts) || !cJSON_IsNumber(gone))
		return;
	cli_time(starts->valuedouble, when);
	printf("(history starts at %s: %.0f earlier messages dropped by "
	    "retention", when, gone->valuedouble);
	if (keep != NULL) {
		printf(", PAPO_KEEP=");
		cli_put(keep);
	}
	printf(")\n");
}

static double
cli_event_ts(const cJSON *e)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "ts");

	return cJSON_IsNumber(t) ? t->valuedouble : 0;
}

/* "12:01:02 -- ana removed cy; the room key changed (epoch 3)". */
static void
cli_print_event(const cJSON *e)
{
	const char *s;
	char when[32];

	cli_time(cli_event_ts(e), when);
	printf("%s -- ", when);
	cli_put((s = cli_str(e, "text")) != NULL ? s : "?");
	printf("\n");
}

static int
cli_history(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *msgs, *m, *ev, *e;
	cJSON *ans = NULL;
	char *text = NULL, *end, path[64];
	long n = API_HISTORY_DEFAULT;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if (o.count != NULL) {
		n = strtol(o.count, &end, 10);
		if (o.count[0] == '\0' || *end != '\0' || n < 1 ||
		    n > API_HISTORY_MAX)
			return cli_usage(c, "-n takes a number from 1 to 500, "
			    "not '%s'", o.count);
	}
	snprintf(path, sizeof(path), "/api/history?limit=%ld", n);
	if ((rc = cli_call(o.home, o.room, path, NULL, &ans, &text)) != CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	cli_print_retention(cJSON_GetObjectItemCaseSensitive(ans, "retention"));
	msgs = cJSON_GetObjectItemCaseSensitive(ans, "messages");
	/* The room's key changes, each where it falls among the messages
	 * shown: none before the first shown when earlier ones are left
	 * out (a full page, or one the node cut at its size and that says
	 * so with "earlier"), all after the last. */
	ev = cJSON_GetObjectItemCaseSensitive(ans, "room");
	e = NULL;
	if (cJSON_GetArraySize(msgs) >= n ||
	    cJSON_GetObjectItemCaseSensitive(ans, "earlier") != NULL) {
		const cJSON *t0 = cJSON_GetObjectItemCaseSensitive(msgs->child,
		    "ts");

		for (e = ev != NULL ? ev->child : NULL; e != NULL &&
		    cli_event_ts(e) < (cJSON_IsNumber(t0) ? t0->valuedouble :
		    0); e = e->next)
			;
	} else if (ev != NULL)
		e = ev->child;
	cJSON_ArrayForEach(m, msgs) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "ts");

		for (; e != NULL && cli_event_ts(e) <= (cJSON_IsNumber(t) ?
		    t->valuedouble : 0); e = e->next)
			cli_print_event(e);
		cli_print_message(m);
	}
	for (; e != NULL; e = e->next)
		cli_print_event(e);
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
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

/* papo tail: the event stream, cut into events as they arrive. */
struct cli_tail {
	int json;
	char line[CLI_TAIL_LINE_MAX];
	size_t len;
	int toolong;
	char id[128];
	char event[32];
	char *data;          /* the event's data lines, joined */
	size_t datalen;
};

static void
cli_tail_event(struct cli_tail *t)
{
	cJSON *d;

	if (t->data == NULL)
		return;
	d = cJSON_Parse(t->data);
	if (t->json) {
		cJSON *o = cJSON_CreateObject();
		char *s;

		cJSON_AddStringToObject(o, "event", t->event[0] ? t->event :
		    "message");
		cJSON_AddStringToObject(o, "id", t->id);
		cJSON_AddItemToObject(o, "data", d != NULL ? d :
		    cJSON_CreateString(t->data));
		d = NULL;
		if ((s = cJSON_PrintUnformatted(o)) != NULL)
			printf("%s\n", s);
		cJSON_free(s);
		cJSON_Delete(o);
	} else if (d != NULL && strcmp(t->event, "message") == 0)
		cli_print_message(d);
	cJSON_Delete(d);
	fflush(stdout);
	free(t->data);
	t->data = NULL;
	t->datalen = 0;
	t->event[0] = '\0';
}

/* One line of the stream (SSE: "field: value", a blank line ends an
 * event, ":" starts a comment). */
static void
cli_tail_line(struct cli_tail *t, const char *l)
{
	const char *v = strchr(l, ':');
	size_t n;

	if (l[0] == '\0') {
		cli_tail_event(t);
		return;
	}
	if (v == NULL || v == l)
		return;
	n = (size_t)(v - l);
	v++;
	if (*v == ' ')
		v++;
	if (n == 2 && strncmp(l, "id", 2) == 0)
		snprintf(t->id, sizeof(t->id), "%s", v);
	else if (n == 5 && strncmp(l, "event", 5) == 0)
		snprintf(t->event, sizeof(t->event), "%s", v);
	else if (n == 4 && strncmp(l, "data", 4) == 0) {
		size_t add = strlen(v);
		char *p = realloc(t->data, t->datalen + add + 2);

		if (p == NULL)
			return;
		t->data = p;
		if (t->datalen > 0)
			t->data[t->datalen++] = '\n';
		memcpy(t->data + t->datalen, v, add + 1);
		t->datalen += add;
	}
}

static int
cli_tail_chunk(const char *data, size_t n, void *arg)
{
	struct cli_tail *t = arg;

	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			t->line[t->len] = '\0';
			if (!t->toolong)
				cli_tail_line(t, t->line);
			t->len = 0;
			t->toolong = 0;
		} else if (data[i] != '\r') {
			if (t->len + 1 < sizeof(t->line))
				t->line[t->len++] = data[i];
			else
				t->toolong = 1;
		}
	}
	return 0;
}

static int
cli_tail(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN];
	struct cli_tail *t;
	struct cli_opts o;
	char path[1024];
	int rc, waited = 0;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if (cli_room_path(path, sizeof(path), "/api/events", o.room) == -1)
		return cli_fail("the room's name is too long");
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return cli_fail("out of memory");
	t->json = o.json;
	/* Follow until interrupted; when the daemon goes away, wait for it
	 * to come back (serve.json may name a new port) and resume. */
	for (;;) {
		struct client cl;

		if (client_open(err, o.home, &cl) == 0) {
			int r = client_stream(err, &cl, path,
			    t->id[0] != '\0' ? t->id : NULL, cli_tail_chunk, t);

			client_close(&cl);
			if (r == 0) {
				waited = 0;
				t->len = 0;
				continue;
			}
		}
		if (waited == 0 && t->id[0] == '\0') {
			rc = cli_fail(err);
			break;
		}
		if (waited++ >= CLI_TAIL_WAIT_S) {
			rc = cli_fail("papo serve did not come back in 60 s");
			break;
		}
		sleep(1);
	}
	free(t->data);
	free(t);
	return rc;
}

_Static_assert(SETUP_OK == CLI_OK && SETUP_ERROR == CLI_ERROR &&
    SETUP_USAGE == CLI_USAGE, "papo setup's exit statuses are the CLI's");

/* papo setup parses its own options (--http is a switch there). */
static int
cli_setup(const struct cli_cmd *c, int argc, char **argv)
{
	return setup_main(c->usage, c->help, argc, argv);
}

/* papo tokens: the daemon's OAuth grants, listed or one revoked. */
static int
cli_tokens(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *g, *v;
	cJSON *ans = NULL, *req = NULL;
	char *text = NULL, *body = NULL, when[32];
	int rc;

	if (cli_start(c, argc, argv, &o, 2, &rc) == -1)
		return rc;
	if (optind < argc) {
		if (strcmp(argv[optind], "revoke") != 0)
			return cli_usage(c, "unknown subcommand '%s'",
			    argv[optind]);
		if (optind + 1 >= argc)
			return cli_usage(c, "%s", "the grant's ID is missing");
		if ((req = cJSON_CreateObject()) == NULL ||
		    cJSON_AddStringToObject(req, "id", argv[optind + 1]) ==
		    NULL || (body = cJSON_PrintUnformatted(req)) == NULL) {
			cJSON_Delete(req);
			return cli_fail("out of memory");
		}
		rc = cli_call(o.home, NULL, "/api/tokens/revoke", body, &ans, NULL);
		if (rc == CLI_OK)
			printf("revoked %s\n", argv[optind + 1]);
		goto out;
	}
	if ((rc = cli_call(o.home, NULL, "/api/tokens", NULL, &ans, &text)) != CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans, "oauth"))) {
		printf("OAuth is off on this daemon (PAPO_OAUTH=on turns it "
		    "on)\n");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(ans, "grants");
	if (cJSON_GetArraySize(v) == 0)
		printf("no grants\n");
	cJSON_ArrayForEach(g, v) {
		const char *s;

		cli_put((s = cli_str(g, "id")) != NULL ? s : "?");
		printf("  ");
		cli_put((s = cli_str(g, "client_name")) != NULL ? s : "?");
		printf(" (");
		cli_put((s = cli_str(g, "client_id")) != NULL ? s : "?");
		cli_time(cJSON_GetNumberValue(
		    cJSON_GetObjectItemCaseSensitive(g, "created")) * 1000, when);
		printf(")\n    created %s", when);
		cli_time(cJSON_GetNumberValue(
		    cJSON_GetObjectItemCaseSensitive(g, "last_used")) * 1000,
		    when);
		printf(", last used %s", when);
		cli_time(cJSON_GetNumberValue(
		    cJSON_GetObjectItemCaseSensitive(g, "expires")) * 1000, when);
		printf(", expires %s\n", when);
	}
out:
	cJSON_Delete(req);
	cJSON_Delete(ans);
	cJSON_free(body);
	free(text);
	return rc;
}

/* papo rooms [--json] | papo rooms default ROOM */
static int
cli_rooms(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *r;
	cJSON *ans = NULL;
	char *text = NULL, path[1024];
	int rc;

	if (cli_start(c, argc, argv, &o, 2, &rc) == -1)
		return rc;
	if (optind < argc) {
		if (strcmp(argv[optind], "default") != 0)
			return cli_usage(c, "unknown subcommand '%s'",
			    argv[optind]);
		if (optind + 1 == argc)
			return cli_usage(c, "%s", "default needs the ROOM");
		if (cli_room_path(path, sizeof(path), "/api/default",
		    argv[optind + 1]) == -1)
			return cli_fail("the room's name is too long");
		rc = cli_call(o.home, NULL, path, "{}", &ans, &text);
	} else
		rc = cli_call(o.home, NULL, "/api/rooms", NULL, &ans, &text);
	if (rc != CLI_OK)
		goto out;
	if (o.json) {
		printf("%s\n", text);
		goto out;
	}
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ans,
	    "rooms")) == 0)
		printf("this member is in no room: 'papo join INVITE' or 'papo "
		    "new' adds one\n");
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(ans, "rooms")) {
		const cJSON *on = cJSON_GetObjectItemCaseSensitive(r, "online");
		const cJSON *mem = cJSON_GetObjectItemCaseSensitive(r, "members");
		const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(r,
		    "messages");

		printf("%s ", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r,
		    "default")) ? "*" : " ");
		cli_put(cli_str(r, "name"));
		printf("  %.8s  as ", cli_str(r, "id") != NULL ?
		    cli_str(r, "id") : "?");
		cli_put(cli_str(r, "me"));
		printf("  %d of %d online  %d messages",
		    cJSON_IsNumber(on) ? on->valueint : 0,
		    cJSON_IsNumber(mem) ? mem->valueint : 0,
		    cJSON_IsNumber(msgs) ? msgs->valueint : 0);
		if (cli_str(r, "refused") != NULL) {
			printf("  refused: ");
			cli_put(cli_str(r, "refused"));
		}
		printf("\n");
	}
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}

/* papo leave ROOM [--delete] [--json] */
static int
cli_leave(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *kept;
	cJSON *ans = NULL;
	char *text = NULL, path[1024];
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the ROOM is missing (papo rooms "
		    "lists them)");
	if (cli_room_path(path, sizeof(path), o.delete ?
	    "/api/leave?delete=1" : "/api/leave", argv[optind]) == -1)
		return cli_fail("the room's name is too long");
	if ((rc = cli_call(o.home, NULL, path, "{}", &ans, &text)) != CLI_OK)
		goto out;
	if (o.json) {
		printf("%s\n", text);
		goto out;
	}
	printf("left room ");
	cli_put(cli_str(ans, "name"));
	kept = cJSON_GetObjectItemCaseSensitive(ans, "kept");
	if (cJSON_IsString(kept))
		printf("; its files are kept in %s\n", kept->valuestring);
	else
		printf("; its files are deleted\n");
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}
