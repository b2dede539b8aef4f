/*
 * files_int.h: what files.c and the fetch's files (files_fetch.c,
 * files_sched.c, files_serve.c, files_bulk.c) share (files.h): the part's
 * state, the fetches under way, what is queued to serve.  Node thread.
 */
#ifndef PAPO_FILES_INT_H
#define PAPO_FILES_INT_H

#include <string.h>

#include "lib/b32.h"
#include "node/room/files.h"
#include "node/store/blob.h"
#include "node/wire/xfer.h"

#define FETCH_WINDOW 16          /* chunks asked of one holder at once */
#define FETCH_AUTHOR_WINDOW 1    /* of a whole file's holder, while
                                  * others that fetch it can give */
#define FETCH_TIMEOUT_NS (20ull * NS_PER_S)   /* a chunk asked, not come */
#define FETCH_TICK_NS (1ull * NS_PER_S)
#define FETCH_REASK_NS (1ull * NS_PER_S)      /* asking back, at most */
#define FETCH_EVENT_NS (250ull * NS_PER_MS)   /* progress events apart */
#define SERVE_QUEUE_MAX 256      /* chunks queued for one member */
#define FETCH_COMMIT_CHUNKS 32   /* chunks written (8 MiB) between two
                                  * commits; a tick commits too */
/* Fetches a message started (PAPO_FILES_AUTO) that no member has
 * offered yet (else a member could plant any number of files
 * nobody holds in every other member): at most this many of one
 * author's messages, and of the room's; past them a file is only named,
 * fetched when someone asks.  Such a fetch is dropped (the file only
 * named again) FETCH_UNOFFERED_NS after it began, once a member has
 * said it holds nothing of it. */
#define FETCH_UNOFFERED_MEMBER 32
#define FETCH_UNOFFERED_ROOM 128
#define FETCH_UNOFFERED_NS (60ull * NS_PER_S)
#define FETCH_RETRY_NS (30ull * NS_PER_S)     /* a fetch the full disk
                                  * stopped is tried again */
#define FETCH_SKIP_LOG_NS (60ull * NS_PER_S)  /* "not fetched at once"
                                  * logged at most this often */

enum fetch_state {
	FETCH_FETCHING = 1,
	FETCH_WAITING,           /* nobody online holds what is missing */
	FETCH_FAILED,            /* the quota, the disk, too large */
};

/* A member that may hold a file being fetched. */
struct holder {
	uint8_t id[PAPO_KEY_LEN];
	uint8_t *have;           /* its HAVE bits, n of them; NULL: none
	                          * known yet */
	uint32_t nhave;          /* bits set in have */
	uint32_t inflight;       /* chunks asked of it, not come */
	int asked;               /* it was sent our WANT for the file */
	uint64_t asked_at;       /* monotonic ns, the last time */
	int answered;            /* and said what it holds */
	int bad;                 /* it sent a chunk that did not verify:
	                          * never asked again for this file */
};

/* A chunk asked of a holder. */
struct asked {
	uint32_t i;
	struct holder *h;        /* NULL: not asked (free slot) */
	uint64_t at;             /* monotonic ns */
};

struct fetch {
	struct fetch *next;
	struct attach a;         /* what its message said */
	uint8_t root[PAPO_KEY_LEN];
	uint32_t n;              /* chunks */
	int leaves;              /* the leaf list is here: chunks may come */
	enum fetch_state state;
	char err[PAPO_ERR_LEN];  /* FAILED, WAITING: why */
	uint8_t *got;            /* chunks written, n bits */
	uint8_t *out;            /* chunks asked and not come, n bits */
	uint32_t ngot;
	uint32_t pend[FETCH_COMMIT_CHUNKS];  /* written, not yet committed
	                          * (blob_fetch_commit) */
	size_t npend;
	uint32_t scan;           /* where the next chunk is looked for */
	uint8_t author[PAPO_KEY_LEN];    /* who shared it, asked first */
	int has_author;
	struct holder *holders;
	size_t nholders;
	struct asked *asked;     /* every chunk asked, at most
	                          * FETCH_WINDOW per holder */
	size_t nasked, capasked;
	uint8_t (*watch)[PAPO_KEY_LEN];   /* members that asked us for it:
	                          * told HAVE of each chunk we get */
	size_t nwatch;
	uint64_t evented;        /* monotonic ns of the last progress event */
	uint64_t started;        /* and when everyone was last asked */
	uint64_t born;           /* when it began */
	int by_msg;              /* begun by a message (PAPO_FILES_AUTO),
	                          * not asked for by a person or an agent */
	int offered;             /* a member sent its leaves or said it
	                          * holds chunks of it */
	int denied;              /* a member said it holds nothing of it */
	int retry;               /* FAILED on a full disk: tried again */
	uint64_t failed_at;
};

/* A chunk queued to send to a member. */
struct serve {
	struct serve *next;
	uint8_t to[PAPO_KEY_LEN];
	uint8_t root[PAPO_KEY_LEN];
	uint32_t i;
};

struct files {
	struct blob_store *bs;
	uint64_t automax;        /* fetched at once up to this size */
	struct fetch *fetches;
	struct serve *serve_head, *serve_tail;
	size_t nserve;
	struct loop_timer *tick;
	uint8_t *chunk;          /* one stored chunk, for serving */
	uint64_t served;         /* stored bytes of chunks sent to others */
	uint64_t fetched;        /* and taken from others, verified */
	int resume;              /* the fetches a stop cut go on at the
	                          * first tick */
	uint64_t skipped;        /* files named past the FETCH_UNOFFERED_
	                          * caps: not fetched at once */
	uint64_t dropped;        /* fetches dropped, nobody offering them */
	uint64_t skip_logged;    /* monotonic ns */
};

/* The fetch: files_bulk.c (start, the tick, a hello, bulk frames, a
 * closed link), files_fetch.c (find, forget, state), files_serve.c
 * (pump). */
/* Starts fetching a (its REF.meta saved), shared by author (NULL:
 * unknown), because a message named it (by_msg) or someone asked, or
 * asks again (a failed fetch tried anew); 0, or -1 with err. */
int fetch_start(struct room *room, const struct attach *a, const uint8_t *author,
    int by_msg, char err[PAPO_ERR_LEN]);
/* Whether a message of author may start one more fetch at once: the
 * fetches messages began that no member has offered yet, under the
 * FETCH_UNOFFERED_ caps. */
int fetch_may_start(const struct room *room, const uint8_t *author);
struct fetch *fetch_find(const struct room *room, const char *ref);
/* Stops fetching f, its holders told (retention: its files go too);
 * chunks not committed are not recorded. */
void fetch_forget(struct room *room, struct fetch *f);
/* The state JSON of a file (docs/FILES.md, "A file's state"). */
cJSON *fetch_state_json(struct room *room, const struct attach *a);
void fetch_tick(void *arg);
void fetch_free_all(struct room *room);
void fetch_hello(struct room *room, struct member *m);
void fetch_bulk(struct room *room, struct link *l, const uint8_t *p, size_t n);
void fetch_pump_serve(struct room *room);
void fetch_link_closed(struct room *room, struct link *l);

/* The fetch's parts share these (files_fetch.c unless said). */
struct member;
struct quic_conn;

static inline int
fetch_bit(const uint8_t *b, uint32_t i)
{
	return b[i / 8] >> (i % 8) & 1;
}

static inline void
fetch_bit_set(uint8_t *b, uint32_t i, int v)
{
	if (v)
		b[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		b[i / 8] &= (uint8_t)~(1u << (i % 8));
}

static inline void
fetch_root_ref(const uint8_t root[PAPO_KEY_LEN], char ref[BLOB_REF_LEN + 1])
{
	b32_encode(root, PAPO_KEY_LEN, ref);
}

static inline int
fetch_ref_root(const char *ref, uint8_t root[PAPO_KEY_LEN])
{
	size_t bad;

	return strlen(ref) == BLOB_REF_LEN && b32_decode(ref, BLOB_REF_LEN,
	    root, PAPO_KEY_LEN, &bad) == (long)PAPO_KEY_LEN ? 0 : -1;
}

static inline size_t
fetch_bits_len(uint32_t n)
{
	return n / 8 + 1;
}

/* m's connection when it speaks version 4 (has a bulk stream), else
 * NULL. */
struct quic_conn *fetch_bulk_conn(const struct member *m);
/* Sends x on the bulk stream of member id: 0, or -1. */
int fetch_send(struct room *room, const uint8_t id[PAPO_KEY_LEN],
    const struct xfer *x);
struct fetch *fetch_by_root(const struct room *room,
    const uint8_t root[PAPO_KEY_LEN]);
struct holder *fetch_holder_find(struct fetch *f,
    const uint8_t id[PAPO_KEY_LEN]);
/* The holder id, added if new: NULL when out of memory. */
struct holder *fetch_holder_get(struct fetch *f,
    const uint8_t id[PAPO_KEY_LEN]);
/* Tells the program f's state (NODE_EV_BLOB), now. */
void fetch_event(struct room *room, struct fetch *f);
/* Gives back the chunk asked at slot k; every chunk asked of h, or only
 * chunk i of it (all 0). */
void fetch_asked_release(struct fetch *f, size_t k);
void fetch_asked_release_holder(struct fetch *f, struct holder *h, int all,
    uint32_t i);
void fetch_unlink(struct room *room, struct fetch *f);
/* f failed for why; e the errno of our disk's refusal (0: another
 * reason). */
void fetch_fail(struct room *room, struct fetch *f, const char *why, int e);
/* HAVE of chunk i (or of everything we hold, i = UINT32_MAX) to id. */
void fetch_have_send(struct room *room, struct fetch *f,
    const uint8_t id[PAPO_KEY_LEN], uint32_t i);
int fetch_commit(struct room *room, struct fetch *f);
uint64_t fetch_unoffered_ns(void);
void fetch_drop(struct room *room, struct fetch *f);
void fetch_done(struct room *room, struct fetch *f);
/* Asks id about the file (the leaves too while we lack them); asks
 * every member online, the author first. */
void fetch_ask(struct room *room, struct fetch *f,
    const uint8_t id[PAPO_KEY_LEN]);
void fetch_ask_all(struct room *room, struct fetch *f, const uint8_t *author);
int fetch_resume(struct room *room, struct fetch *f);
void fetch_reload(struct room *room, struct fetch *f);
/* files_sched.c: asks the chunks f lacks of its holders, as their
 * windows allow; waits when nobody online holds them. */
void fetch_schedule(struct room *room, struct fetch *f);
/* files_serve.c: whether chunk i of ref is stored here; queued to send
 * to a member; what is queued for to dropped (of root, or of every
 * file: root NULL). */
int fetch_serve_has(struct room *room, const char *ref, uint32_t i);
void fetch_serve_queue(struct room *room, const uint8_t to[PAPO_KEY_LEN],
    const uint8_t root[PAPO_KEY_LEN], uint32_t i);
void fetch_serve_drop(struct room *room, const uint8_t to[PAPO_KEY_LEN],
    const uint8_t *root);

#endif
