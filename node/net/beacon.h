/*
 * beacon.h: LAN discovery (docs/REACHABILITY.md).  Members on one LAN
 * find each other without a usable address: every BEACON_EVERY while
 * some member is unreachable, a daemon sends a beacon to a multicast
 * group with TTL 1, on each of its IPv4 interfaces, and it listens to
 * the group.  A beacon is sealed under the room key (XChaCha20-Poly1305):
 * outsiders learn nothing from it, not even the member id.  Inside are a
 * coarse time (beacons from more than a minute away are refused, so an
 * old one cannot be replayed for long), the member id and its QUIC
 * port; the receiver dials the sender's source address at that port.
 * Node thread only.
 */
#ifndef PAPO_BEACON_H
#define PAPO_BEACON_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "lib/err.h"
#include "lib/loop.h"
#include "node/wire/crypto.h"

#define BEACON_GROUP "239.255.77.76"
#define BEACON_PORT 7776
#define BEACON_LEN 79              /* kind, nonce (24), sealed 38 + 16 */
#define BEACON_EPOCH_S 30          /* the time inside, in these steps */
#define BEACON_EVERY_NS (5ull * NS_PER_S)

struct beacon_env {
	struct loop *loop;
	const struct room_keys *keys;
	const struct identity *me;
	uint16_t port;             /* our QUIC port */
	void *arg;
	/* Whether some member is unreachable now (beacons are sent then). */
	int (*wanted)(void *arg);
	/* A beacon of this room: member id listens at at. */
	void (*heard)(void *arg, const uint8_t id[PAPO_KEY_LEN], const struct addr *at);
};

struct beacon;

/* NULL with err when there is no socket or group to use (the daemon goes
 * on without LAN discovery). */
struct beacon *beacon_new(char err[PAPO_ERR_LEN], const struct beacon_env *env);
void beacon_free(struct beacon *b);
/* Counters: beacons sent, heard (of this room), refused. */
void beacon_counts(const struct beacon *b, uint64_t *sent, uint64_t *heard,
    uint64_t *bad);

/* A beacon of id at port, at time now_s; and its opening (0, or -1 for
 * what is not a beacon of this room from within a minute of now_s). */
void beacon_make(const struct room_keys *k, const uint8_t id[PAPO_KEY_LEN],
    uint16_t port, uint64_t now_s, uint8_t out[BEACON_LEN]);
int beacon_open(const struct room_keys *k, const uint8_t *d, size_t n,
    uint64_t now_s, uint8_t id[PAPO_KEY_LEN], uint16_t *port);

#endif
