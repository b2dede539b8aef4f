/*
 * store_int.h: what the store's files share (store.c, store_compact.c,
 * store_log.c, store_search.c, store_read.c, store_outbox.c,
 * store_index.c, store_file.c, each calling only those after it): the
 * files' names and limits, struct store with its index, and the
 * functions that cross between the files.  Included by those files only; node thread.
 */
#ifndef PAPO_STORE_INT_H
#define PAPO_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "node/papo.h"
#include "node/store/index.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"

struct chan;
struct ix_job;

#define STORE_LOG "log.jsonl"
#define STORE_OUTBOX "outbox.jsonl"
#define STORE_CHUNK (64 * 1024)        /* bytes of one read() at replay */
#define STORE_ENT_MAX (1u << 30)       /* messages one index holds */
#define STORE_TAB_BITS0 6              /* first hash table: 64 slots */
#define SLOT_EMPTY UINT32_MAX
/* The first line of a compacted log (docs/PROTOCOL.md, "Files"). */
#define RET_FMT "{\"t\":\"retention\",\"floor\":%llu,\"dropped\":%llu}"

/* An outbox line is exactly this prefix, the id, and this suffix. */
#define OB_PREFIX "{\"id\":\""
#define OB_SUFFIX "\"}"
#define OB_LINE_LEN (sizeof(OB_PREFIX) - 1 + PAPO_MSGID_LEN + \
    sizeof(OB_SUFFIX) - 1)

/* One message of the log: where its line is and what history filters on. */
struct ent {
	uint64_t id;         /* the 50-bit value of the id text */
	uint64_t off;        /* offset of its line in log.jsonl */
	uint64_t ts;
	uint32_t len;        /* bytes of the line without its '\n' */
};

/* One receipt line of the log (an ack of an own message): where it is,
 * so that history can show receipts after a restart. */
struct ackent {
	uint64_t id;         /* the 50-bit value of the message's id */
	uint64_t off;        /* offset of its line in log.jsonl */
	uint32_t len;        /* bytes of the line without its '\n' */
};

/* One message in history's order: by time, then by id value (one order
 * on every member, whatever order the messages arrived in). */
struct pos {
	uint64_t ts;
	uint64_t id;
	uint32_t e;          /* its index in ent */
};

struct store {
	struct room_keys k;
	const struct identity *me;  /* whose private messages index opens */
	char *log_path;             /* home/log.jsonl, malloc'd */
	char *ob_path;              /* home/outbox.jsonl */
	int log_fd;
	int ob_fd;
	uint64_t log_size;   /* where the next line of the log starts */

	struct ent *ent;     /* in log order */
	size_t nent;
	size_t capent;
	uint32_t *tab;       /* open addressing: indices into ent */
	unsigned tabbits;    /* the table has 1 << tabbits slots */
	struct pos *ord;     /* the same messages in history's order */
	int unsorted;        /* ord needs sorting before it is read */
	int live;            /* the log is open: ord is kept in order */

	size_t acks;
	struct ackent *ackv; /* the receipt lines, by id once sorted */
	size_t nackv;
	size_t capackv;
	int acks_unsorted;   /* ackv needs sorting before it is read */
	size_t dropped;
	size_t damaged;      /* damaged lines found by reads, not yet told */
	uint8_t digest[PAPO_KEY_LEN];
	uint64_t floor;      /* retention: from the log's first line */
	uint64_t gone;       /* messages retention dropped, in all */
	struct compaction *cw;   /* the rewrite under way, else NULL */

	struct ix *ix;       /* search.db (store_search.c), or NULL */
	struct ix_job *build;     /* its rebuild under way, or NULL */
	struct ix_job *check;     /* its check under way, or NULL */
	struct store_find *finds; /* searches waiting, the first running */
	struct chan *ix_end;      /* the jobs' ends (store_ix_fd) */

	char (*ob)[PAPO_MSGID_LEN + 1];   /* outbox ids, oldest first */
	size_t nob;
	size_t capob;

	/* Group commit: the lines written since the last store_commit, and
	 * what they changed, to cut them off again when the sync fails. */
	size_t batch_lines;  /* 0: everything written is durable */
	uint64_t batch_off;  /* where they start in the log */
	size_t batch_nent;   /* nent, nackv and acks before them */
	size_t batch_nackv;
	size_t batch_acks;
	int sync_fail;       /* store_test_sync_fail: syncs left to fail */
	int ob_unsynced;     /* outbox lines written since the last commit */
	int commit_lost;     /* a store_commit_now failed since the last
	                      * store_commit, which says so */
	size_t ob_stale;     /* ids taken out in memory, still in the file */
};

/*
 * What replay does with one complete line: returns 0 when it was taken,
 * 1 when it is damaged (*why says how), -1 on a failure that must stop
 * the open (errno set).  last is set for the line that ends the file,
 * which is the only one a crash can have damaged.
 */
typedef int store_line_fn(struct store *s, const char *line, size_t len,
    uint64_t off, int last, const char **why);

/* node/store/store_log.c */
/* store_commit for the store's own use (a compaction): a failure is
 * also kept for the next store_commit to return. */
int store_commit_now(struct store *s);
int store_replay(char err[PAPO_ERR_LEN], struct store *s, int fd, const char *path,
    store_line_fn *fn, uint64_t *end);
int store_fast_msg(const char *line, size_t len, char id[PAPO_MSGID_LEN + 1],
    uint64_t *v, uint64_t *ts);
int store_log_line(struct store *s, const char *line, size_t len, uint64_t off,
    int last, const char **why);

/* node/store/store_search.c */
void store_ix_open(struct store *s);
/* The index's transaction of a batch (store_commit): begun with its
 * first line, committed after the log's sync, rolled back when the sync
 * fails. */
void store_ix_begin(struct store *s);
void store_ix_end(struct store *s, int durable);
void store_ix_close(struct store *s);
void store_ix_stop(struct store *s);
void store_ix_add(struct store *s, const struct frame_msg *m, uint64_t v);
/* After a compaction: the messages of ids (n) leave the index. */
void store_ix_compacted(struct store *s, char (*ids)[PAPO_MSGID_LEN + 1],
    size_t n);

/* node/store/store_read.c */
int store_read_msg(struct store *s, const struct ent *e, struct frame_msg *out);

/* node/store/store_outbox.c */
int store_ob_line(struct store *s, const char *line, size_t len, uint64_t off,
    int last, const char **why);

/* node/store/store_index.c */
const struct ent *store_idx_find(const struct store *s, uint64_t id);
int store_idx_rehash(struct store *s, unsigned bits);
int store_idx_reserve(struct store *s);
void store_ord_sort(struct store *s);
int store_idx_add(struct store *s, const char *id, uint64_t v, uint64_t off,
    size_t len, uint64_t ts);
void store_idx_drop(struct store *s, size_t k, const char *why);
/* Forgets the messages from ent[n] on, the last written (a batch whose
 * sync failed): the log no longer holds them. */
void store_idx_cut(struct store *s, size_t n);
size_t store_ord_lower(const struct store *s, uint64_t ts, uint64_t id);

/* node/store/store_file.c */
/* Fills err with one line; a long path is cut rather than overflowing. */
int store_write_all(int fd, const void *p, size_t n);
int store_read_all(int fd, void *p, size_t n, uint64_t off);
#ifdef PAPO_TESTING
/* papo-testing only: PAPO_TEST_STORE_FAIL names a file whose appends
 * fail (errno EIO).  The files that call it are compiled into
 * papo-testing again with PAPO_TESTING (tests/CMakeLists.txt). */
int store_test_fail(const char *file);
#else
#define store_test_fail(file) 0
#endif
int store_append(int fd, const void *p, size_t n, uint64_t size);
int store_open_file(char err[PAPO_ERR_LEN], const char *path);

#endif
