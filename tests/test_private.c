/*
 * test_private.c: node/wire/private.c.  A private body opens for its
 * author and its addressee and for nobody else; moved to another
 * message, room or pair, or altered in one byte, it does not open; its
 * size says only the text's size rounded up to PRIV_PAD; the longest
 * text fits a message body; an older daemon sees the head line.
 */
#define _GNU_SOURCE
#include <string.h>

#include <sodium.h>

#include "check.h"
#include "node/wire/private.h"

static struct identity ana, bo, carol;

static void
member(struct identity *id)
{
	crypto_sign_keypair(id->pk, id->sk);
}

static const uint8_t room[16] = "0123456789abcdef";
static const uint8_t room2[16] = "fedcba9876543210";
#define ID "abcdefghij"

/* ana's sealed body of text to bo, in b (PAPO_BODY_MAX). */
static void
seal(struct buf *b, const char *text, size_t n)
{
	buf_init(b, PAPO_BODY_MAX);
	CHECK_EQ_INT(priv_seal(b, &ana, bo.pk, room, ID, text, n), PRIV_OK);
}

/* Opens b as who, from ana to bo unless told otherwise. */
static enum priv_err
open_as(const struct identity *who, const struct buf *b, struct buf *out,
    const uint8_t *r, const char *id, const uint8_t *from, const uint8_t *to)
{
	buf_init(out, PAPO_BODY_MAX);
	return priv_open(out, who, from, to, r, id, (const char *)b->p, b->len);
}

static void
ends_open(void)
{
	const char text[] = "the deploy key is in the vault, row 3";
	struct buf b, out;

	seal(&b, text, strlen(text));
	CHECK(priv_is((const char *)b.p, b.len));
	CHECK(memmem(b.p, b.len, "vault", 5) == NULL);
	/* What an older daemon shows first: the head line. */
	CHECK(b.len > sizeof(PRIV_HEAD) &&
	    memcmp(b.p, PRIV_HEAD "\n\n[", sizeof(PRIV_HEAD) + 2) == 0);
	CHECK(b.p[b.len - 1] == '>' && memchr(b.p + sizeof(PRIV_HEAD) + 1,
	    '\n', b.len - sizeof(PRIV_HEAD) - 1) == NULL);

	CHECK_EQ_INT(open_as(&bo, &b, &out, room, ID, ana.pk, bo.pk), PRIV_OK);
	CHECK(out.len == strlen(text) && memcmp(out.p, text, out.len) == 0);
	buf_free(&out);
	/* The author reads its own, from its key and the addressee's. */
	CHECK_EQ_INT(open_as(&ana, &b, &out, room, ID, ana.pk, bo.pk),
	    PRIV_OK);
	CHECK(out.len == strlen(text) && memcmp(out.p, text, out.len) == 0);
	buf_free(&out);
	/* A third member is told it is not its own, and gets nothing. */
	CHECK_EQ_INT(open_as(&carol, &b, &out, room, ID, ana.pk, bo.pk),
	    PRIV_NOT_OURS);
	CHECK_EQ_INT(out.len, 0);
	buf_free(&out);
	buf_free(&b);
}

/* The sealed line bound to its frame: another id, room, author or
 * addressee, and it does not open. */
static void
bound_to_frame(void)
{
	struct buf b, out;

	seal(&b, "hi", 2);
	CHECK_EQ_INT(open_as(&bo, &b, &out, room, "abcdefghik", ana.pk, bo.pk),
	    PRIV_DAMAGED);
	buf_free(&out);
	CHECK_EQ_INT(open_as(&bo, &b, &out, room2, ID, ana.pk, bo.pk),
	    PRIV_DAMAGED);
	buf_free(&out);
	/* carol claims to be its author, to bo: bo's key with carol's
	 * is another key. */
	CHECK_EQ_INT(open_as(&bo, &b, &out, room, ID, carol.pk, bo.pk),
	    PRIV_DAMAGED);
	buf_free(&out);
	/* Moved to ana -> carol: carol cannot open what was sealed to bo. */
	CHECK_EQ_INT(open_as(&carol, &b, &out, room, ID, ana.pk, carol.pk),
	    PRIV_DAMAGED);
	CHECK_EQ_INT(out.len, 0);
	buf_free(&out);
	buf_free(&b);
}

/* Every byte of the sealed line altered in turn: none opens. */
static void
altered(void)
{
	struct buf b, out;
	size_t start = sizeof(PRIV_HEAD "\n\n" PRIV_PREFIX) - 1, opened = 0;

	seal(&b, "pay 10 to bo", 12);
	for (size_t i = start; i < b.len - 1; i++) {
		uint8_t was = b.p[i];

		b.p[i] = b.p[i] == 'A' ? 'B' : 'A';
		if (open_as(&bo, &b, &out, room, ID, ana.pk, bo.pk) == PRIV_OK)
			opened++;
		buf_free(&out);
		b.p[i] = was;
	}
	CHECK_EQ_INT(opened, 0);
	/* A character of the sealed line cut out, or one more in it: every
	 * byte after it shifts. */
	memmove(b.p + start + 8, b.p + start + 9, b.len - start - 9);
	b.len--;
	CHECK_EQ_INT(open_as(&bo, &b, &out, room, ID, ana.pk, bo.pk),
	    PRIV_DAMAGED);
	buf_free(&out);
	buf_free(&b);
	seal(&b, "pay 10 to bo", 12);
	buf_add(&b, ">", 1);
	memmove(b.p + start + 9, b.p + start + 8, b.len - start - 9);
	CHECK_EQ_INT(open_as(&bo, &b, &out, room, ID, ana.pk, bo.pk),
	    PRIV_DAMAGED);
	buf_free(&out);
	buf_free(&b);
}

/* Sizes: the same for every text within one PRIV_PAD block; the longest
 * text fits a body, one byte more is refused. */
static void
sizes(void)
{
	static char text[PRIV_TEXT_MAX + 1];
	struct buf a, b, out;

	memset(text, 'x', sizeof(text));
	seal(&a, text, 1);
	seal(&b, text, PRIV_PAD - 1);
	CHECK_EQ_INT(a.len, b.len);
	buf_free(&b);
	seal(&b, text, PRIV_PAD);
	CHECK(b.len > a.len);
	buf_free(&a);
	buf_free(&b);

	seal(&b, text, 0);   /* an empty text seals and opens */
	CHECK_EQ_INT(open_as(&bo, &b, &out, room, ID, ana.pk, bo.pk), PRIV_OK);
	CHECK_EQ_INT(out.len, 0);
	buf_free(&out);
	buf_free(&b);

	seal(&b, text, PRIV_TEXT_MAX);
	CHECK(b.len <= PAPO_BODY_MAX);
	CHECK_EQ_INT(open_as(&bo, &b, &out, room, ID, ana.pk, bo.pk), PRIV_OK);
	CHECK_EQ_INT(out.len, PRIV_TEXT_MAX);
	buf_free(&out);
	buf_free(&b);
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(priv_seal(&b, &ana, bo.pk, room, ID, text,
	    PRIV_TEXT_MAX + 1), PRIV_TOO_LONG);
	CHECK_EQ_INT(b.len, 0);
	buf_free(&b);
}

/* Bodies that are not private, and ids that are no keys. */
static void
not_private(void)
{
	static const char *const bodies[] = {
		"", "hello", PRIV_HEAD, PRIV_HEAD "\n\n",
		PRIV_HEAD "\n\n" PRIV_PREFIX PRIV_SUFFIX,
		PRIV_HEAD "\n\n" PRIV_PREFIX "AAAA",
		PRIV_PREFIX "AAAA" PRIV_SUFFIX,
		"x" PRIV_HEAD "\n\n" PRIV_PREFIX "AAAA" PRIV_SUFFIX,
		PRIV_HEAD "\n" PRIV_PREFIX "AAAA" PRIV_SUFFIX,
	};
	uint8_t zero[PAPO_KEY_LEN] = { 0 };
	struct buf b, out;

	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		CHECK(!priv_is(bodies[i], strlen(bodies[i])));
		buf_init(&out, PAPO_BODY_MAX);
		CHECK_EQ_INT(priv_open(&out, &bo, ana.pk, bo.pk, room, ID,
		    bodies[i], strlen(bodies[i])), PRIV_NOT_PRIVATE);
		buf_free(&out);
	}
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(priv_seal(&b, &ana, zero, room, ID, "x", 1),
	    PRIV_BAD_KEY);
	buf_free(&b);
	CHECK(strstr(priv_strerror(PRIV_NOT_OURS), "other members") != NULL);
	CHECK_EQ_STR(priv_strerror((enum priv_err)99), "unknown error");
}

/* What each member may see of a message (priv_view). */
static void
views(void)
{
	struct frame_msg m, v;
	struct buf b, inner;

	seal(&b, "for bo", 6);
	memset(&m, 0, sizeof(m));
	memcpy(m.id, ID, sizeof(ID));
	memcpy(m.from, ana.pk, PAPO_KEY_LEN);
	memcpy(m.to, bo.pk, PAPO_KEY_LEN);
	m.has_to = 1;
	m.body = (char *)b.p;
	m.body_len = b.len;
	CHECK_EQ_INT(priv_view(&bo, room, &m, &v, &inner), PRIV_OK);
	CHECK_EQ_STR(v.body, "for bo");
	CHECK_EQ_INT(v.body_len, 6);
	CHECK(memcmp(v.from, ana.pk, PAPO_KEY_LEN) == 0 && v.has_to);
	buf_free(&inner);
	CHECK_EQ_INT(priv_view(&ana, room, &m, &v, &inner), PRIV_OK);
	buf_free(&inner);
	CHECK_EQ_INT(priv_view(&carol, room, &m, &v, &inner), PRIV_NOT_OURS);
	/* Without an addressee, it is what it says: text. */
	m.has_to = 0;
	CHECK_EQ_INT(priv_view(&carol, room, &m, &v, &inner),
	    PRIV_NOT_PRIVATE);
	m.has_to = 1;
	m.body = "hello bo";
	m.body_len = 8;
	CHECK_EQ_INT(priv_view(&carol, room, &m, &v, &inner),
	    PRIV_NOT_PRIVATE);
	buf_free(&b);
	/* An author sealing what no body may hold: not shown. */
	seal(&b, "bad \xff", 5);
	m.body = (char *)b.p;
	m.body_len = b.len;
	CHECK_EQ_INT(priv_view(&bo, room, &m, &v, &inner), PRIV_DAMAGED);
	buf_free(&b);
	seal(&b, "nul\0x", 5);
	m.body = (char *)b.p;
	m.body_len = b.len;
	CHECK_EQ_INT(priv_view(&bo, room, &m, &v, &inner), PRIV_DAMAGED);
	buf_free(&b);
}

int
main(void)
{
	if (sodium_init() < 0)
		return 1;
	member(&ana);
	member(&bo);
	member(&carol);
	ends_open();
	bound_to_frame();
	altered();
	sizes();
	not_private();
	views();
	return check_exit();
}
