/*
 * private.c: a private message against a room message of the same text
 * (docs/PERFORMANCE.md, "Private messages"), with the library's own
 * functions and no daemon: the sealed frame's bytes on the wire, and the
 * CPU time to make one (sign and seal; a private one seals its body to
 * the addressee first) and to take one in (open, decode, verify; a
 * private one's addressee opens its body after).  Texts of 20, 200 and
 * 2,000 bytes; passes interleaved (room, private, room, ...), 11 of them
 * of 2,000 messages each, the thread's CPU time; medians with the
 * smallest and largest pass.  It prints figures and exits 0.
 *
 *   private [PASSES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "node/wire/frame.h"
#include "node/wire/private.h"

#define N_MSGS 2000
#define N_PASSES 11

static struct identity ana, bo;
static struct room_keys keys;

static double
cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One message of text from ana, private to bo or the room's, sealed
 * into out; the frame's body is freed by the caller (frame_msg_clear). */
static void
make(struct buf *out, const char *text, int private, long k)
{
	struct frame f;
	struct buf body;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	sec_msgid_new(f.u.msg.id);
	memcpy(f.u.msg.from, ana.pk, PAPO_KEY_LEN);
	strcpy(f.u.msg.name, "ana");
	f.u.msg.ts = 1796000000000ull + (uint64_t)k;
	f.u.msg.has_to = 1;
	memcpy(f.u.msg.to, bo.pk, PAPO_KEY_LEN);
	buf_init(&body, PAPO_BODY_MAX + 1);
	if (private) {
		if (priv_seal(&body, &ana, bo.pk, keys.id, f.u.msg.id, text,
		    strlen(text)) != PRIV_OK)
			abort();
	} else {
		buf_add(&body, text, strlen(text));
	}
	f.u.msg.body_len = body.len;
	buf_add(&body, "", 1);
	f.u.msg.body = (char *)body.p;
	if (frame_msg_sign(&f.u.msg, &keys, &ana) == -1 ||
	    frame_seal(&keys, &f, out) == -1)
		abort();
	frame_clear(&f);
}

/* bo takes it in: opened, decoded, verified; a private body opened. */
static void
take(const struct buf *in, int private)
{
	struct frame f;
	struct buf inner;

	if (frame_open(&keys, in->p, in->len, FRAME_V3, &f) != FRAME_OK)
		abort();
	if (private) {
		buf_init(&inner, PRIV_TEXT_MAX + 1);
		if (priv_open(&inner, &bo, f.u.msg.from, f.u.msg.to, keys.id,
		    f.u.msg.id, f.u.msg.body, f.u.msg.body_len) != PRIV_OK)
			abort();
		buf_free(&inner);
	}
	frame_clear(&f);
}

static void
one_size(size_t len, int passes)
{
	static struct buf sealed[N_MSGS];
	double make_us[2][N_PASSES * 4], take_us[2][N_PASSES * 4];
	char *text = malloc(len + 1);
	size_t bytes[2] = { 0, 0 };

	for (size_t i = 0; i < len; i++)
		text[i] = (char)('a' + i % 26);
	text[len] = '\0';
	for (int p = 0; p < passes; p++) {
		for (int priv = 0; priv < 2; priv++) {
			double t0 = cpu_us();

			for (long k = 0; k < N_MSGS; k++) {
				buf_init(&sealed[k], 80 * 1024);
				make(&sealed[k], text, priv, k);
			}
			make_us[priv][p] = (cpu_us() - t0) / N_MSGS;
			bytes[priv] = sealed[0].len;
			t0 = cpu_us();
			for (long k = 0; k < N_MSGS; k++)
				take(&sealed[k], priv);
			take_us[priv][p] = (cpu_us() - t0) / N_MSGS;
			for (long k = 0; k < N_MSGS; k++)
				buf_free(&sealed[k]);
		}
	}
	printf("text of %zu bytes: sealed frame %zu bytes (room) / %zu "
	    "(private), +%zu\n", len, bytes[0], bytes[1], bytes[1] - bytes[0]);
	for (int priv = 0; priv < 2; priv++) {
		qsort(make_us[priv], (size_t)passes, sizeof(double), dcmp);
		qsort(take_us[priv], (size_t)passes, sizeof(double), dcmp);
		printf("  %-8s make %6.1f us (%.1f-%.1f), take in %6.1f us "
		    "(%.1f-%.1f)\n", priv ? "private" : "room",
		    make_us[priv][passes / 2], make_us[priv][0],
		    make_us[priv][passes - 1], take_us[priv][passes / 2],
		    take_us[priv][0], take_us[priv][passes - 1]);
	}
	free(text);
}

int
main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : N_PASSES;
	uint8_t secret[PAPO_KEY_LEN];

	if (passes < 1 || passes > N_PASSES * 4 || sodium_init() < 0) {
		fprintf(stderr, "usage: private [PASSES (1 to %d)]\n",
		    N_PASSES * 4);
		return 2;
	}
	crypto_sign_keypair(ana.pk, ana.sk);
	crypto_sign_keypair(bo.pk, bo.sk);
	randombytes_buf(secret, sizeof(secret));
	sec_room_keys(secret, &keys);
	printf("%d passes of %d messages each way; CPU per message, median "
	    "(smallest-largest pass)\n", passes, N_MSGS);
	one_size(20, passes);
	one_size(200, passes);
	one_size(2000, passes);
	return 0;
}
