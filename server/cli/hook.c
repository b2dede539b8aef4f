/*
 * hook.c: "papo hook [HARNESS]" (hook.h): one table of the harnesses
 * whose hooks papo setup writes, and one way of waking them, the
 * daemon's /api/wake.
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

#include "lib/os.h"
#include "server/cli/client.h"
#include "server/cli/hook.h"

#define HOOK_INPUT_MAX (1024 * 1024)   /* bytes of a hook's event */
#define HOOK_AWAY_S 120                /* no daemon this long: give up */
#define HOOK_TAIL_MAX 65536            /* transcript bytes read per look */
#define HOOK_PATH_MAX 4352
#define HOOK_TOLD_S 10                 /* a line told again this soon: once */
#define HOOK_WAKE_MARK "Call papo's wait tool" /* in every wake's line
                                        * (mcp_wake.c) */

/* How a stop hook makes the session go on with a prompt. */
enum hook_go {
	HOOK_GO_EXIT2,          /* exit 2, the prompt on stderr */
	HOOK_GO_BLOCK,          /* {"decision":"block","reason":PROMPT} */
};

/* How a context hook hands the model a line. */
enum hook_ctx {
	HOOK_CTX_SPECIFIC,      /* {"hookSpecificOutput":{"hookEventName",
	                         * "additionalContext"}} */
	HOOK_CTX_PLAIN,         /* {"additionalContext": TEXT} */
};

/*
 * A harness whose hooks run 'papo hook NAME' (docs/MCP.md, "Waking an
 * idle agent"; what each field holds was seen with the real CLI,
 * tests/agents/FINDINGS-*.md).  stop: the event at the end of a turn,
 * after which the agent is idle; context: the events whose hook may add
 * a line for the model; the event's name is its hook_event_name, but
 * for Copilot CLI, whose events carry no name: there the stop event is
 * the one with stop_key.  A run that ends after its turn (claude -p,
 * codex exec, gemini -p, ...) is told from an interactive session by
 * the first of: "interactive": false in the event (papo's opencode
 * plugin); batch_env set (to batch_val when not NULL); live_env not set;
 * one of batch_args in the harness's own command line (the hook's
 * parent, as the harnesses exec a hook's simple command); with
 * batch_notty, the harness's stdin or stdout not a terminal;
 * batch_transcript in the head of the session's transcript
 * (transcript_path: Codex says there which front end runs it).  max_blocks:
 * the stop hooks in a row whose prompt the harness heeds (0: no cap);
 * max_wait_s: how long the harness heeds a waiting stop hook at most,
 * whatever its timeout (0: as long as it says; Qwen Code gives up on a
 * hook after 60 s, and a wake after that is lost on it).
 * moved_on: what the transcript (transcript_path) gets when the person
 * takes the session back while the stop hook waits (a prompt, a
 * cancel), on which the hook lets go unheard.
 */
struct hook_harness {
	const char *name;
	const char *stop;
	const char *context[3];
	const char *stop_key;
	enum hook_go go;
	enum hook_ctx ctx;
	const char *batch_env;
	const char *batch_val;
	const char *live_env;
	const char *batch_args[4];
	int batch_notty;
	const char *batch_transcript;
	int max_blocks;
	int max_wait_s;
	const char *moved_on[3];
};

static const struct hook_harness hook_harnesses[] = {
	{ .name = "claude-code", .stop = "Stop",
	  .context = { "SessionStart", "UserPromptSubmit" },
	  .go = HOOK_GO_EXIT2, .ctx = HOOK_CTX_SPECIFIC,
	  .batch_env = "CLAUDE_CODE_ENTRYPOINT", .batch_val = "sdk-cli" },
	{ .name = "codex", .stop = "Stop",
	  .context = { "SessionStart", "UserPromptSubmit" },
	  .go = HOOK_GO_EXIT2, .ctx = HOOK_CTX_SPECIFIC,
	  .batch_transcript = "\"originator\":\"codex_exec\"" },
	{ .name = "gemini", .stop = "AfterAgent",
	  .context = { "SessionStart", "BeforeAgent" },
	  .go = HOOK_GO_BLOCK, .ctx = HOOK_CTX_SPECIFIC,
	  .batch_args = { "-p", "--prompt" }, .batch_notty = 1,
	  .moved_on = { "\"type\":\"user\"", "Request cancelled." } },
	{ .name = "qwen", .stop = "Stop",
	  .context = { "SessionStart", "UserPromptSubmit" },
	  .go = HOOK_GO_EXIT2, .ctx = HOOK_CTX_SPECIFIC,
	  .batch_args = { "-p", "--prompt" }, .batch_notty = 1,
	  .max_wait_s = 50 },   /* asked every 5 s: gone by 55 s */
	{ .name = "copilot", .stop = "agentStop",
	  .context = { "sessionStart", "userPromptSubmitted" },
	  .stop_key = "stopReason", .go = HOOK_GO_BLOCK, .ctx = HOOK_CTX_PLAIN,
	  .live_env = "COPILOT_LOADER_PID", .max_blocks = 8 },
	{ .name = "opencode", .stop = "session.idle",
	  .go = HOOK_GO_EXIT2 },
};

#define HOOK_NHARNESSES (sizeof(hook_harnesses) / sizeof(hook_harnesses[0]))

/* One stop hook's run. */
struct hook_stop {
	const struct hook_harness *h;
	const char *home, *agent;
	int batch;
	char pidfile[HOOK_PATH_MAX]; /* "" when the session has no usable id */
	pid_t parent;            /* the harness: when it goes, the hook goes */
	int blocks;              /* stop hooks in a row that woke it */
	const char *transcript;
	off_t seen;              /* the transcript's size when it began */
};

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
	char cmd[4096];
	size_t n = os_proc_cmdline(pid, cmd, sizeof(cmd));

	/* argv[0] then argv[1], NUL-separated: ".../papo" "hook". */
	return n > 0 && strstr(cmd, "papo") != NULL && strlen(cmd) + 1 < n &&
	    strcmp(cmd + strlen(cmd) + 1, "hook") == 0;
}

/* The session's file NAME.ext under $PAPO_HOME/hooks, in out; "" when
 * its id is not one to name a file by. */
static void
hook_session_file(char out[HOOK_PATH_MAX], const char *home,
    const char *session, const char *ext)
{
	char dir[HOOK_PATH_MAX - 160];

	out[0] = '\0';
	if (session == NULL || session[0] == '\0' || strlen(session) > 128 ||
	    strspn(session, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-_") != strlen(session))
		return;
	snprintf(dir, sizeof(dir), "%s/hooks", home);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return;
	snprintf(out, HOOK_PATH_MAX, "%s/%s.%s", dir, session, ext);
}

/* The session file's "PID BLOCKS" (0 0 when it holds none), and its
 * new content. */
static void
hook_state(int fd, long *pid, int *blocks)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	if (sscanf(buf, "%ld %d", pid, blocks) < 2)
		*pid = 0, *blocks = 0;
}

static void
hook_state_put(int fd, long pid, int blocks)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%ld %d\n", pid, blocks);

	if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, (size_t)n, 0) == n)
		(void)0;
}

/*
 * One stop hook per session waits: a new turn's ends the last one's
 * (whose turn is over), so one burst wakes the session once.  The
 * session's file holds the waiting hook's pid and how many stop hooks
 * in a row woke it (reset by a turn the person started: again false).
 */
static void
hook_claim(struct hook_stop *st, int again)
{
	long old;
	int fd;

	if (st->pidfile[0] == '\0' || (fd = open(st->pidfile, O_RDWR |
	    O_CREAT | O_CLOEXEC, 0600)) == -1)
		return;
	hook_state(fd, &old, &st->blocks);
	if (old > 1 && old != (long)getpid() && hook_is_ours(old))
		kill((pid_t)old, SIGTERM);
	if (!again)
		st->blocks = 0;
	hook_state_put(fd, (long)getpid(), st->blocks);
	close(fd);
}

/* A wake given: one more in a row, when the file is still this hook's. */
static void
hook_count(const struct hook_stop *st)
{
	long pid;
	int fd, blocks;

	if (st->pidfile[0] == '\0' || (fd = open(st->pidfile, O_RDWR |
	    O_CLOEXEC)) == -1)
		return;
	hook_state(fd, &pid, &blocks);
	if (pid == (long)getpid())
		hook_state_put(fd, pid, blocks + 1);
	close(fd);
}

/* Whether the harness's own command line (the hook's parent's) has one
 * of args as an argument of its own. */
static int
hook_parent_has(const char *const args[4])
{
	char cmd[65536];
	size_t n;

	if (args[0] == NULL || (n = os_proc_cmdline((long)getppid(), cmd,
	    sizeof(cmd))) == 0)
		return 0;
	for (const char *a = cmd + strlen(cmd) + 1; a < cmd + n;
	    a += strlen(a) + 1)
		for (size_t i = 0; i < 4 && args[i] != NULL; i++) {
			size_t k = strlen(args[i]);

			if (strncmp(a, args[i], k) == 0 && (a[k] == '\0' ||
			    (a[k] == '=' && args[i][1] == '-')))
				return 1;
		}
	return 0;
}

/* Whether the harness's stdin or stdout (the hook's parent's) is not a
 * terminal. */
static int
hook_parent_notty(void)
{
	char to[256];

	for (int fd = 0; fd <= 1; fd++) {
		if (os_proc_fd_path((long)getppid(), fd, to, sizeof(to)) == -1)
			return 0;       /* not ours to read: tell nothing */
		if (strncmp(to, "/dev/pts/", 9) != 0 &&
		    strncmp(to, "/dev/tty", 8) != 0)
			return 1;
	}
	return 0;
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

/* Whether the head of the transcript at path holds what. */
static int
hook_transcript_has(const char *path, const char *what)
{
	char head[4097];
	ssize_t n;
	int fd;

	if (path == NULL || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	head[n] = '\0';
	return strstr(head, what) != NULL;
}

/* Whether the run ends after its turn (struct hook_harness). */
static int
hook_batch(const struct hook_harness *h, const cJSON *in)
{
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(in, "interactive");
	const char *e;

	if (cJSON_IsBool(i))
		return cJSON_IsFalse(i);
	if (h->batch_transcript != NULL)
		return hook_transcript_has(hook_field(in, "transcript_path",
		    "transcriptPath"), h->batch_transcript);
	if (h->batch_env != NULL && (e = getenv(h->batch_env)) != NULL &&
	    (h->batch_val == NULL || strcmp(e, h->batch_val) == 0))
		return 1;
	if (h->live_env != NULL)
		return getenv(h->live_env) == NULL;
	return hook_parent_has(h->batch_args) ||
	    (h->batch_notty && hook_parent_notty());
}

/* Prints o as one line of JSON on stdout, and frees it. */
static void
hook_print(cJSON *o)
{
	char *s = o != NULL ? cJSON_PrintUnformatted(o) : NULL;

	if (s != NULL)
		printf("%s\n", s);
	cJSON_free(s);
	cJSON_Delete(o);
}

/* The stop hook's answer: the prompt the session goes on with. */
static int
hook_go(const struct hook_harness *h, const char *text)
{
	cJSON *o;

	if (h->go == HOOK_GO_EXIT2) {
		fprintf(stderr, "%s\n", text);
		return 2;
	}
	if ((o = cJSON_CreateObject()) != NULL) {
		cJSON_AddStringToObject(o, "decision", "block");
		cJSON_AddStringToObject(o, "reason", text);
	}
	hook_print(o);
	return 0;
}

/*
 * Whether the session was told text in the last HOOK_TOLD_S seconds
 * (two events of one prompt, as Codex's SessionStart and
 * UserPromptSubmit at the first, tell it once); else notes it told now.
 */
static int
hook_told(const char *path, const char *text)
{
	char buf[1024];
	struct stat st;
	size_t n = strlen(text);
	ssize_t got = 0;
	int fd;

	if (path[0] == '\0' || (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC,
	    0600)) == -1)
		return 0;
	if (fstat(fd, &st) == 0 && time(NULL) - st.st_mtime < HOOK_TOLD_S &&
	    n < sizeof(buf) && (got = read(fd, buf, sizeof(buf))) ==
	    (ssize_t)n && memcmp(buf, text, n) == 0) {
		close(fd);
		return 1;
	}
	if (ftruncate(fd, 0) == 0 && pwrite(fd, text, n, 0) == (ssize_t)n)
		(void)0;
	close(fd);
	return 0;
}

/* A context event's hook: what waits, as a line for the model; nothing
 * when nothing waits, or when this session was just told it. */
static void
hook_context(const struct hook_harness *h, const char *home,
    const char *agent, const char *event, const char *session)
{
	char err[PAPO_ERR_LEN], told[HOOK_PATH_MAX];
	cJSON *o, *out, *at;
	const char *text;

	if ((o = hook_ask(err, home, agent, "timeout_s=0")) == NULL)
		fprintf(stderr, "papo hook: %s\n", err);
	hook_session_file(told, home, session, "told");
	if ((text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "text"))) != NULL && !hook_told(told, text) &&
	    (out = cJSON_CreateObject()) != NULL) {
		at = out;
		if (h->ctx == HOOK_CTX_SPECIFIC) {
			at = cJSON_AddObjectToObject(out, "hookSpecificOutput");
			cJSON_AddStringToObject(at, "hookEventName", event);
		}
		cJSON_AddStringToObject(at, "additionalContext", text);
		hook_print(out);
	}
	cJSON_Delete(o);
}

/* The transcript's size, or -1. */
static off_t
hook_size(const char *path)
{
	struct stat st;

	return path != NULL && stat(path, &st) == 0 ? st.st_size : -1;
}

/* Whether the transcript got one of moved_on since the hook began: the
 * person took the session back (a prompt of theirs, a cancel). */
static int
hook_moved_on(struct hook_stop *st)
{
	char buf[HOOK_TAIL_MAX + 1];
	off_t size = hook_size(st->transcript), from = st->seen;
	ssize_t n;
	int fd, hit = 0;

	if (st->h->moved_on[0] == NULL || st->seen < 0 || size <= st->seen)
		return 0;
	if (size - from > HOOK_TAIL_MAX)
		from = size - HOOK_TAIL_MAX;
	if ((fd = open(st->transcript, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	if ((n = pread(fd, buf, (size_t)(size - from), from)) > 0) {
		buf[n] = '\0';
		for (size_t i = 0; i < 3 && st->h->moved_on[i] != NULL; i++)
			hit |= strstr(buf, st->h->moved_on[i]) != NULL;
	}
	close(fd);
	st->seen = size;
	return hit;
}

/*
 * The stop hook: in a run that ends after its turn, one look at once
 * goes on with what came during the turn and was not given, and the
 * run ends when nothing waits; else it waits until the agent needs
 * waking (a daemon restarting is waited for, one gone for good is not),
 * unless the harness would not heed one more prompt in a row, or the
 * person takes the session back meanwhile.
 */
static int
hook_stop(struct hook_stop *st)
{
	char err[PAPO_ERR_LEN];
	const char *text, *q;
	time_t away = 0, start = time(NULL);
	cJSON *o;
	int rc = 0, woke = 0;

	if (st->h->max_blocks > 0 && st->blocks >= st->h->max_blocks)
		return 0;
	/* Between two asks the hook looks whether its harness is still
	 * there (Codex leaves a hook running when its terminal closes) and,
	 * where the transcript tells, whether the person took the session
	 * back: every 5 s, and every 2 s with a transcript to watch. */
	q = st->batch ? "by=hook&timeout_s=0" : st->seen >= 0 &&
	    st->h->moved_on[0] != NULL ? "by=hook&timeout_s=2" :
	    "by=hook&timeout_s=5";
	while (!woke) {
		if (!st->batch && (hook_moved_on(st) || getppid() != st->parent ||
		    (st->h->max_wait_s > 0 && time(NULL) - start >=
		    st->h->max_wait_s)))
			break;
		if ((o = hook_ask(err, st->home, st->agent, q)) == NULL &&
		    !st->batch) {
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
		if ((st->batch || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o,
		    "wake"))) && text != NULL) {
			rc = hook_go(st->h, text);
			hook_count(st);
			woke = 1;
		}
		cJSON_Delete(o);
		if (st->batch)
			break;
	}
	return rc;
}

int
hook_run(const char *home, const char *agent, const char *harness)
{
	const struct hook_harness *h = NULL;
	struct hook_stop st;
	cJSON *in;
	const char *event, *prompt;
	int rc = 0, stop, own;

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
	if ((event = hook_field(in, "hook_event_name", "hookEventName")) ==
	    NULL)
		event = "";
	if (h->stop_key != NULL)
		stop = cJSON_GetObjectItemCaseSensitive(in, h->stop_key) != NULL;
	else
		stop = strcmp(event, h->stop) == 0;
	/* A turn that papo's own wake started (its prompt is the wake's
	 * line: Gemini CLI, Qwen Code and Copilot CLI run their prompt
	 * events for it) is told nothing more. */
	prompt = hook_field(in, "prompt", "initialPrompt");
	own = prompt != NULL && strstr(prompt, HOOK_WAKE_MARK) != NULL;
	for (size_t i = 0; !stop && !own && i < 3 && h->context[i] != NULL;
	    i++)
		if (h->stop_key != NULL || strcmp(event, h->context[i]) == 0) {
			hook_context(h, home, agent, h->context[i],
			    hook_field(in, "session_id", "sessionId"));
			break;
		}
	if (stop) {
		memset(&st, 0, sizeof(st));
		st.h = h;
		st.home = home;
		st.agent = agent;
		st.batch = hook_batch(h, in);
		st.transcript = hook_field(in, "transcript_path",
		    "transcriptPath");
		st.seen = hook_size(st.transcript);
		st.parent = getppid();
		hook_session_file(st.pidfile, home, hook_field(in, "session_id",
		    "sessionId"), "pid");
		if (!st.batch)
			hook_claim(&st, cJSON_IsTrue(
			    cJSON_GetObjectItemCaseSensitive(in,
			    "stop_hook_active")));
		rc = hook_stop(&st);
	}
	cJSON_Delete(in);
	return rc;
}
