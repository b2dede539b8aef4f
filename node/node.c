/*
 * node.c: the node thread (node.h).  It owns the identity, the net and
 * the rooms it holds (roomset.c), runs their loop, and talks to the rest
 * of the program only through two channels: requests in, answers and
 * events out.
 * Everything is built on the caller's thread before the node thread
 * starts and released after it has ended, so each object has one owner
 * at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/os.h"
#include "node/net/net.h"
#include "node/net/turn.h"
#include "node/blobs.h"
#include "node/node.h"
#include "node/roomset.h"
#include "node/room/files.h"
#include "node/room/room.h"
#include "node/store/home.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"
#include "node/wire/invite.h"

struct node {
	pthread_t thread;
	int started;
	struct loop *loop;
	struct chan *in, *out;
	int stop_fd[2];          /* os_wake_new's: node_halt's wakeup */
	char *home;
	struct identity *me;
	struct net *net;
	struct roomset rs;       /* the rooms held (roomset.h) */
	struct room_env env;   /* what every room's room_env shares */
	struct room_settings settings;  /* what every room's env points to */
	char quic[ADDR_STRLEN];
	char *invite;
	struct addr advertise[PAPO_ADDR_MAX];
	size_t nadvertise;
	struct turn_conf turn;   /* the relay's, wiped at stop */
	struct blobwork *work;   /* adds shared files (blobs.h) */
	char *spool;             /* home/spool (node_spool_dir) */
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
 * The TURN relay this daemon uses, into n->rs.relay (as an invite carries
 * it) and n->turn (resolved, on the caller's thread: a name may take a
 * while): the one set for it (PAPO_TURN and its credentials), else the
 * one its invite carried (room.json).  0 with none; -1 with err.
 */
static int
node_turn_conf(char err[PAPO_ERR_LEN], struct node *n,
    const struct node_config *c)
{
	struct invite_relay *r = &n->rs.relay;
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
		n->rs.relay_from = "settings";
	} else {
		for (size_t i = 0; i < n->rs.nrooms && n->rs.relay_from == NULL; i++)
			if (n->rs.rooms[i]->file.relay.url[0] != '\0') {
				*r = n->rs.rooms[i]->file.relay;
				n->rs.relay_from = "invite";
			}
		if (n->rs.relay_from == NULL)
			return 0;
	}
	if (turn_parse_url(r->url, &n->turn.server, why) == -1) {
		/* A relay set for us that cannot work stops the start, as
		 * any wrong setting; one the invite brought (a name only the
		 * inviter's network resolves, say) must not. */
		if (strcmp(n->rs.relay_from, "invite") == 0) {
			log_msg(LOG_WARN, "relay: the invite's TURN server "
			    "cannot be used, going on without one: %s", why);
			n->rs.relay_from = NULL;
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

/* The next message of a channel (lib/chan.h), or NULL. */
static struct node_msg *
node_msg_pop(struct chan *c)
{
	struct chan_link *l = chan_pop(c);

	return l != NULL ? chan_item(l, struct node_msg, link) : NULL;
}

/* A message still in a channel when it is freed. */
static void
node_msg_drop(struct chan_link *l)
{
	node_msg_free(chan_item(l, struct node_msg, link));
}

int
node_keep_check(char err[PAPO_ERR_LEN], const char *text)
{
	struct store_keep k;

	return store_keep_parse(err, text, &k);
}

static void
node_on_request(void *arg, uint32_t events)
{
	struct node *n = arg;
	struct node_msg *m;

	(void)events;
	while ((m = node_msg_pop(n->in)) != NULL)
		roomset_request(&n->rs, m);
}

static void
node_on_stop(void *arg, uint32_t events)
{
	struct node *n = arg;

	(void)events;
	loop_stop(n->loop);
}

/* Every room's bye, then the net's end. */
static void
node_close(struct node *n)
{
	roomset_close(&n->rs);
	net_free(n->net);
	n->net = NULL;
}

static void *
node_main(void *arg)
{
	struct node *n = arg;

	/* The program learns the rooms first, before any event of one. */
	roomset_changed(&n->rs);
	if (loop_run(n->loop) == -1)
		log_msg(LOG_ERROR, "the node loop failed: %s", strerror(errno));
	/* Bye to everyone from this thread, which owns the connections. */
	node_close(n);
	return NULL;
}

/* home/spool, made 0700 and emptied of what a killed upload left. */
static int
node_spool_make(char err[PAPO_ERR_LEN], struct node *n)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	if (fs_path(path, sizeof(path), n->home, "spool") == -1 ||
	    (n->spool = strdup(path)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "the home's name is too long");
		return -1;
	}
	if (fs_home(err, n->spool) == -1)
		return -1;
	if ((d = opendir(n->spool)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && fs_path(path, sizeof(path),
		    n->spool, de->d_name) == 0)
			unlink(path);
	closedir(d);
	return 0;
}

const char *
node_spool_dir(const struct node *n)
{
	return n->spool;
}

struct node_blob *
node_blob_open(char err[PAPO_ERR_LEN], int *code, struct node *n,
    const char *room, const char *ref)
{
	return blobs_open(err, code, n->home, room, ref);
}

uint64_t
node_blob_size(const struct node_blob *b)
{
	return blobs_size(b);
}

const char *
node_blob_name(const struct node_blob *b)
{
	return blobs_name(b);
}

const char *
node_blob_type(const struct node_blob *b)
{
	return blobs_type(b);
}

int
node_blob_read(char err[PAPO_ERR_LEN], struct node_blob *b, uint64_t off,
    void *out, size_t len)
{
	return blobs_read(err, b, off, out, len);
}

void
node_blob_close(struct node_blob *b)
{
	blobs_close(b);
}

_Static_assert(NODE_FILES_AUTO_NONE == FILES_AUTO_NONE,
    "PAPO_FILES_AUTO=0 reaches the rooms as it is");

struct node *
node_start(char err[PAPO_ERR_LEN], const struct node_config *c)
{
	struct node *n = calloc(1, sizeof(*n));
	struct room_env *env;
	struct room_settings *set;
	struct net_env ne;
	struct node_room *added;
	struct addr bound;

	if (n == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	n->stop_fd[0] = n->stop_fd[1] = -1;
	env = &n->env;
	set = &n->settings;
	env->set = set;
	if ((n->home = strdup(c->home)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	if ((n->me = sec_identity_load(err, c->home)) == NULL)
		goto fail;
	env->me = n->me;      /* the stores open private messages with it */
	if (store_keep_parse(err, c->keep, &set->keep) == -1)
		goto fail;
	set->keep_text = c->keep != NULL && c->keep[0] != '\0' ? c->keep : NULL;
	set->files_auto = c->files_auto;     /* NODE_FILES_AUTO_NONE too */
	set->files_quota = c->files_quota;
	set->bad_chunks = c->bad_chunks;
	if (node_spool_make(err, n) == -1)
		goto fail;
	n->rs.home = n->home;
	n->rs.env = env;
	n->rs.settings = set;
	n->rs.quic = n->quic;
	/* Every room's files first (a damaged one stops the start), for
	 * the relay an invite brought (node_turn_conf). */
	if (roomset_load(err, &n->rs, &added) == -1)
		goto fail;
	roomset_default_load(&n->rs);
	memset(&ne, 0, sizeof(ne));
	ne.ops = &room_net_ops;
	if (addr_parse_listen(c->listen, &ne.listen) == -1) {
		snprintf(err, PAPO_ERR_LEN, "the QUIC listen address '%s' is not "
		    "ADDR:PORT (for example 0.0.0.0:7778)", c->listen);
		goto fail;
	}
	if ((n->loop = loop_new()) == NULL || (n->in = chan_new()) == NULL ||
	    (n->out = chan_new()) == NULL ||
	    (n->work = blobwork_new(n->out)) == NULL ||
	    os_wake_new(n->stop_fd) == -1 ||
	    loop_add_fd(n->loop, chan_fd(n->in), LOOP_IN, node_on_request,
	    n) == -1 ||
	    loop_add_fd(n->loop, n->stop_fd[0], LOOP_IN, node_on_stop,
	    n) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot set up the node: %s",
		    strerror(errno));
		goto fail;
	}
	n->rs.out = n->out;
	n->rs.work = n->work;
	ne.loop = env->loop = n->loop;
	ne.me = n->me;
	ne.version = set->version = c->version != 0 ? c->version :
	    FRAME_VERSION;
	if (node_parse_advertise(err, n, c->advertise) == -1)
		goto fail;
	ne.advertise = n->advertise;
	ne.nadvertise = n->nadvertise;
	/* A daemon speaking as one of version 1 keeps to what those did. */
	set->lan = !c->nolan && set->version >= 2;
	ne.portmap = !c->noportmap;
	ne.portmap_private = c->portmap_private;
	if (node_turn_conf(err, n, c) == -1)
		goto fail;
	if (n->rs.relay_from != NULL) {
		ne.turn = &n->turn;
		ne.turn_from = n->rs.relay_from;
	}
	n->rs.relay_share = !c->turn_noshare;
	set->rate = c->rate;
	set->damp = c->damp;
	set->rate_self_off = c->rate_self_off;
	env->emit = roomset_emit;
	if ((n->net = net_new(err, &ne)) == NULL)
		goto fail;
	env->net = n->net;
	for (size_t i = 0; i < n->rs.nrooms; i++)
		if (roomset_start(err, &n->rs, n->rs.rooms[i]) == -1)
			goto fail;
	net_local(n->net, &bound);
	addr_format(&bound, n->quic);
	if (roomset_default(&n->rs) != NULL &&
	    (n->invite = roomset_invite(roomset_default(&n->rs))) == NULL) {
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
	if (n == NULL || !n->started)
		return;
	os_wake_post(n->stop_fd);
	pthread_join(n->thread, NULL);
	n->started = 0;
}

void
node_stop(struct node *n)
{
	if (n == NULL)
		return;
	node_halt(n);
	node_close(n);
	/* The worker's last answer goes to out: it stops first. */
	blobwork_free(n->work);
	chan_free(n->in, node_msg_drop);
	chan_free(n->out, node_msg_drop);
	loop_free(n->loop);
	os_wake_free(n->stop_fd);
	sec_identity_free(n->me);
	sodium_memzero(&n->turn, sizeof(n->turn));
	sodium_memzero(&n->rs.relay, sizeof(n->rs.relay));
	free(n->invite);
	free(n->spool);
	free(n->home);
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
	return n->rs.relay_from != NULL;
}

char *
node_invite(const struct node *n)
{
	return n->invite != NULL ? strdup(n->invite) : NULL;
}

int
node_fd(const struct node *n)
{
	return chan_fd(n->out);
}

void
node_submit(struct node *n, struct node_msg *m)
{
	chan_push(n->in, &m->link);
}

struct node_msg *
node_take(struct node *n)
{
	return node_msg_pop(n->out);
}
