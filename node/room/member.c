/*
 * member.c: the member table of the room, on the node thread (member.h;
 * docs/PROTOCOL.md, "Gossip").  It keeps each member's record, works
 * out from it who is online now (presence.c tells the program when that
 * changes), sends to members, keeps peers.json so that a restart finds
 * the members again, and builds the members' status.  It never blocks:
 * the only wait is the save timer.
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
#define PEERS_SAVE_DELAY_NS (2ull * NS_PER_S)
/* Above this many members a rewrite of peers.json (every member's
 * entry) waits at least PEERS_SAVE_FLOOR_NS after the last: news of
 * some member comes every moment in a large room. */
#define PEERS_SAVE_FLOOR_N 256
#define PEERS_SAVE_FLOOR_NS (60ull * NS_PER_S)
/* peers.json's largest: a member's entry is well under 2 KiB even with
 * every field at its longest and escaped. */
#define PEERS_FILE_MAX ((size_t)ROOM_MEMBERS_MAX * 2048)

/* The table, its index by id, the members connected, and the save
 * timer. */
struct members {
	struct member **v;
	size_t n;
	/* Open addressing on a keyed hash of the id (random key: ids are
	 * chosen by whoever makes a key pair, and must not be able to
	 * crowd one slot): each slot holds a member's index plus 1, 0
	 * empty; at most half full. */
	uint32_t *slot;
	size_t nslot;               /* a power of 2 */
	uint8_t hkey[crypto_shorthash_KEYBYTES];
	/* The members with a connection (member_set_conn): flooding and
	 * counting neighbours walk these, not the whole table. */
	struct member **conn;
	size_t nconn;
	struct loop_timer *save_timer;
	int save_pending;           /* save_timer armed (members_save_later) */
	uint64_t saved_at;          /* monotonic ns of the last write */
};

size_t
members_n(const struct room *room)
{
	return room->members != NULL ? room->members->n : 0;
}

struct member *
member_at(const struct room *room, size_t i)
{
	return room->members->v[i];
}

/* The member table. */

/* The first slot to look at for id. */
static size_t
members_slot0(const struct members *s, const uint8_t id[PAPO_KEY_LEN])
{
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t x;

	crypto_shorthash(h, id, PAPO_KEY_LEN, s->hkey);
	memcpy(&x, h, sizeof(x));
	return (size_t)x & (s->nslot - 1);
}

/* The slot holding id, or the empty one where it would go. */
static size_t
members_probe(const struct members *s, const uint8_t id[PAPO_KEY_LEN])
{
	size_t i = members_slot0(s, id);

	while (s->slot[i] != 0 &&
	    memcmp(s->v[s->slot[i] - 1]->id, id, PAPO_KEY_LEN) != 0)
		i = (i + 1) & (s->nslot - 1);
	return i;
}

/* Makes the index again for nslot slots (growing, or after members
 * left the table): -1 out of memory, the old one kept. */
static int
members_reindex(struct members *s, size_t nslot)
{
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (slot == NULL)
		return -1;
	free(s->slot);
	s->slot = slot;
	s->nslot = nslot;
	for (size_t i = 0; i < s->n; i++)
		s->slot[members_probe(s, s->v[i]->id)] = (uint32_t)i + 1;
	return 0;
}

struct member *
member_find(const struct room *room, const uint8_t id[PAPO_KEY_LEN])
{
	const struct members *s = room->members;
	size_t i;

	if (s->nslot == 0)
		return NULL;
	i = members_probe(s, id);
	return s->slot[i] != 0 ? s->v[s->slot[i] - 1] : NULL;
}

struct member *
member_add(struct room *room, const uint8_t id[PAPO_KEY_LEN])
{
	struct member **v, *m;

	if (memcmp(id, room->env.me->pk, PAPO_KEY_LEN) == 0)
		return NULL;
	if ((m = member_find(room, id)) != NULL)
		return m;
	if (room->members->n == ROOM_MEMBERS_MAX)
		return NULL;
	/* Room for one more, at most half the slots taken. */
	if ((room->members->n + 1) * 2 > room->members->nslot &&
	    members_reindex(room->members, room->members->nslot == 0 ? 64 :
	    room->members->nslot * 2) == -1)
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	/* Grown by doubling: adding n members copies O(n) pointers. */
	v = room->members->v;
	if ((room->members->n & (room->members->n - 1)) == 0 &&
	    (v = realloc(v, (room->members->n == 0 ? 1 : room->members->n * 2) *
	    sizeof(*v))) == NULL) {
		free(m);
		return NULL;
	}
	memcpy(m->id, id, PAPO_KEY_LEN);
	m->about = "";
	sec_id_format(id, m->idtext);
	m->removed = keyring_gone(room->keyring) ||
	    keyring_removed(room->keyring, id) != NULL;
	room->members->v = v;
	room->members->slot[members_probe(room->members, id)] =
	    (uint32_t)room->members->n + 1;
	room->members->v[room->members->n++] = m;
	return m;
}

void
member_set_conn(struct room *room, struct member *m, struct quic_conn *qc)
{
	struct members *s = room->members;
	struct member **v;

	if ((m->conn == NULL) == (qc == NULL)) {
		m->conn = qc;
		return;
	}
	if (qc == NULL) {
		for (size_t i = 0; i < s->nconn; i++)
			if (s->conn[i] == m) {
				s->conn[i] = s->conn[--s->nconn];
				break;
			}
		m->conn = NULL;
		return;
	}
	/* Grown by doubling; on failure m keeps no connection, as a dial
	 * that failed would leave it. */
	if ((s->nconn & (s->nconn - 1)) == 0) {
		if ((v = realloc(s->conn, (s->nconn == 0 ? 1 : s->nconn * 2) *
		    sizeof(*v))) == NULL) {
			quic_close(qc);
			return;
		}
		s->conn = v;
	}
	s->conn[s->nconn++] = m;
	m->conn = qc;
}

/* What is kept by its length. */

/* A signed entry as it came: its fields, the addresses, then the name
 * and the about text, each ending in NUL. */
struct member_ann {
	uint64_t seen;
	uint8_t sig[PAPO_SIG_LEN];
	uint8_t naddr;
	struct addr addr[];
};

static void
member_free(struct member *m)
{
	if (m == NULL)
		return;
	if (m->about[0] != '\0')
		free((char *)m->about);
	free(m->addr);
	free(m->ann);
	free(m);
}

int
member_set_addrs(struct member *m, const struct addr *a, size_t n)
{
	struct addr *v = NULL;

	if (n > PAPO_ADDR_MAX)
		n = PAPO_ADDR_MAX;
	if (n > 0 && (v = malloc(n * sizeof(*v))) == NULL)
		return -1;
	/* a may be m's own (a part of it moved): copied before freed. */
	if (n > 0)
		memcpy(v, a, n * sizeof(*v));
	free(m->addr);
	m->addr = v;
	m->naddr = n;
	return 0;
}

int
member_set_about(struct member *m, const char *about)
{
	char *s = NULL;

	if (strcmp(m->about, about) == 0)
		return 0;
	if (about[0] != '\0' && (s = strdup(about)) == NULL)
		return -1;
	if (m->about[0] != '\0')
		free((char *)m->about);
	/* The empty text is the one static "": a member with none costs
	 * nothing. */
	m->about = s != NULL ? s : "";
	return 0;
}

int
member_ann_set(struct member *m, const struct frame_peer *p)
{
	size_t naddr = p->naddr < PAPO_ADDR_MAX ? p->naddr : PAPO_ADDR_MAX;
	size_t nl = strlen(p->name) + 1, al = strlen(p->about) + 1;
	struct member_ann *a = malloc(sizeof(*a) + naddr * sizeof(a->addr[0]) +
	    nl + al);
	char *text;

	if (a == NULL)
		return -1;
	a->seen = p->seen;
	memcpy(a->sig, p->sig, PAPO_SIG_LEN);
	a->naddr = (uint8_t)naddr;
	memcpy(a->addr, p->addr, naddr * sizeof(a->addr[0]));
	text = (char *)&a->addr[naddr];
	memcpy(text, p->name, nl);
	memcpy(text + nl, p->about, al);
	free(m->ann);
	m->ann = a;
	return 0;
}

int
member_ann_get(const struct member *m, struct frame_peer *p)
{
	const struct member_ann *a = m->ann;
	const char *text;

	if (a == NULL)
		return -1;
	memset(p, 0, sizeof(*p));
	memcpy(p->id, m->id, PAPO_KEY_LEN);
	p->seen = a->seen;
	p->has_sig = 1;
	memcpy(p->sig, a->sig, PAPO_SIG_LEN);
	p->naddr = a->naddr;
	memcpy(p->addr, a->addr, a->naddr * sizeof(a->addr[0]));
	text = (const char *)&a->addr[a->naddr];
	strcpy(p->name, text);
	strcpy(p->about, text + strlen(text) + 1);
	return 0;
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
member_lookup(const struct room *room, const char *who, int *ambiguous)
{
	struct member *found = NULL;

	*ambiguous = 0;
	for (size_t i = 0; i < room->members->n; i++) {
		struct member *m = room->members->v[i];

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
member_relayed(const struct room *room, const struct member *m)
{
	return m->conn != NULL && relay_both_ends(room->net, m->conn);
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
members_small(const struct room *room)
{
	return room->members->n + 1 <= FULL_MESH_MAX;
}

size_t
members_active(const struct room *room)
{
	return room->members->nconn;
}

struct member *
member_connected(const struct room *room, size_t i)
{
	return room->members->conn[i];
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
member_online(const struct room *room, const struct member *m)
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
	return !members_small(room) && members_active(room) > 0;
}

void
member_alive(struct member *m)
{
	m->alive_until = loop_now_ns() + (m->alive_ns != 0 ? m->alive_ns :
	    ALIVE_NS);
	m->seen = loop_wall_ms();
}

void
member_announced(const struct room *room, struct member *m)
{
	uint64_t now = loop_now_ns();
	/* In a room no longer small, members announce every ANNOUNCE_NS:
	 * gaps measured while it was small (3 s) would show a member
	 * offline before its first slower announcement comes. */
	uint64_t floor = members_small(room) ? ALIVE_MIN_NS :
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

/* peers.json: the members met, so a restart finds them again. */

void
members_save(struct room *room)
{
	char path[4096], err[PAPO_ERR_LEN];
	cJSON *o = cJSON_CreateObject(), *arr;
	char *text = NULL;

	arr = cJSON_AddArrayToObject(o, "members");
	for (size_t i = 0; i < room->members->n; i++) {
		struct member *m = room->members->v[i];
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
	room->members->saved_at = loop_now_ns();
	if ((text = cJSON_Print(o)) != NULL &&
	    fs_path(path, sizeof(path), room->env.home, "peers.json") == 0 &&
	    fs_write(err, path, text, strlen(text)) == -1)
		room_log(room, LOG_WARN, "%s", err);
	cJSON_free(text);
	cJSON_Delete(o);
}

void
members_save_later(struct room *room)
{
	struct members *s = room->members;
	uint64_t at = loop_now_ns() + PEERS_SAVE_DELAY_NS;

	/* Armed once, not pushed back: signed announcements arriving more
	 * often than the delay would otherwise keep peers.json from ever
	 * being written before a crash. */
	if (s->save_pending)
		return;
	if (s->n > PEERS_SAVE_FLOOR_N && s->saved_at != 0 &&
	    s->saved_at + PEERS_SAVE_FLOOR_NS > at)
		at = s->saved_at + PEERS_SAVE_FLOOR_NS;
	s->save_pending = 1;
	loop_timer_set(s->save_timer, at);
}

static void
members_save_timer(void *arg)
{
	struct room *room = arg;

	room->members->save_pending = 0;
	members_save(room);
}

void
members_load(struct room *room)
{
	char path[4096], err[PAPO_ERR_LEN];
	const cJSON *arr, *e;
	char *text = NULL;
	size_t len, bad = 0;
	int64_t t;
	int exists = 0;
	cJSON *o;

	if (fs_path(path, sizeof(path), room->env.home, "peers.json") == -1 ||
	    fs_read(err, path, PEERS_FILE_MAX, &text, &len, &exists) == -1) {
		if (exists)
			room_log(room, LOG_WARN, "%s", err);
		return;
	}
	if ((o = cJSON_ParseWithLength(text, len)) == NULL) {
		room_log(room, LOG_WARN, "%s is damaged; starting from the invite",
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
		struct addr addr[PAPO_ADDR_MAX];
		size_t naddr;
		uint8_t pk[PAPO_KEY_LEN];
		struct member *m;

		if (!cJSON_IsString(id) || sec_id_parse(id->valuestring, pk) == -1 ||
		    (m = member_add(room, pk)) == NULL)
			continue;
		if (cJSON_IsString(name) && strlen(name->valuestring) <= PAPO_NAME_MAX)
			strcpy(m->name, name->valuestring);
		if (cJSON_IsString(about) &&
		    strlen(about->valuestring) <= PAPO_ABOUT_MAX)
			member_set_about(m, about->valuestring);
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
		naddr = 0;
		cJSON_ArrayForEach(a, addrs)
			if (naddr < PAPO_ADDR_MAX && cJSON_IsString(a) &&
			    addr_parse(a->valuestring, &addr[naddr]) == 0)
				naddr++;
		member_set_addrs(m, addr, naddr);
	}
	if (bad > 0)
		room_log(room, LOG_WARN, "%s: %zu times that are not whole ms since "
		    "1970 left out (seen, announced); the members are kept",
		    path, bad);
	cJSON_Delete(o);
	free(text);
}

void
members_addrs(struct room *room, void (*fn)(void *arg, const struct addr *a),
    void *arg)
{
	for (size_t i = 0; i < room->members->n; i++)
		for (size_t j = 0; j < room->members->v[i]->naddr; j++)
			fn(arg, &room->members->v[i]->addr[j]);
}

/* Sending to members. */

int
member_send(struct room *room, struct member *m, const struct frame *f)
{
	struct buf b;
	int rc = -1;

	if (m == NULL || m->conn == NULL)
		return -1;
	buf_init(&b, PAPO_FRAME_MAX);
	if (room_seal(room, f, quic_version(m->conn), &b) == 0)
		rc = quic_send(m->conn, b.p, b.len);
	buf_free(&b);
	return rc;
}

/* Sends f to every connected member but except (may be NULL): sealed
 * once per protocol version, as each version takes it. */
void
members_flood(struct room *room, const struct frame *f,
    const struct member *except)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	for (unsigned v = 1; v <= FRAME_VERSION; v++) {
		int sealed = 0, ok = 0;

		for (size_t i = 0; i < members_active(room); i++) {
			struct member *m = room->members->conn[i];

			if (m->conn == NULL || m == except ||
			    quic_version(m->conn) != v)
				continue;
			if (!sealed) {
				buf_reset(&b);
				ok = room_seal(room, f, v, &b) == 0;
				sealed = 1;
			}
			if (ok)
				quic_send(m->conn, b.p, b.len);
		}
	}
	buf_free(&b);
}

/* Start and stop. */

int
members_new(struct room *room)
{
	struct members *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	room->members = s;
	randombytes_buf(s->hkey, sizeof(s->hkey));
	if ((s->save_timer = loop_timer_new(room->env.loop, members_save_timer,
	    room)) == NULL)
		return -1;
	return 0;
}

void
members_free(struct room *room)
{
	struct members *s = room->members;

	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		member_free(s->v[i]);
	free(s->v);
	free(s->slot);
	free(s->conn);
	loop_timer_free(s->save_timer);
	free(s);
	room->members = NULL;
}

/* Status. */

void
member_status_who(const struct room *room, const struct member *m, cJSON *e)
{
	char nb[16];

	(void)room;
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
member_path_json(const struct room *room, const struct member *m, cJSON *e)
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
	if (member_online(room, m) && m->via != NULL) {
		snprintf(path, sizeof(path), "via %s", member_name(m->via, nb));
		cJSON_AddStringToObject(e, "path", path);
	} else if (member_online(room, m))    /* a large room, several hops */
		cJSON_AddStringToObject(e, "path", "via others");
	else
		cJSON_AddStringToObject(e, "path", "none");
	cJSON_AddNullToObject(e, "rtt_ms");
	cJSON_AddNullToObject(e, "protocol");
	cJSON_AddNullToObject(e, "mtu");
}

void
member_clock(struct member *m, uint64_t ms)
{
	uint64_t half = m->conn != NULL ? quic_rtt_us(m->conn) / 2000 : 0;

	m->clock_ms = (int64_t)(ms + half) - (int64_t)loop_wall_ms();
	m->has_clock = 1;
}

void
member_status_path(const struct room *room, const struct member *m, cJSON *e)
{
	cJSON_AddBoolToObject(e, "online", member_online(room, m));
	cJSON_AddBoolToObject(e, "direct", m->conn != NULL);
	member_path_json(room, m, e);
	if (m->seen != 0)
		cJSON_AddNumberToObject(e, "last_seen", (double)m->seen);
	else
		cJSON_AddNullToObject(e, "last_seen");
	if (m->has_clock)
		cJSON_AddNumberToObject(e, "clock_offset_ms",
		    (double)m->clock_ms);
	else
		cJSON_AddNullToObject(e, "clock_offset_ms");
}

void
members_summary_json(const struct room *room, cJSON *o)
{
	size_t members = 0, online = 0;

	for (size_t i = 0; i < members_n(room); i++) {
		const struct member *m = room->members->v[i];

		if (m->refused || m->removed)
			continue;
		members++;
		online += member_online(room, m) != 0;
	}
	cJSON_AddNumberToObject(o, "members", (double)members);
	cJSON_AddNumberToObject(o, "online", (double)online);
}
