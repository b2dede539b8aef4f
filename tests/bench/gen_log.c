/*
 * gen_log.c: writes a long, valid log.jsonl for the start-up benchmark.
 *
 *   gen_log HOME OTHER_HOME COUNT
 *
 * HOME and OTHER_HOME are two members of one room (papo new, papo join).
 * Writes HOME/log.jsonl with COUNT messages, every other one by each
 * member, and for each of HOME's own messages the delivered receipt
 * OTHER_HOME's member would have sent back, as a two-member room's log
 * holds them.  Every line is made by the library itself: a fresh id
 * (sec_msgid_new), signed with the author's real key (frame_msg_sign,
 * frame_ack_sign) and encoded by frame_encode, which is the log's format
 * (docs/PROTOCOL.md, "Files").  Bodies are 20 to 400 bytes of words, one
 * in ten messages replies to the one before, one in twenty is addressed.
 * Appends are buffered rather than fsync'd one by one: the file is
 * written once, before any daemon reads it.
 *
 * Then it opens the result with store_open, as the daemon will, and
 * checks that every message and receipt is there and nothing was
 * dropped.  Prints, as run.sh reads them (label TAB value TAB unit): the
 * lines, the bytes, the time to write, the time store_open took, and
 * how long the search index's rebuild beside it took (a long log's).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/buf.h"
#include "node/store/home.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"

static const char *const words[] = {
	"the", "build", "is", "green", "again", "after", "I", "moved", "the",
	"parser", "into", "its", "own", "file", "can", "you", "look", "at",
	"frame.c", "tests", "pass", "on", "both", "machines", "review",
	"please", "merged", "thanks", "next", "issue", "latency", "store",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* xorshift64: the same bodies every run, nothing to do with security. */
static uint64_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t
make_body(char *out, size_t cap, long k)
{
	size_t want = 20 + (size_t)(next_rand() % 381), len;

	len = (size_t)snprintf(out, cap, "message %ld:", k);
	while (len < want && len + 16 < cap) {
		const char *w = words[next_rand() % NWORDS];
		size_t n = strlen(w);

		if (len + 1 + n > want)
			break;
		out[len++] = ' ';
		memcpy(out + len, w, n);
		len += n;
	}
	out[len] = '\0';
	return len;
}

static double
seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	    (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void
die(const char *what, const char *why)
{
	fprintf(stderr, "gen_log: %s: %s\n", what, why);
	exit(1);
}

/* Encodes f as one line into b and appends it to out. */
static void
put_line(FILE *out, struct buf *b, const struct frame *f)
{
	buf_reset(b);
	if (frame_encode(f, b) == -1)
		die("frame_encode", "refused a generated frame");
	if (fwrite(b->p, 1, b->len, out) != b->len || fputc('\n', out) == EOF)
		die("writing log.jsonl", strerror(errno));
}

int
main(int argc, char **argv)
{
	char err[PAPO_ERR_LEN], path[4096], body[512], prev[PAPO_MSGID_LEN + 1];
	struct identity *who[2] = { NULL, NULL };
	char names[2][PAPO_NAME_MAX + 1];
	struct room_file room;
	struct room_keys k, k2;
	struct store *s;
	struct store_stats stats;
	struct pollfd p;
	struct timespec t0;
	struct stat st;
	struct buf b;
	long count, acks = 0, lines = 0;
	uint64_t ts;
	FILE *out;
	int fd;

	if (argc != 4 || (count = atol(argv[3])) < 1)
		die("usage", "gen_log HOME OTHER_HOME COUNT");
	if (sec_init() == -1)
		die("libsodium", "cannot initialise");
	for (int i = 0; i < 2; i++) {
		if (roomfile_load(err, argv[1 + i], &room) == -1)
			die(argv[1 + i], err);
		snprintf(names[i], sizeof(names[i]), "%s", room.me);
		if ((who[i] = sec_identity_load(err, argv[1 + i])) == NULL)
			die(argv[1 + i], err);
		sec_room_keys(room.secret, i == 0 ? &k : &k2);
		roomfile_wipe(&room);
	}
	if (memcmp(k.id, k2.id, sizeof(k.id)) != 0)
		die(argv[2], "is not in the same room as HOME");

	snprintf(path, sizeof(path), "%s/log.jsonl", argv[1]);
	if (stat(path, &st) == 0 && st.st_size > 0)
		die(path, "exists already: gen_log writes a new log only");
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || (out = fdopen(fd, "w")) == NULL)
		die(path, strerror(errno));
	buf_init(&b, STORE_LINE_MAX);
	prev[0] = '\0';
	/* One message a second, ending now. */
	ts = (uint64_t)time(NULL) * 1000 - (uint64_t)count * 1000;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < count; i++) {
		struct frame f;
		struct frame_msg *m = &f.u.msg;
		int a = (int)(i % 2);

		memset(&f, 0, sizeof(f));
		f.type = FRAME_MSG;
		sec_msgid_new(m->id);
		snprintf(m->name, sizeof(m->name), "%s", names[a]);
		m->ts = ts + (uint64_t)i * 1000;
		m->body = body;
		m->body_len = make_body(body, sizeof(body), i);
		if (i % 20 == 19) {
			m->has_to = 1;
			memcpy(m->to, who[!a]->pk, 32);
		}
		if (i % 10 == 9 && prev[0] != '\0') {
			m->has_reply_to = 1;
			memcpy(m->reply_to, prev, sizeof(prev));
		}
		if (frame_msg_sign(m, &k, who[a]) == -1)
			die("frame_msg_sign", "failed");
		put_line(out, &b, &f);
		lines++;
		memcpy(prev, m->id, sizeof(prev));
		if (a == 0) {
			struct frame r;

			memset(&r, 0, sizeof(r));
			r.type = FRAME_ACK;
			memcpy(r.u.ack.id, prev, sizeof(prev));
			r.u.ack.state = ACK_DELIVERED;
			r.u.ack.ts = m->ts + 5;
			if (frame_ack_sign(&r.u.ack, &k, who[1]) == -1)
				die("frame_ack_sign", "failed");
			put_line(out, &b, &r);
			lines++;
			acks++;
		}
	}
	if (fflush(out) == EOF || fsync(fd) == -1 || fclose(out) == EOF)
		die(path, strerror(errno));
	printf("lines written\t%ld\t\n", lines);
	if (stat(path, &st) == 0)
		printf("log.jsonl size\t%.1f\tMB\n", (double)st.st_size / 1e6);
	printf("time to generate\t%.1f\ts\n", seconds_since(&t0));
	fflush(stdout);

	/* Read it back as the daemon will. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((s = store_open(err, argv[1], &k, NULL)) == NULL)
		die("store_open", err);
	printf("store_open of the log, in this process\t%.3f\ts\n",
	    seconds_since(&t0));
	if ((p.fd = store_ix_fd(s)) != -1) {
		p.events = POLLIN;
		while (poll(&p, 1, -1) == -1 && errno == EINTR)
			;
		store_ix_ready(s);
		printf("search index rebuilt beside it, from its open\t%.3f\ts\n",
		    seconds_since(&t0));
	}
	store_stats(s, &stats);
	store_close(s);
	if (stats.msgs != (size_t)count || stats.acks != (size_t)acks ||
	    stats.dropped != 0) {
		fprintf(stderr, "gen_log: the store read %zu messages and %zu "
		    "receipts (dropped %zu); %ld and %ld were written\n",
		    stats.msgs, stats.acks, stats.dropped, count, acks);
		return 1;
	}
	buf_free(&b);
	sec_identity_free(who[0]);
	sec_identity_free(who[1]);
	sodium_memzero(&k, sizeof(k));
	return 0;
}
