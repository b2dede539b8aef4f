/*
 * reach.h: how this member is reached from outside (docs/REACHABILITY.md):
 * the addresses its peers say they see it at (a version 2 hello's "obs"),
 * what they tell of its NAT, and the addresses it advertises (in its
 * hello, in its entry of peers frames, in the invites it prints): the
 * ones the person gave (--advertise) first, then the one its router
 * mapped for it (UPnP-IGD or NAT-PMP), then the public address its peers
 * agree on, then its local ones, and last its TURN relay's address.
 *
 * Pure: no I/O, no clock; the node thread owns one.
 */
#ifndef PAPO_REACH_H
#define PAPO_REACH_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "node/papo.h"

#define REACH_OBS_MAX 16        /* peers' observations remembered */

enum reach_nat {
	REACH_UNKNOWN = 0,      /* fewer than two peers told us */
	REACH_OPEN,             /* peers see us at one of our own addresses */
	REACH_CONE,             /* two peers agree on a public IP and port */
	REACH_SYMMETRIC,        /* they agree on the IP, not on the port */
};

struct reach {
	struct addr advertise[PAPO_ADDR_MAX];   /* given by the person */
	size_t nadvertise;
	struct addr local[PAPO_ADDR_MAX];       /* where the socket is bound */
	size_t nlocal;
	struct addr mapped;                     /* by the router, if has_mapped */
	struct addr relayed;                    /* by a TURN server, if has_relayed */
	int has_mapped, has_relayed;
	struct {
		uint8_t peer[PAPO_KEY_LEN];
		struct addr seen;
	} obs[REACH_OBS_MAX];
	size_t nobs, next;
};

/* Starts with what the person advertises and the local addresses (as
 * addr_local gives them). */
void reach_init(struct reach *r, const struct addr *advertise, size_t nadv,
    const struct addr *local, size_t nlocal);
/* The local addresses now (a laptop that changed networks has others):
 * 1 when what we advertise changed. */
int reach_set_local(struct reach *r, const struct addr *local, size_t nlocal);
/* Peer says it sees us at seen; a peer's newer word replaces its older.
 * 1 when what we advertise changed. */
int reach_observe(struct reach *r, const uint8_t peer[PAPO_KEY_LEN],
    const struct addr *seen);
/* A peer is gone: its word no longer counts.  1 when what we advertise
 * changed. */
int reach_forget(struct reach *r, const uint8_t peer[PAPO_KEY_LEN]);
/* The address the router mapped for us, or NULL when there is none any
 * more.  1 when what we advertise changed. */
int reach_set_mapped(struct reach *r, const struct addr *a);
/* The relayed address of our TURN allocation, or NULL.  1 when what we
 * advertise changed. */
int reach_set_relayed(struct reach *r, const struct addr *a);
enum reach_nat reach_nat(const struct reach *r);
/* The public address two peers agree on (a cone NAT's mapping), or -1. */
int reach_public(const struct reach *r, struct addr *out);
/* The addresses to advertise, in order, without repeats: given, mapped,
 * public, local ones (loopback only when every local address is
 * loopback), relayed; the relayed one is kept when the list is full (it
 * is the one that works where nothing else does).  Returns the count (at
 * most max). */
size_t reach_addrs(const struct reach *r, struct addr *out, size_t max);
/* What to offer for a punch: reach_addrs, then every address a single
 * peer said it sees us at.  One peer's word is not enough to advertise,
 * but it is the best guess of our NAT's mapping when only the member
 * arranging the punch is outside: a wrong one costs a few datagrams. */
size_t reach_punch_addrs(const struct reach *r, struct addr *out, size_t max);
const char *reach_nat_name(enum reach_nat n);

#endif
