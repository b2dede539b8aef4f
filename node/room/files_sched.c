/*
 * files_sched.c: which chunk of a fetch is asked of whom (files_int.h;
 * docs/FILES.md, "Fetching").  Once the leaves are here, chunks are
 * asked at most FETCH_WINDOW at a time of each holder, looked for from
 * a random place in the file onwards, each from a holder other than the
 * author when one has it, so that members who fetch the same file at
 * once serve each other; the author (a holder of the whole file) gives
 * each fetching member its own slice.  With nobody online holding what
 * is missing, the fetch waits.  Node thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "node/room/files_int.h"
#include "node/room/keyring.h"
#include "node/room/member.h"

/* A holder of the whole file (the author, or a member that has it all):
 * asked last and little while members that fetch it too can give. */
static int
is_author(const struct fetch *f, const struct holder *h)
{
	return h->nhave == f->n;
}

/* How many chunks h may be asked at once: a holder of the whole file
 * fewer while other members that fetch it too are online, so that they
 * take from each other what it sent one of them, and it sends each
 * chunk about once (docs/FILES.md, "Fetching"). */
static uint32_t
window_of(struct room *room, const struct fetch *f, const struct holder *h)
{
	if (!is_author(f, h))
		return FETCH_WINDOW;
	for (size_t k = 0; k < f->nholders; k++) {
		const struct holder *o = &f->holders[k];

		if (o != h && !o->bad && o->have != NULL &&
		    fetch_bulk_conn(member_find(room, o->id)) != NULL)
			return FETCH_AUTHOR_WINDOW;
	}
	return FETCH_WINDOW;
}

/* The holder to ask chunk i of: one online with room in its window that
 * holds it, another than the author when there is one, the least busy. */
static struct holder *
pick(struct room *room, struct fetch *f, uint32_t i)
{
	struct holder *best = NULL;
	int best_author = 1;

	for (size_t k = 0; k < f->nholders; k++) {
		struct holder *h = &f->holders[k];
		int author;

		if (h->bad || h->have == NULL || !fetch_bit(h->have, i) ||
		    h->inflight >= window_of(room, f, h) ||
		    fetch_bulk_conn(member_find(room, h->id)) == NULL)
			continue;
		author = is_author(f, h);
		if (best == NULL || (best_author && !author) ||
		    (best_author == author && h->inflight < best->inflight)) {
			best = h;
			best_author = author;
		}
	}
	return best;
}

/* Whether some holder online that may still be asked has room in its
 * window. */
static int
window_free(struct room *room, struct fetch *f)
{
	for (size_t k = 0; k < f->nholders; k++) {
		const struct holder *h = &f->holders[k];

		if (!h->bad && h->have != NULL &&
		    h->inflight < window_of(room, f, h) &&
		    fetch_bulk_conn(member_find(room, h->id)) != NULL)
			return 1;
	}
	return 0;
}

/* Whether any holder online could still give chunk i. */
static int
anyone_has(struct room *room, struct fetch *f, uint32_t i)
{
	for (size_t k = 0; k < f->nholders; k++) {
		struct holder *h = &f->holders[k];

		if (!h->bad && h->have != NULL && fetch_bit(h->have, i) &&
		    fetch_bulk_conn(member_find(room, h->id)) != NULL)
			return 1;
	}
	return 0;
}

static int
asked_add(struct fetch *f, struct holder *h, uint32_t i)
{
	if (f->nasked == f->capasked) {
		size_t cap = f->capasked ? f->capasked * 2 : 32;
		struct asked *v = realloc(f->asked, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		f->asked = v;
		f->capasked = cap;
	}
	f->asked[f->nasked++] = (struct asked){ .i = i, .h = h,
	    .at = loop_now_ns() };
	h->inflight++;
	fetch_bit_set(f->out, i, 1);
	return 0;
}

/*
 * The members fetching f with us, online (holders that said what they
 * hold, not all of it): *nf of them with us, *mine our place among them
 * in the order of their ids.  Each asks a whole file's holder for the
 * chunks of its own slice (i % *nf == *mine) and takes the rest from the
 * others as they get them, so that the author sends each chunk about
 * once, not once to each member that lacks it when it asks.
 */
static void
slice_of(struct room *room, const struct fetch *f, uint32_t *mine, uint32_t *nf)
{
	*mine = 0;
	*nf = 1;
	for (size_t k = 0; k < f->nholders; k++) {
		const struct holder *h = &f->holders[k];

		if (h->bad || h->have == NULL || h->nhave == f->n ||
		    fetch_bulk_conn(member_find(room, h->id)) == NULL)
			continue;
		(*nf)++;
		*mine += memcmp(h->id, room->env.me->pk, PAPO_KEY_LEN) < 0;
	}
}

/*
 * Asks chunks of the holders with room in their windows, from f->scan
 * on, and says when nobody online holds what is missing.  A whole
 * file's holder is asked for a chunk outside our slice (slice_of) only
 * when nothing else is coming, so that a member fetching slowly or gone
 * quiet holds nobody up.
 */
void
fetch_schedule(struct room *room, struct fetch *f)
{
	struct xfer x = { .type = XFER_WANT, .count = 1 };
	uint32_t looked = 0, i = f->scan, needed = 0, mine, nf;
	int room_left = 0;

	if (f->state == FETCH_FAILED || !f->leaves)
		goto waiting;
	memcpy(x.root, f->root, PAPO_KEY_LEN);
	room_left = window_free(room, f);
	slice_of(room, f, &mine, &nf);
	for (; looked < f->n; looked++, i = i + 1 == f->n ? 0 : i + 1) {
		struct holder *h;

		if (fetch_bit(f->got, i) || fetch_bit(f->out, i))
			continue;
		needed++;
		if (!room_left)
			break;
		if ((h = pick(room, f, i)) == NULL) {
			if (!anyone_has(room, f, i))
				continue;
			/* Held, but every holder of it is busy: is any
			 * holder free at all? */
			room_left = window_free(room, f);
			continue;
		}
		if (is_author(f, h) && i % nf != mine && f->nasked > 0)
			continue;     /* another's slice: it will have it */
		x.first = i;
		if (fetch_send(room, h->id, &x) == -1 ||
		    asked_add(f, h, i) == -1)
			break;
		f->scan = i + 1 == f->n ? 0 : i + 1;
	}
waiting:
	if (f->state == FETCH_FAILED)
		return;
	/* Nothing asked nor coming: nobody online holds the rest, or
	 * nobody answered about the leaves yet. */
	if (f->nasked == 0 && (needed > 0 || !f->leaves)) {
		int any = 0;

		/* A holder that may give chunks, or has yet to say. */
		for (size_t k = 0; k < f->nholders; k++) {
			const struct holder *h = &f->holders[k];

			any |= !h->bad && (h->have != NULL || (h->asked &&
			    !h->answered)) &&
			    fetch_bulk_conn(member_find(room, h->id)) != NULL;
		}
		if (!any && f->state != FETCH_WAITING) {
			f->state = FETCH_WAITING;
			snprintf(f->err, sizeof(f->err), "no member online holds "
			    "it%s; it is fetched when one comes back",
			    f->ngot ? " (or the rest of it)" : "");
			fetch_event(room, f);
		}
	} else if (f->state == FETCH_WAITING) {
		f->state = FETCH_FETCHING;
		f->err[0] = '\0';
		fetch_event(room, f);
	}
}
