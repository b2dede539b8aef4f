/*
 * bench_room.c: delivery across a room, as /api/events streams see it.
 *
 *   bench_room fanout MESSAGES URL1 URL2 [URL...]
 *	opens /api/events on every member but the first, then MESSAGES
 *	times sends a message on the first (POST /api/send) and times
 *	until every other member's stream has it.  Prints the time to the
 *	last member (per message) and to each member (per member and
 *	message), median and p99.
 *
 *   bench_room watch URL TEXT TIMEOUT_S
 *	opens URL's /api/events, prints "ready" once it is open, then, when
 *	a message event with exactly TEXT arrives, prints the wall-clock
 *	time (ns since 1970, as `date +%s%N`) and exits 0; exits 1 after
 *	TIMEOUT_S without it.  A TEXT of "epoch N" waits for the room event
 *	of key epoch N instead.  reach.sh times a new member's first
 *	message with it, epochs.sh a key change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tests/bench/bench.h"

struct member {
	CURL *h;
	struct curl_slist *hdr;
	struct bench_sse sse;
	const char **want;        /* the text awaited, "" for none */
	uint64_t got;
};

static void
member_event(struct bench_sse *r, const char *event, const char *data,
    uint64_t t)
{
	struct member *mb = r->arg;
	unsigned long epoch;
	cJSON *o, *text, *n;

	if (mb->got != 0 || (*mb->want)[0] == '\0')
		return;
	o = cJSON_Parse(data);
	if (sscanf(*mb->want, "epoch %lu", &epoch) == 1) {
		n = cJSON_GetObjectItemCaseSensitive(o, "epoch");
		if (strcmp(event, "room") == 0 && cJSON_IsNumber(n) &&
		    n->valuedouble == (double)epoch)
			mb->got = t;
	} else if (strcmp(event, "message") == 0) {
		text = cJSON_GetObjectItemCaseSensitive(o, "text");
		if (cJSON_IsString(text) &&
		    strcmp(text->valuestring, *mb->want) == 0)
			mb->got = t;
	}
	cJSON_Delete(o);
}

static void
member_open(CURLM *m, struct member *mb, const char *base, const char **want)
{
	char url[256];

	snprintf(url, sizeof(url), "%s/api/events", base);
	if ((mb->h = curl_easy_init()) == NULL)
		bench_die("curl_easy_init failed");
	mb->want = want;
	mb->sse.fn = member_event;
	mb->sse.arg = mb;
	mb->hdr = curl_slist_append(NULL, "Accept: text/event-stream");
	curl_easy_setopt(mb->h, CURLOPT_URL, url);
	curl_easy_setopt(mb->h, CURLOPT_HTTPHEADER, mb->hdr);
	curl_easy_setopt(mb->h, CURLOPT_WRITEFUNCTION, bench_sse_write);
	curl_easy_setopt(mb->h, CURLOPT_WRITEDATA, &mb->sse);
	curl_multi_add_handle(m, mb->h);
}

static void
member_close(CURLM *m, struct member *mb)
{
	curl_multi_remove_handle(m, mb->h);
	curl_easy_cleanup(mb->h);
	curl_slist_free_all(mb->hdr);
	bench_sse_free(&mb->sse);
}

static void
pump(CURLM *m, CURL *post, int *post_done)
{
	CURLMsg *msg;
	int running, left;

	curl_multi_poll(m, NULL, 0, 100, NULL);
	curl_multi_perform(m, &running);
	while ((msg = curl_multi_info_read(m, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		if (post != NULL && msg->easy_handle == post) {
			if (msg->data.result != CURLE_OK)
				bench_die("send: %s",
				    curl_easy_strerror(msg->data.result));
			*post_done = 1;
		} else {
			bench_die("an event stream ended: %s",
			    curl_easy_strerror(msg->data.result));
		}
	}
}

static int
cmd_fanout(int argc, char **argv)
{
	long msgs = argc > 0 ? atol(argv[0]) : 0;
	size_t n = argc > 1 ? (size_t)argc - 2 : 0;   /* receivers */
	struct bench_samples last = { 0 }, each = { 0 };
	struct member *mb;
	const char *want = "";
	char text[96], tag[32];
	uint64_t t0;
	CURLM *m;

	if (msgs < 1 || n < 1)
		bench_die("usage: bench_room fanout MESSAGES URL1 URL2 [URL...]");
	bench_raise_nofile();
	snprintf(tag, sizeof(tag), "%llx",
	    (unsigned long long)(bench_wall_ns() / 1000));
	if ((mb = calloc(n, sizeof(*mb))) == NULL ||
	    (m = curl_multi_init()) == NULL)
		bench_die("out of memory");
	for (size_t i = 0; i < n; i++)
		member_open(m, &mb[i], argv[i + 2], &want);
	t0 = bench_now_ns();
	for (;;) {
		size_t open = 0;

		for (size_t i = 0; i < n; i++)
			open += mb[i].sse.events > 0;
		if (open == n)
			break;
		if (bench_now_ns() - t0 > 60000000000ull)
			bench_die("%zu of %zu event streams opened", open, n);
		pump(m, NULL, NULL);
	}
	/* Two unmeasured messages first. */
	for (long k = -2; k < msgs; k++) {
		struct bench_body answer = { 0 };
		struct curl_slist *hdr;
		int done = 0;
		size_t got;
		double worst = 0;
		long code = 0;
		CURL *post;

		snprintf(text, sizeof(text), "bench room %s %ld", tag, k);
		want = text;
		for (size_t i = 0; i < n; i++)
			mb[i].got = 0;
		post = bench_send_new(argv[1], text, &answer, &hdr);
		t0 = bench_now_ns();
		curl_multi_add_handle(m, post);
		for (;;) {
			got = 0;
			for (size_t i = 0; i < n; i++)
				got += mb[i].got != 0;
			if (got == n && done)
				break;
			if (bench_now_ns() - t0 > 60000000000ull)
				bench_die("after 60 s %zu of %zu members had "
				    "message %ld", got, n, k);
			pump(m, post, &done);
		}
		curl_easy_getinfo(post, CURLINFO_RESPONSE_CODE, &code);
		if (code != 200 || strstr(answer.p, "\"delivered\"") == NULL)
			bench_die("send %ld: HTTP %ld: %s", k, code, answer.p);
		curl_multi_remove_handle(m, post);
		curl_easy_cleanup(post);
		curl_slist_free_all(hdr);
		free(answer.p);
		if (k < 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			double ms = (double)(mb[i].got - t0) / 1e6;

			bench_add(&each, ms);
			if (ms > worst)
				worst = ms;
		}
		bench_add(&last, worst);
	}
	bench_print("to every member", &last, NULL);
	bench_print("to each member", &each, NULL);
	for (size_t i = 0; i < n; i++)
		member_close(m, &mb[i]);
	curl_multi_cleanup(m);
	free(mb);
	bench_samples_free(&last);
	bench_samples_free(&each);
	return 0;
}

static int
cmd_watch(int argc, char **argv)
{
	struct member mb;
	const char *want = "";
	uint64_t t0;
	long timeout = argc > 2 ? atol(argv[2]) : 0;
	int ready = 0;
	CURLM *m;

	if (argc < 3 || timeout < 1)
		bench_die("usage: bench_room watch URL TEXT TIMEOUT_S");
	memset(&mb, 0, sizeof(mb));
	if ((m = curl_multi_init()) == NULL)
		bench_die("out of memory");
	member_open(m, &mb, argv[0], &want);
	t0 = bench_now_ns();
	while (mb.got == 0) {
		if (!ready && mb.sse.events > 0) {
			/* Replayed events came before now: only newer count. */
			want = argv[1];
			ready = 1;
			printf("ready\n");
			fflush(stdout);
		}
		if (bench_now_ns() - t0 > (uint64_t)timeout * 1000000000u) {
			member_close(m, &mb);
			curl_multi_cleanup(m);
			return 1;
		}
		pump(m, NULL, NULL);
	}
	/* The wall clock now, less the time since the bytes came. */
	printf("%llu\n", (unsigned long long)(bench_wall_ns() -
	    (bench_now_ns() - mb.got)));
	member_close(m, &mb);
	curl_multi_cleanup(m);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc < 2)
		bench_die("usage: bench_room fanout|watch ...");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (strcmp(argv[1], "fanout") == 0)
		rc = cmd_fanout(argc - 2, argv + 2);
	else if (strcmp(argv[1], "watch") == 0)
		rc = cmd_watch(argc - 2, argv + 2);
	else
		bench_die("unknown mode %s: fanout or watch", argv[1]);
	curl_global_cleanup();
	return rc;
}
