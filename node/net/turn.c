/*
 * turn.c: the TURN client (turn.h), docs/PROTOCOL.md "TURN client".
 *
 * It holds one allocation and a table of peers, each with the
 * permission (and usually the channel) the server keeps for it, and at
 * most one request in flight per peer plus one for the allocation
 * itself.  A request is not kept as bytes: it is built again from its
 * transaction for each retransmission, which gives the same datagram as
 * long as the nonce did not change.  One loop timer serves everything,
 * armed at the earliest of all deadlines.
 *
 * It never touches a socket (env.send does) and never trusts what comes
 * back: responses match a transaction id we chose, success responses to
 * authenticated requests must carry our MESSAGE-INTEGRITY, and every
 * length is checked by stun.c before anything is read.  Node thread.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <sodium.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/turn.h"
#include "node/wire/stun.h"

#define TURN_RTO_MS 500
#define TURN_TRIES 7
#define TURN_RTO_CAP 8            /* a wait grows to 8 RTOs, then stays */
#define TURN_PERM_S 300           /* RFC 8656 section 9 */
#define TURN_STALE_MAX 3          /* 438 answers in a row, then give up */
#define TURN_BACKOFF_NS (5 * NS_PER_S)  /* first re-Allocate after a failure */
#define TURN_BACKOFF_MAX_NS (300 * NS_PER_S)
#define TURN_PEER_RETRY_NS (30 * NS_PER_S)  /* after a refused permission */
#define TURN_RELEASED_NS NS_PER_S       /* coturn frees a released allocation
                                   * about a second later */
#define TURN_RELEASED_TRIES 4
#define TURN_REST_TTL_S 86400     /* validity of a REST user name */
#define TURN_TEXT_MAX 763         /* REALM, NONCE (RFC 8489 14.9, 14.10) */
#define TURN_OUT_MAX 8192         /* one message we send */
#define TURN_CHAN_MIN 0x4000
#define TURN_CHAN_MAX 0x4fff
#define TURN_UDP 17               /* REQUESTED-TRANSPORT: UDP */

enum tx_kind {
	TX_NONE, TX_ALLOCATE, TX_REFRESH, TX_RELEASE, TX_PERMISSION, TX_CHANNEL
};

static const uint16_t tx_method[] = {
	[TX_ALLOCATE] = STUN_ALLOCATE,
	[TX_REFRESH] = STUN_REFRESH,
	[TX_RELEASE] = STUN_REFRESH,     /* with LIFETIME 0 */
	[TX_PERMISSION] = STUN_CREATE_PERMISSION,
	[TX_CHANNEL] = STUN_CHANNEL_BIND,
};

static const char *const tx_name[] = {
	[TX_NONE] = "none",
	[TX_ALLOCATE] = "Allocate",
	[TX_REFRESH] = "Refresh",
	[TX_RELEASE] = "Refresh",
	[TX_PERMISSION] = "CreatePermission",
	[TX_CHANNEL] = "ChannelBind",
};

/* What a person should make of an error code, beyond its phrase. */
static const struct {
	int code;
	const char *hint;
} turn_hints[] = {
	{ 401, "wrong TURN user or password" },
	{ 403, "the TURN server forbids it" },
	{ 437, "the server has another allocation for this address" },
	{ 438, "the server's nonce kept going stale" },
	{ 441, "credentials differ from the allocation's" },
	{ 442, "the TURN server does not relay UDP" },
	{ 486, "TURN allocation quota reached for this user" },
	{ 508, "the TURN server has no relay port free" },
};

/* One request and its retransmissions. */
struct tx {
	enum tx_kind kind;        /* TX_NONE: idle */
	uint8_t id[STUN_TID_LEN];
	unsigned tries;           /* sends so far */
	uint64_t next;            /* ns: send again, or give up */
	unsigned stale;           /* 438s answered so far */
	int authed;               /* sent with MESSAGE-INTEGRITY */
};

struct peer {
	int used;
	struct addr addr;
	uint16_t chan;            /* 0: permission only */
	int bound;                /* the server accepted chan */
	int nochan;               /* ChannelBind refused: Send indications */
	uint64_t perm_until;      /* ns: the permission lasts till, 0: none */
	uint64_t chan_until;      /* ns: the binding lasts till */
	uint64_t heard;           /* ns: last sent to or heard from */
	uint64_t renewed;         /* ns: last granted */
	uint64_t refresh_at;      /* ns: renew then if used; 0: lapsing */
	struct tx tx;
};

struct turn {
	struct turn_conf conf;
	struct turn_env env;
	struct loop_timer *timer;
	enum turn_state state;
	char reason[PAPO_ERR_LEN];
	char server[ADDR_STRLEN];
	uint64_t rto_ns;
	unsigned tries;
	uint64_t perm_ns;

	char name[TURN_NAME_MAX];         /* USERNAME */
	uint64_t name_expiry;             /* a REST name's, Unix s; 0: none */
	char pass[TURN_CRED_MAX];
	uint8_t realm[TURN_TEXT_MAX];
	size_t realmlen;
	uint8_t nonce[TURN_TEXT_MAX];
	size_t noncelen;
	uint8_t key[16];
	int auth;                         /* realm, nonce and key known */

	struct addr relayed, mapped;
	struct tx tx;                     /* Allocate, Refresh or release */
	unsigned recovering;              /* Allocates since releasing a stale
	                                   * allocation, 0: none released */
	uint64_t refresh_at;              /* ns: next Refresh, 0: none */
	uint64_t retry_at;                /* ns: next Allocate, 0: none */
	uint64_t backoff;                 /* ns: the wait after a failure */

	uint16_t next_chan;
	struct peer peers[TURN_PEERS_MAX];
	uint8_t out[TURN_OUT_MAX];
};

static void turn_allocate(struct turn *t);
static void turn_arm(struct turn *t);

int
turn_rest_cred(const char *secret, const char *user, uint64_t expiry,
    char name[TURN_NAME_MAX], char pass[TURN_CRED_MAX])
{
	uint8_t mac[20];

	if (user == NULL || user[0] == '\0')
		user = "papo";
	snprintf(name, TURN_NAME_MAX, "%llu:%s", (unsigned long long)expiry,
	    user);
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA1, secret, strlen(secret), name,
	    strlen(name), mac) < 0)
		return -1;
	sodium_bin2base64(pass, TURN_CRED_MAX, mac, sizeof(mac),
	    sodium_base64_VARIANT_ORIGINAL);
	return 0;
}

int
turn_parse_url(const char *url, struct addr *out, char err[PAPO_ERR_LEN])
{
	struct addr_hostport hp;
	enum addr_hp_err why;
	const char *h, *end;
	struct addrinfo hints, *res = NULL, *ai, *pick = NULL;
	unsigned long pn = TURN_DEFAULT_PORT;
	int rc;

	if (strncmp(url, "turns:", 6) == 0) {
		snprintf(err, PAPO_ERR_LEN, "%s: TURN over TLS (turns:) is not "
		    "supported, use turn:HOST:PORT", url);
		return -1;
	}
	if (strncmp(url, "turn:", 5) != 0) {
		snprintf(err, PAPO_ERR_LEN, "%s: a TURN server is "
		    "turn:HOST[:PORT]", url);
		return -1;
	}
	h = url + 5;
	end = h + strcspn(h, "?");
	if (*end != '\0' && strcmp(end, "?transport=udp") != 0) {
		snprintf(err, PAPO_ERR_LEN, "%s: only ?transport=udp is "
		    "supported", url);
		return -1;
	}
	why = addr_hostport(h, (size_t)(end - h), &hp);
	if (why != ADDR_OK && why != ADDR_BAD_PORT) {
		snprintf(err, PAPO_ERR_LEN, "%s: %s", url,
		    addr_hostport_why(why));
		return -1;
	}
	if (why == ADDR_BAD_PORT || hp.port == 0) {
		snprintf(err, PAPO_ERR_LEN, "%s: the port must be 1 to 65535",
		    url);
		return -1;
	}
	if (hp.port != ADDR_NO_PORT)
		pn = (unsigned long)hp.port;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	if ((rc = getaddrinfo(hp.host, NULL, &hints, &res)) != 0) {
		snprintf(err, PAPO_ERR_LEN, "%s: cannot resolve %s: %s", url,
		    hp.host, gai_strerror(rc));
		return -1;
	}
	/* IPv4 first: the daemon's socket is IPv4 or dual-stack. */
	for (ai = res; ai != NULL && pick == NULL; ai = ai->ai_next)
		if (ai->ai_family == AF_INET)
			pick = ai;
	for (ai = res; ai != NULL && pick == NULL; ai = ai->ai_next)
		if (ai->ai_family == AF_INET6)
			pick = ai;
	if (pick == NULL) {
		freeaddrinfo(res);
		snprintf(err, PAPO_ERR_LEN, "%s: %s has no IP address", url,
		    hp.host);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	if (pick->ai_family == AF_INET) {
		out->family = 4;
		memcpy(out->ip, &((struct sockaddr_in *)pick->ai_addr)->sin_addr,
		    4);
	} else {
		out->family = 6;
		memcpy(out->ip,
		    &((struct sockaddr_in6 *)pick->ai_addr)->sin6_addr, 16);
	}
	out->port = (uint16_t)pn;
	freeaddrinfo(res);
	return 0;
}

/* The server's reason phrase, printable ASCII only and short, since it
 * ends up in logs and in what `papo status` shows. */
static void
turn_phrase(const uint8_t *p, size_t n, char *out, size_t len)
{
	size_t j = 0;

	for (size_t i = 0; i < n && j + 1 < len && j < 80; i++)
		if (p[i] >= 0x20 && p[i] < 0x7f)
			out[j++] = (char)p[i];
	out[j] = '\0';
}

/* "401 Unauthorized: wrong TURN user or password". */
static void
turn_describe(const struct turn *t, enum tx_kind kind, int code,
    const char *phrase, char *out, size_t len)
{
	const char *hint = NULL;

	for (size_t i = 0; i < sizeof(turn_hints) / sizeof(turn_hints[0]); i++)
		if (turn_hints[i].code == code)
			hint = turn_hints[i].hint;
	if (code == 401 && t->conf.secret[0] != '\0')
		hint = "wrong TURN shared secret (or clocks apart)";
	if (code == 437 && kind != TX_ALLOCATE)
		hint = "the server no longer has our allocation (restarted?)";
	snprintf(out, len, "%d%s%s%s%s", code, phrase[0] != '\0' ? " " : "",
	    phrase, hint != NULL ? ": " : "", hint != NULL ? hint : "");
}

static void
turn_set_state(struct turn *t, enum turn_state st, const char *reason)
{
	const char *r = reason != NULL ? reason : "";

	if (st == t->state && strcmp(r, t->reason) == 0)
		return;
	t->state = st;
	snprintf(t->reason, sizeof(t->reason), "%s", r);
	if (t->env.state != NULL)
		t->env.state(t->env.arg, t);
}

/* The wait after the tries-th send: RTO doubling (RFC 8489 section
 * 6.2.1), capped so that a dead server is noticed in some 20 s rather
 * than the RFC's 39.5. */
static uint64_t
tx_wait(const struct turn *t, unsigned tries)
{
	uint64_t w = t->rto_ns;

	for (unsigned i = 1; i < tries && w < t->rto_ns * TURN_RTO_CAP; i++)
		w *= 2;
	return w < t->rto_ns * TURN_RTO_CAP ? w : t->rto_ns * TURN_RTO_CAP;
}

/* Builds x's request in t->out; its length, 0 when it does not fit. */
static size_t
tx_build(struct turn *t, struct tx *x, const struct peer *p)
{
	struct stun_out o;

	stun_begin(&o, t->out, sizeof(t->out), tx_method[x->kind],
	    STUN_REQUEST, x->id);
	switch (x->kind) {
	case TX_ALLOCATE:
		stun_add_u32(&o, STUN_A_REQUESTED_TRANSPORT,
		    (uint32_t)TURN_UDP << 24);
		if (t->conf.lifetime_s != 0)
			stun_add_u32(&o, STUN_A_LIFETIME, t->conf.lifetime_s);
		break;
	case TX_REFRESH:
		if (t->conf.lifetime_s != 0)
			stun_add_u32(&o, STUN_A_LIFETIME, t->conf.lifetime_s);
		break;
	case TX_RELEASE:
		stun_add_u32(&o, STUN_A_LIFETIME, 0);
		break;
	case TX_CHANNEL:
		stun_add_u32(&o, STUN_A_CHANNEL_NUMBER, (uint32_t)p->chan << 16);
		stun_add_xaddr(&o, STUN_A_XOR_PEER_ADDRESS, &p->addr);
		break;
	case TX_PERMISSION:
		stun_add_xaddr(&o, STUN_A_XOR_PEER_ADDRESS, &p->addr);
		break;
	case TX_NONE:
		return 0;
	}
	x->authed = t->auth;
	if (t->auth) {
		stun_add(&o, STUN_A_USERNAME, t->name, strlen(t->name));
		stun_add(&o, STUN_A_REALM, t->realm, t->realmlen);
		stun_add(&o, STUN_A_NONCE, t->nonce, t->noncelen);
		stun_add_integrity(&o, t->key, sizeof(t->key));
	}
	stun_add_fingerprint(&o);
	return stun_end(&o);
}

static void
tx_send(struct turn *t, struct tx *x, const struct peer *p)
{
	size_t n = tx_build(t, x, p);

	/* A failed send is retried with the retransmission. */
	if (n > 0)
		t->env.send(t->env.arg, &t->conf.server, t->out, n);
	x->tries++;
	x->next = loop_now_ns() + tx_wait(t, x->tries);
}

static void
tx_start(struct turn *t, struct tx *x, enum tx_kind kind, const struct peer *p)
{
	unsigned stale = x->kind == kind ? x->stale : 0;

	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->stale = stale;
	randombytes_buf(x->id, sizeof(x->id));
	tx_send(t, x, p);
	turn_arm(t);
}

static void
peer_clear(struct peer *p)
{
	memset(p, 0, sizeof(*p));
}

/* Failed or lost: no relay until an Allocate works again. */
static void
turn_fail(struct turn *t, const char *reason)
{
	uint64_t now = loop_now_ns();

	/* The owner hears of it through env.state and tells people. */
	log_msg(LOG_DEBUG, "turn %s: %s%s", t->server,
	    t->state == TURN_FAILED && strcmp(t->reason, reason) == 0 ?
	    "again: " : "", reason);
	for (size_t i = 0; i < TURN_PEERS_MAX; i++)
		peer_clear(&t->peers[i]);
	memset(&t->tx, 0, sizeof(t->tx));
	t->refresh_at = 0;
	t->recovering = 0;
	t->retry_at = now + t->backoff;
	t->backoff = t->backoff * 2 > TURN_BACKOFF_MAX_NS ?
	    TURN_BACKOFF_MAX_NS : t->backoff * 2;
	turn_arm(t);
	turn_set_state(t, TURN_FAILED, reason);
}

static void
turn_allocate(struct turn *t)
{
	uint64_t now_s = loop_wall_ms() / 1000;

	/* A REST user name carries its expiry: a fresh one for an
	 * allocation once the last has used half its day, so that a daemon
	 * running for days keeps working.  Not for each allocation: coturn
	 * ties our address to the first user name it saw there, and after
	 * a restart of the server it would refuse a new one for a while
	 * (437 "Allocation mismatch: wrong credentials"). */
	if (t->conf.secret[0] != '\0' &&
	    t->name_expiry < now_s + TURN_REST_TTL_S / 2) {
		t->name_expiry = now_s + TURN_REST_TTL_S;
		turn_rest_cred(t->conf.secret, t->conf.user, t->name_expiry,
		    t->name, t->pass);
		if (t->auth && stun_lt_key(t->name, (const char *)t->realm,
		    t->realmlen, t->pass, t->key) != 0)
			t->auth = 0;
	}
	t->retry_at = 0;
	tx_start(t, &t->tx, TX_ALLOCATE, NULL);
}

static uint16_t
turn_chan(struct turn *t)
{
	for (unsigned tries = 0; tries <= TURN_CHAN_MAX - TURN_CHAN_MIN;
	    tries++) {
		uint16_t c = t->next_chan;
		int taken = 0;

		t->next_chan = c == TURN_CHAN_MAX ? TURN_CHAN_MIN : c + 1;
		for (size_t i = 0; i < TURN_PEERS_MAX && !taken; i++)
			taken = t->peers[i].used && t->peers[i].chan == c;
		if (!taken)
			return c;
	}
	return 0;
}

static struct peer *
peer_find(struct turn *t, const struct addr *a, int make)
{
	struct peer *free_p = NULL;

	for (size_t i = 0; i < TURN_PEERS_MAX; i++) {
		struct peer *p = &t->peers[i];

		if (p->used && addr_equal(&p->addr, a))
			return p;
		if (!p->used && free_p == NULL)
			free_p = p;
	}
	if (!make || free_p == NULL)
		return NULL;
	peer_clear(free_p);
	free_p->used = 1;
	free_p->addr = *a;
	return free_p;
}

static void
peer_renew(struct turn *t, struct peer *p)
{
	tx_start(t, &p->tx, p->chan != 0 ? TX_CHANNEL : TX_PERMISSION, p);
}

/* Something went to or came from a: its entry (and, for a permission,
 * those of its IP) stays alive.  A lapsing one is renewed at once. */
static void
turn_heard(struct turn *t, const struct addr *a, uint64_t now)
{
	size_t n = a->family == 6 ? 16 : 4;

	for (size_t i = 0; i < TURN_PEERS_MAX; i++) {
		struct peer *p = &t->peers[i];

		if (!p->used || p->addr.family != a->family ||
		    memcmp(p->addr.ip, a->ip, n) != 0)
			continue;
		if (p->chan != 0 && p->addr.port != a->port)
			continue;
		p->heard = now;
	}
}

static int
turn_send_raw(struct turn *t, const uint8_t *p, size_t n)
{
	return t->env.send(t->env.arg, &t->conf.server, p, n);
}

int
turn_send(struct turn *t, const struct addr *peer, const uint8_t *p, size_t n)
{
	uint64_t now = loop_now_ns();
	struct peer *e;

	if (t->state != TURN_ALLOCATED || n > TURN_DATA_MAX)
		return -1;
	if ((e = peer_find(t, peer, 1)) == NULL) {
		log_msg(LOG_DEBUG, "turn %s: peer table full", t->server);
		return -1;
	}
	e->heard = now;
	if (e->chan == 0 && !e->nochan && (e->chan = turn_chan(t)) != 0 &&
	    e->tx.kind == TX_NONE)
		peer_renew(t, e);
	else if (e->tx.kind == TX_NONE && e->refresh_at == 0)
		peer_renew(t, e);

	if (e->bound && now < e->chan_until) {
		/* ChannelData: 4 bytes instead of 36 or more; over UDP it
		 * needs no padding (RFC 8656 section 12.5). */
		t->out[0] = (uint8_t)(e->chan >> 8);
		t->out[1] = (uint8_t)e->chan;
		t->out[2] = (uint8_t)(n >> 8);
		t->out[3] = (uint8_t)n;
		if (n > 0)
			memcpy(t->out + 4, p, n);
		return turn_send_raw(t, t->out, 4 + n);
	} else {
		struct stun_out o;
		uint8_t tid[STUN_TID_LEN];
		size_t len;

		randombytes_buf(tid, sizeof(tid));
		stun_begin(&o, t->out, sizeof(t->out), STUN_SEND,
		    STUN_INDICATION, tid);
		stun_add_xaddr(&o, STUN_A_XOR_PEER_ADDRESS, peer);
		stun_add(&o, STUN_A_DATA, p, n);
		stun_add_fingerprint(&o);
		if ((len = stun_end(&o)) == 0)
			return -1;
		return turn_send_raw(t, t->out, len);
	}
}

void
turn_refresh(struct turn *t)
{
	if (t->state != TURN_ALLOCATED || t->tx.kind != TX_NONE)
		return;
	t->refresh_at = 0;
	tx_start(t, &t->tx, TX_REFRESH, NULL);
}

int
turn_permit(struct turn *t, const struct addr *peer)
{
	struct peer *e;

	if (t->state != TURN_ALLOCATED)
		return -1;
	if ((e = peer_find(t, peer, 1)) == NULL) {
		log_msg(LOG_DEBUG, "turn %s: peer table full", t->server);
		return -1;
	}
	e->heard = loop_now_ns();
	if (e->tx.kind == TX_NONE && e->refresh_at == 0)
		peer_renew(t, e);
	return 0;
}

/* The next Refresh, some time before the allocation's lifetime ends. */
static void
turn_schedule_refresh(struct turn *t, const struct stun_msg *m)
{
	const struct stun_attr *a = stun_get(m, STUN_A_LIFETIME);
	uint32_t life = 600;
	uint64_t wait;

	if (a != NULL)
		stun_u32(a, &life);
	wait = life > 120 ? life - 60 : life / 2;
	if (wait == 0)
		wait = 1;
	t->refresh_at = loop_now_ns() + wait * NS_PER_S;
}

static void
turn_allocated(struct turn *t, const struct stun_msg *m)
{
	const struct stun_attr *r = stun_get(m, STUN_A_XOR_RELAYED_ADDRESS);
	const struct stun_attr *x = stun_get(m, STUN_A_XOR_MAPPED_ADDRESS);
	char rs[ADDR_STRLEN], ms[ADDR_STRLEN] = "?";

	if (r == NULL || stun_xaddr(m, r, &t->relayed) != 0) {
		turn_fail(t, "the Allocate answer has no relayed address");
		return;
	}
	memset(&t->mapped, 0, sizeof(t->mapped));
	if (x != NULL && stun_xaddr(m, x, &t->mapped) == 0)
		addr_format(&t->mapped, ms);
	memset(&t->tx, 0, sizeof(t->tx));
	t->recovering = 0;
	t->backoff = TURN_BACKOFF_NS;
	turn_schedule_refresh(t, m);
	turn_arm(t);
	addr_format(&t->relayed, rs);
	log_msg(LOG_DEBUG, "turn %s: relayed address %s (we are %s)",
	    t->server, rs, ms);
	turn_set_state(t, TURN_ALLOCATED, NULL);
}

static void
peer_granted(struct turn *t, struct peer *p, enum tx_kind kind)
{
	uint64_t now = loop_now_ns();

	memset(&p->tx, 0, sizeof(p->tx));
	p->renewed = now;
	p->perm_until = now + t->perm_ns;
	p->refresh_at = now + t->perm_ns / 5 * 4;
	if (kind == TX_CHANNEL) {
		p->bound = 1;
		p->chan_until = now + 2 * t->perm_ns;
	} else if (p->chan != 0 && !p->nochan) {
		/* turn_send asked for a channel while the permission was
		 * being installed. */
		peer_renew(t, p);
	}
	turn_arm(t);
}

/* A request of ours failed for good: code 0 means no answer. */
static void
tx_failed(struct turn *t, struct tx *x, struct peer *p, int code,
    const char *why)
{
	enum tx_kind kind = x->kind;
	char reason[PAPO_ERR_LEN], a[ADDR_STRLEN];

	memset(x, 0, sizeof(*x));
	if (kind == TX_ALLOCATE && code == 437 && t->recovering == 0) {
		/* An allocation of ours from before (a restart on the same
		 * port) is still there: release it, then allocate again.
		 * Without a nonce yet, the release's first try draws the 401
		 * that brings one. */
		log_msg(LOG_INFO, "turn %s: releasing a stale allocation",
		    t->server);
		t->recovering = 1;
		tx_start(t, x, TX_RELEASE, NULL);
		return;
	}
	if ((kind == TX_ALLOCATE && code == 437 &&
	    t->recovering < TURN_RELEASED_TRIES) || kind == TX_RELEASE) {
		/* Released, but the server lets it go a little later. */
		t->recovering++;
		t->retry_at = loop_now_ns() + TURN_RELEASED_NS;
		turn_arm(t);
		return;
	}
	if (code == 437 || kind == TX_ALLOCATE || kind == TX_REFRESH) {
		snprintf(reason, sizeof(reason), "%s%s",
		    kind == TX_ALLOCATE ? "" : "allocation lost: ", why);
		turn_fail(t, reason);
		return;
	}
	/* A peer's permission or channel. */
	addr_format(&p->addr, a);
	log_msg(LOG_WARN, "turn %s: %s for %s: %s", t->server, tx_name[kind],
	    a, why);
	if (kind == TX_CHANNEL && code == 400) {
		/* The number or the peer is bound otherwise on the server
		 * (a binding of ours it still keeps): relay through Send
		 * indications and a plain permission. */
		p->nochan = 1;
		p->chan = 0;
		p->bound = 0;
		peer_renew(t, p);
		return;
	}
	/* Tried again in a while, if the peer is still used by then. */
	p->renewed = loop_now_ns();
	p->refresh_at = p->renewed + TURN_PEER_RETRY_NS;
	turn_arm(t);
}

/* Takes REALM and NONCE from a 401 or 438; -1 when absent or too long. */
static int
turn_take_nonce(struct turn *t, const struct stun_msg *m)
{
	const struct stun_attr *r = stun_get(m, STUN_A_REALM);
	const struct stun_attr *n = stun_get(m, STUN_A_NONCE);

	if (n == NULL || n->len == 0 || n->len > TURN_TEXT_MAX)
		return -1;
	if (r != NULL && (r->len == 0 || r->len > TURN_TEXT_MAX))
		return -1;
	if (r == NULL && !t->auth)
		return -1;
	memcpy(t->nonce, n->v, n->len);
	t->noncelen = n->len;
	if (r != NULL) {
		memcpy(t->realm, r->v, r->len);
		t->realmlen = r->len;
	}
	if (stun_lt_key(t->name, (const char *)t->realm, t->realmlen, t->pass,
	    t->key) != 0)
		return -1;
	t->auth = 1;
	return 0;
}

static void
tx_answer(struct turn *t, struct tx *x, struct peer *p,
    const struct stun_msg *m)
{
	const struct stun_attr *ec;
	const uint8_t *ph;
	char phrase[96], why[PAPO_ERR_LEN];
	size_t phl;
	int code;

	if (m->method != tx_method[x->kind] || m->unknown != 0) {
		log_msg(LOG_DEBUG, "turn %s: ignored a %s answer (attribute "
		    "0x%04x)", t->server, tx_name[x->kind], m->unknown);
		return;
	}
	/* An answer to an authenticated request must prove it knows the
	 * key; 401 and 438 cannot, and other errors need not. */
	if (x->authed && (m->cls == STUN_SUCCESS || m->mi_off != 0) &&
	    stun_check_integrity(m, t->key, sizeof(t->key)) != 0) {
		log_msg(LOG_DEBUG, "turn %s: %s answer without our "
		    "MESSAGE-INTEGRITY, ignored", t->server, tx_name[x->kind]);
		return;
	}
	if (m->cls == STUN_SUCCESS) {
		switch (x->kind) {
		case TX_ALLOCATE:
			turn_allocated(t, m);
			break;
		case TX_REFRESH:
			memset(x, 0, sizeof(*x));
			turn_schedule_refresh(t, m);
			turn_arm(t);
			break;
		case TX_RELEASE:
			memset(x, 0, sizeof(*x));
			t->recovering++;
			t->retry_at = loop_now_ns() + TURN_RELEASED_NS;
			turn_arm(t);
			break;
		case TX_PERMISSION:
		case TX_CHANNEL:
			peer_granted(t, p, x->kind);
			break;
		case TX_NONE:
			break;
		}
		return;
	}

	if ((ec = stun_get(m, STUN_A_ERROR_CODE)) == NULL ||
	    stun_error_code(ec, &code, &ph, &phl) != 0) {
		log_msg(LOG_DEBUG, "turn %s: error answer without ERROR-CODE",
		    t->server);
		return;
	}
	turn_phrase(ph, phl, phrase, sizeof(phrase));
	if (code == 401 && !x->authed) {
		if (turn_take_nonce(t, m) != 0) {
			tx_failed(t, x, p, code, "401 without a usable REALM "
			    "and NONCE");
			return;
		}
		tx_start(t, x, x->kind, p);
		return;
	}
	if (code == 438 && x->stale < TURN_STALE_MAX &&
	    turn_take_nonce(t, m) == 0) {
		x->stale++;
		tx_start(t, x, x->kind, p);
		return;
	}
	turn_describe(t, x->kind, code, phrase, why, sizeof(why));
	tx_failed(t, x, p, code, why);
}

static void
turn_response(struct turn *t, const struct stun_msg *m)
{
	if (t->tx.kind != TX_NONE && memcmp(t->tx.id, m->tid,
	    STUN_TID_LEN) == 0) {
		tx_answer(t, &t->tx, NULL, m);
		return;
	}
	for (size_t i = 0; i < TURN_PEERS_MAX; i++) {
		struct peer *p = &t->peers[i];

		if (p->used && p->tx.kind != TX_NONE &&
		    memcmp(p->tx.id, m->tid, STUN_TID_LEN) == 0) {
			tx_answer(t, &p->tx, p, m);
			return;
		}
	}
	log_msg(LOG_DEBUG, "turn %s: answer to no request of ours", t->server);
}

static void
turn_data_ind(struct turn *t, const struct stun_msg *m)
{
	const struct stun_attr *pa = stun_get(m, STUN_A_XOR_PEER_ADDRESS);
	const struct stun_attr *d = stun_get(m, STUN_A_DATA);
	struct addr peer;

	if (t->state != TURN_ALLOCATED || m->unknown != 0 || pa == NULL ||
	    d == NULL || stun_xaddr(m, pa, &peer) != 0) {
		log_msg(LOG_DEBUG, "turn %s: malformed Data indication",
		    t->server);
		return;
	}
	turn_heard(t, &peer, loop_now_ns());
	if (t->env.data != NULL)
		t->env.data(t->env.arg, &peer, d->v, d->len);
}

static void
turn_channel_data(struct turn *t, const uint8_t *p, size_t n)
{
	uint16_t ch = (uint16_t)(p[0] << 8 | p[1]);
	size_t len = (size_t)(p[2] << 8 | p[3]);
	struct addr peer;

	if (t->state != TURN_ALLOCATED || ch < TURN_CHAN_MIN ||
	    ch > TURN_CHAN_MAX || 4 + len > n)
		return;
	for (size_t i = 0; i < TURN_PEERS_MAX; i++) {
		struct peer *e = &t->peers[i];

		if (e->used && e->chan == ch && e->bound) {
			peer = e->addr;
			e->heard = loop_now_ns();
			/* Last: the callback may change the table. */
			if (t->env.data != NULL)
				t->env.data(t->env.arg, &peer, p + 4, len);
			return;
		}
	}
	log_msg(LOG_DEBUG, "turn %s: ChannelData on unknown channel 0x%04x",
	    t->server, ch);
}

int
turn_input(struct turn *t, const struct addr *from, const uint8_t *p,
    size_t n)
{
	struct stun_msg m;
	enum stun_err e;

	if (!addr_equal(from, &t->conf.server))
		return 0;
	if (n >= 4 && (p[0] & 0xc0) == 0x40) {
		turn_channel_data(t, p, n);
		return 1;
	}
	if ((e = stun_decode(&m, p, n)) != STUN_OK) {
		log_msg(LOG_DEBUG, "turn %s: dropped a datagram: %s", t->server,
		    stun_strerror(e));
		return 1;
	}
	if (m.cls == STUN_INDICATION && m.method == STUN_DATA)
		turn_data_ind(t, &m);
	else if (m.cls == STUN_SUCCESS || m.cls == STUN_ERROR)
		turn_response(t, &m);
	return 1;
}

/* A request's time ran out: send it again, or give up. */
static void
tx_due(struct turn *t, struct tx *x, struct peer *p)
{
	char why[PAPO_ERR_LEN];

	if (x->tries < t->tries) {
		tx_send(t, x, p);
		return;
	}
	snprintf(why, sizeof(why), "no answer from %s after %u tries",
	    t->server, x->tries);
	tx_failed(t, x, p, 0, why);
}

static void
turn_tick(void *arg)
{
	struct turn *t = arg;
	uint64_t now = loop_now_ns();

	if (t->tx.kind != TX_NONE && t->tx.next <= now)
		tx_due(t, &t->tx, NULL);
	if (t->retry_at != 0 && t->retry_at <= now)
		turn_allocate(t);
	if (t->refresh_at != 0 && t->refresh_at <= now &&
	    t->state == TURN_ALLOCATED && t->tx.kind == TX_NONE) {
		t->refresh_at = 0;
		tx_start(t, &t->tx, TX_REFRESH, NULL);
	}
	for (size_t i = 0; i < TURN_PEERS_MAX; i++) {
		struct peer *p = &t->peers[i];

		if (!p->used)
			continue;
		if (p->tx.kind != TX_NONE) {
			if (p->tx.next <= now)
				tx_due(t, &p->tx, p);
			continue;
		}
		if (p->refresh_at != 0 && p->refresh_at <= now) {
			p->refresh_at = 0;
			/* Used since it was last granted: keep it. */
			if (p->heard > p->renewed) {
				peer_renew(t, p);
				continue;
			}
		}
		/* Lapsed, and the server has forgotten it too (so that its
		 * channel number is free again). */
		if (p->refresh_at == 0 && now >= p->perm_until &&
		    now >= p->chan_until)
			peer_clear(p);
	}
	turn_arm(t);
}

static void
turn_arm(struct turn *t)
{
	uint64_t at = 0;

#define TURN_EARLIER(x) do { if ((x) != 0 && (at == 0 || (x) < at)) at = (x); } while (0)
	if (t->tx.kind != TX_NONE)
		TURN_EARLIER(t->tx.next);
	TURN_EARLIER(t->retry_at);
	TURN_EARLIER(t->refresh_at);
	for (size_t i = 0; i < TURN_PEERS_MAX; i++) {
		const struct peer *p = &t->peers[i];

		if (!p->used)
			continue;
		if (p->tx.kind != TX_NONE)
			TURN_EARLIER(p->tx.next);
		else if (p->refresh_at != 0)
			TURN_EARLIER(p->refresh_at);
		else
			TURN_EARLIER(p->perm_until > p->chan_until ?
			    p->perm_until : p->chan_until);
	}
#undef TURN_EARLIER
	loop_timer_set(t->timer, at);
}

struct turn *
turn_new(char err[PAPO_ERR_LEN], const struct turn_conf *c,
    const struct turn_env *env)
{
	struct turn *t = NULL;

	if (c->secret[0] == '\0' && (c->user[0] == '\0' || c->pass[0] == '\0')) {
		snprintf(err, PAPO_ERR_LEN, "a TURN server needs a user and "
		    "password, or a shared secret");
		goto err;
	}
	if ((c->server.family != 4 && c->server.family != 6) ||
	    c->server.port == 0) {
		snprintf(err, PAPO_ERR_LEN, "no TURN server address");
		goto err;
	}
	if (env->send == NULL || env->loop == NULL) {
		snprintf(err, PAPO_ERR_LEN, "turn: no send callback or loop");
		goto err;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->timer = loop_timer_new(env->loop, turn_tick, t)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto err;
	}
	t->conf = *c;
	/* The copies must end in NUL whatever the caller put there. */
	t->conf.user[TURN_CRED_MAX - 1] = '\0';
	t->conf.pass[TURN_CRED_MAX - 1] = '\0';
	t->conf.secret[TURN_CRED_MAX - 1] = '\0';
	t->env = *env;
	t->state = TURN_ALLOCATING;
	t->rto_ns = (uint64_t)(c->rto_ms != 0 ? c->rto_ms : TURN_RTO_MS) *
	    NS_PER_MS;
	t->tries = c->tries != 0 ? c->tries : TURN_TRIES;
	t->perm_ns = (uint64_t)(c->perm_s != 0 ? c->perm_s : TURN_PERM_S) * NS_PER_S;
	t->backoff = TURN_BACKOFF_NS;
	t->next_chan = TURN_CHAN_MIN;
	addr_format(&c->server, t->server);
	if (c->secret[0] == '\0') {
		snprintf(t->name, sizeof(t->name), "%s", t->conf.user);
		snprintf(t->pass, sizeof(t->pass), "%s", t->conf.pass);
	}
	turn_allocate(t);
	return t;
err:
	turn_free(t);
	return NULL;
}

void
turn_free(struct turn *t)
{
	if (t == NULL)
		return;
	if (t->state == TURN_ALLOCATED) {
		struct tx x;
		size_t n;

		/* One try: a lost release costs the server a slot until the
		 * lifetime ends, and we cannot wait. */
		memset(&x, 0, sizeof(x));
		x.kind = TX_RELEASE;
		randombytes_buf(x.id, sizeof(x.id));
		if ((n = tx_build(t, &x, NULL)) > 0)
			turn_send_raw(t, t->out, n);
	}
	if (t->timer != NULL)
		loop_timer_free(t->timer);
	sodium_memzero(t, sizeof(*t));
	free(t);
}

enum turn_state
turn_state(const struct turn *t)
{
	return t->state;
}

int
turn_relayed(const struct turn *t, struct addr *out)
{
	if (t->state != TURN_ALLOCATED)
		return -1;
	*out = t->relayed;
	return 0;
}

int
turn_mapped(const struct turn *t, struct addr *out)
{
	if (t->state != TURN_ALLOCATED || t->mapped.family == 0)
		return -1;
	*out = t->mapped;
	return 0;
}

const char *
turn_reason(const struct turn *t)
{
	return t->state == TURN_FAILED ? t->reason : NULL;
}

int
turn_is_relayed(const struct turn *t, const struct addr *peer)
{
	uint64_t now = loop_now_ns();
	size_t n = peer->family == 6 ? 16 : 4;

	if (t->state != TURN_ALLOCATED)
		return 0;
	for (size_t i = 0; i < TURN_PEERS_MAX; i++) {
		const struct peer *p = &t->peers[i];

		if (p->used && p->perm_until > now &&
		    p->addr.family == peer->family &&
		    memcmp(p->addr.ip, peer->ip, n) == 0)
			return 1;
	}
	return 0;
}
