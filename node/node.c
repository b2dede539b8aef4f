/*
 * node.c: the node thread (node.h).  It owns the room, the identity, the
 * store and the gossip, runs their loop, and talks to the rest of the
 * program only through two channels: requests in, answers and events out.
 * Everything is built on the caller's thread before the node thread
 * starts and released after it has ended, so each object has one owner
 * at a time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <sodium.h>

#include "node/chan.h"
#include "node/crypto.h"
#include "node/frame.h"
#include "node/gossip.h"
#include "node/invite.h"
#include "node/room.h"
#include "node/store.h"
#include "node/turn.h"

struct node {
	pthread_t thread;
	int started;
	struct loop *loop;
	struct chan *in, *out;
	int stop_fd;
	struct room room;
	struct room_keys keys;
	struct identity *me;
	struct store *store;
	struct gossip *gossip;
	char quic[ADDR_STRLEN];
	char *invite;
	struct addr advertise[PAPO_ADDR_MAX];
	size_t nadvertise;
	/* The relay and its credentials (wiped at stop), and whether it
	 * was set for this daemon ("settings") or came with its invite
	 * ("invite"); NULL: none. */
	struct turn_conf turn;
	struct invite_relay relay;
	const char *relay_from;
	int relay_share;         /* invites carry the relay */
};

/* Parses "ADDR:PORT,ADDR:PORT" (--advertise, PAPO_ADVERTISE) into n. */
static int
node_parse_advertise(char err[PAPO_ERR_LEN], struct node *n, const char *list)
{
	char one[128];
	const char *p = list, *end;
	size_t len;

	while (list != NULL && *p != '\0') {
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len > 0) {
			snprintf(one, sizeof(one), "%.*s", (int)len, p);
			if (n->nadvertise == PAPO_ADDR_MAX) {
				snprintf(err, PAPO_ERR_LEN, "at most %d advertised "
				    "addresses", PAPO_ADDR_MAX);
				return -1;
			}
			if (addr_parse(one, &n->advertise[n->nadvertise]) == -1 ||
			    addr_is_unspecified(&n->advertise[n->nadvertise])) {
				snprintf(err, PAPO_ERR_LEN, "the advertised address "
				    "'%s' is not ADDR:PORT (for example "
				    "203.0.113.7:7778)", one);
				return -1;
			}
			n->nadvertise++;
		}
		p += len + (end != NULL);
	}
	return 0;
}

/* Copies one TURN credential; -1 with err when it does not fit. */
static int
node_turn_cred(char err[PAPO_ERR_LEN], const char *what, const char *v,
    char out[TURN_CRED_MAX])
{
	if (v == NULL)
		return 0;
	if (strlen(v) >= TURN_CRED_MAX) {
		snprintf(err, PAPO_ERR_LEN, "the TURN %s is longer than %d "
		    "bytes", what, TURN_CRED_MAX - 1);
		return -1;
	}
	strcpy(out, v);
	return 0;
}

/*
 * The TURN relay this daemon uses, into n->relay (as an invite carries
 * it) and n->turn (resolved, on the caller's thread: a name may take a
 * while): the one set for it (PAPO_TURN and its credentials), else the
 * one its invite carried (room.json).  0 with none; -1 with err.
 */
static int
node_turn_conf(char err[PAPO_ERR_LEN], struct node *n,
    const struct node_config *c)
{
	struct invite_relay *r = &n->relay;
	char why[PAPO_ERR_LEN];

	if (c->turn != NULL && c->turn[0] != '\0') {
		if (strlen(c->turn) > INVITE_URL_MAX) {
			snprintf(err, PAPO_ERR_LEN, "the TURN server's URL is "
			    "longer than %d bytes", INVITE_URL_MAX);
			return -1;
		}
		strcpy(r->url, c->turn);
		if (node_turn_cred(err, "user", c->turn_user, r->user) == -1 ||
		    node_turn_cred(err, "password", c->turn_pass,
		    r->pass) == -1 ||
		    node_turn_cred(err, "shared secret", c->turn_secret,
		    r->secret) == -1)
			return -1;
		n->relay_from = "settings";
	} else if (n->room.relay.url[0] != '\0') {
		*r = n->room.relay;
		n->relay_from = "invite";
	} else
		return 0;
	if (turn_parse_url(r->url, &n->turn.server, why) == -1) {
		/* A relay set for us that cannot work stops the start, as
		 * any wrong setting; one the invite brought (a name only the
		 * inviter's network resolves, say) must not. */
		if (strcmp(n->relay_from, "invite") == 0) {
			log_msg(LOG_WARN, "relay: the invite's TURN server "
			    "cannot be used, going on without one: %s", why);
			n->relay_from = NULL;
			sodium_memzero(r, sizeof(*r));
			return 0;
		}
		snprintf(err, PAPO_ERR_LEN, "TURN server: %s", why);
		return -1;
	}
	if (r->secret[0] == '\0' && (r->user[0] == '\0' || r->pass[0] == '\0')) {
		snprintf(err, PAPO_ERR_LEN, "the TURN server %s needs a user "
		    "and password, or a shared secret", r->url);
		return -1;
	}
	strcpy(n->turn.user, r->user);
	strcpy(n->turn.pass, r->pass);
	strcpy(n->turn.secret, r->secret);
	return 0;
}

void
node_random(void *p, size_t n)
{
	randombytes_buf(p, n);
}

struct node_msg *
node_msg_new(enum node_kind kind)
{
	struct node_msg *m = calloc(1, sizeof(*m));

	if (m != NULL)
		m->kind = kind;
	return m;
}

void
node_msg_free(struct node_msg *m)
{
	if (m == NULL)
		return;
	free(m->text);
	free(m->to);
	free(m->from);
	free(m->json);
	free(m);
}

static char *node_make_invite(struct node *n);

static void
node_emit(void *arg, struct node_msg *m)
{
	struct node *n = arg;

	if (m->kind == NODE_EV_ADDRS)
		m->text = node_make_invite(n);
	chan_push(n->out, m);
}

static void
node_on_request(void *arg, uint32_t events)
{
	struct node *n = arg;
	struct node_msg *m;

	(void)events;
	while ((m = chan_pop(n->in)) != NULL)
		gossip_request(n->gossip, m);
}

static void
node_on_stop(void *arg, uint32_t events)
{
	struct node *n = arg;

	(void)events;
	loop_stop(n->loop);
}

static void *
node_main(void *arg)
{
	struct node *n = arg;

	if (loop_run(n->loop) == -1)
		log_msg(LOG_ERROR, "the node loop failed: %s", strerror(errno));
	/* Bye to everyone from this thread, which owns the connections. */
	gossip_free(n->gossip);
	n->gossip = NULL;
	return NULL;
}

/*
 * The invite others can join with: this room (and the name its maker gave
 * it), this member, the addresses the node is reached at, and the relay it
 * uses (unless
 * PAPO_TURN_SHARE=off), so that a joiner behind another NAT reaches our
 * relayed address through it with nothing set (docs/REACHABILITY.md).
 * Credentials an invite cannot carry (not printable ASCII) leave the
 * relay out, said once in the log.
 */
static char *
node_make_invite(struct node *n)
{
	struct invite inv;
	const char *room;
	char *s;

	memset(&inv, 0, sizeof(inv));
	memcpy(inv.secret, n->room.secret, 32);
	memcpy(inv.inviter, n->me->pk, 32);
	inv.naddr = gossip_addrs(n->gossip, inv.addr, PAPO_ADDR_MAX);
	if ((room = room_given_name(&n->room)) != NULL)
		snprintf(inv.room, sizeof(inv.room), "%s", room);
	/* A joiner must hold the room's newest key to be let in. */
	inv.epoch = gossip_epoch(n->gossip, inv.epoch_secret);
	if (n->relay_from != NULL && n->relay_share) {
		inv.relay = n->relay;
		if ((s = invite_encode(&inv)) != NULL)
			goto out;
		log_msg(LOG_WARN, "relay: invites leave the TURN server out: "
		    "its credentials are not printable ASCII");
		n->relay_share = 0;
		memset(&inv.relay, 0, sizeof(inv.relay));
	}
	s = invite_encode(&inv);
out:
	sodium_memzero(&inv, sizeof(inv));
	return s;
}

int
node_keep_check(char err[PAPO_ERR_LEN], const char *text)
{
	struct store_keep k;

	return store_keep_parse(err, text, &k);
}

/*
 * Retention at start, before any peer is heard: the log is cut to what
 * PAPO_KEEP keeps, so that a daemon restarted with a smaller setting
 * neither serves nor offers what it no longer keeps.
 */
static int
node_retain(char err[PAPO_ERR_LEN], struct store *s,
    const struct gossip_env *env)
{
	char why[PAPO_ERR_LEN];
	long n;

	if (!store_compact_due(s, &env->keep, loop_wall_ms(), 0))
		return 0;
	if ((n = store_compact(why, s, &env->keep, loop_wall_ms())) == -1) {
		snprintf(err, PAPO_ERR_LEN, "retention (PAPO_KEEP=%s): %s",
		    env->keep_text, why);
		return -1;
	}
	if (n > 0)
		log_msg(LOG_INFO, "retention (PAPO_KEEP=%s): %ld messages "
		    "dropped from the log", env->keep_text, n);
	return 0;
}

struct node *
node_start(char err[PAPO_ERR_LEN], const struct node_config *c)
{
	struct node *n = calloc(1, sizeof(*n));
	struct gossip_env env;
	struct addr bound;

	if (n == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	n->stop_fd = -1;
	if (room_load(err, c->home, &n->room) == -1 ||
	    (n->me = sec_identity_load(err, c->home)) == NULL)
		goto fail;
	sec_room_keys(n->room.secret, &n->keys);
	memset(&env, 0, sizeof(env));
	if (store_keep_parse(err, c->keep, &env.keep) == -1)
		goto fail;
	env.keep_text = c->keep != NULL && c->keep[0] != '\0' ? c->keep : NULL;
	if ((n->store = store_open(err, c->home, &n->keys)) == NULL ||
	    node_retain(err, n->store, &env) == -1)
		goto fail;
	if (addr_parse_listen(c->listen, &env.listen) == -1) {
		snprintf(err, PAPO_ERR_LEN, "the QUIC listen address '%s' is not "
		    "ADDR:PORT (for example 0.0.0.0:7778)", c->listen);
		goto fail;
	}
	if ((n->loop = loop_new()) == NULL || (n->in = chan_new()) == NULL ||
	    (n->out = chan_new()) == NULL ||
	    (n->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1 ||
	    loop_add_fd(n->loop, chan_fd(n->in), EPOLLIN, node_on_request, n) == -1 ||
	    loop_add_fd(n->loop, n->stop_fd, EPOLLIN, node_on_stop, n) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot set up the node: %s",
		    strerror(errno));
		goto fail;
	}
	env.loop = n->loop;
	env.store = n->store;
	env.me = n->me;
	env.keys = &n->keys;
	env.room = &n->room;
	env.home = c->home;
	env.version = c->version != 0 ? c->version : FRAME_VERSION;
	if (node_parse_advertise(err, n, c->advertise) == -1)
		goto fail;
	env.advertise = n->advertise;
	/* A daemon speaking as one of version 1 keeps to what those did. */
	env.lan = !c->nolan && env.version >= 2;
	env.portmap = !c->noportmap;
	env.portmap_private = c->portmap_private;
	env.nadvertise = n->nadvertise;
	if (node_turn_conf(err, n, c) == -1)
		goto fail;
	if (n->relay_from != NULL) {
		env.turn = &n->turn;
		env.turn_from = n->relay_from;
	}
	n->relay_share = !c->turn_noshare;
	env.rate = c->rate;
	env.damp = c->damp;
	env.rate_self_off = c->rate_self_off;
	env.emit = node_emit;
	env.arg = n;
	if ((n->gossip = gossip_new(err, &env)) == NULL)
		goto fail;
	gossip_local(n->gossip, &bound);
	addr_format(&bound, n->quic);
	if ((n->invite = node_make_invite(n)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot make the invite");
		goto fail;
	}
	if ((errno = pthread_create(&n->thread, NULL, node_main, n)) != 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot start the node thread: %s",
		    strerror(errno));
		goto fail;
	}
	n->started = 1;
	return n;
fail:
	node_stop(n);
	return NULL;
}

void
node_halt(struct node *n)
{
	uint64_t one = 1;

	if (n == NULL || !n->started)
		return;
	while (write(n->stop_fd, &one, sizeof(one)) == -1 && errno == EINTR)
		;
	pthread_join(n->thread, NULL);
	n->started = 0;
}

void
node_stop(struct node *n)
{
	if (n == NULL)
		return;
	node_halt(n);
	gossip_free(n->gossip);
	store_close(n->store);
	chan_free(n->in);
	chan_free(n->out);
	loop_free(n->loop);
	if (n->stop_fd != -1)
		close(n->stop_fd);
	sec_identity_free(n->me);
	room_wipe(&n->room);
	sodium_memzero(&n->keys, sizeof(n->keys));
	sodium_memzero(&n->turn, sizeof(n->turn));
	sodium_memzero(&n->relay, sizeof(n->relay));
	free(n->invite);
	free(n);
}

void
node_quic_addr(const struct node *n, char *out, size_t len)
{
	snprintf(out, len, "%s", n->quic);
}

int
node_relay(const struct node *n)
{
	return n->relay_from != NULL;
}

char *
node_invite(const struct node *n)
{
	return strdup(n->invite);
}

int
node_fd(const struct node *n)
{
	return chan_fd(n->out);
}

void
node_submit(struct node *n, struct node_msg *m)
{
	chan_push(n->in, m);
}

struct node_msg *
node_take(struct node *n)
{
	return chan_pop(n->out);
}
