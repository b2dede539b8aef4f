/*
 * limit.c: the limits on messages (limit.h; docs/SECURITY.md, "Rate
 * limits and reply loops").  Three pieces of bookkeeping, none of which
 * reads a clock or a file: the token bucket on our own sends, the count
 * of each author's stored messages per minute of its own clock (the
 * receiving cap), and the answers exchanged between pairs of members
 * (damping).  The node thread owns a limit; deliver.c asks it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/units.h"
#include "node/room/limit.h"

#define RATE_MAX 1000000u        /* largest N and BURST of PAPO_RATE */
#define DAMP_WINDOW_MAX (24u * 3600u)

/* How many of one author's messages are stored, per minute of its clock. */
struct author {
	uint8_t id[PAPO_KEY_LEN];
	uint64_t last;              /* our ms of its last message */
	struct {
		uint64_t minute;        /* its clock's ms / 60000, +1: 0 unused */
		uint32_t n;
	} win[LIMIT_MINUTES];
	uint64_t dropped;           /* in all */
	uint64_t unlogged;          /* dropped since the last log line */
	uint64_t logged;            /* our ms of the last line; 0 none */
};

/* The answers between a and b (a < b), the newest damp.n of them. */
struct pair {
	uint8_t a[PAPO_KEY_LEN], b[PAPO_KEY_LEN];
	int used;
	uint64_t newest;            /* the newest answer's time */
	uint64_t *t;                /* damp.n slots, 0 empty */
};

struct limit {
	struct papo_rate rate;
	struct papo_damp damp;
	int self_off;
	double tokens;
	uint64_t filled_ns;         /* when tokens was last brought up */
	/* The authors heard, grown as they come (a room that never hears
	 * one costs nothing of it) up to LIMIT_AUTHORS, then the least
	 * lately heard gives way. */
	struct author *authors;
	size_t nauthors, cap;
	struct pair pairs[LIMIT_PAIRS];
	uint64_t *times;            /* the pairs' slots, in one block */
};

/* Settings. */

static int
parse_u32(const char **p, uint32_t max, uint32_t *out)
{
	unsigned long long v = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned)(*s++ - '0');
		if (v > max)
			return -1;
	}
	*p = s;
	*out = (uint32_t)v;
	return 0;
}

int
rate_parse(char err[PAPO_ERR_LEN], const char *s, struct papo_rate *out)
{
	static const struct {
		const char *name;
		uint32_t s;
	} units[] = {
		{ "s", 1 }, { "sec", 1 }, { "min", 60 }, { "m", 60 },
		{ "h", 3600 }, { "hour", 3600 },
	};
	const char *p = s, *u;
	size_t ulen, i;

	memset(out, 0, sizeof(*out));
	if (parse_u32(&p, RATE_MAX, &out->n) == -1 || out->n == 0) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_RATE '%.40s' must start with "
		    "a count of messages from 1 to %u, as in %s", s, RATE_MAX,
		    PAPO_RATE_DEFAULT);
		return -1;
	}
	if (*p++ != '/') {
		snprintf(err, PAPO_ERR_LEN, "PAPO_RATE '%.40s' needs /s, /min "
		    "or /h after the count, as in %s", s, PAPO_RATE_DEFAULT);
		return -1;
	}
	u = p;
	ulen = strcspn(u, ",");
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == ulen &&
		    strncmp(units[i].name, u, ulen) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0])) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_RATE '%.40s': the unit after "
		    "/ must be s, min or h, as in %s", s, PAPO_RATE_DEFAULT);
		return -1;
	}
	out->per_s = units[i].s;
	p = u + ulen;
	out->burst = out->n;
	if (*p == ',') {
		p++;
		if (parse_u32(&p, RATE_MAX, &out->burst) == -1 ||
		    out->burst == 0 || *p != '\0') {
			snprintf(err, PAPO_ERR_LEN, "PAPO_RATE '%.40s': the burst "
			    "after the comma must be a count from 1 to %u, as in "
			    "%s", s, RATE_MAX, PAPO_RATE_DEFAULT);
			return -1;
		}
	}
	return 0;
}

int
damp_parse(char err[PAPO_ERR_LEN], const char *s, struct papo_damp *out)
{
	const char *p = s;
	uint32_t t;

	memset(out, 0, sizeof(*out));
	if (strcmp(s, "off") == 0) {
		out->off = 1;
		return 0;
	}
	if (parse_u32(&p, LIMIT_DAMP_MAX, &out->n) == -1 || out->n == 0 ||
	    *p++ != '/') {
		snprintf(err, PAPO_ERR_LEN, "PAPO_DAMP '%.40s' must be off or a "
		    "count of answers from 1 to %u, a slash and a time, as in %s",
		    s, LIMIT_DAMP_MAX, PAPO_DAMP_DEFAULT);
		return -1;
	}
	if (parse_u32(&p, DAMP_WINDOW_MAX, &t) == -1 || t == 0 ||
	    (strcmp(p, "s") != 0 && strcmp(p, "m") != 0 &&
	    strcmp(p, "h") != 0) ||
	    (*p == 'm' ? (uint64_t)t * 60 : *p == 'h' ? (uint64_t)t * 3600 :
	    t) > DAMP_WINDOW_MAX) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_DAMP '%.40s': the time after "
		    "the slash must be a number and s, m or h, at most 24h, as "
		    "in %s", s, PAPO_DAMP_DEFAULT);
		return -1;
	}
	out->window_s = *p == 'm' ? t * 60 : *p == 'h' ? t * 3600 : t;
	return 0;
}

void
limit_defaults(struct papo_rate *rate, struct papo_damp *damp)
{
	char err[PAPO_ERR_LEN];

	if (rate->n == 0 || rate->per_s == 0 || rate->burst == 0)
		rate_parse(err, PAPO_RATE_DEFAULT, rate);
	if (!damp->off && (damp->n == 0 || damp->window_s == 0))
		damp_parse(err, PAPO_DAMP_DEFAULT, damp);
}

void
limit_rate_format(const struct papo_rate *r, char *out, size_t len)
{
	snprintf(out, len, "%u/%s,%u", r->n, r->per_s == 1 ? "s" :
	    r->per_s == 60 ? "min" : "h", r->burst);
}

void
limit_damp_format(const struct papo_damp *d, char *out, size_t len)
{
	if (d->off)
		snprintf(out, len, "off");
	else if (d->window_s % 3600 == 0)
		snprintf(out, len, "%u/%uh", d->n, d->window_s / 3600);
	else if (d->window_s % 60 == 0)
		snprintf(out, len, "%u/%um", d->n, d->window_s / 60);
	else
		snprintf(out, len, "%u/%us", d->n, d->window_s);
}

struct limit *
limit_new(const struct papo_rate *rate, const struct papo_damp *damp,
    int self_off)
{
	struct limit *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	l->rate = *rate;
	l->damp = *damp;
	limit_defaults(&l->rate, &l->damp);
	l->self_off = self_off;
	l->tokens = l->rate.burst;
	if (!l->damp.off) {
		if ((l->times = calloc((size_t)LIMIT_PAIRS * l->damp.n,
		    sizeof(*l->times))) == NULL) {
			free(l);
			return NULL;
		}
		for (size_t i = 0; i < LIMIT_PAIRS; i++)
			l->pairs[i].t = l->times + i * l->damp.n;
	}
	return l;
}

void
limit_free(struct limit *l)
{
	if (l == NULL)
		return;
	free(l->times);
	free(l->authors);
	free(l);
}

void
limit_damp_conf(const struct limit *l, struct papo_damp *out)
{
	*out = l->damp;
}

void
limit_rate_conf(const struct limit *l, struct papo_rate *out)
{
	*out = l->rate;
}

/* Sending: the token bucket. */

static void
limit_fill(struct limit *l, uint64_t now_ns)
{
	double per_ns = (double)l->rate.n / ((double)l->rate.per_s * (double)NS_PER_S);

	if (l->filled_ns != 0 && now_ns > l->filled_ns) {
		l->tokens += (double)(now_ns - l->filled_ns) * per_ns;
		if (l->tokens > l->rate.burst)
			l->tokens = l->rate.burst;
	}
	l->filled_ns = now_ns;
}

unsigned
limit_send(struct limit *l, uint64_t now_ns)
{
	double wait_s;

	if (l->self_off)
		return 0;
	limit_fill(l, now_ns);
	if (l->tokens >= 1.0) {
		l->tokens -= 1.0;
		return 0;
	}
	/* Whole seconds, rounded up: after them a token is there. */
	wait_s = (1.0 - l->tokens) * l->rate.per_s / l->rate.n - 1e-6;
	return wait_s < 1.0 ? 1 : (unsigned)wait_s + (wait_s >
	    (double)(unsigned)wait_s);
}

unsigned
limit_tokens(struct limit *l, uint64_t now_ns)
{
	limit_fill(l, now_ns);
	return (unsigned)l->tokens;
}

/* Receiving: the cap per author and minute of its clock. */

unsigned
limit_recv_cap(const struct limit *l)
{
	uint64_t per_min = ((uint64_t)l->rate.n * 60 + l->rate.per_s - 1) /
	    l->rate.per_s;

	/* Most an honest author can send within one minute: a full bucket
	 * and a minute's filling. */
	return (unsigned)(LIMIT_RECV_MULT * (l->rate.burst + per_min));
}

/* The entry of a new author: at the end while the table may grow (it
 * doubles, to LIMIT_AUTHORS), else, or without memory, the least lately
 * heard one's. */
static struct author *
author_slot(struct limit *l)
{
	struct author *old = NULL, *v;

	if (l->nauthors == l->cap && l->cap < LIMIT_AUTHORS) {
		size_t cap = l->cap == 0 ? 8 : l->cap * 2;

		if (cap > LIMIT_AUTHORS)
			cap = LIMIT_AUTHORS;
		if ((v = realloc(l->authors, cap * sizeof(*v))) != NULL) {
			l->authors = v;
			l->cap = cap;
		}
	}
	if (l->nauthors < l->cap)
		return &l->authors[l->nauthors++];
	for (size_t i = 0; i < l->nauthors; i++)
		if (old == NULL || l->authors[i].last < old->last)
			old = &l->authors[i];
	return old;
}

/* id's entry, made when new; NULL only when nothing could be had. */
static struct author *
author_get(struct limit *l, const uint8_t id[PAPO_KEY_LEN], uint64_t now_ms)
{
	struct author *a;

	for (size_t i = 0; i < l->nauthors; i++)
		if (memcmp(l->authors[i].id, id, PAPO_KEY_LEN) == 0)
			return &l->authors[i];
	if ((a = author_slot(l)) == NULL)
		return NULL;
	memset(a, 0, sizeof(*a));
	memcpy(a->id, id, PAPO_KEY_LEN);
	a->last = now_ms;
	return a;
}

static const struct author *
author_find(const struct limit *l, const uint8_t id[PAPO_KEY_LEN])
{
	for (size_t i = 0; i < l->nauthors; i++)
		if (memcmp(l->authors[i].id, id, PAPO_KEY_LEN) == 0)
			return &l->authors[i];
	return NULL;
}

enum limit_recv
limit_recv(struct limit *l, const uint8_t author[PAPO_KEY_LEN], uint64_t ts,
    uint64_t now_ms, uint64_t *nlog)
{
	struct author *a = author_get(l, author, now_ms);
	/* A time ahead of ours counts as now: a clock set forward cannot
	 * spread a flood over minutes to come. */
	uint64_t minute = (ts < now_ms ? ts : now_ms) / 60000 + 1;
	size_t i, w = 0;

	if (a == NULL)               /* no memory to count it: kept */
		return LIMIT_KEEP;
	a->last = now_ms;
	for (i = 0; i < LIMIT_MINUTES; i++) {
		if (a->win[i].minute == minute)
			break;
		if (a->win[i].minute < a->win[w].minute)
			w = i;
	}
	if (i == LIMIT_MINUTES) {
		/* A minute not counted yet takes the slot of the oldest. */
		i = w;
		a->win[i].minute = minute;
		a->win[i].n = 0;
	}
	if (a->win[i].n < limit_recv_cap(l)) {
		a->win[i].n++;
		return LIMIT_KEEP;
	}
	a->dropped++;
	a->unlogged++;
	if (a->logged != 0 && now_ms < a->logged + LIMIT_LOG_MS)
		return LIMIT_DROP;
	a->logged = now_ms;
	*nlog = a->unlogged;
	a->unlogged = 0;
	return LIMIT_DROP_LOG;
}

uint64_t
limit_dropped(const struct limit *l, const uint8_t author[PAPO_KEY_LEN])
{
	const struct author *a = author_find(l, author);

	return a != NULL ? a->dropped : 0;
}

/* Damping: answers between pairs of members. */

static void
pair_order(const uint8_t *x, const uint8_t *y, const uint8_t **a,
    const uint8_t **b)
{
	int lt = memcmp(x, y, PAPO_KEY_LEN) < 0;

	*a = lt ? x : y;
	*b = lt ? y : x;
}

static const struct pair *
pair_find(const struct limit *l, const uint8_t *x, const uint8_t *y)
{
	const uint8_t *a, *b;

	pair_order(x, y, &a, &b);
	for (size_t i = 0; i < LIMIT_PAIRS; i++) {
		const struct pair *p = &l->pairs[i];

		if (p->used && memcmp(p->a, a, PAPO_KEY_LEN) == 0 &&
		    memcmp(p->b, b, PAPO_KEY_LEN) == 0)
			return p;
	}
	return NULL;
}

static void
pair_clear(struct limit *l, struct pair *p)
{
	p->used = 0;
	p->newest = 0;
	memset(p->t, 0, l->damp.n * sizeof(*p->t));
}

static struct pair *
pair_get(struct limit *l, const uint8_t *x, const uint8_t *y)
{
	struct pair *p = (struct pair *)pair_find(l, x, y), *old = NULL;
	const uint8_t *a, *b;

	if (p != NULL)
		return p;
	for (size_t i = 0; i < LIMIT_PAIRS; i++) {
		p = &l->pairs[i];
		if (old == NULL || !p->used ||
		    (old->used && p->newest < old->newest))
			old = p;
	}
	pair_clear(l, old);
	pair_order(x, y, &a, &b);
	memcpy(old->a, a, PAPO_KEY_LEN);
	memcpy(old->b, b, PAPO_KEY_LEN);
	old->used = 1;
	return old;
}

static int
pair_has(const struct pair *p, const uint8_t *who)
{
	return memcmp(p->a, who, PAPO_KEY_LEN) == 0 || memcmp(p->b, who, PAPO_KEY_LEN) == 0;
}

void
limit_damp_note(struct limit *l, const uint8_t author[PAPO_KEY_LEN],
    const uint8_t *answered, uint64_t ts)
{
	struct pair *p;
	size_t i, low = 0;

	if (l->damp.off)
		return;
	/* Someone else spoke after the exchange's last answer: the two are
	 * no longer alone.  (Older messages, as sync brings them, do not
	 * count.) */
	for (i = 0; i < LIMIT_PAIRS; i++) {
		p = &l->pairs[i];
		if (p->used && !pair_has(p, author) && ts > p->newest)
			pair_clear(l, p);
	}
	if (answered == NULL || memcmp(answered, author, PAPO_KEY_LEN) == 0)
		return;
	p = pair_get(l, author, answered);
	/* Keep the newest n times: this one takes the oldest's slot. */
	for (i = 0; i < l->damp.n; i++)
		if (p->t[i] < p->t[low])
			low = i;
	if (ts > p->t[low])
		p->t[low] = ts;
	if (ts > p->newest)
		p->newest = ts;
}

void
limit_damp_person(struct limit *l, const uint8_t who[PAPO_KEY_LEN], uint64_t ts)
{
	if (l->damp.off)
		return;
	for (size_t i = 0; i < LIMIT_PAIRS; i++)
		if (l->pairs[i].used && pair_has(&l->pairs[i], who) &&
		    ts > l->pairs[i].newest)
			pair_clear(l, &l->pairs[i]);
}

/* The answers of p within the window, and the seconds until the oldest
 * of them leaves it. */
static unsigned
pair_count(const struct limit *l, const struct pair *p, uint64_t now_ms,
    unsigned *retry_s)
{
	uint64_t win = (uint64_t)l->damp.window_s * 1000, oldest = UINT64_MAX;
	unsigned n = 0;

	for (size_t i = 0; i < l->damp.n; i++)
		if (p->t[i] != 0 && p->t[i] + win > now_ms) {
			n++;
			if (p->t[i] < oldest)
				oldest = p->t[i];
		}
	*retry_s = n == 0 ? 0 : (unsigned)((oldest + win - now_ms + 999) / 1000);
	return n;
}

unsigned
limit_damp_check(const struct limit *l, const uint8_t me[PAPO_KEY_LEN],
    const uint8_t other[PAPO_KEY_LEN], uint64_t now_ms)
{
	const struct pair *p;
	unsigned retry;

	if (l->damp.off || (p = pair_find(l, me, other)) == NULL)
		return 0;
	if (pair_count(l, p, now_ms, &retry) < l->damp.n)
		return 0;
	return retry > 0 ? retry : 1;
}

size_t
limit_damp_list(const struct limit *l, const uint8_t me[PAPO_KEY_LEN], uint64_t now_ms,
    struct limit_exchange *out, size_t max)
{
	size_t k = 0;

	if (l->damp.off)
		return 0;
	for (size_t i = 0; i < LIMIT_PAIRS && k < max; i++) {
		const struct pair *p = &l->pairs[i];
		unsigned n, retry;

		if (!p->used || !pair_has(p, me) ||
		    (n = pair_count(l, p, now_ms, &retry)) == 0)
			continue;
		memcpy(out[k].with, memcmp(p->a, me, PAPO_KEY_LEN) == 0 ? p->b : p->a, PAPO_KEY_LEN);
		out[k].answers = n;
		out[k].retry_after_s = n >= l->damp.n ? (retry > 0 ? retry : 1) :
		    0;
		k++;
	}
	return k;
}
