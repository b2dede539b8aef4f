/*
 * store_compact.c: retention (store.h): PAPO_KEEP's syntax, the floor
 * under which nothing is taken, when a compaction is due, and the
 * crash-safe rewrite of log.jsonl that keeps the newest messages (and
 * every one the outbox still holds) under a first retention line, then
 * replaces the log and reloads its index.  Node thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "node/store/store_int.h"

#define DAY_MS (24ull * 3600 * 1000)
#define KEEP_COUNT_MAX 100000000ull    /* PAPO_KEEP's largest count */
#define KEEP_DAYS_MAX 36500ull         /* and days: a hundred years */
#define COMPACT_BUF (1024 * 1024)      /* bytes written at once */

/* The rewrite under way: what store_compact hands replay's callback. */
struct compaction {
	int fd;               /* the new log, being written */
	char *b;              /* lines not written yet */
	size_t len;
	uint64_t floor;
	uint64_t *keep_ob;    /* the outbox's ids as numbers */
	size_t nob;
	size_t kept, dropped; /* messages */
	size_t pause_at;      /* tests: messages written before the pause */
	unsigned pause_ms;
};

int
store_keep_parse(char err[PAPO_ERR_LEN], const char *text,
    struct store_keep *k)
{
	unsigned long long n;
	char *end;

	memset(k, 0, sizeof(*k));
	if (text == NULL || text[0] == '\0')
		return 0;
	errno = 0;
	n = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || errno != 0 || n == 0 ||
	    (*end != '\0' && strcmp(end, "d") != 0) ||
	    (*end == '\0' && n > KEEP_COUNT_MAX) ||
	    (*end == 'd' && n > KEEP_DAYS_MAX)) {
		err_set(err, "PAPO_KEEP must be a count of messages (1 to "
		    "%llu, e.g. 1000) or days (1d to %llud, e.g. 30d), not "
		    "'%s'", KEEP_COUNT_MAX, KEEP_DAYS_MAX, text);
		return -1;
	}
	if (*end == 'd')
		k->ms = n * DAY_MS;
	else
		k->count = n;
	return 0;
}

int
store_below_floor(const struct store *s, uint64_t ts)
{
	return ts < s->floor;
}

/* The outbox's ids as numbers, for a rewrite's tests of each message. */
static uint64_t *
ob_values(const struct store *s)
{
	uint64_t *v = malloc((s->nob + 1) * sizeof(*v));

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < s->nob; i++)
		if (!sec_msgid_valid(s->ob[i], &v[i]))
			v[i] = UINT64_MAX;
	return v;
}

static int
in_list(const uint64_t *v, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == id)
			return 1;
	return 0;
}

static int
ts_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The floor k gives: with a count, the time of the count-th newest
 * message (all of that time are kept, so ties keep a few more); with
 * days, now less the window.  Never lower than the floor already kept.
 * -1 when out of memory.
 */
static int
new_floor(const struct store *s, const struct store_keep *k, uint64_t now_ms,
    uint64_t *floor)
{
	*floor = s->floor;
	if (k->ms != 0 && now_ms > k->ms && now_ms - k->ms > *floor)
		*floor = now_ms - k->ms;
	if (k->count != 0 && s->nent > k->count) {
		uint64_t *ts = malloc(s->nent * sizeof(*ts));

		if (ts == NULL)
			return -1;
		for (size_t i = 0; i < s->nent; i++)
			ts[i] = s->ent[i].ts;
		qsort(ts, s->nent, sizeof(*ts), ts_desc);
		if (ts[k->count - 1] > *floor)
			*floor = ts[k->count - 1];
		free(ts);
	}
	return 0;
}

int
store_compact_due(const struct store *s, const struct store_keep *k,
    uint64_t now_ms, int slack)
{
	uint64_t margin;

	if (k->count != 0) {
		margin = slack ? (k->count / 4 > 0 ? k->count / 4 : 1) : 0;
		return s->nent > k->count + margin;
	}
	if (k->ms == 0 || now_ms <= k->ms)
		return 0;
	margin = slack ? k->ms / 10 : 0;
	if (slack && margin < 3600 * 1000)
		margin = 3600 * 1000;
	if (now_ms - k->ms <= margin)
		return 0;
	for (size_t i = 0; i < s->nent; i++) {
		if (s->ent[i].ts >= now_ms - k->ms - margin)
			continue;
		/* Own messages still to deliver stay whatever their age. */
		for (size_t j = 0; j < s->nob; j++) {
			uint64_t v;

			if (sec_msgid_valid(s->ob[j], &v) && v == s->ent[i].id)
				goto next;
		}
		return 1;
next:		;
	}
	return 0;
}

static int
cw_flush(struct compaction *c)
{
	if (store_write_all(c->fd, c->b, c->len) == -1)
		return -1;
	c->len = 0;
	return 0;
}

static int
cw_put(struct compaction *c, const char *line, size_t len)
{
	if (c->len + len + 1 > COMPACT_BUF && cw_flush(c) == -1)
		return -1;
	if (len + 1 > COMPACT_BUF)
		return store_write_all(c->fd, line, len) == -1 ||
		    store_write_all(c->fd, "\n", 1) == -1 ? -1 : 0;
	memcpy(c->b + c->len, line, len);
	c->b[c->len + len] = '\n';
	c->len += len + 1;
	return 0;
}

/* Whether the message of id v stays: young enough, or still ours to
 * deliver. */
static int
cw_keeps(const struct store *s, const struct compaction *c, uint64_t v)
{
	const struct ent *e = store_idx_find(s, v);

	return e != NULL && (e->ts >= c->floor || in_list(c->keep_ob, c->nob, v));
}

/* Whether a message line at off is the copy the index holds: a second
 * copy, or a damaged one a later copy replaced, is left out. */
static int
cw_indexed(const struct store *s, uint64_t v, uint64_t off)
{
	const struct ent *e = store_idx_find(s, v);

	return e != NULL && e->off == off;
}

/*
 * replay's callback for a rewrite: copies each line that stays.  The
 * log was read whole at open, so a line that does not read now (one
 * skipped then) is left out, never cut: this never returns 1.
 */
static int
compact_line(struct store *s, const char *line, size_t len, uint64_t off,
    int last, const char **why)
{
	struct compaction *c = s->cw;
	char id[PAPO_MSGID_LEN + 1];
	struct frame f;
	uint64_t v, ts;
	int keep = 0, msg = 0;

	(void)last;
	(void)why;
	if (store_fast_msg(line, len, id, &v, &ts)) {
		keep = cw_keeps(s, c, v) && cw_indexed(s, v, off);
		msg = 1;
	} else if (frame_decode(&s->k, line, len, FRAME_V3 | FRAME_TRUSTED, &f) ==
	    FRAME_OK) {
		if (f.type == FRAME_MSG && sec_msgid_valid(f.u.msg.id, &v)) {
			keep = cw_keeps(s, c, v) && cw_indexed(s, v, off);
			msg = 1;
		} else if (f.type == FRAME_ACK &&
		    sec_msgid_valid(f.u.ack.id, &v))
			keep = cw_keeps(s, c, v);
		frame_clear(&f);
	}
	if (!keep) {
		c->dropped += msg;
		return 0;
	}
	if (cw_put(c, line, len) == -1)
		return -1;
	if (msg && ++c->kept == c->pause_at && c->pause_ms > 0) {
		/* Tests only (PAPO_TEST_COMPACT_PAUSE_MS): half the new log
		 * is on disk, so that a kill lands mid-rewrite. */
		if (cw_flush(c) == -1)
			return -1;
		log_msg(LOG_WARN, "compaction paused for %u ms (test setting)",
		    c->pause_ms);
		usleep(c->pause_ms * 1000u);
	}
	return 0;
}

/*
 * Forgets the index and reads the log at path again: after a rewrite.
 * On failure the store has no log descriptor, so every later append and
 * read fails (and nothing is acknowledged) rather than going to the
 * replaced file.
 */
static int
reload(char err[PAPO_ERR_LEN], struct store *s)
{
	close(s->log_fd);
	if ((s->log_fd = store_open_file(err, s->log_path)) == -1)
		return -1;
	s->nent = 0;
	s->unsorted = 0;
	s->live = 0;
	s->acks = 0;
	s->nackv = 0;
	s->floor = s->gone = 0;
	memset(s->digest, 0, sizeof(s->digest));
	if (store_idx_rehash(s, STORE_TAB_BITS0) == -1) {
		err_set(err, "cannot index %s: %s", s->log_path,
		    strerror(errno));
		goto fail;
	}
	if (store_replay(err, s, s->log_fd, s->log_path, store_log_line,
	    &s->log_size) == -1)
		goto fail;
	s->live = 1;
	return 0;
fail:
	close(s->log_fd);
	s->log_fd = -1;
	s->nent = 0;
	memset(s->tab, 0xff, ((size_t)1 << s->tabbits) * sizeof(*s->tab));
	return -1;
}

/* Test setting: PAPO_TEST_COMPACT_PAUSE_MS, at most a minute. */
static unsigned
pause_ms(void)
{
	const char *v = getenv("PAPO_TEST_COMPACT_PAUSE_MS");
	long ms = v != NULL ? strtol(v, NULL, 10) : 0;

	return ms > 0 && ms <= 60000 ? (unsigned)ms : 0;
}

long
store_compact(char err[PAPO_ERR_LEN], struct store *s,
    const struct store_keep *k, uint64_t now_ms)
{
	struct compaction c;
	char tmp[PATH_MAX + 8], head[128];
	char (*ids)[PAPO_MSGID_LEN + 1] = NULL;
	uint64_t floor, end;
	size_t drop = 0;
	int rfd = -1, n;
	long rc = -1;

	memset(&c, 0, sizeof(c));
	c.fd = -1;
	err[0] = '\0';
	/* The rewrite copies durable lines only: those waiting for their
	 * commit are committed first (a failure is kept for store_commit to
	 * tell, so that nothing held for them is said). */
	if (store_commit_now(s) == -1) {
		err_set(err, "cannot compact %s: %s", s->log_path,
		    strerror(errno));
		goto out;
	}
	if (new_floor(s, k, now_ms, &floor) == -1 ||
	    (c.keep_ob = ob_values(s)) == NULL) {
		err_set(err, "cannot compact %s: %s", s->log_path,
		    strerror(errno));
		goto out;
	}
	c.nob = s->nob;
	for (size_t i = 0; i < s->nent; i++)
		if (s->ent[i].ts < floor &&
		    !in_list(c.keep_ob, c.nob, s->ent[i].id))
			drop++;
	if (drop == 0) {
		rc = 0;
		goto out;
	}
	/* What the search index must forget after the rewrite. */
	if ((ids = malloc(drop * sizeof(*ids))) == NULL) {
		err_set(err, "cannot compact %s: %s", s->log_path,
		    strerror(errno));
		goto out;
	}
	for (size_t i = 0, j = 0; i < s->nent && j < drop; i++)
		if (s->ent[i].ts < floor &&
		    !in_list(c.keep_ob, c.nob, s->ent[i].id))
			sec_msgid_format(s->ent[i].id, ids[j++]);
	c.floor = floor;
	c.pause_ms = pause_ms();
	c.pause_at = (s->nent - drop) / 2 + 1;
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->log_path);
	/* The log is read again read-write: a torn last line (a write cut
	 * short since it was read) is cut off by the replay, as at start,
	 * which a read-only descriptor cannot do (EINVAL). */
	if ((c.b = malloc(COMPACT_BUF)) == NULL ||
	    (c.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 ||
	    (rfd = open(s->log_path, O_RDWR | O_CLOEXEC)) == -1) {
		err_set(err, "cannot compact %s: %s", s->log_path,
		    strerror(errno));
		goto out;
	}
	n = snprintf(head, sizeof(head), RET_FMT, (unsigned long long)floor,
	    (unsigned long long)(s->gone + drop));
	s->cw = &c;
	if (cw_put(&c, head, (size_t)n) == -1 ||
	    store_replay(err, s, rfd, s->log_path, compact_line, &end) == -1 ||
	    cw_flush(&c) == -1 || fsync(c.fd) == -1) {
		if (err[0] == '\0')
			err_set(err, "cannot write %s: %s", tmp,
			    strerror(errno));
		s->cw = NULL;
		goto out;
	}
	s->cw = NULL;
	if (close(c.fd) == -1) {
		c.fd = -1;
		err_set(err, "cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	c.fd = -1;
	/* From the rename on, the new log is the log. */
	if (rename(tmp, s->log_path) == -1) {
		err_set(err, "cannot replace %s: %s", s->log_path,
		    strerror(errno));
		goto out;
	}
	if (fs_sync_dir(s->log_path) == -1)
		log_msg(LOG_WARN, "cannot sync the directory of %s: %s",
		    s->log_path, strerror(errno));
	if (reload(err, s) == -1)
		goto out;
	store_ix_compacted(s, ids, drop);
	rc = (long)drop;
out:
	if (c.fd != -1) {
		close(c.fd);
		unlink(tmp);
	}
	if (rfd != -1)
		close(rfd);
	free(c.b);
	free(c.keep_ob);
	free(ids);
	return rc;
}
