/*
 * cmd_search.c: papo history -q WORDS and its filters (cmd_search.h):
 * the options turned into one GET /api/search?order=time, each value
 * percent-encoded: whatever the filter, the newest messages that match,
 * printed oldest first as plain history prints them (after its room,
 * across rooms; with words, the text replaced by its excerpt, the words
 * found in bold at a terminal; the files named, each on its line), and
 * last, when earlier ones match, the --before ID that pages back.
 */
#define _XOPEN_SOURCE 700
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/buf.h"
#include "server/cli/ask.h"
#include "server/cli/cmd_disk.h"
#include "server/cli/cmd_room.h"
#include "server/cli/cmd_search.h"
#include "server/cli/print.h"

#define CLI_URL_MAX 8192

int
cli_search_asked(const struct cli_opts *o)
{
	return o->query != NULL || o->from != NULL || o->since != NULL ||
	    o->before != NULL || o->after != NULL || o->thread != NULL ||
	    o->files_only;
}

int
cli_search_time(const char *s, uint64_t now, uint64_t *out)
{
	static const struct { char c; uint64_t ms; } unit[] = {
		{ 's', 1000 }, { 'm', 60000 }, { 'h', 3600000 },
		{ 'd', 86400000 }, { 'w', 7 * 86400000ull },
	};
	struct tm tm;
	char *end;
	unsigned long long v;
	const char *p;

	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_isdst = -1;
	if (((p = strptime(s, "%Y-%m-%d %H:%M", &tm)) != NULL ||
	    (p = strptime(s, "%Y-%m-%dT%H:%M", &tm)) != NULL ||
	    (p = strptime(s, "%Y-%m-%d", &tm)) != NULL) && *p == '\0') {
		time_t t = mktime(&tm);

		if (t == (time_t)-1 || t < 0)
			return -1;
		*out = (uint64_t)t * 1000;
		return 0;
	}
	v = strtoull(s, &end, 10);
	if (*end == '\0') {
		*out = v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(unit) / sizeof(unit[0]); i++)
		if (end[0] == unit[i].c && end[1] == '\0' &&
		    v <= now / unit[i].ms) {
			*out = now - v * unit[i].ms;
			return 0;
		}
	return -1;
}

/* Appends &key=value, value percent-encoded. */
static void
cli_arg(struct buf *b, const char *key, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";

	if (value == NULL)
		return;
	buf_u8(b, b->len == 0 ? '?' : '&');
	buf_add(b, key, strlen(key));
	buf_u8(b, '=');
	for (const unsigned char *p = (const unsigned char *)value; *p != '\0';
	    p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-_.~", *p) != NULL) {
			buf_u8(b, *p);
		} else {
			buf_u8(b, '%');
			buf_u8(b, (uint8_t)hex[*p >> 4]);
			buf_u8(b, (uint8_t)hex[*p & 15]);
		}
	}
}

/* The byte offset of code point cp in s (its length when shorter). */
static size_t
cli_cp_at(const char *s, size_t cp)
{
	size_t i = 0, k = 0;

	for (; s[i] != '\0'; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && k++ == cp)
			return i;
	return i;
}

/* n bytes of s, as history prints text. */
static void
cli_put_span(const char *s, size_t n)
{
	char *part = strndup(s, n);

	if (part != NULL)
		cli_put_in(part, "    ");
	free(part);
}

/* The excerpt, each of its marks ([start, end) in code points) in bold
 * when bold. */
static void
cli_print_excerpt(const char *s, const cJSON *marks, int bold)
{
	const cJSON *mk;
	size_t at = 0, a, b;

	cJSON_ArrayForEach(mk, marks) {
		const cJSON *x = cJSON_GetArrayItem(mk, 0);
		const cJSON *y = cJSON_GetArrayItem(mk, 1);

		if (!bold || !cJSON_IsNumber(x) || !cJSON_IsNumber(y) ||
		    x->valuedouble < 0 || y->valuedouble < 0)
			continue;
		a = cli_cp_at(s, (size_t)x->valuedouble);
		b = cli_cp_at(s, (size_t)y->valuedouble);
		if (a < at || b <= a)
			continue;
		cli_put_span(s + at, a - at);
		fputs("\033[1m", stdout);
		cli_put_span(s + a, b - a);
		fputs("\033[0m", stdout);
		at = b;
	}
	cli_put_in(s + at, "    ");
}

/* One hit as history prints a message: its room (across rooms), time,
 * id, author, "→ TO", "↳ ID", its excerpt (with words) or its text, and
 * the files it names. */
static void
cli_print_hit(const cJSON *m, int bold)
{
	const char *s;

	if ((s = cli_str(m, "room")) != NULL) {
		printf("[");
		cli_put(s);
		printf("] ");
	}
	cli_message_head(m);
	if ((s = cli_str(m, "excerpt")) != NULL)
		cli_print_excerpt(s, cJSON_GetObjectItemCaseSensitive(m,
		    "marks"), bold);
	else
		cli_put_in((s = cli_str(m, "text")) != NULL ? s : "", "    ");
	printf("\n");
	cli_files(cJSON_GetObjectItemCaseSensitive(m, "files"), "    ");
}

/* Whether s is a message id's text (10 of base32's characters). */
static int
cli_is_msgid(const char *s)
{
	size_t n = strlen(s);

	if (n != 10)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '2' &&
		    s[i] <= '7')))
			return 0;
	return 1;
}

/*
 * o's search as one query, whatever answers it (the daemon's
 * /api/search, or the disk with the daemon stopped): every filter asks
 * for the newest messages that match, oldest first, as plain history
 * gives them; --before takes a time or the id of the message to page
 * back from (the hint's).  0, or -1 with a usage error printed (*rc).
 */
static int
cli_search_query(const struct cli_cmd *c, const struct cli_opts *o, long n,
    struct node_offline_query *q, int *rc)
{
	const char *vals[] = { o->since, o->before, o->after };
	struct timespec now;
	uint64_t t;

	memset(q, 0, sizeof(*q));
	q->room = o->room;
	q->n = (size_t)n;
	q->text = o->query;
	q->from = o->from;
	q->thread = o->thread;
	q->files = o->files_only;
	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < 3; i++) {
		if (vals[i] == NULL)
			continue;
		if (cli_search_time(vals[i], (uint64_t)now.tv_sec * 1000 +
		    (uint64_t)now.tv_nsec / 1000000, &t) == -1) {
			if (i == 1 && cli_is_msgid(vals[i])) {
				q->before_id = vals[i];
				continue;
			}
			*rc = cli_usage(c, "times are a duration ago (30m, 2h, "
			    "7d), a date (2026-12-03, \"2026-12-03 14:00\") "
			    "or ms since 1970 (--before also a message's id), "
			    "not '%s'", vals[i]);
			return -1;
		}
		if (i == 1)
			q->before = t;
		else            /* --since T takes T itself */
			q->after = i == 0 && t > 0 ? t - 1 : t;
	}
	return 0;
}

/* The daemon's request for q into b: GET /api/search?order=time&.... */
static void
cli_search_path(const struct node_offline_query *q, struct buf *b)
{
	char num[3][24];

	snprintf(num[0], sizeof(num[0]), "%llu", (unsigned long long)q->after);
	snprintf(num[1], sizeof(num[1]), "%llu", (unsigned long long)q->before);
	snprintf(num[2], sizeof(num[2]), "%zu", q->n);
	cli_arg(b, "q", q->text);
	cli_arg(b, "from", q->from);
	cli_arg(b, "thread", q->thread);
	cli_arg(b, "after", q->after != 0 ? num[0] : NULL);
	cli_arg(b, "before", q->before != 0 ? num[1] : NULL);
	cli_arg(b, "before_id", q->before_id);
	cli_arg(b, "files", q->files ? "1" : NULL);
	cli_arg(b, "order", "time");
	cli_arg(b, "limit", num[2]);
}

int
cli_search(const struct cli_cmd *c, const struct cli_opts *o, long n)
{
	struct node_offline_query oq;
	struct buf q;
	char path[CLI_URL_MAX + 32];
	const cJSON *m, *earlier;
	const char *id;
	cJSON *ans = NULL;
	char *text = NULL;
	int rc = CLI_OK;

	if (o->since != NULL && o->after != NULL)
		return cli_usage(c, "give --since or --after, not both%s", "");
	buf_init(&q, CLI_URL_MAX);
	if (cli_search_query(c, o, n, &oq, &rc) == -1)
		goto out;
	cli_search_path(&oq, &q);
	if (q.toobig || buf_u8(&q, '\0') == -1) {
		rc = cli_usage(c, "the search is too long%s", "");
		goto out;
	}
	snprintf(path, sizeof(path), "/api/search%s", (const char *)q.p);
	/* With the daemon stopped, the index on the disk (node/offline.c). */
	if (!cli_running(o->home)) {
		if (o->all_rooms) {
			rc = cli_fail("--all-rooms needs the daemon running "
			    "(papo serve); with it stopped, search one room");
			goto out;
		}
		if ((rc = cli_search_disk(o->home, &oq, &text, &ans)) != CLI_OK)
			goto out;
	} else if ((rc = cli_call(o->home, o->all_rooms ? "*" : o->room,
	    path, NULL, &ans, &text)) != CLI_OK)
		goto out;
	if (o->json) {
		if (text != NULL)
			fputs(text, stdout);
		goto out;
	}
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(ans,
	    "messages"))
		cli_print_hit(m, isatty(STDOUT_FILENO));
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ans,
	    "messages")) == 0)
		printf("(nothing found)\n");
	/* The way back to earlier ones, whatever -n was. */
	earlier = cJSON_GetObjectItemCaseSensitive(ans, "earlier");
	if ((id = cli_str(earlier, "before_id")) != NULL) {
		printf("(earlier ones: add --before ");
		cli_put(id);
		printf(")\n");
	}
out:
	buf_free(&q);
	cJSON_Delete(ans);
	free(text);
	return rc;
}
