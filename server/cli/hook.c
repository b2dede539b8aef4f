/*
 * hook.c: "papo hook" (hook.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "server/cli/client.h"
#include "server/cli/hook.h"

#define HOOK_INPUT_MAX (1024 * 1024)   /* bytes of a hook's event */
#define HOOK_AWAY_S 120                /* no daemon this long: give up */

/* How a harness's stop hook makes the session go on with a prompt. */
enum hook_go {
	HOOK_GO_EXIT2,          /* exit 2, the prompt on stderr */
	HOOK_GO_BLOCK,          /* {"decision":"block","reason":PROMPT} */
};

/*
 * A harness whose hooks run 'papo hook NAME' (docs/MCP.md, "Waking an
 * idle agent"): the event at the end of a turn, after which the agent is
 * idle; the events at whose hook a line for the model may be added
 * (hookSpecificOutput.additionalContext); how the stop hook makes the
 * session go on; and how a run that ends after its turn (claude -p,
 * codex exec, gemini -p, ...) is told from an interactive session: an
 * environment variable the harness sets (to batch_val, or to anything
 * when NULL), or "interactive": false in the event (papo's own opencode
 * plugin says so).
 */
struct hook_harness {
	const char *name;
	const char *stop;
	const char *context[3];
	enum hook_go go;
	const char *batch_env;
	const char *batch_val;
};

static const struct hook_harness hook_harnesses[] = {
	{ "claude-code", "Stop", { "SessionStart", "UserPromptSubmit" },
	  HOOK_GO_EXIT2, "CLAUDE_CODE_ENTRYPOINT", "sdk-cli" },
	{ "codex", "Stop", { "SessionStart", "UserPromptSubmit" },
	  HOOK_GO_EXIT2, NULL, NULL },
	{ "gemini", "AfterAgent", { "SessionStart", "BeforeAgent" },
	  HOOK_GO_EXIT2, NULL, NULL },
	{ "qwen", "Stop", { "SessionStart", "UserPromptSubmit" },
	  HOOK_GO_EXIT2, NULL, NULL },
	{ "copilot", "agentStop", { NULL },
	  HOOK_GO_BLOCK, NULL, NULL },
	{ "opencode", "session.idle", { NULL },
	  HOOK_GO_EXIT2, NULL, NULL },
};

#define HOOK_NHARNESSES (sizeof(hook_harnesses) / sizeof(hook_harnesses[0]))

/* The hook's event from stdin, or NULL. */
static cJSON *
hook_input(void)
{
	char *buf = malloc(HOOK_INPUT_MAX + 1);
	size_t len = 0;
	ssize_t n;
	cJSON *o;

	if (buf == NULL)
		return NULL;
	while (len < HOOK_INPUT_MAX && (n = read(STDIN_FILENO, buf + len,
	    HOOK_INPUT_MAX - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	o = cJSON_Parse(buf);
	free(buf);
	return o;
}

/* GET /api/wake with query q: the answer's JSON, or NULL (why on err). */
static cJSON *
hook_ask(char err[PAPO_ERR_LEN], const char *home, const char *agent,
    const char *q)
{
	struct client c;
	char path[512];
	char *out = NULL;
	long status = 0;
	cJSON *o = NULL;

	if (client_open(err, home, &c) == -1)
		return NULL;
	snprintf(path, sizeof(path), "/api/wake?%s%s%s", q, agent != NULL ?
	    "&agent=" : "", agent != NULL ? agent : "");
	if (client_call(err, &c, path, NULL, &status, &out) == 0) {
		if (status == 200)
			o = cJSON_Parse(out);
		else
			snprintf(err, PAPO_ERR_LEN, "papo serve answered HTTP "
			    "%ld: %.200s", status, out != NULL ? out : "");
	}
	free(out);
	client_close(&c);
	return o;
}

/* Whether pid is a papo hook still (a pid file outlives its process,
 * and the pid may now be another program's). */
static int
hook_is_ours(long pid)
{
	char path[64], cmd[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	cmd[n] = '\0';
	/* argv[0] then argv[1], NUL-separated: ".../papo" "hook". */
	return strstr(cmd, "papo") != NULL && strlen(cmd) + 1 < (size_t)n &&
	    strcmp(cmd + strlen(cmd) + 1, "hook") == 0;
}

/*
 * One Stop hook per session waits: a new turn's ends the last one's
 * (whose turn is over), so one burst wakes the session once.  The pid
 * file is $PAPO_HOME/hooks/SESSION.pid.
 */
static void
hook_claim(const char *home, const char *session)
{
	char dir[4096], path[4200], buf[32];
	long old;
	ssize_t n;
	int fd;

	if (session == NULL || session[0] == '\0' || strlen(session) > 128 ||
	    strspn(session, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-_") != strlen(session))
		return;
	snprintf(dir, sizeof(dir), "%s/hooks", home);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return;
	snprintf(path, sizeof(path), "%s/%s.pid", dir, session);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return;
	if ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		if ((old = strtol(buf, NULL, 10)) > 1 && old != (long)getpid() &&
		    hook_is_ours(old))
			kill((pid_t)old, SIGTERM);
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) == n)
		(void)0;
	close(fd);
}

/* Whether the run ends after its turn (hook_harness). */
static int
hook_batch(const struct hook_harness *h, const cJSON *in)
{
	const char *e = h->batch_env != NULL ? getenv(h->batch_env) : NULL;

	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(in, "interactive")))
		return 1;
	return e != NULL && (h->batch_val == NULL || strcmp(e, h->batch_val) ==
	    0);
}

/* A string of the event under one of the names harnesses give it. */
static const char *
hook_field(const cJSON *in, const char *a, const char *b)
{
	const char *v = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(in, a));

	return v != NULL ? v : cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(in, b));
}

/* The stop hook's answer: the prompt the session goes on with. */
static int
hook_go(const struct hook_harness *h, const char *text)
{
	cJSON *o;
	char *s;

	if (h->go == HOOK_GO_EXIT2) {
		fprintf(stderr, "%s\n", text);
		return 2;
	}
	if ((o = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(o, "decision", "block") == NULL ||
	    cJSON_AddStringToObject(o, "reason", text) == NULL ||
	    (s = cJSON_PrintUnformatted(o)) == NULL) {
		cJSON_Delete(o);
		return 0;
	}
	printf("%s\n", s);
	cJSON_free(s);
	cJSON_Delete(o);
	return 0;
}

/* A context event's hook: what waits, as a line for the model; nothing
 * when nothing waits. */
static void
hook_context(const char *home, const char *agent, const char *event)
{
	char err[PAPO_ERR_LEN];
	cJSON *o, *out, *h;
	const char *text;
	char *s;

	if ((o = hook_ask(err, home, agent, "timeout_s=0")) == NULL)
		fprintf(stderr, "papo hook: %s\n", err);
	if ((text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "text"))) != NULL && (out = cJSON_CreateObject()) != NULL) {
		h = cJSON_AddObjectToObject(out, "hookSpecificOutput");
		cJSON_AddStringToObject(h, "hookEventName", event);
		cJSON_AddStringToObject(h, "additionalContext", text);
		if ((s = cJSON_PrintUnformatted(out)) != NULL)
			printf("%s\n", s);
		cJSON_free(s);
		cJSON_Delete(out);
	}
	cJSON_Delete(o);
}

/*
 * The stop hook: in a run that ends after its turn, one look past the
 * idle grace wakes it for what came during the turn, and then it may
 * end; else it waits until the agent needs waking (a daemon restarting
 * is waited for, one gone for good is not).
 */
static int
hook_stop(const struct hook_harness *h, const char *home, const char *agent,
    int batch)
{
	char err[PAPO_ERR_LEN];
	const char *text;
	time_t away = 0;
	cJSON *o;
	int rc = 0, woke = 0;

	while (!woke) {
		/* 25 s: within client.c's 30 s for an answer. */
		o = hook_ask(err, home, agent, batch ? "by=hook&timeout_s=2" :
		    "by=hook&timeout_s=25");
		if (o == NULL && !batch) {
			if (away == 0)
				away = time(NULL);
			else if (time(NULL) - away > HOOK_AWAY_S) {
				fprintf(stderr, "papo hook: %s\n", err);
				break;
			}
			sleep(1);
			continue;
		}
		away = 0;
		text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
		    "text"));
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "wake")) &&
		    text != NULL) {
			rc = hook_go(h, text);
			woke = 1;
		}
		cJSON_Delete(o);
		if (batch)
			break;
	}
	return rc;
}

int
hook_run(const char *home, const char *agent, const char *harness)
{
	const struct hook_harness *h = NULL;
	cJSON *in;
	const char *event;
	int rc = 0;

	for (size_t i = 0; i < HOOK_NHARNESSES; i++)
		if (strcmp(harness != NULL ? harness : "claude-code",
		    hook_harnesses[i].name) == 0)
			h = &hook_harnesses[i];
	if (h == NULL) {
		fprintf(stderr, "papo hook: no harness named '%s' (", harness);
		for (size_t i = 0; i < HOOK_NHARNESSES; i++)
			fprintf(stderr, "%s%s", i > 0 ? ", " : "",
			    hook_harnesses[i].name);
		fprintf(stderr, ")\n");
		return 0;
	}
	in = hook_input();
	event = hook_field(in, "hook_event_name", "hookEventName");
	if (event == NULL)
		event = "";
	for (size_t i = 0; i < 3 && h->context[i] != NULL; i++)
		if (strcmp(event, h->context[i]) == 0)
			hook_context(home, agent, event);
	if (strcmp(event, h->stop) == 0) {
		int batch = hook_batch(h, in);

		if (!batch)
			hook_claim(home, hook_field(in, "session_id",
			    "sessionId"));
		rc = hook_stop(h, home, agent, batch);
	}
	cJSON_Delete(in);
	return rc;
}
