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

#include "lib/os.h"
#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/setup.h"
#include "server/cli/setup_int.h"
#include "server/http/http.h"

/* The stop hook waits a day: until a message comes, in practice. */
#define SETUP_DAY_S 86400

static const struct setup_hookset setup_hooks_claude = {
	"CLAUDE_CONFIG_DIR", ".claude", "settings.json",
	{ "SessionStart", "UserPromptSubmit" }, "Stop", 1,
	"timeout", SETUP_DAY_S, 1, NULL, "command", 0, 0,
};

static const struct setup_hookset setup_hooks_codex = {
	"CODEX_HOME", ".codex", "hooks.json",
	{ "SessionStart", "UserPromptSubmit" }, "Stop", 0,
	"timeout", SETUP_DAY_S, 0, "codex", "command", 0, 0,
};

/* Gemini CLI counts a hook's timeout in ms. */
static const struct setup_hookset setup_hooks_gemini = {
	NULL, ".gemini", "settings.json",
	{ "SessionStart", "BeforeAgent" }, "AfterAgent", 0,
	"timeout", SETUP_DAY_S * 1000L, 0, "gemini", "command", 0, 0,
};

/* Qwen Code reads a timeout of 1000 or more as ms, less as seconds. */
static const struct setup_hookset setup_hooks_qwen = {
	NULL, ".qwen", "settings.json",
	{ "SessionStart", "UserPromptSubmit" }, "Stop", 0,
	"timeout", SETUP_DAY_S * 1000L, 0, "qwen", "command", 0, 0,
};

/* A file of papo's own among Copilot CLI's user hooks (they need no
 * trust, unlike a folder's .github/hooks). */
static const struct setup_hookset setup_hooks_copilot = {
	"COPILOT_HOME", ".copilot", "hooks/papo.json",
	{ "sessionStart", "userPromptSubmitted" }, "agentStop", 0,
	"timeoutSec", SETUP_DAY_S, 0, "copilot", "bash", 1, 1,
};

static const struct setup_client setup_clients[] = {
	{ .name = "claude-code", .title = "Claude Code", .form = SETUP_JSON,
	  .dir_env = "CLAUDE_CONFIG_DIR", .dir_home = "", .file = ".claude.json",
	  .servers = "mcpServers", .type_stdio = "stdio", .type_http = "http",
	  .env_key = "env", .url_key = "url", .headers_key = "headers",
	  .hooks = &setup_hooks_claude, .inbound = 1,
	  .next = "restart Claude Code; `claude mcp list` should show papo "
	  "\xe2\x9c\x94 Connected" },
	{ .name = "codex", .title = "Codex", .form = SETUP_TOML,
	  .dir_env = "CODEX_HOME", .dir_home = ".codex", .file = "config.toml",
	  .servers = "mcp_servers", .env_key = "env", .url_key = "url",
	  .extra = "{\"default_tools_approval_mode\": \"approve\"}",
	  .hooks = &setup_hooks_codex,
	  .allow = "Codex runs a new or changed hook only once you trust it: "
	  "start Codex, open /hooks and trust papo's three (Codex says "
	  "\"hooks need review\" until then)",
	  .next = "restart Codex; `codex mcp list` should list papo" },
	{ .name = "gemini", .title = "Gemini CLI", .form = SETUP_JSON,
	  .dir_home = ".gemini", .file = "settings.json",
	  .servers = "mcpServers", .env_key = "env", .url_key = "httpUrl",
	  .headers_key = "headers", .hooks = &setup_hooks_gemini,
	  .allow = "Gemini CLI runs no MCP server and no hook in a folder it "
	  "does not trust: trust your project's folder when Gemini CLI asks "
	  "(or run /permissions in it)",
	  .next = "restart Gemini CLI; `gemini mcp list` should show papo "
	  "connected" },
	{ .name = "qwen", .title = "Qwen Code", .form = SETUP_JSON,
	  .dir_home = ".qwen", .file = "settings.json",
	  .servers = "mcpServers", .env_key = "env", .url_key = "httpUrl",
	  .headers_key = "headers", .extra = "{\"alwaysLoadTools\": true}",
	  .hooks = &setup_hooks_qwen,
	  .next = "restart Qwen Code; `qwen mcp list` should show papo "
	  "connected" },
	{ .name = "copilot", .title = "Copilot CLI", .form = SETUP_JSON,
	  .dir_env = "COPILOT_HOME", .dir_home = ".copilot",
	  .file = "mcp-config.json", .servers = "mcpServers",
	  .type_stdio = "stdio", .type_http = "http", .env_key = "env",
	  .url_key = "url", .headers_key = "headers",
	  .extra = "{\"tools\": [\"*\"]}",
	  .hooks = &setup_hooks_copilot,
	  .next = "restart Copilot CLI; /mcp show should list papo" },
	{ .name = "opencode", .title = "opencode", .form = SETUP_JSON,
	  .dir_env = "XDG_CONFIG_HOME", .dir_home = ".config",
	  .file = "opencode/opencode.json", .servers = "mcp",
	  .type_stdio = "local", .type_http = "remote", .argv_command = 1,
	  .env_key = "environment", .url_key = "url", .headers_key = "headers",
	  .plugin = "opencode/plugin/papo.js",
	  .allow = "nothing to allow; but opencode installs a package of its "
	  "own (@opencode-ai/plugin) beside a plugin at every start until it "
	  "has it, and offline that waits about a minute: start opencode "
	  "online once",
	  .next = "restart opencode; `opencode mcp list` should show papo "
	  "connected" },
	{ .name = "cursor", .title = "Cursor", .form = SETUP_JSON,
	  .dir_home = ".cursor", .file = "mcp.json", .servers = "mcpServers",
	  .env_key = "env", .url_key = "url", .headers_key = "headers",
	  .next = "restart Cursor (or reload its window); Cursor Settings "
	  "\xe2\x86\x92 MCP should show papo and its tools" },
	{ .name = "vscode", .title = "VS Code", .form = SETUP_JSON,
	  .dir_env = "XDG_CONFIG_HOME", .dir_home = ".config",
	  .file = "Code/User/mcp.json", .servers = "servers",
	  .type_stdio = "stdio", .type_http = "http", .env_key = "env",
	  .url_key = "url", .headers_key = "headers",
	  .next = "in VS Code, run \"MCP: List Servers\" and start papo (VS "
	  "Code asks once whether to trust it)" },
};

#define SETUP_NCLIENTS (sizeof(setup_clients) / sizeof(setup_clients[0]))

/*
 * papo's MCP server entry for this client: the stdio bridge (this binary,
 * 'mcp', PAPO_HOME and PAPO_TOKEN in env when set), or with --http the
 * daemon's URL and the token as a bearer header.
 */
static cJSON *
setup_entry_base(const struct setup *s)
{
	const struct setup_client *c = s->c;
	cJSON *e = cJSON_CreateObject(), *o, *args;
	char *bearer = NULL;

	if (e == NULL || ((s->http ? c->type_http : c->type_stdio) != NULL &&
	    cJSON_AddStringToObject(e, "type", s->http ? c->type_http :
	    c->type_stdio) == NULL))
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
	/* ["/abs/papo", "mcp"], or "/abs/papo" and ["mcp"]. */
	if (c->argv_command) {
		if ((args = cJSON_AddArrayToObject(e, "command")) == NULL ||
		    (o = cJSON_CreateString(s->exe)) == NULL)
			goto fail;
		cJSON_AddItemToArray(args, o);
	} else if (cJSON_AddStringToObject(e, "command", s->exe) == NULL ||
	    (args = cJSON_AddArrayToObject(e, "args")) == NULL)
		goto fail;
	if ((o = cJSON_CreateString("mcp")) == NULL)
		goto fail;
	cJSON_AddItemToArray(args, o);
	if (s->papo_home[0] == '\0' && s->token == NULL)
		return e;
	if ((o = cJSON_AddObjectToObject(e, c->env_key)) == NULL ||
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

/* The entry, with the harness's own keys after papo's (struct
 * setup_client's extra). */
static cJSON *
setup_entry(const struct setup *s)
{
	cJSON *e = setup_entry_base(s), *x, *v;

	if (e == NULL || s->c->extra == NULL)
		return e;
	if ((x = cJSON_Parse(s->c->extra)) == NULL) {
		cJSON_Delete(e);
		return NULL;
	}
	while ((v = x->child) != NULL)
		cJSON_AddItemToObject(e, v->string,
		    cJSON_DetachItemViaPointer(x, v));
	cJSON_Delete(x);
	return e;
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

	if (os_self_exe(s->exe, sizeof(s->exe)) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot tell where this papo binary "
		    "is: %s", strerror(errno));
		return -1;
	}
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
		s->daemon = 1;
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

/* What wakes an idle session of this harness, and what the user must
 * still do for it. */
static void
setup_wake(const struct setup *s)
{
	const struct setup_client *c = s->c;

	if (c->plugin != NULL)
		printf("wake: papo's plugin ('papo hook %s') wakes an idle "
		    "session when a message comes\n", c->name);
	else if (c->hooks == NULL)
		printf("wake: papo knows no way to wake an idle %s session: the "
		    "agent hears the room's messages when it calls the wait "
		    "tool\n", c->title);
	else if (c->hooks->stop_http && !s->http)
		printf("wake: over stdio, 'papo mcp' wakes an idle session itself "
		    "through %s's inbox socket, so no %s hook is set (--http "
		    "sets one)\n", c->title, c->hooks->stop);
	else
		printf("wake: the %s hook ('papo hook%s%s') wakes an idle session "
		    "when a message comes\n", c->hooks->stop,
		    c->hooks->arg != NULL ? " " : "",
		    c->hooks->arg != NULL ? c->hooks->arg : "");
	if ((c->hooks != NULL || c->plugin != NULL) && s->token != NULL)
		printf("note: the hooks read PAPO_TOKEN from %s's environment (it "
		    "is not written into a command line, where ps would show "
		    "it): export it where %s starts\n", c->title, c->title);
	else if (c->headers_key == NULL && s->http && s->token != NULL)
		printf("note: %s reads the token from PAPO_TOKEN in its "
		    "environment: export it where %s starts\n", c->title,
		    c->title);
	if (c->allow != NULL)
		printf("allow: %s\n", c->allow);
}

/* A home with no room yet gives the agent nothing to hear: say so
 * (--http with no daemon running has said it). */
static void
setup_room_check(const struct setup *s)
{
	const char *user = getenv("HOME");
	char path[SETUP_PATH_MAX + 16];

	if (s->http && !s->daemon)
		return;
	if (s->papo_home[0] != '\0')
		snprintf(path, sizeof(path), "%s/room.json", s->papo_home);
	else
		snprintf(path, sizeof(path), "%s/.papo/room.json",
		    user != NULL ? user : "");
	if (access(path, F_OK) == -1)
		printf("warning: %.*s has no room yet: make one with 'papo new "
		    "--name NAME' or join one with 'papo join INVITE --name "
		    "NAME'; until then papo mcp refuses to start\n",
		    (int)(strlen(path) - strlen("/room.json")), path);
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
 * parse stops the run before anything is written.  The hooks may be
 * kept in the MCP file itself (Gemini CLI, Qwen Code), which is then
 * read and written once. */
static int
setup_run(char err[PAPO_ERR_LEN], struct setup *s)
{
	const struct setup_client *c = s->c;
	const struct setup_hookset *hk = c->hooks;
	struct sfile mcp, hooks, plugin, *set = NULL;
	char key[SETUP_KEY_MAX], what[SETUP_PATH_MAX + 64];
	cJSON *entry = NULL;
	int r, rc = -1;

	memset(&mcp, 0, sizeof(mcp));
	memset(&hooks, 0, sizeof(hooks));
	memset(&plugin, 0, sizeof(plugin));
	if (setup_learn(err, s) == -1 ||
	    setup_path(err, mcp.path, c->dir_env, c->dir_home, c->file) == -1 ||
	    (hk != NULL && setup_path(err, hooks.path, hk->dir_env,
	    hk->dir_home, hk->file) == -1) ||
	    (c->plugin != NULL && (setup_path(err, plugin.path, c->dir_env,
	    c->dir_home, c->plugin) == -1 || sfile_load(err, &plugin) == -1)))
		goto out;
	if ((c->form == SETUP_TOML && sfile_load(err, &mcp) == -1) ||
	    (c->form == SETUP_JSON && sj_load(err, s, &mcp) == -1))
		goto out;
	if (hk != NULL) {
		set = c->form == SETUP_JSON && strcmp(hooks.path, mcp.path) == 0 ?
		    &mcp : &hooks;
		if (set == &hooks && sj_load(err, s, &hooks) == -1)
			goto out;
	}
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
	if (set != NULL && (setup_hooks(err, s, set) == -1 ||
	    (c->inbound && setup_inbound(err, s, set) == -1)))
		goto out;
	if (c->plugin != NULL && setup_plugin(err, s, &plugin) == -1)
		goto out;
	if ((c->form == SETUP_JSON && sj_save(err, s, &mcp) == -1) ||
	    (set == &hooks && sj_save(err, s, &hooks) == -1) ||
	    (c->plugin != NULL && setup_plugin_save(err, s, &plugin) == -1))
		goto out;
	if (s->changed == 0)
		printf(s->remove ? "papo was not set up for %s: nothing changed\n" :
		    "papo is already set up for %s: nothing changed\n", c->title);
	else if (s->print)
		printf("nothing was written (--print)\n");
	if (!s->remove) {
		setup_wake(s);
		setup_room_check(s);
	}
	if (s->changed > 0 && !s->print && s->remove)
		printf("next: restart %s so that it lets papo go\n", c->title);
	else if (s->changed > 0 && !s->print)
		printf("next: %s\nundo: papo setup %s --remove%s\n", c->next,
		    c->name, s->inbound ? " --accept-inbound" : "");
	rc = 0;
out:
	cJSON_Delete(entry);
	sfile_free(&mcp);
	sfile_free(&hooks);
	sfile_free(&plugin);
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
	if (s.inbound && !s.c->inbound)
		return setup_usage(usage, "--accept-inbound is for claude-code, "
		    "not %s", s.c->name);
	if (setup_run(err, &s) == -1) {
		fflush(stdout);
		fprintf(stderr, "papo: %s\n", err);
		return SETUP_ERROR;
	}
	return SETUP_OK;
}
