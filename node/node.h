/*
 * node.h: the public face of the papo node library, and the only header of
 * node/ that server/ includes.  It holds the limits every part of papo
 * agrees on and the operations the command line and the daemon use.
 *
 * Conventions: functions return 0 on success and -1 on failure; where a
 * person needs the reason, the first parameter is an error buffer of
 * PAPO_ERR_LEN bytes that receives one line without a trailing newline.
 */
#ifndef PAPO_NODE_H
#define PAPO_NODE_H

#include <stddef.h>
#include <stdint.h>

#define PAPO_ERR_LEN 256

#define PAPO_KEY_LEN 32        /* room secret, member public key */
#define PAPO_ID_LEN 52         /* member id: base32 of the public key */
#define PAPO_MSGID_LEN 10      /* message id: 10 base32 characters */
#define PAPO_ROOMID_LEN 26     /* public room id: base32 of 16 bytes */
#define PAPO_NAME_MAX 64       /* bytes of a member name */
#define PAPO_ABOUT_MAX 256     /* bytes of a member's about text */
#define PAPO_BODY_MAX (48 * 1024)   /* bytes of a message body */
#define PAPO_FRAME_MAX (64 * 1024)  /* bytes of a sealed frame */
#define PAPO_ADDR_MAX 8        /* addresses in an invite or a hello */
#define PAPO_ROOMS_MAX 64      /* rooms one daemon holds */

#define PAPO_DEFAULT_LISTEN "0.0.0.0:7778"

/*
 * Creates this member's identity in home if it has none, and a new room
 * whose member name is name (1..64 bytes of UTF-8) and about text about
 * (may be NULL), named room (1..64 bytes of UTF-8; NULL: "papo-" and the
 * start of its id).  A home that holds rooms gets it beside them, in
 * home/rooms/ID (at most PAPO_ROOMS_MAX; room_dirs in room.h), unless
 * aside is not NULL (--force): the first room's files (room.json,
 * log.jsonl, peers.json, admins.json, epochs.json, outbox.jsonl,
 * agents.json) are then moved into home/old-ROOMID-YYYYMMDD-HHMMSS, whose
 * name aside gets ("" when there was no room), and the new room takes
 * their place; the caller then makes sure no daemon runs on home
 * (serve_hold).  listen is the QUIC address the daemon will use
 * ("ADDR:PORT"); it fills the invite's addresses.  On success *invite is
 * a malloc'd string the caller frees.
 */
#define PAPO_ASIDE_LEN 64      /* "old-ROOMID-YYYYMMDD-HHMMSS-N" */
int room_create(char err[PAPO_ERR_LEN], const char *home, const char *name,
    const char *about, const char *room, char *aside, const char *listen,
    char **invite);

/*
 * Stores the room of an invite in home, beside the rooms it holds, with
 * this member's name and about; creates the identity if needed.  Refuses
 * a malformed invite with the reason, and a room home already holds
 * (there is nothing to join) with errno EEXIST.  aside not NULL
 * (--force): as room_create.
 */
int room_join(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    const char *name, const char *about, char *aside);

/*
 * Whether invite is for the room home holds: 1 if it is, 0 if it is for
 * another room, -1 with err when the invite is malformed or home holds no
 * readable room.  name gets the held room's name when there is one.
 */
int room_is(char err[PAPO_ERR_LEN], const char *home, const char *invite,
    char name[PAPO_NAME_MAX + 1]);

/*
 * What tells a room apart without giving it away, for logs: its name, and
 * its fingerprint, the first PAPO_FPR_LEN base32 characters of the
 * BLAKE2b-256 hash of its public room id (the invite, which holds the
 * room's secret, must not be in logs: docs/SECURITY.md).  -1 with err
 * when home holds no readable room.
 */
#define PAPO_FPR_LEN 8
int room_describe(char err[PAPO_ERR_LEN], const char *home,
    char name[PAPO_NAME_MAX + 1], char fpr[PAPO_FPR_LEN + 1]);

/*
 * Writes into *invite (malloc'd) this room's invite, carrying this
 * member's id and the addresses reachable at listen.
 */
int room_invite(char err[PAPO_ERR_LEN], const char *home, const char *listen,
    char **invite);

/*
 * The event loop: epoll over file descriptors, plus timers, on one thread.
 * Both the node thread and the daemon's HTTP thread run one.  Idle means
 * asleep: with no ready descriptor and no due timer, loop_run sleeps in
 * epoll_wait.  A loop and its timers belong to the thread that runs it.
 */
struct loop;
struct loop_timer;
typedef void loop_fd_cb(void *arg, uint32_t events);
typedef void loop_timer_cb(void *arg);

struct loop *loop_new(void);
/* Frees the loop and any timer still attached; NULL is a no-op. */
void loop_free(struct loop *l);
/* Watches fd for events (EPOLLIN, EPOLLOUT...); one callback per fd. */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_cb *cb,
    void *arg);
int loop_mod_fd(struct loop *l, int fd, uint32_t events);
void loop_del_fd(struct loop *l, int fd);
struct loop_timer *loop_timer_new(struct loop *l, loop_timer_cb *cb,
    void *arg);
/* Arms t to fire once at the monotonic time at_ns (loop_now_ns()), or
 * disarms it when at_ns is 0. */
void loop_timer_set(struct loop_timer *t, uint64_t at_ns);
void loop_timer_free(struct loop_timer *t);
uint64_t loop_now_ns(void);
/* The wall clock in milliseconds since 1970 (message times). */
uint64_t loop_wall_ms(void);
/* Runs until loop_stop is called from one of its callbacks; -1 on an
 * epoll error. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

/*
 * The node: the thread that keeps the room (store, QUIC connections,
 * gossip).  The rest of the program talks to it only by passing struct
 * node_msg values: node_submit hands a request over (it is the node's
 * until it comes back), and node_take returns finished requests and
 * events, which are then the caller's.  node_fd becomes readable when
 * node_take has something.
 */
struct node;

/*
 * Sending limits (docs/SECURITY.md, "Rate limits and reply loops").
 * rate: a token bucket of burst messages, filled with n every per_s
 * seconds; all zero means the default, 20/min,10.  damp: n answers
 * between two members within window_s seconds, then answers into that
 * exchange are refused; all zero means the default 12/5m, off set means
 * never.
 */
struct papo_rate {
	uint32_t n, per_s, burst;
};
struct papo_damp {
	uint32_t n, window_s;
	int off;
};
#define PAPO_RATE_DEFAULT "20/min,10"
#define PAPO_DAMP_DEFAULT "12/5m"

/* Parses PAPO_RATE, "N/UNIT[,BURST]" (UNIT s, min or h; BURST defaults
 * to N), into out; -1 with the reason. */
int rate_parse(char err[PAPO_ERR_LEN], const char *s, struct papo_rate *out);
/* Parses PAPO_DAMP, "N/TIME" (TIME as 300s, 5m or 1h) or "off"; -1 with
 * the reason. */
int damp_parse(char err[PAPO_ERR_LEN], const char *s, struct papo_damp *out);

struct node_config {
	const char *home;        /* $PAPO_HOME, holding room.json */
	const char *listen;      /* QUIC "ADDR:PORT"; port 0 picks one */
	const char *advertise;   /* "ADDR:PORT,..." advertised first, or NULL */
	unsigned version;        /* protocol version spoken: 0 the newest,
	                          * 1 or 2 as a daemon of that version (tests) */
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
};

/* Whether text is a PAPO_KEEP value node_start takes; -1 with err saying
 * what is accepted. */
int node_keep_check(char err[PAPO_ERR_LEN], const char *text);

enum node_kind {
	NODE_SEND = 1,       /* request: text, to, reply_to -> json result */
	NODE_STATUS,         /* request: -> json status */
	NODE_HISTORY,        /* request: limit, before, since, from -> json */
	NODE_READ,           /* request: text = ids shown to an agent, space-
	                      * separated: their authors get read receipts */
	NODE_EV_MESSAGE,     /* event: a message from another member */
	NODE_EV_SENT,        /* event: a message this member sent, for
	                      * watchers (the dashboard), not its agents */
	NODE_EV_RECEIPT,     /* event: a delivered/read receipt */
	NODE_EV_PRESENCE,    /* event: a member went online or offline */
	NODE_EV_ADDRS,       /* event: what the node advertises changed;
	                      * text is the invite to print from now on */
	NODE_ADMIN,          /* request: to = the member to make an admin
	                      * (the owner only) -> json */
	NODE_EV_ROOM,        /* event: who governs the room changed (an
	                      * admin made), or its key (an epoch) */
	NODE_ROTATE,         /* request: a new key epoch (owner or admin)
	                      * -> json */
	NODE_REMOVE,         /* request: to = the member to remove (owner or
	                      * admin): a new epoch without it -> json */
	NODE_EV_REFUSED,     /* event: the room's newest key was not given
	                      * to this member (an invite from before a key
	                      * change): text says why; the room stops */
	/* The rooms themselves (node.c), whatever room names: */
	NODE_ROOMS,          /* request: -> json {"rooms": [...], "default"} */
	NODE_JOIN,           /* request: text = an invite, name and about
	                      * this member's there -> json, the room */
	NODE_CREATE,         /* request: text = the room's name (NULL: the
	                      * derived one), name and about -> json, the
	                      * room and its "invite" */
	NODE_LEAVE,          /* request: room; limit 1: its files deleted,
	                      * else moved aside -> json */
	NODE_DEFAULT,        /* request: room becomes the default -> json */
	NODE_EV_ROOMS,       /* event: a room joined, made or left: json
	                      * as NODE_ROOMS answers */
};

struct node_msg {
	enum node_kind kind;
	void *ctx;               /* the requester's; the node leaves it be */
	/* Request fields, owned by the message. */
	/* The room a request is for: its name, its id or the start of its
	 * id (4 characters at least); NULL or "": the default room, which
	 * is the only one, else the one set (NODE_DEFAULT). */
	char *room;
	/* Set by the node on every answer and event of a room: its id. */
	char room_id[PAPO_ROOMID_LEN + 1];
	char *name, *about;      /* join, create: this member's */
	char *text;
	char *to;                /* a member's name or id, or NULL */
	char *from;              /* history: only this member's messages */
	char reply_to[PAPO_MSGID_LEN + 1];
	/* history: with after set, the messages text names ("ID ID ...")
	 * then the last limit messages of the others that came after
	 * message after in the log ("" or an id the log no longer holds:
	 * its start), oldest first, instead of by time; the result says
	 * the newest message of the log ("last", any author's) and how
	 * many more there were ("more"). */
	int after_set;
	char after[PAPO_MSGID_LEN + 1];
	size_t limit;
	/* history: the newest messages before (before, before_id) in
	 * history's order (by time, then id; docs/RELIABILITY.md, "History
	 * order"); before_id "" pages by time alone.  The result's
	 * "earlier" is the cursor that goes on. */
	uint64_t before, since;
	char before_id[PAPO_MSGID_LEN + 1];
	int person;              /* send: from the API (a person, the
	                          * dashboard), not an agent's MCP tool */
	/* Result: code 0, or an HTTP-like status (400 bad input, 404 no
	 * such member or message, 413 too long, 429 limited, 500) with err
	 * saying why. */
	int code;
	char err[PAPO_ERR_LEN];
	/* With 429: which limit ("rate" or "damping") and the seconds
	 * after which a send may pass again. */
	const char *limited;
	unsigned retry_after_s;
	char *json;              /* result or event as JSON text */
};

/* n bytes from the system's secure random generator (libsodium). */
void node_random(void *p, size_t n);

struct node_msg *node_msg_new(enum node_kind kind);
void node_msg_free(struct node_msg *m);

/* Starts the node thread: loads the identity and every room home holds
 * (room_dirs: none is fine, one may be joined later), binds the UDP
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
struct node_msg *node_take(struct node *n);

/*
 * Diagnostics: one line each on stderr, prefixed with the level.  The
 * level is the one process-wide setting papo keeps: main sets it once
 * from PAPO_LOG before any thread starts; afterwards it is only read.
 */
enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Parses "error", "warn", "info" or "debug"; -1 for anything else. */
int log_parse_level(const char *s);
void log_set_level(enum log_level l);
void log_msg(enum log_level l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Replaces path atomically with len bytes of data, mode 0600: a private
 * temporary file beside it, fsync'd, renamed over it, and the directory
 * fsync'd, so a reader, or a crash, sees the old file or the whole new
 * one (node/fsutil.c; every state file in $PAPO_HOME is written so).  0,
 * or -1 with err naming the file.
 */
int fs_write(char err[PAPO_ERR_LEN], const char *path, const void *data,
    size_t len);

/*
 * A whole number from a state file, read as strictly as the wire reads
 * one: 0 with *out set when v is a cJSON number that is finite, has no
 * fraction, and lies in [min, max] (both within +-2^53, where a double
 * holds every integer); -1 otherwise (v NULL or not a number, 1e999, a
 * value out of range, 1.5), and *out is left alone.  Every loader of a
 * file in $PAPO_HOME takes its numbers through it (node/fsutil.c).
 */
struct cJSON;
int fs_json_int(const struct cJSON *v, int64_t min, int64_t max,
    int64_t *out);
#define FS_JSON_INT_MAX 9007199254740992LL     /* 2^53 */

#endif
