/*
 * member.c: the members of the room, on the node thread (member.h;
 * docs/PROTOCOL.md, "Gossip").  It keeps the member table, sends to
 * members, announces this member, works out who is online and tells the
 * program when that changes (presence), dials and
 * redials members and, in a room above 8, picks the neighbours and lets
 * one go to make room, and keeps peers.json so that a restart finds the
 * members again.  It never blocks: the only waits are loop timers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/member.h"

#define FULL_MESH_MAX 8                   /* members (with us) all connected */
#define ACTIVE_DIAL 4                     /* neighbours we dial, above that */
#define ACTIVE_MAX 8                      /* neighbours we keep, above that */
#define EVICTED_REDIAL_NS (20ull * NS_PER_S)
#define PEERS_SAVE_DELAY_NS (2ull * NS_PER_S)

/* The table and the timers it arms. */
struct members {
	struct member **v;
	size_t n;
	struct loop_timer *dial_timer, *presence_timer;
	struct loop_timer *punch_timer;   /* dials unanswered long enough */
	struct loop_timer *announce_timer;
	struct loop_timer *save_timer;
	int save_pending;           /* save_timer armed (members_save_later) */
	uint64_t own_seq;           /* our last announcement's or bye's
	                             * counter: wall ms, never going back */
};

size_t
members_n(const struct room *g)
{
	return g->members != NULL ? g->members->n : 0;
}

struct member *
member_at(const struct room *g, size_t i)
{
	return g->members->v[i];
}

/* The member table. */

struct member *
member_find(const struct room *g, const uint8_t id[PAPO_KEY_LEN])
{
	for (size_t i = 0; i < g->members->n; i++)
		if (memcmp(g->members->v[i]->id, id, PAPO_KEY_LEN) == 0)
			return g->members->v[i];
	return NULL;
}

struct member *
member_add(struct room *g, const uint8_t id[PAPO_KEY_LEN])
{
	struct member **v, *m;

	if (memcmp(id, g->env.me->pk, PAPO_KEY_LEN) == 0)
		return NULL;
	if ((m = member_find(g, id)) != NULL)
		return m;
	if (g->members->n == ROOM_MEMBERS_MAX)
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	if ((v = realloc(g->members->v, (g->members->n + 1) * sizeof(*v))) == NULL) {
		free(m);
		return NULL;
	}
	memcpy(m->id, id, PAPO_KEY_LEN);
	sec_id_format(id, m->idtext);
	m->removed = keyring_gone(g->keyring) ||
	    keyring_removed(g->keyring, id) != NULL;
	g->members->v = v;
	g->members->v[g->members->n++] = m;
	return m;
}

/* A member's name for people: its name, or the start of its id while we
 * have not heard it yet. */
const char *
member_name(const struct member *m, char buf[16])
{
	if (m->name[0] != '\0')
		return m->name;
	snprintf(buf, 16, "%.8s…", m->idtext);
	return buf;
}

/* Finds a member by name or id; NULL when none or ambiguous. */
struct member *
member_lookup(const struct room *g, const char *who, int *ambiguous)
{
	struct member *found = NULL;

	*ambiguous = 0;
	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];

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

/* The protocol version of m's connection, 0 when it has none. */
unsigned
member_version(const struct member *m)
{
	const struct link *l = m->conn != NULL ? quic_data(m->conn) : NULL;

	return l != NULL ? l->version : 0;
}

int
member_relayed(const struct room *g, const struct member *m)
{
	return m->conn != NULL && relay_both_ends(g->net, m->conn);
}

size_t
member_dials(const struct member *m)
{
	const struct link *l = m->conn != NULL ? quic_data(m->conn) : NULL;

	/* ndial counts a dial until its connection closes. */
	return (size_t)m->ndial - (l != NULL && l->target == m);
}

/*
 * Presence: a member is online while it has shown life lately: its
 * hello, or an announcement of itself that it floods every 10 s and that
 * reaches us directly or through other members; bye makes it offline at
 * once.  In a small room, where every member is a neighbour, losing the
 * connection also means it is gone; in a large one a connection may close
 * because a neighbour made room for another.
 */
int
members_small(const struct room *g)
{
	return g->members->n + 1 <= FULL_MESH_MAX;
}

static size_t
members_active(const struct room *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->members->n; i++)
		n += g->members->v[i]->conn != NULL;
	return n;
}

/*
 * Online means reachable now: by our own connection, or, while it shows
 * life, through the member its news came by, if we are connected to that
 * one.  In a small room (a full mesh) that is the whole story, so a
 * member whose last path went shows offline at once; in a large one a
 * member is often reached over several hops, and life shown lately is
 * enough while we have any neighbour.
 */
int
member_online(const struct room *g, const struct member *m)
{
	/* A removed member is refused everywhere: whatever life others
	 * pass on of it, it is reached by no one. */
	if (m->left || m->removed || m->refused)
		return 0;
	if (m->conn != NULL)
		return 1;
	if (m->alive_until <= loop_now_ns())
		return 0;
	if (m->via != NULL && m->via->conn != NULL)
		return 1;
	return !members_small(g) && members_active(g) > 0;
}

void
member_alive(struct member *m)
{
	m->alive_until = loop_now_ns() + (m->alive_ns != 0 ? m->alive_ns :
	    ALIVE_NS);
	m->seen = loop_wall_ms();
}

void
member_announced(const struct room *g, struct member *m)
{
	uint64_t now = loop_now_ns();
	/* In a room no longer small, members announce every ANNOUNCE_NS:
	 * gaps measured while it was small (3 s) would show a member
	 * offline before its first slower announcement comes. */
	uint64_t floor = members_small(g) ? ALIVE_MIN_NS :
	    ANNOUNCE_NS * 5 / 2 + 500000000u;

	/* Two and a half periods and a little, of the longer of its last
	 * two, once two are known: one announcement late or slowed by loss
	 * recovery is no reason to show it offline.  One sooner than any
	 * period (a new connection's, an address that changed) is life but
	 * no period. */
	if (m->ann_at != 0 && now < m->ann_at + ANNOUNCE_FAST_NS * 2 / 3)
		return;
	if (m->ann_at != 0) {
		uint64_t gap = now - m->ann_at;
		uint64_t w = (gap > m->ann_gap ? gap : m->ann_gap) * 5 / 2 +
		    500000000u;

		if (m->ann_gap != 0)
			m->alive_ns = w < floor ? floor :
			    w > ALIVE_NS ? ALIVE_NS : w;
		m->ann_gap = gap;
	}
	m->ann_at = now;
}

static void
member_presence(struct room *g, struct member *m)
{
	cJSON *o = cJSON_CreateObject();
	char nb[16];

	cJSON_AddStringToObject(o, "id", m->idtext);
	cJSON_AddStringToObject(o, "name", member_name(m, nb));
	cJSON_AddBoolToObject(o, "online", m->shown_online);
	cJSON_AddNumberToObject(o, "last_seen", (double)m->seen);
	room_emit_json(g, NODE_EV_PRESENCE, o);
	log_msg(LOG_INFO, "%s is %s", member_name(m, nb),
	    m->shown_online ? "online" : "offline");
}

/* Tells the program of every change of presence, and wakes again when
 * the next member would fall silent. */
void
members_presence_check(struct room *g)
{
	uint64_t next = 0;

	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];
		int on = member_online(g, m);

		if (on != m->shown_online) {
			m->shown_online = on;
			member_presence(g, m);
			/* Back through others: what waits for it goes now,
			 * and our announcements go every 3 s from now
			 * (member.h, ANNOUNCE_FAST_NS), the first at once. */
			if (on && m->conn == NULL) {
				g->member_back(g, m);
				if (members_small(g))
					loop_timer_set(g->members->announce_timer, 1);
			}
		}
		/* Only life shown through others runs out: a member with a
		 * connection of ours stays online until it closes, whatever
		 * its alive_until (then long past, a timer that would fire
		 * at once, again and again). */
		if (on && m->conn == NULL && (next == 0 || m->alive_until < next))
			next = m->alive_until;
	}
	loop_timer_set(g->members->presence_timer, next);
}

static void
members_presence_timer(void *arg)
{
	members_presence_check(arg);
}

/* Dialling: every member not connected, on all its addresses at once;
 * the first to answer is kept, the others closed once it greets. */

/* Whether a member is one to dial now (when = 0) or later. */
static int
member_dialable(const struct member *m)
{
	return m->conn == NULL && m->ndial == 0 && m->naddr > 0 &&
	    m->next_dial != 0 && !m->removed && !m->refused;
}

/* Whether a member reached through the relay only is to be tried again
 * on its direct addresses, now or later: whatever the room for
 * neighbours, as it is one already. */
static int
member_redialable(const struct room *g, const struct member *m)
{
	return member_relayed(g, m) && member_dials(m) == 0 &&
	    m->next_dial != 0;
}

/* How many more neighbours to dial: all in a small room, else up to
 * ACTIVE_DIAL counting those connected and being dialled. */
static size_t
members_dial_room(const struct room *g)
{
	size_t busy = 0;

	if (members_small(g))
		return ROOM_MEMBERS_MAX;
	for (size_t i = 0; i < g->members->n; i++)
		busy += g->members->v[i]->conn != NULL || g->members->v[i]->ndial > 0;
	return busy >= ACTIVE_DIAL ? 0 : ACTIVE_DIAL - busy;
}

/*
 * Open neighbours (members that took a connection we started),
 * connected or being dialled.  Behind a NAT, with punched neighbours
 * only, we would be one lost punch away from leaving the room, and
 * nobody can dial us back: so in a large room, while we have none, an
 * open member is dialled whatever the room for neighbours, and the
 * last one is never let go.
 */
static size_t
members_open_held(const struct room *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->members->n; i++) {
		const struct member *m = g->members->v[i];

		n += m->open && (m->conn != NULL || m->ndial > 0);
	}
	return n;
}

/* Whether the room needs a way back: large, and no open neighbour. */
static int
members_need_way_back(const struct room *g)
{
	return !members_small(g) && members_open_held(g) == 0;
}

/* Whether m, in a room that needs a way back, is one to dial for it. */
static int
member_way_back(const struct member *m)
{
	return m->open && member_dialable(m);
}

void
members_plan_dials(struct room *g)
{
	size_t room = members_dial_room(g);
	int way_back = room == 0 && members_need_way_back(g);
	uint64_t next = 0;

	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];

		if (member_redialable(g, m) && (next == 0 || m->next_dial < next))
			next = m->next_dial;
	}
	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];

		if ((room > 0 ? member_dialable(m) :
		    way_back && member_way_back(m)) &&
		    (next == 0 || m->next_dial < next))
			next = m->next_dial;
	}
	loop_timer_set(g->members->dial_timer, next);
}

/*
 * Dials m at each of n addresses at once.  Members of a room use one TURN
 * server, so an address on its IP is another member's relayed address:
 * dialled through our relay (relay to relay on the one server), since
 * that member's allocation lets in the relay's own IP
 * (relay_permits) but may not know ours (behind a symmetric NAT we
 * advertise no public address), and so that both ends know the
 * connection for relayed (relay_both_ends).  Without an allocation
 * just now, or with a relayed connection to m already (a punch, a
 * redial), such addresses wait.  Everything else is dialled directly;
 * so are relayed addresses by a member with no relay set.
 */
void
member_dial_at(struct room *g, struct member *m, const struct addr *a,
    size_t n)
{
	member_dial_on(g, m, a, n, NULL);
}

void
member_dial_on(struct room *g, struct member *m, const struct addr *a,
    size_t n, struct quic_sock *sock)
{
	struct addr relayed;
	int has = g->net->turn != NULL && turn_relayed(g->net->turn, &relayed) == 0;

	for (size_t j = 0; j < n; j++) {
		int via = relay_on_server(g->net, &a[j]);
		struct link *l;

		/* No relay now, our own address, or one more way through
		 * the relay to a member we reach through it already. */
		if (via && (!has || addr_equal(&a[j], &relayed) ||
		    member_relayed(g, m)))
			continue;
		if ((l = calloc(1, sizeof(*l))) == NULL)
			break;
		if ((l->qc = quic_dial_on(g->net->quic, via ? NULL : sock, &a[j],
		    m->id, via)) == NULL) {
			free(l);
			continue;
		}
		l->target = m;
		l->g = g;
		quic_set_data(l->qc, l);
		if (m->ndial++ == 0)
			m->dial_since = loop_now_ns();
	}
	/* Dials left unanswered for a while are a reason to punch. */
	members_punch_check(g);
}

/* m's addresses, and where we last saw it if that is not one of them. */
static size_t
member_dial_addrs(const struct member *m, struct addr out[PAPO_ADDR_MAX + 1])
{
	size_t n = m->naddr;

	memcpy(out, m->addr, n * sizeof(*out));
	if (m->has_seen_at && !addr_in(&m->seen_at, out, n))
		out[n++] = m->seen_at;
	return n;
}

static void
member_dial(struct room *g, struct member *m)
{
	struct addr a[PAPO_ADDR_MAX + 1];

	m->next_dial = 0;
	member_dial_at(g, m, a, member_dial_addrs(m, a));
	if (m->ndial == 0) {
		m->backoff_ms = DIAL_BACKOFF_MAX_MS;
		m->next_dial = loop_now_ns() + (uint64_t)m->backoff_ms * NS_PER_MS;
	}
}

/* A member reached through the relay only: its other addresses again
 * (member_dial_at leaves out the relayed ones: that path it has), and
 * again in a while. */
static void
member_redial(struct room *g, struct member *m)
{
	member_dial_at(g, m, m->addr, m->naddr);
	m->next_dial = loop_now_ns() + RELAY_REDIAL_NS;
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
members_dial(void *arg)
{
	struct room *g = arg;
	uint64_t now = loop_now_ns();
	size_t room = members_dial_room(g);
	size_t start = g->members->n ?
	    randombytes_uniform((uint32_t)g->members->n) : 0;
	int way_back = members_need_way_back(g);

	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];

		if (member_redialable(g, m) && m->next_dial <= now)
			member_redial(g, m);
	}
	/* No open neighbour: one, the first found, whatever the room. */
	for (size_t k = 0; way_back && k < g->members->n; k++) {
		struct member *m = g->members->v[(start + k) % g->members->n];

		if (member_way_back(m) && m->next_dial <= now) {
			member_dial(g, m);
			room -= room > 0;
			break;
		}
	}
	for (int pass = 0; pass < 3 && room > 0; pass++)
		for (size_t k = 0; k < g->members->n && room > 0; k++) {
			struct member *m = g->members->v[(start + k) % g->members->n];

			if (!member_dialable(m) || m->next_dial > now ||
			    (pass < 2 && !member_online(g, m)) ||
			    (pass == 0 && !m->open))
				continue;
			member_dial(g, m);
			room--;
		}
	members_plan_dials(g);
}

/*
 * Makes room for a new neighbour in a large room: one other neighbour,
 * picked at random among those we could dial again, is let go and not
 * dialled again for a while.  A member we cannot dial (behind a NAT) is
 * never let go: its connection to us may be its only way into the room,
 * so a room with a single reachable member holds together however large.
 */
static int
member_evictable(const struct room *g, const struct member *m,
    const struct member *keep)
{
	return m->conn != NULL && m != keep && m->open &&
	    members_open_held(g) > 1;
}

void
members_evict(struct room *g, const struct member *keep)
{
	size_t n = 0, k;

	if (members_small(g) || members_active(g) <= ACTIVE_MAX)
		return;
	for (size_t i = 0; i < g->members->n; i++)
		n += member_evictable(g, g->members->v[i], keep);
	if (n == 0)
		return;
	k = randombytes_uniform((uint32_t)n);
	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];

		if (!member_evictable(g, m, keep) || k-- > 0)
			continue;
		log_msg(LOG_DEBUG, "letting neighbour %s go", m->name);
		quic_close(m->conn);
		m->next_dial = loop_now_ns() + EVICTED_REDIAL_NS;
		return;
	}
}

/* peers.json: the members met, so a restart finds them again. */

void
members_save(struct room *g)
{
	char path[4096], err[PAPO_ERR_LEN];
	cJSON *o = cJSON_CreateObject(), *arr;
	char *text = NULL;

	arr = cJSON_AddArrayToObject(o, "members");
	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];
		cJSON *e, *addrs;

		/* One refused at its hello was never of the room. */
		if (m->refused)
			continue;
		e = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, e);
		cJSON_AddStringToObject(e, "id", m->idtext);
		cJSON_AddStringToObject(e, "name", m->name);
		cJSON_AddStringToObject(e, "about", m->about);
		cJSON_AddNumberToObject(e, "seen", (double)m->seen);
		/* What keeps an old signed word of it, replayed after our
		 * restart, from being taken. */
		cJSON_AddNumberToObject(e, "announced", (double)m->announced);
		cJSON_AddBoolToObject(e, "signs", m->signs);
		if (m->has_seen_at) {
			char a[ADDR_STRLEN];

			addr_format(&m->seen_at, a);
			cJSON_AddStringToObject(e, "seen_at", a);
		}
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

void
members_save_later(struct room *g)
{
	/* Armed once, not pushed back: signed announcements arriving more
	 * often than the delay would otherwise keep peers.json from ever
	 * being written before a crash. */
	if (g->members->save_pending)
		return;
	g->members->save_pending = 1;
	loop_timer_set(g->members->save_timer, loop_now_ns() + PEERS_SAVE_DELAY_NS);
}

static void
members_save_timer(void *arg)
{
	struct room *g = arg;

	g->members->save_pending = 0;
	members_save(g);
}

void
members_load(struct room *g)
{
	char path[4096], err[PAPO_ERR_LEN];
	const cJSON *arr, *e;
	char *text = NULL;
	size_t len, bad = 0;
	int64_t t;
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
		const cJSON *ann = cJSON_GetObjectItemCaseSensitive(e,
		    "announced");
		const cJSON *at = cJSON_GetObjectItemCaseSensitive(e, "seen_at");
		const cJSON *a;
		uint8_t pk[PAPO_KEY_LEN];
		struct member *m;

		if (!cJSON_IsString(id) || sec_id_parse(id->valuestring, pk) == -1 ||
		    (m = member_add(g, pk)) == NULL)
			continue;
		if (cJSON_IsString(name) && strlen(name->valuestring) <= PAPO_NAME_MAX)
			strcpy(m->name, name->valuestring);
		if (cJSON_IsString(about) &&
		    strlen(about->valuestring) <= PAPO_ABOUT_MAX)
			strcpy(m->about, about->valuestring);
		/* Times in ms, read as strictly as the wire: a value that
		 * is not one (1e999, -1, 1.5) is left out, and said. */
		if (seen != NULL && fs_json_int(seen, 1, FS_JSON_INT_MAX,
		    &t) == 0)
			m->seen = (uint64_t)t;
		else if (seen != NULL)
			bad++;
		if (ann != NULL && fs_json_int(ann, 1, FS_JSON_INT_MAX,
		    &t) == 0)
			m->announced = (uint64_t)t;
		else if (ann != NULL)
			bad++;
		m->signs = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e,
		    "signs"));
		/* Absent from the files of older releases. */
		m->has_seen_at = cJSON_IsString(at) &&
		    addr_parse(at->valuestring, &m->seen_at) == 0;
		cJSON_ArrayForEach(a, addrs)
			if (m->naddr < PAPO_ADDR_MAX && cJSON_IsString(a) &&
			    addr_parse(a->valuestring, &m->addr[m->naddr]) == 0)
				m->naddr++;
	}
	if (bad > 0)
		log_msg(LOG_WARN, "%s: %zu times that are not whole ms since "
		    "1970 left out (seen, announced); the members are kept",
		    path, bad);
	cJSON_Delete(o);
	free(text);
}

/* Dials m at those of its addresses on our relay's IP (other members'
 * relayed addresses). */
static void
member_dial_relayed(struct room *g, struct member *m)
{
	for (size_t j = 0; j < m->naddr; j++)
		if (relay_on_server(g->net, &m->addr[j]))
			member_dial_at(g, m, &m->addr[j], 1);
}

void
members_relay_ready(struct room *g)
{
	/* Members we have no connection with are tried again at once;
	 * those still being dialled on their other addresses (which may
	 * never answer: a private one from an invite) at their relayed
	 * ones. */
	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];

		if (m->conn != NULL)
			continue;
		if (m->ndial == 0)
			m->next_dial = loop_now_ns();
		else
			member_dial_relayed(g, m);
	}
	members_plan_dials(g);
}

/*
 * Punching (punch.h).  A member online through others but without a
 * connection of ours (or with one through the relay only), whose
 * addresses failed us or have not answered
 * within PUNCH_AFTER_NS (a handshake answers in two round trips, well
 * within that on most paths; a QUIC dial gives up only after 5 s; a punch
 * begun where the dial would have worked costs 8 small datagrams, and the
 * first connection to greet wins anyway), is punched to through a member
 * connected to both.  Only in a
 * small room: in a large one most members are not meant to be
 * neighbours.
 */
void
members_punch_check(struct room *g)
{
	uint64_t now = loop_now_ns(), next = 0;

	if (!members_small(g)) {
		loop_timer_set(g->members->punch_timer, 0);
		return;
	}
	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];
		uint64_t due = m->dial_since + PUNCH_AFTER_NS;
		int waited = m->ndial > 0 && due <= now;

		/* Reached through the relay only: punch, over the relayed
		 * connection itself (no member between), for as long as that
		 * lasts; punch.c rests 60 s after every 3 failed attempts. */
		if (member_relayed(g, m)) {
			if (member_version(m) >= 2)
				punch_want(g->punch, m->id);
			continue;
		}
		if (m->conn != NULL)
			continue;
		if (m->ndial > 0 && !waited && (next == 0 || due < next))
			next = due;
		if (member_online(g, m) && (m->backoff_ms > 0 || waited) &&
		    m->via != NULL && member_version(m->via) >= 2)
			punch_want(g->punch, m->id);
	}
	loop_timer_set(g->members->punch_timer, next);
}

void
members_relay_lost(struct room *g)
{
	for (size_t i = 0; i < g->members->n; i++) {
		struct member *m = g->members->v[i];

		if (m->conn != NULL && quic_is_relayed(m->conn))
			quic_close(m->conn);
	}
}

void
members_addrs(struct room *g, void (*fn)(void *arg, const struct addr *a),
    void *arg)
{
	for (size_t i = 0; i < g->members->n; i++)
		for (size_t j = 0; j < g->members->v[i]->naddr; j++)
			fn(arg, &g->members->v[i]->addr[j]);
}

/* Sending to members. */

int
member_send(struct room *g, struct member *m, const struct frame *f)
{
	struct buf b;
	int rc = -1;

	if (m == NULL || m->conn == NULL)
		return -1;
	buf_init(&b, PAPO_FRAME_MAX);
	if (room_seal(g, f, quic_version(m->conn), &b) == 0)
		rc = quic_send(m->conn, b.p, b.len);
	buf_free(&b);
	return rc;
}

/* Sends f to every connected member but except (may be NULL): sealed
 * once per protocol version, as each version takes it. */
void
members_flood(struct room *g, const struct frame *f,
    const struct member *except)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	for (unsigned v = 1; v <= FRAME_VERSION; v++) {
		int sealed = 0, ok = 0;

		for (size_t i = 0; i < members_n(g); i++) {
			struct member *m = g->members->v[i];

			if (m->conn == NULL || m == except ||
			    quic_version(m->conn) != v)
				continue;
			if (!sealed) {
				buf_reset(&b);
				ok = room_seal(g, f, v, &b) == 0;
				sealed = 1;
			}
			if (ok)
				quic_send(m->conn, b.p, b.len);
		}
	}
	buf_free(&b);
}

/* Announcing this member. */

/* Our next announcement's (or bye's) counter: the wall clock's ms, and
 * always more than the last, so that receivers, which take only what is
 * newer, take it even when the clock went back. */
uint64_t
members_next_seq(struct room *g)
{
	uint64_t now = loop_wall_ms();

	g->members->own_seq = now > g->members->own_seq ? now :
	    g->members->own_seq + 1;
	return g->members->own_seq;
}

/* How long to the next announcement (member.h, ANNOUNCE_FAST_NS). */
static uint64_t
members_announce_ns(const struct room *g)
{
	if (!members_small(g))
		return ANNOUNCE_NS;
	for (size_t i = 0; i < g->members->n; i++) {
		const struct member *m = g->members->v[i];

		if (m->conn == NULL && !m->left && member_online(g, m))
			return ANNOUNCE_FAST_NS;
	}
	return ANNOUNCE_NS;
}

/* Floods this member's own entry: the announcement that shows life. */
static void
members_announce(void *arg)
{
	struct room *g = arg;
	struct frame_peer me;
	struct frame f;

	net_round(g->net);
	memset(&me, 0, sizeof(me));
	memcpy(me.id, g->env.me->pk, PAPO_KEY_LEN);
	strcpy(me.name, g->env.room->me);
	strcpy(me.about, g->env.room->about);
	me.seen = members_next_seq(g);
	me.naddr = reach_addrs(&g->net->reach, me.addr, PAPO_ADDR_MAX);
	/* Signed for connections of version 3; the others get it as
	 * before (members_flood). */
	if (frame_peer_sign(&me, g->env.keys, g->env.me) == -1)
		log_msg(LOG_WARN, "could not sign our announcement");
	memset(&f, 0, sizeof(f));
	f.type = FRAME_PEERS;
	f.u.peers.n = 1;
	f.u.peers.v = &me;
	members_flood(g, &f, NULL);
	loop_timer_set(g->members->announce_timer, loop_now_ns() +
	    members_announce_ns(g));
	members_punch_check(g);
}

void
members_announce_soon(struct room *g)
{
	loop_timer_set(g->members->announce_timer, 1);
}

static void
members_punch_timer(void *arg)
{
	members_punch_check(arg);
}

/* Start and stop. */

int
members_new(struct room *g)
{
	struct members *s;
	struct loop *loop = g->env.loop;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	g->members = s;
	if ((s->dial_timer = loop_timer_new(loop, members_dial, g)) == NULL ||
	    (s->presence_timer = loop_timer_new(loop, members_presence_timer,
	    g)) == NULL ||
	    (s->punch_timer = loop_timer_new(loop, members_punch_timer,
	    g)) == NULL ||
	    (s->announce_timer = loop_timer_new(loop, members_announce,
	    g)) == NULL ||
	    (s->save_timer = loop_timer_new(loop, members_save_timer,
	    g)) == NULL)
		return -1;
	return 0;
}

void
members_start(struct room *g)
{
	members_plan_dials(g);
	loop_timer_set(g->members->announce_timer, loop_now_ns() + ANNOUNCE_NS);
}

void
members_free(struct room *g)
{
	struct members *s = g->members;

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	loop_timer_free(s->dial_timer);
	loop_timer_free(s->presence_timer);
	loop_timer_free(s->punch_timer);
	loop_timer_free(s->announce_timer);
	loop_timer_free(s->save_timer);
	free(s);
	g->members = NULL;
}

/* Hellos, peers and byes: the members we hear of. */

/* Sends the members we know (all, or just one) to a member, in frames of
 * at most FRAME_PEERS_MAX. */
static void
members_send_peers(struct room *g, struct member *to, struct member *only)
{
	struct frame f;
	struct frame_peer v[FRAME_PEERS_MAX];

	memset(&f, 0, sizeof(f));
	f.type = FRAME_PEERS;
	f.u.peers.v = v;
	for (size_t i = 0; i <= members_n(g); i++) {
		struct member *m = i < members_n(g) ? member_at(g, i) : NULL;

		/* A member that said bye is left out: its entry carries
		 * the time of its last announcement, which a member that had
		 * not heard of it would take for life.  So is a removed
		 * one, or one refused at its hello: alive to no one. */
		if (m != NULL && (m->removed || m->refused))
			continue;
		if (m != NULL && m != to && (only == NULL || m == only) &&
		    m->name[0] != '\0' && !m->left && m->ann.has_sig) {
			/* Its own words, as it signed them: the only entry
			 * a connection of version 3 takes. */
			v[f.u.peers.n++] = m->ann;
		} else if (m != NULL && m != to && (only == NULL || m == only) &&
		    m->name[0] != '\0' && !m->left) {
			struct frame_peer *p = &v[f.u.peers.n++];

			memset(p, 0, sizeof(*p));
			memcpy(p->id, m->id, PAPO_KEY_LEN);
			strcpy(p->name, m->name);
			strcpy(p->about, m->about);
			/* Its own clock's time, so that what we pass on is
			 * never newer than what it said itself. */
			p->seen = m->announced;
			p->naddr = m->naddr;
			memcpy(p->addr, m->addr, m->naddr * sizeof(m->addr[0]));
		}
		if (f.u.peers.n > 0 && (f.u.peers.n == FRAME_PEERS_MAX || m == NULL)) {
			member_send(g, to, &f);
			f.u.peers.n = 0;
		}
	}
}

/* A hello taken on in->l: the member's record as it says (name, about,
 * addresses, life), its dialling as the connection makes it, peers.json,
 * the relay's permissions, neighbours and presence. */
void
members_on_hello(struct room *g, const struct hello_in *in)
{
	struct member *m = in->m;
	const struct frame_hello *h = in->h;
	int both = in->both, is_new = in->is_new;

	strcpy(m->name, h->name);
	strcpy(m->about, h->about);
	if (h->naddr > 0) {
		m->naddr = h->naddr;
		memcpy(m->addr, h->addr, h->naddr * sizeof(h->addr[0]));
	}
	m->left = 0;
	member_alive(m);
	m->backoff_ms = 0;
	/* Reached through the relay only: its direct addresses are tried
	 * again every RELAY_REDIAL_NS (members_dial), the first time at
	 * once unless our dials of them are still under way (the relayed
	 * connection came of its dial, or ours gave up already). */
	if (!both)
		m->next_dial = 0;
	else if (is_new)
		m->next_dial = loop_now_ns() +
		    (member_dials(m) == 0 ? 0 : RELAY_REDIAL_NS);
	else if (m->next_dial == 0)
		m->next_dial = loop_now_ns() + RELAY_REDIAL_NS;
	members_save_later(g);
	if (h->naddr > 0)
		relay_permits(g->net);
	if (both)
		members_plan_dials(g);
	members_evict(g, m);
	members_presence_check(g);
}

/* A hello taken: tell its member whom we know, and tell the others about
 * it if new.  After the roles' and epochs' hooks: a member behind on
 * the key opens these only once the epoch frames reached it. */
void
members_hello_peers(struct room *g, const struct hello_in *in)
{
	struct member *m = in->m;
	int fresh = in->fresh;

	members_send_peers(g, m, NULL);
	if (fresh)
		for (size_t i = 0; i < members_n(g); i++)
			if (member_at(g, i) != m && member_at(g, i)->conn != NULL)
				members_send_peers(g, member_at(g, i), m);
}

/*
 * Members we hear of.  An entry newer (by its member's own clock) than
 * the last we took from that member is news: it counts as a sign of life
 * and is passed on to our other neighbours, once, which is how presence
 * and addresses cross a room where not everyone is connected.
 */
void
members_on_peers(struct room *g, struct link *l, struct frame *f)
{
	const struct frame_peers *ps = &f->u.peers;
	struct frame fwd;
	struct frame_peer v[FRAME_PEERS_MAX];
	int changed = 0;

	memset(&fwd, 0, sizeof(fwd));
	fwd.type = FRAME_PEERS;
	fwd.u.peers.v = v;
	for (size_t i = 0; i < ps->n; i++) {
		const struct frame_peer *p = &ps->v[i];
		struct member *m = member_find(g, p->id);
		int fresh = m == NULL;

		/* What a member says of itself (name, about, addresses,
		 * life) is taken only under its signature once it is known
		 * to sign; unsigned, only from itself, on its own
		 * (authenticated) connection.  The decoder checked every
		 * signature. */
		if (m != NULL && m->signs && !p->has_sig && m != l->m)
			continue;
		/* News of a removed member is none: not life, not passed
		 * on (a copy of its key may still announce itself). */
		if (keyring_removed(g->keyring, p->id) != NULL)
			continue;
		if (m == NULL && (m = member_add(g, p->id)) == NULL)
			continue;
		/* Only what is newer than the last taken: an entry
		 * replayed says nothing. */
		if (!fresh && p->seen <= m->announced)
			continue;
		m->announced = p->seen;
		member_announced(g, m);
		if (p->has_sig) {
			m->ann = *p;
			m->signs = 1;
		}
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
		if (p->seen + ALIVE_NS / NS_PER_MS >= loop_wall_ms()) {
			member_alive(m);
			if (l->m != m)
				m->via = l->m;
		}
		v[fwd.u.peers.n++] = *p;
		changed = 1;
	}
	if (fwd.u.peers.n > 0)
		members_flood(g, &fwd, l->m);
	if (changed) {
		members_save_later(g);
		relay_permits(g->net);
		members_plan_dials(g);
		members_presence_check(g);
		members_punch_check(g);
	}
}

/* A member leaving: offline at once, and the news passed on once. */
void
members_on_bye(struct room *g, struct link *l, struct frame *in)
{
	const struct frame_bye *b = &in->u.bye;
	struct member *m = member_find(g, b->id);
	struct frame f;

	if (m == NULL)
		return;
	/* Signed (version 3): only when newer than everything it said
	 * before, so an old bye replayed after it came back says nothing.
	 * Unsigned: only from itself, or about a member never known to
	 * sign (a daemon of version 1 or 2). */
	if (b->has_sig ? b->ts <= m->announced : m != l->m && m->signs) {
		log_msg(LOG_DEBUG, "a bye for %s that it did not sign, or "
		    "older than its last word: ignored", m->idtext);
		return;
	}
	if (b->has_sig)
		m->announced = b->ts;
	if (!m->left) {
		m->left = 1;
		m->left_at = m->announced;
		m->seen = loop_wall_ms();
		memset(&f, 0, sizeof(f));
		f.type = FRAME_BYE;
		f.u.bye = *b;
		members_flood(g, &f, l->m);
		members_presence_check(g);
	}
	if (m == l->m && m->conn == l->qc) {
		m->conn = NULL;
		/* It left on purpose: try again later, not at once. */
		m->backoff_ms = DIAL_BACKOFF_MAX_MS / 4;
		m->next_dial = loop_now_ns() + (uint64_t)m->backoff_ms * NS_PER_MS;
		l->m = NULL;
		quic_close(l->qc);
	}
}


/* Status. */

void
member_status_who(const struct room *g, const struct member *m, cJSON *e)
{
	char nb[16];

	(void)g;
	cJSON_AddStringToObject(e, "name", member_name(m, nb));
	cJSON_AddStringToObject(e, "id", m->idtext);
	cJSON_AddStringToObject(e, "about", m->about);
}

/* How a member is reached now: "direct", "punched", "lan" or "relay" (our
 * own connection, the last through our TURN relay: its protocol version,
 * smoothed RTT and path MTU), "via NAME" (no connection, but news of its
 * life came lately through NAME's), "via others" (a large room, over
 * several hops), or "none". */
static void
member_path_json(const struct room *g, const struct member *m, cJSON *e)
{
	char path[PAPO_NAME_MAX + 8], nb[16];

	if (m->conn != NULL) {
		cJSON_AddStringToObject(e, "path", quic_is_relayed(m->conn) ?
		    "relay" : m->punched ? "punched" : m->lan ? "lan" : "direct");
		cJSON_AddNumberToObject(e, "rtt_ms",
		    (double)(quic_rtt_us(m->conn) / 100) / 10.0);
		cJSON_AddNumberToObject(e, "protocol", quic_version(m->conn));
		cJSON_AddNumberToObject(e, "mtu", (double)quic_mtu(m->conn));
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
	cJSON_AddNullToObject(e, "mtu");
}

void
member_status_path(const struct room *g, const struct member *m, cJSON *e)
{
	cJSON_AddBoolToObject(e, "online", member_online(g, m));
	cJSON_AddBoolToObject(e, "direct", m->conn != NULL);
	member_path_json(g, m, e);
	if (m->seen != 0)
		cJSON_AddNumberToObject(e, "last_seen", (double)m->seen);
	else
		cJSON_AddNullToObject(e, "last_seen");
}

void
members_summary_json(const struct room *g, cJSON *o)
{
	size_t members = 0, online = 0;

	for (size_t i = 0; i < members_n(g); i++) {
		const struct member *m = g->members->v[i];

		if (m->refused || m->removed)
			continue;
		members++;
		online += member_online(g, m) != 0;
	}
	cJSON_AddNumberToObject(o, "members", (double)members);
	cJSON_AddNumberToObject(o, "online", (double)online);
}
