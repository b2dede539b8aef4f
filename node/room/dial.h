/*
 * dial.h: reaching the members of a room (dial.c): dialling and
 * redialling them, neighbours in a large room and probing members shown
 * offline there, punching when dials go unanswered, and the TURN relay's
 * coming and going.  Its timers are its own (struct dialling, opaque).
 * Above member.h; on the node thread.
 */
#ifndef PAPO_DIAL_H
#define PAPO_DIAL_H

#include <stddef.h>

#include "node/room/member.h"

/* Its dial and punch timers: 0, or -1 out of memory. */
int dial_new(struct room *room);
/* Dials every member known at start. */
void dial_start(struct room *room);
/* Frees the timers; none made: a no-op. */
void dial_free(struct room *room);
/* Starts punching to the members that need it (room.c, "Punching"),
 * and arms the timer for the next that will. */
void members_punch_check(struct room *room);
/* News of members came (addresses, life): the relay's permissions,
 * dials and punches follow, at once in a small room, within a second
 * in a large one. */
void members_news(struct room *room);
/* Sets the dial timer for the next member due, if there is room. */
void members_plan_dials(struct room *room);
/* Our TURN relay has an address now: dials what it lets us reach. */
void members_relay_ready(struct room *room);
/* Our TURN relay failed: the connections through it end now rather
 * than at their idle timeout. */
void members_relay_lost(struct room *room);
/* Dials m at each of n addresses at once. */
void member_dial_at(struct room *room, struct member *m, const struct addr *a,
    size_t n);
/* member_dial_at on a socket of its own (quic_sock_new): a punch's. */
void member_dial_on(struct room *room, struct member *m, const struct addr *a,
    size_t n, struct quic_sock *sock);
/* In a large room over its limit of neighbours, lets a random open one
 * go, never keep. */
void members_evict(struct room *room, const struct member *keep);

#endif
