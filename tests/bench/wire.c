/*
 * wire.c: the size on the wire of the frames papo sends (docs/CODEC.md,
 * "Bytes on the wire"): the JSON text, the sealed frame (24-byte nonce and
 * 16-byte tag added), and what goes on the QUIC stream (the 4-byte length
 * node/net/quic.c puts in front of every sealed frame), for typical field
 * values, beside the sizes the Rust tool published.  Every frame is made,
 * sealed and opened again with frame.h's functions, and every size is
 * checked against its parts, so that the table cannot drift from the
 * codec: a mismatch exits 1.  QUIC's own headers and the UDP/IP headers
 * are below this and not counted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "node/wire/frame.h"

#define WIRE_LEN_PREFIX 4        /* node/net/quic.c's QUIC_LEN_PREFIX */
#define WIRE_TS 1764480000123ull /* a time in ms: 13 digits until 2286 */

static void fail(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

static void
fail(const char *fmt, ...)
{
	va_list ap;

	fputs("wire: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

struct ctx {
	struct room_keys keys;
	struct identity me, other[8];
};

/* The JSON text of f (malloc'd, NUL-terminated). */
static char *
json_of(const struct frame *f)
{
	struct buf b;

	buf_init(&b, FRAME_JSON_MAX + 1);
	if (frame_encode(f, &b) == -1 || buf_u8(&b, 0) == -1)
		fail("frame_encode refused a %s frame", frame_type_name(f->type));
	return (char *)b.p;
}

/* Seals f, checks the sizes add up and that it opens again, and prints
 * its row.  Returns what goes on the stream. */
static size_t
row(const struct ctx *c, const char *what, const struct frame *f,
    const char *rust)
{
	char *json = json_of(f);
	size_t jlen = strlen(json);
	struct frame back;
	enum frame_err e;
	struct buf b;
	size_t n;

	buf_init(&b, PAPO_FRAME_MAX);
	if (frame_seal(&c->keys, f, &b) == -1)
		fail("%s: frame_seal failed", what);
	if (b.len != jlen + FRAME_SEAL_OVERHEAD)
		fail("%s: sealed %zu bytes, expected %zu + %d", what, b.len,
		    jlen, FRAME_SEAL_OVERHEAD);
	if ((e = frame_open(&c->keys, b.p, b.len, frame_flags(
	    f->type == FRAME_HELLO ? f->u.hello.version : FRAME_VERSION),
	    &back)) != FRAME_OK ||
	    back.type != f->type)
		fail("%s: does not open again: %s", what, frame_strerror(e));
	frame_clear(&back);
	n = b.len + WIRE_LEN_PREFIX;
	printf("| %s | %zu | %zu | %zu | %s |\n", what, jlen, b.len, n, rust);
	buf_free(&b);
	free(json);
	return n;
}

static void
make_msg(const struct ctx *c, struct frame *f, const char *body, int to,
    int reply_to)
{
	memset(f, 0, sizeof(*f));
	f->type = FRAME_MSG;
	strcpy(f->u.msg.id, "k3jw7qpa2x");
	strcpy(f->u.msg.name, "ana");
	f->u.msg.ts = WIRE_TS;
	if ((f->u.msg.body = strdup(body)) == NULL)
		fail("out of memory");
	f->u.msg.body_len = strlen(body);
	if (to) {
		f->u.msg.has_to = 1;
		memcpy(f->u.msg.to, c->other[0].pk, 32);
	}
	if (reply_to) {
		f->u.msg.has_reply_to = 1;
		strcpy(f->u.msg.reply_to, "m4bqz7vd5r");
	}
	if (frame_msg_sign(&f->u.msg, &c->keys, &c->me) != 0)
		fail("frame_msg_sign failed");
}

static void
make_ack(const struct ctx *c, struct frame *f, enum ack_state state)
{
	memset(f, 0, sizeof(*f));
	f->type = FRAME_ACK;
	strcpy(f->u.ack.id, "k3jw7qpa2x");
	f->u.ack.state = state;
	f->u.ack.ts = WIRE_TS + 42;
	if (frame_ack_sign(&f->u.ack, &c->keys, &c->other[0]) != 0)
		fail("frame_ack_sign failed");
}

/* A daemon listening on 0.0.0.0 lists every up interface's address:
 * typically the LAN, a container bridge and loopback. */
static const char *const typical_addrs[] = {
	"192.168.1.20:7778", "172.17.0.1:7778", "127.0.0.1:7778",
};

static void
set_addrs(struct addr *a, size_t *n, size_t want)
{
	for (*n = 0; *n < want; (*n)++)
		if (addr_parse(typical_addrs[*n], &a[*n]) == -1)
			fail("addr_parse refused %s", typical_addrs[*n]);
}

static void
make_hello(const struct ctx *c, struct frame *f, const char *about,
    size_t naddr, uint64_t msgs)
{
	memset(f, 0, sizeof(*f));
	f->type = FRAME_HELLO;
	f->u.hello.version = FRAME_VERSION;
	memcpy(f->u.hello.id, c->me.pk, 32);
	strcpy(f->u.hello.name, "ana");
	strcpy(f->u.hello.about, about);
	set_addrs(f->u.hello.addr, &f->u.hello.naddr, naddr);
	f->u.hello.msgs = msgs;
	memset(f->u.hello.digest, 0xa5, 32);
	addr_parse("203.0.113.7:40123", &f->u.hello.obs);   /* version 2 */
}

static const char *const member_names[] = {
	"bo", "claude-laptop", "cursor-ci", "jo\xc3\xa3o", "eve", "build-bot",
	"ana-desktop",
};

/* A peers frame with n members, each as member.c fills it: name, about,
 * the addresses it announced and the time of its last announcement. */
static void
make_peers(const struct ctx *c, struct frame *f, struct frame_peer *v,
    size_t n)
{
	memset(f, 0, sizeof(*f));
	f->type = FRAME_PEERS;
	f->u.peers.n = n;
	f->u.peers.v = v;
	for (size_t i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		memcpy(v[i].id, c->other[i].pk, PAPO_KEY_LEN);
		strcpy(v[i].name, member_names[i]);
		strcpy(v[i].about, "Claude Code on a laptop");
		v[i].seen = WIRE_TS - 1000 * i;
		set_addrs(v[i].addr, &v[i].naddr, 3);
		/* Version 3: each entry signed by the member it is about. */
		if (frame_peer_sign(&v[i], &c->keys, &c->other[i]) != 0)
			fail("frame_peer_sign failed");
	}
}

/*
 * What each field of a frame's JSON text costs: the text's length less
 * the length of the same text without that field (its name, value,
 * quotes, colon and one comma).  With the two braces, less the one comma
 * counted too many (n fields have n - 1 commas), they add up to the whole
 * text, which is checked.
 */
static size_t
field_cost(const char *json, const char *field)
{
	cJSON *o = cJSON_Parse(json);
	char *s;
	size_t n;

	if (o == NULL || cJSON_GetObjectItemCaseSensitive(o, field) == NULL)
		fail("no field %s in %s", field, json);
	cJSON_DeleteItemFromObjectCaseSensitive(o, field);
	if ((s = cJSON_PrintUnformatted(o)) == NULL)
		fail("out of memory");
	n = strlen(json) - strlen(s);
	cJSON_free(s);
	cJSON_Delete(o);
	return n;
}

static void
field_costs(const char *what, const struct frame *f)
{
	char *json = json_of(f);
	cJSON *o = cJSON_Parse(json);
	const cJSON *it;
	size_t sum = 2 - 1, n;

	if (o == NULL)
		fail("%s: its JSON does not parse", what);
	printf("\n%s, %zu bytes of JSON:\n\n| field | bytes |\n|---|---:|\n",
	    what, strlen(json));
	cJSON_ArrayForEach(it, o) {
		n = field_cost(json, it->string);
		printf("| `%s` | %zu |\n", it->string, n);
		sum += n;
	}
	printf("| `{` `}`, less the one comma counted too many | 1 |\n");
	if (sum != strlen(json))
		fail("%s: the fields add up to %zu, the text is %zu", what, sum,
		    strlen(json));
	cJSON_Delete(o);
	free(json);
}

int
main(void)
{
	struct ctx c;
	struct frame f;
	struct frame_peer v[8];
	uint8_t secret[32], seed[32];
	char roomid[PAPO_ROOMID_LEN + 1], *json;
	size_t hello_typical, peers8, sig_cost, i, layout;

	if (sec_init() == -1)
		fail("libsodium does not initialise");
	memset(secret, 7, sizeof(secret));
	sec_room_keys(secret, &c.keys);
	memset(seed, 1, sizeof(seed));
	crypto_sign_seed_keypair(c.me.pk, c.me.sk, seed);
	for (i = 0; i < 8; i++) {
		memset(seed, (int)(i + 2), sizeof(seed));
		crypto_sign_seed_keypair(c.other[i].pk, c.other[i].sk, seed);
	}

	printf("# papo frames: bytes on the wire\n\n");
	printf("Member name `ana` (3 bytes), times of 13 digits, message ids "
	    "of 10 characters, member ids of 52.  Sealed = JSON + %d (nonce "
	    "%d, tag %d); on the stream = sealed + %d (the big-endian length "
	    "node/net/quic_stream.c writes before each frame).  QUIC packet and STREAM "
	    "headers, UDP and IP are not counted.  The Rust tool's figures are "
	    "its sealed sizes (JSON + 40), without its gossip framing.\n\n",
	    FRAME_SEAL_OVERHEAD, FRAME_NONCE_LEN, FRAME_TAG_LEN,
	    WIRE_LEN_PREFIX);
	printf("| frame | JSON | sealed | on the stream | Rust tool, sealed |\n"
	    "|---|---:|---:|---:|---:|\n");

	make_msg(&c, &f, "", 0, 0);
	row(&c, "`msg`, empty body", &f, "203");
	frame_clear(&f);
	make_msg(&c, &f, "", 1, 1);
	row(&c, "`msg`, empty body, with `to` and `reply_to`", &f, "238");
	frame_clear(&f);
	make_msg(&c, &f, "can you look at #42 when you have a minute?", 0, 0);
	row(&c, "`msg`, a 43-byte chat line", &f, "");
	frame_clear(&f);
	make_ack(&c, &f, ACK_DELIVERED);
	row(&c, "`ack` `delivered`", &f, "80");
	make_ack(&c, &f, ACK_READ);
	row(&c, "`ack` `read`", &f, "");
	make_hello(&c, &f, "", 1, 0);
	row(&c, "`hello`, no about, 1 address, empty history", &f,
	    "about 200");
	make_hello(&c, &f, "Claude Code on ana's laptop", 3, 1234);
	hello_typical = row(&c, "`hello`, 27-byte about, 3 addresses", &f,
	    "about 200");
	make_peers(&c, &f, v, 1);
	row(&c, "`peers`, presence announcement (1 member, every 10 s)", &f,
	    "");
	make_peers(&c, &f, v, 6);
	peers8 = row(&c, "`peers` on connecting, room of 8 (6 members)", &f, "");
	memset(&f, 0, sizeof(f));
	f.type = FRAME_SYNC;
	row(&c, "`sync`, nothing held", &f, "");
	if ((f.u.sync.have = calloc(FRAME_SYNC_MAX,
	    sizeof(*f.u.sync.have))) == NULL)
		fail("out of memory");
	for (i = 0; i < FRAME_SYNC_MAX; i++) {
		static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";

		for (size_t j = 0; j < PAPO_MSGID_LEN; j++)
			f.u.sync.have[i][j] = b32[(i >> (j % 3 * 5)) % 32];
		f.u.sync.have[i][PAPO_MSGID_LEN] = '\0';
	}
	f.u.sync.since = WIRE_TS;
	f.u.sync.n = FRAME_SYNC_MAX;
	row(&c, "`sync`, 4,096 ids (its limit)", &f, "");
	frame_clear(&f);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_BYE;
	f.u.bye.ts = WIRE_TS;
	if (frame_bye_sign(&f.u.bye, &c.keys, &c.me) != 0)
		fail("frame_bye_sign failed");
	row(&c, "`bye`", &f, "");

	printf("\nA connection's greeting, each way: in a room of 2, the "
	    "`hello` alone, %zu bytes (with nobody else to tell of, no `peers` "
	    "frame is sent); in a room of 8, the `hello` and a `peers` frame "
	    "of the 6 other members, %zu bytes.  The `hello` itself does not "
	    "grow with the room.\n", hello_typical, hello_typical + peers8);

	make_msg(&c, &f, "", 1, 1);
	field_costs("`msg`, empty body, with `to` and `reply_to`", &f);
	json = json_of(&f);
	sig_cost = field_cost(json, "sig");
	if (sig_cost != 86 + strlen(",\"sig\":\"\""))
		fail("the signature costs %zu bytes, expected 95", sig_cost);
	/* The room id and the frame-type label are signed, never sent: the
	 * receiver puts in its own, so a frame from another room fails. */
	sec_room_id_format(&c.keys, roomid);
	if (strstr(json, roomid) != NULL || strstr(json, "papo msg") != NULL)
		fail("the room id or the label is in the JSON text");
	layout = 12 + 16 + PAPO_MSGID_LEN + 32 + 8 + 1 + strlen(f.u.msg.name) +
	    1 + 32 + 1 + PAPO_MSGID_LEN + 4 + f.u.msg.body_len;
	printf("\nThe signature costs %zu bytes of every `msg` and `ack`: 86 "
	    "characters of base64url for its 64 bytes, and `,\"sig\":\"\"`.  "
	    "The binding to the frame type and the room costs nothing on the "
	    "wire: the label (12 bytes) and the room id (16) are only in the "
	    "%zu bytes that are signed, and each receiver supplies its own.\n",
	    sig_cost, layout);
	free(json);
	frame_clear(&f);
	return 0;
}
