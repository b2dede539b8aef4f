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
	/* papo history's search (issue 25): -q, --from, --since, --before,
	 * --after, --thread, --files */
	const char *query, *from, *since, *before, *after, *thread;
	int files_only;
	int all_rooms;          /* history -q --all-rooms */
	char home[4096];      /* $PAPO_HOME, else ~/.papo */
};

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
