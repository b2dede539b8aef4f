/*
 * bench_mcp.c: MCP round trips and push latency against real daemons, as
 * an MCP client over HTTP sees them.
 *
 *   bench_mcp rtt MCP_URL [CALLS [BLOCKS]]
 *	initialize, tools/call status and ping, each CALLS times, on one
 *	kept-alive connection (connection setup not counted), and
 *	initialize and status again with a new connection per call.  The
 *	variants take turns in BLOCKS blocks, so that a burst of load on
 *	the shared machine falls on all of them; the spread printed is the
 *	lowest and highest block median.  Each session initialize makes is
 *	ended (DELETE) outside the timing.
 *
 *   bench_mcp push MCP_URL_A MCP_URL_B [MESSAGES]
 *	a session on each daemon; B's notification stream (GET) open;
 *	then MESSAGES times: tools/call send on A, and the time until
 *	notifications/claude/channel with that text arrives on B's stream,
 *	and until A's send answers (delivered).  One curl_multi holds both.
 *
 * Output: one line per figure, as bench_print writes it; progress and
 * errors on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tests/bench/bench.h"

static const char init_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"" BENCH_PROTO "\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"bench_mcp\",\"version\":\"1\"}}}";
static const char initialized_body[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
static const char status_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
    "\"name\":\"status\",\"arguments\":{}}}";
static const char ping_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}";

/* One client connection (or, fresh, one per call). */
struct client {
	CURL *h;
	const char *url;
	int fresh;                  /* a new connection per call */
	struct bench_body body;
	char session[64];           /* of the last initialize */
};

static void
client_init(struct client *c, const char *url, int fresh)
{
	memset(c, 0, sizeof(*c));
	if ((c->h = curl_easy_init()) == NULL)
		bench_die("curl_easy_init failed");
	bench_tls(c->h);
	c->url = url;
	c->fresh = fresh;
	curl_easy_setopt(c->h, CURLOPT_URL, url);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, bench_body_write);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &c->body);
	curl_easy_setopt(c->h, CURLOPT_HEADERFUNCTION, bench_session_header);
	curl_easy_setopt(c->h, CURLOPT_HEADERDATA, c->session);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->h, CURLOPT_FRESH_CONNECT, (long)fresh);
	curl_easy_setopt(c->h, CURLOPT_FORBID_REUSE, (long)fresh);
}

/*
 * Sends one request: POST body (method NULL) or DELETE, with session's
 * headers.  Returns the HTTP status and puts the time it took, in ms,
 * into *ms; the answer is in c->body.
 */
static long
client_call(struct client *c, const char *method, const char *body,
    const char *session, double *ms)
{
	struct curl_slist *hdr = bench_mcp_headers(session);
	uint64_t t0;
	long status = 0;
	CURLcode rc;

	bench_body_reset(&c->body);
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdr);
	if (method != NULL) {
		curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
	} else {
		curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, NULL);
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
	}
	t0 = bench_now_ns();
	rc = curl_easy_perform(c->h);
	*ms = (double)(bench_now_ns() - t0) / 1e6;
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK)
		bench_die("%s %s: %s", method != NULL ? method : "POST", c->url,
		    curl_easy_strerror(rc));
	curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

/* Checks an answer is a JSON-RPC result (not an error, not a tool
 * error): a benchmark of failing calls would measure nothing. */
static void
expect_result(const struct client *c, const char *what)
{
	cJSON *o = cJSON_Parse(c->body.p != NULL ? c->body.p : "");
	cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "result");
	cJSON *err = cJSON_GetObjectItemCaseSensitive(res, "isError");

	if (!cJSON_IsObject(res) || cJSON_IsTrue(err))
		bench_die("%s did not answer a result: %.300s", what,
		    c->body.p != NULL ? c->body.p : "(nothing)");
	cJSON_Delete(o);
}

static double
do_initialize(struct client *c)
{
	double ms, ignored;
	long st;

	c->session[0] = '\0';
	if ((st = client_call(c, NULL, init_body, NULL, &ms)) != 200)
		bench_die("initialize: HTTP %ld: %.300s", st, c->body.p);
	expect_result(c, "initialize");
	if (c->session[0] == '\0')
		bench_die("initialize: no MCP-Session-Id header");
	/* End the session, untimed, so that the daemon does not collect
	 * thousands of them. */
	if ((st = client_call(c, "DELETE", NULL, c->session, &ignored)) != 200)
		bench_die("DELETE: HTTP %ld", st);
	return ms;
}

static double
do_request(struct client *c, const char *session, const char *body,
    const char *what)
{
	double ms;
	long st;

	if ((st = client_call(c, NULL, body, session, &ms)) != 200)
		bench_die("%s: HTTP %ld: %.300s", what, st, c->body.p);
	expect_result(c, what);
	return ms;
}

/* A session that lives for the whole run, on connection c. */
static void
open_session(struct client *c, char out[64])
{
	double ms;
	long st;

	c->session[0] = '\0';
	if ((st = client_call(c, NULL, init_body, NULL, &ms)) != 200 ||
	    c->session[0] == '\0')
		bench_die("initialize: HTTP %ld: %.300s", st, c->body.p);
	snprintf(out, 64, "%s", c->session);
	if ((st = client_call(c, NULL, initialized_body, out, &ms)) != 202)
		bench_die("notifications/initialized: HTTP %ld", st);
}

enum { V_INIT_KA, V_STATUS_KA, V_PING_KA, V_INIT_NEW, V_STATUS_NEW, NV };

static const char *const labels[NV] = {
	"initialize, kept-alive connection",
	"tools/call status, kept-alive connection",
	"ping, kept-alive connection",
	"initialize, new connection per call",
	"tools/call status, new connection per call",
};

static int
cmd_rtt(int argc, char **argv)
{
	struct client ka, fresh;
	struct bench_samples all[NV], med[NV];
	char sess_ka[64], sess_fresh[64];
	long calls = argc > 1 ? atol(argv[1]) : 1000;
	long blocks = argc > 2 ? atol(argv[2]) : 10;
	long per;

	if (argc < 1 || calls < 1 || blocks < 1 || blocks > calls)
		bench_die("usage: bench_mcp rtt MCP_URL [CALLS [BLOCKS]]");
	per = calls / blocks;
	memset(all, 0, sizeof(all));
	memset(med, 0, sizeof(med));
	client_init(&ka, argv[0], 0);
	client_init(&fresh, argv[0], 1);
	open_session(&ka, sess_ka);
	open_session(&fresh, sess_fresh);
	/* Warm up both paths: caches, allocator, the daemon's first calls. */
	for (int i = 0; i < 50; i++) {
		do_initialize(&ka);
		do_request(&ka, sess_ka, status_body, "status");
		do_request(&ka, sess_ka, ping_body, "ping");
	}
	for (long b = 0; b < blocks; b++) {
		for (int v = 0; v < NV; v++) {
			struct bench_samples blk = { 0 };

			for (long i = 0; i < per; i++) {
				double ms = 0;

				switch (v) {
				case V_INIT_KA:
					ms = do_initialize(&ka);
					break;
				case V_STATUS_KA:
					ms = do_request(&ka, sess_ka,
					    status_body, "status");
					break;
				case V_PING_KA:
					ms = do_request(&ka, sess_ka,
					    ping_body, "ping");
					break;
				case V_INIT_NEW:
					ms = do_initialize(&fresh);
					break;
				case V_STATUS_NEW:
					ms = do_request(&fresh, sess_fresh,
					    status_body, "status");
					break;
				}
				bench_add(&all[v], ms);
				bench_add(&blk, ms);
			}
			bench_add(&med[v], bench_quantile(&blk, 0.5));
			bench_samples_free(&blk);
		}
	}
	for (int v = 0; v < NV; v++) {
		bench_print(labels[v], &all[v], &med[v]);
		bench_samples_free(&all[v]);
		bench_samples_free(&med[v]);
	}
	client_call(&ka, "DELETE", NULL, sess_ka, &(double){ 0 });
	client_call(&fresh, "DELETE", NULL, sess_fresh, &(double){ 0 });
	curl_easy_cleanup(ka.h);
	curl_easy_cleanup(fresh.h);
	free(ka.body.p);
	free(fresh.body.p);
	return 0;
}

/* Push latency. */

struct push {
	char tag[32];               /* makes this run's texts unique */
	long want;                  /* the message waited for */
	uint64_t arrived;           /* when it came, 0 until then */
	int primed;
};

static void
push_event(struct bench_sse *r, const char *event, const char *data,
    uint64_t t)
{
	struct push *p = r->arg;
	cJSON *o, *params, *content;
	const char *method;
	char want[64];

	(void)event;
	if (data[0] == '\0') {
		p->primed = 1;              /* the priming event */
		return;
	}
	o = cJSON_Parse(data);
	params = cJSON_GetObjectItemCaseSensitive(o, "params");
	content = cJSON_GetObjectItemCaseSensitive(params, "content");
	method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "method"));
	snprintf(want, sizeof(want), "bench push %s %ld", p->tag, p->want);
	if (method != NULL && strcmp(method,
	    "notifications/claude/channel") == 0 &&
	    cJSON_IsString(content) && strcmp(content->valuestring, want) == 0)
		p->arrived = t;
	cJSON_Delete(o);
}

/* Runs multi until *flag is set or the handle done finishes; returns
 * when both conditions asked for hold.  Dies after 30 s. */
static void
multi_until(CURLM *m, const int *primed, const uint64_t *arrived,
    CURL *post, int *post_done)
{
	uint64_t deadline = bench_now_ns() + 30000000000ull;
	int running;

	for (;;) {
		CURLMsg *msg;
		int left;

		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			if (msg->easy_handle == post) {
				if (msg->data.result != CURLE_OK)
					bench_die("send: %s", curl_easy_strerror(
					    msg->data.result));
				*post_done = 1;
			} else {
				bench_die("B's stream ended: %s",
				    curl_easy_strerror(msg->data.result));
			}
		}
		if ((primed == NULL || *primed) &&
		    (arrived == NULL || *arrived != 0) &&
		    (post_done == NULL || *post_done))
			return;
		if (bench_now_ns() > deadline)
			bench_die("push: nothing for 30 s");
		curl_multi_poll(m, NULL, 0, 100, NULL);
	}
}

static int
cmd_push(int argc, char **argv)
{
	struct client a, b;
	struct bench_sse sse = { 0 };
	struct bench_samples push = { 0 }, answer = { 0 };
	struct curl_slist *shdr, *phdr;
	struct bench_body pbody = { 0 };
	struct push p;
	char sa[64], sb[64], body[256];
	long n = argc > 2 ? atol(argv[2]) : 200;
	CURLM *m;
	CURL *stream, *post;

	if (argc < 2 || n < 1)
		bench_die("usage: bench_mcp push MCP_URL_A MCP_URL_B [MESSAGES]");
	memset(&p, 0, sizeof(p));
	snprintf(p.tag, sizeof(p.tag), "%llx",
	    (unsigned long long)(bench_wall_ns() / 1000));
	client_init(&a, argv[0], 0);
	client_init(&b, argv[1], 0);
	open_session(&a, sa);
	open_session(&b, sb);
	if ((m = curl_multi_init()) == NULL || (stream = curl_easy_init()) ==
	    NULL || (post = curl_easy_init()) == NULL)
		bench_die("curl init failed");
	sse.fn = push_event;
	sse.arg = &p;
	shdr = bench_mcp_stream_headers(sb);
	curl_easy_setopt(stream, CURLOPT_URL, argv[1]);
	curl_easy_setopt(stream, CURLOPT_HTTPHEADER, shdr);
	curl_easy_setopt(stream, CURLOPT_WRITEFUNCTION, bench_sse_write);
	curl_easy_setopt(stream, CURLOPT_WRITEDATA, &sse);
	curl_multi_add_handle(m, stream);
	multi_until(m, &p.primed, NULL, NULL, NULL);
	phdr = bench_mcp_headers(sa);
	curl_easy_setopt(post, CURLOPT_URL, argv[0]);
	curl_easy_setopt(post, CURLOPT_HTTPHEADER, phdr);
	curl_easy_setopt(post, CURLOPT_WRITEFUNCTION, bench_body_write);
	curl_easy_setopt(post, CURLOPT_WRITEDATA, &pbody);
	curl_easy_setopt(post, CURLOPT_TIMEOUT, 30L);
	/* Ten unmeasured messages first: connections, caches, allocator. */
	for (long k = -10; k < n; k++) {
		uint64_t t0;
		int done = 0;
		long st = 0;

		p.want = k;
		p.arrived = 0;
		snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
		    "\"method\":\"tools/call\",\"params\":{\"name\":\"send\","
		    "\"arguments\":{\"text\":\"bench push %s %ld\"}}}",
		    k + 100, p.tag, k);
		curl_easy_setopt(post, CURLOPT_POSTFIELDS, body);
		bench_body_reset(&pbody);
		t0 = bench_now_ns();
		curl_multi_add_handle(m, post);
		multi_until(m, NULL, &p.arrived, post, &done);
		/* The answer's time: when curl saw the transfer end. */
		{
			curl_off_t total = 0;

			curl_easy_getinfo(post, CURLINFO_TOTAL_TIME_T, &total);
			if (k >= 0) {
				bench_add(&push, (double)(p.arrived - t0) / 1e6);
				bench_add(&answer, (double)total / 1e3);
			}
		}
		curl_easy_getinfo(post, CURLINFO_RESPONSE_CODE, &st);
		if (st != 200 || strstr(pbody.p, "\"state\":\"delivered\"") == NULL)
			bench_die("send %ld: HTTP %ld: %.300s", k, st, pbody.p);
		curl_multi_remove_handle(m, post);
	}
	bench_print("push: send on A to notifications/claude/channel on B",
	    &push, NULL);
	bench_print("push: send on A to its answer (delivered)", &answer, NULL);
	curl_multi_remove_handle(m, stream);
	curl_easy_cleanup(stream);
	curl_easy_cleanup(post);
	curl_multi_cleanup(m);
	curl_slist_free_all(shdr);
	curl_slist_free_all(phdr);
	client_call(&a, "DELETE", NULL, sa, &(double){ 0 });
	client_call(&b, "DELETE", NULL, sb, &(double){ 0 });
	curl_easy_cleanup(a.h);
	curl_easy_cleanup(b.h);
	free(a.body.p);
	free(b.body.p);
	free(pbody.p);
	bench_sse_free(&sse);
	bench_samples_free(&push);
	bench_samples_free(&answer);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc < 2)
		bench_die("usage: bench_mcp rtt|push ...");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (strcmp(argv[1], "rtt") == 0)
		rc = cmd_rtt(argc - 2, argv + 2);
	else if (strcmp(argv[1], "push") == 0)
		rc = cmd_push(argc - 2, argv + 2);
	else
		bench_die("unknown benchmark %s: rtt or push", argv[1]);
	curl_global_cleanup();
	return rc;
}
