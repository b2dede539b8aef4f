/*
 * store_search.c: the store's search index (node/store/index.h) kept
 * beside its log: opened with the store and checked against the log by
 * its mark (count, sum and last of the ids it holds); when the log
 * holds exactly what the index holds and more after it, only what is
 * missing is added (a crash between an append and its add).  Otherwise,
 * or when SQLite finds it damaged, it is rebuilt into search.db.tmp and
 * renamed over search.db, so a crash mid-rebuild leaves the old one or
 * the new one.
 *
 * A log of at most IX_INLINE_MAX messages is checked (quick_check) and
 * rebuilt at once.  A longer one's work goes to a job beside the room,
 * on a thread of its own, and the room goes on:
 *  - a rebuild reads a copy of the log's entries and a descriptor of
 *    the log as it was; search answers 503 with its progress meanwhile,
 *    and the messages appended meanwhile are added when it is done, by
 *    the same check of the mark;
 *  - a check reads the index in use on a connection of its own while
 *    search answers from it; an index it finds damaged is rebuilt.
 * Jobs end on the store's channel (store_ix_fd, store_ix_ready).
 *
 * Each message appended is added at once; retention's compaction
 * removes what it dropped.  A failing index never fails the store:
 * search then answers that it is unavailable, and the next open
 * rebuilds it.  Node thread, but for the jobs' threads (job_main and
 * what it calls).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/chan.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/store/store_int.h"
#include "node/wire/private.h"

#define IX_BATCH 5000          /* messages one rebuild transaction adds */
#define IX_INLINE_MAX 10000    /* a log rebuilt at once (about 0.3 s);
                                * tests: PAPO_TEST_INDEX_INLINE */
#define STORE_FINDS_MAX 8      /* searches of a room running or waiting */

/* What a fill reads: the log's entries and the log they point into.
 * The node's own store for a fill at open; a rebuild thread's copy. */
struct ix_src {
	int fd;
	const char *log_path;
	const struct room_keys *k;
	const struct identity *me;   /* who reads private messages */
	const struct ent *ent;
	size_t nent;
	atomic_size_t *done;     /* progress, or NULL */
	atomic_int *stop;        /* the store closes: give up; or NULL */
};

/* What a job is. */
enum job_kind {
	JOB_BUILD,               /* a rebuild */
	JOB_CHECK,               /* a quick_check of the index in use */
	JOB_FIND                 /* a search (struct store_find) */
};

/* A job on its thread, a rebuild, a check or a search: everything it
 * reads or writes is its own but end, the store's channel. */
struct ix_job {
	pthread_t thread;
	enum job_kind kind;
	struct chan *end;        /* gets link when it is over */
	struct chan_link link;
	struct ix_src src;
	struct room_keys k;
	struct ent *ent;
	char *log_path;
	char path[PATH_MAX];
	atomic_size_t done;
	atomic_int stop;
	int rc;                  /* a rebuild: 0 or -1; a check: ix_check's */
	double secs;             /* how long a check ran */
	char err[PAPO_ERR_LEN];
};

/*
 * A search beside the node thread (store.h, store_find_start): its own
 * copy of the query, read on a read-only connection of its own (WAL
 * lets it read while the node adds), the hits it found.  The store's
 * searches wait in a queue, the first one running.
 */
enum find_state { FIND_WAITING, FIND_RUNNING, FIND_OVER };

struct store_find {
	struct ix_job job;       /* first: chan_item gives the job */
	struct ix_query q;
	char *text, *from_id, *from_name, *to_id;
	char thread[PAPO_MSGID_LEN + 1];
	struct ix_hit *hits;     /* room for q.limit */
	long n;
	int more, ranked, code;
	enum find_state state;
	int orphan;              /* its asker let go: freed when it ends */
	struct store_find *next; /* the store's queue */
};

/* What ix_open_for is asked. */
enum ix_how {
	IX_OPEN,                 /* the store opens, or the index is lost */
	IX_BUILT,                /* a rebuild beside the room is done */
	IX_DAMAGED               /* a check found it damaged */
};

/* path with its last part (log.jsonl) replaced by name, into out. */
static int
ix_path(const char *log_path, const char *name, char out[PATH_MAX])
{
	const char *slash = strrchr(log_path, '/');
	int dir = slash != NULL ? (int)(slash - log_path) + 1 : 0;
	int n = snprintf(out, PATH_MAX, "%.*s%s", dir, log_path, name);

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
ix_read_msg(const struct ix_src *src, const struct ent *e,
    struct frame_msg *out)
{
	struct frame f;
	char *line;
	uint64_t v;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if ((line = malloc(e->len ? e->len : 1)) == NULL)
		return -1;
	if (store_read_all(src->fd, line, e->len, e->off) == -1)
		goto out;
	rc = 1;
	if (frame_decode(src->k, line, e->len, FRAME_V3 | FRAME_TRUSTED,
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

/*
 * Adds m as member me sees it (private.h, priv_view): a private message
 * of ours by its text, one between two others by no row at all, only
 * its place in the mark, so that nobody here finds it nor counts it.
 */
static int
ix_add_seen(char err[PAPO_ERR_LEN], struct ix *x, const struct identity *me,
    const struct room_keys *k, const struct frame_msg *m, uint64_t v)
{
	struct frame_msg view;
	struct buf inner;
	int r;

	switch (priv_view(me, k->id, m, &view, &inner)) {
	case PRIV_NOT_PRIVATE:
		return ix_add(err, x, m, v);
	case PRIV_OK:
		r = ix_add(err, x, &view, v);
		buf_free(&inner);
		return r;
	default:
		return ix_skip(err, x, v);
	}
}

/* Adds the log's messages from ent[from] on, in batches.  0 or -1. */
static int
ix_fill(char err[PAPO_ERR_LEN], const struct ix_src *src, struct ix *x,
    size_t from)
{
	size_t i = from, inbatch = 0;
	int rc = -1;

	if (ix_begin(x) == -1) {
		err_set(err, "%s", "search index: cannot begin");
		return -1;
	}
	while (i < src->nent) {
		struct frame_msg m;
		uint64_t v = src->ent[i].id;
		int r = ix_read_msg(src, &src->ent[i], &m);

		if (r == -1) {
			err_set(err, "cannot read %s: %s", src->log_path,
			    strerror(errno));
			goto out;
		}
		if (r == 1) {
			r = ix_skip(err, x, v);
		} else {
			r = ix_add_seen(err, x, src->me, src->k, &m, v);
			frame_msg_clear(&m);
		}
		if (r == -1)
			goto out;
		i++;
		if (++inbatch == IX_BATCH) {
			inbatch = 0;
			if (src->done != NULL)
				atomic_store(src->done, i);
			if (src->stop != NULL && atomic_load(src->stop)) {
				err_set(err, "%s", "search index: rebuild "
				    "stopped");
				goto out;
			}
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
ix_rebuild(char err[PAPO_ERR_LEN], const struct ix_src *src, const char *path)
{
	char tmp[PATH_MAX];
	struct ix_mark mark;
	struct ix *x;
	uint64_t t0 = loop_now_ns();

	if (ix_path(src->log_path, "search.db.tmp", tmp) == -1) {
		err_set(err, "%s", "search index: path too long");
		return -1;
	}
	ix_unlink(tmp);
	if ((x = ix_open(err, tmp, &mark)) == NULL)
		return -1;
	if (ix_bulk(x) == -1 || ix_fill(err, src, x, 0) == -1) {
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
	log_msg(LOG_INFO, "%s: search index rebuilt from the log: %zu "
	    "messages in %.2f s", path, src->nent,
	    (double)(loop_now_ns() - t0) / 1e9);
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


/* Logs of up to this many messages are rebuilt at once. */
static size_t
inline_max(void)
{
	const char *v = getenv("PAPO_TEST_INDEX_INLINE");

	return v != NULL && v[0] != '\0' ? (size_t)strtoul(v, NULL, 10) :
	    IX_INLINE_MAX;
}

/* The node's own store as a fill's source. */
static void
ix_src_of(struct store *s, struct ix_src *src)
{
	memset(src, 0, sizeof(*src));
	src->fd = s->log_fd;
	src->log_path = s->log_path;
	src->k = &s->k;
	src->me = s->me;
	src->ent = s->ent;
	src->nent = s->nent;
}

/* A search on its thread: the index opened read only, searched within
 * its bound in time (q.ms), closed. */
static void
find_run(struct store_find *f)
{
	struct ix *x;

	f->n = -1;
	f->code = 503;
	if ((x = ix_open_ro(f->job.err, f->job.path)) == NULL)
		return;
	f->n = ix_search(f->job.err, x, &f->q, f->hits, &f->more, &f->ranked,
	    &f->code);
	ix_close(x);
}

static void *
job_main(void *arg)
{
	struct ix_job *b = arg;
	uint64_t t0 = loop_now_ns();

	/* A rebuild logs its own time. */
	if (b->kind == JOB_CHECK) {
		b->rc = ix_check(b->err, b->path, &b->stop);
		b->secs = (double)(loop_now_ns() - t0) / 1e9;
	} else if (b->kind == JOB_FIND) {
		find_run((struct store_find *)b);
	} else {
		b->rc = ix_rebuild(b->err, &b->src, b->path);
	}
	chan_push(b->end, &b->link);
	return NULL;
}

static void
job_free(struct ix_job *b)
{
	if (b == NULL)
		return;
	if (b->kind == JOB_FIND) {
		struct store_find *f = (struct store_find *)b;

		if (f->hits != NULL && f->n > 0)
			ix_hits_free(f->hits, (size_t)f->n);
		free(f->hits);
		free(f->text);
		free(f->from_id);
		free(f->from_name);
		free(f->to_id);
	}
	if (b->src.fd != -1)
		close(b->src.fd);
	free(b->ent);
	free(b->log_path);
	free(b);
}

/* A new job for path, its end the store's channel (made at the first);
 * size bytes, a struct store_find for a search. */
static struct ix_job *
job_new(struct store *s, const char *path, enum job_kind kind, size_t size)
{
	struct ix_job *b;

	if (s->ix_end == NULL && (s->ix_end = chan_new()) == NULL)
		return NULL;
	if ((b = calloc(1, size)) == NULL)
		return NULL;
	b->kind = kind;
	b->end = s->ix_end;
	b->src.fd = -1;
	snprintf(b->path, sizeof(b->path), "%s", path);
	return b;
}

/* Starts the check of the index at path, in use, on its own thread; a
 * check that cannot start is left out, said in the log. */
static void
check_start(struct store *s, const char *path)
{
	struct ix_job *b;

	if (s->check != NULL)
		return;              /* one is reading it already */
	errno = ENOMEM;
	if ((b = job_new(s, path, JOB_CHECK, sizeof(*b))) == NULL ||
	    (errno = pthread_create(&b->thread, NULL, job_main, b)) != 0) {
		log_msg(LOG_WARN, "%s: the search index is not checked: %s",
		    path, strerror(errno));
		job_free(b);
		return;
	}
	s->check = b;
}

/* The check under way, if any, is moot (what it reads is replaced): it
 * stops soon, and store_ix_ready takes it without a word. */
static void
check_stop(struct store *s)
{
	if (s->check != NULL)
		atomic_store(&s->check->stop, 1);
}

/* Starts the rebuild of the index at path on its own thread.  0, or -1
 * with err. */
static int
build_start(char err[PAPO_ERR_LEN], struct store *s, const char *path)
{
	struct ix_job *b;

	errno = ENOMEM;
	if ((b = job_new(s, path, JOB_BUILD, sizeof(*b))) == NULL ||
	    (b->ent = malloc((s->nent + 1) * sizeof(*b->ent))) == NULL ||
	    (b->log_path = strdup(s->log_path)) == NULL ||
	    (b->src.fd = fcntl(s->log_fd, F_DUPFD_CLOEXEC, 0)) == -1)
		goto fail;
	memcpy(b->ent, s->ent, s->nent * sizeof(*b->ent));
	b->k = s->k;
	b->src.log_path = b->log_path;
	b->src.k = &b->k;
	b->src.me = s->me;
	b->src.ent = b->ent;
	b->src.nent = s->nent;
	b->src.done = &b->done;
	b->src.stop = &b->stop;
	if ((errno = pthread_create(&b->thread, NULL, job_main, b)) != 0)
		goto fail;
	s->build = b;
	log_msg(LOG_INFO, "%s: the search index is being rebuilt from the "
	    "log (%zu messages), beside the room", path, s->nent);
	return 0;
fail:
	err_set(err, "cannot start the search index's rebuild: %s",
	    strerror(errno));
	job_free(b);
	return -1;
}

/*
 * store_ix_open, and what a job's end asks (enum ix_how).  An index
 * opened for a log longer than those rebuilt at once is checked beside
 * the room; one just rebuilt is whole, and opened without reading it
 * all again.
 */
static void
ix_open_for(struct store *s, enum ix_how how)
{
	char err[PAPO_ERR_LEN], path[PATH_MAX];
	struct ix_mark mark;
	struct ix_src src;
	size_t from;
	int later = how == IX_OPEN && s->nent > inline_max();

	if (s->build != NULL)
		return;              /* store_ix_ready opens it */
	store_ix_close(s);
	if (ix_path(s->log_path, "search.db", path) == -1)
		return;
	ix_src_of(s, &src);
	if (how == IX_DAMAGED) {
		/* store_ix_ready said why. */
	} else if ((s->ix = how == IX_OPEN && !later ?
	    ix_open(err, path, &mark) : ix_open_unchecked(err, path,
	    &mark)) != NULL && ix_prefix(s, &mark, &from)) {
		if (from < s->nent) {
			log_msg(LOG_INFO, "%s: %zu messages of the log added "
			    "to the search index", path, s->nent - from);
			if (ix_fill(err, &src, s->ix, from) == -1)
				goto rebuild;
		}
		if (later)
			check_start(s, path);
		return;
	} else if (s->ix != NULL) {
		log_msg(LOG_INFO, "%s: the search index does not match the "
		    "log; rebuilt", path);
	} else {
		log_msg(LOG_WARN, "%s; rebuilt from the log", err);
	}
rebuild:
	store_ix_close(s);
	check_stop(s);
	if (s->nent > inline_max()) {
		if (build_start(err, s, path) == -1)
			log_msg(LOG_WARN, "%s: search is unavailable", err);
		return;
	}
	if (ix_rebuild(err, &src, path) == -1 ||
	    (s->ix = ix_open(err, path, &mark)) == NULL) {
		log_msg(LOG_WARN, "%s: search is unavailable", err);
		s->ix = NULL;
	}
}

void
store_ix_open(struct store *s)
{
	ix_open_for(s, IX_OPEN);
}

int
store_ix_fd(const struct store *s)
{
	return s->build != NULL || s->check != NULL || s->finds != NULL ?
	    chan_fd(s->ix_end) : -1;
}

/* The first search waiting, started on its thread; one that cannot
 * start is over with its error. */
static void
find_next(struct store *s)
{
	struct store_find *f;

	while ((f = s->finds) != NULL && f->state == FIND_WAITING) {
		f->state = FIND_RUNNING;
		if ((errno = pthread_create(&f->job.thread, NULL, job_main,
		    f)) == 0)
			return;
		f->state = FIND_OVER;
		f->n = -1;
		f->code = 500;
		err_set(f->job.err, "cannot start the search: %s",
		    strerror(errno));
		s->finds = f->next;
		f->next = NULL;
	}
}

/* A search is over: out of the queue (freed when its asker let go),
 * and the next started. */
static void
find_done(struct store *s, struct store_find *f)
{
	struct store_find **pp;

	for (pp = &s->finds; *pp != NULL && *pp != f; pp = &(*pp)->next)
		;
	if (*pp == f)
		*pp = f->next;
	f->next = NULL;
	f->state = FIND_OVER;
	if (f->orphan)
		job_free(&f->job);
	find_next(s);
}

/* A job is over: what it found acted on. */
static void
job_done(struct store *s, struct ix_job *b)
{
	pthread_join(b->thread, NULL);
	if (b->kind == JOB_FIND) {
		find_done(s, (struct store_find *)b);
		return;
	}
	if (b == s->check) {
		s->check = NULL;
		if (atomic_load(&b->stop)) {
			/* moot: what it read was replaced */
		} else if (b->rc == 1) {
			log_msg(LOG_INFO, "%s: the search index is whole "
			    "(checked beside the room in %.2f s)", b->path,
			    b->secs);
		} else if (b->rc == 0) {
			log_msg(LOG_WARN, "%s; rebuilt from the log", b->err);
			ix_open_for(s, IX_DAMAGED);
		} else {
			log_msg(LOG_INFO, "%s: not checked", b->err);
		}
	} else {
		s->build = NULL;
		if (b->rc == -1)
			log_msg(LOG_WARN, "%s: search is unavailable until "
			    "the next start", b->err);
		else
			ix_open_for(s, IX_BUILT);  /* adds what came meanwhile */
	}
	job_free(b);
}

void
store_ix_ready(struct store *s)
{
	struct chan_link *l;

	if (s->ix_end == NULL)
		return;
	while ((l = chan_pop(s->ix_end)) != NULL)
		job_done(s, chan_item(l, struct ix_job, link));
}

void
store_ix_close(struct store *s)
{
	ix_close(s->ix);
	s->ix = NULL;
}

void
store_ix_stop(struct store *s)
{
	struct ix_job *job[2] = { s->build, s->check };

	store_ix_close(s);
	for (int i = 0; i < 2; i++)
		if (job[i] != NULL)
			atomic_store(&job[i]->stop, 1);
	for (int i = 0; i < 2; i++)
		if (job[i] != NULL)
			pthread_join(job[i]->thread, NULL);
	/* The searches left are those whose askers let go (search_free
	 * runs before the store closes): the running one stopped. */
	while (s->finds != NULL) {
		struct store_find *f = s->finds;

		s->finds = f->next;
		if (f->state == FIND_RUNNING) {
			atomic_store(&f->job.stop, 1);
			pthread_join(f->job.thread, NULL);
		}
		job_free(&f->job);
	}
	/* Their links are forgotten with the channel; the jobs freed here. */
	chan_free(s->ix_end, NULL);
	s->ix_end = NULL;
	for (int i = 0; i < 2; i++)
		job_free(job[i]);
	s->build = s->check = NULL;
}

void
store_ix_add(struct store *s, const struct frame_msg *m, uint64_t v)
{
	char err[PAPO_ERR_LEN];

	if (s->ix == NULL)
		return;
	if (ix_add_seen(err, s->ix, s->me, &s->k, m, v) == -1) {
		log_msg(LOG_WARN, "%s; search is unavailable until the next "
		    "start", err);
		store_ix_close(s);
	}
}

void
store_ix_begin(struct store *s)
{
	if (s->ix != NULL && ix_begin(s->ix) == -1) {
		log_msg(LOG_WARN, "search index: cannot begin a transaction; "
		    "search is unavailable until the next start");
		store_ix_close(s);
	}
}

void
store_ix_end(struct store *s, int durable)
{
	if (s->ix == NULL)
		return;
	if (durable ? ix_commit(s->ix) == 0 : ix_rollback(s->ix) == 0)
		return;
	log_msg(LOG_WARN, "search index: cannot %s a transaction; search is "
	    "unavailable until the next start", durable ? "commit" : "roll back");
	store_ix_close(s);
}

void
store_ix_compacted(struct store *s, char (*ids)[PAPO_MSGID_LEN + 1],
    size_t n)
{
	char err[PAPO_ERR_LEN];
	struct ix_mark mark = { 0, 0, 0 };

	if (s->ix != NULL) {
		for (size_t i = 0; i < s->nent; i++)
			mark.sum += s->ent[i].id;
		mark.count = s->nent;
		mark.last = s->nent > 0 ? s->ent[s->nent - 1].id : 0;
		if (ix_drop(err, s->ix, ids, n, &mark) == 0)
			return;
		log_msg(LOG_WARN, "%s; rebuilt from the log", err);
	}
	store_ix_open(s);
}

/* Whether search cannot be answered now: 1 with err and *code 503. */
static int
ix_unavailable(char err[PAPO_ERR_LEN], const struct store *s, int *code)
{
	if (s->build != NULL) {
		*code = 503;
		err_set(err, "the search index is being rebuilt from the log "
		    "(%zu of %zu messages); search again in a moment",
		    atomic_load(&s->build->done), s->build->src.nent);
		return 1;
	}
	if (s->ix == NULL) {
		*code = 503;
		err_set(err, "%s", "the search index is unavailable (see the "
		    "daemon's log); it is rebuilt at the next start");
		return 1;
	}
	return 0;
}

long
store_search(char err[PAPO_ERR_LEN], struct store *s,
    const struct ix_query *q, struct ix_hit *out, int *more, int *ranked,
    int *code)
{
	if (ix_unavailable(err, s, code))
		return -1;
	return ix_search(err, s->ix, q, out, more, ranked, code);
}

/* A copy of q's text t into *out (NULL stays NULL): 0 or -1. */
static int
find_dup(const char *t, char **out, const char **field)
{
	*out = NULL;
	*field = NULL;
	if (t == NULL)
		return 0;
	if ((*out = strdup(t)) == NULL)
		return -1;
	*field = *out;
	return 0;
}

/* Test builds may shorten a search's bound (PAPO_TEST_SEARCH_MS). */
static unsigned
find_ms(void)
{
#ifdef PAPO_TESTING
	const char *v = getenv("PAPO_TEST_SEARCH_MS");

	if (v != NULL && v[0] >= '1' && v[0] <= '9')
		return (unsigned)strtoul(v, NULL, 10);
#endif
	return IX_TIME_MS;
}

struct store_find *
store_find_start(char err[PAPO_ERR_LEN], struct store *s,
    const struct ix_query *q, int *code)
{
	char path[PATH_MAX];
	struct store_find *f = NULL, **pp;
	size_t waiting = 0;

	if (ix_unavailable(err, s, code))
		return NULL;
	*code = 503;
	for (pp = &s->finds; *pp != NULL; pp = &(*pp)->next)
		if (!(*pp)->orphan)
			waiting++;
	if (waiting >= STORE_FINDS_MAX) {
		err_set(err, "%d searches of this room are running or "
		    "waiting: search again in a moment", STORE_FINDS_MAX);
		return NULL;
	}
	*code = 500;
	if (ix_path(s->log_path, "search.db", path) == -1 ||
	    (f = (struct store_find *)job_new(s, path, JOB_FIND,
	    sizeof(*f))) == NULL)
		goto oom;
	f->q = *q;
	f->q.stop = &f->job.stop;
	f->q.ms = find_ms();
	if (q->thread != NULL) {
		snprintf(f->thread, sizeof(f->thread), "%s", q->thread);
		f->q.thread = f->thread;
	}
	if (find_dup(q->text, &f->text, &f->q.text) == -1 ||
	    find_dup(q->from_id, &f->from_id, &f->q.from_id) == -1 ||
	    find_dup(q->from_name, &f->from_name, &f->q.from_name) == -1 ||
	    find_dup(q->to_id, &f->to_id, &f->q.to_id) == -1 ||
	    q->limit == 0 || q->limit > IX_LIMIT_MAX + IX_RANKED_MAX ||
	    (f->hits = calloc(q->limit, sizeof(*f->hits))) == NULL)
		goto oom;
	f->state = FIND_WAITING;
	*pp = f;
	if (s->finds == f)
		find_next(s);
	if (f->state == FIND_OVER) {
		/* It could not start: said as its result. */
		*code = f->code;
		err_set(err, "%s", f->job.err);
		job_free(&f->job);
		return NULL;
	}
	return f;
oom:
	job_free(f != NULL ? &f->job : NULL);
	err_set(err, "%s", "out of memory");
	return NULL;
}

int
store_find_over(const struct store_find *f)
{
	return f->state == FIND_OVER;
}

long
store_find_result(struct store_find *f, char err[PAPO_ERR_LEN],
    struct ix_hit **hits, int *more, int *ranked, int *code)
{
	*hits = f->hits;
	*more = f->more;
	*ranked = f->ranked;
	*code = f->code;
	if (f->n < 0)
		err_set(err, "%s", f->job.err);
	return f->n;
}

void
store_find_free(struct store *s, struct store_find *f)
{
	struct store_find **pp;

	if (f == NULL)
		return;
	if (f->state == FIND_RUNNING) {
		/* Stopped at SQLite's next look; freed when it ends. */
		f->orphan = 1;
		atomic_store(&f->job.stop, 1);
		return;
	}
	for (pp = &s->finds; *pp != NULL && *pp != f; pp = &(*pp)->next)
		;
	if (*pp == f)
		*pp = f->next;
	job_free(&f->job);
}
