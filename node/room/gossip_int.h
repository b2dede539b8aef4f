/*
 * gossip_int.h: what gossip's own files share, and nothing else includes:
 * gossip.c (connections, hello and peers, requests, the glue to punch,
 * beacon and reach), member.c (the member table, presence, dialling,
 * peers.json), deliver.c (messages: outbox, acks, receipts, history,
 * sync) and relay.c (port mapping and the TURN relay).  server/ and the other node modules see only gossip.h.  All of
 * it belongs to the node thread, and none of it may block.
 */
#ifndef PAPO_GOSSIP_INT_H
#define PAPO_GOSSIP_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "lib/loop.h"
#include "node/net/beacon.h"
#include "node/net/net.h"
#include "node/net/portmap.h"
#include "node/net/punch.h"
#include "node/net/quic.h"
#include "node/net/reach.h"
#include "node/net/turn.h"
#include "node/room/gossip.h"
#include "node/room/limit.h"
#include "node/wire/frame.h"

#define GOSSIP_MEMBERS_MAX 256
#define OUTBOX_RETRY_NS (30ull * NS_PER_S)
#define ALIVE_NS (35ull * NS_PER_S)    /* life shown this recently: online */
#define ALIVE_MIN_NS (4ull * NS_PER_S) /* ...at the least */
/* Announcements: every ANNOUNCE_NS, or every ANNOUNCE_FAST_NS in a small
 * room while a member is reached only through others (its presence
 * rests on them then, and it announces as often for us). */
#define ANNOUNCE_NS (10ull * NS_PER_S)
#define ANNOUNCE_FAST_NS (3ull * NS_PER_S)
/* A connection that has carried nothing for this long (both ends ping
 * every 1.5 s) is no longer the member's path: a new one replaces it. */
#define GOSSIP_SILENT_MS 3500u
#define DIAL_BACKOFF_MIN_MS 500u
#define DIAL_BACKOFF_MAX_MS 30000u
#define UPSTREAM_SLOTS 4096       /* remembered msg id -> who sent it */
#define ACK_SEEN_SLOTS 4096       /* acks forwarded lately */
#define READ_SLOTS 4096           /* read receipts remembered as sent */
#define RELAY_REDIAL_NS (30ull * NS_PER_S)   /* direct tries, relayed */

struct member {
	uint8_t id[32];
	char idtext[PAPO_ID_LEN + 1];
	char name[PAPO_NAME_MAX + 1];
	char about[PAPO_ABOUT_MAX + 1];
	struct addr addr[PAPO_ADDR_MAX];
	size_t naddr;
	struct addr seen_at;        /* where our last direct connection saw
	                             * it (its NAT's mapping): dialled too,
	                             * as that NAT lets in who it last sent
	                             * to (a restarted member finds those
	                             * that cannot be dialled otherwise) */
	int has_seen_at;
	uint64_t seen;              /* wall ms of the last sign of life */
	uint64_t announced;         /* its clock's time of its latest announce
	                             * (version 3: its signed counter, of
	                             * announcements and bye alike) */
	int signs;                  /* its presence came signed (version 3):
	                             * unsigned claims about it are ignored */
	struct frame_peer ann;      /* its latest signed announcement, passed
	                             * on as it came (ann.has_sig 0: none) */
	uint64_t left_at;           /* announced when it said bye */
	uint64_t alive_until;       /* monotonic ns: online until then */
	uint64_t ann_at;            /* monotonic ns its last announcement came */
	uint64_t ann_gap;           /* ns between the two before */
	uint64_t alive_ns;          /* life shown lasts this long; 0 ALIVE_NS */
	int left;                   /* said bye since its last announce */
	int shown_online;           /* the state last told to the program */
	struct quic_conn *conn;     /* the connection in use, once greeted */
	struct member *via;         /* who last brought news of its life */
	int punched;                /* its connection came of a punch */
	int lan;                    /* its connection is on our link */
	int open;                   /* takes connections we start: it
	                             * answered our dial (not a punch), or
	                             * greeted us from an address it
	                             * advertises, with no private one */
	uint64_t beacon_dial;       /* ns of the last dial a beacon made */
	int ndial;                  /* dials in flight */
	uint64_t dial_since;        /* monotonic ns the dials in flight began */
	uint32_t backoff_ms;
	uint64_t next_dial;         /* monotonic ns; 0 none planned */
	int removed;                /* removed from the room: never dialled */
	int refused;                /* its hello was refused: it holds no key
	                             * of ours (an old invite); not listed,
	                             * dialled nor waited for until it greets
	                             * under our newest epoch */
	uint64_t sync_key;          /* both histories as its last sync
	                             * request found them; 0 none yet */
};

/* An own message not yet acknowledged by everyone it waits for, and the
 * send request still waiting for its answer, if any. */
struct outmsg {
	char id[PAPO_MSGID_LEN + 1];
	struct member **wait, **done;
	size_t nwait, ndone;
	int any;                    /* nobody to wait for: any ack will do */
	struct node_msg *req;
	struct loop_timer *timer;
	struct gossip *g;
	struct outmsg *next;
};

/* A member removed from the room (epoch.c). */
struct removal {
	uint8_t id[32];
	uint8_t by[32];             /* the owner or admin who removed it */
	uint64_t ts;                /* ms, by's clock */
	uint32_t epoch;             /* the epoch that removed it */
};

/* An epoch frame kept only for whom it removed (epoch.c): a change that
 * lost to another of its number, or the one that removed us. */
struct epoch_kept {
	char *frame;                /* its signed epoch frame, JSON */
	uint8_t sig[64];            /* that frame's signature */
	uint32_t n;                 /* its epoch */
};

/* A key epoch held (epoch.c). */
struct epoch_held {
	uint32_t n;                 /* 0: the room secret's key */
	uint8_t secret[32];         /* zeros for epoch 0 */
	struct room_keys keys;      /* its sealing key; the room's id */
	uint8_t by[32];             /* who made it; zeros for epoch 0 */
	char *frame;                /* its signed epoch frame, JSON; or NULL */
	uint8_t sig[64];            /* that frame's signature: of two changes
	                             * of one number, the lower is kept */
};

/*
 * What a room remembers of its recent traffic (deliver.c): who passed
 * each message on (its acks go back that way), the acks forwarded
 * lately, the read receipts sent.  Allocated at the room's first
 * message, so that a room that never had one costs nothing of it.
 */
struct recent {
	struct {
		uint64_t id;
		struct member *m;
	} upstream[UPSTREAM_SLOTS];
	uint64_t ack_seen[ACK_SEEN_SLOTS];
	size_t ack_seen_next;
	uint64_t read_sent[READ_SLOTS];   /* ids whose read receipt went out */
	size_t read_next;
};

struct gossip {
	struct gossip_env env;
	struct net *net;            /* what it shares with the other rooms */
	char rid[PAPO_ROOMID_LEN + 1];  /* its public id, on its events */
	struct punch *punch;        /* direct paths arranged through others */
	struct beacon *beacon;      /* LAN discovery, or NULL when off */
	int stopping;               /* in gossip_free: nothing new starts */
	/* member.c's word to the parts above it (gossip_new sets it): m is
	 * online again through others, so what waits for it may go. */
	void (*member_back)(struct gossip *g, const struct member *m);
	struct member **members;
	size_t nmembers;
	struct outmsg *outbox;
	struct limit *limit;        /* rate limits and damping (limit.h) */
	struct loop_timer *dial_timer, *retry_timer, *presence_timer;
	struct loop_timer *punch_timer;   /* dials unanswered long enough */
	struct loop_timer *announce_timer;
	struct loop_timer *save_timer;
	int save_pending;           /* save_timer armed (members_save_later) */
	struct recent *recent;      /* deliver.c's, from the first message */
	uint64_t bad_frames;
	int has_owner;              /* the room's owner is known (role.c) */
	uint8_t owner[32];
	struct frame_admin *admins; /* grants held (role.c), malloc'd */
	size_t nadmins, admins_cap;
	struct epoch_held *epochs;  /* epoch.c's, unsorted */
	size_t nepochs;
	struct epoch_kept *others;  /* epoch frames not held for their key,
	                             * kept for whom they removed */
	size_t nothers;
	struct removal *removed;    /* members removed, as epochs said */
	size_t nremoved;
	int gone;                   /* we were removed: me_removal says how */
	char *shut_out;             /* why the room's newest key was not
	                             * given us (the program was told), or
	                             * NULL: in the list of rooms */
	struct removal me_removal;
	uint64_t own_seq;           /* our last announcement's or bye's
	                             * counter: wall ms, never going back */
	uint64_t retain_checked;    /* ns of the last days-retention check */
	size_t retain_at;           /* count retention: messages held when
	                             * the next check is worth making */
	uint64_t syncs_asked;       /* sync requests sent */
	uint64_t below_floor;       /* messages refused under the floor */
};

/* gossip.c: connections and requests. */

/* Sends f on l, sealed as its version takes it. */
void gossip_send_link(struct gossip *g, struct link *l, const struct frame *f);

/* Hands o to the program as an event of kind, and frees o. */
void gossip_emit_json(struct gossip *g, enum node_kind kind, cJSON *o);
/* Seals f and queues it on m's connection; -1 when m has none or it
 * cannot be sent. */
int gossip_send_frame(struct gossip *g, struct member *m, const struct frame *f);
/* Sends f to every connected member but except (may be NULL). */
void gossip_flood(struct gossip *g, const struct frame *f,
    const struct member *except);
/* Greets the member at the other end of l: our hello, with our history's
 * count and digest. */
void hello_send(struct gossip *g, struct link *l);
/* What invites hold changed (addresses or the newest key epoch): the
 * program gets the new invite. */
void gossip_invite_changed(struct gossip *g);
/* The events of l, a connection of g's, as net.c hands them over (its
 * opening: hello_send). */
void gossip_link_frame(struct gossip *g, struct link *l, const uint8_t *p,
    size_t n);
void gossip_link_moved(struct gossip *g, struct link *l);
void gossip_link_closed(struct gossip *g, struct link *l);
/* l was accepted and greets with its first frame: 1 when it opens under
 * g's keys as a hello, and l is g's from now on (answered with our
 * hello); 0 when it is not of this room. */
int gossip_link_adopt(struct gossip *g, struct link *l, const uint8_t *p,
    size_t n);
/* Answers req with an error: code and fmt filled with arg. */
void gossip_fail(struct gossip *g, struct node_msg *req, int code,
    const char *fmt, const char *arg);

/* member.c: the member table, presence, dialling, peers.json. */

/* The member of that id; NULL when not in the table. */
struct member *member_find(const struct gossip *g, const uint8_t id[32]);
/* The member of that id, added when new; NULL for ourselves, when the
 * table is full, or out of memory. */
struct member *member_add(struct gossip *g, const uint8_t id[32]);
/* Its name for people, in buf when it has none yet. */
const char *member_name(const struct member *m, char buf[16]);
/* By name or id; NULL when none or ambiguous (*ambiguous set). */
struct member *member_lookup(const struct gossip *g, const char *who,
    int *ambiguous);
/* The protocol version of m's connection, 0 when it has none. */
unsigned member_version(const struct member *m);
/* Whether m's connection goes through the relay at both ends
 * (relay_both_ends). */
int member_relayed(const struct gossip *g, const struct member *m);
/* m's dials still under way, not counting the one whose connection m
 * now has. */
size_t member_dials(const struct member *m);
/* Whether the room is small enough for a full mesh. */
int members_small(const struct gossip *g);
/* Whether m is reachable now (presence). */
int member_online(const struct gossip *g, const struct member *m);
/* m showed life: online from now for as long as its announcements
 * allow (member_announced), ALIVE_NS until two were heard. */
void member_alive(struct member *m);
/* A new announcement of m's came (directly or through others): the time
 * between its announcements sets how long life shown lasts, so that a
 * member announcing every 3 s (one reached through others, in a small
 * room) shows offline within 8 s of falling silent, and one of an older
 * release, every 10 s, keeps its 35 s; in a room no longer small, at
 * least 2.5 periods of ANNOUNCE_NS. */
void member_announced(const struct gossip *g, struct member *m);
/* Tells the program of every change of presence; sets the presence
 * timer. */
void members_presence_check(struct gossip *g);
/* Starts punching to the members that need it (gossip.c, "Punching"),
 * and arms the timer for the next that will. */
void members_punch_check(struct gossip *g);
void members_presence_timer(void *arg);
/* Sets the dial timer for the next member due, if there is room. */
void members_plan_dials(struct gossip *g);
/* Our TURN relay has an address now: dials what it lets us reach. */
void members_relay_ready(struct gossip *g);
/* Our TURN relay failed: the connections through it end now rather
 * than at their idle timeout. */
void members_relay_lost(struct gossip *g);
/* Calls fn with every address of every member. */
void members_addrs(struct gossip *g, void (*fn)(void *arg,
    const struct addr *a), void *arg);
/* Dials m at each of n addresses at once. */
void member_dial_at(struct gossip *g, struct member *m, const struct addr *a,
    size_t n);
/* member_dial_at on a socket of its own (quic_sock_new): a punch's. */
void member_dial_on(struct gossip *g, struct member *m, const struct addr *a,
    size_t n, struct quic_sock *sock);
/* The dial timer: dials the members due. */
void members_dial(void *arg);
/* In a large room over its limit of neighbours, lets a random open one
 * go, never keep. */
void members_evict(struct gossip *g, const struct member *keep);
/* Writes peers.json now, or in a moment (the save timer). */
void members_save(struct gossip *g);
void members_save_later(struct gossip *g);
void members_save_timer(void *arg);
/* Reads peers.json into the table; a missing or damaged one is logged. */
void members_load(struct gossip *g);

/* deliver.c: messages. */

/* Takes req (a send) and answers it: delivered, queued, or an error. */
void deliver_send(struct gossip *g, struct node_msg *req);
/* Takes req (a history request) and answers it. */
void deliver_history(struct gossip *g, struct node_msg *req);
/* Takes req (message ids shown to an agent), sends their read receipts
 * and answers it. */
void deliver_read(struct gossip *g, struct node_msg *req);
/* Frames received on l. */
void deliver_on_msg(struct gossip *g, struct link *l, struct frame_msg *m);
void deliver_on_ack(struct gossip *g, struct link *l, struct frame *f);
void deliver_on_sync(struct gossip *g, struct link *l, struct frame_sync *s);
/* Sends to a sync request: the ids of our latest messages. */
void deliver_sync_request(struct gossip *g, struct member *to);
/* Compacts the log when retention says it has grown enough (after a
 * message is stored). */
void deliver_retain(struct gossip *g);
/* The history answer's "retention" object, or NULL when nothing was
 * ever dropped. */
cJSON *deliver_retention_json(struct gossip *g);
/* Sends o's message again to the members it waits for that are
 * connected (only, when not NULL). */
/* Sends o's message again to the connected members it waits for (only,
 * when not NULL): the retry. */
void outmsg_resend(struct gossip *g, struct outmsg *o, struct member *only);
/* Sends o's message to every connected member (only, when not NULL)
 * that has not acknowledged it, to reach through them those it waits
 * for: a new connection, or a member back online, takes the outbox at
 * once rather than at the next retry.  A member that has it already
 * acknowledges it again and passes nothing on. */
void outmsg_through(struct gossip *g, struct outmsg *o, struct member *only);
/* m is online again, through others: what waits for it goes out through
 * every neighbour. */
void deliver_member_back(struct gossip *g, const struct member *m);
/* Answers o's send request if it waits, unlinks and frees o. */
void outmsg_free(struct gossip *g, struct outmsg *o);
/* The retry timer: resends the outbox and greets every neighbour again. */
void deliver_retry(void *arg);
/* At start: the messages outbox.jsonl kept wait for acks again. */
void deliver_load_outbox(struct gossip *g);
/* Status's "limits": the rate, the receiving cap, damping and our
 * exchanges; and a member's messages dropped over the cap. */
void deliver_limits_json(struct gossip *g, cJSON *o);

/* epoch.c: the room's key epochs. */

/* At start: epoch 0 (the room's key), then those epochs.json keeps. */
void epoch_load(struct gossip *g);
void epoch_free(struct gossip *g);
/* Epoch n's keys, or NULL when not held. */
/* The epoch numbered n, or NULL when we do not hold it (core.c). */
struct epoch_held *epoch_find(const struct gossip *g, uint32_t n);
const struct room_keys *epoch_keys(const struct gossip *g, uint32_t n);
/* The newest epoch held: version 3 connections are sealed with it. */
uint32_t epoch_newest(const struct gossip *g);
/* Holds epoch n (frame: its signed epoch frame's JSON text, or NULL)
 * and saves epochs.json: 1 added, 0 held already, -1 out of memory. */
int epoch_add(struct gossip *g, uint32_t n, const uint8_t secret[32],
    const uint8_t by[32], const char *frame);
/* Status: "epoch". */
void epoch_json(const struct gossip *g, cJSON *o);
/* m greeted with h: the epoch frames it missed, if it holds fewer. */
void epoch_on_hello(struct gossip *g, struct member *m,
    const struct frame_hello *h);
/* A version 3 hello from a member we never met, under an epoch older
 * than our newest: refused with the reason (logged, and the newest epoch
 * frame sent to it), l closed; 1 when refused. */
int epoch_refuse(struct gossip *g, struct link *l,
    const struct frame_hello *h);
/* An epoch frame received on l. */
void epoch_on_frame(struct gossip *g, struct link *l,
    const struct frame_epoch *e);
/* A frame from l that named an epoch we hold did not open under it:
 * l's member may hold another change of that number; it gets ours
 * (once per link and epoch). */
void epoch_unopened(struct gossip *g, struct link *l, const uint8_t *p,
    size_t n);
/* Takes req (NODE_ROTATE, or NODE_REMOVE with to: the member) and
 * answers it. */
void epoch_request_rotate(struct gossip *g, struct node_msg *req);
/* The removal of member id, or NULL when it was not removed. */
const struct removal *epoch_removed(const struct gossip *g,
    const uint8_t id[32]);
/* History's "room": each key change held, with its line ("ana removed
 * cy; the room key changed (epoch 3)"). */
void epoch_history_json(const struct gossip *g, cJSON *o);
/* After members_load: removed members marked (never dialled). */
void epoch_mark(struct gossip *g);

/* role.c: the owner and the admins. */

/* At start: the owner from room.json, the grants from admins.json. */
void role_load(struct gossip *g);
/* The owner's id, NULL while not known. */
const uint8_t *role_owner(const struct gossip *g);
int role_is_admin(const struct gossip *g, const uint8_t id[32]);
/* "owner", "admin" or "member". */
const char *role_of(const struct gossip *g, const uint8_t id[32]);
/* Fills a version 3 hello's owner and events. */
void role_hello(const struct gossip *g, struct frame_hello *h);
/* m greeted with h: the owner from our inviter, our grants to a member
 * holding fewer. */
void role_on_hello(struct gossip *g, struct member *m,
    const struct frame_hello *h);
/* An admin grant received on l. */
void role_on_admin(struct gossip *g, struct link *l,
    const struct frame_admin *a);
/* Takes req (NODE_ADMIN, to: the member) and answers it. */
void role_request_admin(struct gossip *g, struct node_msg *req);
/* Status: "owner" and "admins". */
void role_json(const struct gossip *g, cJSON *o);

#endif
