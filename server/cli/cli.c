/*
 * cli.c: papo's commands, as a table of name, usage, options, help and
 * handler (the contract is SPEC's command table; README.md gives a tour).
 * Runs on the main thread of a short-lived process, except 'serve',
 * which hands the main thread to the daemon (serve.c).  Commands that
 * talk to the daemon go through ask.c.  Every error is one line on
 * stderr starting with "papo: ", and the exit status says which kind
 * (cli.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "node/node.h"
#include "server/cli/cli.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_doctor.h"
#include "server/cli/cmd_get.h"
#include "server/cli/cmd_member.h"
#include "server/cli/cmd_msg.h"
#include "server/cli/cmd_room.h"
#include "server/cli/cmd_serve.h"
#include "server/cli/cmd_version.h"
#include "server/cli/full.h"

/*
 * papo-full runs every command.  The front program (PAPO_FRONT, the
 * `papo` users run) runs those whose handler is not FULL(...) itself,
 * with libc, libcJSON and libsodium only, and hands the others to
 * papo-full (full.c); its link drops the code only they reach
 * (docs/ARCHITECTURE.md, "The front program").
 */
#ifdef PAPO_FRONT
#define FULL(run) cli_full
#else
#define FULL(run) run
#endif

static const struct cli_cmd cli_cmds[] = {
	{ "new", "papo new [--name NAME] [--about TEXT] [--room ROOM] [--force]",
	  "mafR",
	  "Create this member's identity (if it has none) and a new room, and\n"
	  "print the invite that lets others join it.  --name and --about may\n"
	  "also come from PAPO_NAME and PAPO_ABOUT; without a name, the one\n"
	  "this member has in its rooms already.  --room (or PAPO_ROOM)\n"
	  "names the room (1 to 64 bytes of UTF-8); the name travels in its\n"
	  "invites, and without one the room is papo- and the start of its id.\n"
	  "A home in rooms already gets this one beside them (at most 64), at\n"
	  "once in its running daemon.  --force replaces the home's first\n"
	  "room instead (its files moved into PAPO_HOME/old-ROOMID-DATE).",
	  FULL(cli_new), 0, CLI_ASKS },
	{ "join", "papo join INVITE [--name NAME] [--about TEXT] [--force]", "maf",
	  "Join the room of INVITE (a papo1... string), beside the rooms this\n"
	  "member is in already: at once when papo serve runs on PAPO_HOME,\n"
	  "else at its next start.  --name (the name this member has in that\n"
	  "room; without one, the name it has in its rooms already) and\n"
	  "--about may also come from PAPO_NAME and PAPO_ABOUT.  An invite of\n"
	  "a room held, printed after a key change this member missed, gives\n"
	  "that room the newer key (its history kept).\n"
	  "--force replaces the home's first room instead, moving its files\n"
	  "into PAPO_HOME/old-ROOMID-DATE (only while no daemon runs).",
	  FULL(cli_join), 0, CLI_ASKS },
	{ "rooms", "papo rooms [--json] | papo rooms default ROOM", "j",
	  "List the rooms this member is in: name, id, this member's name\n"
	  "there, members online, messages, and which is the default (the one\n"
	  "commands act on without --room, marked *).  'default ROOM' sets\n"
	  "it.  A ROOM is a room's name, its id, or the start of its id.",
	  cli_rooms, 0, CLI_ASKS },
	{ "leave", "papo leave ROOM [--delete] [--json]", "jD",
	  "Leave ROOM: the running daemon says bye to its members and stops\n"
	  "following it.  Its files are moved into PAPO_HOME/old-ROOMID-DATE\n"
	  "(its history kept), or with --delete deleted.",
	  FULL(cli_leave), 0, CLI_ASKS },
	{ "rename", "papo rename NAME [--room ROOM] [--json]", "Rj",
	  "Rename this member: NAME from now on in every room (or in --room's\n"
	  "only).  The running daemon greets the rooms' members again, so\n"
	  "they learn it at once; with none running, the rooms' files are\n"
	  "changed and the members learn it at the next 'papo serve'.\n"
	  "Messages written before keep the name they were written with.",
	  FULL(cli_rename), 0, CLI_ASKS },
	{ "invite", "papo invite [--room ROOM] [--listen ADDR:PORT]", "lR",
	  "Print a room's invite (the default room's, or --room's), carrying\n"
	  "this member's id and the addresses its daemon listens on: the\n"
	  "running daemon's own invite, else the one for --listen (or\n"
	  "PAPO_LISTEN, default " PAPO_DEFAULT_LISTEN ").",
	  FULL(cli_invite), 0, CLI_ASKS },
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
	  FULL(cli_serve), 1, CLI_ASKS },
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
	  cli_mcp, 0, CLI_ASKS },
	{ "hook", "papo hook [HARNESS] [--agent NAME]", "g",
	  "For the hooks papo setup gives an agent harness (HARNESS:\n"
	  "claude-code, the default, codex, gemini, qwen, copilot, opencode):\n"
	  "reads the hook's event on stdin.  At a session's start or a\n"
	  "person's prompt: when messages wait for the agent, a line saying\n"
	  "who wrote and to call wait goes into the model's context.  At the\n"
	  "end of a turn (Stop, AfterAgent, agentStop): waits until the idle\n"
	  "agent has something new, then answers so that the harness goes on\n"
	  "with that line as a prompt, which wakes the session; in a run that\n"
	  "ends after its turn (claude -p, codex exec, gemini -p, ...) it\n"
	  "looks once.  Messages are given by wait, never here.",
	  cli_hook, 0, CLI_ASKS },
	{ "say", "papo say [TEXT|-] [--file PATH]... [--name NAME] [--to NAME "
	  "[--public]] [--reply-to ID] [--room ROOM] [--json]", "TBrjRFm",
	  "Send TEXT to the room through the running daemon; with --to NAME, a\n"
	  "private message that only NAME and you can read (the other members\n"
	  "store and pass it on sealed, so NAME gets it even if away now;\n"
	  "text and file lines then hold at most 32 KiB), or, with --public\n"
	  "too, one addressed to NAME that the whole room reads; as an answer\n"
	  "to message ID with --reply-to.  Prints the\n"
	  "message id and who has it, or who it waits for (also when the\n"
	  "daemon stops meanwhile: the message is kept, and goes out when it\n"
	  "runs again); --json prints the daemon's answer as is.  TEXT - reads\n"
	  "the text from stdin (one final newline taken off).  A text holds at\n"
	  "most 49,152 bytes.\n"
	  "--file PATH (up to 16 times) shares a file with the message (the\n"
	  "TEXT is then optional): each is uploaded to the daemon as it is\n"
	  "read, never whole in memory, at most 4 GiB, then the message names\n"
	  "them, and a line per file says its name, size and REF (for papo\n"
	  "get).  --file - reads the file from stdin, and needs --name NAME,\n"
	  "the name it is shown by (--name also renames a single file).  A\n"
	  "file that cannot be shared sends nothing.  Members fetch files up\n"
	  "to PAPO_FILES_AUTO (256 KiB) at once, larger ones when asked.",
	  cli_say, 0, CLI_ASKS },
	{ "get", "papo get REF [-o PATH] [--force] [--wait] [--room ROOM]",
	  "oRfW",
	  "Fetch the shared file REF (a message names it: papo history shows\n"
	  "its REF) through the running daemon, from whichever member holds\n"
	  "it, and save it as PATH (default: its name in this directory, or\n"
	  "in PATH when that is a directory).\n"
	  "Shows progress (bytes, percent, rate) on one line at a terminal,\n"
	  "plain lines otherwise, on stderr either way (stdout stays for\n"
	  "what a script reads).  It is written to PATH.REF8.part first\n"
	  "(never through a link) and renamed when whole; an interrupted\n"
	  "papo get goes on from there.  A name starting with . or - is\n"
	  "saved only with -o PATH.\n"
	  "An existing PATH is never replaced unless --force.  When no member\n"
	  "online holds the file, says so and exits 1: the daemon fetches it\n"
	  "when one comes back, and --wait waits for that.  A REF no message\n"
	  "of the room names is an error.",
	  cli_get, 0, CLI_ASKS },
	{ "status", "papo status [--room ROOM] [--json]", "jR",
	  "Print the room, this member, and every member with its online\n"
	  "state, when it was last seen, and its about text.",
	  cli_status, 0, CLI_ASKS },
	{ "history", "papo history [-n N] [-q WORDS] [--from NAME]\n"
	  "       [--since T] [--before T] [--after T] [--thread ID]\n"
	  "       [--files] [--room ROOM | --all-rooms] [--json]",
	  "njRqZsbePIY",
	  "Print the last N messages (default 20, at most 500), oldest first:\n"
	  "time, id, author, \"\u2192 NAME\" when directed, \"\u21b3 ID\" when a\n"
	  "reply, and the text.  When retention (PAPO_KEEP) dropped older\n"
	  "messages, a first line says where the history starts and how many\n"
	  "were dropped.\n"
	  "With -q WORDS (each word required; \"a phrase\"; a prefix*;\n"
	  "accents ignored) or a filter, search instead: the best N hits\n"
	  "first (at most 200), each with its text around the words found\n"
	  "(in bold at a terminal).  --all-rooms: in every room at once, the\n"
	  "hits ranked together, each with its room.  --from NAME: its messages only; --since/--after T,\n"
	  "--before T: a time as a duration ago (30m, 2h, 7d), a date\n"
	  "(2026-12-03, \"2026-12-03 14:00\") or ms since 1970; --files:\n"
	  "messages that name files; --thread ID: that message and its\n"
	  "replies, oldest first.",
	  cli_history, 0, CLI_DISK },
	{ "tail", "papo tail [-n N] [--room ROOM | --all-rooms] [--json]",
	  "njRY",
	  "Follow the room, as tail -f a file: print its last N messages\n"
	  "(default 10, -n 0 none), then each new one as it arrives, in the\n"
	  "form of 'papo history', until interrupted.  --all-rooms (or\n"
	  "--room '*') follows every room, each line starting with its\n"
	  "room's name in brackets.  When the daemon restarts, it comes back\n"
	  "and goes on where it left off.  --json prints every event\n"
	  "(message, receipt, presence) as one JSON object a line.",
	  cli_tail, 0, CLI_ASKS },
	{ "doctor", "papo doctor", "",
	  "Print what a bug report needs: the version and system, the home\n"
	  "and its files' modes, the PAPO_ settings set (secrets only said to\n"
	  "be set), the ports papo serve uses and whether they are free, held\n"
	  "by the daemon or taken by another program, how the daemon is\n"
	  "reached (its addresses, the NAT, port mapping, the relay), its\n"
	  "rooms with each member's path and clock against this machine's,\n"
	  "and last what looks wrong, each with what to do.  It prints no\n"
	  "invite, key or token.  With the daemon stopped it says so and\n"
	  "checks the rest.  Exits 1 when something looks wrong.",
	  FULL(cli_doctor), 0, CLI_ASKS },
	{ "admin", "papo admin NAME [--room ROOM] [--json]", "jR",
	  "Make member NAME (a name or an id) an admin of the room, through\n"
	  "the running daemon.  Only the room's owner (the member who made it)\n"
	  "can; every member learns it from a grant the owner signs.",
	  cli_admin, 0, CLI_ASKS },
	{ "rotate", "papo rotate [--room ROOM] [--json]", "jR",
	  "Change the room's key, through the running daemon: a new key\n"
	  "epoch, its secret sealed to each member this one knows, in a frame\n"
	  "it signs.  Only the room's owner or an admin can.  Members away get\n"
	  "the new key from any member when they return.",
	  cli_rotate, 0, CLI_ASKS },
	{ "remove", "papo remove NAME [--room ROOM] [--json]", "jR",
	  "Remove member NAME (a name or an id) from the room, through the\n"
	  "running daemon: the room's key changes (as papo rotate) and NAME is\n"
	  "not given the new one; from then on its connections and the\n"
	  "messages it writes are refused by every member.  Only the room's\n"
	  "owner or an admin can; the owner cannot be removed.  NAME keeps\n"
	  "what it had already read.",
	  cli_remove, 0, CLI_ASKS },
	{ "tokens", "papo tokens [--json] | papo tokens revoke ID", "j",
	  "List the OAuth grants of the running daemon (PAPO_OAUTH=on): each\n"
	  "one's id, client, when it was made and last used, and when it\n"
	  "expires unless refreshed.  'revoke ID' ends one grant at once: its\n"
	  "access and refresh tokens stop working, and the client must be\n"
	  "approved again.  Needs the daemon's own token (PAPO_TOKEN).",
	  cli_tokens, 0, CLI_ASKS },
	{ "setup", "papo setup CLIENT [--print] [--remove] [--http] "
	  "[--accept-inbound]", "",
	  "Add papo to an agent harness's own configuration on this machine:\n"
	  "its MCP server, over stdio through 'papo mcp' (this binary, by its\n"
	  "absolute path) or with --http at the running daemon's /mcp URL\n"
	  "(with PAPO_TOKEN as a bearer header), and the hooks (or for\n"
	  "opencode the plugin) that run 'papo hook', which wake an idle\n"
	  "session when a message comes.  PAPO_HOME, when set, goes into the\n"
	  "entry.  It says what you must still allow (trusting the hooks or\n"
	  "the folder) and warns when the home has no room yet.\n"
	  "Running it again changes nothing; every change is said in a line\n"
	  "naming the file, every other setting is kept, and a file that does\n"
	  "not parse is left alone.  --print shows what would be written and\n"
	  "writes nothing; --remove takes out what it added and nothing else\n"
	  "(a file it made is removed).\n"
	  "--accept-inbound (claude-code) sets crossSessionInbound to accept,\n"
	  "which a session that bypasses permissions needs for papo's wakes\n"
	  "to reach it unasked (with --remove: takes it out again).",
	  cli_setup, 0, CLI_LOCAL },
	{ "version", "papo version | papo --version", "",
	  "Print papo's version, the protocol versions it speaks (QUIC ALPN\n"
	  "papo/N) and the invites it reads, and the version of each library\n"
	  "it runs with, as read from the library at run time: what a bug\n"
	  "report needs.  The first line is \"papo VERSION\" alone.",
	  FULL(cli_version), 0, CLI_ASKS },
};

#define CLI_NCMDS (sizeof(cli_cmds) / sizeof(cli_cmds[0]))

static void
cli_print_commands(FILE *f)
{
	fprintf(f, "usage: papo COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < CLI_NCMDS; i++)
		fprintf(f, "  %s\n", cli_cmds[i].usage);
	fprintf(f, "\n'papo COMMAND --help' tells more ('papo serve --help' "
	    "lists every setting).  State lives in $PAPO_HOME (default "
	    "~/.papo).\n");
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
	if (strcmp(cmd, "--version") == 0)
		cmd = "version";
	for (size_t i = 0; i < CLI_NCMDS; i++) {
		if (strcmp(cmd, cli_cmds[i].name) != 0)
			continue;
#ifdef PAPO_FRONT
		/* A daemon at an https:// URL, or a command that reads the
		 * disk when none runs, is papo-full's (the reach field). */
		if (cli_full_wanted(&cli_cmds[i]))
			return cli_full(&cli_cmds[i], argc - 1, argv + 1);
#endif
		return cli_cmds[i].run(&cli_cmds[i], argc - 1, argv + 1);
	}
	/* A typo is answered with the nearest command, if one is near,
	 * rather than with the whole list. */
	{
		size_t best = SIZE_MAX, at = 0;

		for (size_t i = 0; i < CLI_NCMDS; i++) {
			size_t d = cli_distance(cmd, cli_cmds[i].name);

			if (d < best) {
				best = d;
				at = i;
			}
		}
		if (cli_near(cmd, best)) {
			fprintf(stderr, "papo: unknown command '%s'; did you "
			    "mean 'papo %s'? ('papo --help' lists them)\n",
			    cmd, cli_cmds[at].name);
			return CLI_USAGE;
		}
	}
	fprintf(stderr, "papo: unknown command '%s'\n", cmd);
	cli_print_commands(stderr);
	return CLI_USAGE;
}
