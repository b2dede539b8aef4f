/*
 * store_log.c: log.jsonl written and replayed (store.h): a file read
 * once in chunks, line by line, a torn last line cut off; each line of
 * the log indexed (a message by its prefix without decoding it when it
 * can, acks counted, the retention line's floor); messages and acks
 * appended durably; what status counts.  Node thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/buf.h"
#include "lib/log.h"
#include "node/store/store_int.h"

/* frame_encode writes a message's type and id first, then later "ts";
 * replay relies on that to index a line without decoding it. */
static const char msg_prefix[] = "{\"t\":\"msg\",\"id\":\"";
static const char ack_prefix[] = "{\"t\":\"ack\",";
static const char ts_key[] = ",\"ts\":";
/* The first line of a compacted log (docs/PROTOCOL.md, "Files"). */
static const char ret_prefix[] = "{\"t\":\"retention\",";
static const char sig_key[] = ",\"sig\":\"";

/* A signature as frame_encode writes it: PAPO_SIG_LEN bytes in
 * base64url. */
#define SIG_B64_LEN 86
_Static_assert(SIG_B64_LEN + 1 == sodium_base64_ENCODED_LEN(PAPO_SIG_LEN,
    sodium_base64_VARIANT_URLSAFE_NO_PADDING), "signature text length");

/* Cuts fd back to size and makes that durable. */
static int
cut(char err[PAPO_ERR_LEN], int fd, const char *path, uint64_t size)
{
	if (ftruncate(fd, (off_t)size) == -1 || fdatasync(fd) == -1) {
		err_set(err, "cannot truncate %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Reads fd from its start once, in chunks, and hands every complete line
 * to fn.  Damaged lines are skipped with a warning; a damaged last line
 * or bytes after the last newline (a torn write) are cut off the file.
 * *end receives the file's size afterwards.
 */
int
store_replay(char err[PAPO_ERR_LEN], struct store *s, int fd, const char *path,
    store_line_fn *fn, uint64_t *end)
{
	size_t cap = STORE_LINE_MAX + STORE_CHUNK;
	char *b = NULL;
	size_t have = 0;        /* bytes in b */
	uint64_t base = 0;      /* file offset of b[0] */
	uint64_t lstart = 0;    /* file offset of the line being read */
	uint64_t cut_at = 0;
	int skipping = 0;       /* inside a line too long to hold */
	int must_cut = 0;
	size_t lineno = 0;
	struct stat st;
	int rc = -1;

	if (fstat(fd, &st) == -1) {
		err_set(err, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	if ((b = malloc(cap)) == NULL) {
		err_set(err, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, b + have, cap - have);
		size_t p = 0;
		char *nl;

		if (r == -1) {
			if (errno == EINTR)
				continue;
			err_set(err, "cannot read %s: %s", path,
			    strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		have += (size_t)r;
		while ((nl = memchr(b + p, '\n', have - p)) != NULL) {
			size_t len = (size_t)(nl - (b + p));
			uint64_t lend = base + (uint64_t)(nl - b) + 1;
			int last = lend == (uint64_t)st.st_size;
			const char *why = NULL;
			int took;

			lineno++;
			if (skipping || len > STORE_LINE_MAX) {
				why = "line too long";
				took = 1;
			} else {
				took = fn(s, b + p, len, lstart, last, &why);
			}
			if (took == -1) {
				err_set(err, "cannot load %s: %s",
				    path, strerror(errno));
				goto out;
			}
			if (took == 1) {
				s->dropped++;
				if (last) {
					log_msg(LOG_WARN, "%s: line %zu: %s; "
					    "damaged last line cut off", path,
					    lineno, why);
					must_cut = 1;
					cut_at = lstart;
				} else {
					log_msg(LOG_WARN, "%s: line %zu: %s; "
					    "line skipped", path, lineno, why);
				}
			}
			skipping = 0;
			p = (size_t)(nl - b) + 1;
			lstart = base + p;
		}
		/* What is left is the start of a line.  Past the longest line
		 * accepted it is only looked for its end, not kept. */
		if (skipping || have - p > STORE_LINE_MAX) {
			skipping = 1;
			p = have;
		}
		memmove(b, b + p, have - p);
		have -= p;
		base += p;
	}
	if (skipping || have > 0) {
		log_msg(LOG_WARN, "%s: line %zu: torn last line (%llu bytes "
		    "without a newline) cut off", path, lineno + 1,
		    (unsigned long long)(base + have - lstart));
		s->dropped++;
		must_cut = 1;
		cut_at = lstart;
	}
	if (must_cut && cut(err, fd, path, cut_at) == -1)
		goto out;
	*end = must_cut ? cut_at : base + have;
	rc = 0;
out:
	free(b);
	return rc;
}

/*
 * Remembers where a receipt line of message id v is (struct ackent), for
 * store_acks.  -1 out of memory.
 */
static int
ack_note(struct store *s, uint64_t v, uint64_t off, size_t len)
{
	if (s->nackv == s->capackv) {
		size_t cap = s->capackv ? s->capackv * 2 : 64;
		struct ackent *a = realloc(s->ackv, cap * sizeof(*a));

		if (a == NULL)
			return -1;
		s->ackv = a;
		s->capackv = cap;
	}
	s->ackv[s->nackv].id = v;
	s->ackv[s->nackv].off = off;
	s->ackv[s->nackv].len = (uint32_t)len;
	s->nackv++;
	s->acks_unsorted = 1;
	return 0;
}

/* The message id of an ack line as frame_encode writes it ("id" first),
 * without decoding the JSON: 1 and *v, else 0. */
static int
ack_fast_id(const char *line, size_t len, uint64_t *v)
{
	static const char id_key[] = "\"id\":\"";
	size_t pl = sizeof(ack_prefix) - 1, kl = sizeof(id_key) - 1;
	char id[PAPO_MSGID_LEN + 1];

	if (len < pl + kl + PAPO_MSGID_LEN + 1 ||
	    memcmp(line + pl, id_key, kl) != 0 ||
	    line[pl + kl + PAPO_MSGID_LEN] != '"')
		return 0;
	memcpy(id, line + pl + kl, PAPO_MSGID_LEN);
	id[PAPO_MSGID_LEN] = '\0';
	return sec_msgid_valid(id, v);
}

/*
 * Whether a line ends the way frame_encode ends every msg and ack: with
 * its signature.  A line cut short and later completed by a newline does
 * not, so the cheap reading below still refuses it.
 */
static int
ends_with_sig(const char *line, size_t len)
{
	size_t kl = sizeof(sig_key) - 1;
	const char *p;

	if (len < kl + SIG_B64_LEN + 2)
		return 0;
	p = line + len - SIG_B64_LEN - 2;
	if (memcmp(p - kl, sig_key, kl) != 0 ||
	    memcmp(p + SIG_B64_LEN, "\"}", 2) != 0)
		return 0;
	for (size_t i = 0; i < SIG_B64_LEN; i++) {
		char ch = p[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
			return 0;
	}
	return 1;
}

/*
 * Reads the id and time of a message line from the fixed order that
 * frame_encode writes, without decoding the JSON.  Returns 1 when the
 * line has that shape, else 0 (and the caller decodes it in full).
 */
int
store_fast_msg(const char *line, size_t len, char id[PAPO_MSGID_LEN + 1],
    uint64_t *v, uint64_t *ts)
{
	size_t pl = sizeof(msg_prefix) - 1;
	const char *p, *end = line + len;
	uint64_t t = 0;
	size_t digits = 0;

	if (len < pl + PAPO_MSGID_LEN + 2 ||
	    memcmp(line, msg_prefix, pl) != 0 ||
	    line[pl + PAPO_MSGID_LEN] != '"' || !ends_with_sig(line, len))
		return 0;
	memcpy(id, line + pl, PAPO_MSGID_LEN);
	id[PAPO_MSGID_LEN] = '\0';
	if (!sec_msgid_valid(id, v))
		return 0;
	/* Inside a JSON string a quote is escaped, so the first unescaped
	 * ,"ts": of a msg object (which nests no objects) is its key. */
	for (p = line + pl + PAPO_MSGID_LEN + 1;; p++) {
		if ((p = memchr(p, ',', (size_t)(end - p))) == NULL)
			return 0;
		if ((size_t)(end - p) > sizeof(ts_key) - 1 &&
		    memcmp(p, ts_key, sizeof(ts_key) - 1) == 0)
			break;
	}
	for (p += sizeof(ts_key) - 1; p < end && *p >= '0' && *p <= '9'; p++) {
		if (t > (UINT64_MAX - 9) / 10)
			return 0;
		t = t * 10 + (uint64_t)(*p - '0');
		digits++;
	}
	if (digits == 0 || p == end || (*p != ',' && *p != '}') ||
	    (digits > 1 && p[-(ptrdiff_t)digits] == '0'))
		return 0;
	*ts = t;
	return 1;
}

/*
 * The retention line: only the first line of a log may be one (the
 * rewrite puts it there), and its numbers are taken as they stand.
 */
static int
ret_line(struct store *s, const char *line, size_t len, uint64_t off,
    const char **why)
{
	char text[128];
	unsigned long long floor, gone;
	int used = -1;

	if (off != 0 || len >= sizeof(text)) {
		*why = "a retention line that is not the first";
		return 1;
	}
	memcpy(text, line, len);
	text[len] = '\0';
	if (sscanf(text, RET_FMT "%n", &floor, &gone, &used) != 2 ||
	    used != (int)len || strpbrk(text, "+- \t") != NULL) {
		*why = "a malformed retention line";
		return 1;
	}
	s->floor = floor;
	s->gone = gone;
	return 0;
}

/*
 * A message's line seen again at off: the copy indexed first is kept,
 * unless it is damaged (read_msg drops it: a sync stored the message
 * again after a run found it so), and then this one is indexed.  -1 on
 * an I/O error.
 */
static int
twice(struct store *s, const char *id, uint64_t v, uint64_t off, size_t len,
    uint64_t ts)
{
	struct frame_msg m;
	int r = store_read_msg(s, store_idx_find(s, v), &m);

	if (r == 0) {
		log_msg(LOG_DEBUG, "%s: message %s stored twice", s->log_path,
		    id);
		frame_msg_clear(&m);
		return 0;
	}
	if (r == 1)
		store_idx_add(s, id, v, off, len, ts);
	return r == 1 ? 0 : -1;
}

int
store_log_line(struct store *s, const char *line, size_t len, uint64_t off,
    int last, const char **why)
{
	char id[PAPO_MSGID_LEN + 1];
	struct frame f;
	enum frame_err fe;
	uint64_t v, ts;
	int rc = 1;

	/* A crash can damage only the last line, which is decoded in full.
	 * A line before it that has the shape frame_encode gives (type and
	 * id first, a "ts", the signature last) is taken from that shape
	 * alone, which keeps opening a long log fast; store_get decodes it
	 * when it is read.  Any other line is decoded in full too. */
	if (len >= sizeof(ret_prefix) - 1 &&
	    memcmp(line, ret_prefix, sizeof(ret_prefix) - 1) == 0)
		return ret_line(s, line, len, off, why);
	if (!last) {
		if (store_fast_msg(line, len, id, &v, &ts)) {
			if (store_idx_reserve(s) == -1)
				return -1;
			if (store_idx_add(s, id, v, off, len, ts) == 0 &&
			    twice(s, id, v, off, len, ts) == -1)
				return -1;
			return 0;
		}
		if (len >= sizeof(ack_prefix) - 1 &&
		    memcmp(line, ack_prefix, sizeof(ack_prefix) - 1) == 0 &&
		    ends_with_sig(line, len) && ack_fast_id(line, len, &v)) {
			s->acks++;
			return ack_note(s, v, off, len);
		}
	}
	fe = frame_decode(&s->k, line, len, FRAME_V3 | FRAME_TRUSTED, &f);
	if (fe != FRAME_OK) {
		*why = frame_strerror(fe);
		return 1;
	}
	switch (f.type) {
	case FRAME_MSG:
		if (!sec_msgid_valid(f.u.msg.id, &v)) {
			*why = "malformed message id";
			break;
		}
		if (store_idx_reserve(s) == -1) {
			rc = -1;
			break;
		}
		rc = 0;
		if (store_idx_add(s, f.u.msg.id, v, off, len, f.u.msg.ts) == 0 &&
		    twice(s, f.u.msg.id, v, off, len, f.u.msg.ts) == -1)
			rc = -1;
		break;
	case FRAME_ACK:
		s->acks++;
		rc = 0;
		if (sec_msgid_valid(f.u.ack.id, &v))
			rc = ack_note(s, v, off, len);
		break;
	default:
		*why = "not a msg or ack frame";
		break;
	}
	frame_clear(&f);
	return rc;
}

/* Encodes f as one log line, '\n' included, into b. */
static int
encode_line(const struct frame *f, struct buf *b)
{
	if (frame_encode(f, b) == -1 || buf_u8(b, '\n') == -1) {
		errno = b->toobig ? E2BIG : EINVAL;
		return -1;
	}
	return 0;
}

/*
 * Writes one line of a batch, at once but not durable (store_commit).
 * The batch's first line notes what the store was before it.  A failed
 * write is cut back off, leaving the batch's earlier lines as they were.
 */
static int
store_stage(struct store *s, const void *p, size_t n)
{
	int saved;

	if (s->batch_lines == 0) {
		s->batch_off = s->log_size;
		s->batch_nent = s->nent;
		s->batch_nackv = s->nackv;
		s->batch_acks = s->acks;
		store_ix_begin(s);
	}
	if (store_write_all(s->log_fd, p, n) == 0) {
		s->batch_lines++;
		return 0;
	}
	saved = errno;
	if (ftruncate(s->log_fd, (off_t)s->log_size) == -1)
		log_msg(LOG_ERROR, "cannot undo a failed append: %s",
		    strerror(errno));
	if (s->batch_lines == 0)
		store_ix_end(s, 1);
	errno = saved;
	return -1;
}

/* The syncs of a commit: the outbox's new ids first, so that a crash
 * between the two leaves an id whose message is not in the log (dropped
 * at the next start), never a message sent here that no outbox sends
 * again.  0, or -1 with errno. */
static int
commit_sync(struct store *s)
{
	if (s->sync_fail > 0 || store_test_fail("sync")) {
		s->sync_fail -= s->sync_fail > 0;
		errno = EIO;
		return -1;
	}
	if (s->ob_unsynced && fdatasync(s->ob_fd) == -1)
		return -1;
	s->ob_unsynced = 0;
	return s->batch_lines == 0 ? 0 : fdatasync(s->log_fd);
}

int
store_commit(struct store *s)
{
	int rc = store_commit_now(s);

	if (s->commit_lost) {
		s->commit_lost = 0;
		if (rc == 0)
			errno = EIO;
		rc = -1;
	}
	return rc;
}

int
store_commit_now(struct store *s)
{
	int saved;

	if (s->batch_lines == 0 && !s->ob_unsynced)
		return 0;
	if (commit_sync(s) == 0) {
		if (s->batch_lines > 0)
			store_ix_end(s, 1);
		s->batch_lines = 0;
		return 0;
	}
	saved = errno;
	if (s->batch_lines == 0) {
		errno = saved;
		return -1;
	}
	log_msg(LOG_ERROR, "%s: cannot sync %zu new line%s (%s): they are cut "
	    "off again and nothing was said of them", s->log_path,
	    s->batch_lines, s->batch_lines == 1 ? "" : "s", strerror(saved));
	if (ftruncate(s->log_fd, (off_t)s->batch_off) == -1 ||
	    fdatasync(s->log_fd) == -1)
		log_msg(LOG_ERROR, "cannot undo a failed append: %s",
		    strerror(errno));
	store_ix_end(s, 0);
	store_idx_cut(s, s->batch_nent);
	s->nackv = s->batch_nackv;
	s->acks = s->batch_acks;
	s->log_size = s->batch_off;
	s->batch_lines = 0;
	s->commit_lost = 1;
	errno = saved;
	return -1;
}

size_t
store_uncommitted(const struct store *s)
{
	return s->batch_lines + (size_t)s->ob_unsynced;
}

void
store_test_sync_fail(struct store *s, int n)
{
	s->sync_fail = n;
}

int
store_add_msg(struct store *s, const struct frame_msg *m)
{
	struct frame f;
	struct buf b;
	uint64_t v;
	int rc = -1;

	buf_init(&b, STORE_LINE_MAX + 1);
	if (!sec_msgid_valid(m->id, &v)) {
		errno = EINVAL;
		goto out;
	}
	if (store_idx_find(s, v) != NULL) {
		rc = 0;
		goto out;
	}
	if (store_idx_reserve(s) == -1)
		goto out;
	/* The frame borrows m's body for the encoding; nothing is freed. */
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	f.u.msg = *m;
	if (encode_line(&f, &b) == -1)
		goto out;
	if (store_test_fail("log") || store_stage(s, b.p, b.len) == -1)
		goto out;
	store_idx_add(s, m->id, v, s->log_size, b.len - 1, m->ts);
	s->log_size += b.len;
	store_ix_add(s, m, v);
	rc = 1;
out:
	buf_free(&b);
	return rc;
}

int
store_add_ack(struct store *s, const struct frame_ack *a)
{
	struct frame f;
	struct buf b;
	uint64_t v;
	int rc = -1;

	buf_init(&b, STORE_LINE_MAX + 1);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_ACK;
	f.u.ack = *a;
	if (encode_line(&f, &b) == -1)
		goto out;
	if (store_stage(s, b.p, b.len) == -1)
		goto out;
	/* Out of memory, the receipt is on disk but not shown until the
	 * next start; the append itself succeeded. */
	if (sec_msgid_valid(a->id, &v))
		(void)ack_note(s, v, s->log_size, b.len - 1);
	s->log_size += b.len;
	s->acks++;
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

int
store_has(const struct store *s, const char *id)
{
	uint64_t v;

	if (!sec_msgid_valid(id, &v))
		return 0;
	return store_idx_find(s, v) != NULL;
}

size_t
store_damaged(struct store *s)
{
	size_t n = s->damaged;

	s->damaged = 0;
	return n;
}

void
store_digest(const struct store *s, uint8_t out[PAPO_KEY_LEN])
{
	memcpy(out, s->digest, sizeof(s->digest));
}

void
store_stats(const struct store *s, struct store_stats *out)
{
	out->msgs = s->nent;
	out->floor = s->floor;
	out->gone = s->gone;
	out->acks = s->acks;
	out->dropped = s->dropped;
	out->outbox = s->nob;
}
