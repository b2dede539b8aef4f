/*
 * store_index.c: the log's index in memory: one entry per message in log
 * order, a hash set over their ids (open addressing) and the same
 * messages in history's order (by time, then id), and the digest over
 * the ids held.  Pure memory: no I/O.  Node thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "node/store/store_int.h"

static size_t
idx_hash(uint64_t id, unsigned bits)
{
	/* Ids are random, but multiplying spreads any pattern a peer might
	 * choose over the high bits, which index the table. */
	return (size_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - bits));
}

const struct ent *
store_idx_find(const struct store *s, uint64_t id)
{
	size_t mask = ((size_t)1 << s->tabbits) - 1;
	size_t i;

	for (i = idx_hash(id, s->tabbits);; i = (i + 1) & mask) {
		uint32_t e = s->tab[i];

		if (e == SLOT_EMPTY)
			return NULL;
		if (s->ent[e].id == id)
			return &s->ent[e];
	}
}

static void
idx_place(uint32_t *tab, unsigned bits, uint64_t id, uint32_t e)
{
	size_t mask = ((size_t)1 << bits) - 1;
	size_t i;

	for (i = idx_hash(id, bits); tab[i] != SLOT_EMPTY; i = (i + 1) & mask)
		;
	tab[i] = e;
}

int
store_idx_rehash(struct store *s, unsigned bits)
{
	size_t n = (size_t)1 << bits;
	uint32_t *tab;

	if ((tab = malloc(n * sizeof(*tab))) == NULL)
		return -1;
	memset(tab, 0xff, n * sizeof(*tab));
	for (size_t e = 0; e < s->nent; e++)
		idx_place(tab, bits, s->ent[e].id, (uint32_t)e);
	free(s->tab);
	s->tab = tab;
	s->tabbits = bits;
	return 0;
}

/*
 * Makes room for one more entry, so that adding it after its line is on
 * disk cannot fail.  -1 with errno set.
 */
int
store_idx_reserve(struct store *s)
{
	if (s->nent >= STORE_ENT_MAX) {
		errno = EFBIG;
		return -1;
	}
	if (s->nent == s->capent) {
		size_t cap = s->capent ? s->capent * 2 : 1024;
		struct ent *ent;

		struct pos *ord;

		if ((ent = realloc(s->ent, cap * sizeof(*ent))) == NULL)
			return -1;
		s->ent = ent;
		if ((ord = realloc(s->ord, cap * sizeof(*ord))) == NULL)
			return -1;
		s->ord = ord;
		s->capent = cap;
	}
	/* The load factor stays at most one half, so probes stay short. */
	if ((s->nent + 1) * 2 > ((size_t)1 << s->tabbits))
		return store_idx_rehash(s, s->tabbits + 1);
	return 0;
}

static int
pos_cmp(const void *a, const void *b)
{
	const struct pos *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void
store_ord_sort(struct store *s)
{
	if (s->unsorted)
		qsort(s->ord, s->nent, sizeof(*s->ord), pos_cmp);
	s->unsorted = 0;
}

/*
 * Puts p (the entry about to be ent[nent]) in ord.  Messages mostly come
 * in time order and go at the end.  One that does not (a late clock, a
 * catch-up by sync) is moved into its place once the log is open; while
 * it is read at open, ord is left unsorted and sorted once, at its first
 * use.
 */
static void
ord_add(struct store *s, struct pos p)
{
	size_t lo = 0, hi = s->nent;

	if (s->nent == 0 || pos_cmp(&p, &s->ord[s->nent - 1]) >= 0 ||
	    s->unsorted) {
		s->ord[s->nent] = p;
		return;
	}
	if (!s->live) {
		s->ord[s->nent] = p;
		s->unsorted = 1;
		return;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pos_cmp(&s->ord[mid], &p) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&s->ord[lo + 1], &s->ord[lo], (s->nent - lo) * sizeof(*s->ord));
	s->ord[lo] = p;
}

/* The digest is over the id text, which sec_msgid_valid has already
 * held to its one lowercase spelling. */
static void
digest_add(struct store *s, const char *id)
{
	uint8_t h[PAPO_KEY_LEN];

	crypto_generichash(h, sizeof(h), (const unsigned char *)id,
	    PAPO_MSGID_LEN, NULL, 0);
	for (size_t i = 0; i < sizeof(h); i++)
		s->digest[i] ^= h[i];
}

/*
 * Adds a message to the index after idx_reserve.  Returns 1 when added,
 * 0 when its id was already there.
 */
int
store_idx_add(struct store *s, const char *id, uint64_t v, uint64_t off,
    size_t len, uint64_t ts)
{
	struct ent *e;

	if (store_idx_find(s, v) != NULL)
		return 0;
	e = &s->ent[s->nent];
	e->id = v;
	e->off = off;
	e->len = (uint32_t)len;
	e->ts = ts;
	idx_place(s->tab, s->tabbits, v, (uint32_t)s->nent);
	ord_add(s, (struct pos){ ts, v, (uint32_t)s->nent });
	s->nent++;
	digest_add(s, id);
	return 1;
}

/*
 * Forgets message e, whose line turned out damaged when it was read:
 * its shape was taken at open (log_line's fast reading) but it does not
 * decode.  History and sync go on without it, the digest no longer
 * counts it, so a sync fetches it again from the other members (and
 * stores it anew at the log's end); the line stays where it is until a
 * compaction leaves it out.  Said once, with the line's byte offset.
 */
void
store_idx_drop(struct store *s, size_t k, const char *why)
{
	char id[PAPO_MSGID_LEN + 1];
	size_t j = 0;

	sec_msgid_format(s->ent[k].id, id);
	log_msg(LOG_WARN, "%s: damaged line at byte offset %llu (message %s: "
	    "%s) skipped; a sync fetches it again from the other members",
	    s->log_path, (unsigned long long)s->ent[k].off, id, why);
	digest_add(s, id);
	memmove(&s->ent[k], &s->ent[k + 1], (s->nent - k - 1) * sizeof(*s->ent));
	for (size_t i = 0; i < s->nent; i++) {
		if (s->ord[i].e == k)
			continue;
		s->ord[j] = s->ord[i];
		if (s->ord[j].e > k)
			s->ord[j].e--;
		j++;
	}
	s->nent--;
	/* The table is rebuilt in place: nothing to allocate, nothing to
	 * fail. */
	memset(s->tab, 0xff, ((size_t)1 << s->tabbits) * sizeof(*s->tab));
	for (size_t e = 0; e < s->nent; e++)
		idx_place(s->tab, s->tabbits, s->ent[e].id, (uint32_t)e);
	s->dropped++;
	s->damaged++;
}

void
store_idx_cut(struct store *s, size_t n)
{
	char id[PAPO_MSGID_LEN + 1];
	size_t j = 0;

	if (n >= s->nent)
		return;
	for (size_t k = n; k < s->nent; k++) {
		sec_msgid_format(s->ent[k].id, id);
		digest_add(s, id);     /* XOR: out again */
	}
	for (size_t i = 0; i < s->nent; i++)
		if (s->ord[i].e < n)
			s->ord[j++] = s->ord[i];
	s->nent = n;
	memset(s->tab, 0xff, ((size_t)1 << s->tabbits) * sizeof(*s->tab));
	for (size_t e = 0; e < s->nent; e++)
		idx_place(s->tab, s->tabbits, s->ent[e].id, (uint32_t)e);
}

/* The first place in ord at or after (ts, id). */
size_t
store_ord_lower(const struct store *s, uint64_t ts, uint64_t id)
{
	struct pos key = { ts, id, 0 };
	size_t lo = 0, hi = s->nent;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pos_cmp(&s->ord[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
