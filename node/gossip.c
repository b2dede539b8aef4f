/*
 * gossip.c: the room, on the node thread (gossip.h; docs/PROTOCOL.md,
 * "Gossip").  It keeps the member table, dials and redials members, greets
 * each connection with hello and peers, floods messages with dedup by id,
 * routes acks back toward authors, resends the outbox, syncs histories
 * that differ, and tracks presence.  It never blocks: the only waits are
 * loop timers.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "node/beacon.h"
#include "node/fsutil.h"
#include "node/frame.h"
#include "node/gossip.h"
#include "node/punch.h"
#include "node/quic.h"
#include "node/reach.h"
#include "node/utf8.h"

#define GOSSIP_MEMBERS_MAX 256
#define ACK_TIMEOUT_NS (8ull * 1000000000u)
#define OUTBOX_RETRY_NS (30ull * 1000000000u)
#define ANNOUNCE_NS (10ull * 1000000000u)
#define ALIVE_NS (35ull * 1000000000u)    /* life shown this recently: online */
#define FULL_MESH_MAX 8                   /* members (with us) all connected */
#define ACTIVE_DIAL 4                     /* neighbours we dial, above that */
#define ACTIVE_MAX 8                      /* neighbours we keep, above that */
#define EVICTED_REDIAL_NS (20ull * 1000000000u)
#define DIAL_BACKOFF_MIN_MS 500u
#define DIAL_BACKOFF_MAX_MS 30000u
#define PEERS_SAVE_DELAY_NS (2ull * 1000000000u)
#define UPSTREAM_SLOTS 4096       /* remembered msg id -> who sent it */
#define ACK_SEEN_SLOTS 4096       /* acks forwarded lately */
#define SYNC_SEND_MAX 20000       /* messages one sync answer may carry */
#define BAD_FRAMES_MAX 3
#define READ_SLOTS 4096           /* read receipts remembered as sent */
#define HISTORY_MAX 500

struct member {
	uint8_t id[32];
	char idtext[PAPO_ID_LEN + 1];
	char name[PAPO_NAME_MAX + 1];
	char about[PAPO_ABOUT_MAX + 1];
	struct addr addr[PAPO_ADDR_MAX];
	size_t naddr;
	uint64_t seen;              /* wall ms of the last sign of life */
	uint64_t announced;         /* its clock's time of its latest announce */
	uint64_t left_at;           /* announced when it said bye */
	uint64_t alive_until;       /* monotonic ns: online until then */
	int left;                   /* said bye since its last announce */
	int shown_online;           /* the state last told to the program */
	struct quic_conn *conn;     /* the connection in use, once greeted */
	struct member *via;         /* who last brought news of its life */
	int punched;                /* its connection came of a punch */
	int lan;                    /* its connection is on our link */
	int open;                   /* takes connections we start: it
	                             * answered our dial, or greeted us from
	                             * an address it advertises */
	uint64_t beacon_dial;       /* ns of the last dial a beacon made */
	int ndial;                  /* dials in flight */
	uint32_t backoff_ms;
	uint64_t next_dial;         /* monotonic ns; 0 none planned */
};

/* What gossip keeps about one QUIC connection. */
struct link {
	struct quic_conn *qc;
	struct member *target;      /* whom we dialled; NULL when accepted */
	struct member *m;           /* who it is, once its hello arrived */
	int bad;                    /* frames that did not open */
	unsigned version;           /* the protocol version agreed */
};

/* An own message not yet acknowledged by everyone it waits for, and the
 * send request still waiting for its answer, if any. */
struct outmsg {
	char id[PAPO_MSGID_LEN + 1];
	struct member **wait, **done;
	size_t nwait, ndone;
	int any;                    /* nobody to wait for: any ack will do */
	struct node_msg *req;
	struct loop_timer *timer;
	struct gossip *g;
	struct outmsg *next;
};

struct gossip {
	struct gossip_env env;
	struct quic *quic;
	struct addr bound;
	struct reach reach;         /* how others reach us: what we advertise */
	struct punch *punch;        /* direct paths arranged through others */
	struct beacon *beacon;      /* LAN discovery, or NULL when off */
	struct member **members;
	size_t nmembers;
	struct outmsg *outbox;
	struct loop_timer *dial_timer, *retry_timer, *presence_timer;
	struct loop_timer *announce_timer;
	struct loop_timer *save_timer;
	struct {
		uint64_t id;
		struct member *m;
	} upstream[UPSTREAM_SLOTS];
	uint64_t ack_seen[ACK_SEEN_SLOTS];
	size_t ack_seen_next;
	uint64_t read_sent[READ_SLOTS];   /* ids whose read receipt went out */
	size_t read_next;
	uint64_t bad_frames;
};

static void gossip_plan_dials(struct gossip *g);
static void gossip_punch_check(struct gossip *g);
static void gossip_dial_at(struct gossip *g, struct member *m,
    const struct addr *a, size_t n);
static void gossip_presence_check(struct gossip *g);

/* Members. */

static struct member *
member_find(const struct gossip *g, const uint8_t id[32])
{
	for (size_t i = 0; i < g->nmembers; i++)
		if (memcmp(g->members[i]->id, id, 32) == 0)
			return g->members[i];
	return NULL;
}

static struct member *
member_add(struct gossip *g, const uint8_t id[32])
{
	struct member **v, *m;

	if (memcmp(id, g->env.me->pk, 32) == 0)
		return NULL;
	if ((m = member_find(g, id)) != NULL)
		return m;
	if (g->nmembers == GOSSIP_MEMBERS_MAX)
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	if ((v = realloc(g->members, (g->nmembers + 1) * sizeof(*v))) == NULL) {
		free(m);
		return NULL;
	}
	memcpy(m->id, id, 32);
	sec_id_format(id, m->idtext);
	g->members = v;
	g->members[g->nmembers++] = m;
	return m;
}

/* A member's name for people: its name, or the start of its id while we
 * have not heard it yet. */
static const char *
member_name(const struct member *m, char buf[16])
{
	if (m->name[0] != '\0')
		return m->name;
	snprintf(buf, 16, "%.8s…", m->idtext);
	return buf;
}

/* Finds a member by name or id; NULL when none or ambiguous. */
static struct member *
member_lookup(const struct gossip *g, const char *who, int *ambiguous)
{
	struct member *found = NULL;

	*ambiguous = 0;
	for (size_t i = 0; i < g->nmembers; i++) {
		struct member *m = g->members[i];

		if (strcmp(m->idtext, who) == 0)
			return m;
		if (strcmp(m->name, who) == 0) {
			if (found != NULL)
				*ambiguous = 1;
			found = m;
		}
	}
	return *ambiguous ? NULL : found;
}

static void
gossip_emit_json(struct gossip *g, enum node_kind kind, cJSON *o)
{
	struct node_msg *ev = node_msg_new(kind);

	if (ev != NULL && (ev->json = cJSON_PrintUnformatted(o)) != NULL)
		g->env.emit(g->env.arg, ev);
	else
		node_msg_free(ev);
	cJSON_Delete(o);
}

/*
 * Presence: a member is online while it has shown life lately: its
 * hello, or an announcement of itself that it floods every 10 s and that
 * reaches us directly or through other members; bye makes it offline at
 * once.  In a small room, where every member is a neighbour, losing the
 * connection also means it is gone; in a large one a connection may close
 * because a neighbour made room for another.
 */
static int
gossip_small(const struct gossip *g)
{
	return g->nmembers + 1 <= FULL_MESH_MAX;
}

/*
 * Online means reachable now: by our own connection, or, while it shows
 * life, through the member its news came by, if we are connected to that
 * one.  In a small room (a full mesh) that is the whole story, so a
 * member whose last path went shows offline at once; in a large one a
 * member is often reached over several hops, and life shown lately is
 * enough while we have any neighbour.
 */
static size_t gossip_active(const struct gossip *g);

static int
member_online(const struct gossip *g, const struct member *m)
{
	if (m->left)
		return 0;
	if (m->conn != NULL)
		return 1;
	if (m->alive_until <= loop_now_ns())
		return 0;
	if (m->via != NULL && m->via->conn != NULL)
		return 1;
	return !gossip_small(g) && gossip_active(g) > 0;
}

static void
member_alive(struct member *m)
{
	m->alive_until = loop_now_ns() + ALIVE_NS;
	m->seen = loop_wall_ms();
}

static size_t
gossip_active(const struct gossip *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nmembers; i++)
		n += g->members[i]->conn != NULL;
	return n;
}

static void
gossip_presence(struct gossip *g, struct member *m)
{
	cJSON *o = cJSON_CreateObject();
	char nb[16];

	cJSON_AddStringToObject(o, "id", m->idtext);
	cJSON_AddStringToObject(o, "name", member_name(m, nb));
	cJSON_AddBoolToObject(o, "online", m->shown_online);
	cJSON_AddNumberToObject(o, "last_seen", (double)m->seen);
	gossip_emit_json(g, NODE_EV_PRESENCE, o);
	log_msg(LOG_INFO, "%s is %s", member_name(m, nb),
	    m->shown_online ? "online" : "offline");
}

/* Tells the program of every change of presence, and wakes again when
 * the next member would fall silent. */
static void
gossip_presence_check(struct gossip *g)
{
	uint64_t next = 0;

	for (size_t i = 0; i < g->nmembers; i++) {
		struct member *m = g->members[i];
		int on = member_online(g, m);

		if (on != m->shown_online) {
			m->shown_online = on;
			gossip_presence(g, m);
		}
		if (on && (next == 0 || m->alive_until < next))
			next = m->alive_until;
	}
	loop_timer_set(g->presence_timer, next);
}

static void
gossip_presence_timer(void *arg)
{
	gossip_presence_check(arg);
}

/* peers.json: the members met, so a restart finds them again. */

static void
gossip_save_peers(struct gossip *g)
{
	char path[4096], err[PAPO_ERR_LEN];
	cJSON *o = cJSON_CreateObject(), *arr;
	char *text = NULL;

	arr = cJSON_AddArrayToObject(o, "members");
	for (size_t i = 0; i < g->nmembers; i++) {
		struct member *m = g->members[i];
		cJSON *e = cJSON_CreateObject(), *addrs;

		cJSON_AddItemToArray(arr, e);
		cJSON_AddStringToObject(e, "id", m->idtext);
		cJSON_AddStringToObject(e, "name", m->name);
		cJSON_AddStringToObject(e, "about", m->about);
		cJSON_AddNumberToObject(e, "seen", (double)m->seen);
		addrs = cJSON_AddArrayToObject(e, "addrs");
		for (size_t j = 0; j < m->naddr; j++) {
			char a[ADDR_STRLEN];

			addr_format(&m->addr[j], a);
			cJSON_AddItemToArray(addrs, cJSON_CreateString(a));
		}
	}
	if ((text = cJSON_Print(o)) != NULL &&
	    fs_path(path, sizeof(path), g->env.home, "peers.json") == 0 &&
	    fs_write(err, path, text, strlen(text)) == -1)
		log_msg(LOG_WARN, "%s", err);
	cJSON_free(text);
	cJSON_Delete(o);
}

static void
gossip_save_later(struct gossip *g)
{
	loop_timer_set(g->save_timer, loop_now_ns() + PEERS_SAVE_DELAY_NS);
}

static void
gossip_save_timer(void *arg)
{
	gossip_save_peers(arg);
}

static void
gossip_load_peers(struct gossip *g)
{
	char path[4096], err[PAPO_ERR_LEN];
	const cJSON *arr, *e;
	char *text = NULL;
	size_t len;
	int exists = 0;
	cJSON *o;

	if (fs_path(path, sizeof(path), g->env.home, "peers.json") == -1 ||
	    fs_read(err, path, 4 * 1024 * 1024, &text, &len, &exists) == -1) {
		if (exists)
			log_msg(LOG_WARN, "%s", err);
		return;
	}
	if ((o = cJSON_ParseWithLength(text, len)) == NULL) {
		log_msg(LOG_WARN, "%s is damaged; starting from the invite",
		    path);
		free(text);
		return;
	}
	arr = cJSON_GetObjectItemCaseSensitive(o, "members");
	cJSON_ArrayForEach(e, arr) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		const cJSON *about = cJSON_GetObjectItemCaseSensitive(e, "about");
		const cJSON *seen = cJSON_GetObjectItemCaseSensitive(e, "seen");
		const cJSON *addrs = cJSON_GetObjectItemCaseSensitive(e, "addrs");
		const cJSON *a;
		uint8_t pk[32];
		struct member *m;

		if (!cJSON_IsString(id) || sec_id_parse(id->valuestring, pk) == -1 ||
		    (m = member_add(g, pk)) == NULL)
			continue;
		if (cJSON_IsString(name) && strlen(name->valuestring) <= PAPO_NAME_MAX)
			strcpy(m->name, name->valuestring);
		if (cJSON_IsString(about) &&
		    strlen(about->valuestring) <= PAPO_ABOUT_MAX)
			strcpy(m->about, about->valuestring);
		if (cJSON_IsNumber(seen) && seen->valuedouble > 0)
			m->seen = (uint64_t)seen->valuedouble;
		cJSON_ArrayForEach(a, addrs)
			if (m->naddr < PAPO_ADDR_MAX && cJSON_IsString(a) &&
			    addr_parse(a->valuestring, &m->addr[m->naddr]) == 0)
				m->naddr++;
	}
	cJSON_Delete(o);
	free(text);
}

/* Sending frames. */

static int
gossip_send_frame(struct gossip *g, struct member *m, const struct frame *f)
{
	struct buf b;
	int rc = -1;

	if (m == NULL || m->conn == NULL)
		return -1;
	buf_init(&b, PAPO_FRAME_MAX);
	if (frame_seal(g->env.keys, f, &b) == 0)
		rc = quic_send(m->conn, b.p, b.len);
	buf_free(&b);
	return rc;
}

static void
gossip_send_link(struct gossip *g, struct link *l, const struct frame *f)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	if (frame_seal(g->env.keys, f, &b) == 0)
		quic_send(l->qc, b.p, b.len);
	buf_free(&b);
}

/* Sends f to every connected member but except (may be NULL). */
static void
gossip_flood(struct gossip *g, const struct frame *f, const struct member *except)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	if (frame_seal(g->env.keys, f, &b) == 0)
		for (size_t i = 0; i < g->nmembers; i++) {
			struct member *m = g->members[i];

			if (m->conn != NULL && m != except)
				quic_send(m->conn, b.p, b.len);
		}
	buf_free(&b);
}

/* What we advertise changed (a public address learned or lost): the
 * program prints invites with it from now on; members hear it in our
 * next announcement. */
static void
gossip_addrs_changed(struct gossip *g)
{
	struct addr v[PAPO_ADDR_MAX];
	size_t n = reach_addrs(&g->reach, v, PAPO_ADDR_MAX);
	cJSON *o = cJSON_CreateObject(), *arr;
	char a[ADDR_STRLEN];

	arr = cJSON_AddArrayToObject(o, "addrs");
	for (size_t i = 0; i < n; i++) {
		addr_format(&v[i], a);
		cJSON_AddItemToArray(arr, cJSON_CreateString(a));
	}
	log_msg(LOG_INFO, "reach: peers see this member as %s (%s NAT)",
	    n > 0 ? cJSON_GetArrayItem(arr, 0)->valuestring : "nothing",
	    reach_nat_name(reach_nat(&g->reach)));
	gossip_emit_json(g, NODE_EV_ADDRS, o);
}

static void
gossip_hello(struct gossip *g, struct link *l)
{
	struct frame f;
	struct frame_hello *h = &f.u.hello;
	struct store_stats st;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_HELLO;
	h->version = l->version;
	memcpy(h->id, g->env.me->pk, 32);
	strcpy(h->name, g->env.room->me);
	strcpy(h->about, g->env.room->about);
	h->naddr = reach_addrs(&g->reach, h->addr, PAPO_ADDR_MAX);
	/* Version 2: where we see the peer, so that it learns how it is
	 * reached from outside. */
	if (l->version >= 2)
		h->obs = *quic_remote(l->qc);
	store_stats(g->env.store, &st);
	h->msgs = st.msgs;
	store_digest(g->env.store, h->digest);
	gossip_send_link(g, l, &f);
}

/* Sends the members we know (all, or just one) to a member, in frames of
 * at most FRAME_PEERS_MAX. */
static void
gossip_peers(struct gossip *g, struct member *to, struct member *only)
{
	struct frame f;
	struct frame_peer v[FRAME_PEERS_MAX];

	memset(&f, 0, sizeof(f));
	f.type = FRAME_PEERS;
	f.u.peers.v = v;
	for (size_t i = 0; i <= g->nmembers; i++) {
		struct member *m = i < g->nmembers ? g->members[i] : NULL;

		if (m != NULL && m != to && (only == NULL || m == only) &&
		    m->name[0] != '\0') {
			struct frame_peer *p = &v[f.u.peers.n++];

			memset(p, 0, sizeof(*p));
			memcpy(p->id, m->id, 32);
			strcpy(p->name, m->name);
			strcpy(p->about, m->about);
			/* Its own clock's time, so that what we pass on is
			 * never newer than what it said itself. */
			p->seen = m->announced;
			p->naddr = m->naddr;
			memcpy(p->addr, m->addr, m->naddr * sizeof(m->addr[0]));
		}
		if (f.u.peers.n > 0 && (f.u.peers.n == FRAME_PEERS_MAX || m == NULL)) {
			gossip_send_frame(g, to, &f);
			f.u.peers.n = 0;
		}
	}
}

/* The message JSON the API and events share. */
static cJSON *
gossip_msg_json(const struct gossip *g, const struct frame_msg *m)
{
	cJSON *o = cJSON_CreateObject();
	char id[PAPO_ID_LEN + 1], nb[16];

	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddStringToObject(o, "from", m->name);
	sec_id_format(m->from, id);
	cJSON_AddStringToObject(o, "from_id", id);
	if (m->has_to) {
		const struct member *t = member_find(g, m->to);

		sec_id_format(m->to, id);
		cJSON_AddStringToObject(o, "to", memcmp(m->to, g->env.me->pk,
		    32) == 0 ? g->env.room->me : t != NULL ? member_name(t, nb) : id);
		cJSON_AddStringToObject(o, "to_id", id);
	} else {
		cJSON_AddNullToObject(o, "to");
		cJSON_AddNullToObject(o, "to_id");
	}
	if (m->has_reply_to)
		cJSON_AddStringToObject(o, "reply_to", m->reply_to);
	else
		cJSON_AddNullToObject(o, "reply_to");
	cJSON_AddNumberToObject(o, "ts", (double)m->ts);
	cJSON_AddStringToObject(o, "text", m->body);
	return o;
}

/* Acks: sent straight to the author when connected, else back the way
 * the message came, else to everyone. */

static void
upstream_put(struct gossip *g, const char *id, struct member *m)
{
	uint64_t v;

	if (!sec_msgid_valid(id, &v))
		return;
	g->upstream[v % UPSTREAM_SLOTS].id = v;
	g->upstream[v % UPSTREAM_SLOTS].m = m;
}

static struct member *
upstream_get(struct gossip *g, const char *id)
{
	uint64_t v;

	if (!sec_msgid_valid(id, &v) || g->upstream[v % UPSTREAM_SLOTS].id != v)
		return NULL;
	return g->upstream[v % UPSTREAM_SLOTS].m;
}

static void
gossip_route_ack(struct gossip *g, const struct frame *f, const uint8_t author[32],
    struct member *came_from)
{
	struct member *a = member_find(g, author), *up;

	if (a != NULL && a->conn != NULL) {
		gossip_send_frame(g, a, f);
		return;
	}
	up = upstream_get(g, f->u.ack.id);
	if (up != NULL && up->conn != NULL && up != came_from) {
		gossip_send_frame(g, up, f);
		return;
	}
	gossip_flood(g, f, came_from);
}

static void
gossip_ack(struct gossip *g, const struct frame_msg *m, enum ack_state state)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_ACK;
	strcpy(f.u.ack.id, m->id);
	f.u.ack.state = state;
	f.u.ack.ts = loop_wall_ms();
	if (frame_ack_sign(&f.u.ack, g->env.keys, g->env.me) == 0)
		gossip_route_ack(g, &f, m->from, NULL);
}

/* The outbox. */

static int
member_in(struct member **v, size_t n, const struct member *m)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == m)
			return 1;
	return 0;
}

static cJSON *
names_json(struct member **v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	char nb[16];

	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(member_name(v[i], nb)));
	return arr;
}

/* Answers the send request of o, if it still waits. */
static void
outmsg_answer(struct gossip *g, struct outmsg *o)
{
	struct node_msg *req = o->req;
	cJSON *r;
	int delivered = o->nwait == 0 && (o->ndone > 0 || !o->any);

	if (req == NULL)
		return;
	o->req = NULL;
	loop_timer_set(o->timer, 0);
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "id", o->id);
	cJSON_AddStringToObject(r, "state", delivered ? "delivered" : "queued");
	cJSON_AddItemToObject(r, "delivered_to", names_json(o->done, o->ndone));
	cJSON_AddItemToObject(r, "waiting_for", names_json(o->wait, o->nwait));
	req->json = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	if (req->json == NULL) {
		req->code = 500;
		snprintf(req->err, sizeof(req->err), "out of memory");
	}
	g->env.emit(g->env.arg, req);
}

static void
outmsg_free(struct gossip *g, struct outmsg *o)
{
	struct outmsg **p;

	for (p = &g->outbox; *p != NULL; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			break;
		}
	outmsg_answer(g, o);
	loop_timer_free(o->timer);
	free(o->wait);
	free(o->done);
	free(o);
}

static void
outmsg_timeout(void *arg)
{
	struct outmsg *o = arg;

	outmsg_answer(o->g, o);
}

static struct outmsg *
outmsg_new(struct gossip *g, const char *id)
{
	struct outmsg *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return NULL;
	strcpy(o->id, id);
	o->g = g;
	if ((o->timer = loop_timer_new(g->env.loop, outmsg_timeout, o)) == NULL ||
	    (o->wait = calloc(GOSSIP_MEMBERS_MAX, sizeof(*o->wait))) == NULL ||
	    (o->done = calloc(GOSSIP_MEMBERS_MAX, sizeof(*o->done))) == NULL) {
		loop_timer_free(o->timer);
		free(o->wait);
		free(o);
		return NULL;
	}
	o->next = g->outbox;
	g->outbox = o;
	return o;
}

static struct outmsg *
outmsg_find(struct gossip *g, const char *id)
{
	for (struct outmsg *o = g->outbox; o != NULL; o = o->next)
		if (strcmp(o->id, id) == 0)
			return o;
	return NULL;
}

/* Sends the message of o again to the members it waits for that are
 * connected (only, when not NULL). */
static void
outmsg_resend(struct gossip *g, struct outmsg *o, struct member *only)
{
	struct frame f;
	size_t i;

	/* Read the message back only when someone is there to take it. */
	for (i = 0; i < g->nmembers; i++) {
		struct member *m = g->members[i];

		if (m->conn != NULL && (only == NULL || m == only) &&
		    (o->any || member_in(o->wait, o->nwait, m)))
			break;
	}
	if (i == g->nmembers)
		return;
	memset(&f, 0, sizeof(f));
	if (store_get(g->env.store, o->id, &f.u.msg) == -1)
		return;
	f.type = FRAME_MSG;
	for (i = 0; i < g->nmembers; i++) {
		struct member *m = g->members[i];

		if (m->conn == NULL || (only != NULL && m != only))
			continue;
		if (o->any || member_in(o->wait, o->nwait, m))
			gossip_send_frame(g, m, &f);
	}
	frame_clear(&f);
}

static void
gossip_retry(void *arg)
{
	struct gossip *g = arg;

	for (struct outmsg *o = g->outbox; o != NULL; o = o->next)
		outmsg_resend(g, o, NULL);
	/* Anti-entropy: greeting every neighbour again compares histories
	 * and syncs what a lost frame or a closed connection left out. */
	for (size_t i = 0; i < g->nmembers; i++)
		if (g->members[i]->conn != NULL)
			gossip_hello(g, quic_data(g->members[i]->conn));
	loop_timer_set(g->retry_timer, loop_now_ns() + OUTBOX_RETRY_NS);
}

/* A delivered ack for an own message. */
static void
outmsg_acked(struct gossip *g, struct outmsg *o, struct member *by)
{
	size_t i;

	for (i = 0; i < o->nwait; i++)
		if (o->wait[i] == by) {
			o->wait[i] = o->wait[--o->nwait];
			break;
		}
	if (!member_in(o->done, o->ndone, by))
		o->done[o->ndone++] = by;
	if (o->nwait > 0)
		return;
	if (store_outbox_del(g->env.store, o->id) == -1)
		log_msg(LOG_WARN, "cannot update the outbox: %s", strerror(errno));
	outmsg_free(g, o);
}

/* Requests. */

static void
gossip_fail(struct gossip *g, struct node_msg *req, int code, const char *fmt,
    const char *arg)
{
	req->code = code;
	snprintf(req->err, sizeof(req->err), fmt, arg);
	g->env.emit(g->env.arg, req);
}

static void
gossip_do_send(struct gossip *g, struct node_msg *req)
{
	struct frame f;
	struct frame_msg *m = &f.u.msg;
	struct member *to = NULL;
	struct outmsg *o;
	size_t len = req->text != NULL ? strlen(req->text) : 0;
	char list[PAPO_ERR_LEN / 2], nb[16];
	int amb;

	if (req->text == NULL || len == 0) {
		gossip_fail(g, req, 400, "%s", "text is empty");
		return;
	}
	if (len > PAPO_BODY_MAX) {
		char n[32];

		snprintf(n, sizeof(n), "%zu", len);
		gossip_fail(g, req, 413, "text is %s bytes; at most 49152 "
		    "(48 KiB) are allowed", n);
		return;
	}
	if (!utf8_valid(req->text, len)) {
		gossip_fail(g, req, 400, "%s", "text is not valid UTF-8");
		return;
	}
	if (req->to != NULL && req->to[0] != '\0' &&
	    (to = member_lookup(g, req->to, &amb)) == NULL) {
		size_t off = 0;

		list[0] = '\0';
		for (size_t i = 0; i < g->nmembers && off < sizeof(list) - 70; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off,
			    "%s%s", i ? ", " : "", member_name(g->members[i], nb));
		req->code = 404;
		snprintf(req->err, sizeof(req->err), "%s '%s'; the members are: "
		    "%s", amb ? "more than one member is named" :
		    "no member is named", req->to, off ? list : "(none yet)");
		g->env.emit(g->env.arg, req);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	sec_msgid_new(m->id);
	strcpy(m->name, g->env.room->me);
	m->ts = loop_wall_ms();
	m->body = req->text;
	m->body_len = len;
	if (to != NULL) {
		m->has_to = 1;
		memcpy(m->to, to->id, 32);
	}
	if (req->reply_to[0] != '\0') {
		if (!sec_msgid_valid(req->reply_to, NULL)) {
			gossip_fail(g, req, 400, "reply_to '%s' is not a message id",
			    req->reply_to);
			return;
		}
		m->has_reply_to = 1;
		strcpy(m->reply_to, req->reply_to);
	}
	if (frame_msg_sign(m, g->env.keys, g->env.me) == -1 ||
	    store_add_msg(g->env.store, m) != 1 ||
	    store_outbox_add(g->env.store, m->id) == -1) {
		gossip_fail(g, req, 500, "cannot store the message: %s",
		    strerror(errno));
		return;
	}
	if ((o = outmsg_new(g, m->id)) == NULL) {
		gossip_fail(g, req, 500, "%s", "out of memory");
		return;
	}
	if (to != NULL)
		o->wait[o->nwait++] = to;
	else
		for (size_t i = 0; i < g->nmembers; i++)
			if (member_online(g, g->members[i]))
				o->wait[o->nwait++] = g->members[i];
	o->any = o->nwait == 0;
	o->req = req;
	gossip_flood(g, &f, NULL);
	gossip_emit_json(g, NODE_EV_SENT, gossip_msg_json(g, m));
	/* Nobody to hear it now: say queued at once rather than in 8 s. */
	if (o->any || (to != NULL && !member_online(g, to)))
		outmsg_answer(g, o);
	else
		loop_timer_set(o->timer, loop_now_ns() + ACK_TIMEOUT_NS);
	m->body = NULL;   /* req->text, freed with req */
}

/*
 * How a member is reached now: "direct", "punched" or "lan" (our own
 * connection: its protocol version and smoothed RTT), "via NAME" (no
 * connection, but news of its life came lately through NAME's), "via
 * others" (a large room, over several hops), or "none".
 */
static void
gossip_path_json(const struct gossip *g, const struct member *m, cJSON *e)
{
	char path[PAPO_NAME_MAX + 8], nb[16];

	if (m->conn != NULL) {
		cJSON_AddStringToObject(e, "path", m->punched ? "punched" :
		    m->lan ? "lan" : "direct");
		cJSON_AddNumberToObject(e, "rtt_ms",
		    (double)(quic_rtt_us(m->conn) / 100) / 10.0);
		cJSON_AddNumberToObject(e, "protocol", quic_version(m->conn));
		return;
	}
	if (member_online(g, m) && m->via != NULL) {
		snprintf(path, sizeof(path), "via %s", member_name(m->via, nb));
		cJSON_AddStringToObject(e, "path", path);
	} else if (member_online(g, m))    /* a large room, several hops */
		cJSON_AddStringToObject(e, "path", "via others");
	else
		cJSON_AddStringToObject(e, "path", "none");
	cJSON_AddNullToObject(e, "rtt_ms");
	cJSON_AddNullToObject(e, "protocol");
}

static void
gossip_do_status(struct gossip *g, struct node_msg *req)
{
	cJSON *o = cJSON_CreateObject(), *me, *arr, *addrs;
	char rid[PAPO_ROOMID_LEN + 1], id[PAPO_ID_LEN + 1], a[ADDR_STRLEN];
	struct addr adv[PAPO_ADDR_MAX], pub;
	struct store_stats st;
	size_t nout = 0, n;

	sec_room_id_format(g->env.keys, rid);
	cJSON_AddStringToObject(o, "room", g->env.room->name);
	cJSON_AddStringToObject(o, "room_id", rid);
	me = cJSON_AddObjectToObject(o, "me");
	cJSON_AddStringToObject(me, "name", g->env.room->me);
	sec_id_format(g->env.me->pk, id);
	cJSON_AddStringToObject(me, "id", id);
	cJSON_AddStringToObject(me, "about", g->env.room->about);
	addrs = cJSON_AddArrayToObject(me, "addrs");
	n = reach_addrs(&g->reach, adv, PAPO_ADDR_MAX);
	for (size_t i = 0; i < n; i++) {
		addr_format(&adv[i], a);
		cJSON_AddItemToArray(addrs, cJSON_CreateString(a));
	}
	if (reach_public(&g->reach, &pub) == 0) {
		addr_format(&pub, a);
		cJSON_AddStringToObject(me, "observed", a);
	} else
		cJSON_AddNullToObject(me, "observed");
	cJSON_AddStringToObject(me, "nat", reach_nat_name(reach_nat(&g->reach)));
	{
		struct punch_stats ps;
		cJSON *pj = cJSON_AddObjectToObject(o, "punch");

		punch_stats(g->punch, &ps);
		cJSON_AddNumberToObject(pj, "asked", (double)ps.asked);
		cJSON_AddNumberToObject(pj, "answered", (double)ps.answered);
		cJSON_AddNumberToObject(pj, "punched", (double)ps.punched);
		cJSON_AddNumberToObject(pj, "datagrams_sent",
		    (double)ps.datagrams_sent);
		cJSON_AddNumberToObject(pj, "datagrams_ok",
		    (double)ps.datagrams_ok);
		cJSON_AddNumberToObject(pj, "datagrams_bad",
		    (double)ps.datagrams_bad);
	}
	if (g->beacon != NULL) {
		uint64_t sent, heard, bad;
		cJSON *lj = cJSON_AddObjectToObject(o, "lan");

		beacon_counts(g->beacon, &sent, &heard, &bad);
		cJSON_AddNumberToObject(lj, "beacons_sent", (double)sent);
		cJSON_AddNumberToObject(lj, "beacons_heard", (double)heard);
		cJSON_AddNumberToObject(lj, "beacons_bad", (double)bad);
	} else
		cJSON_AddNullToObject(o, "lan");
	arr = cJSON_AddArrayToObject(o, "members");
	for (size_t i = 0; i < g->nmembers; i++) {
		struct member *m = g->members[i];
		cJSON *e = cJSON_CreateObject();
		char nb[16];

		cJSON_AddItemToArray(arr, e);
		cJSON_AddStringToObject(e, "name", member_name(m, nb));
		cJSON_AddStringToObject(e, "id", m->idtext);
		cJSON_AddStringToObject(e, "about", m->about);
		cJSON_AddBoolToObject(e, "online", member_online(g, m));
		cJSON_AddBoolToObject(e, "direct", m->conn != NULL);
		gossip_path_json(g, m, e);
		if (m->seen != 0)
			cJSON_AddNumberToObject(e, "last_seen", (double)m->seen);
		else
			cJSON_AddNullToObject(e, "last_seen");
	}
	store_stats(g->env.store, &st);
	for (struct outmsg *om = g->outbox; om != NULL; om = om->next)
		nout++;
	cJSON_AddNumberToObject(o, "outbox", (double)nout);
	cJSON_AddNumberToObject(o, "messages", (double)st.msgs);
	addr_format(&g->bound, a);
	cJSON_AddStringToObject(o, "quic", a);
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	g->env.emit(g->env.arg, req);
}

static void
gossip_do_history(struct gossip *g, struct node_msg *req)
{
	size_t limit = req->limit == 0 ? 20 : req->limit;
	size_t want = limit, fetch;
	struct frame_msg *v = NULL;
	struct member *from = NULL;
	int from_me = 0, amb;
	cJSON *o, *arr;
	long n;

	if (limit > HISTORY_MAX)
		limit = want = HISTORY_MAX;
	if (req->from != NULL && req->from[0] != '\0') {
		from_me = strcmp(req->from, g->env.room->me) == 0;
		if (!from_me && (from = member_lookup(g, req->from, &amb)) == NULL) {
			gossip_fail(g, req, 404, "no member is named '%s'", req->from);
			return;
		}
	}
	/* With an author to match, read further back and keep the last
	 * limit of theirs. */
	fetch = (from != NULL || from_me) ? 10 * want + 1000 : want;
	if ((v = calloc(fetch, sizeof(*v))) == NULL) {
		gossip_fail(g, req, 500, "%s", "out of memory");
		return;
	}
	n = store_history(g->env.store, fetch, req->before, req->since, v);
	if (n < 0) {
		free(v);
		gossip_fail(g, req, 500, "cannot read the history: %s",
		    strerror(errno));
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	{
		long first = 0, kept = 0;
		const uint8_t *who = from != NULL ? from->id :
		    from_me ? g->env.me->pk : NULL;

		for (long i = n - 1; i >= 0 && (size_t)kept < want; i--)
			if (who == NULL || memcmp(v[i].from, who, 32) == 0) {
				kept++;
				first = i;
			}
		for (long i = first; i < n && kept > 0; i++)
			if (who == NULL || memcmp(v[i].from, who, 32) == 0)
				cJSON_AddItemToArray(arr, gossip_msg_json(g, &v[i]));
	}
	for (long i = 0; i < n; i++)
		frame_msg_clear(&v[i]);
	free(v);
	req->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	g->env.emit(g->env.arg, req);
}

/* Messages shown to an agent: each author hears it once (a read
 * receipt); own messages and unknown ids are passed over. */
static void
gossip_do_read(struct gossip *g, struct node_msg *req)
{
	char *save = NULL, *id;

	for (id = req->text != NULL ? strtok_r(req->text, " ", &save) : NULL;
	    id != NULL; id = strtok_r(NULL, " ", &save)) {
		struct frame_msg m;
		uint64_t v;
		size_t i;

		if (!sec_msgid_valid(id, &v))
			continue;
		for (i = 0; i < READ_SLOTS; i++)
			if (g->read_sent[i] == v + 1)
				break;
		if (i < READ_SLOTS)
			continue;
		memset(&m, 0, sizeof(m));
		if (store_get(g->env.store, id, &m) == -1)
			continue;
		if (memcmp(m.from, g->env.me->pk, 32) != 0) {
			gossip_ack(g, &m, ACK_READ);
			g->read_sent[g->read_next++ % READ_SLOTS] = v + 1;
		}
		frame_msg_clear(&m);
	}
	g->env.emit(g->env.arg, req);
}

void
gossip_request(struct gossip *g, struct node_msg *m)
{
	switch (m->kind) {
	case NODE_SEND:
		gossip_do_send(g, m);
		break;
	case NODE_STATUS:
		gossip_do_status(g, m);
		break;
	case NODE_HISTORY:
		gossip_do_history(g, m);
		break;
	case NODE_READ:
		gossip_do_read(g, m);
		break;
	default:
		gossip_fail(g, m, 400, "%s", "not a request");
		break;
	}
}

/* Frames received. */

static void
gossip_on_msg(struct gossip *g, struct link *l, struct frame_msg *m)
{
	struct member *author;
	struct frame f;
	int r;

	if (memcmp(m->from, g->env.me->pk, 32) == 0)
		return;       /* our own, come back round */
	if (store_has(g->env.store, m->id)) {
		/* The author sending again means our ack was lost. */
		if (memcmp(l->m->id, m->from, 32) == 0)
			gossip_ack(g, m, ACK_DELIVERED);
		return;
	}
	if ((r = store_add_msg(g->env.store, m)) != 1) {
		if (r == -1)
			log_msg(LOG_ERROR, "cannot store a message: %s",
			    strerror(errno));
		return;
	}
	upstream_put(g, m->id, l->m);
	/* A message just written is a sign of its author's life, and of a
	 * path to it through the member it came from. */
	if ((author = member_find(g, m->from)) != NULL && author->conn == NULL &&
	    m->ts + ALIVE_NS / 1000000u >= loop_wall_ms()) {
		member_alive(author);
		if (l->m != NULL && l->m != author)
			author->via = l->m;
		gossip_presence_check(g);
	}
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	f.u.msg = *m;
	gossip_flood(g, &f, l->m);
	gossip_ack(g, m, ACK_DELIVERED);
	gossip_emit_json(g, NODE_EV_MESSAGE, gossip_msg_json(g, m));
}

static int
ack_seen(struct gossip *g, const struct frame_ack *a)
{
	uint8_t h[8];
	uint64_t v;

	crypto_generichash(h, sizeof(h), (const uint8_t *)a, offsetof(struct
	    frame_ack, ts), NULL, 0);
	memcpy(&v, h, sizeof(v));
	for (size_t i = 0; i < ACK_SEEN_SLOTS; i++)
		if (g->ack_seen[i] == v)
			return 1;
	g->ack_seen[g->ack_seen_next++ % ACK_SEEN_SLOTS] = v;
	return 0;
}

static void
gossip_on_ack(struct gossip *g, struct link *l, struct frame *f)
{
	struct frame_ack *a = &f->u.ack;
	struct frame_msg m;
	struct outmsg *o;
	struct member *by;
	cJSON *j;
	char nb[16], id[PAPO_ID_LEN + 1];

	if (ack_seen(g, a))
		return;
	memset(&m, 0, sizeof(m));
	if (store_get(g->env.store, a->id, &m) == -1)
		return;       /* a message we never saw: nowhere to route it */
	if (memcmp(m.from, g->env.me->pk, 32) != 0) {
		gossip_route_ack(g, f, m.from, l->m);
		frame_msg_clear(&m);
		return;
	}
	frame_msg_clear(&m);
	if ((by = member_find(g, a->by)) == NULL)
		return;
	if (store_add_ack(g->env.store, a) == -1)
		log_msg(LOG_WARN, "cannot store a receipt: %s", strerror(errno));
	if (a->state == ACK_DELIVERED && (o = outmsg_find(g, a->id)) != NULL)
		outmsg_acked(g, o, by);
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "id", a->id);
	cJSON_AddStringToObject(j, "by", member_name(by, nb));
	sec_id_format(a->by, id);
	cJSON_AddStringToObject(j, "by_id", id);
	cJSON_AddStringToObject(j, "state",
	    a->state == ACK_READ ? "read" : "delivered");
	cJSON_AddNumberToObject(j, "ts", (double)a->ts);
	gossip_emit_json(g, NODE_EV_RECEIPT, j);
}

static void
gossip_sync_request(struct gossip *g, struct member *to)
{
	struct frame f;
	struct frame_msg *v;
	long n;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_SYNC;
	if ((v = calloc(FRAME_SYNC_MAX, sizeof(*v))) == NULL)
		return;
	n = store_history(g->env.store, FRAME_SYNC_MAX, 0, 0, v);
	if (n >= 0 && (f.u.sync.have = calloc((size_t)n + 1,
	    sizeof(*f.u.sync.have))) != NULL) {
		struct store_stats st;

		store_stats(g->env.store, &st);
		/* With all of our history in the list, ask from the start;
		 * else from the oldest message listed. */
		f.u.sync.since = UINT64_MAX;
		for (long i = 0; i < n; i++) {
			strcpy(f.u.sync.have[i], v[i].id);
			if (v[i].ts < f.u.sync.since)
				f.u.sync.since = v[i].ts;
		}
		if (st.msgs <= FRAME_SYNC_MAX || n == 0)
			f.u.sync.since = 0;
		f.u.sync.n = (size_t)n;
		gossip_send_frame(g, to, &f);
	}
	for (long i = 0; i < n; i++)
		frame_msg_clear(&v[i]);
	free(v);
	frame_clear(&f);
}

static int
id_cmp(const void *a, const void *b)
{
	return memcmp(a, b, PAPO_MSGID_LEN);
}

static void
gossip_on_sync(struct gossip *g, struct link *l, struct frame_sync *s)
{
	struct frame_msg *v;
	struct frame f;
	long n;
	size_t sent = 0;

	if ((v = calloc(SYNC_SEND_MAX, sizeof(*v))) == NULL)
		return;
	if (s->n > 0)
		qsort(s->have, s->n, sizeof(*s->have), id_cmp);
	n = store_history(g->env.store, SYNC_SEND_MAX, 0, s->since, v);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	for (long i = 0; i < n; i++) {
		if (s->n == 0 || bsearch(v[i].id, s->have, s->n,
		    sizeof(*s->have), id_cmp) == NULL) {
			f.u.msg = v[i];
			if (gossip_send_frame(g, l->m, &f) == 0)
				sent++;
		}
		frame_msg_clear(&v[i]);
	}
	free(v);
	if (sent > 0)
		log_msg(LOG_INFO, "sent %zu messages to %s, who missed them",
		    sent, l->m->name);
}

/*
 * Makes room for a new neighbour in a large room: one other neighbour,
 * picked at random among those we could dial again, is let go and not
 * dialled again for a while.  A member we cannot dial (behind a NAT) is
 * never let go: its connection to us may be its only way into the room,
 * so a room with a single reachable member holds together however large.
 */
static int
member_evictable(const struct member *m, const struct member *keep)
{
	return m->conn != NULL && m != keep && m->open;
}

static void
gossip_evict(struct gossip *g, const struct member *keep)
{
	size_t n = 0, k;

	if (gossip_small(g) || gossip_active(g) <= ACTIVE_MAX)
		return;
	for (size_t i = 0; i < g->nmembers; i++)
		n += member_evictable(g->members[i], keep);
	if (n == 0)
		return;
	k = randombytes_uniform((uint32_t)n);
	for (size_t i = 0; i < g->nmembers; i++) {
		struct member *m = g->members[i];

		if (!member_evictable(m, keep) || k-- > 0)
			continue;
		log_msg(LOG_DEBUG, "letting neighbour %s go", m->name);
		quic_close(m->conn);
		m->next_dial = loop_now_ns() + EVICTED_REDIAL_NS;
		return;
	}
}

/* A member whose hello arrived on l: keep one connection per pair. */
static void
gossip_on_hello(struct gossip *g, struct link *l, const struct frame_hello *h)
{
	const uint8_t *peer = quic_peer(l->qc);
	struct member *m;
	struct store_stats st;
	uint8_t digest[32];
	int fresh, punched;

	if (memcmp(h->id, peer, 32) != 0 || h->version != l->version) {
		log_msg(LOG_WARN, "a peer's hello does not match its key or "
		    "the protocol version agreed: closing");
		quic_close(l->qc);
		return;
	}
	fresh = member_find(g, peer) == NULL;
	if ((m = member_add(g, peer)) == NULL) {
		quic_close(l->qc);
		return;
	}
	if (m->conn != NULL && m->conn != l->qc) {
		/* Both dialled at once: keep the connection opened by the
		 * member with the smaller id, so both ends keep the same. */
		int mine_new = quic_is_client(l->qc);
		int mine_old = quic_is_client(m->conn);
		int me_smaller = memcmp(g->env.me->pk, peer, 32) < 0;

		log_msg(LOG_DEBUG, "two connections with %s (new mine %d, old "
		    "mine %d, me smaller %d)", h->name, mine_new, mine_old,
		    me_smaller);
		if (mine_new != mine_old && mine_new == me_smaller) {
			struct quic_conn *old = m->conn;

			m->conn = l->qc;
			quic_close(old);
		} else {
			quic_close(l->qc);
			return;
		}
	}
	l->m = m;
	/* What a connection is (punched, on the LAN) is said when it
	 * greets first; the greetings every 30 s keep it. */
	punched = punch_done(g->punch, peer);
	if (m->conn != l->qc) {
		m->punched = punched;
		/* A LAN: a private address on one of our links (two public
		 * hosts on one switch are simply direct). */
		m->lan = addr_is_private(quic_remote(l->qc)) &&
		    addr_on_link(quic_remote(l->qc));
		m->open |= (quic_is_client(l->qc) && !punched) ||
		    addr_in(quic_remote(l->qc), h->addr, h->naddr);
	}
	m->conn = l->qc;
	if (h->version >= 2 && reach_observe(&g->reach, peer, &h->obs))
		gossip_addrs_changed(g);
	strcpy(m->name, h->name);
	strcpy(m->about, h->about);
	if (h->naddr > 0) {
		m->naddr = h->naddr;
		memcpy(m->addr, h->addr, h->naddr * sizeof(h->addr[0]));
	}
	m->left = 0;
	member_alive(m);
	m->backoff_ms = 0;
	m->next_dial = 0;
	gossip_save_later(g);
	gossip_evict(g, m);
	gossip_presence_check(g);
	/* Tell it whom we know, and tell the others about it if new. */
	gossip_peers(g, m, NULL);
	if (fresh)
		for (size_t i = 0; i < g->nmembers; i++)
			if (g->members[i] != m && g->members[i]->conn != NULL)
				gossip_peers(g, g->members[i], m);
	store_stats(g->env.store, &st);
	store_digest(g->env.store, digest);
	if (h->msgs != st.msgs || memcmp(h->digest, digest, 32) != 0)
		gossip_sync_request(g, m);
	for (struct outmsg *o = g->outbox; o != NULL; o = o->next)
		outmsg_resend(g, o, m);
}

/*
 * Members we hear of.  An entry newer (by its member's own clock) than
 * the last we took from that member is news: it counts as a sign of life
 * and is passed on to our other neighbours, once, which is how presence
 * and addresses cross a room where not everyone is connected.
 */
static void
gossip_on_peers(struct gossip *g, struct link *l, const struct frame_peers *ps)
{
	struct frame fwd;
	struct frame_peer v[FRAME_PEERS_MAX];
	int changed = 0;

	memset(&fwd, 0, sizeof(fwd));
	fwd.type = FRAME_PEERS;
	fwd.u.peers.v = v;
	for (size_t i = 0; i < ps->n; i++) {
		const struct frame_peer *p = &ps->v[i];
		int fresh = member_find(g, p->id) == NULL;
		struct member *m;

		if ((m = member_add(g, p->id)) == NULL)
			continue;
		if (!fresh && p->seen <= m->announced)
			continue;
		m->announced = p->seen;
		if (m->conn == NULL || fresh) {
			strcpy(m->name, p->name);
			strcpy(m->about, p->about);
			if (p->naddr > 0) {
				m->naddr = p->naddr;
				memcpy(m->addr, p->addr, p->naddr * sizeof(p->addr[0]));
			}
			if (m->conn == NULL && m->next_dial == 0)
				m->next_dial = loop_now_ns();
		}
		if (p->seen > m->left_at)
			m->left = 0;
		/* News of an old announcement (a member we had not heard of
		 * yet) is not life: clocks agree to well within the window. */
		if (p->seen + ALIVE_NS / 1000000u >= loop_wall_ms()) {
			member_alive(m);
			if (l->m != m)
				m->via = l->m;
		}
		v[fwd.u.peers.n++] = *p;
		changed = 1;
	}
	if (fwd.u.peers.n > 0)
		gossip_flood(g, &fwd, l->m);
	if (changed) {
		gossip_save_later(g);
		gossip_plan_dials(g);
		gossip_presence_check(g);
		gossip_punch_check(g);
	}
}

/* Floods this member's own entry: the announcement that shows life. */
static void
gossip_announce(void *arg)
{
	struct gossip *g = arg;
	struct frame_peer me;
	struct frame f;

	memset(&me, 0, sizeof(me));
	memcpy(me.id, g->env.me->pk, 32);
	strcpy(me.name, g->env.room->me);
	strcpy(me.about, g->env.room->about);
	me.seen = loop_wall_ms();
	me.naddr = reach_addrs(&g->reach, me.addr, PAPO_ADDR_MAX);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_PEERS;
	f.u.peers.n = 1;
	f.u.peers.v = &me;
	gossip_flood(g, &f, NULL);
	loop_timer_set(g->announce_timer, loop_now_ns() + ANNOUNCE_NS);
	gossip_punch_check(g);
}

/* A member leaving: offline at once, and the news passed on once. */
/* The protocol version of m's connection, 0 when it has none. */
static unsigned
member_version(const struct member *m)
{
	const struct link *l = m->conn != NULL ? quic_data(m->conn) : NULL;

	return l != NULL ? l->version : 0;
}

/*
 * Punching (punch.h).  A member online through others but without a
 * connection of ours, whose addresses failed us, is punched to through a
 * member connected to both.  Only in a small room: in a large one most
 * members are not meant to be neighbours.
 */
static void
gossip_punch_check(struct gossip *g)
{
	if (!gossip_small(g))
		return;
	for (size_t i = 0; i < g->nmembers; i++) {
		struct member *m = g->members[i];

		if (m->conn == NULL && member_online(g, m) && m->backoff_ms > 0 &&
		    m->via != NULL && member_version(m->via) >= 2)
			punch_want(g->punch, m->id);
	}
}

/* Carries a punch frame towards its addressee: straight to it when
 * connected, else through the member news of it came by, else through
 * every neighbour of version 2. */
static int
gossip_punch_relay(void *arg, const struct frame *f)
{
	struct gossip *g = arg;
	struct member *t = member_find(g, f->u.punch.to);
	int sent = 0;

	if (t == NULL)
		return -1;
	if (member_version(t) >= 2) {
		gossip_send_frame(g, t, f);
		return 0;
	}
	if (t->via != NULL && member_version(t->via) >= 2) {
		gossip_send_frame(g, t->via, f);
		return 0;
	}
	for (size_t i = 0; i < g->nmembers; i++)
		if (member_version(g->members[i]) >= 2) {
			gossip_send_frame(g, g->members[i], f);
			sent = 1;
		}
	return sent ? 0 : -1;
}

static void
gossip_punch_dial(void *arg, const uint8_t id[32], const struct addr *a,
    size_t n)
{
	struct gossip *g = arg;
	struct member *m = member_find(g, id);

	if (m != NULL && m->conn == NULL)
		gossip_dial_at(g, m, a, n);
}

static size_t
gossip_punch_addrs(void *arg, struct addr *out, size_t max)
{
	return reach_punch_addrs(&((struct gossip *)arg)->reach, out, max);
}

/* A punch frame: ours to act on, or one to carry to a member we are
 * connected to (never back where it came from). */
static void
gossip_on_punch(struct gossip *g, struct link *l, const struct frame_punch *p)
{
	struct member *to;
	struct frame f;

	if (memcmp(p->to, g->env.me->pk, 32) == 0) {
		if (member_find(g, p->from) != NULL)
			punch_frame(g->punch, p);
		return;
	}
	if ((to = member_find(g, p->to)) != NULL && to != l->m &&
	    member_version(to) >= 2) {
		memset(&f, 0, sizeof(f));
		f.type = FRAME_PUNCH;
		f.u.punch = *p;
		gossip_send_frame(g, to, &f);
	}
}

/* LAN discovery (beacon.h): beacons go out while a member we know is
 * not connected; one heard is dialled at once (every 5 s at most),
 * whether we knew of that member or not: it holds the room key. */
static int
gossip_beacon_wanted(void *arg)
{
	struct gossip *g = arg;

	for (size_t i = 0; i < g->nmembers; i++)
		if (g->members[i]->conn == NULL && !g->members[i]->left)
			return 1;
	return 0;
}

static void
gossip_beacon_heard(void *arg, const uint8_t id[32], const struct addr *at)
{
	struct gossip *g = arg;
	struct member *m = member_add(g, id);
	uint64_t now = loop_now_ns();

	if (m == NULL || m->conn != NULL ||
	    (m->beacon_dial != 0 && now < m->beacon_dial + BEACON_EVERY_NS))
		return;
	m->beacon_dial = now;
	/* Its LAN address first among those we try. */
	if (!addr_in(at, m->addr, m->naddr)) {
		if (m->naddr == PAPO_ADDR_MAX)
			m->naddr--;
		memmove(m->addr + 1, m->addr, m->naddr * sizeof(m->addr[0]));
		m->addr[0] = *at;
		m->naddr++;
	}
	log_msg(LOG_DEBUG, "a beacon of %s: dialling it on the LAN", m->idtext);
	gossip_dial_at(g, m, at, 1);
}

static int
gossip_datagram(void *arg, const struct addr *from, const uint8_t *p,
    size_t n)
{
	return punch_datagram(((struct gossip *)arg)->punch, from, p, n);
}

static void
gossip_on_bye(struct gossip *g, struct link *l, const struct frame_bye *b)
{
	struct member *m = member_find(g, b->id);
	struct frame f;

	if (m == NULL)
		return;
	if (!m->left) {
		m->left = 1;
		m->left_at = m->announced;
		m->seen = loop_wall_ms();
		memset(&f, 0, sizeof(f));
		f.type = FRAME_BYE;
		memcpy(f.u.bye.id, b->id, 32);
		gossip_flood(g, &f, l->m);
		gossip_presence_check(g);
	}
	if (m == l->m && m->conn == l->qc) {
		m->conn = NULL;
		/* It left on purpose: try again later, not at once. */
		m->backoff_ms = DIAL_BACKOFF_MAX_MS / 4;
		m->next_dial = loop_now_ns() + (uint64_t)m->backoff_ms * 1000000u;
		l->m = NULL;
		quic_close(l->qc);
	}
}

/* QUIC callbacks. */

static void
gossip_open(void *arg, struct quic_conn *qc)
{
	struct gossip *g = arg;
	struct link *l = quic_data(qc);

	if (l == NULL) {
		if ((l = calloc(1, sizeof(*l))) == NULL) {
			quic_close(qc);
			return;
		}
		l->qc = qc;
		quic_set_data(qc, l);
	}
	l->version = quic_version(qc);
	gossip_hello(g, l);
}

static void
gossip_frame(void *arg, struct quic_conn *qc, const uint8_t *p, size_t n)
{
	struct gossip *g = arg;
	struct link *l = quic_data(qc);
	struct frame f;
	enum frame_err e;

	if (l == NULL)
		return;
	if ((e = frame_open(g->env.keys, p, n, l->version >= 2 ? FRAME_V2 : 0,
	    &f)) != FRAME_OK) {
		g->bad_frames++;
		log_msg(LOG_WARN, "dropped a frame from %s: %s",
		    l->m != NULL ? l->m->name : "a peer not yet greeted",
		    frame_strerror(e));
		/* A member of this room greets first; anything else that
		 * does not open is not one of us. */
		if (l->m == NULL || ++l->bad >= BAD_FRAMES_MAX)
			quic_close(qc);
		return;
	}
	if (l->m == NULL && f.type != FRAME_HELLO) {
		frame_clear(&f);
		quic_close(qc);
		return;
	}
	if (l->m != NULL)
		l->m->seen = loop_wall_ms();
	switch (f.type) {
	case FRAME_HELLO:
		gossip_on_hello(g, l, &f.u.hello);
		break;
	case FRAME_MSG:
		gossip_on_msg(g, l, &f.u.msg);
		break;
	case FRAME_ACK:
		gossip_on_ack(g, l, &f);
		break;
	case FRAME_PEERS:
		gossip_on_peers(g, l, &f.u.peers);
		break;
	case FRAME_SYNC:
		gossip_on_sync(g, l, &f.u.sync);
		break;
	case FRAME_BYE:
		gossip_on_bye(g, l, &f.u.bye);
		break;
	case FRAME_PUNCH:
		gossip_on_punch(g, l, &f.u.punch);
		break;
	}
	frame_clear(&f);
}

static void
gossip_closed(void *arg, struct quic_conn *qc)
{
	struct gossip *g = arg;
	struct link *l = quic_data(qc);
	struct member *m;

	if (l == NULL)
		return;
	log_msg(LOG_DEBUG, "connection %s %s closed", l->m != NULL ?
	    l->m->name : "(not greeted)", quic_is_client(qc) ? "out" : "in");
	if ((m = l->m) != NULL && m->conn == qc) {
		m->conn = NULL;
		m->punched = 0;
		if (reach_forget(&g->reach, m->id))
			gossip_addrs_changed(g);
		/* In a small room every member is a neighbour: a connection
		 * lost without a new one means the member is gone. */
		if (gossip_small(g))
			m->alive_until = 0;
		if (m->next_dial == 0)
			m->next_dial = loop_now_ns() + 1000000000u;
		gossip_presence_check(g);
	}
	if (l->target != NULL) {
		m = l->target;
		m->ndial--;
		if (m->ndial == 0 && m->conn == NULL) {
			/* Every address failed: wait longer each time. */
			m->backoff_ms = m->backoff_ms == 0 ? DIAL_BACKOFF_MIN_MS :
			    m->backoff_ms * 2;
			if (m->backoff_ms > DIAL_BACKOFF_MAX_MS)
				m->backoff_ms = DIAL_BACKOFF_MAX_MS;
			if (m->next_dial == 0 || m->next_dial < loop_now_ns())
				m->next_dial = loop_now_ns() +
				    (uint64_t)m->backoff_ms * 1000000u;
		}
	}
	free(l);
	gossip_plan_dials(g);
	gossip_punch_check(g);
}

/* Dialling: every member not connected, on all its addresses at once;
 * the first to answer is kept, the others closed once it greets. */

/* Whether a member is one to dial now (when = 0) or later. */
static int
member_dialable(const struct member *m)
{
	return m->conn == NULL && m->ndial == 0 && m->naddr > 0 &&
	    m->next_dial != 0;
}

/* How many more neighbours to dial: all in a small room, else up to
 * ACTIVE_DIAL counting those connected and being dialled. */
static size_t
gossip_dial_room(const struct gossip *g)
{
	size_t busy = 0;

	if (gossip_small(g))
		return GOSSIP_MEMBERS_MAX;
	for (size_t i = 0; i < g->nmembers; i++)
		busy += g->members[i]->conn != NULL || g->members[i]->ndial > 0;
	return busy >= ACTIVE_DIAL ? 0 : ACTIVE_DIAL - busy;
}

static void
gossip_plan_dials(struct gossip *g)
{
	uint64_t next = 0;

	if (gossip_dial_room(g) > 0)
		for (size_t i = 0; i < g->nmembers; i++) {
			struct member *m = g->members[i];

			if (member_dialable(m) && (next == 0 || m->next_dial < next))
				next = m->next_dial;
		}
	loop_timer_set(g->dial_timer, next);
}

/* Dials m at each of n addresses at once. */
static void
gossip_dial_at(struct gossip *g, struct member *m, const struct addr *a,
    size_t n)
{
	for (size_t j = 0; j < n; j++) {
		struct link *l = calloc(1, sizeof(*l));

		if (l == NULL)
			break;
		if ((l->qc = quic_dial(g->quic, &a[j], m->id)) == NULL) {
			free(l);
			continue;
		}
		l->target = m;
		quic_set_data(l->qc, l);
		m->ndial++;
	}
}

static void
gossip_dial_member(struct gossip *g, struct member *m)
{
	m->next_dial = 0;
	gossip_dial_at(g, m, m->addr, m->naddr);
	if (m->ndial == 0) {
		m->backoff_ms = DIAL_BACKOFF_MAX_MS;
		m->next_dial = loop_now_ns() + (uint64_t)m->backoff_ms * 1000000u;
	}
}

/*
 * Dials the members due: all of them in a small room; in a large one as
 * many as make up ACTIVE_DIAL neighbours: members known to take our
 * connections and online first, then others online, then the rest, each
 * pass from a random starting point so the mesh comes out random.  A
 * member behind a NAT so finds the members it can reach before wasting
 * its dials on those it cannot.
 */
static void
gossip_dial(void *arg)
{
	struct gossip *g = arg;
	uint64_t now = loop_now_ns();
	size_t room = gossip_dial_room(g);
	size_t start = g->nmembers ? randombytes_uniform((uint32_t)g->nmembers) : 0;

	for (int pass = 0; pass < 3 && room > 0; pass++)
		for (size_t k = 0; k < g->nmembers && room > 0; k++) {
			struct member *m = g->members[(start + k) % g->nmembers];

			if (!member_dialable(m) || m->next_dial > now ||
			    (pass < 2 && !member_online(g, m)) ||
			    (pass == 0 && !m->open))
				continue;
			gossip_dial_member(g, m);
			room--;
		}
	gossip_plan_dials(g);
}

/* Start and stop. */

static void
gossip_load_outbox(struct gossip *g)
{
	const char *id;

	for (size_t i = 0; (id = store_outbox_at(g->env.store, i)) != NULL; i++) {
		struct frame_msg m;
		struct outmsg *o;
		struct member *to;

		memset(&m, 0, sizeof(m));
		if (store_get(g->env.store, id, &m) == -1) {
			log_msg(LOG_WARN, "outbox message %s is not in the log", id);
			continue;
		}
		/* Whom it waited for died with the process: an addressee
		 * still waits for its addressee; otherwise the first member
		 * to store it is enough, and sync takes it further. */
		if ((o = outmsg_new(g, id)) != NULL) {
			if (m.has_to && (to = member_add(g, m.to)) != NULL)
				o->wait[o->nwait++] = to;
			o->any = o->nwait == 0;
		}
		frame_msg_clear(&m);
	}
}

struct gossip *
gossip_new(char err[PAPO_ERR_LEN], const struct gossip_env *env)
{
	static const struct quic_cbs cbs = {
		gossip_open, gossip_frame, gossip_closed, gossip_datagram
	};
	struct punch_env pe;
	struct gossip *g = calloc(1, sizeof(*g));
	const struct room *r = env->room;
	struct addr local[PAPO_ADDR_MAX];
	int n;

	if (g == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	g->env = *env;
	if ((g->quic = quic_new(err, env->loop, &env->listen, env->me,
	    env->version, &cbs, g)) == NULL)
		goto fail;
	quic_local(g->quic, &g->bound);
	memset(&pe, 0, sizeof(pe));
	pe.loop = env->loop;
	pe.quic = g->quic;
	pe.keys = env->keys;
	pe.me = env->me;
	pe.arg = g;
	pe.relay = gossip_punch_relay;
	pe.dial = gossip_punch_dial;
	pe.addrs = gossip_punch_addrs;
	if ((g->punch = punch_new(&pe)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	if (env->lan) {
		struct beacon_env be;
		char why[PAPO_ERR_LEN];

		memset(&be, 0, sizeof(be));
		be.loop = env->loop;
		be.keys = env->keys;
		be.me = env->me;
		be.port = g->bound.port;
		be.arg = g;
		be.wanted = gossip_beacon_wanted;
		be.heard = gossip_beacon_heard;
		if ((g->beacon = beacon_new(why, &be)) == NULL)
			log_msg(LOG_WARN, "LAN discovery is off: %s", why);
	}
	n = addr_local(&g->bound, local, PAPO_ADDR_MAX);
	reach_init(&g->reach, env->advertise, env->nadvertise, local,
	    n > 0 ? (size_t)n : 0);
	if ((g->dial_timer = loop_timer_new(env->loop, gossip_dial, g)) == NULL ||
	    (g->retry_timer = loop_timer_new(env->loop, gossip_retry, g)) == NULL ||
	    (g->presence_timer = loop_timer_new(env->loop, gossip_presence_timer,
	    g)) == NULL ||
	    (g->announce_timer = loop_timer_new(env->loop, gossip_announce,
	    g)) == NULL ||
	    (g->save_timer = loop_timer_new(env->loop, gossip_save_timer,
	    g)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	gossip_load_peers(g);
	if (r->has_inviter) {
		struct member *m = member_add(g, r->inviter);

		/* The invite's addresses are a last resort next to what the
		 * members told us since. */
		if (m != NULL && m->naddr == 0) {
			m->naddr = r->nboot;
			memcpy(m->addr, r->boot, r->nboot * sizeof(r->boot[0]));
		}
	}
	for (size_t i = 0; i < g->nmembers; i++)
		g->members[i]->next_dial = loop_now_ns();
	gossip_load_outbox(g);
	gossip_plan_dials(g);
	loop_timer_set(g->retry_timer, loop_now_ns() + OUTBOX_RETRY_NS);
	loop_timer_set(g->announce_timer, loop_now_ns() + ANNOUNCE_NS);
	return g;
fail:
	gossip_free(g);
	return NULL;
}

void
gossip_local(const struct gossip *g, struct addr *bound)
{
	*bound = g->bound;
}

size_t
gossip_addrs(const struct gossip *g, struct addr *out, size_t max)
{
	return reach_addrs(&g->reach, out, max);
}

void
gossip_free(struct gossip *g)
{
	struct frame f;

	if (g == NULL)
		return;
	if (g->quic != NULL) {
		memset(&f, 0, sizeof(f));
		f.type = FRAME_BYE;
		memcpy(f.u.bye.id, g->env.me->pk, 32);
		gossip_flood(g, &f, NULL);
	}
	while (g->outbox != NULL) {
		if (g->outbox->req != NULL) {
			g->outbox->req->code = 503;
			snprintf(g->outbox->req->err, sizeof(g->outbox->req->err),
			    "the daemon is stopping; message %s stays in the "
			    "outbox", g->outbox->id);
			g->env.emit(g->env.arg, g->outbox->req);
			g->outbox->req = NULL;
		}
		outmsg_free(g, g->outbox);
	}
	if (g->nmembers > 0)
		gossip_save_peers(g);
	/* quic_free writes the byes queued above, then closes. */
	quic_free(g->quic);
	for (size_t i = 0; i < g->nmembers; i++)
		free(g->members[i]);
	free(g->members);
	loop_timer_free(g->dial_timer);
	loop_timer_free(g->retry_timer);
	loop_timer_free(g->presence_timer);
	loop_timer_free(g->announce_timer);
	loop_timer_free(g->save_timer);
	punch_free(g->punch);
	beacon_free(g->beacon);
	free(g);
}
