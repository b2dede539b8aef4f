/*
 * store_search.c: the store's search index (node/store/index.h) kept
 * beside its log: opened with the store and checked against the log by
 * its mark (count, sum and last of the ids it holds); when the log
 * holds exactly what the index holds and more after it, only what is
 * missing is added (a crash between an append and its add); otherwise,
 * or when SQLite finds it damaged, it is rebuilt into search.db.tmp and
 * renamed over search.db, so a crash mid-rebuild leaves the old one or
 * the new one.  Each message appended is added at once.  A failing index
 * never fails the store: search then answers that it is unavailable,
 * and the next open rebuilds it.  Node thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "node/store/store_int.h"

#define IX_BATCH 5000          /* messages one rebuild transaction adds */

/* path with its last part (log.jsonl) replaced by name, into out. */
static int
ix_path(const struct store *s, const char *name, char out[PATH_MAX])
{
	const char *slash = strrchr(s->log_path, '/');
	int dir = slash != NULL ? (int)(slash - s->log_path) + 1 : 0;
	int n = snprintf(out, PATH_MAX, "%.*s%s", dir, s->log_path, name);

	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/* Removes path and its WAL files. */
static void
ix_unlink(const char *path)
{
	char side[PATH_MAX + 8];

	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-journal", path);
	unlink(side);
}

/* fsync of the file at path.  0 or -1. */
static int
ix_sync_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/*
 * Reads e's line for the index: 0 with *out, 1 when the line does not
 * decode (left in the store's index as it was: a read of history drops
 * it and asks a sync, as before there was a search index), -1 on an I/O
 * error.
 */
static int
ix_read_msg(struct store *s, const struct ent *e, struct frame_msg *out)
{
	struct frame f;
	char *line;
	uint64_t v;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if ((line = malloc(e->len ? e->len : 1)) == NULL)
		return -1;
	if (store_read_all(s->log_fd, line, e->len, e->off) == -1)
		goto out;
	rc = 1;
	if (frame_decode(&s->k, line, e->len, FRAME_V3 | FRAME_TRUSTED,
	    &f) != FRAME_OK)
		goto out;
	if (f.type != FRAME_MSG || !sec_msgid_valid(f.u.msg.id, &v) ||
	    v != e->id) {
		frame_clear(&f);
		goto out;
	}
	*out = f.u.msg;      /* the body moves to *out */
	rc = 0;
out:
	free(line);
	return rc;
}

/* Adds the log's messages from ent[from] on, in batches.  0 or -1. */
static int
ix_fill(char err[PAPO_ERR_LEN], struct store *s, struct ix *x, size_t from)
{
	size_t i = from, inbatch = 0;
	int rc = -1;

	if (ix_begin(x) == -1) {
		err_set(err, "%s", "search index: cannot begin");
		return -1;
	}
	while (i < s->nent) {
		struct frame_msg m;
		uint64_t v = s->ent[i].id;
		int r = ix_read_msg(s, &s->ent[i], &m);

		if (r == -1) {
			err_set(err, "cannot read %s: %s", s->log_path,
			    strerror(errno));
			goto out;
		}
		if (r == 1) {
			r = ix_skip(err, x, v);
		} else {
			r = ix_add(err, x, &m, v);
			frame_msg_clear(&m);
		}
		if (r == -1)
			goto out;
		i++;
		if (++inbatch == IX_BATCH) {
			inbatch = 0;
			if (ix_commit(x) == -1 || ix_begin(x) == -1) {
				err_set(err, "%s", "search index: cannot "
				    "commit");
				goto out;
			}
		}
	}
	rc = 0;
out:
	if (ix_commit(x) == -1 && rc == 0) {
		err_set(err, "%s", "search index: cannot commit");
		rc = -1;
	}
	return rc;
}

/* Builds the index from the whole log beside it, then renames it into
 * place.  0 or -1. */
static int
ix_rebuild(char err[PAPO_ERR_LEN], struct store *s, const char *path)
{
	char tmp[PATH_MAX];
	struct ix_mark mark;
	struct ix *x;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ix_path(s, "search.db.tmp", tmp) == -1) {
		err_set(err, "%s", "search index: path too long");
		return -1;
	}
	ix_unlink(tmp);
	if ((x = ix_open(err, tmp, &mark)) == NULL)
		return -1;
	if (ix_bulk(x) == -1 || ix_fill(err, s, x, 0) == -1) {
		ix_close(x);
		ix_unlink(tmp);
		return -1;
	}
	ix_close(x);
	/* Whole on disk before it takes the old one's place. */
	if (ix_sync_file(tmp) == -1) {
		err_set(err, "cannot sync %s: %s", tmp, strerror(errno));
		ix_unlink(tmp);
		return -1;
	}
	ix_unlink(path);
	if (rename(tmp, path) == -1) {
		err_set(err, "cannot rename %s: %s", tmp, strerror(errno));
		ix_unlink(tmp);
		return -1;
	}
	fs_sync_dir(path);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	log_msg(LOG_INFO, "%s: search index rebuilt from the log: %zu "
	    "messages in %.2f s", path, s->nent,
	    (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}

/*
 * Whether the index's mark is the mark of the log's first messages: the
 * index then lacks only those after them.  *from gets where they start.
 */
static int
ix_prefix(const struct store *s, const struct ix_mark *mark, size_t *from)
{
	const struct ent *e;
	uint64_t sum = 0;
	size_t k;

	/* An index made empty just now is built as a rebuild is, faster
	 * than by adds. */
	if (mark->count == 0) {
		*from = 0;
		return s->nent == 0;
	}
	if ((e = store_idx_find(s, mark->last)) == NULL)
		return 0;
	k = (size_t)(e - s->ent);
	if (k + 1 != mark->count)
		return 0;
	for (size_t i = 0; i <= k; i++)
		sum += s->ent[i].id;
	*from = k + 1;
	return sum == mark->sum;
}

void
store_ix_open(struct store *s)
{
	char err[PAPO_ERR_LEN], path[PATH_MAX];
	struct ix_mark mark;
	size_t from;

	store_ix_close(s);
	if (ix_path(s, "search.db", path) == -1)
		return;
	if ((s->ix = ix_open(err, path, &mark)) != NULL &&
	    ix_prefix(s, &mark, &from)) {
		if (from == s->nent)
			return;
		log_msg(LOG_INFO, "%s: %zu messages of the log added to the "
		    "search index", path, s->nent - from);
		if (ix_fill(err, s, s->ix, from) == 0)
			return;
	} else if (s->ix != NULL) {
		log_msg(LOG_INFO, "%s: the search index does not match the "
		    "log; rebuilt", path);
	} else {
		log_msg(LOG_WARN, "%s; rebuilt from the log", err);
	}
	store_ix_close(s);
	if (ix_rebuild(err, s, path) == -1 ||
	    (s->ix = ix_open(err, path, &mark)) == NULL) {
		log_msg(LOG_WARN, "%s: search is unavailable", err);
		s->ix = NULL;
	}
}

void
store_ix_close(struct store *s)
{
	ix_close(s->ix);
	s->ix = NULL;
}

void
store_ix_add(struct store *s, const struct frame_msg *m, uint64_t v)
{
	char err[PAPO_ERR_LEN];

	if (s->ix == NULL)
		return;
	if (ix_add(err, s->ix, m, v) == -1) {
		log_msg(LOG_WARN, "%s; search is unavailable until the next "
		    "start", err);
		store_ix_close(s);
	}
}

long
store_search(char err[PAPO_ERR_LEN], struct store *s,
    const struct ix_query *q, struct ix_hit *out, int *more, int *code)
{
	if (s->ix == NULL) {
		*code = 503;
		err_set(err, "%s", "the search index is unavailable (see the "
		    "daemon's log); it is rebuilt at the next start");
		return -1;
	}
	return ix_search(err, s->ix, q, out, more, code);
}
