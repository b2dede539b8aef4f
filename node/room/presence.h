/*
 * presence.h: presence and the members we hear of (presence.c): the
 * program told when a member goes online or offline, our own
 * announcements, and the hello hooks and frame handlers that fill the
 * member table.  Its timers and our announcements' counter are its own
 * (struct presence, opaque).  Above dial.h and member.h; on the node
 * thread.
 */
#ifndef PAPO_PRESENCE_H
#define PAPO_PRESENCE_H

#include <stdint.h>

#include "node/room/dial.h"

/* Its presence and announce timers: 0, or -1 out of memory. */
int presence_new(struct room *room);
/* Arms our first announcement. */
void presence_start(struct room *room);
/* Frees the timers; none made: a no-op. */
void presence_free(struct room *room);
/* Tells the program of every change of presence, looking at every
 * member (after what may change many: a connection opened or closed,
 * members removed); sets the presence timer. */
void members_presence_check(struct room *room);
/* The same for m alone, after news of m only (its life, its bye). */
void member_presence_touch(struct room *room, struct member *m);
/* Our next announcement's (or bye's) counter: the wall clock's ms, and
 * always more than the last. */
uint64_t members_next_seq(struct room *room);
/* Our announcement goes out at once rather than at the next round. */
void members_announce_soon(struct room *room);
/* Hello hooks (core.h): the member's record, dialling, neighbours and
 * presence as its hello says; then, after the roles' and epochs' hooks,
 * whom we know sent to it, and it to the others if new. */
void members_on_hello(struct room *room, const struct hello_in *in);
void members_hello_peers(struct room *room, const struct hello_in *in);
/* Frame handlers (core.h): members we hear of (news of their life,
 * passed on once), and a member leaving (offline at once). */
void members_on_peers(struct room *room, struct link *l, struct frame *f);
void members_on_bye(struct room *room, struct link *l, struct frame *f);

#endif
