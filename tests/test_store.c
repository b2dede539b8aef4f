/*
 * test_store.c: the log and the outbox as a user of a daemon sees them
 * across restarts: what was acknowledged is there after a reopen (even
 * after kill -9), history comes back oldest first, a torn or damaged line
 * costs only itself, and errors name the file.  Every message is signed
 * for real by an identity made in a temporary $PAPO_HOME.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/buf.h"
#include "node/store/home.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"
#include "tests/check.h"

struct ctx {
	struct identity *me;
	struct room_keys k;
	char idhome[64];       /* where the identity lives */
};

static long long
file_size(const char *home, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", home, name);
	if (stat(path, &st) == -1)
		return -1;
	return (long long)st.st_size;
}

static void
append_raw(const char *home, const char *name, const void *p, size_t n)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", home, name);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600)) == -1 ||
	    write(fd, p, n) != (ssize_t)n) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static void
append_str(const char *home, const char *name, const char *text)
{
	append_raw(home, name, text, strlen(text));
}

/* A signed message with a fresh id; the body is the caller's to free. */
static void
make_msg(const struct ctx *c, struct frame_msg *m, const char *body,
    uint64_t ts)
{
	memset(m, 0, sizeof(*m));
	sec_msgid_new(m->id);
	snprintf(m->name, sizeof(m->name), "tester");
	m->ts = ts;
	if ((m->body = strdup(body)) == NULL)
		exit(1);
	m->body_len = strlen(body);
	if (frame_msg_sign(m, &c->k, c->me) == -1) {
		fprintf(stderr, "frame_msg_sign failed\n");
		exit(1);
	}
}

static void
check_same(const struct frame_msg *a, const struct frame_msg *b)
{
	CHECK_EQ_STR(a->id, b->id);
	CHECK(memcmp(a->from, b->from, PAPO_KEY_LEN) == 0);
	CHECK_EQ_STR(a->name, b->name);
	CHECK_EQ_INT(a->ts, b->ts);
	CHECK_EQ_INT(a->body_len, b->body_len);
	CHECK_EQ_STR(a->body, b->body);
	CHECK_EQ_INT(a->has_to, b->has_to);
	if (a->has_to && b->has_to)
		CHECK(memcmp(a->to, b->to, PAPO_KEY_LEN) == 0);
	CHECK_EQ_INT(a->has_reply_to, b->has_reply_to);
	if (a->has_reply_to && b->has_reply_to)
		CHECK_EQ_STR(a->reply_to, b->reply_to);
	CHECK(memcmp(a->sig, b->sig, PAPO_SIG_LEN) == 0);
}

static struct store *
open_or_die(const char *home, const struct ctx *c)
{
	char err[PAPO_ERR_LEN];
	struct store *s;

	if ((s = store_open(err, home, &c->k, NULL)) == NULL) {
		fprintf(stderr, "store_open %s: %s\n", home, err);
		exit(1);
	}
	return s;
}

/* One log line as the store writes it, for tests that edit the file. */
static void
encode_line(const struct frame_msg *m, struct buf *b)
{
	struct frame f;

	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	f.u.msg = *m;
	buf_init(b, STORE_LINE_MAX);
	if (frame_encode(&f, b) == -1 || buf_u8(b, '\n') == -1) {
		fprintf(stderr, "frame_encode failed\n");
		exit(1);
	}
}

static void
test_roundtrip(const struct ctx *c)
{
	enum { N = 40 };
	const char *bodies[] = {
		"hello",
		"quotes \" and \\ and a fake key ,\"ts\":5, here",
		"line one\nline two\ttab",
		"unicode: caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80",
		"",
	};
	struct frame_msg m[N], got;
	struct frame_ack a;
	struct store_stats st;
	char home[64], path[600];
	struct store *s;
	struct stat sb;
	long long size;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	for (int i = 0; i < N; i++) {
		make_msg(c, &m[i], bodies[i % 5],
		    1700000000000ull + (uint64_t)i);
		if (i % 3 == 1) {
			m[i].has_to = 1;
			memcpy(m[i].to, c->me->pk, PAPO_KEY_LEN);
		}
		if (i % 4 == 2) {
			m[i].has_reply_to = 1;
			memcpy(m[i].reply_to, m[i - 1].id,
			    sizeof(m[i].reply_to));
		}
		if (i % 3 == 1 || i % 4 == 2)
			frame_msg_sign(&m[i], &c->k, c->me);
		CHECK_EQ_INT(store_add_msg(s, &m[i]), 1);
	}
	memset(&a, 0, sizeof(a));
	memcpy(a.id, m[0].id, sizeof(a.id));
	a.state = ACK_DELIVERED;
	a.ts = 1700000000999ull;
	CHECK(frame_ack_sign(&a, &c->k, c->me) == 0);
	CHECK_EQ_INT(store_add_ack(s, &a), 0);
	a.state = ACK_READ;
	CHECK(frame_ack_sign(&a, &c->k, c->me) == 0);
	CHECK_EQ_INT(store_add_ack(s, &a), 0);
	store_close(s);

	snprintf(path, sizeof(path), "%s/log.jsonl", home);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
	snprintf(path, sizeof(path), "%s/outbox.jsonl", home);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);

	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, N);
	CHECK_EQ_INT(st.acks, 2);
	CHECK_EQ_INT(st.dropped, 0);
	CHECK_EQ_INT(st.outbox, 0);
	for (int i = 0; i < N; i++) {
		CHECK(store_has(s, m[i].id));
		CHECK_EQ_INT(store_get(s, m[i].id, &got), 0);
		check_same(&got, &m[i]);
		frame_msg_clear(&got);
	}

	/* A duplicate is refused without touching the file. */
	size = file_size(home, "log.jsonl");
	CHECK_EQ_INT(store_add_msg(s, &m[7]), 0);
	CHECK_EQ_INT(file_size(home, "log.jsonl"), size);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, N);

	CHECK(!store_has(s, "aaaaaaaaaa"));
	CHECK(!store_has(s, "not an id"));
	CHECK_EQ_INT(store_get(s, "aaaaaaaaaa", &got), -1);
	CHECK(got.body == NULL);
	store_close(s);

	for (int i = 0; i < N; i++)
		free(m[i].body);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* Enough messages to grow the index many times, written straight to the
 * file (without an fsync each) and replayed in one open. */
static void
test_many(const struct ctx *c)
{
	enum { N = 20000 };
	char (*ids)[PAPO_MSGID_LEN + 1];
	struct frame_msg m, got;
	struct store_stats st;
	char home[64], path[600];
	struct buf all, line;
	struct store *s;
	struct timespec t0, t1;
	int missing = 0;
	FILE *fp;

	check_tmpdir(home, sizeof(home), "store");
	if ((ids = calloc(N, sizeof(*ids))) == NULL)
		exit(1);
	buf_init(&all, (size_t)N * 1024);
	for (int i = 0; i < N; i++) {
		make_msg(c, &m, "a message among many", 1000 + (uint64_t)i);
		memcpy(ids[i], m.id, sizeof(ids[i]));
		encode_line(&m, &line);
		if (buf_add(&all, line.p, line.len) == -1)
			exit(1);
		buf_free(&line);
		free(m.body);
	}
	snprintf(path, sizeof(path), "%s/log.jsonl", home);
	if ((fp = fopen(path, "w")) == NULL ||
	    fwrite(all.p, 1, all.len, fp) != all.len || fclose(fp) != 0)
		exit(1);
	buf_free(&all);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	s = open_or_die(home, c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "test_many: replayed %d messages in %.1f ms\n", N,
	    (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, N);
	CHECK_EQ_INT(st.dropped, 0);
	for (int i = 0; i < N; i++)
		if (!store_has(s, ids[i]))
			missing++;
	CHECK_EQ_INT(missing, 0);
	CHECK_EQ_INT(store_get(s, ids[0], &got), 0);
	CHECK_EQ_INT(got.ts, 1000);
	frame_msg_clear(&got);
	CHECK_EQ_INT(store_get(s, ids[N / 2], &got), 0);
	CHECK_EQ_INT(got.ts, 1000 + N / 2);
	CHECK_EQ_STR(got.body, "a message among many");
	frame_msg_clear(&got);
	CHECK_EQ_INT(store_get(s, ids[N - 1], &got), 0);
	CHECK_EQ_INT(got.ts, 1000 + N - 1);
	frame_msg_clear(&got);
	store_close(s);
	free(ids);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* History by time alone, as before cursors with ids. */
static long
hist(struct store *s, size_t n, uint64_t before, uint64_t since,
    struct frame_msg *out)
{
	struct store_query q = { .n = n, .before = before, .since = since };
	struct store_cursor next;

	return store_history(s, &q, out, &next);
}

static void
test_history(const struct ctx *c)
{
	struct frame_msg m[11], out[20];
	char home[64];
	struct store *s;
	long n;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	/* Times 1000..10000, then one whose author's clock is behind. */
	for (int i = 0; i < 10; i++) {
		char body[16];

		snprintf(body, sizeof(body), "m%d", i + 1);
		make_msg(c, &m[i], body, 1000 * (uint64_t)(i + 1));
		CHECK_EQ_INT(store_add_msg(s, &m[i]), 1);
	}
	store_close(s);
	s = open_or_die(home, c);

	n = hist(s, 3, 0, 0, out);
	CHECK_EQ_INT(n, 3);
	for (long i = 0; i < n; i++) {
		check_same(&out[i], &m[7 + i]);
		frame_msg_clear(&out[i]);
	}

	n = hist(s, 20, 5000, 0, out);
	CHECK_EQ_INT(n, 4);
	for (long i = 0; i < n; i++) {
		CHECK_EQ_STR(out[i].id, m[i].id);
		frame_msg_clear(&out[i]);
	}

	n = hist(s, 2, 5000, 0, out);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_EQ_INT(out[0].ts, 3000);
		CHECK_EQ_INT(out[1].ts, 4000);
	}
	for (long i = 0; i < n; i++)
		frame_msg_clear(&out[i]);

	n = hist(s, 20, 0, 7000, out);
	CHECK_EQ_INT(n, 4);
	for (long i = 0; i < n; i++) {
		CHECK_EQ_INT(out[i].ts, 7000 + 1000 * i);
		frame_msg_clear(&out[i]);
	}

	n = hist(s, 20, 6000, 3000, out);
	CHECK_EQ_INT(n, 3);
	for (long i = 0; i < n; i++) {
		CHECK_EQ_STR(out[i].body, i == 0 ? "m3" : i == 1 ? "m4" : "m5");
		frame_msg_clear(&out[i]);
	}

	CHECK_EQ_INT(hist(s, 0, 0, 0, out), 0);
	CHECK_EQ_INT(hist(s, 20, 0, 20000, out), 0);
	CHECK_EQ_INT(hist(s, 20, 1000, 0, out), 0);

	/* History is in time order, not arrival order: a message that
	 * came last with an old time is found where its time puts it. */
	make_msg(c, &m[10], "late clock", 500);
	CHECK_EQ_INT(store_add_msg(s, &m[10]), 1);
	n = hist(s, 2, 0, 0, out);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_EQ_STR(out[0].body, "m9");
		CHECK_EQ_STR(out[1].body, "m10");
	}
	for (long i = 0; i < n; i++)
		frame_msg_clear(&out[i]);
	n = hist(s, 2, 1000, 0, out);
	CHECK_EQ_INT(n, 1);
	if (n == 1)
		CHECK_EQ_STR(out[0].body, "late clock");
	for (long i = 0; i < n; i++)
		frame_msg_clear(&out[i]);
	n = hist(s, 20, 0, 0, out);
	CHECK_EQ_INT(n, 11);
	for (long i = 0; i < n; i++)
		frame_msg_clear(&out[i]);
	store_close(s);

	for (int i = 0; i < 11; i++)
		free(m[i].body);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/*
 * Paging with the cursor each page gives reaches every message once, in
 * time order, though they arrived in another order (a catch-up by sync)
 * and many share a millisecond; and it holds across a reopen.
 */
#define PG_N 200
static void
test_paging(const struct ctx *c)
{
	struct frame_msg m[PG_N], out[PG_N];
	static char seen[PG_N];
	char home[64];
	struct store *s;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	/* Arrival order: the newer half first, then the older half, with
	 * times in steps of 3 ms from 1000 over 200 messages... */
	for (int i = 0; i < PG_N; i++) {
		int k = i < PG_N / 2 ? PG_N / 2 + i : i - PG_N / 2;
		char body[16];

		snprintf(body, sizeof(body), "%d", k);
		/* ...four at a time in one millisecond. */
		make_msg(c, &m[k], body, 1000 + 3 * (uint64_t)(k / 4));
		CHECK_EQ_INT(store_add_msg(s, &m[k]), 1);
	}
	for (int round = 0; round < 2; round++) {
		struct store_query q = { .n = 7 };
		struct store_cursor next;
		uint64_t last_ts = UINT64_MAX;
		int total = 0, pages = 0;
		char bid[PAPO_MSGID_LEN + 1] = "";

		memset(seen, 0, sizeof(seen));
		do {
			long n = store_history(s, &q, out, &next);

			CHECK(n >= 0);
			for (long i = n - 1; i >= 0; i--) {
				int k = atoi(out[i].body);

				CHECK(k >= 0 && k < PG_N);
				if (k >= 0 && k < PG_N) {
					CHECK_EQ_INT(seen[k], 0);
					seen[k]++;
				}
				CHECK(out[i].ts <= last_ts);
				last_ts = out[i].ts;
				total++;
			}
			for (long i = 0; i < n; i++)
				frame_msg_clear(&out[i]);
			q.before = next.ts;
			memcpy(bid, next.id, sizeof(bid));
			q.before_id = bid;
			pages++;
		} while (next.more && pages < PG_N);
		CHECK_EQ_INT(total, PG_N);
		CHECK_EQ_INT(pages, (PG_N + 6) / 7);
		store_close(s);
		s = open_or_die(home, c);
	}
	/* A malformed cursor is refused, not taken as none. */
	{
		struct store_query q = { .n = 7, .before = 2000,
		    .before_id = "not an id" };
		struct store_cursor next;

		errno = 0;
		CHECK_EQ_INT(store_history(s, &q, out, &next), -1);
		CHECK_EQ_INT(errno, EINVAL);
	}
	store_close(s);
	for (int i = 0; i < PG_N; i++)
		free(m[i].body);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static void
test_digest(const struct ctx *c)
{
	uint8_t d1[PAPO_KEY_LEN], d2[PAPO_KEY_LEN], d3[PAPO_KEY_LEN],
	    d4[PAPO_KEY_LEN], zero[PAPO_KEY_LEN] = { 0 };
	struct frame_msg m[5];
	char h1[64], h2[64], h3[64];
	struct store *s1, *s2, *s3;

	check_tmpdir(h1, sizeof(h1), "store");
	check_tmpdir(h2, sizeof(h2), "store");
	check_tmpdir(h3, sizeof(h3), "store");
	s1 = open_or_die(h1, c);
	s2 = open_or_die(h2, c);
	s3 = open_or_die(h3, c);
	store_digest(s1, d1);
	CHECK(memcmp(d1, zero, PAPO_KEY_LEN) == 0);
	for (int i = 0; i < 5; i++)
		make_msg(c, &m[i], "digest", 1000 + (uint64_t)i);
	for (int i = 0; i < 5; i++) {
		CHECK_EQ_INT(store_add_msg(s1, &m[i]), 1);
		CHECK_EQ_INT(store_add_msg(s2, &m[4 - i]), 1);
	}
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(store_add_msg(s3, &m[i]), 1);
	store_digest(s1, d1);
	store_digest(s2, d2);
	store_digest(s3, d3);
	CHECK(memcmp(d1, d2, PAPO_KEY_LEN) == 0);
	CHECK(memcmp(d1, d3, PAPO_KEY_LEN) != 0);
	CHECK(memcmp(d1, zero, PAPO_KEY_LEN) != 0);

	/* A duplicate does not change it; a reopen rebuilds the same. */
	CHECK_EQ_INT(store_add_msg(s1, &m[2]), 0);
	store_close(s1);
	s1 = open_or_die(h1, c);
	store_digest(s1, d4);
	CHECK(memcmp(d1, d4, PAPO_KEY_LEN) == 0);

	/* The same set again after the missing message arrives. */
	CHECK_EQ_INT(store_add_msg(s3, &m[4]), 1);
	store_digest(s3, d3);
	CHECK(memcmp(d1, d3, PAPO_KEY_LEN) == 0);

	store_close(s1);
	store_close(s2);
	store_close(s3);
	for (int i = 0; i < 5; i++)
		free(m[i].body);
	CHECK_EQ_INT(check_rmtree(h1), 0);
	CHECK_EQ_INT(check_rmtree(h2), 0);
	CHECK_EQ_INT(check_rmtree(h3), 0);
}

static void
test_torn(const struct ctx *c)
{
	struct frame_msg m[7], got;
	struct store_stats st;
	char home[64];
	struct store *s;
	struct buf line;
	long long good;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	for (int i = 0; i < 5; i++) {
		make_msg(c, &m[i], "before the crash", 1000 + (uint64_t)i);
		CHECK_EQ_INT(store_add_msg(s, &m[i]), 1);
	}
	store_close(s);
	good = file_size(home, "log.jsonl");

	/* Half of a sixth line, as a power cut mid-write leaves it. */
	make_msg(c, &m[5], "torn", 2000);
	encode_line(&m[5], &line);
	append_raw(home, "log.jsonl", line.p, line.len / 2);
	buf_free(&line);
	CHECK(file_size(home, "log.jsonl") > good);

	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 5);
	CHECK_EQ_INT(st.dropped, 1);
	CHECK_EQ_INT(file_size(home, "log.jsonl"), good);
	CHECK(!store_has(s, m[5].id));
	for (int i = 0; i < 5; i++) {
		CHECK_EQ_INT(store_get(s, m[i].id, &got), 0);
		check_same(&got, &m[i]);
		frame_msg_clear(&got);
	}
	/* The torn message can arrive again, and a new one after it. */
	CHECK_EQ_INT(store_add_msg(s, &m[5]), 1);
	make_msg(c, &m[6], "after the crash", 3000);
	CHECK_EQ_INT(store_add_msg(s, &m[6]), 1);
	store_close(s);

	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 7);
	CHECK_EQ_INT(st.dropped, 0);
	for (int i = 0; i < 7; i++) {
		CHECK_EQ_INT(store_get(s, m[i].id, &got), 0);
		check_same(&got, &m[i]);
		frame_msg_clear(&got);
	}
	store_close(s);

	/* A complete last line that is not a frame is cut off too. */
	good = file_size(home, "log.jsonl");
	append_str(home, "log.jsonl", "{\"t\":\"msg\",\"id\":\"abc\n");
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 7);
	CHECK_EQ_INT(st.dropped, 1);
	CHECK_EQ_INT(file_size(home, "log.jsonl"), good);
	store_close(s);

	for (int i = 0; i < 7; i++)
		free(m[i].body);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static void
test_damaged(const struct ctx *c)
{
	struct frame_msg m[6], got, half;
	struct store_stats st;
	char home[64], id[PAPO_ID_LEN + 1];
	struct store *s;
	struct buf line;
	char *longline;
	long long size;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	for (int i = 0; i < 3; i++) {
		make_msg(c, &m[i], "good", 1000 + (uint64_t)i);
		CHECK_EQ_INT(store_add_msg(s, &m[i]), 1);
	}
	store_close(s);

	/* Garbage, a bye frame with a bad id, a valid bye frame (not
	 * something a log holds), a line longer than any frame, then good
	 * lines again. */
	append_str(home, "log.jsonl", "this is not json\n");
	append_str(home, "log.jsonl", "{\"t\":\"bye\",\"id\":\"x\"}\n");
	{
		char bye[PAPO_ID_LEN + 32];

		sec_id_format(c->me->pk, id);
		snprintf(bye, sizeof(bye), "{\"t\":\"bye\",\"id\":\"%s\"}\n",
		    id);
		append_str(home, "log.jsonl", bye);
	}
	/* A message line cut short inside its signature, then a newline:
	 * it starts like a message but was never completed. */
	make_msg(c, &half, "cut short", 1500);
	encode_line(&half, &line);
	append_raw(home, "log.jsonl", line.p, line.len - 40);
	append_str(home, "log.jsonl", "\n");
	buf_free(&line);
	if ((longline = malloc(STORE_LINE_MAX + 11)) == NULL)
		exit(1);
	memset(longline, 'x', STORE_LINE_MAX + 10);
	longline[STORE_LINE_MAX + 10] = '\n';
	append_raw(home, "log.jsonl", longline, STORE_LINE_MAX + 11);
	free(longline);
	for (int i = 3; i < 6; i++) {
		make_msg(c, &m[i], "good after", 2000 + (uint64_t)i);
		encode_line(&m[i], &line);
		append_raw(home, "log.jsonl", line.p, line.len);
		buf_free(&line);
	}
	size = file_size(home, "log.jsonl");

	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 6);
	CHECK_EQ_INT(st.dropped, 5);
	CHECK(!store_has(s, half.id));
	/* Damaged lines in the middle are skipped, not cut. */
	CHECK_EQ_INT(file_size(home, "log.jsonl"), size);
	for (int i = 0; i < 6; i++) {
		CHECK_EQ_INT(store_get(s, m[i].id, &got), 0);
		check_same(&got, &m[i]);
		frame_msg_clear(&got);
	}
	store_close(s);

	for (int i = 0; i < 6; i++)
		free(m[i].body);
	free(half.body);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/*
 * A message line with the shape open takes on trust but a body that does
 * not decode, in the middle of the log: history, sync's reads and
 * store_after pass over it (it was an error for every range that held it),
 * it leaves the index and the digest once found, and the message stored
 * again (as a sync brings it) is the one read from then on, also after a
 * reopen.
 */
static void
test_damaged_read(const struct ctx *c)
{
	struct frame_msg m[7], out[10], got;
	struct store_cursor next;
	struct store_stats st;
	struct store_query q = { .n = 10 };
	uint8_t d_before[PAPO_KEY_LEN], d_after[PAPO_KEY_LEN];
	char home[64], last[PAPO_MSGID_LEN + 1];
	struct store *s;
	struct buf line;
	size_t more;
	char *p;
	long n;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	for (int i = 0; i < 7; i++)
		make_msg(c, &m[i], "body of a message", 1000 + (uint64_t)i);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(store_add_msg(s, &m[i]), 1);
	store_close(s);
	/* Lines 4 to 7 written as a store writes them, the 4th with a quote
	 * inside the body's string: it keeps its shape (id, ts, signature
	 * last), so open takes it on trust. */
	for (int i = 3; i < 7; i++) {
		encode_line(&m[i], &line);
		for (p = (char *)line.p; p + 7 < (char *)line.p + line.len &&
		    memcmp(p, "body of", 7) != 0; p++)
			;
		CHECK(p + 7 < (char *)line.p + line.len);
		if (i == 3)
			*p = '"';
		append_raw(home, "log.jsonl", line.p, line.len);
		buf_free(&line);
	}
	s = open_or_die(home, c);
	store_close(s);
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 7);      /* taken on trust at open */
	store_digest(s, d_before);
	n = store_history(s, &q, out, &next);
	CHECK_EQ_INT(n, 6);
	for (long i = 0; i < n; i++) {
		CHECK(strcmp(out[i].id, m[3].id) != 0);
		frame_msg_clear(&out[i]);
	}
	CHECK_EQ_INT(next.more, 0);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 6);
	CHECK_EQ_INT(st.dropped, 1);
	CHECK_EQ_INT(store_damaged(s), 1);
	CHECK_EQ_INT(store_damaged(s), 0);
	CHECK(!store_has(s, m[3].id));
	store_digest(s, d_after);
	CHECK(memcmp(d_before, d_after, PAPO_KEY_LEN) != 0);
	/* The others still read, by id and after an id. */
	for (int i = 0; i < 7; i++) {
		if (i == 3)
			continue;
		CHECK_EQ_INT(store_get(s, m[i].id, &got), 0);
		frame_msg_clear(&got);
	}
	n = store_after(s, m[0].id, 10, out, &more, last);
	CHECK_EQ_INT(n, 5);
	for (long i = 0; i < n; i++)
		frame_msg_clear(&out[i]);
	/* A sync brings it back: stored at the end, read from there. */
	CHECK_EQ_INT(store_add_msg(s, &m[3]), 1);
	CHECK_EQ_INT(store_get(s, m[3].id, &got), 0);
	check_same(&got, &m[3]);
	frame_msg_clear(&got);
	store_close(s);

	/* After a reopen the good copy is the one indexed. */
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 7);
	CHECK_EQ_INT(store_get(s, m[3].id, &got), 0);
	check_same(&got, &m[3]);
	frame_msg_clear(&got);
	n = store_history(s, &q, out, &next);
	CHECK_EQ_INT(n, 7);
	for (long i = 0; i < n; i++) {
		CHECK_EQ_INT(out[i].ts, 1000 + i);
		frame_msg_clear(&out[i]);
	}
	store_close(s);
	for (int i = 0; i < 7; i++)
		free(m[i].body);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static void
test_outbox(const struct ctx *c)
{
	char id[3][PAPO_MSGID_LEN + 1], id4[PAPO_MSGID_LEN + 1];
	struct store_stats st;
	char home[64];
	struct store *s;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	CHECK(store_outbox_at(s, 0) == NULL);
	for (int i = 0; i < 3; i++) {
		sec_msgid_new(id[i]);
		CHECK_EQ_INT(store_outbox_add(s, id[i]), 0);
	}
	CHECK_EQ_INT(store_outbox_add(s, id[1]), 0);
	CHECK_EQ_INT(store_outbox_add(s, "bad id"), -1);
	store_stats(s, &st);
	CHECK_EQ_INT(st.outbox, 3);
	CHECK_EQ_INT(file_size(home, "outbox.jsonl"), 3 * 20);
	CHECK_EQ_INT(store_outbox_del(s, id[1]), 0);
	CHECK(!store_outbox_has(s, id[1]));
	CHECK(store_outbox_has(s, id[0]));
	CHECK_EQ_INT(store_outbox_del(s, "aaaaaaaaaa"), 0);
	store_close(s);

	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.outbox, 2);
	CHECK_EQ_STR(store_outbox_at(s, 0), id[0]);
	CHECK_EQ_STR(store_outbox_at(s, 1), id[2]);
	CHECK(store_outbox_at(s, 2) == NULL);
	CHECK(!store_outbox_has(s, id[1]));
	store_close(s);

	/* A torn line is dropped. */
	append_str(home, "outbox.jsonl", "{\"id\":\"abc");
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.outbox, 2);
	CHECK_EQ_INT(st.dropped, 1);
	CHECK_EQ_INT(file_size(home, "outbox.jsonl"), 2 * 20);
	store_close(s);

	/* A damaged line in the middle is skipped, the rest kept. */
	append_str(home, "outbox.jsonl", "{\"id\":\"!!!!!!!!!!\"}\n");
	append_str(home, "outbox.jsonl", "{\"id\":\"");
	append_str(home, "outbox.jsonl", id[1]);
	append_str(home, "outbox.jsonl", "\"}\n");
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.outbox, 3);
	CHECK_EQ_INT(st.dropped, 1);
	CHECK_EQ_STR(store_outbox_at(s, 0), id[0]);
	CHECK_EQ_STR(store_outbox_at(s, 1), id[2]);
	CHECK_EQ_STR(store_outbox_at(s, 2), id[1]);
	/* Deleting rewrites the file without the damaged line, and an add
	 * after the rewrite goes to the new file. */
	CHECK_EQ_INT(store_outbox_del(s, id[0]), 0);
	CHECK_EQ_INT(file_size(home, "outbox.jsonl"), 2 * 20);
	sec_msgid_new(id4);
	CHECK_EQ_INT(store_outbox_add(s, id4), 0);
	CHECK_EQ_INT(file_size(home, "outbox.jsonl"), 3 * 20);
	store_close(s);

	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.outbox, 3);
	CHECK_EQ_INT(st.dropped, 0);
	CHECK_EQ_STR(store_outbox_at(s, 0), id[2]);
	CHECK_EQ_STR(store_outbox_at(s, 1), id[1]);
	CHECK_EQ_STR(store_outbox_at(s, 2), id4);

	/* An add waits for the commit; a message delivered leaves the
	 * outbox at once, and its file at the next rewrite (tidy, or the
	 * close). */
	CHECK_EQ_INT(store_uncommitted(s), 0);
	sec_msgid_new(id[0]);
	CHECK_EQ_INT(store_outbox_add(s, id[0]), 0);
	CHECK_EQ_INT(store_uncommitted(s), 1);
	CHECK_EQ_INT(store_commit(s), 0);
	CHECK_EQ_INT(store_uncommitted(s), 0);
	CHECK_EQ_INT(store_outbox_done(s, id[2]), 0);
	CHECK(!store_outbox_has(s, id[2]));
	CHECK_EQ_STR(store_outbox_at(s, 0), id[1]);
	CHECK_EQ_INT(file_size(home, "outbox.jsonl"), 4 * 20);
	CHECK_EQ_INT(store_outbox_tidy(s), 0);
	CHECK_EQ_INT(file_size(home, "outbox.jsonl"), 3 * 20);
	CHECK_EQ_INT(store_outbox_done(s, id[1]), 0);
	store_close(s);
	CHECK_EQ_INT(file_size(home, "outbox.jsonl"), 2 * 20);

	CHECK_EQ_INT(check_rmtree(home), 0);
}

/*
 * The child appends in batches of 1 to 20 messages, each made durable by
 * one store_commit (group commit), until it is killed, and reports a
 * batch's ids on the pipe only once its commit has returned 0, as the
 * daemon acks and answers only then: each reported id is a promise the
 * reopened store must keep.
 */
static void
child_append(const struct ctx *c, const char *home, int wfd)
{
	char err[PAPO_ERR_LEN];
	struct frame_msg m;
	struct store *s;
	char (*line)[PAPO_MSGID_LEN + 1];
	char body[64];
	unsigned i = 0;

	if ((s = store_open(err, home, &c->k, NULL)) == NULL ||
	    (line = calloc(20, sizeof(*line))) == NULL) {
		fprintf(stderr, "child: %s\n", err);
		_exit(1);
	}
	for (;;) {
		uint32_t n = 1 + randombytes_uniform(20);

		for (uint32_t j = 0; j < n; j++, i++) {
			snprintf(body, sizeof(body), "message %u, padded out a bit", i);
			make_msg(c, &m, body, 1000 + i);
			if (store_add_msg(s, &m) != 1)
				_exit(1);
			free(m.body);
			memcpy(line[j], m.id, PAPO_MSGID_LEN);
			line[j][PAPO_MSGID_LEN] = '\n';
		}
		if (store_commit(s) != 0 ||
		    write(wfd, line, n * sizeof(*line)) != (ssize_t)(n * sizeof(*line)))
			_exit(1);
	}
}

static long long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Reads whole id lines from fd into ids until the deadline (or EOF when
 * deadline is -1). */
static void
read_ids(int fd, long long deadline, char (**ids)[PAPO_MSGID_LEN + 1],
    size_t *n, size_t *cap, char *part, size_t *partlen)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char b[4096];
		int timeout = -1;
		ssize_t r;

		if (deadline != -1) {
			long long left = deadline - now_ms();

			if (left <= 0)
				return;
			timeout = (int)left;
		}
		if (poll(&pfd, 1, timeout) <= 0)
			continue;
		if ((r = read(fd, b, sizeof(b))) <= 0)
			return;
		for (ssize_t i = 0; i < r; i++) {
			if (b[i] != '\n') {
				if (*partlen < PAPO_MSGID_LEN)
					part[(*partlen)++] = b[i];
				continue;
			}
			if (*n == *cap) {
				*cap = *cap ? *cap * 2 : 1024;
				*ids = realloc(*ids, *cap * sizeof(**ids));
				if (*ids == NULL)
					exit(1);
			}
			memcpy((*ids)[*n], part, PAPO_MSGID_LEN);
			(*ids)[*n][PAPO_MSGID_LEN] = '\0';
			(*n)++;
			*partlen = 0;
		}
	}
}

static void
test_kill(const struct ctx *c)
{
	char (*ids)[PAPO_MSGID_LEN + 1] = NULL;
	size_t nids = 0, cap = 0;
	char home[64];

	check_tmpdir(home, sizeof(home), "store");
	for (int round = 0; round < 5; round++) {
		char part[PAPO_MSGID_LEN];
		size_t partlen = 0, before = nids, missing = 0;
		struct store_stats st;
		struct store *s;
		int p[2], status;
		long long deadline;
		pid_t pid;

		if (pipe(p) == -1 || (pid = fork()) == -1) {
			perror("pipe/fork");
			exit(1);
		}
		if (pid == 0) {
			close(p[0]);
			child_append(c, home, p[1]);
			_exit(1);
		}
		close(p[1]);
		/* Kill it after a random 50 to 300 ms of appending, and once
		 * it has acknowledged one at least: a loaded machine may take
		 * longer than that to start the child. */
		deadline = now_ms() + 50 + (long long)randombytes_uniform(251);
		read_ids(p[0], deadline, &ids, &nids, &cap, part, &partlen);
		for (int waits = 0; nids == before && waits < 600; waits++)
			read_ids(p[0], now_ms() + 50, &ids, &nids, &cap, part,
			    &partlen);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		read_ids(p[0], -1, &ids, &nids, &cap, part, &partlen);
		close(p[0]);
		CHECK(nids > before);

		s = open_or_die(home, c);
		store_stats(s, &st);
		CHECK(st.msgs >= nids);
		CHECK(st.dropped <= 1);
		for (size_t i = 0; i < nids; i++)
			if (!store_has(s, ids[i]))
				missing++;
		CHECK_EQ_INT(missing, 0);
		if (nids > 0) {
			struct frame_msg got;

			CHECK_EQ_INT(store_get(s, ids[nids - 1], &got), 0);
			frame_msg_clear(&got);
		}
		store_close(s);
	}
	fprintf(stderr, "test_kill: %zu acknowledged messages kept\n", nids);
	free(ids);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static void
test_errors(const struct ctx *c)
{
	char err[PAPO_ERR_LEN], home[64], file[128], under[160];
	struct store *s;

	check_tmpdir(home, sizeof(home), "store");
	snprintf(file, sizeof(file), "%s/plain", home);
	append_raw(home, "plain", "x", 1);

	/* A home that is a regular file. */
	s = store_open(err, file, &c->k, NULL);
	CHECK(s == NULL);
	CHECK(strstr(err, file) != NULL);
	CHECK(strstr(err, "Not a directory") != NULL);

	/* A home below a regular file. */
	snprintf(under, sizeof(under), "%s/sub", file);
	s = store_open(err, under, &c->k, NULL);
	CHECK(s == NULL);
	CHECK(strstr(err, under) != NULL);

	/* A home that does not exist. */
	snprintf(under, sizeof(under), "%s/missing", home);
	s = store_open(err, under, &c->k, NULL);
	CHECK(s == NULL);
	CHECK(strstr(err, under) != NULL);
	CHECK_EQ_INT(check_rmtree(home), 0);

	/* What a store refuses to write. */
	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	{
		struct frame_msg m;

		make_msg(c, &m, "x", 1);
		memcpy(m.id, "NOT-AN-ID!", sizeof(m.id));
		errno = 0;
		CHECK_EQ_INT(store_add_msg(s, &m), -1);
		CHECK_EQ_INT(errno, EINVAL);
		free(m.body);
	}
	CHECK_EQ_INT(file_size(home, "log.jsonl"), 0);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/*
 * A failing disk under group commit: a batch whose sync fails is cut off
 * the log and forgotten, as if never written (its messages are not held,
 * its receipts not counted, the log's size and digest as before it), so
 * whoever had been told nothing of it takes it again when it comes again;
 * the batches before and after it are kept, across a reopen.
 */
static void add_n(const struct ctx *c, struct store *s, size_t n,
    uint64_t base, char (*ids)[PAPO_MSGID_LEN + 1]);
static void add_ack(const struct ctx *c, struct store *s, const char *id);

static void
test_sync_fail(const struct ctx *c)
{
	char ids[4][PAPO_MSGID_LEN + 1], late[2][PAPO_MSGID_LEN + 1];
	uint8_t d0[PAPO_KEY_LEN], d1[PAPO_KEY_LEN];
	struct frame_ack acks[4];
	struct store_stats st;
	struct frame_msg m[2];
	char home[64];
	struct store *s;
	long size;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	add_n(c, s, 4, 100, ids);
	add_ack(c, s, ids[0]);
	CHECK_EQ_INT(store_uncommitted(s), 5);
	CHECK_EQ_INT(store_commit(s), 0);
	CHECK_EQ_INT(store_uncommitted(s), 0);
	CHECK_EQ_INT(store_commit(s), 0);       /* nothing waits: no-op */
	size = file_size(home, "log.jsonl");
	store_digest(s, d0);

	/* The next batch: two messages and a receipt, then a failed sync. */
	for (int i = 0; i < 2; i++) {
		make_msg(c, &m[i], i ? "late two" : "late one", 200 + (uint64_t)i);
		CHECK_EQ_INT(store_add_msg(s, &m[i]), 1);
		strcpy(late[i], m[i].id);
	}
	add_ack(c, s, ids[1]);
	CHECK(store_has(s, late[0]));
	store_test_sync_fail(s, 1);
	errno = 0;
	CHECK_EQ_INT(store_commit(s), -1);
	CHECK_EQ_INT(errno, EIO);
	CHECK_EQ_INT(store_uncommitted(s), 0);
	CHECK(!store_has(s, late[0]) && !store_has(s, late[1]));
	CHECK_EQ_INT(file_size(home, "log.jsonl"), size);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 4);
	CHECK_EQ_INT(st.acks, 1);
	CHECK_EQ_INT(store_acks(s, ids[1], acks, 4), 0);
	store_digest(s, d1);
	CHECK(memcmp(d0, d1, sizeof(d0)) == 0);

	/* They come again (the senders were told nothing): taken anew. */
	CHECK_EQ_INT(store_add_msg(s, &m[0]), 1);
	CHECK_EQ_INT(store_add_msg(s, &m[1]), 1);
	CHECK_EQ_INT(store_commit(s), 0);
	store_close(s);

	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 6);
	CHECK_EQ_INT(st.acks, 1);
	CHECK_EQ_INT(st.dropped, 0);
	CHECK(store_has(s, late[0]) && store_has(s, late[1]));
	CHECK_EQ_INT(store_acks(s, ids[0], acks, 4), 1);

	/* A compaction commits what waits first; when that sync fails, the
	 * next commit says so, so that nothing held for those lines is
	 * said. */
	{
		struct store_keep keep = { .count = 2 };
		char err[PAPO_ERR_LEN];

		add_n(c, s, 1, 300, NULL);
		store_test_sync_fail(s, 1);
		CHECK_EQ_INT(store_compact(err, s, &keep, 0), -1);
		store_stats(s, &st);
		CHECK_EQ_INT(st.msgs, 6);
		CHECK_EQ_INT(store_commit(s), -1);
		CHECK_EQ_INT(store_commit(s), 0);
	}
	store_close(s);
	frame_msg_clear(&m[0]);
	frame_msg_clear(&m[1]);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* Retention: PAPO_KEEP's syntax, refused with a reason. */
/*
 * How a ROOM names a room, everywhere (home_pick): its id; its name or
 * the start of its id (4 characters at least) when that is one room;
 * otherwise an error naming the rooms, 404 for none and 409 for several.
 */
static void
test_room_pick(void)
{
	static const struct room_ref rooms[] = {
		{ "AAAABBBBCCCCDDDDEEEEFFFFGG", "alpha", 1 },
		{ "AAAAZZZZCCCCDDDDEEEEFFFFGG", "beta", 0 },
		{ "QQQQBBBBCCCCDDDDEEEEFFFFGG", "beta", 0 },
		{ "RRRRBBBBCCCCDDDDEEEEFFFFGG", "AAAABBBBCCCCDDDDEEEEFFFFGG", 0 },
	};
	static const struct {
		const char *sel;
		long want;          /* the index, or -1 */
		int status;         /* when -1 */
		const char *says;   /* in err, when -1 */
	} cases[] = {
		{ "alpha", 0, 0, NULL },
		{ "AAAABBBBCCCCDDDDEEEEFFFFGG", 0, 0, NULL },  /* an id wins */
		{ "QQQQ", 2, 0, NULL },
		{ "AAAAZ", 1, 0, NULL },
		{ "QQQ", -1, 404, "no room named 'QQQ'" },    /* too short */
		{ "AAAA", -1, 409, "'AAAA' names 2 rooms: give its id" },
		{ "beta", -1, 409, "'beta' names 2 rooms" },
		{ "gamma", -1, 404, "no room named 'gamma'; the rooms are "
		    "alpha (AAAABBBB) [default], beta (AAAAZZZZ), beta" },
		{ "", -1, 404, "no room named ''" },
	};
	char err[PAPO_ERR_LEN], small[24];
	size_t n = sizeof(rooms) / sizeof(rooms[0]);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status = 0;
		long got;

		err[0] = '\0';
		got = home_pick(cases[i].sel, rooms, n, err, &status);
		CHECK_EQ_INT(got, cases[i].want);
		if (cases[i].want != -1)
			continue;
		CHECK_EQ_INT(status, cases[i].status);
		if (strstr(err, cases[i].says) == NULL)
			fprintf(stderr, "home_pick('%s'): '%s', not '%s'\n",
			    cases[i].sel, err, cases[i].says);
		CHECK(strstr(err, cases[i].says) != NULL);
	}
	CHECK_EQ_INT(home_pick("alpha", rooms, 0, err, NULL), -1);
	CHECK(strcmp(err, "this daemon is in no room yet") == 0);
	/* The list is cut to its buffer, never past it. */
	home_refs_format(rooms, n, small, sizeof(small));
	CHECK(strcmp(small, "alpha (AAAABBBB) [defau") == 0);
}

static void
test_keep_parse(void)
{
	static const char *const bad[] = { "0", "0d", "-5", "+5", " 10",
	    "30x", "d", "1.5d", "30dd", "30D", "100000001", "36501d",
	    "99999999999999999999999", "1e3" };
	char err[PAPO_ERR_LEN];
	struct store_keep k;

	CHECK_EQ_INT(store_keep_parse(err, NULL, &k), 0);
	CHECK(k.count == 0 && k.ms == 0);
	CHECK_EQ_INT(store_keep_parse(err, "", &k), 0);
	CHECK(k.count == 0 && k.ms == 0);
	CHECK_EQ_INT(store_keep_parse(err, "1000", &k), 0);
	CHECK(k.count == 1000 && k.ms == 0);
	CHECK_EQ_INT(store_keep_parse(err, "30d", &k), 0);
	CHECK(k.count == 0 && k.ms == 30ull * 86400 * 1000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_EQ_INT(store_keep_parse(err, bad[i], &k), -1);
		CHECK(strstr(err, "PAPO_KEEP must be") != NULL);
		CHECK(strstr(err, bad[i]) != NULL);
	}
}

/* n messages at times base, base+1, ...; their ids in ids. */
static void
add_n(const struct ctx *c, struct store *s, size_t n, uint64_t base,
    char (*ids)[PAPO_MSGID_LEN + 1])
{
	for (size_t i = 0; i < n; i++) {
		struct frame_msg m;
		char body[32];

		snprintf(body, sizeof(body), "message %zu", i);
		make_msg(c, &m, body, base + i);
		CHECK_EQ_INT(store_add_msg(s, &m), 1);
		if (ids != NULL)
			strcpy(ids[i], m.id);
		frame_msg_clear(&m);
	}
}

static void
add_ack(const struct ctx *c, struct store *s, const char *id)
{
	struct frame_ack a;

	memset(&a, 0, sizeof(a));
	strcpy(a.id, id);
	a.state = ACK_DELIVERED;
	a.ts = 5000;
	CHECK_EQ_INT(frame_ack_sign(&a, &c->k, c->me), 0);
	CHECK_EQ_INT(store_add_ack(s, &a), 0);
}

static void
first_line(const char *home, char *out, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/log.jsonl", home);
	out[0] = '\0';
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(out, (int)n, f) == NULL)
			out[0] = '\0';
		fclose(f);
	}
}

/*
 * A compaction that finds a torn last line (bytes without a newline,
 * written since the log was read): it is cut off as at start, and the
 * compaction goes on; not "cannot truncate: Invalid argument".
 */
static void
test_compact_torn(const struct ctx *c)
{
	char home[64], err[PAPO_ERR_LEN], path[128];
	struct store_keep keep = { .count = 10 };
	struct store_stats st;
	struct store *s;
	FILE *f;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	add_n(c, s, 30, 1000, NULL);
	snprintf(path, sizeof(path), "%s/log.jsonl", home);
	CHECK((f = fopen(path, "a")) != NULL);
	if (f != NULL) {
		fputs("{\"t\":\"msg\",\"torn", f);
		fclose(f);
	}
	err[0] = '\0';
	CHECK_EQ_INT(store_compact(err, s, &keep, 0), 20);
	if (err[0] != '\0')
		fprintf(stderr, "store_compact: %s\n", err);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 10);
	store_close(s);
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 10);
	CHECK_EQ_INT(st.dropped, 0);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/*
 * A count: the newest N stay, with the outbox's messages whatever their
 * age and the receipts of what stays; the floor and the number dropped
 * are in the first line and survive a reopen; what is below the floor is
 * refused; the store goes on taking messages.
 */
static void
test_compact_count(const struct ctx *c)
{
	static char ids[100][PAPO_MSGID_LEN + 1];
	char home[64], err[PAPO_ERR_LEN], line[256];
	struct store_keep keep = { .count = 10 };
	struct store_stats st;
	struct store *s;
	uint8_t d1[PAPO_KEY_LEN], d2[PAPO_KEY_LEN];

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	add_n(c, s, 100, 1000, ids);
	add_ack(c, s, ids[10]);       /* of a message dropped */
	add_ack(c, s, ids[95]);       /* of one kept */
	CHECK_EQ_INT(store_outbox_add(s, ids[5]), 0);
	CHECK(!store_below_floor(s, 0));
	CHECK_EQ_INT(store_compact_due(s, &keep, 0, 0), 1);
	CHECK_EQ_INT(store_compact(err, s, &keep, 0), 89);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 11);
	CHECK_EQ_INT(st.acks, 1);
	CHECK_EQ_INT(st.floor, 1090);
	CHECK_EQ_INT(st.gone, 89);
	CHECK(store_has(s, ids[5]));
	CHECK(!store_has(s, ids[50]));
	CHECK(!store_has(s, ids[89]));
	CHECK(store_has(s, ids[90]) && store_has(s, ids[99]));
	CHECK(store_below_floor(s, 1089));
	CHECK(!store_below_floor(s, 1090));
	first_line(home, line, sizeof(line));
	CHECK_EQ_STR(line, "{\"t\":\"retention\",\"floor\":1090,"
	    "\"dropped\":89}\n");
	/* Nothing more to drop: nothing is rewritten. */
	CHECK_EQ_INT(store_compact_due(s, &keep, 0, 0), 1);
	CHECK_EQ_INT(store_compact(err, s, &keep, 0), 0);
	store_digest(s, d1);
	/* The store goes on: a new message lands in the new log. */
	add_n(c, s, 1, 2000, NULL);
	store_close(s);

	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 12);
	CHECK_EQ_INT(st.floor, 1090);
	CHECK_EQ_INT(st.gone, 89);
	CHECK_EQ_INT(st.dropped, 0);
	CHECK(store_has(s, ids[5]) && store_has(s, ids[99]));
	/* A quarter over the count before a compaction is due. */
	CHECK_EQ_INT(store_compact_due(s, &keep, 0, 1), 0);
	add_n(c, s, 1, 2001, NULL);
	CHECK_EQ_INT(store_compact_due(s, &keep, 0, 1), 1);
	/* Acked at last: the old one goes too, and the total adds up. */
	CHECK_EQ_INT(store_outbox_del(s, ids[5]), 0);
	CHECK_EQ_INT(store_compact(err, s, &keep, 0), 3);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 10);
	CHECK_EQ_INT(st.gone, 92);
	CHECK_EQ_INT(st.floor, 1092);
	store_digest(s, d2);
	CHECK(memcmp(d1, d2, PAPO_KEY_LEN) != 0);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* Days: what is older than the window goes, the rest stays. */
static void
test_compact_days(const struct ctx *c)
{
	const uint64_t day = 86400ull * 1000, now = 100 * day;
	char home[64], err[PAPO_ERR_LEN];
	struct store_keep keep = { .ms = 2 * day };
	struct store_stats st;
	struct store *s;

	check_tmpdir(home, sizeof(home), "store");
	s = open_or_die(home, c);
	add_n(c, s, 5, now - 5 * day, NULL);      /* old */
	add_n(c, s, 7, now - day, NULL);          /* young */
	CHECK_EQ_INT(store_compact_due(s, &keep, now, 0), 1);
	CHECK_EQ_INT(store_compact_due(s, &keep, now, 1), 1);
	CHECK_EQ_INT(store_compact(err, s, &keep, now), 5);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 7);
	CHECK_EQ_INT(st.floor, now - 2 * day);
	CHECK_EQ_INT(store_compact_due(s, &keep, now, 0), 0);
	/* Within a tenth of the window past it: not yet worth a rewrite. */
	CHECK_EQ_INT(store_compact_due(s, &keep, now + day + 1000, 1), 0);
	CHECK_EQ_INT(store_compact_due(s, &keep, now + day + 1000, 0), 1);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* A retention line anywhere but first, or malformed, costs only itself. */
static void
test_compact_damaged(const struct ctx *c)
{
	char home[64];
	struct store_stats st;
	struct store *s;

	check_tmpdir(home, sizeof(home), "store");
	append_str(home, "log.jsonl", "{\"t\":\"retention\",\"floor\":-5,"
	    "\"dropped\":1}\n");
	for (int i = 0; i < 2; i++) {
		struct frame_msg m;
		struct buf b;

		make_msg(c, &m, "kept", 1000 + (uint64_t)i);
		encode_line(&m, &b);
		append_raw(home, "log.jsonl", b.p, b.len);
		buf_free(&b);
		frame_msg_clear(&m);
		if (i == 0)
			append_str(home, "log.jsonl", "{\"t\":\"retention\","
			    "\"floor\":1500,\"dropped\":1}\n");
	}
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 2);
	CHECK_EQ_INT(st.floor, 0);
	CHECK_EQ_INT(st.dropped, 2);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static int
read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;

	*out = NULL;
	if (f == NULL)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	if ((*out = malloc((size_t)n + 1)) == NULL ||
	    fread(*out, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		return -1;
	}
	fclose(f);
	*len = (size_t)n;
	return 0;
}

/*
 * kill -9 in the middle of a rewrite (half the new log written, paused
 * by the test setting): the log is the old one byte for byte, and opens
 * with everything; a later compaction ignores the leftover.
 */
static void
test_compact_kill(const struct ctx *c)
{
	char home[64], path[512], tmp[512], err[PAPO_ERR_LEN];
	struct store_keep keep = { .count = 100 };
	char *before = NULL, *after = NULL;
	size_t nb = 0, na = 0;
	struct store_stats st;
	struct store *s;
	pid_t pid;
	int status;

	check_tmpdir(home, sizeof(home), "store");
	snprintf(path, sizeof(path), "%s/log.jsonl", home);
	snprintf(tmp, sizeof(tmp), "%s/log.jsonl.tmp", home);
	s = open_or_die(home, c);
	add_n(c, s, 1000, 1000, NULL);
	store_close(s);
	CHECK_EQ_INT(read_file(path, &before, &nb), 0);
	if ((pid = fork()) == 0) {
		setenv("PAPO_TEST_COMPACT_PAUSE_MS", "20000", 1);
		s = open_or_die(home, c);
		store_compact(err, s, &keep, 0);
		_exit(0);
	}
	/* The header and the first half of what stays: on disk before the
	 * pause, never renamed yet. */
	for (int i = 0; i < 200 && file_size(home, "log.jsonl.tmp") < 2000;
	    i++)
		usleep(50 * 1000);
	CHECK(file_size(home, "log.jsonl.tmp") >= 2000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status));
	CHECK_EQ_INT(read_file(path, &after, &na), 0);
	CHECK_EQ_INT(na, nb);
	CHECK(na == nb && memcmp(before, after, nb) == 0);
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 1000);
	CHECK_EQ_INT(st.dropped, 0);
	CHECK_EQ_INT(store_compact(err, s, &keep, 0), 900);
	store_close(s);
	s = open_or_die(home, c);
	store_stats(s, &st);
	CHECK_EQ_INT(st.msgs, 100);
	CHECK_EQ_INT(st.dropped, 0);
	CHECK_EQ_INT(st.gone, 900);
	CHECK(file_size(home, "log.jsonl.tmp") == -1);
	store_close(s);
	free(before);
	free(after);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

int
main(void)
{
	char err[PAPO_ERR_LEN];
	uint8_t secret[PAPO_KEY_LEN];
	struct ctx c;

	memset(&c, 0, sizeof(c));
	if (sec_init() == -1)
		return 1;
	check_tmpdir(c.idhome, sizeof(c.idhome), "store");
	if ((c.me = sec_identity_load(err, c.idhome)) == NULL) {
		fprintf(stderr, "sec_identity_load: %s\n", err);
		return 1;
	}
	randombytes_buf(secret, sizeof(secret));
	sec_room_keys(secret, &c.k);

	test_roundtrip(&c);
	test_many(&c);
	test_history(&c);
	test_paging(&c);
	test_digest(&c);
	test_torn(&c);
	test_damaged(&c);
	test_damaged_read(&c);
	test_outbox(&c);
	test_kill(&c);
	test_sync_fail(&c);
	test_errors(&c);
	test_keep_parse();
	test_compact_count(&c);
	test_compact_torn(&c);
	test_compact_days(&c);
	test_compact_damaged(&c);
	test_compact_kill(&c);
	test_room_pick();

	sec_identity_free(c.me);
	CHECK_EQ_INT(check_rmtree(c.idhome), 0);
	return check_exit();
}
