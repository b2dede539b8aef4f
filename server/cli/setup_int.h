/*
 * setup_int.h: papo setup's internal header, included only by its files
 * (setup.c, setup_hooks.c, setup_plugin.c, setup_toml.c, setup_json.c,
 * setup_file.c, which call one way, in that order): its limits, the
 * harness, run and file structs, and the functions that cross between
 * the files.
 */
#ifndef PAPO_SETUP_INT_H
#define PAPO_SETUP_INT_H

#include <sys/types.h>

#include <cjson/cJSON.h>

#include "node/node.h"

#define SETUP_PATH_MAX 4096

#define SETUP_KEY_MAX 128                  /* a dotted JSON key path */

enum setup_form { SETUP_JSON, SETUP_TOML };

/*
 * The hooks papo setup gives a harness, each running 'papo hook NAME'
 * (hook.h): where they are kept, the events at whose hook a line for the
 * model is added, the event at the end of a turn whose hook wakes an
 * idle session, and how long that one may wait.
 */
struct setup_hookset {
	const char *dir_env;     /* their file: in this directory when set ... */
	const char *dir_home;    /* ... else in this one under $HOME */
	const char *file;
	const char *context[3];  /* NULL-ended */
	const char *stop;
	int stop_http;           /* over HTTP only (Claude Code: over stdio,
	                          * papo mcp wakes it through its inbox) */
	const char *timeout_key; /* a handler's timeout */
	long timeout;            /* the stop hook's, in that key's unit */
	int async;               /* "asyncRewake": true (Claude Code) */
	const char *arg;         /* 'papo hook ARG'; NULL: plain 'papo hook',
	                          * Claude Code's */
	const char *command_key; /* a handler's command */
	int flat;                /* an event holds handlers, not matcher
	                          * groups (Copilot CLI) */
	int version;             /* the file is papo's own, with "version":
	                          * this; --remove removes it (Copilot CLI) */
};

/* A harness: where its MCP servers are kept and in which shape. */
struct setup_client {
	const char *name;        /* on the command line */
	const char *title;       /* in what is printed */
	enum setup_form form;
	const char *dir_env;     /* names the directory when set ... */
	const char *dir_home;    /* ... else this one under $HOME */
	const char *file;
	const char *servers;     /* the key of its servers' object */
	const char *type_stdio;  /* an entry's "type" over stdio ... */
	const char *type_http;   /* ... and over HTTP; NULL: none */
	int argv_command;        /* "command" is an array with the arguments
	                          * (opencode) */
	const char *env_key;     /* the stdio entry's environment */
	const char *url_key;     /* an HTTP entry's URL */
	const char *headers_key; /* its headers; NULL: Codex, which takes a
	                          * token only from a variable it names */
	const char *extra;       /* keys of its own for papo's entry, as
	                          * JSON: Copilot CLI offers only the tools
	                          * listed, Codex asks before each call of
	                          * a server's tool, Qwen Code hides them
	                          * behind its tool_search */
	const struct setup_hookset *hooks;  /* NULL: none papo knows */
	const char *plugin;      /* a plugin file that wakes it, under the
	                          * directory of dir_env/dir_home (opencode) */
	int inbound;             /* Claude Code's crossSessionInbound */
	const char *allow;       /* what the user must still allow, or NULL */
	const char *next;        /* the one thing to do after */
};

/* One run of the command. */
struct setup {
	const struct setup_client *c;
	int print, remove, http, inbound;
	char exe[SETUP_PATH_MAX];       /* this binary, absolute */
	char papo_home[SETUP_PATH_MAX]; /* PAPO_HOME made absolute; "" unset */
	const char *token;              /* PAPO_TOKEN, or NULL */
	char url[1024];                 /* --http: the daemon's /mcp */
	int daemon;                     /* --http: a daemon answered */
	int changed;                    /* settings said to change */
};

/* One file being edited: as read, and for JSON its document. */
struct sfile {
	char path[SETUP_PATH_MAX];
	char *text;              /* "" when absent */
	size_t len;
	int exists;
	mode_t mode;
	cJSON *doc;
	int dirty;
};

enum setup_said { SAID_ADD, SAID_UPDATE, SAID_REMOVE, SAID_SAME, SAID_ABSENT };

/* setup_file.c */
void setup_say(struct setup *s, const char *file, const char *key,
    const char *what, enum setup_said said, const char *show);
int sfile_load(char err[PAPO_ERR_LEN], struct sfile *f);
int sfile_save(char err[PAPO_ERR_LEN], const struct setup *s,
    const struct sfile *f, const char *data, size_t len);
int sfile_unlink(char err[PAPO_ERR_LEN], const struct setup *s,
    const struct sfile *f);
void sfile_free(struct sfile *f);

/* setup_json.c */
char *sj_print(const cJSON *v, size_t *len);
int sj_load(char err[PAPO_ERR_LEN], const struct setup *s, struct sfile *f);
int sj_set(char err[PAPO_ERR_LEN], struct sfile *f, const char *key,
    cJSON *val);
int sj_put(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f,
    const char *key, cJSON *val, const char *what);
int sj_save(char err[PAPO_ERR_LEN], const struct setup *s,
    const struct sfile *f);

/* setup_toml.c */
int setup_toml(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f,
    const cJSON *entry);

/* setup_plugin.c */
int setup_plugin(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f);
int setup_plugin_save(char err[PAPO_ERR_LEN], const struct setup *s,
    const struct sfile *f);

/* setup_hooks.c */
int setup_hooks(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f);
int setup_inbound(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f);

#endif
