/*
 * bench_start.c: how long a daemon took to start, as a client sees it.
 *
 *   bench_start HOME T0_NS [TIMEOUT_S [TEXT]]
 *   bench_start HOME spawn TIMEOUT_S TEXT LOG PIDFILE COMMAND...
 *
 * run.sh notes the wall clock (date +%s%N) as T0_NS, starts `papo serve`
 * in HOME in the background, and runs this at once.  With "spawn" it
 * starts COMMAND itself (stdin /dev/null, stdout and stderr appended to
 * LOG, its pid written to PIDFILE) and the clock starts just before:
 * no shell's fork, and no loading of this program's own libraries beside
 * the daemon's, inflate the figure.  It polls every
 * millisecond for HOME/serve.json, then GETs /healthz at the URL written
 * there until it answers 200, and prints the milliseconds from T0_NS to
 * each: "serve.json TAB healthz".  Doing this in one process keeps the
 * start of curl and jq (tens of ms each on a small machine) out of the
 * figure.  With TEXT it then sends TEXT (POST /api/send, with the token
 * of serve.json if any) at once and prints a third column, the ms to that
 * answer, and a fourth, its state ("queued" while no member is connected
 * yet), and a fifth, the clock's start in ns (date +%s%N's scale).
 * PAPO_TOKEN, when set, is sent as the bearer token.  Exits 1 after TIMEOUT_S (default 120) without an answer.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/bench/bench.h"

static void
nap(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

/* The "http" of serve.json once it is whole, else NULL. */
static char *
serve_url(const char *path)
{
	char text[8192], *url = NULL;
	cJSON *o, *http;
	size_t n;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	o = cJSON_Parse(text);
	http = cJSON_GetObjectItemCaseSensitive(o, "http");
	if (cJSON_IsString(http))
		url = strdup(http->valuestring);
	cJSON_Delete(o);
	return url;
}

static uint64_t t_sent;
static char state[32] = "?";

/* POST /api/send {"text": text}: notes when the answer came and its state. */
static void
send_text(CURL *h, const char *url, const char *text)
{
	const char *token = getenv("PAPO_TOKEN");
	struct bench_body b = { 0 };
	struct curl_slist *hd = NULL;
	char target[512], auth[160];
	cJSON *body = cJSON_CreateObject(), *ans, *st;
	char *json;
	long status = 0;

	cJSON_AddStringToObject(body, "text", text);
	json = cJSON_PrintUnformatted(body);
	snprintf(target, sizeof(target), "%s/api/send", url);
	hd = curl_slist_append(hd, "Content-Type: application/json");
	if (token != NULL && token[0] != '\0') {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		hd = curl_slist_append(hd, auth);
	}
	curl_easy_setopt(h, CURLOPT_URL, target);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	/* The answer waits for acks, up to the daemon's own bound (8 s). */
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	if (curl_easy_perform(h) != CURLE_OK ||
	    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK ||
	    status != 200)
		bench_die("POST %s: status %ld: %.*s", target, status,
		    (int)b.len, b.p ? b.p : "");
	t_sent = bench_wall_ns();
	ans = cJSON_ParseWithLength(b.p, b.len);
	st = cJSON_GetObjectItemCaseSensitive(ans, "state");
	if (cJSON_IsString(st))
		snprintf(state, sizeof(state), "%s", st->valuestring);
	cJSON_Delete(ans);
	curl_slist_free_all(hd);
	cJSON_Delete(body);
	free(json);
	free(b.p);
}

extern char **environ;

/* Starts argv[0] with output to log; writes its pid to pidfile. */
static void
spawn(char **argv, const char *log, const char *pidfile)
{
	posix_spawn_file_actions_t fa;
	FILE *f;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, log,
	    O_WRONLY | O_CREAT | O_APPEND, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0)
		bench_die("cannot start %s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	if ((f = fopen(pidfile, "w")) == NULL)
		bench_die("cannot write %s", pidfile);
	fprintf(f, "%ld\n", (long)pid);
	fclose(f);
}

int
main(int argc, char **argv)
{
	char path[4096], health[512];
	uint64_t t0, deadline, t_json, t_health;
	long timeout;
	char *url = NULL;
	CURL *h;

	if (argc < 3)
		bench_die("usage: bench_start HOME T0_NS [TIMEOUT_S [TEXT]], or "
		    "HOME spawn TIMEOUT_S TEXT LOG PIDFILE COMMAND...");
	if (strcmp(argv[2], "spawn") == 0) {
		if (argc < 8)
			bench_die("spawn needs TIMEOUT_S TEXT LOG PIDFILE COMMAND");
		t0 = bench_wall_ns();
		spawn(argv + 7, argv[5], argv[6]);
		argc = 5;
	} else
		t0 = strtoull(argv[2], NULL, 10);
	timeout = argc > 3 ? atol(argv[3]) : 120;
	deadline = t0 + (uint64_t)timeout * 1000000000u;
	snprintf(path, sizeof(path), "%s/serve.json", argv[1]);
	while ((url = serve_url(path)) == NULL) {
		if (bench_wall_ns() > deadline)
			bench_die("no serve.json in %s after %ld s", argv[1],
			    timeout);
		nap();
	}
	t_json = bench_wall_ns();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((h = curl_easy_init()) == NULL)
		bench_die("curl_easy_init failed");
	snprintf(health, sizeof(health), "%s/healthz", url);
	curl_easy_setopt(h, CURLOPT_URL, health);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bench_body_write);
	{
		struct bench_body b = { 0 };
		long status = 0;

		curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
		curl_easy_setopt(h, CURLOPT_TIMEOUT, 5L);
		for (;;) {
			if (curl_easy_perform(h) == CURLE_OK &&
			    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE,
			    &status) == CURLE_OK && status == 200)
				break;
			if (bench_wall_ns() > deadline)
				bench_die("%s did not answer 200 in %ld s",
				    health, timeout);
			nap();
		}
		free(b.p);
	}
	t_health = bench_wall_ns();
	if (argc > 4)
		send_text(h, url, argv[4]);
	printf("%.3f\t%.3f", (double)(t_json - t0) / 1e6,
	    (double)(t_health - t0) / 1e6);
	if (argc > 4)
		printf("\t%.3f\t%s\t%llu", (double)(t_sent - t0) / 1e6, state,
		    (unsigned long long)t0);
	printf("\n");
	curl_easy_cleanup(h);
	curl_global_cleanup();
	free(url);
	return 0;
}
