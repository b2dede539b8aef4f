/*
 * bench.c: the benchmark programs' shared parts (bench.h).  Single
 * threaded like the programs that use it; nothing here keeps state
 * between calls apart from what the caller hands in.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/bench.h"

uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t
bench_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
bench_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Samples. */

void
bench_add(struct bench_samples *s, double ms)
{
	if (s->n == s->cap) {
		size_t cap = s->cap != 0 ? s->cap * 2 : 256;
		double *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL)
			bench_die("out of memory");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = ms;
}

void
bench_samples_free(struct bench_samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
bench_quantile(const struct bench_samples *s, double q)
{
	double *v, r;
	size_t rank;

	if (s->n == 0)
		return 0;
	if ((v = malloc(s->n * sizeof(*v))) == NULL)
		bench_die("out of memory");
	memcpy(v, s->v, s->n * sizeof(*v));
	qsort(v, s->n, sizeof(*v), bench_cmp);
	/* Nearest rank: the smallest sample with at least q of all at or
	 * below it. */
	rank = (size_t)(q * (double)s->n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > s->n)
		rank = s->n;
	r = v[rank - 1];
	free(v);
	return r;
}

double
bench_min(const struct bench_samples *s)
{
	double m = s->n > 0 ? s->v[0] : 0;

	for (size_t i = 1; i < s->n; i++)
		if (s->v[i] < m)
			m = s->v[i];
	return m;
}

double
bench_max(const struct bench_samples *s)
{
	double m = s->n > 0 ? s->v[0] : 0;

	for (size_t i = 1; i < s->n; i++)
		if (s->v[i] > m)
			m = s->v[i];
	return m;
}

void
bench_print(const char *label, const struct bench_samples *all,
    const struct bench_samples *blocks)
{
	const struct bench_samples *sp = blocks != NULL && blocks->n > 0 ?
	    blocks : all;

	printf("%s\t%.3f\t%.3f\t%.3f\t%.3f\t%zu\n", label,
	    bench_quantile(all, 0.5), bench_quantile(all, 0.99),
	    bench_min(sp), bench_max(sp), all->n);
	fflush(stdout);
}

void
bench_value(const char *label, double value, const char *unit)
{
	printf("%s\t%.3f\t%s\n", label, value, unit);
	fflush(stdout);
}

/* Server-sent events. */

static void
bench_sse_event(struct bench_sse *r, char *ev, size_t len, uint64_t t)
{
	char name[64] = "", *data, *line, *next;
	size_t dlen = 0;
	int any = 0;

	if ((data = malloc(len + 1)) == NULL)
		bench_die("out of memory");
	ev[len] = '\0';
	for (line = ev; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (line[0] == ':' || line[0] == '\0')
			continue;                /* a comment */
		any = 1;
		if (strncmp(line, "event:", 6) == 0) {
			line += line[6] == ' ' ? 7 : 6;
			snprintf(name, sizeof(name), "%s", line);
		} else if (strncmp(line, "data:", 5) == 0) {
			size_t n;

			line += line[5] == ' ' ? 6 : 5;
			n = strlen(line);
			if (dlen > 0)
				data[dlen++] = '\n';
			memcpy(data + dlen, line, n);
			dlen += n;
		}
	}
	data[dlen] = '\0';
	if (any) {
		r->events++;
		if (r->fn != NULL)
			r->fn(r, name, data, t);
	}
	free(data);
}

size_t
bench_sse_write(char *p, size_t size, size_t n, void *arg)
{
	struct bench_sse *r = arg;
	uint64_t t = bench_now_ns();
	size_t len = size * n, off = 0;
	char *end;

	if (r->len + len + 1 > r->cap) {
		size_t cap = r->cap != 0 ? r->cap : 1024;
		char *b;

		while (cap < r->len + len + 1)
			cap *= 2;
		if ((b = realloc(r->buf, cap)) == NULL)
			return 0;
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, p, len);
	r->len += len;
	r->buf[r->len] = '\0';
	/* papo ends lines with '\n' alone; an event ends at a blank line. */
	while ((end = strstr(r->buf + off, "\n\n")) != NULL) {
		size_t elen = (size_t)(end - (r->buf + off));

		bench_sse_event(r, r->buf + off, elen, t);
		off += elen + 2;
	}
	memmove(r->buf, r->buf + off, r->len - off + 1);
	r->len -= off;
	return len;
}

void
bench_sse_free(struct bench_sse *r)
{
	free(r->buf);
	r->buf = NULL;
	r->len = r->cap = 0;
}

void
bench_stream_open(CURLM *m, struct bench_stream *s, const char *url,
    bench_sse_fn *fn, void *arg)
{
	if ((s->h = curl_easy_init()) == NULL)
		bench_die("curl_easy_init failed");
	s->sse.fn = fn;
	s->sse.arg = arg;
	s->hdr = curl_slist_append(NULL, "Accept: text/event-stream");
	curl_easy_setopt(s->h, CURLOPT_URL, url);
	curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdr);
	curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, bench_sse_write);
	curl_easy_setopt(s->h, CURLOPT_WRITEDATA, &s->sse);
	curl_multi_add_handle(m, s->h);
}

void
bench_stream_close(CURLM *m, struct bench_stream *s)
{
	curl_multi_remove_handle(m, s->h);
	curl_easy_cleanup(s->h);
	s->h = NULL;
	curl_slist_free_all(s->hdr);
	bench_sse_free(&s->sse);
}

size_t
bench_body_write(char *p, size_t size, size_t n, void *arg)
{
	struct bench_body *b = arg;
	size_t len = size * n;

	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap != 0 ? b->cap : 4096;
		char *q;

		while (cap < b->len + len + 1)
			cap *= 2;
		if ((q = realloc(b->p, cap)) == NULL)
			return 0;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	b->p[b->len] = '\0';
	return len;
}

void
bench_body_reset(struct bench_body *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

/* MCP requests. */

static struct curl_slist *
bench_append(struct curl_slist *l, const char *h)
{
	struct curl_slist *n = curl_slist_append(l, h);

	if (n == NULL)
		bench_die("out of memory");
	return n;
}

struct curl_slist *
bench_mcp_headers(const char *session)
{
	struct curl_slist *l = NULL;
	char h[128];

	l = bench_append(l, "Accept: application/json, text/event-stream");
	l = bench_append(l, "Content-Type: application/json");
	/* A POST body is small: no 100-continue round trip. */
	l = bench_append(l, "Expect:");
	if (session != NULL) {
		snprintf(h, sizeof(h), "MCP-Session-Id: %s", session);
		l = bench_append(l, h);
		l = bench_append(l, "MCP-Protocol-Version: " BENCH_PROTO);
	}
	return l;
}

struct curl_slist *
bench_mcp_stream_headers(const char *session)
{
	struct curl_slist *l = NULL;
	char h[128];

	l = bench_append(l, "Accept: text/event-stream");
	snprintf(h, sizeof(h), "MCP-Session-Id: %s", session);
	l = bench_append(l, h);
	l = bench_append(l, "MCP-Protocol-Version: " BENCH_PROTO);
	return l;
}

static long
bench_mcp_post(CURL *h, const char *url, const char *session,
    const char *body, char *sid)
{
	struct curl_slist *hdr = bench_mcp_headers(session);
	struct bench_body b = { 0 };
	long status = 0;
	CURLcode rc;

	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bench_body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, sid != NULL ?
	    bench_session_header : NULL);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, sid);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	if ((rc = curl_easy_perform(h)) != CURLE_OK)
		bench_die("POST %s: %s", url, curl_easy_strerror(rc));
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdr);
	free(b.p);
	return status;
}

void
bench_mcp_open(CURL *h, const char *url, char session[64])
{
	static const char init[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"" BENCH_PROTO "\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\","
	    "\"version\":\"1\"}}}";
	static const char done[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	long st;

	session[0] = '\0';
	if ((st = bench_mcp_post(h, url, NULL, init, session)) != 200 ||
	    session[0] == '\0')
		bench_die("initialize at %s: HTTP %ld%s", url, st,
		    session[0] == '\0' ? ", no MCP-Session-Id" : "");
	if ((st = bench_mcp_post(h, url, session, done, NULL)) != 202)
		bench_die("notifications/initialized: HTTP %ld", st);
}

void
bench_mcp_close(CURL *h, const char *url, const char *session)
{
	struct curl_slist *hdr = bench_mcp_stream_headers(session);
	struct bench_body b = { 0 };
	long status = 0;
	CURLcode rc;

	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bench_body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, NULL);
	if ((rc = curl_easy_perform(h)) != CURLE_OK)
		bench_die("DELETE %s: %s", url, curl_easy_strerror(rc));
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		bench_die("DELETE %s: HTTP %ld", url, status);
	curl_slist_free_all(hdr);
	free(b.p);
}

void
bench_tls(CURL *h)
{
	const char *ca = getenv("PAPO_BENCH_CA");

	if (ca != NULL && ca[0] != '\0')
		curl_easy_setopt(h, CURLOPT_CAINFO, ca);
}

CURL *
bench_send_new(const char *base, const char *room, const char *text,
    const char *to, struct bench_body *out, struct curl_slist **hdr)
{
	char url[256], body[320];
	CURL *h;

	if ((h = curl_easy_init()) == NULL)
		bench_die("curl_easy_init failed");
	bench_tls(h);
	if (room != NULL)
		snprintf(url, sizeof(url), "%s/api/rooms/%s/send", base, room);
	else
		snprintf(url, sizeof(url), "%s/api/send", base);
	if (to != NULL)
		snprintf(body, sizeof(body), "{\"text\":\"%s\",\"to\":\"%s\"}",
		    text, to);
	else
		snprintf(body, sizeof(body), "{\"text\":\"%s\"}", text);
	*hdr = bench_append(NULL, "Content-Type: application/json");
	*hdr = bench_append(*hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdr);
	curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bench_body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	return h;
}

size_t
bench_session_header(char *p, size_t size, size_t n, void *arg)
{
	static const char name[] = "mcp-session-id:";
	char *out = arg;
	size_t len = size * n, i, j = 0;

	if (len > sizeof(name) - 1 && strncasecmp(p, name,
	    sizeof(name) - 1) == 0) {
		for (i = sizeof(name) - 1; i < len && p[i] == ' '; i++)
			;
		for (; i < len && j < 63 && isgraph((unsigned char)p[i]); i++)
			out[j++] = p[i];
		out[j] = '\0';
	}
	return len;
}

/* curl asks for a socket to be watched for what, or no longer. */
static int
bench_multi_socket(CURL *e, curl_socket_t fd, int what, void *arg,
    void *sockp)
{
	struct bench_multi *bm = arg;
	struct epoll_event ev;

	(void)e;
	(void)sockp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(bm->ep, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) |
	    ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
	ev.data.fd = fd;
	if (epoll_ctl(bm->ep, EPOLL_CTL_MOD, fd, &ev) == -1 &&
	    (errno != ENOENT || epoll_ctl(bm->ep, EPOLL_CTL_ADD, fd, &ev) == -1))
		bench_die("epoll_ctl: %s", strerror(errno));
	return 0;
}

static int
bench_multi_timer(CURLM *m, long ms, void *arg)
{
	struct bench_multi *bm = arg;

	(void)m;
	bm->due = ms < 0 ? 0 : bench_now_ns() + (uint64_t)ms * 1000000u;
	return 0;
}

void
bench_multi_init(struct bench_multi *bm)
{
	memset(bm, 0, sizeof(*bm));
	if ((bm->m = curl_multi_init()) == NULL ||
	    (bm->ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		bench_die("cannot make a curl_multi with epoll");
	curl_multi_setopt(bm->m, CURLMOPT_SOCKETFUNCTION, bench_multi_socket);
	curl_multi_setopt(bm->m, CURLMOPT_SOCKETDATA, bm);
	curl_multi_setopt(bm->m, CURLMOPT_TIMERFUNCTION, bench_multi_timer);
	curl_multi_setopt(bm->m, CURLMOPT_TIMERDATA, bm);
}

void
bench_multi_free(struct bench_multi *bm)
{
	curl_multi_cleanup(bm->m);
	close(bm->ep);
}

void
bench_multi_pump(struct bench_multi *bm, int wait_ms)
{
	struct epoll_event ev[256];
	uint64_t now = bench_now_ns();
	int n, running;

	if (bm->due != 0) {
		uint64_t left = bm->due > now ? (bm->due - now + 999999) /
		    1000000 : 0;

		if (left < (uint64_t)wait_ms)
			wait_ms = (int)left;
	}
	n = epoll_wait(bm->ep, ev, 256, wait_ms);
	for (int i = 0; i < n; i++) {
		int flags = 0;

		if (ev[i].events & EPOLLIN)
			flags |= CURL_CSELECT_IN;
		if (ev[i].events & EPOLLOUT)
			flags |= CURL_CSELECT_OUT;
		if (ev[i].events & (EPOLLERR | EPOLLHUP))
			flags |= CURL_CSELECT_ERR;
		curl_multi_socket_action(bm->m, ev[i].data.fd, flags, &running);
	}
	if (bm->due != 0 && bench_now_ns() >= bm->due) {
		bm->due = 0;
		curl_multi_socket_action(bm->m, CURL_SOCKET_TIMEOUT, 0,
		    &running);
	}
}

long
bench_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -1;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			return -1;
	}
	return (long)rl.rlim_cur;
}

/* /proc. */

static long
bench_status_field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p != NULL ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int
bench_read_file(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
	return 0;
}

int
bench_proc_read(pid_t pid, struct bench_proc *out)
{
	char path[64], text[4096], *p;
	unsigned long ut, st;
	struct dirent *d;
	DIR *dir;

	out->rss_kb = out->hwm_kb = out->threads = -1;
	out->cpu_s = out->run_s = -1;
	out->ctxt = -1;
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (bench_read_file(path, text, sizeof(text)) == -1)
		return -1;
	out->rss_kb = bench_status_field(text, "\nVmRSS:");
	out->hwm_kb = bench_status_field(text, "\nVmHWM:");
	out->threads = bench_status_field(text, "\nThreads:");
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (bench_read_file(path, text, sizeof(text)) == -1)
		return -1;
	/* Fields 14 and 15 (utime, stime) follow the command name, which
	 * ends at the last ')'. */
	if ((p = strrchr(text, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	    &ut, &st) != 2)
		return -1;
	out->cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	out->ctxt = 0;
	out->run_s = 0;
	while ((d = readdir(dir)) != NULL) {
		char tpath[300];

		if (d->d_name[0] == '.')
			continue;
		snprintf(tpath, sizeof(tpath), "/proc/%ld/task/%s/status",
		    (long)pid, d->d_name);
		if (bench_read_file(tpath, text, sizeof(text)) == -1)
			continue;
		out->ctxt += bench_status_field(text,
		    "\nvoluntary_ctxt_switches:");
		out->ctxt += bench_status_field(text,
		    "\nnonvoluntary_ctxt_switches:");
		snprintf(tpath, sizeof(tpath), "/proc/%ld/task/%s/schedstat",
		    (long)pid, d->d_name);
		if (bench_read_file(tpath, text, sizeof(text)) == 0)
			out->run_s += strtod(text, NULL) / 1e9;
	}
	closedir(dir);
	return 0;
}
