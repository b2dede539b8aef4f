/*
 * test_index.c: the search index as a user of search sees it: words,
 * phrases, prefixes, accents folded, CJK and emoji, filters (author,
 * addressee, times, files, threads), pages that neither repeat nor skip,
 * an index deleted, truncated, damaged, stale or left behind by a crash
 * rebuilt or caught up with nothing lost, what retention drops gone from
 * search too, and queries of every bad kind answered with hits or a
 * clear error, never SQLite's.  Messages are signed for real.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>
#include <sqlite3.h>

#include "lib/buf.h"
#include "node/store/index.h"
#include "node/wire/attach.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"
#include "tests/check.h"

#define T0 1700000000000ull

struct ctx {
	struct identity *me, *other;
	struct room_keys k;
	char idhome[64], idhome2[64];
};

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

/* Adds a message by who (its id into id, unless NULL). */
static void
add(struct store *s, const struct ctx *c, const struct identity *who,
    const char *body, uint64_t ts, const char *reply_to,
    const struct identity *to, char id[PAPO_MSGID_LEN + 1])
{
	struct frame_msg m;

	memset(&m, 0, sizeof(m));
	sec_msgid_new(m.id);
	snprintf(m.name, sizeof(m.name), "%s", who == c->me ? "ann" : "bob");
	m.ts = ts;
	if ((m.body = strdup(body)) == NULL)
		exit(1);
	m.body_len = strlen(body);
	if (reply_to != NULL) {
		m.has_reply_to = 1;
		snprintf(m.reply_to, sizeof(m.reply_to), "%s", reply_to);
	}
	if (to != NULL) {
		m.has_to = 1;
		memcpy(m.to, to->pk, PAPO_KEY_LEN);
	}
	if (frame_msg_sign(&m, &c->k, who) == -1) {
		fprintf(stderr, "frame_msg_sign failed\n");
		exit(1);
	}
	if (store_add_msg(s, &m) != 1) {
		fprintf(stderr, "store_add_msg failed\n");
		exit(1);
	}
	if (id != NULL)
		memcpy(id, m.id, PAPO_MSGID_LEN + 1);
	frame_msg_clear(&m);
}

/* Hits of q (text and limit set by the caller's q or defaults); -1 with
 * *code on an error.  first gets the first hit's excerpt ("" none). */
static long
search(struct store *s, struct ix_query *q, struct ix_hit *out, int *more,
    int *code, char err[PAPO_ERR_LEN])
{
	if (q->limit == 0)
		q->limit = 50;
	int ranked;

	return store_search(err, s, q, out, more, &ranked, code);
}

/* Whether a mark of h covers exactly word in its excerpt (marks count
 * code points). */
static int
marked(const struct ix_hit *h, const char *word)
{
	for (size_t i = 0; i < h->nmarks; i++) {
		const char *p = h->excerpt, *a = NULL, *b = NULL;
		uint32_t cp = 0;

		for (;; p++) {
			if ((*p & 0xc0) != 0x80) {
				if (cp == h->marks[i][0])
					a = p;
				if (cp == h->marks[i][1])
					b = p;
				cp++;
			}
			if (*p == '\0')
				break;
		}
		if (a != NULL && b != NULL && (size_t)(b - a) == strlen(word) &&
		    memcmp(a, word, strlen(word)) == 0)
			return 1;
	}
	return 0;
}

/* How many messages text finds (all pages), or -1. */
static long
count(struct store *s, const char *text)
{
	struct ix_query q;
	struct ix_hit h[IX_LIMIT_MAX];
	char err[PAPO_ERR_LEN];
	int more = 1, code, ranked;
	long n, total = 0;

	memset(&q, 0, sizeof(q));
	q.text = text;
	q.limit = IX_LIMIT_MAX;
	while (more) {
		if ((n = store_search(err, s, &q, h, &more, &ranked,
		    &code)) < 0) {
			fprintf(stderr, "search '%s': %d %s\n", text, code,
			    err);
			return -1;
		}
		ix_hits_free(h, (size_t)n);
		total += n;
		q.offset += (uint64_t)n;
	}
	return total;
}

static void
test_words(const struct ctx *c)
{
	struct ix_query q;
	struct ix_hit h[50];
	char home[64], err[PAPO_ERR_LEN], id[PAPO_MSGID_LEN + 1];
	struct store *s;
	int more, code;
	long n;

	check_tmpdir(home, sizeof(home), "index");
	s = open_or_die(home, c);
	add(s, c, c->me, "the quick brown fox jumps", T0 + 1, NULL, NULL,
	    id);
	add(s, c, c->me, "brown and quick are words", T0 + 2, NULL, NULL,
	    NULL);
	add(s, c, c->me, "deployment went fine", T0 + 3, NULL, NULL, NULL);
	add(s, c, c->me, "we deployed on Friday", T0 + 4, NULL, NULL, NULL);
	add(s, c, c->me, "Le caf\xc3\xa9 cr\xc3\xa8me est br\xc3\xbbl\xc3\xa9",
	    T0 + 5, NULL, NULL, NULL);
	add(s, c, c->me, "\xe6\x9d\xb1\xe4\xba\xac \xe3\x82\xbf\xe3\x83\xaf"
	    "\xe3\x83\xbc \xe3\x81\xab\xe8\xa1\x8c\xe3\x81\x8f", T0 + 6, NULL,
	    NULL, NULL);                      /* 東京 タワー に行く */
	add(s, c, c->me, "ship it \xf0\x9f\x9a\x80 rocketfuel", T0 + 7, NULL,
	    NULL, NULL);

	CHECK_EQ_INT(count(s, "quick"), 2);
	CHECK_EQ_INT(count(s, "QUICK Brown"), 2);
	CHECK_EQ_INT(count(s, "\"quick brown\""), 1);
	CHECK_EQ_INT(count(s, "\"brown quick\""), 0);
	CHECK_EQ_INT(count(s, "deploy"), 0);
	CHECK_EQ_INT(count(s, "deploy*"), 2);
	CHECK_EQ_INT(count(s, "\"deployment went\"*"), 1);
	/* Accents folded both ways. */
	CHECK_EQ_INT(count(s, "cafe creme"), 1);
	CHECK_EQ_INT(count(s, "caf\xc3\xa9 brule"), 1);
	/* CJK: each character a word, a word of several a phrase of
	 * them, found inside a run as well as between spaces. */
	CHECK_EQ_INT(count(s, "\xe6\x9d\xb1\xe4\xba\xac"), 1);
	CHECK_EQ_INT(count(s, "\xe3\x82\xbf*"), 1);
	CHECK_EQ_INT(count(s, "\xe5\xa4\xa7\xe9\x98\xaa"), 0);   /* 大阪 */
	CHECK_EQ_INT(count(s, "\xe4\xba\xac"), 1);                 /* 京 */
	CHECK_EQ_INT(count(s, "\xe3\x82\xbf\xe3\x83\xaf"), 1);  /* タワ */
	CHECK_EQ_INT(count(s, "\xe8\xa1\x8c\xe3\x81\x8f"), 1);  /* 行く */
	CHECK_EQ_INT(count(s, "\xe4\xba\xac\xe6\x9d\xb1"), 0);  /* 京東 */
	/* An emoji is no word: the words beside it are found; alone it is
	 * found nowhere, and that is no error. */
	CHECK_EQ_INT(count(s, "rocketfuel"), 1);
	CHECK_EQ_INT(count(s, "\xf0\x9f\x9a\x80"), 0);

	/* The excerpt marks the hits. */
	memset(&q, 0, sizeof(q));
	q.text = "fox";
	n = search(s, &q, h, &more, &code, err);
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_EQ_STR(h[0].id, id);
		CHECK(marked(&h[0], "fox"));
		CHECK_EQ_INT(h[0].nmarks, 1);
		CHECK(strstr(h[0].excerpt, "the quick brown fox jumps") !=
		    NULL);
	}
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	/* A message's own brackets are its text, never taken for marks;
	 * the characters of a CJK word found are marked as one. */
	add(s, c, c->me, "see [note] and ]odd[ brackets near zebra", T0 + 9,
	    NULL, NULL, NULL);
	memset(&q, 0, sizeof(q));
	q.text = "zebra";
	n = search(s, &q, h, &more, &code, err);
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK(strstr(h[0].excerpt, "[note] and ]odd[") != NULL);
		CHECK_EQ_INT(h[0].nmarks, 1);
		CHECK(marked(&h[0], "zebra"));
	}
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	memset(&q, 0, sizeof(q));
	q.text = "\xe3\x82\xbf\xe3\x83\xaf";
	n = search(s, &q, h, &more, &code, err);
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK_EQ_INT(h[0].nmarks, 1);
		CHECK(marked(&h[0], "\xe3\x82\xbf\xe3\x83\xaf"));
	}
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	/* Ranked: the message that says it three times comes first. */
	add(s, c, c->me, "fox fox fox", T0 + 8, NULL, NULL, id);
	memset(&q, 0, sizeof(q));
	q.text = "fox";
	n = search(s, &q, h, &more, &code, err);
	CHECK_EQ_INT(n, 2);
	if (n == 2)
		CHECK_EQ_STR(h[0].id, id);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* A body naming one file, as attach.h writes it. */
static void
with_file(char *out, size_t n, const char *text)
{
	char ref[ATTACH_REF_LEN + 1];

	memset(ref, 'a', ATTACH_REF_LEN);
	ref[ATTACH_REF_LEN] = '\0';
	snprintf(out, n, "%s\n\n\xf0\x9f\x93\x8e notes.txt (5 bytes, "
	    "text/plain) papo-file:%s:%s", text, ref, ref);
}

static void
test_filters(const struct ctx *c)
{
	struct ix_query q;
	struct ix_hit h[50];
	char home[64], err[PAPO_ERR_LEN], body[512];
	char root[PAPO_MSGID_LEN + 1], r1[PAPO_MSGID_LEN + 1],
	    r2[PAPO_MSGID_LEN + 1], other[PAPO_MSGID_LEN + 1],
	    annid[PAPO_ID_LEN + 1], bobid[PAPO_ID_LEN + 1];
	struct store *s;
	int more, code;
	long n;

	sec_id_format(c->me->pk, annid);
	sec_id_format(c->other->pk, bobid);
	check_tmpdir(home, sizeof(home), "index");
	s = open_or_die(home, c);
	add(s, c, c->me, "plan: release on monday", T0 + 10, NULL, NULL,
	    root);
	add(s, c, c->other, "release notes ready?", T0 + 20, root, NULL, r1);
	add(s, c, c->me, "yes, release notes are ready", T0 + 30, r1, c->other,
	    r2);
	add(s, c, c->other, "unrelated release chatter", T0 + 40, NULL,
	    c->me, other);
	with_file(body, sizeof(body), "release notes attached");
	add(s, c, c->me, body, T0 + 50, NULL, NULL, NULL);

	memset(&q, 0, sizeof(q));
	q.text = "release";
	CHECK_EQ_INT(search(s, &q, h, &more, &code, err), 5);
	ix_hits_free(h, 5);
	q.from_id = bobid;
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 2);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	q.from_id = NULL;
	q.from_name = "bob";      /* the name the messages bear */
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 2);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	q.from_name = "nobody";
	CHECK_EQ_INT(search(s, &q, h, &more, &code, err), 0);
	q.from_name = NULL;
	q.to_id = bobid;
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 1);
	if (n == 1)
		CHECK_EQ_STR(h[0].id, r2);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	q.to_id = NULL;
	q.after = T0 + 20;
	q.before = T0 + 50;
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 2);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	q.after = q.before = 0;
	q.files = 1;
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 1);
	/* The file's line is not text: its name is not searched. */
	if (n == 1)
		CHECK(strstr(h[0].excerpt, "papo-file") == NULL);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	q.files = 0;
	CHECK_EQ_INT(count(s, "notes.txt"), 0);

	/* A thread: the root and its replies at any depth, oldest first,
	 * with or without words. */
	memset(&q, 0, sizeof(q));
	q.thread = root;
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 3);
	if (n == 3) {
		CHECK_EQ_STR(h[0].id, root);
		CHECK_EQ_STR(h[1].id, r1);
		CHECK_EQ_STR(h[2].id, r2);
		CHECK(h[0].excerpt == NULL);
	}
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	q.thread = r1;
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 2);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	q.thread = root;
	q.text = "ready";
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 2);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	q.thread = "aaaaaaaaaa";
	q.text = NULL;
	CHECK_EQ_INT(search(s, &q, h, &more, &code, err), 0);
	/* No words, no thread: the newest first. */
	memset(&q, 0, sizeof(q));
	q.limit = 2;
	CHECK_EQ_INT((n = search(s, &q, h, &more, &code, err)), 2);
	CHECK_EQ_INT(more, 1);
	if (n == 2)
		CHECK_EQ_STR(h[1].id, other);
	ix_hits_free(h, n > 0 ? (size_t)n : 0);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static void
test_paging(const struct ctx *c)
{
	struct ix_query q;
	struct ix_hit h[10];
	char home[64], err[PAPO_ERR_LEN], seen[25][PAPO_MSGID_LEN + 1];
	struct store *s;
	int more, code, dup = 0;
	size_t got = 0;
	long n;

	check_tmpdir(home, sizeof(home), "index");
	s = open_or_die(home, c);
	for (int i = 0; i < 25; i++)
		add(s, c, c->me, i % 2 ? "alpha beta" : "alpha alpha gamma",
		    T0 + (uint64_t)i, NULL, NULL, NULL);
	add(s, c, c->me, "no match here", T0 + 99, NULL, NULL, NULL);
	memset(&q, 0, sizeof(q));
	q.text = "alpha";
	q.limit = 10;
	do {
		n = search(s, &q, h, &more, &code, err);
		CHECK(n >= 0);
		for (long i = 0; i < n && got < 25; i++) {
			for (size_t j = 0; j < got; j++)
				dup += strcmp(seen[j], h[i].id) == 0;
			memcpy(seen[got++], h[i].id, PAPO_MSGID_LEN + 1);
		}
		ix_hits_free(h, n > 0 ? (size_t)n : 0);
		q.offset += n > 0 ? (uint64_t)n : 0;
		if (q.offset == 10 || q.offset == 20)
			CHECK_EQ_INT(more, 1);
	} while (n > 0 && more);
	CHECK_EQ_INT(got, 25);
	CHECK_EQ_INT(dup, 0);
	CHECK_EQ_INT(more, 0);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* Every kind of bad query: hits or a 400 with words of ours. */
static void
test_bad(const struct ctx *c)
{
	static const char *const bad[] = {
		"", "   ", "\"", "\"\"", "*", "**", "(", ")", "( )", ":",
		"a:b", "NEAR", "NEAR(a b)", "a AND", "AND", "OR NOT", "^a",
		"-a", "+a", "a\"b", "\"unclosed phrase", "col:word",
		"{a b}:c", "a*b", "\\", "'", "NEAR/2", "fts MATCH",
	};
	struct ix_query q;
	struct ix_hit h[50];
	char home[64], err[PAPO_ERR_LEN], *big;
	struct store *s;
	int more, code;
	long n;

	check_tmpdir(home, sizeof(home), "index");
	s = open_or_die(home, c);
	add(s, c, c->me, "a b c near and or not col word", T0, NULL, NULL,
	    NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&q, 0, sizeof(q));
		q.text = bad[i];
		err[0] = '\0';
		code = 0;
		n = search(s, &q, h, &more, &code, err);
		if (n >= 0) {
			ix_hits_free(h, (size_t)n);
			continue;
		}
		CHECK_EQ_INT(code, 400);
		CHECK(strstr(err, "fts5") == NULL);
		CHECK(strstr(err, "syntax") == NULL);
		if (code != 400)
			fprintf(stderr, "query '%s': %d %s\n", bad[i], code,
			    err);
	}
	/* An empty text is no query: the newest messages. */
	memset(&q, 0, sizeof(q));
	q.text = "";
	CHECK_EQ_INT(search(s, &q, h, &more, &code, err), 1);
	ix_hits_free(h, 1);
	/* Words made only of syntax are refused, clearly. */
	q.text = "( ) : * \"";
	CHECK_EQ_INT(search(s, &q, h, &more, &code, err), -1);
	CHECK_EQ_INT(code, 400);
	CHECK(strstr(err, "no words") != NULL);
	/* Keywords are words. */
	CHECK_EQ_INT(count(s, "NEAR AND"), 1);
	CHECK_EQ_INT(count(s, "col:word"), 1);
	/* 10 KB: refused, saying the limit. */
	big = malloc(10 * 1024 + 1);
	memset(big, 'x', 10 * 1024);
	big[10 * 1024] = '\0';
	q.text = big;
	CHECK_EQ_INT(search(s, &q, h, &more, &code, err), -1);
	CHECK_EQ_INT(code, 400);
	CHECK(strstr(err, "longer than") != NULL);
	free(big);
	q.text = "a";
	q.limit = IX_LIMIT_MAX + IX_RANKED_MAX + 1;
	CHECK_EQ_INT(search(s, &q, h, &more, &code, err), -1);
	CHECK_EQ_INT(code, 400);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static void
copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t r;
	int a = open(from, O_RDONLY), b = open(to, O_WRONLY | O_CREAT |
	    O_TRUNC, 0600);

	if (a == -1 || b == -1) {
		perror(from);
		exit(1);
	}
	while ((r = read(a, buf, sizeof(buf))) > 0)
		if (write(b, buf, (size_t)r) != r)
			exit(1);
	close(a);
	close(b);
}

/* Damages search.db in home the way how says, with the store closed. */
static void
damage(const char *home, const char *how)
{
	char path[512];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/search.db", home);
	if (strcmp(how, "delete") == 0) {
		CHECK_EQ_INT(unlink(path), 0);
		return;
	}
	CHECK_EQ_INT(stat(path, &st), 0);
	if (strcmp(how, "truncate") == 0) {
		CHECK_EQ_INT(truncate(path, st.st_size / 3), 0);
		return;
	}
	if (strcmp(how, "empty") == 0) {
		CHECK_EQ_INT(truncate(path, 0), 0);
		return;
	}
	/* garbage over its middle pages, then over its header */
	if ((fd = open(path, O_WRONLY)) == -1)
		exit(1);
	for (off_t o = st.st_size / 4; o < st.st_size * 3 / 4; o += 512)
		CHECK_EQ_INT(pwrite(fd, "garbage!garbage!garbage!", 24, o), 24);
	if (strcmp(how, "header") == 0)
		CHECK_EQ_INT(pwrite(fd, "not sqlite at all", 17, 0), 17);
	close(fd);
}

static void
test_rebuild(const struct ctx *c)
{
	static const char *const how[] = { "delete", "truncate", "empty",
	    "garbage", "header" };
	char home[64], path[512], old[512], line[64];
	struct store *s;

	check_tmpdir(home, sizeof(home), "index");
	s = open_or_die(home, c);
	for (int i = 0; i < 300; i++) {
		snprintf(line, sizeof(line), "message number n%d common", i);
		add(s, c, i % 2 ? c->me : c->other, line, T0 + (uint64_t)i,
		    NULL, NULL, NULL);
	}
	store_close(s);
	snprintf(path, sizeof(path), "%s/search.db", home);
	{
		struct stat st;

		/* It holds the messages' text: readable by this user only. */
		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	}
	snprintf(old, sizeof(old), "%s/old.db", home);
	copy_file(path, old);
	for (size_t i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		damage(home, how[i]);
		s = open_or_die(home, c);
		CHECK_EQ_INT(count(s, "common"), 300);
		CHECK_EQ_INT(count(s, "n299"), 1);
		store_close(s);
	}
	/* Stale: an older index, and messages the log got after it (a
	 * crash between the append and the index): caught up. */
	s = open_or_die(home, c);
	for (int i = 300; i < 310; i++) {
		snprintf(line, sizeof(line), "message number n%d common", i);
		add(s, c, c->me, line, T0 + (uint64_t)i, NULL, NULL, NULL);
	}
	store_close(s);
	unlink(path);
	copy_file(old, path);
	s = open_or_die(home, c);
	CHECK_EQ_INT(count(s, "common"), 310);
	CHECK_EQ_INT(count(s, "n305"), 1);
	store_close(s);
	/* Another log's index: rebuilt, not believed. */
	{
		char home2[64], path2[512];

		check_tmpdir(home2, sizeof(home2), "index");
		s = open_or_die(home2, c);
		add(s, c, c->me, "elsewhere common", T0, NULL, NULL, NULL);
		store_close(s);
		snprintf(path2, sizeof(path2), "%s/search.db", home2);
		unlink(path);
		copy_file(path2, path);
		CHECK_EQ_INT(check_rmtree(home2), 0);
	}
	s = open_or_die(home, c);
	CHECK_EQ_INT(count(s, "common"), 310);
	CHECK_EQ_INT(count(s, "elsewhere"), 0);
	store_close(s);
	/* No rebuild file is left behind. */
	snprintf(path, sizeof(path), "%s/search.db.tmp", home);
	CHECK(access(path, F_OK) == -1);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static void
test_retention(const struct ctx *c)
{
	struct store_keep k = { .count = 10 };
	char home[64], err[PAPO_ERR_LEN], line[64], path[512];
	struct stat before, after;
	struct store *s;

	check_tmpdir(home, sizeof(home), "index");
	s = open_or_die(home, c);
	for (int i = 0; i < 40; i++) {
		snprintf(line, sizeof(line), "kept or not m%d", i);
		add(s, c, c->me, line, T0 + (uint64_t)i, NULL, NULL, NULL);
	}
	CHECK_EQ_INT(count(s, "kept"), 40);
	snprintf(path, sizeof(path), "%s/search.db", home);
	CHECK_EQ_INT(stat(path, &before), 0);
	CHECK_EQ_INT(store_compact(err, s, &k, T0 + 100), 30);
	/* What it dropped is taken out of the index, which is not made
	 * again (a rebuild renames a new file over it). */
	CHECK_EQ_INT(stat(path, &after), 0);
	CHECK_EQ_INT(before.st_ino, after.st_ino);
	CHECK_EQ_INT(count(s, "kept"), 10);
	CHECK_EQ_INT(count(s, "m5"), 0);
	CHECK_EQ_INT(count(s, "m35"), 1);
	add(s, c, c->me, "kept after", T0 + 50, NULL, NULL, NULL);
	CHECK_EQ_INT(count(s, "kept"), 11);
	store_close(s);
	s = open_or_die(home, c);
	CHECK_EQ_INT(count(s, "kept"), 11);
	CHECK_EQ_INT(stat(path, &after), 0);
	CHECK_EQ_INT(before.st_ino, after.st_ino);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* Opens home as the store of a log longer than those whose index is
 * checked and rebuilt at once (PAPO_TEST_INDEX_INLINE, for the test). */
static struct store *
open_long(const char *home, const struct ctx *c)
{
	struct store *s;

	setenv("PAPO_TEST_INDEX_INLINE", "100", 1);
	s = open_or_die(home, c);
	unsetenv("PAPO_TEST_INDEX_INLINE");
	return s;
}

/* Adds n messages of mine, "WORD nI common", at T0 + I. */
static void
fill(struct store *s, const struct ctx *c, const char *word, int n)
{
	char line[64];

	for (int i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "%s n%d common", word, i);
		add(s, c, c->me, line, T0 + (uint64_t)i, NULL, NULL, NULL);
	}
}

/* A log longer than those rebuilt at once (PAPO_TEST_INDEX_INLINE for
 * the test): its index is rebuilt on a thread while the store goes on;
 * search says so meanwhile, and what is appended meanwhile is found
 * once it is done. */
static void
test_background(const struct ctx *c)
{
	struct ix_query q;
	struct ix_hit h[4];
	char home[64], path[512], err[PAPO_ERR_LEN];
	struct pollfd p;
	struct store *s;
	int more, code;

	check_tmpdir(home, sizeof(home), "index");
	s = open_or_die(home, c);
	fill(s, c, "background", 400);
	CHECK_EQ_INT(store_ix_fd(s), -1);
	store_close(s);
	snprintf(path, sizeof(path), "%s/search.db", home);
	CHECK_EQ_INT(unlink(path), 0);
	s = open_long(home, c);
	CHECK((p.fd = store_ix_fd(s)) != -1);
	memset(&q, 0, sizeof(q));
	q.text = "common";
	q.limit = 4;
	CHECK_EQ_INT(search(s, &q, h, &more, &code, err), -1);
	CHECK_EQ_INT(code, 503);
	CHECK(strstr(err, "being rebuilt") != NULL &&
	    strstr(err, "of 400 messages") != NULL);
	add(s, c, c->me, "background late common", T0 + 500, NULL, NULL,
	    NULL);
	p.events = POLLIN;
	CHECK_EQ_INT(poll(&p, 1, 30000), 1);
	store_ix_ready(s);
	CHECK_EQ_INT(store_ix_fd(s), -1);
	CHECK_EQ_INT(count(s, "common"), 401);
	CHECK_EQ_INT(count(s, "late"), 1);
	CHECK_EQ_INT(count(s, "n399"), 1);
	store_close(s);
	/* A store closed mid-rebuild stops it and leaves no file behind. */
	CHECK_EQ_INT(unlink(path), 0);
	s = open_long(home, c);
	store_close(s);
	s = open_or_die(home, c);
	CHECK_EQ_INT(count(s, "common"), 401);
	store_close(s);
	snprintf(path, sizeof(path), "%s/search.db.tmp", home);
	CHECK(access(path, F_OK) == -1);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* Polls store_ix_fd and calls store_ix_ready until no job is left. */
static void
settle(struct store *s)
{
	struct pollfd p = { .events = POLLIN };

	for (int i = 0; i < 10 && (p.fd = store_ix_fd(s)) != -1; i++) {
		CHECK_EQ_INT(poll(&p, 1, 30000), 1);
		store_ix_ready(s);
	}
	CHECK_EQ_INT(store_ix_fd(s), -1);
}

/* A long log's index (PAPO_TEST_INDEX_INLINE for the test) is checked
 * on a thread beside the room, not at open: search answers from it
 * meanwhile, a whole one is kept, a damaged one is rebuilt with
 * nothing lost, and a store closed mid-check stops it. */
static void
test_check(const struct ctx *c)
{
	char home[64], path[512];
	struct stat before, after;
	struct store *s;
	int fd;

	check_tmpdir(home, sizeof(home), "index");
	s = open_or_die(home, c);
	fill(s, c, "checked", 400);
	store_close(s);
	snprintf(path, sizeof(path), "%s/search.db", home);
	CHECK_EQ_INT(stat(path, &before), 0);

	s = open_long(home, c);
	CHECK(store_ix_fd(s) != -1);                  /* the check runs */
	CHECK_EQ_INT(count(s, "common"), 400);        /* and search too */
	settle(s);
	CHECK_EQ_INT(count(s, "n399"), 1);
	CHECK_EQ_INT(stat(path, &after), 0);
	CHECK_EQ_INT(before.st_ino, after.st_ino);    /* whole: kept */
	store_close(s);

	/* Garbage over the page of one of its indexes (by time), which
	 * opening the index and reading its mark never read: the check
	 * finds it. */
	{
		sqlite3 *db;
		sqlite3_stmt *q;
		char page[4096];
		long root = 0, size = 0;

		CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
		    NULL), SQLITE_OK);
		CHECK_EQ_INT(sqlite3_prepare_v2(db, "SELECT (SELECT rootpage "
		    "FROM sqlite_schema WHERE name = 'msg_ts'), page_size "
		    "FROM pragma_page_size", -1, &q, NULL), SQLITE_OK);
		if (sqlite3_step(q) == SQLITE_ROW) {
			root = sqlite3_column_int64(q, 0);
			size = sqlite3_column_int64(q, 1);
		}
		sqlite3_finalize(q);
		sqlite3_close(db);
		CHECK(root > 1 && size > 0 && size <= (long)sizeof(page));
		for (size_t i = 0; i < sizeof(page); i++)
			page[i] = "garbage!"[i % 8];
		if ((fd = open(path, O_WRONLY)) == -1)
			exit(1);
		CHECK_EQ_INT(pwrite(fd, page, (size_t)size,
		    (off_t)(root - 1) * size), size);
		close(fd);
	}
	s = open_long(home, c);
	CHECK(store_ix_fd(s) != -1);
	settle(s);
	CHECK_EQ_INT(count(s, "common"), 400);
	CHECK_EQ_INT(count(s, "n123"), 1);
	CHECK_EQ_INT(stat(path, &after), 0);
	CHECK(before.st_ino != after.st_ino);         /* rebuilt */
	store_close(s);

	/* Closed while its check may still run: nothing left behind. */
	s = open_long(home, c);
	store_close(s);
	s = open_or_die(home, c);
	CHECK_EQ_INT(store_ix_fd(s), -1);             /* short: at once */
	CHECK_EQ_INT(count(s, "common"), 400);
	store_close(s);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What indexing adds to a message: ix_add alone, timed. */
static void
test_cost(const struct ctx *c)
{
	enum { N = 2000 };
	static uint64_t ns[N];
	struct ix_mark mark;
	struct frame_msg m;
	char home[64], path[512], err[PAPO_ERR_LEN], body[200];
	struct ix *x;
	uint64_t v;

	check_tmpdir(home, sizeof(home), "index");
	snprintf(path, sizeof(path), "%s/search.db", home);
	if ((x = ix_open(err, path, &mark)) == NULL) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	for (int i = 0; i < N; i++) {
		struct timespec a, b;

		memset(&m, 0, sizeof(m));
		sec_msgid_new(m.id);
		sec_msgid_valid(m.id, &v);
		memcpy(m.from, c->me->pk, PAPO_KEY_LEN);
		snprintf(m.name, sizeof(m.name), "ann");
		m.ts = T0 + (uint64_t)i;
		snprintf(body, sizeof(body), "status update %d: the build "
		    "passed on worker %d, deploying to staging next", i,
		    i % 7);
		m.body = body;
		m.body_len = strlen(body);
		clock_gettime(CLOCK_MONOTONIC, &a);
		CHECK_EQ_INT(ix_add(err, x, &m, v), 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns[i] = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull +
		    (uint64_t)(b.tv_nsec - a.tv_nsec);
	}
	qsort(ns, N, sizeof(ns[0]), cmp_u64);
	printf("index: add a message: median %.3f ms, p99 %.3f ms\n",
	    (double)ns[N / 2] / 1e6, (double)ns[N * 99 / 100] / 1e6);
	/* Far above the goal (0.2 ms) on purpose: a shared machine. */
	CHECK(ns[N / 2] < 5000000);
	ix_close(x);
	CHECK_EQ_INT(check_rmtree(home), 0);
}

/* More matches than are ranked (1,000): newest first, and paging
 * reaches every one once. */
static void
test_window(const struct ctx *c)
{
	enum { N = 1300 };
	static char seen[N];
	struct ix_hit h[IX_LIMIT_MAX];
	struct ix_query q;
	struct ix_mark mark;
	struct frame_msg m;
	char home[64], path[512], err[PAPO_ERR_LEN], body[64];
	struct ix *x;
	int more = 1, code, dup = 0, first = 1, ranked = 1;
	size_t got = 0;
	uint64_t v;
	long n;

	check_tmpdir(home, sizeof(home), "index");
	snprintf(path, sizeof(path), "%s/search.db", home);
	if ((x = ix_open(err, path, &mark)) == NULL)
		exit(1);
	ix_begin(x);
	for (int i = 0; i < N; i++) {
		memset(&m, 0, sizeof(m));
		/* ids that say their number: "a" and 9 digits of base32 */
		snprintf(m.id, sizeof(m.id), "a%09d", i);
		for (int j = 1; j < PAPO_MSGID_LEN; j++)
			m.id[j] = "abcdefgh23"[m.id[j] - '0'];
		sec_msgid_valid(m.id, &v);
		memcpy(m.from, c->me->pk, PAPO_KEY_LEN);
		m.ts = T0 + (uint64_t)i;
		snprintf(body, sizeof(body), i == N - 5 ? "common common "
		    "common" : "common and %d", i);
		m.body = body;
		m.body_len = strlen(body);
		CHECK_EQ_INT(ix_add(err, x, &m, v), 0);
	}
	ix_commit(x);
	memset(&q, 0, sizeof(q));
	q.text = "common";
	q.limit = IX_LIMIT_MAX;
	while (more) {
		if ((n = ix_search(err, x, &q, h, &more, &ranked,
		    &code)) < 0) {
			CHECK(0);
			break;
		}
		/* More than 1,000 matches: newest first, not ranked (the
		 * best match, N - 5, is not first). */
		if (first)
			CHECK(n > 1 && strstr(h[0].excerpt, "1299") != NULL &&
			    strstr(h[1].excerpt, "1298") != NULL && !ranked);
		first = 0;
		for (long i = 0; i < n; i++) {
			long k = 0;

			for (int j = 1; j < PAPO_MSGID_LEN; j++)
				k = k * 10 + (long)(strchr("abcdefgh23",
				    h[i].id[j]) - "abcdefgh23");
			if (k >= 0 && k < N) {
				dup += seen[k];
				seen[k] = 1;
			}
			got++;
		}
		ix_hits_free(h, (size_t)n);
		q.offset += (uint64_t)n;
		if (n == 0)
			break;
	}
	CHECK_EQ_INT(got, N);
	CHECK_EQ_INT(dup, 0);
	ix_close(x);
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
	check_tmpdir(c.idhome, sizeof(c.idhome), "index");
	check_tmpdir(c.idhome2, sizeof(c.idhome2), "index");
	if ((c.me = sec_identity_load(err, c.idhome)) == NULL ||
	    (c.other = sec_identity_load(err, c.idhome2)) == NULL) {
		fprintf(stderr, "sec_identity_load: %s\n", err);
		return 1;
	}
	randombytes_buf(secret, sizeof(secret));
	sec_room_keys(secret, &c.k);

	test_words(&c);
	test_filters(&c);
	test_paging(&c);
	test_bad(&c);
	test_rebuild(&c);
	test_retention(&c);
	test_background(&c);
	test_check(&c);
	test_cost(&c);
	test_window(&c);

	sec_identity_free(c.me);
	sec_identity_free(c.other);
	CHECK_EQ_INT(check_rmtree(c.idhome), 0);
	CHECK_EQ_INT(check_rmtree(c.idhome2), 0);
	return check_exit();
}
