/*
 * sim.c: papo-sim, the deterministic simulator of the room layer
 * (docs/SIMULATOR.md).  n members, each a real room (room_new) with its
 * own virtual loop (loop_new_virtual), store, identity and keys, all in
 * one room, over the fake net of sim_net.c; one thread, one clock
 * (loop_clock_set), one seed.  The scheduler is a heap of events ordered
 * by (time, seq): frame deliveries, link opens and closes, and each
 * member's wakeup at its earliest timer; a member's due deliveries run
 * before its due timers, as the real loop reads before it fires.  A
 * collector in env.emit records presence and message events; a trace
 * hash over deliveries and those events is printed every 10 s of
 * simulated time, so that two runs of one seed can be compared.  It
 * prints the figures of a run and, when an invariant fails, the command
 * that replays it.
 */
#include <errno.h>
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/log.h"
#include "node/msg.h"
#include "node/room/deliver.h"
#include "sim/sim.h"

#define SIM_BASE_NS (1000ull * NS_PER_S)     /* 0 is "disarmed" to timers */
#define SIM_WALL_MS 1800000000000ull         /* 2027-01-15, every run */
#define SIM_HASH_NS (10ull * NS_PER_S)
#define SIM_TICK_NS (250ull * NS_PER_MS)
#define SIM_MSGS_MAX 64

enum sim_kind { SIM_EV_FN, SIM_EV_WAKE, SIM_EV_STALL_END, SIM_EV_GLOBAL };

struct sim_ev {
	uint64_t at, seq;
	enum sim_kind kind;
	struct sim_member *m;
	sim_fn *fn;
	void *arg;
	int owned;               /* arg is freed if the event is dropped */
};

struct sim_msg {
	char id[PAPO_MSGID_LEN + 1];
	uint64_t sent;
	unsigned reached;
	uint64_t at99, at100;
};

struct sim_id {
	char text[PAPO_ID_LEN + 1];
	unsigned idx;
};

struct sim_opts {
	uint64_t seed;
	unsigned n;
	unsigned time_s;
	const char *scenario;
	unsigned msgs;
	unsigned lat_ms, jitter_ms, loss_pm;
	unsigned bound_s;        /* a stopped member offline everywhere;
	                          * 0: today's (sim_args) */
	unsigned stall_pct;
	int hashes;              /* print the trace hashes */
	int debug;               /* --log debug: say whose event runs */
};

struct sim {
	struct sim_opts o;
	struct sim_ev *heap;
	size_t nheap, capheap;
	uint64_t seq, now, end;
	struct sim_member *cur;  /* whose event runs (its clock's skew) */
	struct sim_member *members;
	struct sim_id *ids;      /* members' id texts, sorted */
	unsigned char *shown;    /* shown[i * n + j]: i shows j online */
	struct sim_netconf net;
	struct sim_rng rng;
	struct room_settings set;
	crypto_generichash_state trace;
	char dir[64];
	uint8_t secret[PAPO_KEY_LEN];
	/* What the run counts. */
	uint64_t presence_changes, offline, false_offline;
	uint64_t bystander_offline;  /* flaps of members never stalled */
	uint64_t bystander_seen;     /* flaps said by members never stalled */
	uint64_t stalled_offline;    /* offline said of a member stalled */
	unsigned stalls, stalls_long;  /* begun; longer than the idle timeout */
	uint64_t settled_at;     /* every running member sees every other */
	int stopped_idx;
	uint64_t stopped_at, stop_seen_at;
	uint64_t frames0, bytes0, dials0, half_at;
	uint64_t healed_at;      /* the partition's end; 0 none yet */
	uint64_t rejoined_at;    /* after it, every running member sees
	                          * every other again */
	struct sim_msg msgs[SIM_MSGS_MAX];
	unsigned nmsgs;
	unsigned failed;
};

static double sim_sec(uint64_t ns);

/* The scheduler. */

uint64_t
sim_now(const struct sim *s)
{
	return s->now;
}

const struct sim_netconf *
sim_netconf(const struct sim *s)
{
	return &s->net;
}

uint64_t
sim_net_rand(struct sim *s, uint64_t n)
{
	return n == 0 ? 0 : sim_rng_u64(&s->rng) % n;
}

static int
sim_ev_less(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void
sim_push(struct sim *s, struct sim_ev e)
{
	size_t i;

	if (s->nheap == s->capheap) {
		size_t cap = s->capheap ? 2 * s->capheap : 1024;
		struct sim_ev *h = realloc(s->heap, cap * sizeof(*h));

		if (h == NULL) {
			fprintf(stderr, "papo-sim: out of memory\n");
			exit(2);
		}
		s->heap = h;
		s->capheap = cap;
	}
	e.seq = s->seq++;
	for (i = s->nheap++; i > 0; i = (i - 1) / 2) {
		if (!sim_ev_less(&e, &s->heap[(i - 1) / 2]))
			break;
		s->heap[i] = s->heap[(i - 1) / 2];
	}
	s->heap[i] = e;
}

static struct sim_ev
sim_pop(struct sim *s)
{
	struct sim_ev top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && sim_ev_less(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!sim_ev_less(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap > 0)
		s->heap[i] = last;
	return top;
}

void
sim_at(struct sim *s, uint64_t at, struct sim_member *m, sim_fn *fn,
    void *arg, int owned)
{
	struct sim_ev e = { at, 0, SIM_EV_FN, m, fn, arg, owned };

	sim_push(s, e);
}

static void
sim_global(struct sim *s, uint64_t at, sim_fn *fn, void *arg)
{
	struct sim_ev e = { at, 0, SIM_EV_GLOBAL, NULL, fn, arg, 0 };

	sim_push(s, e);
}

/* The member's clock: the simulation's. */
static uint64_t
sim_clock_ns(void *arg)
{
	const struct sim *s = arg;

	return s->now + (uint64_t)(s->cur != NULL ? s->cur->skew_ns : 0);
}

static uint64_t
sim_clock_wall(void *arg)
{
	struct sim *s = arg;

	return SIM_WALL_MS + (sim_clock_ns(s) - SIM_BASE_NS) / NS_PER_MS;
}

/* Queues m's wakeup at its earliest timer when that is sooner than the
 * one queued; a wakeup that finds nothing due queues the next. */
static void
sim_wake_plan(struct sim *s, struct sim_member *m)
{
	uint64_t next = loop_next_at(m->loop);
	struct sim_ev e = { 0, 0, SIM_EV_WAKE, m, NULL, NULL, 0 };

	if (next == 0 || m->stopped)
		return;
	next -= (uint64_t)m->skew_ns;
	if (next < s->now)
		next = s->now;
	if (m->wake_at != 0 && m->wake_at <= next)
		return;
	m->wake_at = e.at = next;
	sim_push(s, e);
}

static void
sim_dispatch(struct sim *s, struct sim_ev *e)
{
	struct sim_member *m = e->m;

	if (e->kind == SIM_EV_GLOBAL) {
		e->fn(NULL, e->arg);
		return;
	}
	if (m->stopped) {
		if (e->owned)
			free(e->arg);
		return;
	}
	if (e->kind == SIM_EV_STALL_END) {
		uint64_t gap = s->now - m->down_since;
		struct sim_ev w = { s->now, 0, SIM_EV_WAKE, m, NULL, NULL, 0 };

		m->stall_until = m->down_since = 0;
		s->cur = m;
		if (gap > SIM_IDLE_NS)
			sim_net_awake(m);
		/* Its timers after what came meanwhile, deferred to now
		 * with smaller seqs: read before fired. */
		m->wake_at = w.at;
		sim_push(s, w);
		return;
	}
	if (m->stall_until > s->now) {
		/* Stalled: the wakeup comes with its end; the rest waits,
		 * in order. */
		if (e->kind == SIM_EV_FN) {
			e->at = m->stall_until;
			sim_push(s, *e);
		}
		return;
	}
	s->cur = m;
	/* With --log debug, whose lines follow. */
	if (s->o.debug)
		fprintf(stderr, "papo-sim: %.3f s: member %d\n",
		    sim_sec(s->now - SIM_BASE_NS), m->idx);
	if (e->kind == SIM_EV_WAKE) {
		if (e->at != m->wake_at)
			return;          /* a wakeup replaced by a sooner one */
		m->wake_at = 0;
		loop_fire_due(m->loop, sim_clock_ns(s));
	} else
		e->fn(m, e->arg);
	sim_wake_plan(s, m);
	s->cur = NULL;
}

/* The trace. */

static void
sim_trace(struct sim *s, const void *p, size_t n)
{
	crypto_generichash_update(&s->trace, p, n);
}

void
sim_trace_frame(struct sim *s, int from, int to, const uint8_t *p, size_t n)
{
	uint64_t h[3] = { s->now, (uint64_t)from, (uint64_t)to };

	sim_trace(s, h, sizeof(h));
	sim_trace(s, p, n);
}

static void
sim_hash_ev(struct sim_member *none, void *arg)
{
	struct sim *s = arg;
	crypto_generichash_state st = s->trace;
	uint8_t h[8];

	(void)none;
	crypto_generichash_final(&st, h, sizeof(h));
	if (s->o.hashes)
		printf("trace %llu s %02x%02x%02x%02x%02x%02x%02x%02x\n",
		    (unsigned long long)((s->now - SIM_BASE_NS) / NS_PER_S),
		    h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
	sim_global(s, s->now + SIM_HASH_NS, sim_hash_ev, s);
}

/* The collector: env.emit of every member. */

static int
sim_id_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sim_id *)a)->text,
	    ((const struct sim_id *)b)->text);
}

/* The member whose id text is id, or -1. */
static int
sim_who(const struct sim *s, const char *id)
{
	struct sim_id key, *p;

	snprintf(key.text, sizeof(key.text), "%s", id);
	p = bsearch(&key, s->ids, s->o.n, sizeof(*s->ids), sim_id_cmp);
	return p == NULL ? -1 : (int)p->idx;
}

static int
sim_all_online(const struct sim *s)
{
	for (unsigned i = 0; i < s->o.n; i++)
		for (unsigned j = 0; j < s->o.n; j++)
			if (i != j && !s->members[i].stopped &&
			    !s->members[j].stopped &&
			    !s->shown[(size_t)i * s->o.n + j])
				return 0;
	return 1;
}

static int
sim_stop_seen(const struct sim *s)
{
	for (unsigned i = 0; i < s->o.n; i++)
		if (!s->members[i].stopped &&
		    s->shown[(size_t)i * s->o.n + (unsigned)s->stopped_idx])
			return 0;
	return 1;
}

static void
sim_presence(struct sim *s, struct sim_member *m, cJSON *o)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	int j = cJSON_IsString(id) ? sim_who(s, id->valuestring) : -1;
	int on = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "online"));
	struct sim_member *subj;

	if (j < 0)
		return;
	subj = &s->members[j];
	s->shown[(size_t)m->idx * s->o.n + (unsigned)j] = (unsigned char)on;
	s->presence_changes++;
	if (!on) {
		s->offline++;
		s->stalled_offline += subj->stall_until != 0;
		/* Offline while it runs and m can reach it, once the room
		 * had settled: a flap.  Before, two members dialling each
		 * other at once can show each other offline for a round
		 * trip (one link's close overtakes the other's hello). */
		if (s->settled_at != 0 && !subj->stopped &&
		    subj->stall_until == 0 &&
		    !(s->net.partitioned && subj->group != m->group)) {
			s->false_offline++;
			s->bystander_offline += subj->stalls == 0;
			s->bystander_seen += m->stalls == 0;
		}
	}
	if (on && s->settled_at == 0 && sim_all_online(s))
		s->settled_at = s->now;
	if (on && s->healed_at != 0 && s->rejoined_at == 0 &&
	    sim_all_online(s))
		s->rejoined_at = s->now;
	if (!on && j == s->stopped_idx && s->stop_seen_at == 0 &&
	    sim_stop_seen(s))
		s->stop_seen_at = s->now;
}

static void
sim_message(struct sim *s, cJSON *o, int sent)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	unsigned live = 0;

	if (!cJSON_IsString(id))
		return;
	for (unsigned i = 0; i < s->o.n; i++)
		live += !s->members[i].stopped;
	for (unsigned k = 0; k < s->nmsgs; k++) {
		struct sim_msg *g = &s->msgs[k];

		if (strcmp(g->id, id->valuestring) != 0)
			continue;
		if (sent)
			return;
		g->reached++;
		if (g->at99 == 0 && g->reached * 100 >= (live - 1) * 99)
			g->at99 = s->now;
		if (g->at100 == 0 && g->reached >= live - 1)
			g->at100 = s->now;
		return;
	}
	if (sent && s->nmsgs < SIM_MSGS_MAX) {
		struct sim_msg *g = &s->msgs[s->nmsgs++];

		snprintf(g->id, sizeof(g->id), "%s", id->valuestring);
		g->sent = s->now;
	}
}

static void
sim_emit(void *arg, struct node_msg *msg)
{
	struct sim_member *m = arg;
	struct sim *s = m->sim;
	cJSON *o = msg->json != NULL ? cJSON_Parse(msg->json) : NULL;
	uint64_t h[3] = { s->now, (uint64_t)m->idx, (uint64_t)msg->kind };

	sim_trace(s, h, sizeof(h));
	if (msg->json != NULL)
		sim_trace(s, msg->json, strlen(msg->json));
	if (o != NULL && msg->kind == NODE_EV_PRESENCE)
		sim_presence(s, m, o);
	else if (o != NULL && (msg->kind == NODE_EV_MESSAGE ||
	    msg->kind == NODE_EV_SENT))
		sim_message(s, o, msg->kind == NODE_EV_SENT);
	cJSON_Delete(o);
	node_msg_free(msg);
}

/* Members. */

struct sim_member *
sim_member_at(struct sim *s, const struct addr *a)
{
	unsigned i;

	if (a->family != 4 || a->ip[0] != 198 || a->ip[1] != 18 ||
	    a->port != SIM_PORT)
		return NULL;
	i = (unsigned)a->ip[2] << 8 | a->ip[3];
	return i >= 1 && i <= s->o.n && s->members[i - 1].room != NULL ?
	    &s->members[i - 1] : NULL;
}

static void
sim_addr(unsigned idx, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = 4;
	a->ip[0] = 198;          /* 198.18.0.0/15: benchmarks' own */
	a->ip[1] = 18;
	a->ip[2] = (uint8_t)((idx + 1) >> 8);
	a->ip[3] = (uint8_t)(idx + 1);
	a->port = SIM_PORT;
}

/* Its folder, identity, room file and store: what `papo join` leaves,
 * the inviter being member 0. */
static int
sim_member_make(struct sim *s, unsigned i)
{
	struct sim_member *m = &s->members[i];
	char err[PAPO_ERR_LEN] = "out of memory", path[128];
	struct addr a;

	m->sim = s;
	m->idx = (int)i;
	snprintf(path, sizeof(path), "%s/m%05u", s->dir, i);
	if ((m->home = strdup(path)) == NULL || mkdir(path, 0700) == -1 ||
	    (m->me = sec_identity_load(err, path)) == NULL) {
		fprintf(stderr, "papo-sim: member %u: %s\n", i, err);
		return -1;
	}
	snprintf(m->file.name, sizeof(m->file.name), "sim");
	memcpy(m->file.secret, s->secret, PAPO_KEY_LEN);
	snprintf(m->file.me, sizeof(m->file.me), "m%05u", i);
	m->file.has_owner = 1;
	if (i > 0) {
		memcpy(m->file.owner, s->members[0].me->pk, PAPO_KEY_LEN);
		m->file.has_inviter = 1;
		memcpy(m->file.inviter, s->members[0].me->pk, PAPO_KEY_LEN);
		m->file.nboot = 1;
		sim_addr(0, &m->file.boot[0]);
	} else
		memcpy(m->file.owner, m->me->pk, PAPO_KEY_LEN);
	sec_room_keys(m->file.secret, &m->keys);
	if ((m->store = store_open(err, path, &m->keys, m->me)) == NULL ||
	    (m->loop = loop_new_virtual()) == NULL) {
		fprintf(stderr, "papo-sim: member %u: %s\n", i, err);
		return -1;
	}
	sim_addr(i, &a);
	sim_net_init(m, &a);
	return 0;
}

static void
sim_start_ev(struct sim_member *m, void *arg)
{
	struct sim *s = m->sim;
	struct room_env env;
	char err[PAPO_ERR_LEN];

	(void)arg;
	memset(&env, 0, sizeof(env));
	env.net = &m->net;
	env.loop = m->loop;
	env.store = m->store;
	env.me = m->me;
	env.keys = &m->keys;
	env.room = &m->file;
	env.home = m->home;
	env.set = &s->set;
	env.emit = sim_emit;
	env.arg = m;
	if ((m->room = room_new(err, &env)) == NULL) {
		fprintf(stderr, "papo-sim: member %d: %s\n", m->idx, err);
		exit(2);
	}
}

/* Scenario actions. */

static void
sim_tick_ev(struct sim_member *none, void *arg)
{
	struct sim *s = arg;

	(void)none;
	sim_net_tick(s);
	sim_global(s, s->now + SIM_TICK_NS, sim_tick_ev, s);
}

static void
sim_kill_ev(struct sim_member *none, void *arg)
{
	struct sim *s = arg;
	struct sim_member *m = &s->members[s->stopped_idx];

	(void)none;
	m->stopped = 1;
	m->down_since = s->now;
	s->stopped_at = s->now;
	sim_net_kill(m);
}

static void
sim_stall_ev(struct sim_member *none, void *arg)
{
	struct sim_member *m = arg;
	struct sim *s = m->sim;
	uint64_t d = (3 + sim_net_rand(s, 8)) * NS_PER_S;   /* 3-10 s */
	struct sim_ev e = { s->now + d, 0, SIM_EV_STALL_END, m, NULL, NULL, 0 };

	(void)none;
	if (m->stopped || m->stall_until != 0)
		return;
	m->stall_until = s->now + d;
	m->down_since = s->now;
	m->stalls++;
	s->stalls++;
	s->stalls_long += d > SIM_IDLE_NS;
	sim_push(s, e);
}

static void
sim_part_ev(struct sim_member *none, void *arg)
{
	struct sim *s = arg;

	(void)none;
	s->net.partitioned = !s->net.partitioned;
	s->net.part_since = s->now;
	if (!s->net.partitioned)
		s->healed_at = s->now;
}

static void
sim_send_ev(struct sim_member *m, void *arg)
{
	struct node_msg *req = node_msg_new(NODE_SEND);
	char text[64];

	snprintf(text, sizeof(text), "sim message %u", (unsigned)(uintptr_t)arg);
	if (req == NULL || (node_args_send(req)->text = strdup(text)) == NULL) {
		node_msg_free(req);
		return;
	}
	deliver_send(m->room, req);
}

static void
sim_plan(struct sim *s)
{
	uint64_t t0 = SIM_BASE_NS, T = (uint64_t)s->o.time_s * NS_PER_S;
	const char *sc = s->o.scenario;

	for (unsigned i = 0; i < s->o.n; i++)
		sim_at(s, t0 + i * 20 * NS_PER_MS, &s->members[i], sim_start_ev,
		    NULL, 0);
	sim_global(s, t0 + SIM_HASH_NS, sim_hash_ev, s);
	sim_global(s, t0 + SIM_TICK_NS, sim_tick_ev, s);
	s->half_at = t0 + T / 2;
	s->stopped_idx = -1;
	if (strcmp(sc, "stop") == 0) {
		s->stopped_idx = (int)s->o.n - 1;
		sim_global(s, t0 + T / 2, sim_kill_ev, s);
	} else if (strcmp(sc, "stall") == 0) {
		unsigned k = (s->o.n * s->o.stall_pct + 99) / 100;
		uint64_t first = sim_net_rand(s, s->o.n - 1);

		/* k members (not the inviter) each stall once, at a random
		 * time of the third quarter. */
		for (unsigned i = 0; i < k && i < s->o.n - 1; i++) {
			struct sim_member *m =
			    &s->members[1 + (first + i) % (s->o.n - 1)];

			sim_global(s, t0 + T / 2 + sim_net_rand(s, T / 4),
			    sim_stall_ev, m);
		}
	} else if (strcmp(sc, "loss") == 0)
		s->net.loss_pm = s->o.loss_pm != 0 ? s->o.loss_pm : 100;
	else if (strcmp(sc, "partition") == 0) {
		for (unsigned i = 0; i < s->o.n; i++)
			s->members[i].group = i >= s->o.n / 2;
		sim_global(s, t0 + T / 3, sim_part_ev, s);
		sim_global(s, t0 + T / 3 + 60 * NS_PER_S, sim_part_ev, s);
	}
	for (unsigned k = 0; k < s->o.msgs && k < SIM_MSGS_MAX; k++)
		sim_at(s, t0 + T / 2 + (k + 1) * NS_PER_S,
		    &s->members[(k * 7919u) % (s->o.n - (s->stopped_idx >= 0))],
		    sim_send_ev, (void *)(uintptr_t)k, 0);
}

static void
sim_half_ev(struct sim_member *none, void *arg)
{
	struct sim *s = arg;

	(void)none;
	sim_net_counts(&s->frames0, &s->bytes0);
	s->dials0 = sim_net_dials();
}

static void
sim_run(struct sim *s)
{
	sim_global(s, s->half_at, sim_half_ev, s);
	while (s->nheap > 0 && s->heap[0].at <= s->end) {
		struct sim_ev e = sim_pop(s);

		s->now = e.at;
		sim_dispatch(s, &e);
	}
	s->now = s->end;
}

/* The run's figures and invariants. */

static void
sim_fail(struct sim *s, const char *why)
{
	const struct sim_opts *o = &s->o;

	s->failed++;
	printf("FAIL %s\n", why);
	printf("replay: papo-sim --seed %llu --members %u --time %u "
	    "--scenario %s --msgs %u --lat-ms %u --jitter-ms %u --loss-pm %u "
	    "--bound-s %u --stall-pct %u\n", (unsigned long long)o->seed,
	    o->n, o->time_s, o->scenario, o->msgs, o->lat_ms, o->jitter_ms,
	    o->loss_pm, o->bound_s, o->stall_pct);
}

static double
sim_sec(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* When every message sent before the heal had reached every running
 * member, after the heal (0 when it was before); UINT64_MAX: one never
 * did. */
static uint64_t
sim_cut_msgs_in(const struct sim *s)
{
	uint64_t last = 0;

	for (unsigned k = 0; k < s->nmsgs; k++) {
		const struct sim_msg *g = &s->msgs[k];

		if (g->sent >= s->healed_at)
			continue;
		if (g->at100 == 0)
			return UINT64_MAX;
		if (g->at100 > s->healed_at && g->at100 - s->healed_at > last)
			last = g->at100 - s->healed_at;
	}
	return last;
}

/* The partition's figures: how soon after the heal the room was one
 * again. */
static void
sim_report_heal(const struct sim *s)
{
	uint64_t msgs = sim_cut_msgs_in(s);

	if (s->healed_at == 0)
		return;
	printf("after the heal: all see all online %s%.1f s, messages sent "
	    "in the cut at every member %s%.1f s\n",
	    s->rejoined_at ? "" : "never, ", s->rejoined_at ?
	    sim_sec(s->rejoined_at - s->healed_at) : 0.0,
	    msgs == UINT64_MAX ? "never, " : "", msgs == UINT64_MAX ? 0.0 :
	    sim_sec(msgs));
}

static void
sim_report(struct sim *s, double cpu)
{
	uint64_t frames, bytes, checks, hits, span = s->end - s->half_at;
	unsigned live = 0;
	struct rusage ru;

	sim_net_counts(&frames, &bytes);
	for (unsigned i = 0; i < s->o.n; i++)
		live += !s->members[i].stopped;
	printf("members %u, %s, %u s simulated, seed %llu\n", s->o.n,
	    s->o.scenario, s->o.time_s, (unsigned long long)s->o.seed);
	printf("settled (all see all online): %s%.1f s\n",
	    s->settled_at ? "" : "never, ",
	    s->settled_at ? sim_sec(s->settled_at - SIM_BASE_NS) : 0.0);
	printf("second half, per member per second: %.2f frames, %.0f bytes\n",
	    (double)(frames - s->frames0) / sim_sec(span) / live,
	    (double)(bytes - s->bytes0) / sim_sec(span) / live);
	printf("second half, dials per member per minute: %.2f\n",
	    (double)(sim_net_dials() - s->dials0) * 60 / sim_sec(span) / live);
	printf("presence changes %llu, offline %llu, offline while running "
	    "and reachable (flaps) %llu: about members never stalled %llu, "
	    "by members never stalled %llu\n",
	    (unsigned long long)s->presence_changes,
	    (unsigned long long)s->offline,
	    (unsigned long long)s->false_offline,
	    (unsigned long long)s->bystander_offline,
	    (unsigned long long)s->bystander_seen);
	if (s->stalls > 0)
		printf("stalls %u, %u of them longer than the idle timeout "
		    "(7 s); offline said of a member while it stalled %llu\n",
		    s->stalls, s->stalls_long,
		    (unsigned long long)s->stalled_offline);
	if (s->stopped_idx >= 0)
		printf("stopped member offline everywhere after: %s%.1f s\n",
		    s->stop_seen_at ? "" : "never, ", s->stop_seen_at ?
		    sim_sec(s->stop_seen_at - s->stopped_at) : 0.0);
	sim_report_heal(s);
	for (unsigned k = 0; k < s->nmsgs; k++)
		printf("message %u: 99 %% after %.0f ms, 100 %% after %.0f ms "
		    "(%u of %u)\n", k, s->msgs[k].at99 ? sim_sec(s->msgs[k].at99 -
		    s->msgs[k].sent) * 1000 : -1.0, s->msgs[k].at100 ?
		    sim_sec(s->msgs[k].at100 - s->msgs[k].sent) * 1000 : -1.0,
		    s->msgs[k].reached, live - 1);
	sim_memo_counts(&checks, &hits);
	printf("signature checks: %llu run, %llu from the memo (%.1f per "
	    "member per second asked)\n", (unsigned long long)checks,
	    (unsigned long long)hits, (double)(checks + hits) /
	    s->o.time_s / s->o.n);
	getrusage(RUSAGE_SELF, &ru);
	printf("sim cost: %.3f CPU s per simulated s, max RSS %ld MiB\n",
	    cpu / s->o.time_s, ru.ru_maxrss / 1024);
}

static void
sim_check(struct sim *s)
{
	char why[128];

	if (strcmp(s->o.scenario, "stall") != 0 && !sim_all_online(s))
		sim_fail(s, "not every running member sees every other online "
		    "at the end");
	if (s->stopped_idx >= 0 && (s->stop_seen_at == 0 ||
	    s->stop_seen_at - s->stopped_at > s->o.bound_s * NS_PER_S)) {
		snprintf(why, sizeof(why), "the stopped member was not offline "
		    "everywhere within %u s", s->o.bound_s);
		sim_fail(s, why);
	}
	if (s->healed_at != 0 && (s->rejoined_at == 0 ||
	    s->rejoined_at - s->healed_at > s->o.bound_s * NS_PER_S ||
	    sim_cut_msgs_in(s) > s->o.bound_s * NS_PER_S)) {
		snprintf(why, sizeof(why), "the room was not one again within "
		    "%u s of the heal", s->o.bound_s);
		sim_fail(s, why);
	}
	if (strcmp(s->o.scenario, "idle") == 0 && s->false_offline > 0)
		sim_fail(s, "a running member was shown offline in an idle room");
	for (unsigned k = 0; k < s->nmsgs; k++)
		if (s->msgs[k].at100 == 0) {
			snprintf(why, sizeof(why), "message %u did not reach every "
			    "member", k);
			sim_fail(s, why);
		}
}

/* Setup and teardown. */

/* Removes path and all below it. */
static void
sim_rm(const char *path)
{
	struct stat st;
	struct dirent *d;
	DIR *dir;
	char sub[512];

	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    (dir = opendir(path)) != NULL) {
		while ((d = readdir(dir)) != NULL)
			if (strcmp(d->d_name, ".") != 0 &&
			    strcmp(d->d_name, "..") != 0 &&
			    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
			    d->d_name) < sizeof(sub))
				sim_rm(sub);
		closedir(dir);
	}
	remove(path);
}

static int
sim_setup(struct sim *s)
{
	static struct loop_clock clk;
	const char *tmp = getenv("TMPDIR");

	snprintf(s->dir, sizeof(s->dir), "%s/papo-sim-XXXXXX",
	    tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(s->dir) == NULL) {
		perror("papo-sim: mkdtemp");
		return -1;
	}
	clk.now_ns = sim_clock_ns;
	clk.wall_ms = sim_clock_wall;
	clk.arg = s;
	loop_clock_set(&clk);
	s->now = SIM_BASE_NS;
	s->end = SIM_BASE_NS + (uint64_t)s->o.time_s * NS_PER_S;
	s->net.lat_ns = (uint64_t)s->o.lat_ms * NS_PER_MS;
	s->net.jitter_ns = (uint64_t)s->o.jitter_ms * NS_PER_MS;
	sim_rng_init(&s->rng, s->o.seed, 1);
	s->set.version = FRAME_VERSION;
	crypto_generichash_init(&s->trace, NULL, 0, 32);
	randombytes_buf(s->secret, sizeof(s->secret));
	if ((s->members = calloc(s->o.n, sizeof(*s->members))) == NULL ||
	    (s->ids = calloc(s->o.n, sizeof(*s->ids))) == NULL ||
	    (s->shown = calloc((size_t)s->o.n * s->o.n, 1)) == NULL)
		return -1;
	for (unsigned i = 0; i < s->o.n; i++) {
		if (sim_member_make(s, i) == -1)
			return -1;
		sec_id_format(s->members[i].me->pk, s->ids[i].text);
		s->ids[i].idx = i;
	}
	qsort(s->ids, s->o.n, sizeof(*s->ids), sim_id_cmp);
	return 0;
}

static void
sim_teardown(struct sim *s)
{
	for (unsigned i = 0; i < s->o.n && s->members != NULL; i++) {
		struct sim_member *m = &s->members[i];

		s->cur = m;
		room_free(m->room);
		store_close(m->store);
		loop_free(m->loop);
		sec_identity_free(m->me);
		free(m->home);
	}
	while (s->nheap > 0) {
		struct sim_ev e = sim_pop(s);

		if (e.owned)
			free(e.arg);
	}
	sim_net_free();
	sim_memo_free();
	loop_clock_set(NULL);
	sim_rm(s->dir);
	free(s->heap);
	free(s->members);
	free(s->ids);
	free(s->shown);
}

static void
sim_usage(void)
{
	fprintf(stderr, "usage: papo-sim [--seed S] [--members N] [--time T] "
	    "[--scenario idle|stop|stall|loss|partition] [--msgs K]\n"
	    "  [--lat-ms L] [--jitter-ms J] [--loss-pm P] [--bound-s B] "
	    "[--stall-pct P] [--hashes] [--log LEVEL]\n");
	exit(2);
}

static void
sim_args(int argc, char **argv, struct sim_opts *o)
{
	static const struct option longs[] = {
		{ "seed", 1, NULL, 's' }, { "members", 1, NULL, 'n' },
		{ "time", 1, NULL, 't' }, { "scenario", 1, NULL, 'c' },
		{ "msgs", 1, NULL, 'm' }, { "lat-ms", 1, NULL, 'l' },
		{ "jitter-ms", 1, NULL, 'j' }, { "loss-pm", 1, NULL, 'p' },
		{ "bound-s", 1, NULL, 'b' }, { "stall-pct", 1, NULL, 'S' },
		{ "hashes", 0, NULL, 'H' }, { "log", 1, NULL, 'L' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	o->seed = 1;
	o->n = 32;
	o->time_s = 120;
	o->scenario = "idle";
	o->lat_ms = 10;
	o->jitter_ms = 5;
	o->stall_pct = 5;
	log_set_level(LOG_ERROR);
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		unsigned long v = optarg != NULL ? strtoul(optarg, NULL, 10) : 0;

		switch (c) {
		case 's': o->seed = v; break;
		case 'n': o->n = (unsigned)v; break;
		case 't': o->time_s = (unsigned)v; break;
		case 'c': o->scenario = optarg; break;
		case 'm': o->msgs = (unsigned)v; break;
		case 'l': o->lat_ms = (unsigned)v; break;
		case 'j': o->jitter_ms = (unsigned)v; break;
		case 'p': o->loss_pm = (unsigned)v; break;
		case 'b': o->bound_s = (unsigned)v; break;
		case 'S': o->stall_pct = (unsigned)v; break;
		case 'H': o->hashes = 1; break;
		case 'L':
			if (log_parse_level(optarg) < 0)
				sim_usage();
			log_set_level((enum log_level)log_parse_level(optarg));
			o->debug = log_parse_level(optarg) == LOG_DEBUG;
			break;
		default: sim_usage();
		}
	}
	/* Today's bound (docs/PROTOCOL.md, "Presence"): life shown lasts
	 * 2.5 announcement periods and 0.5 s, 3 s periods up to 8 members
	 * and 10 s above; a killed neighbour's link ends after 7 s. */
	if (o->bound_s == 0 && strcmp(o->scenario, "partition") == 0)
		o->bound_s = 60;
	else if (o->bound_s == 0)
		o->bound_s = o->n <= 8 ? 8 : 26;
	if (o->n < 2 || o->n > 65000 || o->time_s < 10 ||
	    strstr("idle stop stall loss partition", o->scenario) == NULL)
		sim_usage();
}

int
main(int argc, char **argv)
{
	static struct sim s;
	struct timespec c0, c1;

	sim_args(argc, argv, &s.o);
	if (sim_rand_install(s.o.seed) == -1 || sim_setup(&s) == -1) {
		fprintf(stderr, "papo-sim: cannot set up the run\n");
		return 2;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	sim_plan(&s);
	sim_run(&s);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	sim_report(&s, (double)(c1.tv_sec - c0.tv_sec) +
	    (double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
	sim_check(&s);
	sim_teardown(&s);
	return s.failed > 0 ? 1 : 0;
}
