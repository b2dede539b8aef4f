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
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/fs.h"
#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/setup.h"
#include "server/http/http.h"

#define SETUP_PATH_MAX 4096
#define SETUP_FILE_MAX (64 * 1024 * 1024)  /* ~/.claude.json grows */
#define SETUP_KEY_MAX 128                  /* a dotted JSON key path */
#define SETUP_HOOK_TIMEOUT_S 86400         /* the Stop hook waits a day */

enum setup_form { SETUP_JSON, SETUP_TOML };

/* A harness: where its MCP servers are kept and in which shape. */
struct setup_client {
	const char *name;        /* on the command line */
	const char *title;       /* in what is printed */
	enum setup_form form;
	const char *dir_env;     /* names the directory when set ... */
	const char *dir_home;    /* ... else this one under $HOME */
	const char *file;
	const char *servers;     /* the key of its servers' object */
	int typed;               /* entries carry "type": "stdio" or "http" */
	const char *url_key;     /* an HTTP entry's URL */
	const char *headers_key; /* its headers; NULL: Codex, which takes a
	                          * token only from a variable it names */
	int hooks;               /* Claude Code: hooks and crossSessionInbound */
	const char *next;        /* the one thing to do after */
};

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

/* The Claude Code events papo's hook runs on; Stop only over HTTP. */
static const char *const setup_events[] = { "SessionStart",
    "UserPromptSubmit", "Stop" };
#define SETUP_STOP 2

/* One run of the command. */
struct setup {
	const struct setup_client *c;
	int print, remove, http, inbound;
	char exe[SETUP_PATH_MAX];       /* this binary, absolute */
	char papo_home[SETUP_PATH_MAX]; /* PAPO_HOME made absolute; "" unset */
	const char *token;              /* PAPO_TOKEN, or NULL */
	char url[1024];                 /* --http: the daemon's /mcp */
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

static const char *const setup_verbs[][2] = {
	{ "added", "would be added" },
	{ "updated", "would be updated" },
	{ "removed", "would be removed" },
	{ "already set up", "already set up" },
	{ "not set up: nothing to remove", "not set up: nothing to remove" },
};

/*
 * One line about one setting, "FILE: KEY: WHAT VERB"; with --print, the
 * text it would have, indented below it.
 */
static void
setup_say(struct setup *s, const char *file, const char *key,
    const char *what, enum setup_said said, const char *show)
{
	printf("%s: %s: %s %s\n", file, key, what, setup_verbs[said][s->print]);
	if (said <= SAID_REMOVE)
		s->changed++;
	if (!s->print || show == NULL || said == SAID_REMOVE)
		return;
	for (const char *p = show; *p != '\0';) {
		size_t n = strcspn(p, "\n");

		printf("    %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* Creates the missing directories above path, each 0700. */
static int
setup_mkdirs(char err[PAPO_ERR_LEN], const char *path)
{
	char dir[SETUP_PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
			snprintf(err, PAPO_ERR_LEN, "cannot create %s: %s", dir,
			    strerror(errno));
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/* Reads f->path whole; an absent file reads as "". */
static int
sfile_load(char err[PAPO_ERR_LEN], struct sfile *f)
{
	struct stat st;
	char *real;
	size_t off = 0;
	int fd = -1, rc = -1;

	/* A settings file kept as a symlink (a dotfiles repository) is
	 * edited where it points, and stays a link. */
	if ((real = realpath(f->path, NULL)) != NULL) {
		snprintf(f->path, sizeof(f->path), "%s", real);
		free(real);
	}
	if ((fd = open(f->path, O_RDONLY | O_CLOEXEC)) == -1 && errno != ENOENT) {
		snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", f->path,
		    strerror(errno));
		return -1;
	}
	f->exists = fd != -1;
	f->mode = 0600;
	if (fd != -1 && (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > SETUP_FILE_MAX)) {
		snprintf(err, PAPO_ERR_LEN, "%s is not a regular file of at most "
		    "%d MB", f->path, SETUP_FILE_MAX >> 20);
		goto out;
	}
	f->len = fd != -1 ? (size_t)st.st_size : 0;
	if (fd != -1)
		f->mode = st.st_mode & 07777;
	if ((f->text = malloc(f->len + 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory reading %s", f->path);
		goto out;
	}
	while (off < f->len) {
		ssize_t r = read(fd, f->text + off, f->len - off);

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", f->path,
			    r == 0 ? "it shrank while read" : strerror(errno));
			goto out;
		}
		off += (size_t)r;
	}
	f->text[off] = '\0';
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	return rc;
}

/* Replaces the file with data, unless --print; a file that was there
 * keeps its mode (fs_write makes it 0600, which new files stay). */
static int
sfile_save(char err[PAPO_ERR_LEN], const struct setup *s,
    const struct sfile *f, const char *data, size_t len)
{
	if (s->print)
		return 0;
	if (setup_mkdirs(err, f->path) == -1 ||
	    fs_write(err, f->path, data, len) == -1)
		return -1;
	if (f->exists && f->mode != 0600 && chmod(f->path, f->mode) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot restore the mode of %s: %s",
		    f->path, strerror(errno));
		return -1;
	}
	return 0;
}

static void
sfile_free(struct sfile *f)
{
	free(f->text);
	cJSON_Delete(f->doc);
	f->text = NULL;
	f->doc = NULL;
}

/* A leaf, or a key when key is not NULL, as JSON text (cJSON's own
 * escaping). */
static int
sj_leaf(FILE *m, const cJSON *v, const char *key)
{
	cJSON *k = key != NULL ? cJSON_CreateString(key) : NULL;
	char *t = cJSON_PrintUnformatted(key != NULL ? k : v);

	if (t != NULL)
		fputs(t, m);
	cJSON_free(t);
	cJSON_Delete(k);
	return t != NULL ? 0 : -1;
}

/* v laid out as JSON.stringify(v, null, 2) does (depth 1000 at most:
 * cJSON parses no deeper). */
static int
sj_emit(FILE *m, const cJSON *v, int depth)
{
	const cJSON *x;
	int obj = cJSON_IsObject(v);

	if (!obj && !cJSON_IsArray(v))
		return sj_leaf(m, v, NULL);
	if (v->child == NULL) {
		fputs(obj ? "{}" : "[]", m);
		return 0;
	}
	fputc(obj ? '{' : '[', m);
	cJSON_ArrayForEach(x, v) {
		fprintf(m, "%s\n%*s", x == v->child ? "" : ",", 2 * depth + 2, "");
		if ((obj && sj_leaf(m, NULL, x->string) == -1) ||
		    (obj && fputs(": ", m) == EOF) || sj_emit(m, x, depth + 1) == -1)
			return -1;
	}
	fprintf(m, "\n%*s%c", 2 * depth, "", obj ? '}' : ']');
	return 0;
}

/*
 * A JSON value as the harnesses write their own files (two spaces, a
 * final newline), so that a file keeps its layout but for what changed.
 */
static char *
sj_print(const cJSON *v, size_t *len)
{
	char *out = NULL;
	FILE *m;
	int rc;

	if ((m = open_memstream(&out, len)) == NULL)
		return NULL;
	rc = sj_emit(m, v, 0);
	fputc('\n', m);
	if (fclose(m) != 0 || rc == -1) {
		free(out);
		return NULL;
	}
	return out;
}

/* Reads and parses a JSON file; absent or blank, it is {}. */
static int
sj_load(char err[PAPO_ERR_LEN], const struct setup *s, struct sfile *f)
{
	const char *end = NULL;
	char *plain;
	int line = 1, col = 1;

	if (sfile_load(err, f) == -1)
		return -1;
	if (f->text[strspn(f->text, " \t\r\n")] == '\0' && strlen(f->text) ==
	    f->len) {
		f->doc = cJSON_CreateObject();
		return f->doc != NULL ? 0 : -1;
	}
	/* cJSON reads up to a NUL; what followed would be lost. */
	if (strlen(f->text) != f->len) {
		snprintf(err, PAPO_ERR_LEN, "%s holds a NUL byte, so it is not "
		    "JSON: it was left as it is", f->path);
		return -1;
	}
	if ((f->doc = cJSON_ParseWithOpts(f->text, &end, 1)) == NULL) {
		for (const char *p = f->text; end != NULL && p < end; p++) {
			col = *p == '\n' ? 1 : col + 1;
			line += *p == '\n';
		}
		/* VS Code's files may hold comments, which JSON has not: say
		 * so, rather than point at the first one. */
		if ((plain = strdup(f->text)) != NULL) {
			cJSON_Minify(plain);
			f->doc = cJSON_Parse(plain);
			free(plain);
		}
		if (f->doc != NULL)
			snprintf(err, PAPO_ERR_LEN, "%s has comments, which papo "
			    "setup would lose: it was left as it is; add papo by "
			    "hand ('papo setup %s --print' shows the entry)",
			    f->path, s->c->name);
		else
			snprintf(err, PAPO_ERR_LEN, "%s is not valid JSON (line %d, "
			    "column %d): it was left as it is; fix it, or add papo "
			    "by hand", f->path, line, col);
		return -1;
	}
	if (!cJSON_IsObject(f->doc)) {
		snprintf(err, PAPO_ERR_LEN, "%s holds JSON that is not an object: "
		    "it was left as it is", f->path);
		return -1;
	}
	return 0;
}

/*
 * The object holding the last segment of the dotted key, in *parent
 * (NULL when missing and not create) and that segment in *leaf.  -1 when
 * a segment on the way is there but not an object.
 */
static int
sj_parent(char err[PAPO_ERR_LEN], const struct sfile *f, const char *key,
    int create, char buf[SETUP_KEY_MAX], cJSON **parent, const char **leaf)
{
	cJSON *o = f->doc, *next;
	char *seg, *dot;

	snprintf(buf, SETUP_KEY_MAX, "%s", key);
	for (seg = buf; (dot = strchr(seg, '.')) != NULL; seg = dot + 1) {
		*dot = '\0';
		next = cJSON_GetObjectItemCaseSensitive(o, seg);
		if (next == NULL && create)
			next = cJSON_AddObjectToObject(o, seg);
		if (next != NULL && !cJSON_IsObject(next)) {
			snprintf(err, PAPO_ERR_LEN, "%s: \"%s\" is not an object: "
			    "the file was left as it is", f->path, seg);
			return -1;
		}
		if ((o = next) == NULL)
			break;
	}
	*parent = o;
	*leaf = seg;
	return 0;
}

/* Deletes the dotted key, then each object on its path it left empty. */
static void
sj_delete(cJSON *doc, const char *key)
{
	char buf[SETUP_KEY_MAX], *seg[8];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", key);
	for (char *p = buf; n < 8 && p != NULL; n++) {
		seg[n] = p;
		if ((p = strchr(p, '.')) != NULL)
			*p++ = '\0';
	}
	for (int k = n; k >= 1; k--) {
		cJSON *o = doc, *child;

		for (int i = 0; i < k - 1 && o != NULL; i++)
			o = cJSON_GetObjectItemCaseSensitive(o, seg[i]);
		child = cJSON_GetObjectItemCaseSensitive(o, seg[k - 1]);
		if (child == NULL || (k < n && (!cJSON_IsObject(child) ||
		    child->child != NULL)))
			return;
		cJSON_DeleteItemFromObjectCaseSensitive(o, seg[k - 1]);
	}
}

/*
 * The one way a JSON setting changes: makes the dotted key hold val
 * (taken; NULL: absent).  Returns what that did, or -1.
 */
static int
sj_set(char err[PAPO_ERR_LEN], struct sfile *f, const char *key, cJSON *val)
{
	char buf[SETUP_KEY_MAX];
	const char *leaf;
	cJSON *parent, *old;
	enum setup_said said;

	if (sj_parent(err, f, key, val != NULL, buf, &parent, &leaf) == -1) {
		cJSON_Delete(val);
		return -1;
	}
	old = cJSON_GetObjectItemCaseSensitive(parent, leaf);
	if (val == NULL)
		said = old == NULL ? SAID_ABSENT : SAID_REMOVE;
	else if (old != NULL && cJSON_Compare(old, val, 1))
		said = SAID_SAME;
	else
		said = old != NULL ? SAID_UPDATE : SAID_ADD;
	if (said == SAID_REMOVE)
		sj_delete(f->doc, key);
	else if (said == SAID_UPDATE)
		cJSON_ReplaceItemInObjectCaseSensitive(parent, leaf, val);
	else if (said == SAID_ADD)
		cJSON_AddItemToObject(parent, leaf, val);
	else
		cJSON_Delete(val);
	f->dirty |= said <= SAID_REMOVE;
	return (int)said;
}

/* sj_set, said in a line naming the file, the key and what it holds. */
static int
sj_put(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f,
    const char *key, cJSON *val, const char *what)
{
	char *show = NULL;
	size_t n;
	int said;

	if (val != NULL)
		show = sj_print(val, &n);
	if ((said = sj_set(err, f, key, val)) != -1)
		setup_say(s, f->path, key, what, (enum setup_said)said, show);
	free(show);
	return said == -1 ? -1 : 0;
}

/* Writes a JSON file back when something in it changed. */
static int
sj_save(char err[PAPO_ERR_LEN], const struct setup *s, const struct sfile *f)
{
	char *text;
	size_t len;
	int rc;

	if (!f->dirty)
		return 0;
	if ((text = sj_print(f->doc, &len)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory writing %s", f->path);
		return -1;
	}
	rc = sfile_save(err, s, f, text, len);
	free(text);
	return rc;
}

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

/* Appends s to m as a shell word: as it is when nothing in it is
 * special to sh, else in single quotes. */
static void
setup_shell_word(FILE *m, const char *s, int quote)
{
	if (!quote && s[0] != '\0' && s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_/.,:+-=@%")] == '\0') {
		fputs(s, m);
		return;
	}
	fputc('\'', m);
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputs("'\\''", m);
		else
			fputc(*s, m);
	}
	fputc('\'', m);
}

/*
 * Whether a hook handler is papo's: a command ending in " hook" run by a
 * binary named papo, however it is quoted or what precedes it.
 */
static int
setup_is_papo_hook(const cJSON *h)
{
	const char *cmd = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(h, "command"));
	const char *p;
	size_t n;

	if (cmd == NULL || (n = strlen(cmd)) < 9 ||
	    strcmp(cmd + n - 5, " hook") != 0)
		return 0;
	p = cmd + n - 5;
	if (p[-1] == '\'' || p[-1] == '"')
		p--;
	if (p - cmd < 4 || strncmp(p - 4, "papo", 4) != 0)
		return 0;
	p -= 4;
	return p == cmd || strchr("/ '\"", p[-1]) != NULL;
}

/* The matcher group with papo's hook: "PAPO_HOME='...' /abs/papo hook";
 * on Stop, run aside to wake the session when a message comes. */
static cJSON *
setup_hook_group(const struct setup *s, int stop)
{
	cJSON *g = cJSON_CreateObject(), *hooks, *h;
	char *cmd = NULL;
	size_t n;
	FILE *m;

	if (g == NULL || (hooks = cJSON_AddArrayToObject(g, "hooks")) == NULL ||
	    (h = cJSON_CreateObject()) == NULL)
		goto fail;
	cJSON_AddItemToArray(hooks, h);
	if ((m = open_memstream(&cmd, &n)) == NULL)
		goto fail;
	if (s->papo_home[0] != '\0') {
		fputs("PAPO_HOME=", m);
		setup_shell_word(m, s->papo_home, 1);
		fputc(' ', m);
	}
	setup_shell_word(m, s->exe, 0);
	fputs(" hook", m);
	if (fclose(m) != 0 ||
	    cJSON_AddStringToObject(h, "type", "command") == NULL ||
	    cJSON_AddStringToObject(h, "command", cmd) == NULL ||
	    (stop && (cJSON_AddTrueToObject(h, "asyncRewake") == NULL ||
	    cJSON_AddNumberToObject(h, "timeout", SETUP_HOOK_TIMEOUT_S) ==
	    NULL)))
		goto fail;
	free(cmd);
	return g;
fail:
	free(cmd);
	cJSON_Delete(g);
	return NULL;
}

/* How many of an event's hook handlers are papo's; *mine is the matcher
 * group of the last. */
static int
setup_papo_hooks(const cJSON *event, const cJSON **mine)
{
	const cJSON *g, *h;
	int n = 0;

	cJSON_ArrayForEach(g, event)
		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(g, "hooks"))
			if (setup_is_papo_hook(h)) {
				n++;
				*mine = g;
			}
	return n;
}

/*
 * An event's array of matcher groups as it should be, in *out: as it is
 * when it holds papo's group exactly once; else with every papo hook
 * taken out (and a group it leaves with no hooks) and group, when not
 * NULL, appended; NULL for an array that would be empty.  Takes group.
 * -1 when out of memory (which must not read as an empty array).
 */
static int
setup_hook_event(const cJSON *old, cJSON *group, cJSON **out)
{
	const cJSON *mine = NULL;
	cJSON *arr, *g, *gnext, *hooks, *k, *knext;
	int n;

	*out = NULL;
	if (group != NULL && setup_papo_hooks(old, &mine) == 1 &&
	    cJSON_Compare(mine, group, 1)) {
		cJSON_Delete(group);
		return (*out = cJSON_Duplicate(old, 1)) != NULL ? 0 : -1;
	}
	arr = old != NULL ? cJSON_Duplicate(old, 1) : cJSON_CreateArray();
	if (arr == NULL) {
		cJSON_Delete(group);
		return -1;
	}
	for (g = arr->child; g != NULL; g = gnext) {
		gnext = g->next;
		hooks = cJSON_GetObjectItemCaseSensitive(g, "hooks");
		if (!cJSON_IsArray(hooks))
			continue;
		n = 0;
		for (k = hooks->child; k != NULL; k = knext) {
			knext = k->next;
			if (setup_is_papo_hook(k)) {
				cJSON_Delete(cJSON_DetachItemViaPointer(hooks, k));
				n++;
			}
		}
		if (n > 0 && hooks->child == NULL)
			cJSON_Delete(cJSON_DetachItemViaPointer(arr, g));
	}
	if (group != NULL)
		cJSON_AddItemToArray(arr, group);
	if (arr->child == NULL)
		cJSON_Delete(arr);
	else
		*out = arr;
	return 0;
}

/*
 * Claude Code's hooks: SessionStart and UserPromptSubmit, and over HTTP
 * Stop, each holding papo's group once; --remove takes them out.  The
 * lines speak of papo's hook, not of the event's whole array.
 */
static int
setup_hooks(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f)
{
	char key[SETUP_KEY_MAX], *show;
	const cJSON *old, *mine = NULL;
	cJSON *group, *event;
	size_t len;
	int said, had;

	for (size_t i = 0; i < sizeof(setup_events) / sizeof(*setup_events);
	    i++) {
		int want = !s->remove && (i != SETUP_STOP || s->http);

		snprintf(key, sizeof(key), "hooks.%s", setup_events[i]);
		old = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(f->doc, "hooks"),
		    setup_events[i]);
		if (old != NULL && !cJSON_IsArray(old)) {
			snprintf(err, PAPO_ERR_LEN, "%s: \"%s\" is not an array: "
			    "the file was left as it is", f->path, key);
			return -1;
		}
		/* Setting up over stdio says nothing of a Stop hook papo
		 * never had; one from --http is taken out. */
		if ((had = setup_papo_hooks(old, &mine)) == 0 && !want) {
			if (s->remove)
				setup_say(s, f->path, key, "papo's hook",
				    SAID_ABSENT, NULL);
			continue;
		}
		group = want ? setup_hook_group(s, i == SETUP_STOP) : NULL;
		show = group != NULL ? sj_print(group, &len) : NULL;
		if (want && show == NULL) {
			cJSON_Delete(group);
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			return -1;
		}
		if (setup_hook_event(old, group, &event) == -1) {
			free(show);
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			return -1;
		}
		said = sj_set(err, f, key, event);
		if (said != -1 && said != SAID_SAME)
			said = had == 0 ? SAID_ADD : !want ? SAID_REMOVE :
			    SAID_UPDATE;
		if (said != -1)
			setup_say(s, f->path, key, "papo's hook", said, show);
		free(show);
		if (said == -1)
			return -1;
	}
	return 0;
}

/*
 * crossSessionInbound: set to "accept" with --accept-inbound; with
 * --remove too, taken out again when it is "accept".  Without the flag
 * it is never touched, only explained.
 */
static int
setup_inbound(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f)
{
	static const char key[] = "crossSessionInbound";
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->doc, key);
	const char *is = cJSON_GetStringValue(v);
	char *now = NULL;

	if (s->inbound && !s->remove)
		return sj_put(err, s, f, key, cJSON_CreateString("accept"),
		    "\"accept\"");
	if (s->inbound && (v == NULL || (is != NULL &&
	    strcmp(is, "accept") == 0)))
		return sj_put(err, s, f, key, NULL, "\"accept\"");
	if (v != NULL)
		now = cJSON_PrintUnformatted(v);
	if (s->inbound)
		printf("%s: %s: left as it is: it is %s, which papo setup did "
		    "not set\n", f->path, key, now != NULL ? now : "?");
	else if (!s->remove)
		printf("note: a Claude Code session run with "
		    "--dangerously-skip-permissions (bypass permissions) holds "
		    "papo's wakes for approval unless %s has \"%s\": \"accept\" "
		    "(now %s%s); 'papo setup claude-code --accept-inbound' sets "
		    "it\n", f->path, key, now != NULL ? "it is " : "not set",
		    now != NULL ? now : "");
	cJSON_free(now);
	return 0;
}

/* Appends s to m as a TOML basic string. */
static void
toml_str(FILE *m, const char *s)
{
	fputc('"', m);
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0';
	    p++) {
		const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" :
		    *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : *p == '\r' ? "\\r" :
		    NULL;

		if (esc != NULL)
			fputs(esc, m);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(m, "\\u%04X", *p);
		else
			fputc(*p, m);
	}
	fputc('"', m);
}

/* papo's table for Codex, from the entry's strings, arrays of strings
 * and objects of strings (env, inline). */
static char *
toml_block(const cJSON *entry, size_t *len)
{
	const cJSON *v, *x;
	char *out = NULL;
	FILE *m;

	if ((m = open_memstream(&out, len)) == NULL)
		return NULL;
	fputs("[mcp_servers.papo]\n", m);
	cJSON_ArrayForEach(v, entry) {
		fprintf(m, "%s = ", v->string);
		if (cJSON_IsString(v))
			toml_str(m, v->valuestring);
		else {
			fputs(cJSON_IsArray(v) ? "[" : "{ ", m);
			cJSON_ArrayForEach(x, v) {
				if (x != v->child)
					fputs(", ", m);
				if (cJSON_IsObject(v))
					fprintf(m, "%s = ", x->string);
				toml_str(m, cJSON_GetStringValue(x));
			}
			fputs(cJSON_IsArray(v) ? "]" : " }", m);
		}
		fputc('\n', m);
	}
	if (fclose(m) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* A table header's or key's name with its quotes and blanks taken out
 * ([ mcp_servers . "papo" ] is mcp_servers.papo), up to stop. */
static void
toml_name(const char *p, const char *eol, char stop, char *out, size_t n)
{
	size_t k = 0;
	char q = 0;

	for (; p < eol; p++) {
		if (q == 0 && (*p == '"' || *p == '\'')) {
			q = *p;
			continue;
		}
		if (q != 0 && *p == q) {
			q = 0;
			continue;
		}
		if (q == 0 && *p == stop)
			break;
		if ((q != 0 || (*p != ' ' && *p != '\t')) && k + 1 < n)
			out[k++] = *p;
	}
	out[k] = '\0';
}

static int
toml_is_papo(const char *name)
{
	return strcmp(name, "mcp_servers.papo") == 0 ||
	    strncmp(name, "mcp_servers.papo.", 17) == 0;
}

/* Where a TOML value stands at the end of a line: in a multi-line string
 * (ml is its quote), and how deep in brackets and braces. */
struct toml_lex {
	char ml;
	int depth;
	int opened;               /* the line where either began */
};

/* Follows strings and brackets through one line of a value; -1 at a
 * one-line string or a bracket that does not match. */
static int
toml_lex(struct toml_lex *x, const char *p, const char *eol, int line)
{
	for (; p < eol; p++) {
		if (x->ml != 0) {
			if (x->ml == '"' && *p == '\\')
				p++;
			else if (eol - p >= 3 && p[0] == x->ml && p[1] == x->ml &&
			    p[2] == x->ml) {
				x->ml = 0;
				p += 2;
			}
			continue;
		}
		if (*p == '#')
			break;
		if (*p == '"' || *p == '\'') {
			char q = *p;

			if (eol - p >= 3 && p[1] == q && p[2] == q) {
				x->ml = q;
				x->opened = line;
				p += 2;
				continue;
			}
			for (p++; p < eol && *p != q; p++)
				if (q == '"' && *p == '\\')
					p++;
			if (p >= eol)
				return -1;
		} else if (*p == '[' || *p == '{') {
			if (x->depth++ == 0)
				x->opened = line;
		} else if ((*p == ']' || *p == '}') && x->depth-- == 0)
			return -1;
	}
	return 0;
}

/* Where papo's table is in a TOML text: from its header to the end of
 * its last key's line (comments and blank lines after it are the next
 * table's). */
struct toml_at {
	int found;
	size_t start, end;
};

/*
 * Finds papo's table: [mcp_servers.papo] and any [mcp_servers.papo.*]
 * right after it.  Only as much of TOML is read as tells a table header
 * from a line of a value.  -1 when a string or bracket does not close,
 * or when papo's server is defined in a form a table of papo's own
 * would clash with (a dotted key, an inline table).
 */
static int
toml_find(char err[PAPO_ERR_LEN], const struct sfile *f, struct toml_at *at)
{
	struct toml_lex x = { 0, 0, 0 };
	char section[256] = "", name[256];
	const char *t = f->text, *end = f->text + f->len, *p, *q, *eol, *next;
	int line = 0, in = 0, left = 0;

	memset(at, 0, sizeof(*at));
	if (memchr(t, '\0', f->len) != NULL) {
		snprintf(err, PAPO_ERR_LEN, "%s holds a NUL byte, so it is not "
		    "TOML: it was left as it is", f->path);
		return -1;
	}
	for (p = t; p < end; p = next) {
		eol = memchr(p, '\n', (size_t)(end - p));
		next = eol != NULL ? eol + 1 : end;
		eol = eol != NULL ? eol : end;
		line++;
		q = p + strspn(p, " \t");
		if (x.ml != 0 || x.depth > 0 || (q < eol && *q != '#' &&
		    *q != '\r' && *q != '[')) {
			if (x.ml == 0 && x.depth == 0) {
				toml_name(q, eol, '=', name, sizeof(name));
				if ((section[0] == '\0' && (toml_is_papo(name) ||
				    strcmp(name, "mcp_servers") == 0)) ||
				    (strcmp(section, "mcp_servers") == 0 &&
				    (strcmp(name, "papo") == 0 ||
				    strncmp(name, "papo.", 5) == 0))) {
					snprintf(err, PAPO_ERR_LEN, "%s, line %d: papo's "
					    "server is defined in a form papo setup does "
					    "not edit (%s): the file was left as it is; "
					    "edit it by hand", f->path, line, name);
					return -1;
				}
			}
			if (toml_lex(&x, q, eol, line) == -1) {
				snprintf(err, PAPO_ERR_LEN, "%s, line %d: a string or "
				    "bracket that does not close; the file was left "
				    "as it is", f->path, line);
				return -1;
			}
			if (in)
				at->end = (size_t)(next - t);
			continue;
		}
		if (q >= eol || *q != '[')
			continue;
		q += q + 1 < eol && q[1] == '[' ? 2 : 1;
		toml_name(q, eol, ']', section, sizeof(section));
		if (!toml_is_papo(section)) {
			left |= in;
			in = 0;
			continue;
		}
		if (left) {
			snprintf(err, PAPO_ERR_LEN, "%s, line %d: papo's table comes "
			    "in parts apart: the file was left as it is; edit it by "
			    "hand", f->path, line);
			return -1;
		}
		if (!at->found)
			at->start = (size_t)(p - t);
		at->found = in = 1;
		at->end = (size_t)(next - t);
	}
	if (x.ml != 0 || x.depth > 0) {
		snprintf(err, PAPO_ERR_LEN, "%s, line %d: a string or bracket "
		    "opened there does not close; the file was left as it is",
		    f->path, x.opened);
		return -1;
	}
	return 0;
}

/*
 * Codex: papo's table written as a block in place of the one there (or
 * after everything), or taken out with the blank line that set it
 * apart; every other byte of the file stays.
 */
static int
setup_toml(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f,
    const cJSON *entry)
{
	struct toml_at at;
	enum setup_said said;
	char *block = NULL, *out = NULL;
	size_t blen = 0, olen = 0, start;
	FILE *m;
	int rc = -1;

	if (toml_find(err, f, &at) == -1)
		return -1;
	if (entry != NULL && (block = toml_block(entry, &blen)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	if (block == NULL)
		said = at.found ? SAID_REMOVE : SAID_ABSENT;
	else if (!at.found)
		said = SAID_ADD;
	else
		said = at.end - at.start == blen && memcmp(f->text + at.start,
		    block, blen) == 0 ? SAID_SAME : SAID_UPDATE;
	if (said <= SAID_REMOVE) {
		start = at.found ? at.start : f->len;
		if (block == NULL && start >= 2 && f->text[start - 1] == '\n' &&
		    f->text[start - 2] == '\n')
			start--;
		if ((m = open_memstream(&out, &olen)) == NULL) {
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			goto out;
		}
		fwrite(f->text, 1, start, m);
		if (!at.found && f->len > 0)
			fputs(f->text[f->len - 1] == '\n' ? "\n" : "\n\n", m);
		if (block != NULL)
			fwrite(block, 1, blen, m);
		if (at.found)
			fwrite(f->text + at.end, 1, f->len - at.end, m);
		if (fclose(m) != 0) {
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			goto out;
		}
		if (sfile_save(err, s, f, out, olen) == -1)
			goto out;
	}
	setup_say(s, f->path, "[mcp_servers.papo]", s->remove ? "papo's MCP "
	    "server" : s->http ? "papo's MCP server (HTTP)" : "papo's MCP "
	    "server (stdio)", said, block);
	rc = 0;
out:
	free(block);
	free(out);
	return rc;
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
