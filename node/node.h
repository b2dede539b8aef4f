/*
 * node.h: the public face of the papo node library, and the only header of
 * node/ that server/ includes: the node thread, and, by the headers it
 * includes, what node/ publishes besides (the limits every part agrees
 * on, the messages that cross to the node, the rooms of a home, the
 * sending limits' settings, what it speaks and runs with: version.h;
 * a room's history read with no node running: offline.h).
 * server/ includes lib/ for the generic parts (loop, log, fs).  Errors
 * follow lib/err.h.
 */
#ifndef PAPO_NODE_H
#define PAPO_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "node/msg.h"
#include "node/offline.h"
#include "node/papo.h"
#include "node/room/limit.h"
#include "node/store/home.h"
#include "node/version.h"

/*
 * The node: the thread that keeps the room (store, QUIC connections,
 * gossip).  The rest of the program talks to it only by passing struct
 * node_msg values: node_submit hands a request over (it is the node's
 * until it comes back), and node_take returns finished requests and
 * events, which are then the caller's.  node_fd becomes readable when
 * node_take has something; the caller then takes until NULL (one wakeup
 * may stand for many messages: lib/chan.h).
 */
struct node;

struct node_config {
	const char *home;        /* $PAPO_HOME, holding room.json */
	const char *listen;      /* QUIC "ADDR:PORT"; port 0 picks one */
	const char *advertise;   /* "ADDR:PORT,..." advertised first, or NULL */
	unsigned version;        /* protocol version spoken: 0 the newest (4),
	                          * 1 to 3 as a daemon of that version (tests) */
	int nolan;               /* no LAN discovery (PAPO_LAN=off) */
	int noportmap;           /* no port mapping (PAPO_PORTMAP=off) */
	int portmap_private;     /* a mapping to a private address counts
	                          * (PAPO_PORTMAP_PRIVATE=1, for tests) */
	/* A TURN server members without a direct path reach this one
	 * through ("turn:HOST[:PORT]", PAPO_TURN), or NULL; with the user
	 * and password of its long-term credentials, or coturn's "REST API"
	 * shared secret (then user is optional).  node_start resolves HOST,
	 * which may block. */
	const char *turn;
	const char *turn_user, *turn_pass, *turn_secret;
	/* Invites leave the relay out (PAPO_TURN_SHARE=off).  Without one
	 * set here, the relay room.json has from the invite is used. */
	int turn_noshare;
	struct papo_rate rate;   /* PAPO_RATE; zero: the default */
	struct papo_damp damp;   /* PAPO_DAMP; zero: the default */
	int rate_self_off;       /* our own sends are not limited: test
	                          * builds only (PAPO_TEST_NO_RATE=1) */
	/* Retention: PAPO_KEEP's text ("1000" messages or "30d"), or NULL
	 * to keep everything.  The log is compacted at start and as it
	 * grows (docs/RELIABILITY.md, "Retention"). */
	const char *keep;
	/* Files (docs/FILES.md): a file of at most files_auto bytes is
	 * fetched by every member as soon as a message names it
	 * (PAPO_FILES_AUTO; 0: the default, 256 KiB; UINT64_MAX, "all":
	 * every file; NODE_FILES_AUTO_NONE, "0": none, each is fetched
	 * only when asked); a room's files take at most files_quota bytes
	 * here (PAPO_FILES_QUOTA; 0: the default, 4 GiB). */
	uint64_t files_auto;
	uint64_t files_quota;
	/* Test builds only (PAPO_TEST_BAD_CHUNKS=1): every chunk of a file
	 * this daemon serves has a byte changed, as a broken or hostile
	 * member's would. */
	int bad_chunks;
};

/* files_auto's "no file is fetched at once" (PAPO_FILES_AUTO=0): 0
 * itself is the default, as for every field here. */
#define NODE_FILES_AUTO_NONE (UINT64_MAX - 1)

/* Whether text is a PAPO_KEEP value node_start takes; -1 with err saying
 * what is accepted. */
int node_keep_check(char err[PAPO_ERR_LEN], const char *text);

/* n bytes from the system's secure random generator (libsodium). */
void node_random(void *p, size_t n);

/* Starts the node thread: loads the identity and every room home holds
 * (home_dirs: none is fine, one may be joined later), binds the UDP
 * socket.  NULL with err set when any of that fails. */
struct node *node_start(char err[PAPO_ERR_LEN], const struct node_config *c);
/* Says bye to the other members and stops the thread: what it answered
 * on its way out (a send waiting for acks is answered queued, with
 * "stopping": true) waits for node_take until node_stop.  NULL or a
 * node halted already: nothing. */
void node_halt(struct node *n);
/* node_halt if need be, then closes files and frees n.  Requests still
 * inside, and answers not taken, are dropped. */
void node_stop(struct node *n);
/* The QUIC address actually bound ("ADDR:PORT"), and the default room's
 * invite at start (malloc'd; NULL with no default room) with the
 * addresses where the node is reached. */
void node_quic_addr(const struct node *n, char *out, size_t len);
char *node_invite(const struct node *n);
/* 1 when the node has a TURN relay, set for it or from its invite. */
int node_relay(const struct node *n);
int node_fd(const struct node *n);
void node_submit(struct node *n, struct node_msg *m);

/*
 * Reading a shared file that is complete here, in any thread (the HTTP
 * server streams it; docs/FILES.md): opens the file ref of the room
 * room (its name or id; NULL or "" is refused: a caller names the room
 * the node answered for, m->room_id, so that no room serves another's
 * files) straight from the disk,
 * with the key its message gave.  NULL with err (404 when it is not
 * complete here: *code says so, else 500).  node_blob_read reads len
 * plain bytes at off (inside the file), decrypting and verifying each
 * chunk it touches; -1 with err when the disk's bytes do not verify.
 * The handle is the caller's, independent of the node thread.
 */
struct node_blob;
struct node_blob *node_blob_open(char err[PAPO_ERR_LEN], int *code,
    struct node *n, const char *room, const char *ref);
uint64_t node_blob_size(const struct node_blob *b);
const char *node_blob_name(const struct node_blob *b);   /* as shared */
const char *node_blob_type(const struct node_blob *b);   /* media type */
int node_blob_read(char err[PAPO_ERR_LEN], struct node_blob *b,
    uint64_t off, void *out, size_t len);
void node_blob_close(struct node_blob *b);
/* Where spooled uploads go before NODE_BLOB_ADD takes them (made 0700
 * at start): $PAPO_HOME/spool. */
const char *node_spool_dir(const struct node *n);
struct node_msg *node_take(struct node *n);

#endif
