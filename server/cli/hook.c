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

/* Whether the session is claude -p's (print mode), which ends after its
 * turn: Claude Code says so in the hook's environment. */
static int
hook_print_mode(void)
{
	const char *e = getenv("CLAUDE_CODE_ENTRYPOINT");

	return e != NULL && strcmp(e, "sdk-cli") == 0;
}

int
hook_run(const char *home, const char *agent)
{
	char err[PAPO_ERR_LEN];
	cJSON *in = hook_input(), *o;
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(in, "hook_event_name");
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(in, "session_id");
	const cJSON *text;
	const char *name = cJSON_IsString(ev) ? ev->valuestring : "";
	time_t away = 0;
	int rc = 0;

	if (strcmp(name, "SessionStart") == 0 ||
	    strcmp(name, "UserPromptSubmit") == 0) {
		/* What waits, as context for the model; nothing when none. */
		if ((o = hook_ask(err, home, agent, "timeout_s=0")) == NULL)
			fprintf(stderr, "papo hook: %s\n", err);
		text = cJSON_GetObjectItemCaseSensitive(o, "text");
		if (cJSON_IsString(text)) {
			cJSON *out = cJSON_CreateObject(), *h;
			char *s;

			h = cJSON_AddObjectToObject(out, "hookSpecificOutput");
			cJSON_AddStringToObject(h, "hookEventName", name);
			cJSON_AddStringToObject(h, "additionalContext",
			    text->valuestring);
			if ((s = cJSON_PrintUnformatted(out)) != NULL)
				printf("%s\n", s);
			cJSON_free(s);
			cJSON_Delete(out);
		}
		cJSON_Delete(o);
	} else if (strcmp(name, "Stop") == 0 && hook_print_mode()) {
		/* claude -p waits for its hooks before it exits: one look,
		 * past the idle grace, wakes it for what came during the
		 * turn, and then it may end. */
		o = hook_ask(err, home, agent, "by=hook&timeout_s=2");
		text = cJSON_GetObjectItemCaseSensitive(o, "text");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "wake")) &&
		    cJSON_IsString(text)) {
			fprintf(stderr, "%s\n", text->valuestring);
			rc = 2;
		}
		cJSON_Delete(o);
	} else if (strcmp(name, "Stop") == 0) {
		hook_claim(home, cJSON_IsString(sid) ? sid->valuestring : NULL);
		/* Until the agent needs waking; a daemon restarting is
		 * waited for, one gone for good is not. */
		for (;;) {
			/* 25 s: within client.c's 30 s for an answer. */
			o = hook_ask(err, home, agent, "by=hook&timeout_s=25");
			if (o == NULL) {
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
			text = cJSON_GetObjectItemCaseSensitive(o, "text");
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o,
			    "wake")) && cJSON_IsString(text)) {
				fprintf(stderr, "%s\n", text->valuestring);
				cJSON_Delete(o);
				rc = 2;
				break;
			}
			cJSON_Delete(o);
		}
	}
	cJSON_Delete(in);
	return rc;
}
