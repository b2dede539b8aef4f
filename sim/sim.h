/*
 * sim.h: the simulator's parts (docs/SIMULATOR.md).  One thread runs n
 * members, each a real room (node/room) with its own virtual loop, store
 * and identity, over a fake of node/net (sim_net.c) whose links carry
 * frames with the latency, loss and partitions a scenario sets.  Time is
 * the scheduler's (sim.c): a heap of events ordered by (time, seq), so
 * that a seed replays exactly.
 */
#ifndef PAPO_SIM_H
#define PAPO_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"
#include "lib/loop.h"
#include "node/net/net.h"
#include "node/room/room.h"
#include "node/store/roomfile.h"
#include "node/wire/crypto.h"

#define SIM_IDLE_NS (7ull * NS_PER_S)   /* QUIC's idle timeout (quic_int.h) */
#define SIM_DIAL_FAIL_NS (5ull * NS_PER_S)  /* a dial nobody answers */
#define SIM_PORT 4433

struct sim;
struct sim_member;

/* The fake net of one member (sim_net.c): what net.h's struct net is to
 * its room.  Opaque outside sim_net.c but for its size. */
struct quic {
	struct sim_member *m;
};

struct net {
	struct sim_member *m;
	struct quic quic;
	struct reach reach;
	struct addr bound;
	struct room *room;               /* its one room, once added */
	struct frame_peer sealing[FRAME_PEERS_MAX];
};

/* One simulated member.  Its events wait while it is stalled. */
struct sim_member {
	struct sim *sim;
	int idx;
	char *home;                      /* its folder (room.json's) */
	struct net net;
	struct loop *loop;
	struct identity *me;
	struct room_file file;
	struct room_keys keys;
	struct store *store;
	struct room *room;
	uint64_t wake_at;                /* the wakeup queued, or 0 */
	uint64_t stall_until;            /* deferred until then; 0: runs */
	uint64_t down_since;             /* stalled or stopped since */
	int stopped;                     /* killed: never runs again */
	unsigned stalls;                 /* stalls begun */
	int group;                       /* its side of a partition */
	int64_t skew_ns;                 /* its clock's offset */
};

/* The network a scenario sets (sim_net.c reads it). */
struct sim_netconf {
	uint64_t lat_ns;                 /* one way */
	uint64_t jitter_ns;              /* up to, added at random */
	unsigned loss_pm;                /* packets lost per mille */
	int partitioned;                 /* groups cannot reach each other */
	uint64_t part_since;
};

/* The scheduler (sim.c). */
uint64_t sim_now(const struct sim *s);
const struct sim_netconf *sim_netconf(const struct sim *s);
struct sim_member *sim_member_at(struct sim *s, const struct addr *a);
/* A uniform number below n from the network's stream. */
uint64_t sim_net_rand(struct sim *s, uint64_t n);
/* Queues fn(arg) for member m at time at; it waits while m is stalled,
 * and is dropped once m is stopped (arg freed when owned). */
typedef void sim_fn(struct sim_member *m, void *arg);
void sim_at(struct sim *s, uint64_t at, struct sim_member *m, sim_fn *fn,
    void *arg, int owned);
/* Adds a delivery to the trace hash: time, ends, the frame's bytes. */
void sim_trace_frame(struct sim *s, int from, int to, const uint8_t *p,
    size_t n);

/* The fake net (sim_net.c). */
void sim_net_init(struct sim_member *m, const struct addr *a);
/* m comes back from a stall of more than the idle timeout: its own
 * connections end at once, as quic_awake ends a real daemon's. */
void sim_net_awake(struct sim_member *m);
/* Ends the links whose silence passed the idle timeout (every tick). */
void sim_net_tick(struct sim *s);
/* m was killed: its peers' ends time out; its own are dropped. */
void sim_net_kill(struct sim_member *m);
/* Frees every link end, at the end of a run. */
void sim_net_free(void);
/* Frames and bytes sent so far, all members. */
void sim_net_counts(uint64_t *frames, uint64_t *bytes);
/* Dials made so far (one per address dialled), all members. */
uint64_t sim_net_dials(void);

/* Signature checks run, and answered from the memo (sim_memo.c). */
void sim_memo_counts(uint64_t *checks, uint64_t *hits);
void sim_memo_free(void);

/* Seeded randomness (sim_rand.c): libsodium's randombytes from a
 * ChaCha20 stream keyed by the seed (nonce 0), installed before
 * sodium_init; the network's own stream (nonce 1). */
int sim_rand_install(uint64_t seed);
struct sim_rng {
	uint8_t key[32];
	uint64_t block;
	uint8_t buf[64];
	size_t used;
	uint64_t nonce;
};
void sim_rng_init(struct sim_rng *r, uint64_t seed, uint64_t nonce);
uint64_t sim_rng_u64(struct sim_rng *r);

#endif
