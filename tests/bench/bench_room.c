/*
 * bench_room.c: delivery across a room, as /api/events streams see it.
 *
 *   bench_room fanout MESSAGES URL1 URL2 [URL...]
 *	opens /api/events on every member but the first, then MESSAGES
 *	times sends a message on the first (POST /api/send) and times
 *	until every other member's stream has it.  Prints the time to the
 *	last member (per message) and to each member (per member and
 *	message), median and p99, and the time to the send's answer.
 *
 *   bench_room spread MESSAGES GAP_MS ROOM[,ROOM...] URL1 URL2 [URL...]
 *	the same among members that are all in every ROOM: opens
 *	/api/events?room=* on every one, the members take turns sending
 *	(POST /api/rooms/ROOM/send) and the rooms take turns carrying; each
 *	message is timed until every member but its sender has it, then
 *	GAP_MS pass before the next.  rooms_mesh.sh runs it.
 *
 *   bench_room pair MESSAGES NAME URL1 URL2 [URL...]
 *	as fanout, but every other message is private to NAME, the member
 *	at URL2, and only URL2's stream is followed: the time from the send
 *	on URL1 to NAME's stream having it, room messages and private ones
 *	side by side in one run (private.sh runs it).
 *
 *   bench_room blast MESSAGES RATE WINDOW TAG URL1 [URL...]
 *	sends MESSAGES messages "TAG-K" (K from 0), the members taking turns
 *	(POST /api/send), RATE a second (0: as fast as the daemons take
 *	them), never more than WINDOW unanswered at once; follows no
 *	stream.  Prints how many were sent, answered queued or refused, the
 *	rate reached and the time to each answer.  permsg.sh runs it and
 *	checks the members' logs itself.
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
	struct bench_stream st;
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
member_open(CURLM *m, struct member *mb, const char *base, const char *events,
    const char **want)
{
	char url[256];

	snprintf(url, sizeof(url), "%s%s", base, events);
	mb->want = want;
	bench_stream_open(m, &mb->st, url, member_event, mb);
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

/*
 * A run of timed messages across the members at urls: who sends each, in
 * which room, and whose streams are open.  fanout sends every message on
 * the first member, in its default room, and follows the others'
 * /api/events; spread lets the members take turns sending and the rooms
 * take turns carrying, and follows every member's stream of every room.
 */
struct run {
	long msgs;
	size_t n;                 /* members */
	char **urls;
	char **rooms;             /* NULL: the default room */
	size_t nrooms;
	int turns;                /* the members take turns sending */
	long gap_ms;              /* quiet time after each message */
	const char *to;           /* pair: odd messages private to it, and
	                           * only the second member followed */
};

/* The member that sends message k (k from 0, warm-ups included). */
static size_t
run_sender(const struct run *rn, long k)
{
	return rn->turns ? (size_t)k % rn->n : 0;
}

/* The room message k is sent in.  k + k / n, not k alone: with 16
 * members in 8 rooms, k mod 8 would tie each member to one room. */
static const char *
run_room(const struct run *rn, long k)
{
	if (rn->rooms == NULL)
		return NULL;
	return rn->rooms[((size_t)k + (size_t)k / rn->n) % rn->nrooms];
}

/* Pumps for ms milliseconds, the streams read meanwhile. */
static void
run_quiet(CURLM *m, long ms)
{
	uint64_t until = bench_now_ns() + (uint64_t)ms * 1000000u;

	while (bench_now_ns() < until)
		pump(m, NULL, NULL);
}

static int
run_messages(const struct run *rn, const char *events)
{
	struct bench_samples last = { 0 }, each = { 0 }, answered = { 0 };
	struct bench_samples priv = { 0 }, privans = { 0 };
	struct member *mb;
	const char *want = "";
	char text[96], tag[32];
	/* Unmeasured first messages, one at least in every room: a room's
	 * first message allocates its traffic memory on every member. */
	long warm = rn->nrooms > 2 ? (long)rn->nrooms : 2;
	uint64_t t0;
	long queued = 0;
	CURLM *m;

	bench_raise_nofile();
	snprintf(tag, sizeof(tag), "%llx",
	    (unsigned long long)(bench_wall_ns() / 1000));
	if ((mb = calloc(rn->n, sizeof(*mb))) == NULL ||
	    (m = curl_multi_init()) == NULL)
		bench_die("out of memory");
	/* fanout's sender has no stream: its figures stay those of the
	 * runs recorded before spread came. */
	for (size_t i = rn->turns ? 0 : 1; i < (rn->to ? 2 : rn->n); i++)
		member_open(m, &mb[i], rn->urls[i], events, &want);
	t0 = bench_now_ns();
	for (;;) {
		size_t open = 0, streams = 0;

		for (size_t i = 0; i < rn->n; i++) {
			streams += mb[i].st.h != NULL;
			open += mb[i].st.h != NULL && mb[i].st.sse.events > 0;
		}
		if (open == streams)
			break;
		if (bench_now_ns() - t0 > 60000000000ull)
			bench_die("%zu of %zu event streams opened", open,
			    streams);
		pump(m, NULL, NULL);
	}
	for (long k = 0; k < warm + rn->msgs; k++) {
		struct bench_body answer = { 0 };
		struct curl_slist *hdr;
		size_t got, from = run_sender(rn, k);
		const char *room = run_room(rn, k);
		double worst = 0;
		uint64_t done = 0;
		long code = 0;
		CURL *post;
		int sent = 0, private = rn->to != NULL && k % 2 == 1;
		/* Who must have it: pair follows the addressee alone. */
		size_t need = rn->to != NULL ? 1 : rn->n - 1;

		snprintf(text, sizeof(text), "bench room %s %ld", tag, k);
		want = text;
		for (size_t i = 0; i < rn->n; i++)
			mb[i].got = 0;
		post = bench_send_new(rn->urls[from], room, text,
		    private ? rn->to : NULL, &answer, &hdr);
		t0 = bench_now_ns();
		curl_multi_add_handle(m, post);
		for (;;) {
			got = 0;
			for (size_t i = 0; i < rn->n; i++)
				got += i != from && mb[i].got != 0;
			if (got == need && sent)
				break;
			if (bench_now_ns() - t0 > 60000000000ull)
				bench_die("after 60 s %zu of %zu members had "
				    "message %ld (from %s in %s)", got,
				    need, k, rn->urls[from],
				    room != NULL ? room : "the default room");
			pump(m, post, &sent);
			if (sent && done == 0)
				done = bench_now_ns();
		}
		curl_easy_getinfo(post, CURLINFO_RESPONSE_CODE, &code);
		if (code != 200)
			bench_die("send %ld: HTTP %ld: %s", k, code, answer.p);
		/* "queued": the sender saw nobody online to ack it when it
		 * sent (yet the message reached every member, or we would
		 * not be here).  fanout's room of one sender never says so;
		 * spread counts it as a figure of the mesh. */
		if (strstr(answer.p, "\"delivered\"") == NULL) {
			if (!rn->turns)
				bench_die("send %ld: not delivered: %s", k,
				    answer.p);
			queued += k >= warm;
		}
		curl_multi_remove_handle(m, post);
		curl_easy_cleanup(post);
		curl_slist_free_all(hdr);
		free(answer.p);
		if (k >= warm && private) {
			bench_add(&priv, (double)(mb[1].got - t0) / 1e6);
			bench_add(&privans, (double)(done - t0) / 1e6);
		} else if (k >= warm) {
			for (size_t i = 0; i < rn->n; i++) {
				double ms = (double)(mb[i].got - t0) / 1e6;

				if (i == from || (rn->to != NULL && i != 1))
					continue;
				bench_add(&each, ms);
				if (ms > worst)
					worst = ms;
			}
			bench_add(&last, worst);
			bench_add(&answered, (double)(done - t0) / 1e6);
		}
		if (rn->gap_ms > 0)
			run_quiet(m, rn->gap_ms);
	}
	if (rn->to != NULL) {
		bench_print("room message, to the addressee's stream", &last,
		    NULL);
		bench_print("private message, to the addressee's stream", &priv,
		    NULL);
		bench_print("room message, send answered", &answered, NULL);
		bench_print("private message, send answered", &privans, NULL);
	} else {
		bench_print("to every member", &last, NULL);
		bench_print("to each member", &each, NULL);
		bench_print("send answered", &answered, NULL);
	}
	if (rn->turns)
		bench_value("answers queued, not delivered", (double)queued,
		    "messages");
	for (size_t i = 0; i < rn->n; i++)
		if (mb[i].st.h != NULL)
			bench_stream_close(m, &mb[i].st);
	curl_multi_cleanup(m);
	free(mb);
	bench_samples_free(&last);
	bench_samples_free(&each);
	bench_samples_free(&answered);
	bench_samples_free(&priv);
	bench_samples_free(&privans);
	return 0;
}

static int
cmd_fanout(int argc, char **argv)
{
	struct run rn = { 0 };

	rn.msgs = argc > 0 ? atol(argv[0]) : 0;
	if (rn.msgs < 1 || argc < 3)
		bench_die("usage: bench_room fanout MESSAGES URL1 URL2 [URL...]");
	rn.n = (size_t)argc - 1;
	rn.urls = argv + 1;
	return run_messages(&rn, "/api/events");
}

static int
cmd_pair(int argc, char **argv)
{
	struct run rn = { 0 };

	rn.msgs = argc > 0 ? atol(argv[0]) * 2 : 0;
	if (rn.msgs < 2 || argc < 4)
		bench_die("usage: bench_room pair MESSAGES NAME URL1 URL2 "
		    "[URL...]");
	rn.to = argv[1];
	rn.n = (size_t)argc - 2;
	rn.urls = argv + 2;
	return run_messages(&rn, "/api/events");
}

static int
cmd_spread(int argc, char **argv)
{
	struct run rn = { 0 };
	char *list, *name, *save = NULL;

	rn.msgs = argc > 0 ? atol(argv[0]) : 0;
	rn.gap_ms = argc > 1 ? atol(argv[1]) : -1;
	if (rn.msgs < 1 || rn.gap_ms < 0 || argc < 5)
		bench_die("usage: bench_room spread MESSAGES GAP_MS ROOM[,ROOM...] "
		    "URL1 URL2 [URL...]");
	if ((list = strdup(argv[2])) == NULL ||
	    (rn.rooms = calloc(strlen(list) + 1, sizeof(*rn.rooms))) == NULL)
		bench_die("out of memory");
	for (name = strtok_r(list, ",", &save); name != NULL;
	    name = strtok_r(NULL, ",", &save))
		rn.rooms[rn.nrooms++] = name;
	if (rn.nrooms == 0)
		bench_die("spread: no room in '%s'", argv[2]);
	rn.n = (size_t)argc - 3;
	rn.urls = argv + 3;
	rn.turns = 1;
	run_messages(&rn, "/api/events?room=*");
	free(rn.rooms);
	free(list);
	return 0;
}

/* One send of blast in flight. */
struct blast_send {
	CURL *h;
	struct curl_slist *hdr;
	struct bench_body body;
	uint64_t t;
};

static void
blast_start(CURLM *m, struct blast_send *b, const char *url, const char *text)
{
	memset(b, 0, sizeof(*b));
	b->h = bench_send_new(url, NULL, text, NULL, &b->body, &b->hdr);
	curl_easy_setopt(b->h, CURLOPT_PRIVATE, b);
	b->t = bench_now_ns();
	curl_multi_add_handle(m, b->h);
}

/* Ends a finished send: 1 when it was refused, and *queued counts those
 * answered queued rather than delivered. */
static int
blast_end(CURLM *m, struct blast_send *b, CURLcode rc, long *queued,
    struct bench_samples *answered)
{
	long code = 0;
	int bad;

	curl_easy_getinfo(b->h, CURLINFO_RESPONSE_CODE, &code);
	bad = rc != CURLE_OK || code != 200;
	if (!bad && b->body.p != NULL && strstr(b->body.p, "\"queued\"") != NULL)
		(*queued)++;
	if (bad)
		fprintf(stderr, "bench_room: send refused: %s %ld %.200s\n",
		    curl_easy_strerror(rc), code, b->body.p ? b->body.p : "");
	bench_add(answered, (double)(bench_now_ns() - b->t) / 1e6);
	curl_multi_remove_handle(m, b->h);
	curl_easy_cleanup(b->h);
	curl_slist_free_all(b->hdr);
	free(b->body.p);
	free(b);
	return bad;
}

static int
cmd_blast(int argc, char **argv)
{
	struct bench_samples answered = { 0 };
	long msgs = argc > 0 ? atol(argv[0]) : 0, rate, window, k = 0, done = 0;
	long inflight = 0, queued = 0, refused = 0, left;
	size_t n;
	char text[96];
	uint64_t t0, el;
	CURLMsg *msg;
	CURLM *m;
	int running;

	rate = argc > 1 ? atol(argv[1]) : -1;
	window = argc > 2 ? atol(argv[2]) : 0;
	if (msgs < 1 || rate < 0 || window < 1 || argc < 5)
		bench_die("usage: bench_room blast MESSAGES RATE WINDOW TAG URL1 "
		    "[URL...]");
	n = (size_t)argc - 4;
	bench_raise_nofile();
	if ((m = curl_multi_init()) == NULL)
		bench_die("out of memory");
	curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, window);
	t0 = bench_now_ns();
	while (done < msgs) {
		/* Message k is due at t0 + k / rate. */
		while (k < msgs && inflight < window && (rate == 0 ||
		    bench_now_ns() - t0 >= (uint64_t)k * 1000000000u /
		    (uint64_t)rate)) {
			struct blast_send *b = malloc(sizeof(*b));

			if (b == NULL)
				bench_die("out of memory");
			snprintf(text, sizeof(text), "%s-%ld", argv[3], k);
			blast_start(m, b, argv[4 + (size_t)k % n], text);
			k++, inflight++;
		}
		curl_multi_poll(m, NULL, 0, 1, NULL);
		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &running)) != NULL) {
			struct blast_send *b;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
			    (char **)&b);
			refused += blast_end(m, b, msg->data.result, &queued,
			    &answered);
			done++, inflight--;
		}
	}
	el = bench_now_ns() - t0;
	left = msgs - refused;
	bench_value("sent", (double)msgs, "messages");
	bench_value("answered queued", (double)queued, "messages");
	bench_value("refused", (double)refused, "messages");
	bench_value("elapsed", (double)el / 1e9, "s");
	bench_value("rate", (double)left / ((double)el / 1e9), "messages/s");
	bench_print("send answered", &answered, NULL);
	bench_samples_free(&answered);
	curl_multi_cleanup(m);
	return refused > 0;
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
	member_open(m, &mb, argv[0], "/api/events", &want);
	t0 = bench_now_ns();
	while (mb.got == 0) {
		if (!ready && mb.st.sse.events > 0) {
			/* Replayed events came before now: only newer count. */
			want = argv[1];
			ready = 1;
			printf("ready\n");
			fflush(stdout);
		}
		if (bench_now_ns() - t0 > (uint64_t)timeout * 1000000000u) {
			bench_stream_close(m, &mb.st);
			curl_multi_cleanup(m);
			return 1;
		}
		pump(m, NULL, NULL);
	}
	/* The wall clock now, less the time since the bytes came. */
	printf("%llu\n", (unsigned long long)(bench_wall_ns() -
	    (bench_now_ns() - mb.got)));
	bench_stream_close(m, &mb.st);
	curl_multi_cleanup(m);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc < 2)
		bench_die("usage: bench_room fanout|pair|spread|blast|watch ...");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (strcmp(argv[1], "fanout") == 0)
		rc = cmd_fanout(argc - 2, argv + 2);
	else if (strcmp(argv[1], "spread") == 0)
		rc = cmd_spread(argc - 2, argv + 2);
	else if (strcmp(argv[1], "pair") == 0)
		rc = cmd_pair(argc - 2, argv + 2);
	else if (strcmp(argv[1], "blast") == 0)
		rc = cmd_blast(argc - 2, argv + 2);
	else if (strcmp(argv[1], "watch") == 0)
		rc = cmd_watch(argc - 2, argv + 2);
	else
		bench_die("unknown mode %s: fanout, pair, spread, blast or watch", argv[1]);
	curl_global_cleanup();
	return rc;
}
