/*
 * setup_hooks.c: the hooks papo setup gives a harness, each running
 * 'papo hook [NAME]' (the harness's struct setup_hookset: its context
 * events, and the event at the end of a turn, whose hook wakes an idle
 * session), in the matcher-group shape Claude Code defined and the
 * others took; found by their command and kept once.  And Claude Code's
 * crossSessionInbound when asked.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/setup.h"
#include "server/cli/setup_int.h"

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
 * Reads one shell word at *p as setup_shell_word writes it (bare, of
 * the characters it leaves unquoted, or in single quotes with '\''
 * for a quote) into out (len bytes), *p moved past it: 0, or -1 when
 * what is there is no such word.
 */
static int
setup_read_word(const char **p, char *out, size_t len)
{
	static const char bare[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_/.,:+-=@%";
	const char *s = *p;
	size_t n = 0;

	while (*s != '\0' && *s != ' ') {
		if (*s == '\'') {
			for (s++; *s != '\''; s++) {
				if (*s == '\0' || n + 1 >= len)
					return -1;
				out[n++] = *s;
			}
			s++;
			/* '\'' : a quote between two quoted parts. */
			if (s[0] == '\\' && s[1] == '\'') {
				if (n + 1 >= len)
					return -1;
				out[n++] = '\'';
				s += 2;
			}
			continue;
		}
		if (strchr(bare, *s) == NULL || n + 1 >= len)
			return -1;
		out[n++] = *s++;
	}
	if (n == 0)
		return -1;
	out[n] = '\0';
	*p = s;
	return 0;
}

/*
 * Whether a hook handler is papo's: its command is of the form papo
 * setup writes (setup_hook_group), "[PAPO_HOME=WORD ]PROGRAM hook
 * [NAME]", PROGRAM a binary named papo wherever it is, and nothing else:
 * a command of the user's that merely ends in "papo hook" ("docker exec
 * box papo hook", "ssh host papo hook") is the user's, and is left
 * alone, by setup and by --remove.
 */
static int
setup_is_papo_hook(const struct setup_hookset *hk, const cJSON *h)
{
	const char *cmd = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(h, hk->command_key));
	char word[SETUP_PATH_MAX + 16];
	const char *p = cmd, *base;

	if (cmd == NULL)
		return 0;
	if (strncmp(p, "PAPO_HOME=", 10) == 0) {
		p += 10;
		if (setup_read_word(&p, word, sizeof(word)) == -1 || *p != ' ')
			return 0;
		p++;
	}
	if (setup_read_word(&p, word, sizeof(word)) == -1)
		return 0;
	base = strrchr(word, '/') != NULL ? strrchr(word, '/') + 1 : word;
	if (strcmp(base, "papo") != 0 || strncmp(p, " hook", 5) != 0)
		return 0;
	p += 5;
	if (*p == '\0')
		return 1;
	/* A harness's name after "hook": lower case letters and '-'. */
	if (*p++ != ' ' || *p == '\0')
		return 0;
	while (islower((unsigned char)*p) || *p == '-')
		p++;
	return *p == '\0';
}

/* The matcher group with papo's hook (or in a flat event the hook
 * alone): "PAPO_HOME='...' /abs/papo hook [NAME]"; on the stop event,
 * with the time it may wait (and in Claude Code run aside) to wake the
 * session when a message comes. */
static cJSON *
setup_hook_group(const struct setup *s, int stop)
{
	const struct setup_hookset *hk = s->c->hooks;
	cJSON *h = cJSON_CreateObject(), *g = NULL, *hooks;
	char *cmd = NULL;
	size_t n;
	FILE *m;

	if (h == NULL || (m = open_memstream(&cmd, &n)) == NULL)
		goto fail;
	if (s->papo_home[0] != '\0') {
		fputs("PAPO_HOME=", m);
		setup_shell_word(m, s->papo_home, 1);
		fputc(' ', m);
	}
	setup_shell_word(m, s->exe, 0);
	fputs(" hook", m);
	if (hk->arg != NULL)
		fprintf(m, " %s", hk->arg);
	if (fclose(m) != 0 ||
	    cJSON_AddStringToObject(h, "type", "command") == NULL ||
	    cJSON_AddStringToObject(h, hk->command_key, cmd) == NULL ||
	    (stop && hk->async &&
	    cJSON_AddTrueToObject(h, "asyncRewake") == NULL) ||
	    (stop && cJSON_AddNumberToObject(h, hk->timeout_key,
	    (double)hk->timeout) == NULL))
		goto fail;
	free(cmd);
	if (hk->flat)
		return h;
	if ((g = cJSON_CreateObject()) == NULL ||
	    (hooks = cJSON_AddArrayToObject(g, "hooks")) == NULL)
		goto fail;
	cJSON_AddItemToArray(hooks, h);
	return g;
fail:
	free(cmd);
	cJSON_Delete(h);
	cJSON_Delete(g);
	return NULL;
}

/* How many of an event's hook handlers are papo's; *mine is the matcher
 * group of the last (in a flat event, the handler). */
static int
setup_papo_hooks(const struct setup_hookset *hk, const cJSON *event,
    const cJSON **mine)
{
	const cJSON *g, *h;
	int n = 0;

	cJSON_ArrayForEach(g, event) {
		if (hk->flat) {
			if (setup_is_papo_hook(hk, g)) {
				n++;
				*mine = g;
			}
			continue;
		}
		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(g, "hooks"))
			if (setup_is_papo_hook(hk, h)) {
				n++;
				*mine = g;
			}
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
setup_hook_event(const struct setup_hookset *hk, const cJSON *old,
    cJSON *group, cJSON **out)
{
	const cJSON *mine = NULL;
	cJSON *arr, *g, *gnext, *hooks, *k, *knext;
	int n;

	*out = NULL;
	if (group != NULL && setup_papo_hooks(hk, old, &mine) == 1 &&
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
		if (hk->flat) {
			if (setup_is_papo_hook(hk, g))
				cJSON_Delete(cJSON_DetachItemViaPointer(arr, g));
			continue;
		}
		hooks = cJSON_GetObjectItemCaseSensitive(g, "hooks");
		if (!cJSON_IsArray(hooks))
			continue;
		n = 0;
		for (k = hooks->child; k != NULL; k = knext) {
			knext = k->next;
			if (setup_is_papo_hook(hk, k)) {
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
 * The harness's hooks: each context event, and the stop event (over
 * HTTP only where stop_http says so), holding papo's group once;
 * --remove takes them out.  The lines speak of papo's hook, not of the
 * event's whole array.
 */
int
setup_hooks(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f)
{
	const struct setup_hookset *hk = s->c->hooks;
	const char *events[4];
	char key[SETUP_KEY_MAX], *show;
	const cJSON *old, *mine = NULL;
	cJSON *group, *event;
	size_t len, nev = 0;
	int said, had;

	for (size_t i = 0; i < 3 && hk->context[i] != NULL; i++)
		events[nev++] = hk->context[i];
	events[nev++] = hk->stop;
	/* A file of papo's own says its version first. */
	if (hk->version > 0 && !s->remove && sj_set(err, f, "version",
	    cJSON_CreateNumber(hk->version)) == -1)
		return -1;
	for (size_t i = 0; i < nev; i++) {
		int stop = i == nev - 1;
		int want = !s->remove && (!stop || !hk->stop_http || s->http);

		snprintf(key, sizeof(key), "hooks.%s", events[i]);
		old = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(f->doc, "hooks"), events[i]);
		if (old != NULL && !cJSON_IsArray(old)) {
			snprintf(err, PAPO_ERR_LEN, "%s: \"%s\" is not an array: "
			    "the file was left as it is", f->path, key);
			return -1;
		}
		/* Setting up over stdio says nothing of a stop hook papo
		 * never had; one from --http is taken out. */
		if ((had = setup_papo_hooks(hk, old, &mine)) == 0 && !want) {
			if (s->remove)
				setup_say(s, f->path, key, "papo's hook",
				    SAID_ABSENT, NULL);
			continue;
		}
		group = want ? setup_hook_group(s, stop) : NULL;
		show = group != NULL ? sj_print(group, &len) : NULL;
		if (want && show == NULL) {
			cJSON_Delete(group);
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			return -1;
		}
		if (setup_hook_event(hk, old, group, &event) == -1) {
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
	/* ... and once it holds no hook, it is left empty, so removed. */
	if (hk->version > 0 && s->remove &&
	    cJSON_GetObjectItemCaseSensitive(f->doc, "hooks") == NULL &&
	    sj_set(err, f, "version", NULL) == -1)
		return -1;
	return 0;
}

/*
 * crossSessionInbound: set to "accept" with --accept-inbound; with
 * --remove too, taken out again when it is "accept".  Without the flag
 * it is never touched, only explained.
 */
int
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
