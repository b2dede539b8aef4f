/*
 * punch.c: hole punching arranged through a mutual member (punch.h).
 *
 * Each peer being punched to has a slot: the attempt under way (1 to 3),
 * who leads it (the member with the smaller id leads the odd attempts,
 * the other the even ones), the addresses the other side offered in its
 * latest frame, and a timer: the end of the attempt, or while we answer
 * an ask, the next round of punches.  Nothing here dials or relays by
 * itself: its room does, through the env's callbacks.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/punch.h"

#define PUNCH_KIND 0x21           /* '!': bit 0x40 clear, never QUIC */
#define PUNCH_SLOTS 64
#define PUNCH_MAC_LEN 16
#define PUNCH_SIGNED_LEN (PUNCH_DATAGRAM_LEN - PUNCH_MAC_LEN)  /* MAC'd */
_Static_assert(PUNCH_DATAGRAM_LEN == 57, "the punch datagram's length "
    "is the wire's (docs/PROTOCOL.md)");
#define PUNCH_ROUNDS 8            /* punches after ready, one a round */
#define PUNCH_ROUND_NS (250ull * NS_PER_MS)
#define PUNCH_SKEW_MS 60000u      /* a datagram's time may be this far off */

struct slot {
	int used;
	uint8_t peer[PAPO_KEY_LEN];
	unsigned attempt;             /* 0: not trying */
	uint64_t rest_until;          /* ns: no new attempt before */
	unsigned rests;               /* series failed since the last success */
	struct addr addr[PAPO_ADDR_MAX];  /* the other side's offer */
	size_t naddr;
	unsigned rounds;              /* punches left to send */
	uint64_t attempt_end;         /* ns */
	struct quic_sock *sock;       /* attempts from the second: its own */
	struct loop_timer *timer;
	struct punch *p;
};

struct punch {
	struct punch_env env;
	/* Made as first used: most rooms never punch.  A slot stays put
	 * once made (its timer points at it) until punch_free. */
	struct slot *slots[PUNCH_SLOTS];
	struct punch_stats st;
};

static int
punch_leads(const struct punch *p, const uint8_t peer[PAPO_KEY_LEN], unsigned attempt)
{
	int smaller = memcmp(p->env.me->pk, peer, PAPO_KEY_LEN) < 0;

	return (attempt % 2 == 1) == smaller;
}

void
punch_datagram_make(const struct room_keys *k, const uint8_t id[PAPO_KEY_LEN],
    uint64_t ms, uint8_t out[PUNCH_DATAGRAM_LEN])
{
	crypto_generichash_state h;

	out[0] = PUNCH_KIND;
	memcpy(out + 1, id, PAPO_KEY_LEN);
	for (int i = 0; i < 8; i++)
		out[1 + PAPO_KEY_LEN + i] = (uint8_t)(ms >> (56 - 8 * i));
	crypto_generichash_init(&h, k->seal, sizeof(k->seal), PUNCH_MAC_LEN);
	crypto_generichash_update(&h, (const uint8_t *)"papo punch v2", 14);
	crypto_generichash_update(&h, out, PUNCH_SIGNED_LEN);
	crypto_generichash_final(&h, out + PUNCH_SIGNED_LEN, PUNCH_MAC_LEN);
}

int
punch_datagram_check(const struct room_keys *k, const uint8_t *d, size_t n,
    uint64_t now_ms, uint8_t id[PAPO_KEY_LEN])
{
	uint8_t want[PUNCH_DATAGRAM_LEN];
	uint64_t ms = 0;

	if (n != PUNCH_DATAGRAM_LEN || d[0] != PUNCH_KIND)
		return -1;
	for (int i = 0; i < 8; i++)
		ms = ms << 8 | d[1 + PAPO_KEY_LEN + i];
	punch_datagram_make(k, d + 1, ms, want);
	if (sodium_memcmp(want + PUNCH_SIGNED_LEN, d + PUNCH_SIGNED_LEN, PUNCH_MAC_LEN) != 0)
		return -1;
	if (ms + PUNCH_SKEW_MS < now_ms || ms > now_ms + PUNCH_SKEW_MS)
		return -1;    /* old: replayed, or a clock far off */
	memcpy(id, d + 1, PAPO_KEY_LEN);
	return 0;
}

/* Punches to every address of the other side's offer. */
static void
punch_send(struct slot *s, int ttl)
{
	struct punch *p = s->p;
	uint8_t d[PUNCH_DATAGRAM_LEN];

	punch_datagram_make(p->env.keys, p->env.me->pk, loop_wall_ms(), d);
	for (size_t i = 0; i < s->naddr; i++)
		if (quic_send_raw_on(p->env.quic, s->sock, &s->addr[i], d,
		    sizeof(d), ttl) == 0)
			p->st.datagrams_sent++;
}

static void punch_tick(void *arg);

static struct slot *
punch_slot(struct punch *p, const uint8_t peer[PAPO_KEY_LEN], int make)
{
	struct slot *free_slot = NULL, **unmade = NULL;

	for (size_t i = 0; i < PUNCH_SLOTS; i++) {
		struct slot *s = p->slots[i];

		if (s == NULL) {
			if (unmade == NULL)
				unmade = &p->slots[i];
			continue;
		}
		if (s->used && memcmp(s->peer, peer, PAPO_KEY_LEN) == 0)
			return s;
		if (!s->used && free_slot == NULL)
			free_slot = s;
	}
	if (!make)
		return NULL;
	if (free_slot == NULL && unmade != NULL &&
	    (free_slot = *unmade = calloc(1, sizeof(**unmade))) != NULL)
		free_slot->p = p;
	if (free_slot == NULL)
		return NULL;
	/* Timers are made as slots are first used: the loop scans its
	 * timers, and most rooms never punch. */
	if (free_slot->timer == NULL && (free_slot->timer = loop_timer_new(
	    p->env.loop, punch_tick, free_slot)) == NULL)
		return NULL;
	memset(free_slot->peer, 0, PAPO_KEY_LEN);
	memcpy(free_slot->peer, peer, PAPO_KEY_LEN);
	free_slot->used = 1;
	free_slot->attempt = 0;
	free_slot->rest_until = 0;
	free_slot->rests = 0;
	free_slot->naddr = 0;
	free_slot->rounds = 0;
	return free_slot;
}

/* Sends the frame of phase for attempt s->attempt, with our offer. */
static void
punch_tell(struct slot *s, enum punch_phase phase)
{
	struct punch *p = s->p;
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_PUNCH;
	memcpy(f.u.punch.to, s->peer, PAPO_KEY_LEN);
	f.u.punch.phase = phase;
	f.u.punch.n = s->attempt;
	f.u.punch.ts = loop_wall_ms();
	f.u.punch.naddr = p->env.addrs(p->env.arg, f.u.punch.addr,
	    PAPO_ADDR_MAX, s->sock != NULL ? quic_sock_port(s->sock) : 0);
	if (frame_punch_sign(&f.u.punch, p->env.keys, p->env.me) == 0 &&
	    p->env.relay(p->env.arg, &f) == -1)
		log_msg(LOG_DEBUG, "punch: no member to carry a punch frame");
}

/* The socket for attempt n: the QUIC socket for the first, one of their
 * own for the others (punch.h); the slot's until trying stops. */
static void
punch_sock(struct slot *s, unsigned n)
{
	if (n < 2) {
		quic_sock_unref(s->sock);
		s->sock = NULL;
	} else if (s->sock == NULL &&
	    (s->sock = quic_sock_new(s->p->env.quic)) == NULL)
		log_msg(LOG_DEBUG, "punch: no socket of its own: on the QUIC one");
}

/* Begins attempt n: its leader asks; the other waits for the ask. */
static void
punch_attempt(struct slot *s, unsigned n)
{
	punch_sock(s, n);
	s->attempt = n;
	s->attempt_end = loop_now_ns() + PUNCH_TRY_NS;
	s->rounds = 0;
	loop_timer_set(s->timer, s->attempt_end);
	if (punch_leads(s->p, s->peer, n)) {
		s->p->st.asked++;
		punch_tell(s, PUNCH_ASK);
	}
}

/* The timer: another round of punches, or the attempt is over. */
static void
punch_tick(void *arg)
{
	struct slot *s = arg;
	uint64_t now = loop_now_ns(), rest;

	if (s->rounds > 0 && now < s->attempt_end) {
		s->rounds--;
		punch_send(s, 0);
		loop_timer_set(s->timer, s->rounds > 0 ? now + PUNCH_ROUND_NS :
		    s->attempt_end);
		return;
	}
	if (s->attempt == 0 || now < s->attempt_end) {
		loop_timer_set(s->timer, s->attempt != 0 ? s->attempt_end : 0);
		return;
	}
	if (s->attempt < PUNCH_TRIES) {
		punch_attempt(s, s->attempt + 1);
		return;
	}
	/* Two NATs that never let a punch through (a symmetric one) would
	 * have us try every minute for as long as the relay carries them:
	 * from the third failed series on, the rest doubles, to 16 min. */
	rest = PUNCH_REST_NS;
	for (unsigned i = 2; i <= s->rests && rest < PUNCH_REST_MAX_NS; i++)
		rest *= 2;
	if (rest > PUNCH_REST_MAX_NS)
		rest = PUNCH_REST_MAX_NS;
	s->rests++;
	log_msg(LOG_INFO, "punch: no direct path after %d attempts; trying "
	    "again in %llu s", PUNCH_TRIES,
	    (unsigned long long)(rest / NS_PER_S));
	s->attempt = 0;
	punch_sock(s, 0);
	s->rest_until = now + rest;
}

void
punch_want(struct punch *p, const uint8_t peer[PAPO_KEY_LEN])
{
	struct slot *s = punch_slot(p, peer, 1);

	if (s == NULL || s->attempt != 0 || loop_now_ns() < s->rest_until)
		return;
	log_msg(LOG_DEBUG, "punch: trying for a direct path");
	punch_attempt(s, 1);
}

void
punch_frame(struct punch *p, const struct frame_punch *f)
{
	struct slot *s = punch_slot(p, f->from, 1);

	/* Old news (a minute off), or an attempt we are past. */
	if (s == NULL || f->ts + PUNCH_SKEW_MS < loop_wall_ms() ||
	    f->ts > loop_wall_ms() + PUNCH_SKEW_MS)
		return;
	s->naddr = f->naddr;
	memcpy(s->addr, f->addr, f->naddr * sizeof(f->addr[0]));
	if (f->phase == PUNCH_ASK) {
		/* The other side leads this attempt: open our NAT towards
		 * it with punches that die before its NAT, say ready, then
		 * punch in earnest while it dials. */
		s->attempt = (unsigned)f->n;
		punch_sock(s, s->attempt);
		s->attempt_end = loop_now_ns() + PUNCH_TRY_NS;
		p->st.answered++;
		for (int i = 0; i < 3; i++)
			punch_send(s, PUNCH_TTL_LOW);
		punch_tell(s, PUNCH_READY);
		s->rounds = PUNCH_ROUNDS;
		loop_timer_set(s->timer, loop_now_ns() + PUNCH_ROUND_NS);
		return;
	}
	/* Ready: punch towards it and dial. */
	if (s->attempt != f->n)
		return;
	punch_send(s, 0);
	p->env.dial(p->env.arg, f->from, f->addr, f->naddr, s->sock);
	s->rounds = PUNCH_ROUNDS;
	loop_timer_set(s->timer, loop_now_ns() + PUNCH_ROUND_NS);
}

int
punch_done(struct punch *p, const uint8_t peer[PAPO_KEY_LEN])
{
	struct slot *s = punch_slot(p, peer, 0);
	int was;

	if (s == NULL)
		return 0;
	was = s->attempt != 0;
	if (was)
		p->st.punched++;
	s->attempt = 0;
	punch_sock(s, 0);     /* a connection on it holds it */
	s->rounds = 0;
	s->rest_until = 0;
	s->rests = 0;
	loop_timer_set(s->timer, 0);
	return was;
}

int
punch_datagram(struct punch *p, const struct addr *from, const uint8_t *d,
    size_t n)
{
	uint8_t id[PAPO_KEY_LEN];
	char a[ADDR_STRLEN];

	if (n != PUNCH_DATAGRAM_LEN || d[0] != PUNCH_KIND)
		return 0;                 /* QUIC's */
	if (punch_datagram_check(p->env.keys, d, n, loop_wall_ms(), id) == -1) {
		p->st.datagrams_bad++;
		return 0;
	}
	p->st.datagrams_ok++;
	addr_format(from, a);
	log_msg(LOG_DEBUG, "punch: a punch came from %s", a);
	return 1;
}

void
punch_stats(const struct punch *p, struct punch_stats *out)
{
	*out = p->st;
}

struct punch *
punch_new(const struct punch_env *env)
{
	struct punch *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->env = *env;
	return p;
}

void
punch_free(struct punch *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < PUNCH_SLOTS; i++) {
		if (p->slots[i] == NULL)
			continue;
		loop_timer_free(p->slots[i]->timer);
		quic_sock_unref(p->slots[i]->sock);
		free(p->slots[i]);
	}
	free(p);
}
