/*
 * store_read.c: log.jsonl read back (store.h): one line by its index
 * entry (pread, decoded and checked; a damaged line dropped from the
 * index for sync to bring back), history pages before a cursor in
 * history's order, ids since a time, and the messages after one in log
 * order.  Node thread; writes nothing to disk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "node/store/store_int.h"

/*
 * Reads e's line back and decodes it into *out, which then owns the
 * body.  0; 1 when the line is damaged (e is dropped from the index,
 * idx_drop, and *out is empty); -1 on an I/O error (errno set).
 */
int
store_read_msg(struct store *s, const struct ent *e, struct frame_msg *out)
{
	char *line = NULL;
	struct frame f;
	enum frame_err fe;
	uint64_t v;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if ((line = malloc(e->len ? e->len : 1)) == NULL)
		goto out;
	if (store_read_all(s->log_fd, line, e->len, e->off) == -1) {
		log_msg(LOG_ERROR, "%s: cannot read at offset %llu: %s",
		    s->log_path, (unsigned long long)e->off, strerror(errno));
		goto out;
	}
	if ((fe = frame_decode(&s->k, line, e->len, FRAME_V3 | FRAME_TRUSTED,
	    &f)) != FRAME_OK) {
		store_idx_drop(s, (size_t)(e - s->ent), frame_strerror(fe));
		rc = 1;
		goto out;
	}
	if (f.type != FRAME_MSG || !sec_msgid_valid(f.u.msg.id, &v) ||
	    v != e->id) {
		frame_clear(&f);
		store_idx_drop(s, (size_t)(e - s->ent), "not the message indexed "
		    "there");
		rc = 1;
		goto out;
	}
	/* The body moves to *out: f is not cleared. */
	*out = f.u.msg;
	rc = 0;
out:
	free(line);
	return rc;
}

int
store_get(struct store *s, const char *id, struct frame_msg *out)
{
	const struct ent *e;
	uint64_t v;
	int r;

	memset(out, 0, sizeof(*out));
	if (!sec_msgid_valid(id, &v) || (e = store_idx_find(s, v)) == NULL ||
	    (r = store_read_msg(s, e, out)) == 1) {
		errno = ENOENT;
		return -1;
	}
	return r;
}

static int
ackent_cmp(const void *a, const void *b)
{
	const struct ackent *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

long
store_acks(struct store *s, const char *id, struct frame_ack *out,
    size_t max)
{
	size_t lo = 0, hi, n = 0;
	char *line = NULL;
	uint64_t v;

	if (!sec_msgid_valid(id, &v) || s->nackv == 0 || max == 0)
		return 0;
	if (s->acks_unsorted) {
		qsort(s->ackv, s->nackv, sizeof(*s->ackv), ackent_cmp);
		s->acks_unsorted = 0;
	}
	for (hi = s->nackv; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ackv[mid].id < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->nackv && s->ackv[lo].id == v && n < max; lo++) {
		const struct ackent *a = &s->ackv[lo];
		struct frame f;
		char *p;

		if ((p = realloc(line, a->len ? a->len : 1)) == NULL) {
			free(line);
			return -1;
		}
		line = p;
		if (store_read_all(s->log_fd, line, a->len, a->off) == -1) {
			free(line);
			return -1;
		}
		if (frame_decode(&s->k, line, a->len, FRAME_V3 | FRAME_TRUSTED,
		    &f) != FRAME_OK)
			continue;
		if (f.type == FRAME_ACK && strcmp(f.u.ack.id, id) == 0)
			out[n++] = f.u.ack;
		frame_clear(&f);
	}
	free(line);
	return (long)n;
}

/* Where history's walk back starts: the place after the last message
 * before q's cursor. */
static int
walk_start(struct store *s, const struct store_query *q, size_t *at)
{
	uint64_t bid = 0;

	if (q->before_id != NULL && q->before_id[0] != '\0' &&
	    !sec_msgid_valid(q->before_id, &bid)) {
		errno = EINVAL;
		return -1;
	}
	store_ord_sort(s);
	*at = q->before == 0 ? s->nent : store_ord_lower(s, q->before, bid);
	return 0;
}

long
store_history(struct store *s, const struct store_query *q,
    struct frame_msg *out, struct store_cursor *next)
{
	size_t i, filled = 0, bytes = 0;
	long rc = -1;

	memset(next, 0, sizeof(*next));
	if (walk_start(s, q, &i) == -1)
		return -1;
	/* Walking back from the cursor reads only what it returns (and,
	 * with an author to match, what it passes over), newest first. */
	for (; i > 0; i--) {
		const struct pos *p = &s->ord[i - 1];
		const struct ent *e = &s->ent[p->e];

		if (p->ts < q->since)
			break;
		if (filled == q->n ||
		    (q->bytes > 0 && bytes > 0 && bytes + e->len > q->bytes)) {
			next->more = 1;
			break;
		}
		bytes += e->len;
		next->ts = p->ts;
		sec_msgid_format(p->id, next->id);
		switch (store_read_msg(s, e, &out[filled])) {
		case -1:
			goto out;
		case 1:
			/* Dropped: ord[i - 1] is now the next newer one, and
			 * the walk goes on below it. */
			continue;
		}
		if (q->from != NULL && memcmp(out[filled].from, q->from,
		    PAPO_KEY_LEN) != 0) {
			frame_msg_clear(&out[filled]);
			memset(&out[filled], 0, sizeof(out[filled]));
			continue;
		}
		filled++;
	}
	/* Oldest first. */
	for (size_t j = 0; j < filled / 2; j++) {
		struct frame_msg t = out[j];

		out[j] = out[filled - 1 - j];
		out[filled - 1 - j] = t;
	}
	rc = (long)filled;
out:
	if (rc == -1) {
		int saved = errno;

		for (size_t j = 0; j < filled; j++) {
			frame_msg_clear(&out[j]);
			memset(&out[j], 0, sizeof(out[j]));
		}
		errno = saved;
	}
	return rc;
}

long
store_ids(struct store *s, size_t n, uint64_t since,
    char (*ids)[PAPO_MSGID_LEN + 1], uint64_t *ts)
{
	size_t first;

	store_ord_sort(s);
	first = store_ord_lower(s, since, 0);
	if (s->nent - first > n)
		first = s->nent - n;
	for (size_t i = first; i < s->nent; i++) {
		sec_msgid_format(s->ord[i].id, ids[i - first]);
		if (ts != NULL)
			ts[i - first] = s->ord[i].ts;
	}
	return (long)(s->nent - first);
}

long
store_after(struct store *s, const char *id, size_t n, struct frame_msg *out,
    size_t *more, char *last)
{
	const struct ent *e;
	size_t start = 0, first, i;
	uint64_t v;
	long rc = 0;
	int r;

	*more = 0;
	last[0] = '\0';
	while (s->nent > 0) {
		struct frame_msg newest;

		if ((r = store_read_msg(s, &s->ent[s->nent - 1], &newest)) == 1)
			continue;
		if (r == 0) {
			memcpy(last, newest.id, PAPO_MSGID_LEN + 1);
			frame_msg_clear(&newest);
		}
		break;
	}
	if (id != NULL && sec_msgid_valid(id, &v) && (e = store_idx_find(s, v)) !=
	    NULL)
		start = (size_t)(e - s->ent) + 1;
	first = s->nent - start > n ? s->nent - n : start;
	*more = first - start;
	/* A damaged line drops its entry, and the next one takes its
	 * place at i. */
	for (i = first; i < s->nent;) {
		if ((r = store_read_msg(s, &s->ent[i], &out[rc])) == -1) {
			int saved = errno;

			while (rc > 0)
				frame_msg_clear(&out[--rc]);
			errno = saved;
			return -1;
		}
		if (r == 0) {
			rc++;
			i++;
		}
	}
	return rc;
}
