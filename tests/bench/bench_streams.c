/*
 * bench_streams.c: many open notification streams on one daemon.
 *
 *   bench_streams mcp|api URL OTHER_URL PID STREAMS IDLE_S [MESSAGES]
 *
 * mcp: STREAMS MCP sessions on the daemon at URL (base URL, pid PID),
 * each with its GET /mcp stream; api: STREAMS GET /api/events streams.
 * Once every stream has its first event (the priming event, or retry:),
 * it reads the daemon's memory and threads, then its CPU time and
 * context switches over IDLE_S seconds of idleness.  Then MESSAGES times
 * it sends a message from the member at OTHER_URL (POST /api/send) and
 * times until every stream has it: the first, the median and the last
 * stream.  The client is one thread with one curl_multi on epoll, so the
 * last stream's time includes the client reading the 999 before it.
 *
 * Output: bench_print and bench_value lines; progress on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/bench/bench.h"

#define OPENING_MAX 48     /* connections being set up at once: the
                            * daemon's listen backlog is 64 */

struct stream {
	CURL *h;
	struct curl_slist *hdr;
	struct bench_sse sse;
	struct run *run;
	uint64_t got;             /* when the awaited message came, or 0 */
	char session[64];
};

struct run {
	int mcp;
	char want[96];            /* the text awaited */
	size_t ngot;
};

static void
stream_event(struct bench_sse *r, const char *event, const char *data,
    uint64_t t)
{
	struct stream *s = r->arg;
	struct run *run = s->run;
	cJSON *o, *text;

	if (r->events == 1 || s->got != 0 || run->want[0] == '\0')
		return;           /* priming, or nothing awaited */
	if (!run->mcp && strcmp(event, "message") != 0)
		return;
	o = cJSON_Parse(data);
	if (run->mcp)
		text = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(o, "params"), "content");
	else
		text = cJSON_GetObjectItemCaseSensitive(o, "text");
	if (cJSON_IsString(text) && strcmp(text->valuestring, run->want) == 0) {
		s->got = t;
		run->ngot++;
	}
	cJSON_Delete(o);
}

/* One round of the multi loop; dies when a stream ends. */
static void
pump(struct bench_multi *bm, CURL *post, int *post_done, int wait_ms)
{
	CURLMsg *msg;
	int left;

	bench_multi_pump(bm, wait_ms);
	while ((msg = curl_multi_info_read(bm->m, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		if (post != NULL && msg->easy_handle == post) {
			if (msg->data.result != CURLE_OK)
				bench_die("send: %s",
				    curl_easy_strerror(msg->data.result));
			*post_done = 1;
		} else {
			long st = 0;

			curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_RESPONSE_CODE, &st);
			bench_die("a stream ended: %s (HTTP %ld)",
			    curl_easy_strerror(msg->data.result), st);
		}
	}
}

static void
idle_for(struct bench_multi *m, double seconds)
{
	uint64_t end = bench_now_ns() + (uint64_t)(seconds * 1e9);

	while (bench_now_ns() < end)
		pump(m, NULL, NULL, 200);
}

static void
read_proc(pid_t pid, struct bench_proc *p)
{
	if (bench_proc_read(pid, p) == -1)
		bench_die("cannot read /proc/%ld", (long)pid);
}

int
main(int argc, char **argv)
{
	struct run run;
	struct stream *st;
	struct bench_proc p0, p1, p2, base;
	struct bench_samples last = { 0 }, first = { 0 }, mid = { 0 };
	char mcp_url[256], events_url[256], tag[32];
	const char *mode, *url, *other;
	long n, idle, msgs, limit;
	pid_t pid;
	size_t added = 0, primed = 0;
	uint64_t t0;
	struct bench_multi bm, *m = &bm;
	CURL *ka;

	if (argc < 7)
		bench_die("usage: bench_streams mcp|api URL OTHER_URL PID "
		    "STREAMS IDLE_S [MESSAGES]");
	mode = argv[1];
	url = argv[2];
	other = argv[3];
	pid = (pid_t)atol(argv[4]);
	n = atol(argv[5]);
	idle = atol(argv[6]);
	msgs = argc > 7 ? atol(argv[7]) : 5;
	if ((strcmp(mode, "mcp") != 0 && strcmp(mode, "api") != 0) || n < 1 ||
	    idle < 0 || msgs < 1)
		bench_die("usage: bench_streams mcp|api URL OTHER_URL PID "
		    "STREAMS IDLE_S [MESSAGES]");
	memset(&run, 0, sizeof(run));
	run.mcp = strcmp(mode, "mcp") == 0;
	if ((limit = bench_raise_nofile()) < n + 64)
		bench_die("%ld streams need %ld descriptors; the limit is %ld",
		    n, n + 64, limit);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	snprintf(mcp_url, sizeof(mcp_url), "%s/mcp", url);
	snprintf(events_url, sizeof(events_url), "%s/api/events", url);
	snprintf(tag, sizeof(tag), "%llx",
	    (unsigned long long)(bench_wall_ns() / 1000));
	read_proc(pid, &base);
	bench_multi_init(m);
	if ((st = calloc((size_t)n, sizeof(*st))) == NULL ||
	    (ka = curl_easy_init()) == NULL)
		bench_die("out of memory");
	bench_tls(ka);

	t0 = bench_now_ns();
	if (run.mcp)
		for (long i = 0; i < n; i++)
			bench_mcp_open(ka, mcp_url, st[i].session);
	if (run.mcp)
		bench_value("sessions initialized, one after another",
		    (double)(bench_now_ns() - t0) / 1e6, "ms");

	t0 = bench_now_ns();
	while (primed < (size_t)n) {
		while (added < (size_t)n && added - primed < OPENING_MAX) {
			struct stream *s = &st[added++];

			if ((s->h = curl_easy_init()) == NULL)
				bench_die("curl_easy_init failed");
			bench_tls(s->h);
			s->run = &run;
			s->sse.fn = stream_event;
			s->sse.arg = s;
			if (run.mcp) {
				s->hdr = bench_mcp_stream_headers(s->session);
				curl_easy_setopt(s->h, CURLOPT_URL, mcp_url);
			} else {
				s->hdr = curl_slist_append(NULL,
				    "Accept: text/event-stream");
				curl_easy_setopt(s->h, CURLOPT_URL, events_url);
			}
			curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdr);
			curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION,
			    bench_sse_write);
			curl_easy_setopt(s->h, CURLOPT_WRITEDATA, &s->sse);
			curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
			curl_multi_add_handle(m->m, s->h);
		}
		pump(m, NULL, NULL, 100);
		primed = 0;
		for (size_t i = 0; i < added; i++)
			primed += st[i].sse.events > 0;
		if (bench_now_ns() - t0 > 300000000000ull)
			bench_die("only %zu of %ld streams opened in 300 s",
			    primed, n);
	}
	bench_value("streams opened, 48 at a time",
	    (double)(bench_now_ns() - t0) / 1e6, "ms");
	fprintf(stderr, "bench_streams: %ld %s streams open\n", n, mode);

	/* Let what opening them set off settle, then watch it idle. */
	idle_for(m, 2);
	read_proc(pid, &p0);
	idle_for(m, (double)idle);
	read_proc(pid, &p1);
	bench_value("daemon RSS before the streams", (double)base.rss_kb / 1024,
	    "MB");
	bench_value("daemon RSS with the streams open",
	    (double)p1.rss_kb / 1024, "MB");
	bench_value("daemon threads", (double)p1.threads, "");
	if (idle > 0) {
		bench_value("daemon CPU while idle",
		    (p1.run_s - p0.run_s) / (double)idle * 100, "%");
		bench_value("daemon CPU ticks while idle (utime+stime)",
		    (p1.cpu_s - p0.cpu_s) * (double)sysconf(_SC_CLK_TCK), "");
		bench_value("daemon context switches while idle",
		    (double)(p1.ctxt - p0.ctxt) / (double)idle, "/s");
	}

	for (long k = -1; k < msgs; k++) {
		struct bench_samples at = { 0 };
		struct bench_body answer = { 0 };
		struct curl_slist *hdr;
		int done = 0;
		CURL *post;
		long code = 0;

		/* One unmeasured message first, to warm the paths up. */
		snprintf(run.want, sizeof(run.want), "bench fanout %s %ld", tag,
		    k);
		run.ngot = 0;
		for (long i = 0; i < n; i++)
			st[i].got = 0;
		post = bench_send_new(other, NULL, run.want, NULL, &answer, &hdr);
		t0 = bench_now_ns();
		curl_multi_add_handle(m->m, post);
		while (run.ngot < (size_t)n || !done) {
			pump(m, post, &done, 100);
			if (bench_now_ns() - t0 > 60000000000ull)
				bench_die("after 60 s %zu of %ld streams had "
				    "message %ld", run.ngot, n, k);
		}
		curl_easy_getinfo(post, CURLINFO_RESPONSE_CODE, &code);
		if (code != 200)
			bench_die("send: HTTP %ld: %s", code, answer.p);
		curl_multi_remove_handle(m->m, post);
		curl_easy_cleanup(post);
		curl_slist_free_all(hdr);
		free(answer.p);
		if (k < 0)
			continue;
		for (long i = 0; i < n; i++)
			bench_add(&at, (double)(st[i].got - t0) / 1e6);
		bench_add(&first, bench_min(&at));
		bench_add(&mid, bench_quantile(&at, 0.5));
		bench_add(&last, bench_max(&at));
		bench_samples_free(&at);
	}
	read_proc(pid, &p2);
	bench_print("fan-out: send on the other member to the first stream",
	    &first, NULL);
	bench_print("fan-out: to half of the streams", &mid, NULL);
	bench_print("fan-out: to every stream", &last, NULL);
	bench_value("daemon RSS after the messages", (double)p2.rss_kb / 1024,
	    "MB");
	bench_value("daemon RSS high-water mark", (double)p2.hwm_kb / 1024,
	    "MB");
	bench_value("daemon threads after the messages", (double)p2.threads,
	    "");

	for (long i = 0; i < n; i++) {
		curl_multi_remove_handle(m->m, st[i].h);
		curl_easy_cleanup(st[i].h);
		curl_slist_free_all(st[i].hdr);
		bench_sse_free(&st[i].sse);
		if (run.mcp)
			bench_mcp_close(ka, mcp_url, st[i].session);
	}
	curl_easy_cleanup(ka);
	bench_multi_free(m);
	free(st);
	bench_samples_free(&first);
	bench_samples_free(&mid);
	bench_samples_free(&last);
	curl_global_cleanup();
	return 0;
}
