/*
 * setup.c: 'papo setup CLIENT' adds papo to an agent harness's own
 * configuration (Claude Code, Codex, Gemini CLI, Cursor, VS Code), takes
 * it out again (--remove), or shows what it would write (--print).  Runs
 * on the main thread of a short-lived command.
 *
 * It edits files other programs own, so it must never lose what they
 * hold: a JSON file is parsed and written back whole with every other
 * key (cJSON; one mechanism, sj_put, for every setting), Codex's TOML has
 * only papo's own table replaced and every other byte left, a file that
 * does not parse is left alone, and every change is said in one line
 * naming the file.  Every file is read and checked before any is
 * written, and written atomically (fs_write) with the mode it had.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/setup.h"
#include "server/cli/setup_int.h"
#include "server/http/http.h"

static const struct setup_client setup_clients[] = {
	{ "claude-code", "Claude Code", SETUP_JSON, "CLAUDE_CONFIG_DIR", "",
	  ".claude.json", "mcpServers", 1, "url", "headers", 1,
	  "restart Claude Code; `claude mcp list` should show papo "
	  "\xe2\x9c\x94 Connected" },
	{ "codex", "Codex", SETUP_TOML, "CODEX_HOME", ".codex",
	  "config.toml", "mcp_servers", 0, "url", NULL, 0,
	  "restart Codex; `codex mcp list` should list papo" },
	{ "gemini", "Gemini CLI", SETUP_JSON, NULL, ".gemini",
	  "settings.json", "mcpServers", 0, "httpUrl", "headers", 0,
	  "restart Gemini CLI; `gemini mcp list` should show papo connected" },
	{ "cursor", "Cursor", SETUP_JSON, NULL, ".cursor", "mcp.json",
	  "mcpServers", 0, "url", "headers", 0,
	  "restart Cursor (or reload its window); Cursor Settings \xe2\x86\x92 "
	  "MCP should show papo and its tools" },
	{ "vscode", "VS Code", SETUP_JSON, "XDG_CONFIG_HOME", ".config",
	  "Code/User/mcp.json", "servers", 1, "url", "headers", 0,
	  "in VS Code, run \"MCP: List Servers\" and start papo (VS Code asks "
	  "once whether to trust it)" },
};

#define SETUP_NCLIENTS (sizeof(setup_clients) / sizeof(setup_clients[0]))

/*
 * papo's MCP server entry for this client: the stdio bridge (this binary,
 * 'mcp', PAPO_HOME and PAPO_TOKEN in env when set), or with --http the
 * daemon's URL and the token as a bearer header.
 */
static cJSON *
setup_entry(const struct setup *s)
{
	const struct setup_client *c = s->c;
	cJSON *e = cJSON_CreateObject(), *o, *args;
	char *bearer = NULL;

	if (e == NULL || (c->typed && cJSON_AddStringToObject(e, "type",
	    s->http ? "http" : "stdio") == NULL))
		goto fail;
	if (s->http) {
		if (cJSON_AddStringToObject(e, c->url_key, s->url) == NULL)
			goto fail;
		if (s->token == NULL)
			return e;
		/* Codex refuses a token written in its file (it would have one
		 * in bearer_token); it reads the variable it is named. */
		if (c->headers_key == NULL)
			return cJSON_AddStringToObject(e, "bearer_token_env_var",
			    "PAPO_TOKEN") != NULL ? e : NULL;
		if ((bearer = malloc(strlen(s->token) + 8)) == NULL)
			goto fail;
		sprintf(bearer, "Bearer %s", s->token);
		if ((o = cJSON_AddObjectToObject(e, c->headers_key)) == NULL ||
		    cJSON_AddStringToObject(o, "Authorization", bearer) == NULL)
			goto fail;
		free(bearer);
		return e;
	}
	if (cJSON_AddStringToObject(e, "command", s->exe) == NULL ||
	    (args = cJSON_AddArrayToObject(e, "args")) == NULL ||
	    (o = cJSON_CreateString("mcp")) == NULL)
		goto fail;
	cJSON_AddItemToArray(args, o);
	if (s->papo_home[0] == '\0' && s->token == NULL)
		return e;
	if ((o = cJSON_AddObjectToObject(e, "env")) == NULL ||
	    (s->papo_home[0] != '\0' &&
	    cJSON_AddStringToObject(o, "PAPO_HOME", s->papo_home) == NULL) ||
	    (s->token != NULL &&
	    cJSON_AddStringToObject(o, "PAPO_TOKEN", s->token) == NULL))
		goto fail;
	return e;
fail:
	free(bearer);
	cJSON_Delete(e);
	return NULL;
}

/* dir_env's directory, else $HOME/dir_home, joined with file. */
static int
setup_path(char err[PAPO_ERR_LEN], char out[SETUP_PATH_MAX],
    const char *dir_env, const char *dir_home, const char *file)
{
	const char *dir = dir_env != NULL ? getenv(dir_env) : NULL;
	const char *home = getenv("HOME");
	int n;

	if (dir != NULL && dir[0] != '\0')
		n = snprintf(out, SETUP_PATH_MAX, "%s/%s", dir, file);
	else if (home != NULL && home[0] != '\0')
		n = snprintf(out, SETUP_PATH_MAX, "%s%s%s/%s", home,
		    dir_home[0] != '\0' ? "/" : "", dir_home, file);
	else {
		snprintf(err, PAPO_ERR_LEN, "cannot tell the home directory: set "
		    "HOME");
		return -1;
	}
	if (n >= SETUP_PATH_MAX) {
		snprintf(err, PAPO_ERR_LEN, "the path of %s is too long", file);
		return -1;
	}
	return 0;
}

/*
 * What goes into the entries: this binary, PAPO_HOME made absolute (the
 * harness starts papo in a directory of its own), the token, and for
 * --http the running daemon's URL, else the default one.
 */
static int
setup_learn(char err[PAPO_ERR_LEN], struct setup *s)
{
	const char *home = getenv("PAPO_HOME"), *user = getenv("HOME");
	char cwd[SETUP_PATH_MAX], papo[SETUP_PATH_MAX], why[PAPO_ERR_LEN];
	struct client cl;
	ssize_t n;

	if ((n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1)) <= 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot tell where this papo binary "
		    "is (/proc/self/exe): %s", strerror(errno));
		return -1;
	}
	s->exe[n] = '\0';
	if (home != NULL && home[0] != '\0') {
		if (home[0] != '/' && getcwd(cwd, sizeof(cwd)) == NULL) {
			snprintf(err, PAPO_ERR_LEN, "cannot tell the current "
			    "directory, to make PAPO_HOME absolute");
			return -1;
		}
		snprintf(s->papo_home, sizeof(s->papo_home), "%s%s%s",
		    home[0] == '/' ? "" : cwd, home[0] == '/' ? "" : "/", home);
	}
	s->token = getenv("PAPO_TOKEN");
	if (s->token != NULL && s->token[0] == '\0')
		s->token = NULL;
	if (!s->http || s->remove)
		return 0;
	if (s->papo_home[0] != '\0')
		snprintf(papo, sizeof(papo), "%s", s->papo_home);
	else
		snprintf(papo, sizeof(papo), "%s/.papo", user != NULL ? user : "");
	if (client_open(why, papo, &cl) == 0) {
		snprintf(s->url, sizeof(s->url), "%s/mcp", cl.url);
		if (strncmp(cl.url, "https:", 6) == 0)
			printf("note: the daemon serves HTTPS; %s must trust its "
			    "certificate (docs/MCP.md, \"Connecting over HTTPS\")\n",
			    s->c->title);
		client_close(&cl);
		return 0;
	}
	snprintf(s->url, sizeof(s->url), "http://%s/mcp", HTTP_DEFAULT_BIND);
	printf("note: %s; the URL written is the default one, %s (run papo "
	    "setup again while the daemon runs if it listens elsewhere)\n", why,
	    s->url);
	return 0;
}

/* What wakes an idle session of this harness when a message comes. */
static void
setup_wake(const struct setup *s)
{
	if (!s->c->hooks)
		printf("wake: papo knows no way to wake an idle %s session: the "
		    "agent hears the room's messages when it calls the wait "
		    "tool\n", s->c->title);
	else if (s->http)
		printf("wake: over HTTP, the Stop hook ('papo hook', asyncRewake) "
		    "wakes an idle session when a message comes\n");
	else
		printf("wake: over stdio, 'papo mcp' wakes an idle session itself "
		    "through Claude Code's inbox socket, so no Stop hook is set "
		    "(--http sets one)\n");
	if (s->c->hooks && s->token != NULL)
		printf("note: the hooks read PAPO_TOKEN from Claude Code's "
		    "environment (it is not written into a command line, where "
		    "ps would show it): export it where Claude Code starts\n");
	else if (s->c->headers_key == NULL && s->http && s->token != NULL)
		printf("note: Codex reads the token from PAPO_TOKEN in its "
		    "environment: export it where Codex starts\n");
}

static void
setup_clients_list(FILE *f)
{
	fprintf(f, "clients:");
	for (size_t i = 0; i < SETUP_NCLIENTS; i++)
		fprintf(f, "%s %s (%s)", i > 0 ? "," : "", setup_clients[i].name,
		    setup_clients[i].title);
	fprintf(f, "\n");
}

static int
setup_usage(const char *usage, const char *fmt, const char *arg)
{
	if (fmt != NULL) {
		fprintf(stderr, "papo setup: ");
		fprintf(stderr, fmt, arg);
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "usage: %s\n", usage);
	setup_clients_list(stderr);
	return SETUP_USAGE;
}

/* Reads every file first, then edits, then writes: a file that does not
 * parse stops the run before anything is written. */
static int
setup_run(char err[PAPO_ERR_LEN], struct setup *s)
{
	const struct setup_client *c = s->c;
	struct sfile mcp, set;
	char key[SETUP_KEY_MAX], what[SETUP_PATH_MAX + 64];
	cJSON *entry = NULL;
	int r, rc = -1;

	memset(&mcp, 0, sizeof(mcp));
	memset(&set, 0, sizeof(set));
	if (setup_learn(err, s) == -1 ||
	    setup_path(err, mcp.path, c->dir_env, c->dir_home, c->file) == -1 ||
	    (c->hooks && setup_path(err, set.path, c->dir_env, ".claude",
	    "settings.json") == -1))
		goto out;
	if ((c->form == SETUP_TOML && sfile_load(err, &mcp) == -1) ||
	    (c->form == SETUP_JSON && sj_load(err, s, &mcp) == -1) ||
	    (c->hooks && sj_load(err, s, &set) == -1))
		goto out;
	if (!s->remove && (entry = setup_entry(s)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto out;
	}
	if (c->form == SETUP_TOML) {
		if (setup_toml(err, s, &mcp, entry) == -1)
			goto out;
	} else {
		snprintf(key, sizeof(key), "%s.papo", c->servers);
		if (s->http)
			snprintf(what, sizeof(what), "papo's MCP server (HTTP: %s)",
			    s->url);
		else
			snprintf(what, sizeof(what), "papo's MCP server (stdio: %s "
			    "mcp)", s->exe);
		r = sj_put(err, s, &mcp, key, entry, s->remove ? "papo's MCP "
		    "server" : what);
		entry = NULL;           /* sj_put took it */
		if (r == -1)
			goto out;
	}
	if (c->hooks && (setup_hooks(err, s, &set) == -1 ||
	    setup_inbound(err, s, &set) == -1))
		goto out;
	if ((c->form == SETUP_JSON && sj_save(err, s, &mcp) == -1) ||
	    (c->hooks && sj_save(err, s, &set) == -1))
		goto out;
	if (s->changed == 0)
		printf(s->remove ? "papo was not set up for %s: nothing changed\n" :
		    "papo is already set up for %s: nothing changed\n", c->title);
	else if (s->print)
		printf("nothing was written (--print)\n");
	if (!s->remove)
		setup_wake(s);
	if (s->changed > 0 && !s->print)
		printf(s->remove ? "next: restart %s so that it lets papo go\n" :
		    "next: %s\n", s->remove ? c->title : c->next);
	rc = 0;
out:
	cJSON_Delete(entry);
	sfile_free(&mcp);
	sfile_free(&set);
	return rc;
}

int
setup_main(const char *usage, const char *help, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "print", no_argument, NULL, 'p' },
		{ "remove", no_argument, NULL, 'r' },
		{ "http", no_argument, NULL, 'H' },
		{ "accept-inbound", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[PAPO_ERR_LEN];
	struct setup s;
	int ch;

	memset(&s, 0, sizeof(s));
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p': s.print = 1; break;
		case 'r': s.remove = 1; break;
		case 'H': s.http = 1; break;
		case 'i': s.inbound = 1; break;
		case 'h':
			printf("usage: %s\n\n%s\n", usage, help);
			setup_clients_list(stdout);
			return SETUP_OK;
		default:
			return setup_usage(usage, "unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	if (optind == argc)
		return setup_usage(usage, NULL, NULL);
	if (argc - optind > 1)
		return setup_usage(usage, "unexpected argument '%s'",
		    argv[optind + 1]);
	for (size_t i = 0; i < SETUP_NCLIENTS; i++)
		if (strcmp(argv[optind], setup_clients[i].name) == 0)
			s.c = &setup_clients[i];
	if (s.c == NULL)
		return setup_usage(usage, "unknown client '%s'", argv[optind]);
	if (s.inbound && !s.c->hooks)
		return setup_usage(usage, "--accept-inbound is for claude-code, "
		    "not %s", s.c->name);
	if (setup_run(err, &s) == -1) {
		fflush(stdout);
		fprintf(stderr, "papo: %s\n", err);
		return SETUP_ERROR;
	}
	return SETUP_OK;
}
