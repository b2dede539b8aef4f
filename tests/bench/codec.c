/*
 * codec.c: the frame codec's baseline benchmark (docs/CODEC.md).
 *
 * One hello, then 1,000 msg frames with realistic bodies, are signed,
 * encoded and sealed, then opened, decoded and verified: once by frame.h's
 * public functions ("ours"), once by a baseline written here the way a
 * plain codec over an intermediate cJSON tree would be (build a tree,
 * cJSON_PrintUnformatted, seal; open, cJSON_Parse, walk the tree with type
 * checks into the same structs).  Both sides do the same work with the same
 * checks: the same field rules, limits, UTF-8 and printable-name checks,
 * signature layout and AEAD.  Before timing anything the program asserts
 * that each side's JSON text, signatures and sealed frames are accepted by
 * the other into identical structs, and that both refuse the same broken
 * frames with the same error; a failed assertion exits 1.
 *
 * The passes over the scenario are interleaved (baseline, ours, baseline,
 * ours, ...), grouped in runs with the load average beside each; the
 * summary gives medians with their spread and the kill criterion
 * (ours/baseline above 1.0 fails), judged on the ratios of adjacent
 * passes.  Then the time of ours is broken down by stage (JSON, AEAD,
 * signatures), each stage timed alone over the same frames.  Times are the
 * thread's CPU time unless -w asks for the wall clock.  The program
 * reports; it is not a timed ctest, and it exits 0 whatever the verdict.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/b32.h"
#include "lib/utf8.h"
#include "node/wire/frame.h"

#define BENCH_AUTHORS 4
#define BENCH_INT_MAX 9007199254740992.0   /* 2^53, as in frame.c */
#define BENCH_SIG_B64_LEN 86               /* 64 bytes, base64url */
#define BENCH_TS0 1764480000000ull         /* 2025-11-30, in ms */

/* Defaults: the scenario; 11 runs of 5 pairs of passes. */
#define BENCH_PAIRS 11
#define BENCH_REPS 5
#define BENCH_MSGS 1000

static void fail(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

static void
fail(const char *fmt, ...)
{
	va_list ap;

	fputs("codec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A small deterministic generator (splitmix64), so that every run of the
 * program measures the same bodies. */
struct rng {
	uint64_t s;
};

static uint64_t
rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t
rng_below(struct rng *r, size_t n)
{
	return (size_t)(rng_next(r) % n);
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define PICK(r, a) ((a)[rng_below((r), NELEM(a))])

/* The clock every figure is read from: by default the CPU time of this
 * thread, so that time spent waiting for a core on a shared machine is not
 * counted against whichever side happened to be running; -w switches to
 * the monotonic wall clock.  Set once, by main, before anything is timed. */
static clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The scenario: bodies as agents write them.  Short chat lines, paragraphs,
 * code with quotes, backslashes, tabs and newlines (each of which JSON
 * escapes), text in other scripts, and now and then a pasted log with
 * terminal colour codes (control characters, escaped as \u001b).
 */

static const char *const chat_lines[] = {
	"ok", "on it", "lgtm \xf0\x9f\x91\x8d", "done, pushed to main",
	"can you look at #42 when you have a minute?",
	"tests are green on my side", "rebasing on top of bo's branch now",
	"Build broke again: \"undefined reference to `frame_seal'\"",
	"which branch?", "merci !", "j\xc3\xa1 vou ver isso",
	"\xe4\xba\x86\xe8\xa7\xa3\xe3\x81\xa7\xe3\x81\x99", "\xf0\x9f\x91\x80",
	"back in 5", "ship it", "the flaky one is e2e_mesh32, not mine",
	"I'll take the docs, you take the tests?",
	"\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82! "
	    "\xd0\x9f\xd0\xbe\xd1\x81\xd0\xbc\xd0\xbe\xd1\x82\xd1\x80\xd1\x8e "
	    "\xd0\xb2\xd0\xb5\xd1\x87\xd0\xb5\xd1\x80\xd0\xbe\xd0\xbc.",
	"\xc2\xbfqui\xc3\xa9n tiene el lock de serve.json?",
	"ack, closing the issue",
};

static const char *const sentences[] = {
	"I went through the outbox code again and I think the retry timer is fine.",
	"The real problem is that the ack for the second copy never reaches the "
	    "author when the path goes through a member that has just restarted.",
	"So the message stays queued even though everybody has it.",
	"I'd rather fix it in gossip.c than add another timer.",
	"Bo's trace shows the hello arriving before the peers frame, which is "
	    "what we expect.",
	"After that the sync request lists 4,096 ids and the answer carries the "
	    "12 we were missing.",
	"None of this touches the wire format, so old and new nodes can stay in "
	    "the same room.",
	"If nobody objects I'll open a PR tonight and ask for a review tomorrow.",
	"The benchmark numbers are in the issue; the short version is that "
	    "signatures dominate.",
	"We should also check what happens when the laptop's clock jumps back.",
	"It's the \"delivered\" state that matters here, not \"read\".",
};

static const char *const snippets[] = {
	"```c\nif (len > FRAME_JSON_MAX) {\n\tfprintf(stderr, \"frame too big: "
	    "%zu\\n\", len);\n\treturn -1;\n}\n```",
	"```sh\ngrep -E '\"t\":\"(msg|ack)\"' log.jsonl | sed 's/\\\\n/ /g' | "
	    "wc -l\n```",
	"```python\nprint(f\"{name!r}: {body}\")  # the \\\\ stays\n"
	    "path = r\"C:\\Users\\ana\\papo\"\n```",
	"```json\n{\"text\": \"she said \\\"hi\\\"\", \"to\": \"bo\", "
	    "\"tabs\": \"a\\tb\"}\n```",
	"regex: ^\\s*(\\d{4})-(\\d{2})-(\\d{2})T[^\"]+\"$",
	"```\nTraceback (most recent call last):\n  File \"app.py\", line 12, "
	    "in <module>\n    raise ValueError('bad \\'quote\\'')\n"
	    "ValueError: bad 'quote'\n```",
	"```js\nconst s = `line 1\\nline 2`;\t// template\n"
	    "console.log(JSON.stringify({ a: \"\\u00e9\" }));\n```",
	"```diff\n-\tif (n > max)\n+\tif (n >= max)\n \t\treturn too_long;\n```",
};

static const char *const foreign[] = {
	"A\xc3\xa7\xc3\xa3o conclu\xc3\xad" "da: o n\xc3\xb3 reconectou em 0,4 s e "
	    "a sincroniza\xc3\xa7\xc3\xa3o trouxe 12 mensagens.",
	"\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xae\xe3\x83\x8e\xe3\x83\xbc\xe3\x83\x89"
	    "\xe3\x81\xaf\xe5\x86\x8d\xe8\xb5\xb7\xe5\x8b\x95\xe5\xbe\x8c\xe3\x81"
	    "\xab\xe3\x81\x99\xe3\x81\x90\xe8\xbf\xbd\xe3\x81\x84\xe3\x81\xa4\xe3"
	    "\x81\x8d\xe3\x81\xbe\xe3\x81\x97\xe3\x81\x9f\xe3\x80\x82",
	"\xce\x95\xce\xbb\xce\xad\xce\xb3\xce\xbe\xce\xb1\xce\xbc\xce\xb5 \xcf\x84"
	    "\xce\xbf \xce\xba\xce\xbb\xce\xb5\xce\xb9\xce\xb4\xce\xaf \xcf\x84\xce"
	    "\xbf\xcf\x85 \xce\xb4\xcf\x89\xce\xbc\xce\xb1\xcf\x84\xce\xaf\xce\xbf"
	    "\xcf\x85.",
	"\xd0\x93\xd0\xbe\xd1\x82\xd0\xbe\xd0\xb2\xd0\xbe: \xd0\xb8\xd1\x81\xd0"
	    "\xbf\xd1\x80\xd0\xb0\xd0\xb2\xd0\xb8\xd0\xbb \xd0\xb4\xd0\xb2\xd0\xbe"
	    "\xd0\xb9\xd0\xbd\xd1\x83\xd1\x8e \xd0\xbf\xd1\x80\xd0\xbe\xd0\xb2\xd0"
	    "\xb5\xd1\x80\xd0\xba\xd1\x83 UTF-8.",
	"emoji check: \xf0\x9f\x8e\x89\xf0\x9f\x9a\x80\xe2\x9c\x85 and a family "
	    "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91"
	    "\xa7",
	"na\xc3\xafve caf\xc3\xa9, stra\xc3\x9f" "e, \xc3\x98resund, \xc4\xb0stanbul, "
	    "\xc3\xb1" "and\xc3\xba",
};

static const char *const log_levels[] = {
	"INFO ", "DEBUG", "\x1b[33mWARN\x1b[0m ", "INFO ", "\x1b[31mERROR\x1b[0m",
};

static void
body_add(struct buf *b, const char *s)
{
	if (buf_add(b, s, strlen(s)) == -1)
		fail("a generated body went over its limit");
}

/* Fills b with one body; the kinds and their shares are in docs/CODEC.md. */
static void
make_body(struct rng *r, struct buf *b)
{
	size_t kind = rng_below(r, 100), k, i;
	char line[256];

	if (kind < 1)
		return;                                     /* empty */
	if (kind < 46) {
		body_add(b, PICK(r, chat_lines));
	} else if (kind < 66) {
		k = 3 + rng_below(r, 6);
		for (i = 0; i < k; i++) {
			if (i > 0)
				body_add(b, rng_below(r, 4) == 0 ? "\n\n" : " ");
			body_add(b, PICK(r, sentences));
		}
	} else if (kind < 84) {
		body_add(b, PICK(r, chat_lines));
		body_add(b, ":\n");
		k = 1 + rng_below(r, 2);
		for (i = 0; i < k; i++) {
			if (i > 0)
				body_add(b, "\n\nand:\n");
			body_add(b, PICK(r, snippets));
		}
	} else if (kind < 95) {
		k = 1 + rng_below(r, 3);
		for (i = 0; i < k; i++) {
			if (i > 0)
				body_add(b, "\n");
			body_add(b, PICK(r, foreign));
		}
	} else {
		k = 30 + rng_below(r, 50);
		body_add(b, "here is the log:\n");
		for (i = 0; i < k; i++) {
			if (rng_below(r, 8) == 0)
				snprintf(line, sizeof(line), "  frame {\"t\":\"ack\","
				    "\"state\":\"delivered\"} path=C:\\papo\\%zu"
				    "\\log.jsonl\n", i);
			else
				snprintf(line, sizeof(line), "2026-11-30T06:%02zu:"
				    "%02zu.%03zuZ %s gossip: peer \"bo\" connected via "
				    "[2001:db8::%zx]:7778 (rtt %zu ms)\n", i % 60,
				    rng_below(r, 60), rng_below(r, 1000),
				    PICK(r, log_levels), rng_below(r, 4096),
				    1 + rng_below(r, 300));
			body_add(b, line);
		}
	}
}

struct scenario {
	struct room_keys keys;
	struct room_keys other;                  /* another room's */
	struct identity authors[BENCH_AUTHORS];
	size_t n;                                /* frames: hello + messages */
	struct frame *f;
	size_t *author;                          /* who signs f[i] */
	/* What the scenario holds, for the report. */
	size_t body_bytes, body_max, with_to, with_reply_to, escaped;
};

static const char *const author_names[BENCH_AUTHORS] = {
	"ana", "bo", "claude-laptop", "jo\xc3\xa3o",
};

static void
msgid_make(struct rng *r, char out[PAPO_MSGID_LEN + 1])
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";

	for (size_t i = 0; i < PAPO_MSGID_LEN; i++)
		out[i] = alphabet[rng_below(r, 32)];
	out[PAPO_MSGID_LEN] = '\0';
}

static void
scenario_init(struct scenario *sc, size_t nmsgs)
{
	struct rng r = { 0x7061706f636f6465ull };
	uint8_t secret[32], seed[32];
	struct frame_hello *h;
	size_t i, a;

	memset(sc, 0, sizeof(*sc));
	for (i = 0; i < 32; i++)
		secret[i] = (uint8_t)i;
	sec_room_keys(secret, &sc->keys);
	secret[0] ^= 1;
	sec_room_keys(secret, &sc->other);
	for (a = 0; a < BENCH_AUTHORS; a++) {
		memset(seed, (int)(a + 1), sizeof(seed));
		crypto_sign_seed_keypair(sc->authors[a].pk, sc->authors[a].sk, seed);
	}
	sc->n = nmsgs + 1;
	if ((sc->f = calloc(sc->n, sizeof(*sc->f))) == NULL ||
	    (sc->author = calloc(sc->n, sizeof(*sc->author))) == NULL)
		fail("out of memory");

	h = &sc->f[0].u.hello;
	sc->f[0].type = FRAME_HELLO;
	h->version = FRAME_VERSION;
	memcpy(h->id, sc->authors[0].pk, 32);
	strcpy(h->name, author_names[0]);
	strcpy(h->about, "Claude Code on ana's laptop");
	if (addr_parse("192.168.1.20:7778", &h->addr[0]) == -1 ||
	    addr_parse("[2001:db8::20]:7778", &h->addr[1]) == -1 ||
	    addr_parse("127.0.0.1:7778", &h->addr[2]) == -1)
		fail("addr_parse refused a test address");
	h->naddr = 3;
	h->msgs = 1234;
	for (i = 0; i < 32; i++)
		h->digest[i] = (uint8_t)rng_next(&r);
	if (addr_parse("203.0.113.7:40001", &h->obs) == -1)
		fail("addr_parse refused a test address");

	for (i = 1; i < sc->n; i++) {
		struct frame_msg *m = &sc->f[i].u.msg;
		struct buf b;

		sc->f[i].type = FRAME_MSG;
		a = rng_below(&r, BENCH_AUTHORS);
		sc->author[i] = a;
		msgid_make(&r, m->id);
		memcpy(m->from, sc->authors[a].pk, 32);
		strcpy(m->name, author_names[a]);
		m->ts = BENCH_TS0 + i * 1700 + rng_below(&r, 1000);
		buf_init(&b, PAPO_BODY_MAX + 1);
		make_body(&r, &b);
		if (buf_u8(&b, 0) == -1)
			fail("a generated body went over its limit");
		m->body = (char *)b.p;
		m->body_len = b.len - 1;
		if (rng_below(&r, 100) < 15) {
			m->has_to = 1;
			memcpy(m->to, sc->authors[(a + 1 +
			    rng_below(&r, BENCH_AUTHORS - 1)) % BENCH_AUTHORS].pk, 32);
			sc->with_to++;
		}
		if (i > 1 && rng_below(&r, 100) < 30) {
			m->has_reply_to = 1;
			memcpy(m->reply_to, sc->f[1 + rng_below(&r, i - 1)].u.msg.id,
			    PAPO_MSGID_LEN + 1);
			sc->with_reply_to++;
		}
		sc->body_bytes += m->body_len;
		if (m->body_len > sc->body_max)
			sc->body_max = m->body_len;
		if (strpbrk(m->body, "\"\\\n\t\x1b") != NULL)
			sc->escaped++;
	}
}

static void
scenario_free(struct scenario *sc)
{
	for (size_t i = 0; i < sc->n; i++)
		frame_clear(&sc->f[i]);
	free(sc->f);
	free(sc->author);
	sodium_memzero(sc->authors, sizeof(sc->authors));
}

/*
 * The baseline.  Written from docs/PROTOCOL.md alone, the way a codec over
 * an intermediate tree is written when nothing is tuned: every frame
 * becomes a cJSON tree, printed; every received frame is parsed into a
 * tree and walked once, child by child, with a type check per field.  It
 * covers the two types of the scenario (hello, msg); any other "t" is
 * refused.  Its checks are frame.c's, in substance and error codes: raw
 * NUL and UTF-8 of the whole text, nothing after the object, unknown,
 * duplicate, mistyped and missing fields, integers in [0, 2^53], ids,
 * addresses, name/about/body limits, printable names, body UTF-8 after
 * unescaping, the signature over the same binary layout.  It calls the
 * same validators (utf8.h, crypto.h, addr.h) so that what differs is the
 * codec and not the checks.
 */

/* The signed layout of docs/PROTOCOL.md, "Signatures", in one exact-size
 * allocation.  Returns NULL when out of memory. */
static uint8_t *
bl_msg_layout(const struct frame_msg *m, const struct room_keys *k,
    size_t *lenp)
{
	static const char label[] = "papo msg v1";      /* and its NUL */
	size_t nlen = strlen(m->name), len;
	uint8_t *p, *q;

	len = sizeof(label) + sizeof(k->id) + PAPO_MSGID_LEN + 32 + 8 + 1 +
	    nlen + 1 + (m->has_to ? 32 : 0) + 1 +
	    (m->has_reply_to ? PAPO_MSGID_LEN : 0) + 4 + m->body_len;
	if ((p = q = malloc(len)) == NULL)
		return NULL;
	memcpy(q, label, sizeof(label)), q += sizeof(label);
	memcpy(q, k->id, sizeof(k->id)), q += sizeof(k->id);
	memcpy(q, m->id, PAPO_MSGID_LEN), q += PAPO_MSGID_LEN;
	memcpy(q, m->from, 32), q += 32;
	for (int s = 56; s >= 0; s -= 8)
		*q++ = (uint8_t)(m->ts >> s);
	*q++ = (uint8_t)nlen;
	memcpy(q, m->name, nlen), q += nlen;
	*q++ = m->has_to ? 1 : 0;
	if (m->has_to)
		memcpy(q, m->to, 32), q += 32;
	*q++ = m->has_reply_to ? 1 : 0;
	if (m->has_reply_to)
		memcpy(q, m->reply_to, PAPO_MSGID_LEN), q += PAPO_MSGID_LEN;
	for (int s = 24; s >= 0; s -= 8)
		*q++ = (uint8_t)(m->body_len >> s);
	memcpy(q, m->body, m->body_len);
	*lenp = len;
	return p;
}

static int
bl_sign(struct frame_msg *m, const struct room_keys *k,
    const struct identity *id)
{
	uint8_t *p;
	size_t len;
	int rc;

	memcpy(m->from, id->pk, 32);
	if (m->body == NULL || (p = bl_msg_layout(m, k, &len)) == NULL)
		return -1;
	rc = crypto_sign_detached(m->sig, NULL, p, len, id->sk);
	free(p);
	return rc;
}

static enum frame_err
bl_verify(const struct frame_msg *m, const struct room_keys *k)
{
	enum frame_err e = FRAME_ERR_SIGNATURE;
	uint8_t *p;
	size_t len;

	if ((p = bl_msg_layout(m, k, &len)) == NULL)
		return FRAME_ERR_NOMEM;
	if (crypto_sign_verify_detached(m->sig, p, len, m->from) == 0)
		e = FRAME_OK;
	free(p);
	return e;
}

/* A person's name and about: the checks both sides make when encoding and
 * after decoding. */
static enum frame_err
bl_check_person(const char *name, const char *about)
{
	size_t n = strlen(name), a = about != NULL ? strlen(about) : 0;

	if (n == 0)
		return FRAME_ERR_VALUE;
	if (n > PAPO_NAME_MAX)
		return FRAME_ERR_NAME_LONG;
	if (!utf8_valid(name, n))
		return FRAME_ERR_UTF8;
	if (!utf8_printable(name, n))
		return FRAME_ERR_VALUE;
	if (about == NULL)
		return FRAME_OK;
	if (a > PAPO_ABOUT_MAX)
		return FRAME_ERR_ABOUT_LONG;
	if (!utf8_valid(about, a))
		return FRAME_ERR_UTF8;
	return utf8_printable(about, a) ? FRAME_OK : FRAME_ERR_VALUE;
}

static enum frame_err
bl_check_msg(const struct frame_msg *m)
{
	if (!sec_msgid_valid(m->id, NULL) ||
	    (m->has_reply_to && !sec_msgid_valid(m->reply_to, NULL)) ||
	    m->body == NULL || strlen(m->body) != m->body_len)
		return FRAME_ERR_VALUE;
	if (m->body_len > PAPO_BODY_MAX)
		return FRAME_ERR_BODY_LONG;
	if (!utf8_valid(m->body, m->body_len))
		return FRAME_ERR_UTF8;
	return bl_check_person(m->name, NULL);
}

static int
bl_add_key(cJSON *o, const char *name, const uint8_t key[32])
{
	char text[PAPO_ID_LEN + 1];

	b32_encode(key, 32, text);
	return cJSON_AddStringToObject(o, name, text) == NULL ? -1 : 0;
}

/* The tree of f, fields in the order of docs/PROTOCOL.md's table (frame.c
 * uses the same order, so the two texts can be compared byte for byte). */
static cJSON *
bl_tree(const struct frame *f)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	char text[ADDR_STRLEN > BENCH_SIG_B64_LEN + 1 ? ADDR_STRLEN :
	    BENCH_SIG_B64_LEN + 1];
	int r = 0;

	if (o == NULL)
		return NULL;
	if (f->type == FRAME_HELLO) {
		const struct frame_hello *h = &f->u.hello;

		r |= cJSON_AddStringToObject(o, "t", "hello") == NULL;
		r |= cJSON_AddNumberToObject(o, "v", h->version) == NULL;
		r |= bl_add_key(o, "id", h->id);
		r |= cJSON_AddStringToObject(o, "name", h->name) == NULL;
		r |= cJSON_AddStringToObject(o, "about", h->about) == NULL;
		if ((arr = cJSON_AddArrayToObject(o, "addrs")) == NULL)
			r = 1;
		for (size_t i = 0; r == 0 && i < h->naddr; i++) {
			cJSON *s;

			addr_format(&h->addr[i], text);
			if ((s = cJSON_CreateString(text)) == NULL)
				r = 1;
			else
				cJSON_AddItemToArray(arr, s);
		}
		r |= cJSON_AddNumberToObject(o, "msgs", (double)h->msgs) == NULL;
		r |= bl_add_key(o, "digest", h->digest);
		if (h->version >= 2) {
			addr_format(&h->obs, text);
			r |= cJSON_AddStringToObject(o, "obs", text) == NULL;
		}
		if (h->version >= 3)
			r |= cJSON_AddNumberToObject(o, "events",
			    (double)h->events) == NULL;
	} else {
		const struct frame_msg *m = &f->u.msg;

		r |= cJSON_AddStringToObject(o, "t", "msg") == NULL;
		r |= cJSON_AddStringToObject(o, "id", m->id) == NULL;
		r |= bl_add_key(o, "from", m->from);
		r |= cJSON_AddStringToObject(o, "name", m->name) == NULL;
		r |= cJSON_AddNumberToObject(o, "ts", (double)m->ts) == NULL;
		r |= cJSON_AddStringToObject(o, "body", m->body) == NULL;
		if (m->has_to)
			r |= bl_add_key(o, "to", m->to);
		if (m->has_reply_to)
			r |= cJSON_AddStringToObject(o, "reply_to",
			    m->reply_to) == NULL;
		sodium_bin2base64(text, sizeof(text), m->sig, 64,
		    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
		r |= cJSON_AddStringToObject(o, "sig", text) == NULL;
	}
	if (r != 0) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* The JSON text of f (cJSON-allocated), after the encoder's checks. */
static char *
bl_json(const struct frame *f)
{
	cJSON *o;
	char *text;

	if (f->type == FRAME_HELLO) {
		if (f->u.hello.naddr > PAPO_ADDR_MAX ||
		    bl_check_person(f->u.hello.name, f->u.hello.about) != FRAME_OK)
			return NULL;
	} else if (f->type != FRAME_MSG || bl_check_msg(&f->u.msg) != FRAME_OK) {
		return NULL;
	}
	if ((o = bl_tree(f)) == NULL)
		return NULL;
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

static int
bl_seal(const struct room_keys *k, const struct frame *f, struct buf *out)
{
	char *text;
	uint8_t *sealed;
	size_t len;
	int rc = -1;

	if ((text = bl_json(f)) == NULL)
		return -1;
	len = strlen(text);
	if (len <= FRAME_JSON_MAX &&
	    (sealed = buf_reserve(out, FRAME_SEAL_OVERHEAD + len)) != NULL) {
		randombytes_buf(sealed, FRAME_NONCE_LEN);
		crypto_aead_xchacha20poly1305_ietf_encrypt(sealed +
		    FRAME_NONCE_LEN, NULL, (const uint8_t *)text, len, NULL, 0,
		    NULL, sealed, k->seal);
		rc = 0;
	}
	/* The plaintext is wiped, as frame_seal wipes its copy. */
	sodium_memzero(text, len);
	cJSON_free(text);
	return rc;
}

static enum frame_err
bl_u64(const cJSON *c, uint64_t *v)
{
	double d = c->valuedouble;

	if (!(d >= 0 && d <= BENCH_INT_MAX) || floor(d) != d)
		return FRAME_ERR_VALUE;
	*v = (uint64_t)d;
	return FRAME_OK;
}

static enum frame_err
bl_text(const cJSON *c, char *out, size_t max, enum frame_err too_long)
{
	size_t n = strlen(c->valuestring);

	if (n > max)
		return too_long;
	memcpy(out, c->valuestring, n + 1);
	return FRAME_OK;
}

static enum frame_err
bl_msgid(const cJSON *c, char out[PAPO_MSGID_LEN + 1])
{
	if (!sec_msgid_valid(c->valuestring, NULL))
		return FRAME_ERR_VALUE;
	memcpy(out, c->valuestring, PAPO_MSGID_LEN + 1);
	return FRAME_OK;
}

static enum frame_err
bl_key(const cJSON *c, uint8_t out[32])
{
	return sec_id_parse(c->valuestring, out) == 0 ? FRAME_OK :
	    FRAME_ERR_VALUE;
}

/* One walk over a msg's children: each name is looked up in an if-chain,
 * its JSON type checked, its value converted at once. */
enum { M_T = 1, M_ID = 2, M_FROM = 4, M_NAME = 8, M_TS = 16, M_BODY = 32,
    M_TO = 64, M_REPLY = 128, M_SIG = 256,
    M_REQUIRED = M_T | M_ID | M_FROM | M_NAME | M_TS | M_BODY | M_SIG };

static enum frame_err
bl_walk_msg(const cJSON *o, struct frame_msg *m)
{
	const cJSON *c;
	unsigned seen = 0, bit;
	enum frame_err e = FRAME_OK;
	size_t n;

	cJSON_ArrayForEach(c, o) {
		const char *k = c->string;
		int want_string = 1;

		if (strcmp(k, "t") == 0)
			bit = M_T;
		else if (strcmp(k, "id") == 0)
			bit = M_ID;
		else if (strcmp(k, "from") == 0)
			bit = M_FROM;
		else if (strcmp(k, "name") == 0)
			bit = M_NAME;
		else if (strcmp(k, "ts") == 0)
			bit = M_TS, want_string = 0;
		else if (strcmp(k, "body") == 0)
			bit = M_BODY;
		else if (strcmp(k, "to") == 0)
			bit = M_TO;
		else if (strcmp(k, "reply_to") == 0)
			bit = M_REPLY;
		else if (strcmp(k, "sig") == 0)
			bit = M_SIG;
		else
			return FRAME_ERR_UNKNOWN_FIELD;
		if (seen & bit)
			return FRAME_ERR_DUPLICATE_FIELD;
		seen |= bit;
		if (want_string ? !cJSON_IsString(c) : !cJSON_IsNumber(c))
			return FRAME_ERR_FIELD_TYPE;
		switch (bit) {
		case M_ID:
			e = bl_msgid(c, m->id);
			break;
		case M_FROM:
			e = bl_key(c, m->from);
			break;
		case M_NAME:
			e = bl_text(c, m->name, PAPO_NAME_MAX,
			    FRAME_ERR_NAME_LONG);
			break;
		case M_TS:
			e = bl_u64(c, &m->ts);
			break;
		case M_BODY:
			n = strlen(c->valuestring);
			if (n > PAPO_BODY_MAX)
				return FRAME_ERR_BODY_LONG;
			if ((m->body = malloc(n + 1)) == NULL)
				return FRAME_ERR_NOMEM;
			memcpy(m->body, c->valuestring, n + 1);
			m->body_len = n;
			break;
		case M_TO:
			m->has_to = 1;
			e = bl_key(c, m->to);
			break;
		case M_REPLY:
			m->has_reply_to = 1;
			e = bl_msgid(c, m->reply_to);
			break;
		case M_SIG:
			if (strlen(c->valuestring) != BENCH_SIG_B64_LEN ||
			    sodium_base642bin(m->sig, 64, c->valuestring,
			    BENCH_SIG_B64_LEN, NULL, &n, NULL,
			    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
			    n != 64)
				e = FRAME_ERR_VALUE;
			break;
		}
		if (e != FRAME_OK)
			return e;
	}
	if ((seen & M_REQUIRED) != M_REQUIRED)
		return FRAME_ERR_MISSING_FIELD;
	/* cJSON unescapes \u sequences, so the body is checked again as it
	 * came out of the tree, as frame.c does. */
	return bl_check_msg(m);
}

enum { H_T = 1, H_V = 2, H_ID = 4, H_NAME = 8, H_ABOUT = 16, H_ADDRS = 32,
    H_MSGS = 64, H_DIGEST = 128, H_REQUIRED = 255, H_OBS = 256,
    H_EVENTS = 512 };

static enum frame_err
bl_walk_hello(const cJSON *o, struct frame_hello *h)
{
	const cJSON *c, *a;
	unsigned seen = 0, bit;
	enum frame_err e = FRAME_OK;
	uint64_t v = 0;

	cJSON_ArrayForEach(c, o) {
		const char *k = c->string;
		int ok;

		if (strcmp(k, "t") == 0)
			bit = H_T, ok = cJSON_IsString(c);
		else if (strcmp(k, "v") == 0)
			bit = H_V, ok = cJSON_IsNumber(c);
		else if (strcmp(k, "id") == 0)
			bit = H_ID, ok = cJSON_IsString(c);
		else if (strcmp(k, "name") == 0)
			bit = H_NAME, ok = cJSON_IsString(c);
		else if (strcmp(k, "about") == 0)
			bit = H_ABOUT, ok = cJSON_IsString(c);
		else if (strcmp(k, "addrs") == 0)
			bit = H_ADDRS, ok = cJSON_IsArray(c);
		else if (strcmp(k, "msgs") == 0)
			bit = H_MSGS, ok = cJSON_IsNumber(c);
		else if (strcmp(k, "digest") == 0)
			bit = H_DIGEST, ok = cJSON_IsString(c);
		else if (strcmp(k, "obs") == 0)
			bit = H_OBS, ok = cJSON_IsString(c);
		else if (strcmp(k, "events") == 0 && h->version >= 3)
			bit = H_EVENTS, ok = cJSON_IsNumber(c);
		else
			return FRAME_ERR_UNKNOWN_FIELD;
		if (seen & bit)
			return FRAME_ERR_DUPLICATE_FIELD;
		seen |= bit;
		if (!ok)
			return FRAME_ERR_FIELD_TYPE;
		switch (bit) {
		case H_V:
			if ((e = bl_u64(c, &v)) == FRAME_OK &&
			    (v == 0 || v > UINT32_MAX))
				e = FRAME_ERR_VALUE;
			h->version = (uint32_t)v;
			break;
		case H_ID:
			e = bl_key(c, h->id);
			break;
		case H_NAME:
			e = bl_text(c, h->name, PAPO_NAME_MAX,
			    FRAME_ERR_NAME_LONG);
			break;
		case H_ABOUT:
			e = bl_text(c, h->about, PAPO_ABOUT_MAX,
			    FRAME_ERR_ABOUT_LONG);
			break;
		case H_ADDRS:
			if (cJSON_GetArraySize(c) > PAPO_ADDR_MAX)
				return FRAME_ERR_TOO_MANY;
			cJSON_ArrayForEach(a, c) {
				if (!cJSON_IsString(a))
					return FRAME_ERR_FIELD_TYPE;
				if (addr_parse(a->valuestring,
				    &h->addr[h->naddr]) == -1)
					return FRAME_ERR_VALUE;
				h->naddr++;
			}
			break;
		case H_MSGS:
			e = bl_u64(c, &h->msgs);
			break;
		case H_DIGEST:
			e = bl_key(c, h->digest);
			break;
		case H_OBS:
			if (addr_parse(c->valuestring, &h->obs) == -1)
				e = FRAME_ERR_VALUE;
			break;
		case H_EVENTS:
			e = bl_u64(c, &h->events);
			break;
		}
		if (e != FRAME_OK)
			return e;
	}
	if ((seen & H_REQUIRED) != H_REQUIRED)
		return FRAME_ERR_MISSING_FIELD;
	/* Version 2 says where it sees us; version 1 knows no such field. */
	if (!!(seen & H_OBS) != (h->version >= 2))
		return (seen & H_OBS) ? FRAME_ERR_UNKNOWN_FIELD :
		    FRAME_ERR_MISSING_FIELD;
	return bl_check_person(h->name, h->about);
}

/* Decodes NUL-terminated JSON text of len bytes; verify says whether to
 * check the signature (the breakdown times the JSON work alone). */
static enum frame_err
bl_decode(const struct room_keys *k, const char *text, size_t len,
    int verify, struct frame *out)
{
	const cJSON *t;
	cJSON *o;
	enum frame_err e;

	memset(out, 0, sizeof(*out));
	if (len > FRAME_JSON_MAX)
		return FRAME_ERR_TOO_BIG;
	if (memchr(text, '\0', len) != NULL)
		return FRAME_ERR_JSON;
	if (!utf8_valid(text, len))
		return FRAME_ERR_UTF8;
	/* Null-terminated mode: only white space may follow the object. */
	if ((o = cJSON_ParseWithOpts(text, NULL, 1)) == NULL)
		return FRAME_ERR_JSON;
	if (!cJSON_IsObject(o))
		e = FRAME_ERR_JSON;
	else if ((t = cJSON_GetObjectItemCaseSensitive(o, "t")) == NULL)
		e = FRAME_ERR_MISSING_FIELD;
	else if (!cJSON_IsString(t))
		e = FRAME_ERR_FIELD_TYPE;
	else if (strcmp(t->valuestring, "msg") == 0) {
		out->type = FRAME_MSG;
		e = bl_walk_msg(o, &out->u.msg);
		if (e == FRAME_OK && verify)
			e = bl_verify(&out->u.msg, k);
	} else if (strcmp(t->valuestring, "hello") == 0) {
		out->type = FRAME_HELLO;
		e = bl_walk_hello(o, &out->u.hello);
	} else
		e = FRAME_ERR_TYPE;
	cJSON_Delete(o);
	if (e != FRAME_OK)
		frame_clear(out);
	return e;
}

static enum frame_err
bl_open(const struct room_keys *k, const uint8_t *in, size_t len,
    struct frame *out)
{
	unsigned long long plen;
	char *text;
	enum frame_err e;

	memset(out, 0, sizeof(*out));
	if (len > PAPO_FRAME_MAX)
		return FRAME_ERR_TOO_BIG;
	if (len < FRAME_SEAL_OVERHEAD)
		return FRAME_ERR_SEAL;
	/* One byte more than the plaintext: cJSON_Parse wants a NUL. */
	if ((text = malloc(len - FRAME_SEAL_OVERHEAD + 1)) == NULL)
		return FRAME_ERR_NOMEM;
	if (crypto_aead_xchacha20poly1305_ietf_decrypt((uint8_t *)text, &plen,
	    NULL, in + FRAME_NONCE_LEN, len - FRAME_NONCE_LEN, NULL, 0, in,
	    k->seal) != 0)
		e = FRAME_ERR_SEAL;
	else {
		text[plen] = '\0';
		e = bl_decode(k, text, (size_t)plen, 1, out);
	}
	free(text);
	return e;
}

/* The two sides, as the timed loop calls them. */
struct side {
	const char *name;
	int (*sign)(struct frame_msg *, const struct room_keys *,
	    const struct identity *);
	int (*seal)(const struct room_keys *, const struct frame *,
	    struct buf *);
	enum frame_err (*open)(const struct room_keys *, const uint8_t *,
	    size_t, struct frame *);
};

/* Ours, as a connection of the version spoken opens frames. */
static enum frame_err
ours_open(const struct room_keys *k, const uint8_t *in, size_t len,
    struct frame *out)
{
	return frame_open(k, in, len, frame_flags(FRAME_VERSION), out);
}

static const struct side sides[2] = {
	{ "baseline", bl_sign, bl_seal, bl_open },
	{ "ours", frame_msg_sign, frame_seal, ours_open },
};

/*
 * Checks, before anything is timed.
 */

static int
frame_equal(const struct frame *a, const struct frame *b)
{
	if (a->type != b->type)
		return 0;
	if (a->type == FRAME_HELLO) {
		const struct frame_hello *x = &a->u.hello, *y = &b->u.hello;

		if (x->version != y->version || memcmp(x->id, y->id, 32) ||
		    strcmp(x->name, y->name) || strcmp(x->about, y->about) ||
		    x->naddr != y->naddr || x->msgs != y->msgs ||
		    memcmp(x->digest, y->digest, 32) ||
		    (x->version >= 2 && !addr_equal(&x->obs, &y->obs)))
			return 0;
		for (size_t i = 0; i < x->naddr; i++)
			if (!addr_equal(&x->addr[i], &y->addr[i]))
				return 0;
		return 1;
	}
	if (a->type == FRAME_MSG) {
		const struct frame_msg *x = &a->u.msg, *y = &b->u.msg;

		return strcmp(x->id, y->id) == 0 &&
		    memcmp(x->from, y->from, 32) == 0 &&
		    strcmp(x->name, y->name) == 0 && x->ts == y->ts &&
		    x->body_len == y->body_len &&
		    memcmp(x->body, y->body, x->body_len) == 0 &&
		    x->body[x->body_len] == '\0' && y->body[y->body_len] == '\0' &&
		    x->has_to == y->has_to &&
		    (!x->has_to || memcmp(x->to, y->to, 32) == 0) &&
		    x->has_reply_to == y->has_reply_to &&
		    (!x->has_reply_to || strcmp(x->reply_to, y->reply_to) == 0) &&
		    memcmp(x->sig, y->sig, 64) == 0;
	}
	return 0;
}

/* Seals arbitrary text with the room key, as a peer that wrote it would. */
static void
seal_text(const struct room_keys *k, const char *text, size_t len,
    struct buf *out)
{
	uint8_t *p;

	buf_reset(out);
	if ((p = buf_reserve(out, FRAME_SEAL_OVERHEAD + len)) == NULL)
		fail("seal_text: %zu bytes do not fit", len);
	randombytes_buf(p, FRAME_NONCE_LEN);
	crypto_aead_xchacha20poly1305_ietf_encrypt(p + FRAME_NONCE_LEN, NULL,
	    (const uint8_t *)text, len, NULL, 0, NULL, p, k->seal);
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		fail("out of memory");
	return p;
}

static char *
xstrdup(const char *s)
{
	return strcpy(xmalloc(strlen(s) + 1), s);
}

/* s with its first "from" replaced by "to" (malloc'd). */
static char *
subst(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	size_t n = strlen(s) - strlen(from) + strlen(to);
	char *r;

	if (p == NULL)
		fail("subst: \"%s\" not found in %s", from, s);
	r = xmalloc(n + 1);
	memcpy(r, s, (size_t)(p - s));
	strcpy(r + (p - s), to);
	strcat(r, p + strlen(from));
	return r;
}

/* Ours' JSON text of f (malloc'd, NUL-terminated). */
static char *
ours_json(const struct frame *f)
{
	struct buf b;

	buf_init(&b, FRAME_JSON_MAX + 1);
	if (frame_encode(f, &b) == -1 || buf_u8(&b, 0) == -1)
		fail("frame_encode refused a %s frame", frame_type_name(f->type));
	return (char *)b.p;
}

/* Both sides must give want for these sealed bytes. */
static void
expect_both(const struct room_keys *k, const char *what, const struct buf *s,
    enum frame_err want)
{
	struct frame a, b;
	enum frame_err ea = ours_open(k, s->p, s->len, &a);
	enum frame_err eb = bl_open(k, s->p, s->len, &b);

	frame_clear(&a);
	frame_clear(&b);
	if (ea != want || eb != want)
		fail("%s: ours gives \"%s\", the baseline \"%s\", expected \"%s\"",
		    what, frame_strerror(ea), frame_strerror(eb),
		    frame_strerror(want));
}

static void
expect_text(const struct room_keys *k, const char *what, const char *text,
    size_t len, enum frame_err want)
{
	struct buf s;

	buf_init(&s, PAPO_FRAME_MAX + 1);
	seal_text(k, text, len, &s);
	expect_both(k, what, &s, want);
	buf_free(&s);
}

/* Each edit of a good msg's text breaks exactly one rule. */
static void
check_refusals(const struct scenario *sc)
{
	const struct room_keys *k = &sc->keys;
	struct frame f, g;
	struct buf s;
	char *good, *t, ts[32], edit[48];
	size_t i;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	strcpy(f.u.msg.id, "abcdefgh23");
	strcpy(f.u.msg.name, "ana");
	f.u.msg.ts = BENCH_TS0 + 123;
	f.u.msg.body = xstrdup("a\xc3\xa7\xc3\xa3o \"quoted\"\n\\ end");
	f.u.msg.body_len = strlen(f.u.msg.body);
	f.u.msg.has_to = 1;
	memcpy(f.u.msg.to, sc->authors[1].pk, 32);
	f.u.msg.has_reply_to = 1;
	strcpy(f.u.msg.reply_to, "zzzzzzzzzz");
	if (frame_msg_sign(&f.u.msg, k, &sc->authors[0]) != 0)
		fail("cannot sign the test message");
	good = ours_json(&f);
	snprintf(ts, sizeof(ts), "\"ts\":%llu", (unsigned long long)f.u.msg.ts);

	buf_init(&s, PAPO_FRAME_MAX + 1);
	expect_text(k, "the good message", good, strlen(good), FRAME_OK);
	t = xmalloc(strlen(good) + 8);
	sprintf(t, "%s \r\n\t", good);
	expect_text(k, "white space after the object", t, strlen(t), FRAME_OK);
	sprintf(t, "%sx", good);
	expect_text(k, "text after the object", t, strlen(t), FRAME_ERR_JSON);
	free(t);

	if (frame_seal(k, &f, &s) != 0)
		fail("frame_seal refused the test message");
	s.p[FRAME_NONCE_LEN + 3] ^= 1;
	expect_both(k, "a flipped ciphertext byte", &s, FRAME_ERR_SEAL);
	buf_reset(&s);
	if (frame_seal(&sc->other, &f, &s) != 0)
		fail("frame_seal refused the test message");
	expect_both(k, "sealed in another room", &s, FRAME_ERR_SEAL);

	/* Signed for another room, sealed for this one: the room id in the
	 * signed layout is what refuses it. */
	g = f;
	if (bl_sign(&g.u.msg, &sc->other, &sc->authors[0]) != 0)
		fail("cannot sign the test message");
	buf_reset(&s);
	if (frame_seal(k, &g, &s) != 0)
		fail("frame_seal refused the test message");
	expect_both(k, "signed in another room", &s, FRAME_ERR_SIGNATURE);

	static const struct {
		const char *what, *from, *to;
		enum frame_err want;
	} edits[] = {
		{ "an altered body", "quoted", "Quoted",
		    FRAME_ERR_SIGNATURE },
		{ "an altered name", "\"name\":\"ana\"", "\"name\":\"anna\"",
		    FRAME_ERR_SIGNATURE },
		{ "an unknown field", "{\"t\":\"msg\"", "{\"t\":\"msg\",\"x\":1",
		    FRAME_ERR_UNKNOWN_FIELD },
		{ "a field twice", "{\"t\":\"msg\"", "{\"t\":\"msg\",\"name\":\"x\"",
		    FRAME_ERR_DUPLICATE_FIELD },
		{ "a number for a string", "\"reply_to\":\"zzzzzzzzzz\"",
		    "\"reply_to\":12", FRAME_ERR_FIELD_TYPE },
		{ "a bad message id", "\"id\":\"abcdefgh23\"", "\"id\":\"ABC\"",
		    FRAME_ERR_VALUE },
		{ "a bad addressee", "\"to\":\"", "\"to\":\"x", FRAME_ERR_VALUE },
		{ "a short signature", "\",\"sig\":\"", "\",\"sig\":\"AA",
		    FRAME_ERR_VALUE },
		{ "an empty name", "\"name\":\"ana\"", "\"name\":\"\"",
		    FRAME_ERR_VALUE },
		{ "a control character in the name", "\"name\":\"ana\"",
		    "\"name\":\"a\\u0007a\"", FRAME_ERR_VALUE },
		{ "a 65-byte name", "\"name\":\"ana\"", "\"name\":\"aaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
		    FRAME_ERR_NAME_LONG },
		{ "invalid UTF-8", "quoted", "quo\xff" "ed",
		    FRAME_ERR_UTF8 },
		{ "invalid UTF-8 in a field name", "{\"t\":\"msg\"",
		    "{\"t\":\"msg\",\"\xc3\":1", FRAME_ERR_UTF8 },
		{ "a lone surrogate escape", "quoted", "quo\\ud800ted",
		    FRAME_ERR_JSON },
		{ "an unknown type", "{\"t\":\"msg\"", "{\"t\":\"nope\"",
		    FRAME_ERR_TYPE },
		{ "a type that is not a string", "{\"t\":\"msg\"", "{\"t\":2",
		    FRAME_ERR_FIELD_TYPE },
	};
	for (i = 0; i < NELEM(edits); i++) {
		t = subst(good, edits[i].from, edits[i].to);
		expect_text(k, edits[i].what, t, strlen(t), edits[i].want);
		free(t);
	}

	/* Edits that need the text around them computed. */
	t = subst(good, ts, "\"ts\":\"1\"");
	expect_text(k, "a string for a number", t, strlen(t),
	    FRAME_ERR_FIELD_TYPE);
	free(t);
	snprintf(edit, sizeof(edit), "%s.5", ts);
	t = subst(good, ts, edit);
	expect_text(k, "a fraction", t, strlen(t), FRAME_ERR_VALUE);
	free(t);
	t = subst(good, ts, "\"ts\":-1");
	expect_text(k, "a negative time", t, strlen(t), FRAME_ERR_VALUE);
	free(t);
	t = xstrdup(good);
	strcpy(strstr(t, ",\"sig\":\""), "}");
	expect_text(k, "no signature", t, strlen(t), FRAME_ERR_MISSING_FIELD);
	free(t);
	t = xstrdup(good);
	t[6] = '\0';                                    /* inside "msg" */
	expect_text(k, "a raw NUL", t, strlen(good), FRAME_ERR_JSON);
	free(t);
	expect_text(k, "an array", "[1]", 3, FRAME_ERR_JSON);
	t = xstrdup("{\"id\":\"abcdefgh23\"}");
	expect_text(k, "no type", t, strlen(t), FRAME_ERR_MISSING_FIELD);
	free(t);
	/* The body's text replaced by one byte over the limit. */
	{
		const char *p = strstr(good, "\"body\":\""), *q;
		size_t n = (size_t)(p - good) + 8;

		q = strstr(p, "\\\\ end\"");
		t = xmalloc(strlen(good) + PAPO_BODY_MAX + 2);
		memcpy(t, good, n);
		memset(t + n, 'a', PAPO_BODY_MAX + 1);
		strcpy(t + n + PAPO_BODY_MAX + 1, q + 6);
		expect_text(k, "a body one byte over 48 KiB", t, strlen(t),
		    FRAME_ERR_BODY_LONG);
		free(t);
	}

	/* The hello's own rules. */
	{
		struct frame h = sc->f[0];
		char *hg = ours_json(&h), about[PAPO_ABOUT_MAX + 16];

		expect_text(k, "the good hello", hg, strlen(hg), FRAME_OK);
		t = subst(hg, "\"addrs\":[", "\"addrs\":[\"1.2.3.4:1\",\"1.2.3.4:2\","
		    "\"1.2.3.4:3\",\"1.2.3.4:4\",\"1.2.3.4:5\",\"1.2.3.4:6\",");
		expect_text(k, "a hello with 9 addresses", t, strlen(t),
		    FRAME_ERR_TOO_MANY);
		free(t);
		t = subst(hg, "\"addrs\":[", "\"addrs\":[\"1.2.3.4:0\",");
		expect_text(k, "a hello with port 0", t, strlen(t),
		    FRAME_ERR_VALUE);
		free(t);
		memset(about, 'a', sizeof(about));
		memcpy(about, "\"about\":\"", 9);
		strcpy(about + 9 + PAPO_ABOUT_MAX + 1, "\"");
		t = subst(hg, "\"about\":\"Claude Code on ana's laptop\"", about);
		expect_text(k, "a 257-byte about", t, strlen(t),
		    FRAME_ERR_ABOUT_LONG);
		free(t);
		{
			char v[16];

			snprintf(v, sizeof(v), "\"v\":%u", (unsigned)FRAME_VERSION);
			t = subst(hg, v, "\"v\":0");
		}
		expect_text(k, "version 0", t, strlen(t), FRAME_ERR_VALUE);
		free(t);
		t = subst(hg, ",\"obs\":\"203.0.113.7:40001\"", "");
		expect_text(k, "a version 2 hello without obs", t, strlen(t),
		    FRAME_ERR_MISSING_FIELD);
		free(t);
		free(hg);
	}
	buf_free(&s);
	free(good);
	frame_clear(&f);
}

/* Each side accepts what the other sealed, into the frames it started
 * from; both make the same JSON text and the same signatures. */
static void
check_agreement(struct scenario *sc)
{
	struct buf s;
	struct frame out;
	enum frame_err e;
	size_t i;
	int a, b;

	buf_init(&s, PAPO_FRAME_MAX);
	for (i = 0; i < sc->n; i++) {
		struct frame *f = &sc->f[i];
		char *jo, *jb;

		if (f->type == FRAME_MSG) {
			struct frame_msg m = f->u.msg;

			if (bl_sign(&m, &sc->keys, &sc->authors[sc->author[i]]) ||
			    frame_msg_sign(&f->u.msg, &sc->keys,
			    &sc->authors[sc->author[i]]))
				fail("frame %zu: signing failed", i);
			if (memcmp(m.sig, f->u.msg.sig, 64) != 0)
				fail("frame %zu: the two signatures differ", i);
		}
		jo = ours_json(f);
		if ((jb = bl_json(f)) == NULL)
			fail("frame %zu: the baseline refused to encode it", i);
		if (strcmp(jo, jb) != 0)
			fail("frame %zu: the JSON texts differ:\n%s\n%s", i, jo, jb);
		free(jo);
		cJSON_free(jb);
		for (a = 0; a < 2; a++)
			for (b = 0; b < 2; b++) {
				buf_reset(&s);
				if (sides[a].seal(&sc->keys, f, &s) != 0)
					fail("frame %zu: %s cannot seal it", i,
					    sides[a].name);
				e = sides[b].open(&sc->keys, s.p, s.len, &out);
				if (e != FRAME_OK)
					fail("frame %zu: sealed by %s, %s refuses it: "
					    "%s", i, sides[a].name, sides[b].name,
					    frame_strerror(e));
				if (!frame_equal(&out, f))
					fail("frame %zu: sealed by %s, opened by %s "
					    "into another frame", i, sides[a].name,
					    sides[b].name);
				frame_clear(&out);
			}
	}
	buf_free(&s);
}

/*
 * Timing.
 */

struct sample {
	double enc, dec, total;                  /* ms for the whole scenario */
};

/* One pass of the scenario by one side: sign and seal every frame, then
 * open, decode and verify every frame.  The sealed buffers are kept from
 * one pass to the next, as a sender reuses its buffer. */
static struct sample
run_once(const struct side *sd, struct scenario *sc, struct buf *sealed)
{
	struct sample r;
	struct frame out;
	uint64_t t0, t1, t2;
	size_t i;

	t0 = now_ns();
	for (i = 0; i < sc->n; i++) {
		struct frame *f = &sc->f[i];

		if (f->type == FRAME_MSG && sd->sign(&f->u.msg, &sc->keys,
		    &sc->authors[sc->author[i]]) != 0)
			fail("%s: signing frame %zu failed", sd->name, i);
		buf_reset(&sealed[i]);
		if (sd->seal(&sc->keys, f, &sealed[i]) != 0)
			fail("%s: sealing frame %zu failed", sd->name, i);
	}
	t1 = now_ns();
	for (i = 0; i < sc->n; i++) {
		enum frame_err e = sd->open(&sc->keys, sealed[i].p,
		    sealed[i].len, &out);

		if (e != FRAME_OK || out.type != sc->f[i].type)
			fail("%s: opening frame %zu: %s", sd->name, i,
			    frame_strerror(e));
		frame_clear(&out);
	}
	t2 = now_ns();
	r.enc = (double)(t1 - t0) / 1e6;
	r.dec = (double)(t2 - t1) / 1e6;
	r.total = (double)(t2 - t0) / 1e6;
	return r;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct spread {
	double med, q1, q3, min, max;
};

/* The q-quantile of sorted v, interpolated linearly between ranks. */
static double
quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

/* Median, quartiles and range of v; sorts v. */
static struct spread
spread_of(double *v, size_t n)
{
	struct spread s;

	qsort(v, n, sizeof(*v), cmp_double);
	s.med = quantile(v, n, 0.5);
	s.q1 = quantile(v, n, 0.25);
	s.q3 = quantile(v, n, 0.75);
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

static void
loadavg(char out[64])
{
	FILE *fp = fopen("/proc/loadavg", "r");
	double a = 0, b = 0, c = 0;

	if (fp == NULL || fscanf(fp, "%lf %lf %lf", &a, &b, &c) != 3)
		snprintf(out, 64, "?");
	else
		snprintf(out, 64, "%.2f / %.2f / %.2f", a, b, c);
	if (fp != NULL)
		fclose(fp);
}

static void
cpu_model(char *out, size_t n)
{
	FILE *fp = fopen("/proc/cpuinfo", "r");
	char line[256], *p;

	snprintf(out, n, "unknown CPU");
	if (fp == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "model name", 10) == 0 &&
		    (p = strchr(line, ':')) != NULL) {
			p += 1 + strspn(p + 1, " \t");
			p[strcspn(p, "\n")] = '\0';
			snprintf(out, n, "%s", p);
			break;
		}
	fclose(fp);
}

static void
print_machine(void)
{
	char cpu[128], when[64];
	struct utsname u;
	time_t t = time(NULL);
	int sanitized = 0, optimized = 0;

#if defined(__SANITIZE_ADDRESS__)
	sanitized = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	sanitized = 1;
#endif
#endif
#ifdef __OPTIMIZE__
	optimized = 1;
#endif
	cpu_model(cpu, sizeof(cpu));
	uname(&u);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&t));
	printf("- date: %s\n", when);
	printf("- machine: %s, %ld CPUs online, %s %s %s\n", cpu,
	    sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release, u.machine);
	printf("- build: %s, %s%s; libsodium %s, cJSON %s\n", __VERSION__,
	    optimized ? "optimised" : "NOT optimised",
	    sanitized ? ", WITH SANITIZERS" : "", sodium_version_string(),
	    cJSON_Version());
	if (sanitized || !optimized)
		printf("- **these figures come from a debugging build: do not "
		    "quote them**\n");
}

/*
 * The breakdown: each stage of ours alone, over the same frames, and the
 * baseline's JSON work alone beside ours.
 */
enum stage {
	ST_SIGN, ST_JENC, ST_SEAL, ST_OPEN, ST_JDEC, ST_VERIFY,
	ST_TOTAL, ST_BL_JENC, ST_BL_JDEC, ST_N
};

static const char *const stage_names[ST_N] = {
	[ST_SIGN] = "sign (frame_msg_sign: layout + Ed25519)",
	[ST_JENC] = "JSON encode (frame_encode: checks, tree, print)",
	[ST_SEAL] = "AEAD seal (nonce + XChaCha20-Poly1305)",
	[ST_OPEN] = "AEAD open (XChaCha20-Poly1305)",
	[ST_JDEC] = "JSON decode (frame_decode, signatures not checked)",
	[ST_VERIFY] = "verify (layout + Ed25519)",
	[ST_TOTAL] = "the whole scenario, ours",
	[ST_BL_JENC] = "baseline JSON encode (checks, tree, print)",
	[ST_BL_JDEC] = "baseline JSON decode (parse, walk, checks)",
};

struct stage_data {
	struct buf *json;          /* ours' JSON text of each frame */
	char **ntext;              /* the same, NUL-terminated */
	struct buf *sealed;
	uint8_t *plain;            /* scratch for AEAD open */
};

static double
run_stage(enum stage st, struct scenario *sc, struct stage_data *d)
{
	const struct room_keys *k = &sc->keys;
	struct frame out;
	uint64_t t0 = now_ns();
	size_t i;

	for (i = 0; i < sc->n; i++) {
		struct frame *f = &sc->f[i];
		const struct frame_msg *m = &f->u.msg;
		unsigned long long plen;
		uint8_t *p;
		size_t len;
		char *text;

		switch (st) {
		case ST_SIGN:
			if (f->type == FRAME_MSG && frame_msg_sign(&f->u.msg, k,
			    &sc->authors[sc->author[i]]) != 0)
				fail("sign failed");
			break;
		case ST_JENC:
			buf_reset(&d->json[i]);
			if (frame_encode(f, &d->json[i]) != 0)
				fail("frame_encode failed");
			break;
		case ST_SEAL:
			buf_reset(&d->sealed[i]);
			if ((p = buf_reserve(&d->sealed[i], FRAME_SEAL_OVERHEAD +
			    d->json[i].len)) == NULL)
				fail("seal: no room");
			randombytes_buf(p, FRAME_NONCE_LEN);
			crypto_aead_xchacha20poly1305_ietf_encrypt(p +
			    FRAME_NONCE_LEN, NULL, d->json[i].p, d->json[i].len,
			    NULL, 0, NULL, p, k->seal);
			break;
		case ST_OPEN:
			if (crypto_aead_xchacha20poly1305_ietf_decrypt(d->plain,
			    &plen, NULL, d->sealed[i].p + FRAME_NONCE_LEN,
			    d->sealed[i].len - FRAME_NONCE_LEN, NULL, 0,
			    d->sealed[i].p, k->seal) != 0)
				fail("open failed");
			break;
		case ST_JDEC:
			if (frame_decode(k, (const char *)d->json[i].p,
			    d->json[i].len, FRAME_TRUSTED |
			    frame_flags(FRAME_VERSION), &out) != FRAME_OK)
				fail("frame_decode failed");
			frame_clear(&out);
			break;
		case ST_VERIFY:
			if (f->type != FRAME_MSG)
				break;
			if ((p = bl_msg_layout(m, k, &len)) == NULL ||
			    crypto_sign_verify_detached(m->sig, p, len,
			    m->from) != 0)
				fail("verify failed");
			free(p);
			break;
		case ST_BL_JENC:
			if ((text = bl_json(f)) == NULL)
				fail("bl_json failed");
			cJSON_free(text);
			break;
		case ST_BL_JDEC:
			if (bl_decode(k, d->ntext[i], d->json[i].len, 0,
			    &out) != FRAME_OK)
				fail("bl_decode failed");
			frame_clear(&out);
			break;
		case ST_TOTAL:
		case ST_N:
			break;
		}
	}
	return (double)(now_ns() - t0) / 1e6;
}

static void
breakdown(struct scenario *sc, struct buf *sealed, size_t rounds)
{
	struct stage_data d;
	double *v[ST_N], *jr[2], med[ST_N], sum = 0, total;
	struct spread s;
	size_t i, r;
	int st;

	memset(&d, 0, sizeof(d));
	if ((d.json = calloc(sc->n, sizeof(*d.json))) == NULL ||
	    (d.ntext = calloc(sc->n, sizeof(*d.ntext))) == NULL ||
	    (d.sealed = calloc(sc->n, sizeof(*d.sealed))) == NULL ||
	    (d.plain = malloc(PAPO_FRAME_MAX)) == NULL)
		fail("out of memory");
	for (i = 0; i < sc->n; i++) {
		buf_init(&d.json[i], FRAME_JSON_MAX);
		buf_init(&d.sealed[i], PAPO_FRAME_MAX);
	}
	/* Fill the texts and sealed frames the later stages read. */
	run_stage(ST_JENC, sc, &d);
	run_stage(ST_SEAL, sc, &d);
	for (i = 0; i < sc->n; i++) {
		if ((d.ntext[i] = malloc(d.json[i].len + 1)) == NULL)
			fail("out of memory");
		memcpy(d.ntext[i], d.json[i].p, d.json[i].len);
		d.ntext[i][d.json[i].len] = '\0';
	}
	for (st = 0; st < ST_N; st++)
		if ((v[st] = calloc(rounds, sizeof(double))) == NULL)
			fail("out of memory");
	if ((jr[0] = calloc(rounds, sizeof(double))) == NULL ||
	    (jr[1] = calloc(rounds, sizeof(double))) == NULL)
		fail("out of memory");
	/* Round-robin, so that a burst of load hits every stage alike. */
	for (r = 0; r < rounds; r++)
		for (st = 0; st < ST_N; st++)
			v[st][r] = st == ST_TOTAL ?
			    run_once(&sides[1], sc, sealed).total :
			    run_stage((enum stage)st, sc, &d);
	/* Before spread_of sorts the rounds out of their order. */
	for (r = 0; r < rounds; r++) {
		jr[0][r] = v[ST_JENC][r] / v[ST_BL_JENC][r];
		jr[1][r] = v[ST_JDEC][r] / v[ST_BL_JDEC][r];
	}
	for (st = 0; st < ST_N; st++) {
		s = spread_of(v[st], rounds);
		med[st] = s.med;
	}
	total = med[ST_TOTAL];
	printf("\n## Where the time of ours goes\n\n");
	printf("Each stage alone over the same %zu frames, medians of %zu "
	    "rounds (stages interleaved), in ms.\n\n", sc->n, rounds);
	printf("| stage | ms | share of the whole |\n|---|---:|---:|\n");
	for (st = ST_SIGN; st <= ST_VERIFY; st++) {
		printf("| %s | %.2f | %.1f %% |\n", stage_names[st], med[st],
		    100 * med[st] / total);
		sum += med[st];
	}
	printf("| sum of the stages | %.2f | %.1f %% |\n", sum,
	    100 * sum / total);
	printf("| the rest (copies, allocations, layout buffers) | %.2f | "
	    "%.1f %% |\n", total - sum, 100 * (total - sum) / total);
	printf("| %s | %.2f | 100 %% |\n", stage_names[ST_TOTAL], total);
	printf("\nBy kind: JSON %.1f %%, AEAD %.1f %%, signatures %.1f %% of "
	    "the whole.\n", 100 * (med[ST_JENC] + med[ST_JDEC]) / total,
	    100 * (med[ST_SEAL] + med[ST_OPEN]) / total,
	    100 * (med[ST_SIGN] + med[ST_VERIFY]) / total);
	printf("\nThe JSON layer alone, ours against the baseline, ms and the "
	    "median [min–max] of the round-by-round ratios:\n\n"
	    "| | baseline | ours | ours/baseline |\n|---|---:|---:|---:|\n");
	for (i = 0; i < 2; i++) {
		s = spread_of(jr[i], rounds);
		printf("| JSON %s | %.2f | %.2f | %.3f [%.3f–%.3f] |\n",
		    i == 0 ? "encode" : "decode",
		    med[i == 0 ? ST_BL_JENC : ST_BL_JDEC],
		    med[i == 0 ? ST_JENC : ST_JDEC], s.med, s.min, s.max);
	}
	free(jr[0]);
	free(jr[1]);

	for (st = 0; st < ST_N; st++)
		free(v[st]);
	for (i = 0; i < sc->n; i++) {
		buf_free(&d.json[i]);
		buf_free(&d.sealed[i]);
		free(d.ntext[i]);
	}
	free(d.json);
	free(d.ntext);
	free(d.sealed);
	free(d.plain);
}

static const char *const stage_kind[3] = { "encode", "decode", "total" };

static void
usage(void)
{
	fprintf(stderr, "usage: codec [-w] [-p pairs] [-r repetitions] "
	    "[-m messages]\n"
	    "  defaults: %d runs of %d interleaved pairs of passes (baseline,\n"
	    "  ours), %d msg frames after the hello, the thread's CPU time\n"
	    "  -w: time by the wall clock instead\n", BENCH_PAIRS, BENCH_REPS,
	    BENCH_MSGS);
	exit(2);
}

static size_t
count_arg(const char *s, size_t max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v == 0 || v > max)
		usage();
	return (size_t)v;
}

int
main(int argc, char **argv)
{
	size_t pairs = BENCH_PAIRS, reps = BENCH_REPS, nmsgs = BENCH_MSGS;
	struct scenario sc;
	struct buf *sealed;
	/* pass[side][encode, decode, total][pass], ratio[...][pass] */
	double *pass[2][3], *ratio[3], *tmp, sealed_bytes = 0;
	struct spread sp[2][3], sr[3];
	char load[64];
	size_t i, p, r, k, npass, above = 0;
	int c, s;

	while ((c = getopt(argc, argv, "p:r:m:wh")) != -1)
		switch (c) {
		case 'w':
			bench_clock = CLOCK_MONOTONIC;
			break;
		case 'p':
			pairs = count_arg(optarg, 1000);
			break;
		case 'r':
			reps = count_arg(optarg, 1000);
			break;
		case 'm':
			nmsgs = count_arg(optarg, 1000000);
			break;
		default:
			usage();
		}
	if (optind != argc)
		usage();
	if (sec_init() == -1)
		fail("libsodium does not initialise");

	scenario_init(&sc, nmsgs);
	check_agreement(&sc);
	check_refusals(&sc);

	npass = pairs * reps;
	if ((sealed = calloc(sc.n, sizeof(*sealed))) == NULL ||
	    (tmp = calloc(npass, sizeof(double))) == NULL)
		fail("out of memory");
	for (k = 0; k < 3; k++)
		if ((pass[0][k] = calloc(npass, sizeof(double))) == NULL ||
		    (pass[1][k] = calloc(npass, sizeof(double))) == NULL ||
		    (ratio[k] = calloc(npass, sizeof(double))) == NULL)
			fail("out of memory");
	for (i = 0; i < sc.n; i++)
		buf_init(&sealed[i], PAPO_FRAME_MAX);

	/* A pass of each side, untimed, to warm caches and buffers. */
	for (s = 0; s < 2; s++)
		run_once(&sides[s], &sc, sealed);
	for (i = 0; i < sc.n; i++)
		sealed_bytes += (double)sealed[i].len;

	printf("# papo frame codec: ours against a cJSON-tree baseline\n\n");
	print_machine();
	printf("- scenario: 1 hello + %zu msg frames, %zu body bytes (largest "
	    "%zu), %zu with `to`, %zu with `reply_to`, %zu with characters "
	    "JSON escapes; %.0f bytes sealed in all\n", nmsgs, sc.body_bytes,
	    sc.body_max, sc.with_to, sc.with_reply_to, sc.escaped, sealed_bytes);
	printf("- checks passed: each side opens what the other sealed into "
	    "identical structs, same JSON text and signatures for all %zu "
	    "frames; both refuse the same broken frames with the same "
	    "error\n", sc.n);
	printf("- method: %zu runs of %zu pairs of passes, interleaved "
	    "(baseline pass, ours pass, baseline pass, ...); a pass is the whole "
	    "scenario; ms per pass, %s; a run's figures are the medians of "
	    "its passes\n\n", pairs, reps, bench_clock == CLOCK_MONOTONIC ?
	    "wall clock" : "CPU time of the thread");

	printf("| run | load average (1/5/15 min) | baseline encode | decode | "
	    "total | ours encode | decode | total | ours/baseline |\n"
	    "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (p = 0; p < pairs; p++) {
		loadavg(load);
		/* Each ours pass against the baseline pass just before it:
		 * the two share the machine's state of the moment (another
		 * job on the sibling core, the clock speed), which passes
		 * further apart do not. */
		for (r = 0; r < reps; r++) {
			struct sample x[2];

			i = p * reps + r;
			for (s = 0; s < 2; s++) {
				x[s] = run_once(&sides[s], &sc, sealed);
				pass[s][0][i] = x[s].enc;
				pass[s][1][i] = x[s].dec;
				pass[s][2][i] = x[s].total;
			}
			ratio[0][i] = x[1].enc / x[0].enc;
			ratio[1][i] = x[1].dec / x[0].dec;
			ratio[2][i] = x[1].total / x[0].total;
			if (ratio[2][i] > 1.0)
				above++;
		}
		printf("| %zu | %s |", p + 1, load);
		for (s = 0; s < 2; s++)
			for (k = 0; k < 3; k++) {
				memcpy(tmp, pass[s][k] + p * reps,
				    reps * sizeof(double));
				printf(" %.2f |", spread_of(tmp, reps).med);
			}
		memcpy(tmp, ratio[2] + p * reps, reps * sizeof(double));
		printf(" %.3f |\n", spread_of(tmp, reps).med);
		fflush(stdout);
	}
	for (k = 0; k < 3; k++) {
		for (s = 0; s < 2; s++)
			sp[s][k] = spread_of(pass[s][k], npass);
		sr[k] = spread_of(ratio[k], npass);
	}

	printf("\nOver all %zu passes of each side, ms: median [min–max] "
	    "(IQR q1–q3).\n\n", npass);
	printf("| | baseline | ours | ratio of the medians |\n"
	    "|---|---:|---:|---:|\n");
	for (k = 0; k < 3; k++)
		printf("| %s | %.2f [%.2f–%.2f] (%.2f–%.2f) | %.2f [%.2f–%.2f] "
		    "(%.2f–%.2f) | %.3f |\n", stage_kind[k], sp[0][k].med,
		    sp[0][k].min, sp[0][k].max, sp[0][k].q1, sp[0][k].q3,
		    sp[1][k].med, sp[1][k].min, sp[1][k].max, sp[1][k].q1,
		    sp[1][k].q3, sp[1][k].med / sp[0][k].med);
	printf("\nPer frame (total / %zu): baseline %.2f µs, ours %.2f µs.\n",
	    sc.n, 1000 * sp[0][2].med / (double)sc.n,
	    1000 * sp[1][2].med / (double)sc.n);
	printf("\nours/baseline pass by pass (each ours pass against the "
	    "baseline pass before it), %zu ratios: median [min–max] (IQR "
	    "q1–q3).\n\n| | ours/baseline |\n|---|---:|\n", npass);
	for (k = 0; k < 3; k++)
		printf("| %s | %.3f [%.3f–%.3f] (%.3f–%.3f) |\n", stage_kind[k],
		    sr[k].med, sr[k].min, sr[k].max, sr[k].q1, sr[k].q3);
	printf("\n%zu of %zu ours passes slower than the baseline pass before "
	    "them.\n", above, npass);
	printf("\n**Kill criterion (ours/baseline at most 1.0, on the median "
	    "of the pass-by-pass total ratios): %s (%.3f)**%s\n",
	    sr[2].med > 1.0 ? "FAIL" : "PASS", sr[2].med,
	    sr[2].q1 <= 1.0 && sr[2].q3 >= 1.0 ? "; 1.0 lies inside their "
	    "interquartile range: the difference is within the noise" : "");

	breakdown(&sc, sealed, reps < 5 ? 5 : reps);

	for (i = 0; i < sc.n; i++)
		buf_free(&sealed[i]);
	for (k = 0; k < 3; k++) {
		free(pass[0][k]);
		free(pass[1][k]);
		free(ratio[k]);
	}
	free(sealed);
	free(tmp);
	scenario_free(&sc);
	return 0;
}
