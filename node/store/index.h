/*
 * index.h: a room's search index, search.db beside its log.jsonl: an
 * SQLite database with an FTS5 table over each message's text
 * (tokenize.h: unicode61, accents folded, CJK by character) and a table of what search filters on
 * (id, author, addressee, time, reply_to, files named).  It is a cache
 * of the log and nothing more: the store fills it (store_search.c),
 * checks it against the log at open by the mark below and rebuilds it
 * from the log when it disagrees or SQLite finds it damaged.  Knows
 * nothing of the store.  Node thread.
 */
#ifndef PAPO_INDEX_H
#define PAPO_INDEX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "node/papo.h"
#include "node/wire/frame.h"

#define IX_QUERY_MAX 1024     /* bytes of a query's text */
#define IX_LIMIT_MAX 200      /* hits one page holds */
#define IX_RANKED_MAX 1000    /* matches ranked by bm25; beyond them,
                               * newest first */
#define IX_MARKS_MAX 16       /* marks an excerpt holds */
/* The bounds of one search's work (docs/SECURITY.md, "Search bounds"):
 * a query of 340 one-letter prefixes took 4.2 s over 1,651 messages. */
#define IX_TERMS_MAX 16       /* words a query holds, a phrase's each */
#define IX_PREFIX_MIN 2       /* letters or digits before a prefix's * */
#define IX_TIME_MS 2000       /* a search stopped after this long */

struct ix;

/* What the index holds, as the store checks it: the count of messages,
 * the sum of their ids' 50-bit values (mod 2^64) and the value of the
 * last one added (0: none). */
struct ix_mark {
	uint64_t count;
	uint64_t sum;
	uint64_t last;
};

/*
 * Opens path (creating it), checks it (PRAGMA quick_check) and reads its
 * mark.  NULL with err when SQLite cannot open it or finds it damaged:
 * the caller removes it and builds it again.
 */
struct ix *ix_open(char err[PAPO_ERR_LEN], const char *path,
    struct ix_mark *mark);
/* ix_open without the check: an index this process has just built, or
 * one ix_check reads on another thread (quick_check reads all of it:
 * 1.4 s over a million messages). */
struct ix *ix_open_unchecked(char err[PAPO_ERR_LEN], const char *path,
    struct ix_mark *mark);
/*
 * Opens path read only, for ix_search alone: a search on a thread
 * beside the one that writes the index (WAL lets it read while the
 * other writes), or papo history with the daemon stopped.  Never
 * creates the database nor changes it.  NULL with err when it is
 * missing, of another version, or SQLite cannot open it.
 */
struct ix *ix_open_ro(char err[PAPO_ERR_LEN], const char *path);
void ix_close(struct ix *x);
/*
 * PRAGMA quick_check of the index at path, on a connection of its own
 * (read only; any thread, beside the one that writes it): 1 whole, 0
 * damaged (err says how), -1 not checked (it could not be opened, or
 * *stop was set meanwhile, which cuts the check short).
 */
int ix_check(char err[PAPO_ERR_LEN], const char *path, atomic_int *stop);

/* For a rebuild into a file renamed into place only once it is whole:
 * no journal, no syncs (the next ix_open turns WAL on again).  0 or
 * -1. */
int ix_bulk(struct ix *x);

/* Batches: adds between begin and commit are one transaction (a
 * rebuild); an add outside one is a transaction of its own. */
int ix_begin(struct ix *x);
int ix_commit(struct ix *x);
/* Undoes a batch's adds (the log lines they were of were cut off). */
int ix_rollback(struct ix *x);

/* Adds m (its id's value v).  A message already there is left as it
 * is.  0, or -1 with err. */
int ix_add(char err[PAPO_ERR_LEN], struct ix *x, const struct frame_msg *m,
    uint64_t v);

/* Counts message v in the mark without indexing it: a line of the log
 * that does not decode (the store drops it when it is read, and a sync
 * brings it back, added then).  0, or -1 with err. */
int ix_skip(char err[PAPO_ERR_LEN], struct ix *x, uint64_t v);

/*
 * A search.  text: words ("a phrase", prefix*), each word or phrase
 * required; NULL or "": none.  The ids are texts as the API shows them
 * (sec_id_format, a message id).  Times in ms; 0: no bound.
 */
struct ix_query {
	const char *text;
	const char *from_id;      /* only this author's messages */
	const char *from_name;    /* or only those signed with this name */
	const char *to_id;        /* only those addressed to this member */
	const char *thread;       /* only this message and its replies,
	                           * at any depth */
	uint64_t before;          /* ts < before */
	const char *before_id;    /* with before: or ts == before and an
	                           * id below this one (a page's cursor) */
	uint64_t after;           /* ts > after */
	int files;                /* only messages that name files */
	int newest;               /* newest first even with words (by
	                           * time, then id), never by rank */
	size_t limit;             /* 1 to IX_LIMIT_MAX + IX_RANKED_MAX */
	uint64_t offset;          /* hits passed over (the cursor) */
	unsigned ms;              /* stopped after this long (0: no
	                           * bound; the room gives IX_TIME_MS) */
	atomic_int *stop;         /* stopped when set, or NULL */
};

struct ix_hit {
	char id[PAPO_MSGID_LEN + 1];
	char *excerpt;            /* malloc'd: the text around the words
	                           * found; NULL without text */
	uint32_t marks[IX_MARKS_MAX][2];   /* the words found in excerpt:
	                                    * [start, end) in code points */
	size_t nmarks;
	double rank;              /* bm25 (lower is better) when ranked */
	uint64_t ts;
};

/*
 * Fills out (room for q->limit) with the hits: with q->newest, newest
 * first (by time, then id); else with text, best first (bm25; *ranked
 * 1) unless more than IX_RANKED_MAX messages match, then newest first
 * (*ranked 0); without text, a thread oldest first, else newest first.  *more is 1 when hits are left after these.  The count,
 * or -1 with err (400: a query with nothing to search for, too long,
 * past IX_TERMS_MAX or with a prefix shorter than IX_PREFIX_MIN, or
 * one that ran past q->ms: err says how to narrow it; 503: q->stop was
 * set; else the index failed) and *code set.  Release with ix_hits_free.
 */
long ix_search(char err[PAPO_ERR_LEN], struct ix *x, const struct ix_query *q,
    struct ix_hit *out, int *more, int *ranked, int *code);

/*
 * Removes the messages of ids (n of them, message id texts) that
 * retention took from the log, and sets the mark to mark: that of the
 * log left.  One transaction.  0, or -1 with err.
 */
int ix_drop(char err[PAPO_ERR_LEN], struct ix *x, char (*ids)[PAPO_MSGID_LEN + 1],
    size_t n, const struct ix_mark *mark);
void ix_hits_free(struct ix_hit *v, size_t n);

/*
 * Turns a user's text into an FTS5 query: every word and "phrase" made a
 * quoted phrase (a trailing * kept as a prefix), so no character of the
 * user's reaches FTS5's syntax.  0 with out (malloc'd), or -1 with err
 * when nothing is left to search for, when it holds more than
 * IX_TERMS_MAX words or a prefix of fewer than IX_PREFIX_MIN letters or
 * digits, or out of memory.  Exposed for the tests.
 */
int ix_fts_query(char err[PAPO_ERR_LEN], const char *text, char **out);

#endif
