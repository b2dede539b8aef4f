/*
 * cmd.h: what papo's commands share: the command's entry in the table
 * (cli.c), the options they parse, their usage errors and their one-line
 * errors.  Every function here runs on the main thread and prints to
 * stdout or stderr only.
 */
#ifndef PAPO_CMD_H
#define PAPO_CMD_H

#include <stddef.h>

/* A command's exit status: done, an error said on one line of stderr, a
 * usage error. */
#define CLI_OK 0
#define CLI_ERROR 1
#define CLI_USAGE 2

/* What a command needs of the daemon, which tells the front program
 * when to hand it to papo-full (cli.c, full.c). */
enum cli_reach {
	CLI_ASKS,      /* it asks the running daemon: papo-full's when that
	                * one is at an https:// URL */
	CLI_DISK,      /* likewise, and with none running it reads the
	                * home's files (cmd_disk.c): papo-full's then too */
	CLI_LOCAL,     /* it asks the daemon nothing */
};

struct cli_cmd {
	const char *name;
	const char *usage;
	const char *opts;     /* the option codes it accepts (cli_parse) */
	const char *help;
	int (*run)(const struct cli_cmd *, int, char **);
	/* Its settings are the settings table's (settings.c), which reads
	 * their environment variables: cli_parse leaves them alone. */
	int settings;
	enum cli_reach reach;
};

#define CLI_FILES_MAX 16   /* papo say --file: files a message names */

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
	int public;           /* papo say --to NAME --public */
	const char *reply_to;
	int json;
	const char *count;
	int channels;         /* papo mcp: opt in to channel pushes */
	const char *agent;    /* papo mcp, papo hook: the agent's name */
	int new_room;         /* papo mcp: may start serve with no room */
	char advertise[1024]; /* --advertise, each one, comma-separated */
	const char *turn;     /* --turn */
	const char *room;     /* --room, else PAPO_ROOM: a new room's name;
	                       * for the others, the room they act on */
	int room_flag;        /* --room itself (papo mcp binds only to it) */
	int delete;           /* papo leave --delete */
	const char *tls;      /* --tls */
	int name_flag;        /* --name itself, not PAPO_NAME */
	const char *files[CLI_FILES_MAX]; /* papo say --file, each one */
	int nfiles;
	const char *output;   /* papo get -o */
	int wait;             /* papo get --wait */
	/* papo history's search: -q, --from, --since, --before,
	 * --after, --thread, --files */
	const char *query, *from, *since, *before, *after, *thread;
	int files_only;
	int all_rooms;          /* history -q --all-rooms */
	char home[4096];      /* $PAPO_HOME, else ~/.papo */
	char room_id[32];     /* the id --room was found to name */
};

/* $PAPO_HOME, else ~/.papo, into out (n bytes): 0, or -1 when neither
 * can be told or it does not fit. */
int cli_home(char *out, size_t n);

/*
 * The room sel names, as the CLI finds it among the running daemon's
 * rooms (README.md, after its examples): its id; its name; else, letters compared
 * case-insensitively, its name, or the start of its name or of its id,
 * when that is one room.  0 with its id in id; 1 when sel is left to
 * the daemon as it is (no daemon runs, "*", or no room matches, which
 * the daemon's answer says with the list of rooms); -1 after saying
 * which rooms sel is the start of, when several.
 */
int cli_room_pick(const char *home, const char *sel, char id[32]);

/* The edit distance between two words of at most CLI_WORD_MAX bytes
 * (letters swapped count as one edit),
 * letters compared case-insensitively (SIZE_MAX for longer ones), and
 * whether a distance d from word is near enough for a "did you mean". */
#define CLI_WORD_MAX 63
size_t cli_distance(const char *a, const char *b);
int cli_near(const char *word, size_t d);

/* "papo NAME: " and fmt with arg on stderr, then c's usage: CLI_USAGE. */
int cli_usage(const struct cli_cmd *c, const char *fmt, const char *arg);
/* "papo: err" on stderr: CLI_ERROR. */
int cli_fail(const char *err);
/* c's usage and help on stdout (with the settings table's section for
 * papo serve): CLI_OK. */
int cli_help(const struct cli_cmd *c);
/*
 * Parses the options of a command that takes at most npos positional
 * arguments (from optind on) into o, with $PAPO_HOME in o->home.
 * Returns -1 when the command is done (help shown, or usage error), with
 * its exit status in *rc.
 */
int cli_start(const struct cli_cmd *c, int argc, char **argv,
    struct cli_opts *o, int npos, int *rc);

#endif
