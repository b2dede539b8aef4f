/*
 * bench.h: what the benchmark programs of tests/bench/ share: a clock,
 * samples with their median and percentiles, a reader of server-sent
 * events fed by libcurl, the headers of an MCP request, and readings of
 * another process's memory, threads, CPU time and context switches from
 * /proc.  Benchmarks print figures; they never pass or fail on time.
 */
#ifndef PAPO_BENCH_H
#define PAPO_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <curl/curl.h>

#define BENCH_PROTO "2025-11-25"

/* Monotonic time in nanoseconds; bench_wall_ns is CLOCK_REALTIME, which
 * `date +%s%N` reads too. */
uint64_t bench_now_ns(void);
uint64_t bench_wall_ns(void);

/* A growing list of samples (milliseconds). */
struct bench_samples {
	double *v;
	size_t n, cap;
};

void bench_add(struct bench_samples *s, double ms);
void bench_samples_free(struct bench_samples *s);
/* The q-quantile (0.5 median, 0.99 p99) by nearest rank; 0 when empty.
 * Sorts a copy, so samples keep their order. */
double bench_quantile(const struct bench_samples *s, double q);
double bench_min(const struct bench_samples *s);
double bench_max(const struct bench_samples *s);

/*
 * Prints one figure as a line run.sh reads:
 *   label TAB median TAB p99 TAB spread-low TAB spread-high TAB n
 * (milliseconds with three decimals).  The spread is the lowest and
 * highest median of the blocks the samples were taken in, when blocks
 * holds them, else the lowest and highest sample.
 */
void bench_print(const char *label, const struct bench_samples *all,
    const struct bench_samples *blocks);

/* Prints one reading that is a single value: label TAB value TAB unit. */
void bench_value(const char *label, double value, const char *unit);

/* Server-sent events as they arrive, in pieces, from a write callback. */
struct bench_sse;
/* Called for each complete event: its name ("" when none) and its data
 * lines joined by '\n'; t is when the bytes that completed it came. */
typedef void bench_sse_fn(struct bench_sse *r, const char *event,
    const char *data, uint64_t t);

struct bench_sse {
	char *buf;
	size_t len, cap;
	size_t events;           /* complete events so far, comments aside */
	bench_sse_fn *fn;
	void *arg;
};

/* A libcurl CURLOPT_WRITEFUNCTION whose CURLOPT_WRITEDATA is a struct
 * bench_sse. */
size_t bench_sse_write(char *p, size_t size, size_t n, void *arg);
void bench_sse_free(struct bench_sse *r);

/* An event stream (GET url with Accept: text/event-stream) read into
 * sse, which calls fn with arg for each event, on multi m. */
struct bench_stream {
	CURL *h;
	struct curl_slist *hdr;
	struct bench_sse sse;
};
void bench_stream_open(CURLM *m, struct bench_stream *s, const char *url,
    bench_sse_fn *fn, void *arg);
void bench_stream_close(CURLM *m, struct bench_stream *s);

/* A response body, from bench_body_write (CURLOPT_WRITEDATA: this). */
struct bench_body {
	char *p;
	size_t len, cap;
};
size_t bench_body_write(char *p, size_t size, size_t n, void *arg);
void bench_body_reset(struct bench_body *b);

/* The headers of a POST to /mcp: Accept, Content-Type, and, with a
 * session, MCP-Session-Id and MCP-Protocol-Version.  Free with
 * curl_slist_free_all. */
struct curl_slist *bench_mcp_headers(const char *session);
/* The headers of a GET of a session's stream. */
struct curl_slist *bench_mcp_stream_headers(const char *session);

/* Opens an MCP session at url on h (initialize, then
 * notifications/initialized) and puts its id in session; dies on
 * failure.  h keeps its connection for the next call. */
void bench_mcp_open(CURL *h, const char *url, char session[64]);
/* Ends it (DELETE); dies on failure. */
void bench_mcp_close(CURL *h, const char *url, const char *session);

/* An easy handle that POSTs {"text": text} to base's /api/send, or to
 * /api/rooms/ROOM/send when room is not NULL (text, room and to: plain
 * ASCII without quotes or backslashes), with "to" when to is not NULL (a
 * private message), its answer into out.  Free *hdr with
 * curl_slist_free_all after the handle. */
CURL *bench_send_new(const char *base, const char *room, const char *text,
    const char *to, struct bench_body *out, struct curl_slist **hdr);

/* A CURLOPT_HEADERFUNCTION that copies MCP-Session-Id into the 64-byte
 * buffer given as CURLOPT_HEADERDATA. */
size_t bench_session_header(char *p, size_t size, size_t n, void *arg);

/*
 * A curl_multi driven by epoll and curl's socket interface, for clients
 * holding a thousand connections: each pump looks only at the sockets
 * that have something, where curl_multi_poll would poll every one.
 */
struct bench_multi {
	CURLM *m;
	int ep;
	uint64_t due;             /* curl's timer, monotonic ns; 0: none */
};
void bench_multi_init(struct bench_multi *bm);
void bench_multi_free(struct bench_multi *bm);
/* Waits up to wait_ms for a socket or curl's timer, and lets curl act on
 * what is ready.  Finished transfers are then in curl_multi_info_read. */
void bench_multi_pump(struct bench_multi *bm, int wait_ms);

/* Raises this process's open-file limit to its hard limit, and says how
 * many descriptors it may now open. */
long bench_raise_nofile(void);

/* A process as /proc shows it.  -1 fields when it cannot be read. */
struct bench_proc {
	long rss_kb;             /* VmRSS */
	long hwm_kb;             /* VmHWM */
	long threads;
	double cpu_s;            /* utime + stime, in clock ticks */
	double run_s;            /* time on a CPU of every thread, from
	                          * schedstat: nanosecond resolution */
	long long ctxt;          /* voluntary + involuntary switches of
	                          * every thread */
};
int bench_proc_read(pid_t pid, struct bench_proc *out);

/* Prints a message and exits 1. */
/*
 * Sets on h what an HTTPS daemon needs: the CA file in $PAPO_BENCH_CA
 * (tls.sh's test CA), when set.  A no-op for plain HTTP.
 */
void bench_tls(CURL *h);
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
    noreturn));

#endif
