/*
 * member.h: the members of a room as this member knows them (member.c):
 * the member table, whether a member is online now, sending to members,
 * peers.json and the members' status.  The table is member.c's alone
 * (struct members, opaque); a member's record, struct member, stays
 * visible: it is what a connection (struct link), an outbox entry and an
 * upstream slot point at, and every part reads a few of its fields
 * (m->conn, m->id, m->name) on each frame; a getter for each of its ~30
 * fields would be as long as the struct and hide nothing.  Its dialling
 * fields (ndial, next_dial, backoff_ms) are written only by dial.c,
 * presence.c and room.c's connection events.  Dialling (dial.h) and
 * presence (presence.h) stand on it.  Above core.h and keyring.h; all of
 * it on the node thread.
 */
#ifndef PAPO_MEMBER_H
#define PAPO_MEMBER_H

#include <stddef.h>
#include <stdint.h>

#include "node/room/core.h"

#define ALIVE_NS (35ull * NS_PER_S)    /* life shown this recently: online */
#define ALIVE_MIN_NS (4ull * NS_PER_S) /* ...at the least */
/* Announcements: every ANNOUNCE_NS, or every ANNOUNCE_FAST_NS in a small
 * room while a member is reached only through others (its presence
 * rests on them then, and it announces as often for us). */
#define ANNOUNCE_NS (10ull * NS_PER_S)
#define ANNOUNCE_FAST_NS (3ull * NS_PER_S)
#define DIAL_BACKOFF_MIN_MS 500u
#define DIAL_BACKOFF_MAX_MS 30000u
#define RELAY_REDIAL_NS (30ull * NS_PER_S)   /* direct tries, relayed */

struct member_ann;          /* member.c's: a signed entry, by length */

/*
 * What every member costs, for every other, is this record: kept small
 * (a room may hold ROOM_MEMBERS_MAX, and a simulation n rooms of n), so
 * what is long and often empty is allocated by its length: the about
 * text, the addresses and the latest signed announcement.
 */
struct member {
	/* Who it is, and what it says of itself. */
	uint8_t id[PAPO_KEY_LEN];
	char idtext[PAPO_ID_LEN + 1];
	char name[PAPO_NAME_MAX + 1];
	const char *about;          /* never NULL (member_set_about) */
	struct addr *addr;          /* naddr of them, at most PAPO_ADDR_MAX
	                             * (member_set_addrs) */
	size_t naddr;
	struct member_ann *ann;     /* its latest signed announcement, passed
	                             * on as it came (member_ann_get); NULL
	                             * none */
	/* Its life. */
	uint64_t seen;              /* wall ms of the last sign of life */
	uint64_t announced;         /* its clock's time of its latest announce
	                             * (version 3: its signed counter, of
	                             * announcements and bye alike) */
	uint64_t left_at;           /* announced when it said bye */
	int64_t clock_ms;           /* its wall clock less ours (ms), as its
	                             * last announcement on its own
	                             * connection showed: papo doctor's */
	uint64_t alive_until;       /* monotonic ns: online until then */
	uint64_t ann_at;            /* monotonic ns its last announcement came */
	uint64_t ann_gap;           /* ns between the two before */
	uint64_t alive_ns;          /* life shown lasts this long; 0 ALIVE_NS */
	uint32_t heap_at;           /* presence.c's: its place in the heap of
	                             * deadlines plus 1, 0 none */
	/* How it is reached. */
	struct quic_conn *conn;     /* the connection in use, once greeted
	                             * (written by member_set_conn only) */
	struct member *via;         /* who last brought news of its life */
	struct addr seen_at;        /* where our last direct connection saw
	                             * it (its NAT's mapping): dialled too,
	                             * as that NAT lets in who it last sent
	                             * to (a restarted member finds those
	                             * that cannot be dialled otherwise) */
	uint64_t beacon_dial;       /* ns of the last dial a beacon made */
	uint64_t dial_since;        /* monotonic ns the dials in flight began */
	uint64_t next_dial;         /* monotonic ns; 0 none planned */
	uint32_t backoff_ms;
	int ndial;                  /* dials in flight */
	uint64_t sync_key;          /* both histories as its last sync
	                             * request found them; 0 none yet */
	/* Flags, 0 or 1, a byte each: together, as each would otherwise
	 * take 8 bytes between wider fields. */
	uint8_t has_seen_at;
	uint8_t signs;              /* its presence came signed (version 3):
	                             * unsigned claims about it are ignored */
	uint8_t has_clock;          /* clock_ms was measured */
	uint8_t left;               /* said bye since its last announce */
	uint8_t shown_online;       /* the state last told to the program */
	uint8_t punched;            /* its connection came of a punch */
	uint8_t lan;                /* its connection is on our link */
	uint8_t open;               /* takes connections we start: it
	                             * answered our dial (not a punch), or
	                             * greeted us from an address it
	                             * advertises, with no private one */
	uint8_t removed;            /* removed from the room: never dialled */
	uint8_t refused;            /* its hello was refused: it holds no key
	                             * of ours (an old invite); not listed,
	                             * dialled nor waited for until it greets
	                             * under our newest epoch */
};

/* The table and its save timer: 0, or -1 out of memory. */
int members_new(struct room *room);
/* Frees the table and the timer; a room never made is a no-op. */
void members_free(struct room *room);
/* The members, in the order met: i below members_n (0 before
 * members_new). */
size_t members_n(const struct room *room);
struct member *member_at(const struct room *room, size_t i);
/* Seals f and queues it on m's connection; -1 when m has none or it
 * cannot be sent. */
int member_send(struct room *room, struct member *m, const struct frame *f);
/* Sends f to every connected member but except (may be NULL). */
void members_flood(struct room *room, const struct frame *f,
    const struct member *except);
/* The member of that id; NULL when not in the table. */
struct member *member_find(const struct room *room,
    const uint8_t id[PAPO_KEY_LEN]);
/* The member of that id, added when new; NULL for ourselves, when the
 * table is full, or out of memory. */
struct member *member_add(struct room *room, const uint8_t id[PAPO_KEY_LEN]);
/* m's about text is a copy of about (at most PAPO_ABOUT_MAX bytes):
 * -1 out of memory, the old one kept. */
int member_set_about(struct member *m, const char *about);
/* m's addresses are n of a (at most PAPO_ADDR_MAX, more left out): -1
 * out of memory, the old ones kept. */
int member_set_addrs(struct member *m, const struct addr *a, size_t n);
/* m's latest signed announcement is p (p->has_sig), kept by its length:
 * -1 out of memory, the one before kept. */
int member_ann_set(struct member *m, const struct frame_peer *p);
/* That announcement into p as it came: 0, or -1 when none is kept. */
int member_ann_get(const struct member *m, struct frame_peer *p);
/* Its name for people, in buf when it has none yet. */
const char *member_name(const struct member *m, char buf[16]);
/* By name or id; NULL when none or ambiguous (*ambiguous set). */
struct member *member_lookup(const struct room *room, const char *who,
    int *ambiguous);
/* The protocol version of m's connection, 0 when it has none. */
unsigned member_version(const struct member *m);
/* Whether m's connection goes through the relay at both ends
 * (relay_both_ends). */
int member_relayed(const struct room *room, const struct member *m);
/* m's dials still under way, not counting the one whose connection m
 * now has. */
size_t member_dials(const struct member *m);
/* Whether the room is small enough for a full mesh. */
int members_small(const struct room *room);
/* m's connection is qc now (NULL: none): the only way m->conn is
 * written, as the table keeps the members connected in a list of its
 * own.  Out of memory, qc is closed and m keeps none. */
void member_set_conn(struct room *room, struct member *m,
    struct quic_conn *qc);
/* How many members we have a connection with, and each of them: i
 * below members_active, in no order, the list valid until the next
 * member_set_conn. */
size_t members_active(const struct room *room);
struct member *member_connected(const struct room *room, size_t i);
/* Whether m is reachable now (presence). */
int member_online(const struct room *room, const struct member *m);
/* m showed life: online from now for as long as its announcements
 * allow (member_announced), ALIVE_NS until two were heard. */
void member_alive(struct member *m);
/* A new announcement of m's came (directly or through others): the time
 * between its announcements sets how long life shown lasts, so that a
 * member announcing every 3 s (one reached through others, in a small
 * room) shows offline within 8 s of falling silent, and one of an older
 * release, every 10 s, keeps its 35 s; in a room no longer small, at
 * least 2.5 periods of ANNOUNCE_NS. */
void member_announced(const struct room *room, struct member *m);
/* m's own announcement, made at its clock's ms, came on its own
 * connection just now: clock_ms is that less our clock, plus half the
 * round trip it travelled (the status's clock_offset_ms). */
void member_clock(struct member *m, uint64_t ms);
/* Calls fn with every address of every member. */
void members_addrs(struct room *room, void (*fn)(void *arg,
    const struct addr *a), void *arg);
/* Writes peers.json now, or in a moment (the save timer). */
void members_save(struct room *room);
void members_save_later(struct room *room);
/* Reads peers.json into the table; a missing or damaged one is logged. */
void members_load(struct room *room);
/* Status parts (core.h): a member's "name", "id", "about"; its "online",
 * "direct", "path", "rtt_ms", "protocol", "mtu", "last_seen",
 * "clock_offset_ms"; and the list of rooms' "members" (others, not
 * removed) and "online". */
void member_status_who(const struct room *room, const struct member *m,
    cJSON *e);
void member_status_path(const struct room *room, const struct member *m,
    cJSON *e);
void members_summary_json(const struct room *room, cJSON *o);

#endif
