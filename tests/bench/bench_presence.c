/*
 * bench_presence.c: presence across a room, as /api/events streams see
 * it (bigroom.sh runs it).
 *
 *   bench_presence watch SECONDS URL1 [URL...]
 *	opens /api/events?since=now on every member, prints "ready" once
 *	every stream has answered, then for SECONDS prints a line for each
 *	presence event any stream carries:
 *	    WALL_NS STREAM online|offline NAME
 *	WALL_NS is the wall clock (ns since 1970, as `date +%s%N`) when the
 *	event's bytes came, STREAM the URL's index from 1.  A line "stop"
 *	on standard input ends the watch before SECONDS.
 *
 * The script reads the lines: a member shown offline while it runs is a
 * line it counts, and the last "offline" of a stopped member on every
 * survivor's stream is when the room knew.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/bench/bench.h"

struct stream {
	struct bench_stream st;
	size_t index;              /* from 1, as the URL's place */
	int answered;              /* its headers came */
};

static void
on_event(struct bench_sse *r, const char *event, const char *data, uint64_t t)
{
	struct stream *s = r->arg;
	cJSON *o, *name, *on;

	if (strcmp(event, "presence") != 0)
		return;
	o = cJSON_Parse(data);
	name = cJSON_GetObjectItemCaseSensitive(o, "name");
	on = cJSON_GetObjectItemCaseSensitive(o, "online");
	if (cJSON_IsString(name) && cJSON_IsBool(on))
		printf("%llu %zu %s %s\n", (unsigned long long)(bench_wall_ns() -
		    (bench_now_ns() - t)), s->index,
		    cJSON_IsTrue(on) ? "online" : "offline", name->valuestring);
	cJSON_Delete(o);
}

/* The end of the headers (a blank line) means the stream is open. */
static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct stream *s = arg;

	if (size * n <= 2 && (p[0] == '\r' || p[0] == '\n'))
		s->answered = 1;
	return size * n;
}

static void
stream_open(CURLM *m, struct stream *s, const char *base, size_t index)
{
	char url[256];

	/* Only what comes from now on: no replay of the ring. */
	snprintf(url, sizeof(url), "%s/api/events?since=now", base);
	s->index = index;
	bench_stream_open(m, &s->st, url, on_event, s);
	curl_easy_setopt(s->st.h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(s->st.h, CURLOPT_HEADERDATA, s);
}

/* A line "stop" on standard input ends the watch; its end does not (a
 * script may give none). */
static int
told_to_stop(void)
{
	static int closed;
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char line[64];

	if (closed || poll(&p, 1, 0) != 1)
		return 0;
	if (read(0, line, sizeof(line) - 1) <= 0) {
		closed = 1;
		return 0;
	}
	return strncmp(line, "stop", 4) == 0;
}

static int
cmd_watch(int argc, char **argv)
{
	long seconds = argc > 0 ? atol(argv[0]) : 0;
	size_t n = argc > 1 ? (size_t)argc - 1 : 0;
	struct stream *ss;
	int ready = 0, running, left;
	uint64_t t0 = 0;
	CURLMsg *msg;
	CURLM *m;

	if (seconds < 1 || n < 1)
		bench_die("usage: bench_presence watch SECONDS URL1 [URL...]");
	bench_raise_nofile();
	if ((m = curl_multi_init()) == NULL || (ss = calloc(n, sizeof(*ss))) == NULL)
		bench_die("out of memory");
	for (size_t i = 0; i < n; i++)
		stream_open(m, &ss[i], argv[i + 1], i + 1);
	for (;;) {
		curl_multi_poll(m, NULL, 0, 100, NULL);
		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)) != NULL)
			if (msg->msg == CURLMSG_DONE)
				bench_die("an event stream ended: %s",
				    curl_easy_strerror(msg->data.result));
		if (!ready) {
			size_t open = 0;

			for (size_t i = 0; i < n; i++)
				open += (size_t)ss[i].answered;
			if (open < n)
				continue;
			ready = 1;
			t0 = bench_now_ns();
			printf("ready\n");
		}
		fflush(stdout);
		if (bench_now_ns() - t0 > (uint64_t)seconds * 1000000000u ||
		    told_to_stop())
			break;
	}
	for (size_t i = 0; i < n; i++)
		bench_stream_close(m, &ss[i].st);
	free(ss);
	curl_multi_cleanup(m);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc < 2 || strcmp(argv[1], "watch") != 0)
		bench_die("usage: bench_presence watch SECONDS URL1 [URL...]");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmd_watch(argc - 2, argv + 2);
	curl_global_cleanup();
	return rc;
}
