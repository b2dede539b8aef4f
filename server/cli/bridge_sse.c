/*
 * bridge_sse.c: the bridge's growable buffer and its reading of the
 * daemon's server-sent events (the SSE specification's parsing rules:
 * lines end in CR, LF or CRLF; a blank line dispatches the event to the
 * caller's function).  No I/O: bytes in, events out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "server/cli/bridge_int.h"

#define BRIDGE_RETRY_MAX_MS 60000   /* the most a retry: field may ask */

/* Appends n bytes; -1 when that would pass max bytes (or no memory). */
int
bbuf_add(struct bbuf *bb, const char *data, size_t n, size_t max)
{
	size_t cap;
	char *p;

	if (n > max - bb->len)
		return -1;
	if (bb->len + n + 1 > bb->cap) {
		cap = bb->cap < 256 ? 256 : bb->cap;
		while (cap < bb->len + n + 1)
			cap *= 2;
		if ((p = realloc(bb->p, cap)) == NULL)
			return -1;
		bb->p = p;
		bb->cap = cap;
	}
	memcpy(bb->p + bb->len, data, n);
	bb->len += n;
	bb->p[bb->len] = '\0';
	return 0;
}

void
bbuf_free(struct bbuf *bb)
{
	free(bb->p);
	memset(bb, 0, sizeof(*bb));
}

/* Visible ASCII only, as MCP-Session-Id must be, and as anything put
 * back into a header must be. */
int
bridge_token_ok(const char *s, size_t n, size_t max)
{
	if (n == 0 || n >= max)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

static void
sse_dispatch(struct sse *s, sse_event *fn, void *arg)
{

	if (s->hasdata && !s->broken && !s->othertype && s->data.len > 0)
		fn(arg, s->data.p);
	s->data.len = 0;
	if (s->data.p != NULL)
		s->data.p[0] = '\0';
	s->hasdata = s->broken = s->othertype = 0;
}

/* One line of an event stream: "field: value", or blank (dispatch), or
 * ":" a comment. */
static void
sse_line(struct sse *s, sse_event *fn, void *arg)
{
	const char *l = s->line.p != NULL ? s->line.p : "";
	const char *v;
	size_t n, vn;
	char *end;
	long r;

	if (s->toolong) {
		log_msg(LOG_WARN, "mcp: a line from papo serve is over %d bytes: "
		    "its event is dropped", BRIDGE_LINE_MAX);
		s->broken = 1;
		return;
	}
	if (s->line.len == 0) {
		sse_dispatch(s, fn, arg);
		return;
	}
	if (l[0] == ':')
		return;
	if ((v = memchr(l, ':', s->line.len)) == NULL) {
		n = s->line.len;
		v = l + n;
	} else {
		n = (size_t)(v - l);
		if (*++v == ' ')
			v++;
	}
	vn = s->line.len - (size_t)(v - l);
	if (n == 4 && memcmp(l, "data", 4) == 0) {
		if ((s->hasdata && bbuf_add(&s->data, "\n", 1,
		    BRIDGE_LINE_MAX) == -1) ||
		    bbuf_add(&s->data, v, vn, BRIDGE_LINE_MAX) == -1)
			s->broken = 1;
		s->hasdata = 1;
	} else if (n == 2 && memcmp(l, "id", 2) == 0) {
		/* An id the bridge could not send back is of no use. */
		if (vn == 0 || bridge_token_ok(v, vn, sizeof(s->id))) {
			memcpy(s->id, v, vn);
			s->id[vn] = '\0';
			s->gotid = 1;
		}
	} else if (n == 5 && memcmp(l, "event", 5) == 0) {
		s->othertype = !(vn == 0 || (vn == 7 &&
		    memcmp(v, "message", 7) == 0));
	} else if (n == 5 && memcmp(l, "retry", 5) == 0) {
		errno = 0;
		r = strtol(v, &end, 10);
		if (vn > 0 && v[0] >= '0' && v[0] <= '9' && *end == '\0' &&
		    errno == 0)
			s->retry = r > BRIDGE_RETRY_MAX_MS ? BRIDGE_RETRY_MAX_MS : r;
	}
}

void
sse_feed(struct sse *s, const char *data, size_t n, sse_event *fn,
    void *arg)
{
	size_t i = 0, j;

	while (i < n) {
		if (data[i] == '\r' || data[i] == '\n') {
			if (data[i] == '\n' && s->cr) {
				s->cr = 0;
				i++;
				continue;
			}
			s->cr = data[i] == '\r';
			sse_line(s, fn, arg);
			s->line.len = 0;
			s->toolong = 0;
			i++;
			continue;
		}
		s->cr = 0;
		for (j = i; j < n && data[j] != '\r' && data[j] != '\n'; j++)
			;
		if (!s->toolong && bbuf_add(&s->line, data + i, j - i,
		    BRIDGE_LINE_MAX) == -1)
			s->toolong = 1;
		i = j;
	}
}

/* Forgets the connection's part of a stream, keeping the last event id
 * and the retry delay for the next connection. */
void
sse_reset(struct sse *s)
{
	bbuf_free(&s->line);
	bbuf_free(&s->data);
	s->toolong = s->cr = s->hasdata = s->broken = s->othertype = 0;
	s->gotid = 0;
}
