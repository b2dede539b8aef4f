/*
 * store.h: the member's durable state of the room: log.jsonl (every
 * message and receipt, one frame's JSON a line, each append fsync'd
 * before it is acknowledged) and outbox.jsonl (ids of own messages not yet
 * acknowledged).  Opening replays the log once to rebuild the set of
 * message ids and a compact index (id, offset, time); later lookups read
 * single lines back with pread.  A torn last line (a crash mid-write) is
 * cut off with a warning; damaged lines elsewhere are skipped with a
 * warning, and nothing else is lost.  A message line whose shape was
 * taken at open but that does not decode when it is read is dropped
 * from the index then (store_damaged).
 *
 * A store belongs to one thread.  Documented in docs/PROTOCOL.md, "Files".
 */
#ifndef PAPO_STORE_H
#define PAPO_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "node/papo.h"
#include "node/store/index.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"

#define STORE_LINE_MAX (4 * PAPO_FRAME_MAX)   /* longest log line accepted */

struct store;

struct store_stats {
	size_t msgs;          /* messages in the log */
	uint64_t floor;       /* retention: ms; nothing older is taken */
	uint64_t gone;        /* messages retention has dropped, in all */
	size_t acks;          /* receipts in the log */
	size_t dropped;       /* lines dropped at open (torn or damaged) */
	size_t outbox;        /* ids in the outbox */
};

/* Opens home's log and outbox, creating the files (mode 0600) when
 * missing; home itself must exist.  stats.dropped counts the lines dropped
 * from both files.  me is the member whose private messages the search
 * index opens (NULL: none; it must outlive the store). */
struct store *store_open(char err[PAPO_ERR_LEN], const char *home,
    const struct room_keys *k, const struct identity *me);
void store_close(struct store *s);

/* Appends m (a decoded or signed message), not yet durable: see
 * store_commit.  Returns 1 when it was written, 0 when its id was already
 * there (nothing written), -1 with errno set (EINVAL: m breaks a frame
 * limit; E2BIG, ENOMEM; or the I/O error) and the log as before. */
int store_add_msg(struct store *s, const struct frame_msg *m);

/* Appends a receipt, not yet durable: see store_commit.  0 or -1. */
int store_add_ack(struct store *s, const struct frame_ack *a);

/*
 * Group commit (docs/RELIABILITY.md, "Stored before acknowledged"): the
 * lines store_add_msg and store_add_ack wrote since the last commit are
 * made durable by one fdatasync, and their messages enter the search
 * index in one transaction.  0 when they are (or there were none).  -1
 * (errno set) when the sync failed: the log is cut back to where they
 * started and the store forgets them, as if never written, so nothing
 * may have been said of them.  Nobody may hear of a line before its
 * commit.  store_uncommitted: how many lines wait for one.
 */
int store_commit(struct store *s);
size_t store_uncommitted(const struct store *s);
/* For tests: the next n syncs of store_commit fail with EIO, as a
 * failing disk's would. */
void store_test_sync_fail(struct store *s, int n);

/* The receipts of message id kept in the log (acks of an own message,
 * docs/PROTOCOL.md "Files"), in log order: up to max into out.  Returns
 * how many (0: none), -1 on an I/O error (errno set).  A damaged line is
 * skipped. */
long store_acks(struct store *s, const char *id, struct frame_ack *out,
    size_t max);

int store_has(const struct store *s, const char *id);

/* Reads message id back into *out (release it with frame_msg_clear).
 * 0, or -1 when the id is unknown or the line cannot be read. */
int store_get(struct store *s, const char *id, struct frame_msg *out);

/*
 * History's order is by time (ts), then by id: the same on every member,
 * whatever order the messages arrived in (a catch-up by sync brings old
 * times late).  A query returns the newest messages before a cursor.
 */
struct store_query {
	size_t n;              /* at most n messages (out holds n) */
	size_t bytes;          /* and once one is read, no more than about
	                        * this many bytes of log lines read; 0: no
	                        * bound */
	uint64_t before;       /* 0: none; else only messages before the
	                        * cursor (before, before_id) */
	const char *before_id; /* NULL or "": only ts < before; else a
	                        * message id (refused with EINVAL if not) */
	uint64_t since;        /* only ts >= since */
	const uint8_t *from;   /* NULL, or only this author's messages */
};

/* Where a page stopped: more is 1 when messages the query matches are
 * left before it; (ts, id) is then the cursor that goes on (the oldest
 * message read, returned or passed over). */
struct store_cursor {
	int more;
	uint64_t ts;
	char id[PAPO_MSGID_LEN + 1];
};

/*
 * Fills out with the newest messages q matches, oldest first, and next
 * with where the page stopped.  Only the lines returned or looked at are
 * read.  Returns the count filled, or -1 with errno (EINVAL: a malformed
 * before_id; else an I/O error; nothing to free then).  Release each
 * with frame_msg_clear.
 */
long store_history(struct store *s, const struct store_query *q,
    struct frame_msg *out, struct store_cursor *next);

/*
 * The ids of the newest n messages with ts >= since in history's order,
 * oldest first, into ids (and their times into ts, unless NULL), read
 * from the index alone.  Returns the count.
 */
long store_ids(struct store *s, size_t n, uint64_t since,
    char (*ids)[PAPO_MSGID_LEN + 1], uint64_t *ts);

/*
 * Fills out with up to n messages, oldest first: the last n in log order
 * of those after message id (NULL, or an id the log does not hold: from
 * its start).  *more gets how many before those were passed over, and
 * last (PAPO_MSGID_LEN + 1 bytes) the id of the log's newest message ("":
 * none).  The count filled, or -1 on an I/O error.
 */
long store_after(struct store *s, const char *id, size_t n,
    struct frame_msg *out, size_t *more, char *last);

/*
 * How many damaged lines reads found since the last call (and forgot:
 * see docs/RELIABILITY.md, "A damaged line"); the caller asks the other
 * members for a sync then, to fetch those messages again.
 */
size_t store_damaged(struct store *s);

/* XOR of BLAKE2b-256 of every stored message id: two members hold the
 * same set of messages when their counts and digests agree. */
void store_digest(const struct store *s, uint8_t out[PAPO_KEY_LEN]);

void store_stats(const struct store *s, struct store_stats *out);

/* The outbox: ids of own messages still waiting for acks.  add writes
 * the id at once, made durable by the next store_commit (before the
 * log's lines); del is durable when it returns 0; done (a message
 * delivered) takes the id out at once but out of the file only with
 * others later (tidy: now), so that after a crash it may be back, and
 * be sent once more.  0 or -1 (errno set). */
int store_outbox_add(struct store *s, const char *id);
int store_outbox_del(struct store *s, const char *id);
int store_outbox_done(struct store *s, const char *id);
int store_outbox_tidy(struct store *s);
int store_outbox_has(const struct store *s, const char *id);
/* The i-th id in the outbox (oldest first), or NULL past the end. */
const char *store_outbox_at(const struct store *s, size_t i);

/*
 * Retention (PAPO_KEEP, docs/RELIABILITY.md "Retention").  At most one of
 * count and ms is set; both 0 keep everything.
 */
struct store_keep {
	uint64_t count;       /* keep the newest count messages */
	uint64_t ms;          /* keep what is younger than ms */
};

/* Parses PAPO_KEEP's text: a count ("1000") or days ("30d"); NULL or ""
 * keeps everything.  -1 with err saying what is accepted. */
int store_keep_parse(char err[PAPO_ERR_LEN], const char *text,
    struct store_keep *k);

/*
 * Whether messages may be taken: a message older than the floor (ts <
 * floor) is one retention dropped, or would drop at once, and is not
 * stored again.  Own messages still in the outbox are kept below it.
 */
int store_below_floor(const struct store *s, uint64_t ts);

/*
 * Whether a compaction under k would be worth its rewrite now: with a
 * count, the log holds a quarter more than it keeps; with days, a
 * message is older than the window by a tenth of it (at least an hour).
 * slack 0 asks whether anything at all would be dropped (at start).
 */
int store_compact_due(const struct store *s, const struct store_keep *k,
    uint64_t now_ms, int slack);

/*
 * Rewrites the log to what k keeps: messages with ts at or after the new
 * floor (with a count, the count-th newest message's time; with days,
 * now_ms less the window; never lower than the floor before), the
 * outbox's messages whatever their age, and the receipts of messages
 * kept; the first line records the floor and how many were dropped in
 * all.  The new log is written beside the old one, fsync'd, renamed over
 * it and the directory fsync'd: a crash leaves the old log or the new
 * one.  Returns how many messages were dropped (0: nothing rewritten),
 * or -1 with err; the store is then as before unless err says the log
 * could not be reloaded after the rename.
 */
long store_compact(char err[PAPO_ERR_LEN], struct store *s,
    const struct store_keep *k, uint64_t now_ms);

/*
 * Searches the room's index (index.h, ix_search); the store keeps it in
 * step with the log (search.db beside log.jsonl).  -1 with err and *code
 * (400 bad query, 503 the index unavailable or being rebuilt, 500).
 */
long store_search(char err[PAPO_ERR_LEN], struct store *s,
    const struct ix_query *q, struct ix_hit *out, int *more, int *ranked,
    int *code);

/*
 * A search beside the node thread (docs/SECURITY.md, "Search bounds"):
 * q copied and run on a thread of its own, on a read-only connection to
 * search.db, stopped after IX_TIME_MS; the room's searches wait in a
 * queue, one running.  Its end wakes store_ix_fd; after store_ix_ready,
 * store_find_over says whether it is done.  NULL with err and *code
 * (503 the index unavailable or being rebuilt, or STORE_FINDS_MAX
 * searches of the room already waiting; 500).
 */
struct store_find;
struct store_find *store_find_start(char err[PAPO_ERR_LEN], struct store *s,
    const struct ix_query *q, int *code);
int store_find_over(const struct store_find *f);
/* An ended search's result, as store_search gives it: the count of
 * *hits (f's, valid until store_find_free), or -1 with err and *code. */
long store_find_result(struct store_find *f, char err[PAPO_ERR_LEN],
    struct ix_hit **hits, int *more, int *ranked, int *code);
/* Frees f; one still running is stopped and freed when it ends.
 * NULL: a no-op. */
void store_find_free(struct store *s, struct store_find *f);

/*
 * A long log's index is checked, or rebuilt, on a thread of its own
 * (store_search.c): while a job runs, store_ix_fd is a descriptor that
 * becomes readable when one is done (watch it for LOOP_IN), then
 * store_ix_ready acts on what it found: the new index taken (and what
 * was appended meanwhile added), or a damaged one rebuilt.  -1 when no
 * job is under way; call store_ix_fd again after store_ix_ready, which
 * may have started another (a check that found damage, a compaction
 * while a rebuild ran).
 */
int store_ix_fd(const struct store *s);
void store_ix_ready(struct store *s);

#endif
