/*
 * test_limit.c: node/room/limit.c.  PAPO_RATE and PAPO_DAMP as written and
 * refused; the sending bucket and its wait; the receiving cap per author
 * and minute of its clock, which a replay spread over past minutes passes
 * and a flood or a clock set forward does not; drop lines once a minute;
 * damping after N answers, ended by a third member or a person, not by
 * old messages.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "node/room/limit.h"

#define S 1000000000ull
#define MIN 60000ull

static void
test_parse(void)
{
	static const char *bad_rate[] = {
		"", "0/min", "20", "20/", "20/week", "20/min,", "20/min,0",
		"20/min,10x", "-1/min", "x/min", "99999999/min", "20/min10",
		"20 /min",
	};
	static const char *bad_damp[] = {
		"", "12", "12/", "12/5", "0/5m", "12/0m", "12/5d", "1001/5m",
		"12/25h", "on", "12/5m ", "-3/5m",
	};
	char err[PAPO_ERR_LEN], buf[48];
	struct papo_rate r;
	struct papo_damp d;

	CHECK_EQ_INT(rate_parse(err, "20/min,10", &r), 0);
	CHECK(r.n == 20 && r.per_s == 60 && r.burst == 10);
	limit_rate_format(&r, buf, sizeof(buf));
	CHECK(strcmp(buf, "20/min,10") == 0);
	CHECK_EQ_INT(rate_parse(err, "5/s", &r), 0);
	CHECK(r.n == 5 && r.per_s == 1 && r.burst == 5);
	CHECK_EQ_INT(rate_parse(err, "100/h,1", &r), 0);
	CHECK(r.n == 100 && r.per_s == 3600 && r.burst == 1);
	for (size_t i = 0; i < sizeof(bad_rate) / sizeof(bad_rate[0]); i++) {
		err[0] = '\0';
		CHECK_EQ_INT(rate_parse(err, bad_rate[i], &r), -1);
		CHECK(strstr(err, "PAPO_RATE") != NULL);
	}
	CHECK_EQ_INT(damp_parse(err, "12/5m", &d), 0);
	CHECK(d.n == 12 && d.window_s == 300 && !d.off);
	limit_damp_format(&d, buf, sizeof(buf));
	CHECK(strcmp(buf, "12/5m") == 0);
	CHECK_EQ_INT(damp_parse(err, "3/90s", &d), 0);
	CHECK(d.n == 3 && d.window_s == 90);
	CHECK_EQ_INT(damp_parse(err, "off", &d), 0);
	CHECK(d.off);
	for (size_t i = 0; i < sizeof(bad_damp) / sizeof(bad_damp[0]); i++) {
		err[0] = '\0';
		CHECK_EQ_INT(damp_parse(err, bad_damp[i], &d), -1);
		CHECK(strstr(err, "PAPO_DAMP") != NULL);
	}
	/* Zeros are the defaults. */
	memset(&r, 0, sizeof(r));
	memset(&d, 0, sizeof(d));
	limit_defaults(&r, &d);
	CHECK(r.n == 20 && r.per_s == 60 && r.burst == 10);
	CHECK(d.n == 12 && d.window_s == 300);
}

static void
test_send(void)
{
	struct papo_rate r = { 20, 60, 10 };
	struct papo_damp d = { 12, 300, 0 };
	struct limit *l = limit_new(&r, &d, 0), *off = limit_new(&r, &d, 1);
	uint64_t t = 1000 * S;
	int i;

	for (i = 0; i < 10; i++)
		CHECK_EQ_INT(limit_send(l, t), 0);
	/* The burst is spent: one token comes every 3 s. */
	CHECK_EQ_INT(limit_send(l, t), 3);
	CHECK_EQ_INT(limit_send(l, t + 2 * S), 1);
	CHECK_EQ_INT(limit_send(l, t + 3 * S), 0);
	CHECK_EQ_INT(limit_send(l, t + 3 * S), 3);
	/* A minute later: 20 more, never more than the burst. */
	CHECK_EQ_INT(limit_tokens(l, t + 63 * S), 10);
	for (i = 0; i < 1000; i++)
		CHECK_EQ_INT(limit_send(off, t), 0);
	CHECK_EQ_INT(limit_recv_cap(l), 5 * (10 + 20));
	limit_free(l);
	limit_free(off);
	limit_free(NULL);
}

static void
test_recv(void)
{
	struct papo_rate r = { 20, 60, 10 };
	struct papo_damp d = { 12, 300, 0 };
	struct limit *l = limit_new(&r, &d, 0);
	uint8_t a[PAPO_KEY_LEN], b[PAPO_KEY_LEN];
	uint64_t now = 100000 * MIN, nlog = 0, kept = 0, lines = 0, total = 0;
	unsigned cap = limit_recv_cap(l);

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	/* A returning member's sync: a day of b's messages at its full
	 * rate, all arriving within one second of ours.  None dropped. */
	for (uint64_t m = 0; m < 24 * 60; m++)
		for (int k = 0; k < 30; k++) {
			total++;
			kept += limit_recv(l, b, now - 24 * 60 * MIN + m * MIN +
			    (uint64_t)k, now, &nlog) == LIMIT_KEEP;
		}
	CHECK_EQ_INT(kept, total);
	/* A flood of fresh messages from a: cap kept, one line logged. */
	kept = 0;
	for (int k = 0; k < 10000; k++) {
		enum limit_recv v = limit_recv(l, a, now + (uint64_t)k % 1000,
		    now + (uint64_t)k % 1000, &nlog);

		kept += v == LIMIT_KEEP;
		lines += v == LIMIT_DROP_LOG;
	}
	CHECK_EQ_INT(kept, cap);
	CHECK_EQ_INT(lines, 1);
	CHECK_EQ_INT(nlog, 1);
	CHECK_EQ_INT(limit_dropped(l, a), 10000 - cap);
	/* Times ahead of ours count in our minute: nothing more passes. */
	CHECK(limit_recv(l, a, now + 3600 * MIN, now + 1000, &nlog) !=
	    LIMIT_KEEP);
	/* A minute later the next line tells how many since the first. */
	CHECK_EQ_INT(limit_recv(l, a, now, now + MIN, &nlog), LIMIT_DROP);
	CHECK_EQ_INT(limit_recv(l, a, now, now + MIN + 1000, &nlog),
	    LIMIT_DROP_LOG);
	CHECK_EQ_INT(nlog, 10000 - cap - 1 + 3);
	/* The next minute of a's clock has room again. */
	CHECK_EQ_INT(limit_recv(l, a, now + MIN, now + MIN, &nlog), LIMIT_KEEP);
	CHECK_EQ_INT(limit_dropped(l, b), 0);
	limit_free(l);
}

static void
test_damp(void)
{
	struct papo_rate r = { 20, 60, 10 };
	struct papo_damp d = { 4, 300, 0 }, off = { 0, 0, 1 };
	struct limit *l = limit_new(&r, &d, 0), *lo = limit_new(&r, &off, 0);
	struct limit_exchange ex[4];
	uint8_t a[PAPO_KEY_LEN], b[PAPO_KEY_LEN], c[PAPO_KEY_LEN];
	uint64_t t = 100000 * MIN;

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	memset(c, 'c', sizeof(c));
	for (int i = 0; i < 4; i++) {
		CHECK_EQ_INT(limit_damp_check(l, a, b, t), 0);
		limit_damp_note(l, i % 2 ? a : b, i % 2 ? b : a, t);
		limit_damp_note(lo, i % 2 ? a : b, i % 2 ? b : a, t);
		t += 1000;
	}
	/* Four answers within 5 minutes: damped until the first leaves. */
	CHECK_EQ_INT(limit_damp_check(l, a, b, t), 300 - 4);
	CHECK_EQ_INT(limit_damp_check(l, b, a, t), 300 - 4);
	CHECK_EQ_INT(limit_damp_check(l, a, c, t), 0);
	CHECK_EQ_INT(limit_damp_check(lo, a, b, t), 0);
	CHECK_EQ_INT(limit_damp_list(l, a, t, ex, 4), 1);
	CHECK(memcmp(ex[0].with, b, PAPO_KEY_LEN) == 0 && ex[0].answers == 4 &&
	    ex[0].retry_after_s == 296);
	CHECK_EQ_INT(limit_damp_check(l, a, b, t + 300 * 1000), 0);
	/* An old message of c's (sync) changes nothing; a new one ends it. */
	limit_damp_note(l, c, NULL, t - 60 * 1000);
	CHECK(limit_damp_check(l, a, b, t) > 0);
	limit_damp_note(l, c, NULL, t);
	CHECK_EQ_INT(limit_damp_check(l, a, b, t), 0);
	CHECK_EQ_INT(limit_damp_list(l, a, t, ex, 4), 0);
	/* Again, then a person speaking as a ends a's exchanges. */
	for (int i = 0; i < 4; i++)
		limit_damp_note(l, i % 2 ? a : b, i % 2 ? b : a, ++t);
	CHECK(limit_damp_check(l, a, b, t) > 0);
	/* One older than the exchange's last answer (sync) changes nothing. */
	limit_damp_person(l, a, t - 1);
	CHECK(limit_damp_check(l, a, b, t) > 0);
	limit_damp_person(l, a, t + 1);
	CHECK_EQ_INT(limit_damp_check(l, a, b, t), 0);
	limit_free(l);
	limit_free(lo);
}

int
main(void)
{
	test_parse();
	test_send();
	test_recv();
	test_damp();
	return check_exit();
}
