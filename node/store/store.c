/*
 * store.c: the member's durable history, $PAPO_HOME/log.jsonl, and its
 * outbox, $PAPO_HOME/outbox.jsonl (docs/PROTOCOL.md, "Files").  It owns
 * both files' descriptors, the in-memory index of the log (one compact
 * entry per message and a hash set over their ids) and the outbox ids.
 * The node thread runs it; nothing here is shared with another thread.
 *
 * It must never acknowledge a line that is not on disk: every append is
 * one write() followed by fdatasync() before the call returns, and a
 * failed append is cut back off so the file is as it was.  It must never
 * read a whole log into memory: replay reads the file once, in chunks,
 * and later reads fetch single lines with pread().  It does not check
 * signatures; the caller verifies a frame before it stores it.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "node/papo.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"

#define STORE_LOG "log.jsonl"
#define STORE_OUTBOX "outbox.jsonl"
#define STORE_CHUNK (64 * 1024)        /* bytes of one read() at replay */
#define STORE_ENT_MAX (1u << 30)       /* messages one index holds */
#define STORE_TAB_BITS0 6              /* first hash table: 64 slots */
#define SLOT_EMPTY UINT32_MAX

/* An outbox line is exactly this prefix, the id, and this suffix. */
#define OB_PREFIX "{\"id\":\""
#define OB_SUFFIX "\"}"
#define OB_LINE_LEN (sizeof(OB_PREFIX) - 1 + PAPO_MSGID_LEN + \
    sizeof(OB_SUFFIX) - 1)

/* frame_encode writes a message's type and id first, then later "ts";
 * replay relies on that to index a line without decoding it. */
static const char msg_prefix[] = "{\"t\":\"msg\",\"id\":\"";
static const char ack_prefix[] = "{\"t\":\"ack\",";
static const char ts_key[] = ",\"ts\":";
/* The first line of a compacted log (docs/PROTOCOL.md, "Files"). */
static const char ret_prefix[] = "{\"t\":\"retention\",";
#define RET_FMT "{\"t\":\"retention\",\"floor\":%llu,\"dropped\":%llu}"
static const char sig_key[] = ",\"sig\":\"";

/* A signature as frame_encode writes it: 64 bytes in base64url. */
#define SIG_B64_LEN 86
_Static_assert(SIG_B64_LEN + 1 == sodium_base64_ENCODED_LEN(64,
    sodium_base64_VARIANT_URLSAFE_NO_PADDING), "signature text length");

/* One message of the log: where its line is and what history filters on. */
struct ent {
	uint64_t id;         /* the 50-bit value of the id text */
	uint64_t off;        /* offset of its line in log.jsonl */
	uint64_t ts;
	uint32_t len;        /* bytes of the line without its '\n' */
};

/* One message in history's order: by time, then by id value (one order
 * on every member, whatever order the messages arrived in). */
struct pos {
	uint64_t ts;
	uint64_t id;
	uint32_t e;          /* its index in ent */
};

struct store {
	struct room_keys k;
	char *log_path;             /* home/log.jsonl, malloc'd */
	char *ob_path;              /* home/outbox.jsonl */
	int log_fd;
	int ob_fd;
	uint64_t log_size;   /* where the next line of the log starts */

	struct ent *ent;     /* in log order */
	size_t nent;
	size_t capent;
	uint32_t *tab;       /* open addressing: indices into ent */
	unsigned tabbits;    /* the table has 1 << tabbits slots */
	struct pos *ord;     /* the same messages in history's order */
	int unsorted;        /* ord needs sorting before it is read */
	int live;            /* the log is open: ord is kept in order */

	size_t acks;
	size_t dropped;
	size_t damaged;      /* damaged lines found by reads, not yet told */
	uint8_t digest[32];
	uint64_t floor;      /* retention: from the log's first line */
	uint64_t gone;       /* messages retention dropped, in all */
	struct compaction *cw;   /* the rewrite under way, else NULL */

	char (*ob)[PAPO_MSGID_LEN + 1];   /* outbox ids, oldest first */
	size_t nob;
	size_t capob;
};

/*
 * What replay does with one complete line: returns 0 when it was taken,
 * 1 when it is damaged (*why says how), -1 on a failure that must stop
 * the open (errno set).  last is set for the line that ends the file,
 * which is the only one a crash can have damaged.
 */
typedef int line_fn(struct store *s, const char *line, size_t len,
    uint64_t off, int last, const char **why);

static int read_msg(struct store *s, const struct ent *e,
    struct frame_msg *out);

/* Fills err with one line; a long path is cut rather than overflowing. */
static void set_err(char err[PAPO_ERR_LEN], const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
set_err(char err[PAPO_ERR_LEN], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, PAPO_ERR_LEN, fmt, ap);
	va_end(ap);
}

static size_t
idx_hash(uint64_t id, unsigned bits)
{
	/* Ids are random, but multiplying spreads any pattern a peer might
	 * choose over the high bits, which index the table. */
	return (size_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - bits));
}

static const struct ent *
idx_find(const struct store *s, uint64_t id)
{
	size_t mask = ((size_t)1 << s->tabbits) - 1;
	size_t i;

	for (i = idx_hash(id, s->tabbits);; i = (i + 1) & mask) {
		uint32_t e = s->tab[i];

		if (e == SLOT_EMPTY)
			return NULL;
		if (s->ent[e].id == id)
			return &s->ent[e];
	}
}

static void
idx_place(uint32_t *tab, unsigned bits, uint64_t id, uint32_t e)
{
	size_t mask = ((size_t)1 << bits) - 1;
	size_t i;

	for (i = idx_hash(id, bits); tab[i] != SLOT_EMPTY; i = (i + 1) & mask)
		;
	tab[i] = e;
}

static int
idx_rehash(struct store *s, unsigned bits)
{
	size_t n = (size_t)1 << bits;
	uint32_t *tab;

	if ((tab = malloc(n * sizeof(*tab))) == NULL)
		return -1;
	memset(tab, 0xff, n * sizeof(*tab));
	for (size_t e = 0; e < s->nent; e++)
		idx_place(tab, bits, s->ent[e].id, (uint32_t)e);
	free(s->tab);
	s->tab = tab;
	s->tabbits = bits;
	return 0;
}

/*
 * Makes room for one more entry, so that adding it after its line is on
 * disk cannot fail.  -1 with errno set.
 */
static int
idx_reserve(struct store *s)
{
	if (s->nent >= STORE_ENT_MAX) {
		errno = EFBIG;
		return -1;
	}
	if (s->nent == s->capent) {
		size_t cap = s->capent ? s->capent * 2 : 1024;
		struct ent *ent;

		struct pos *ord;

		if ((ent = realloc(s->ent, cap * sizeof(*ent))) == NULL)
			return -1;
		s->ent = ent;
		if ((ord = realloc(s->ord, cap * sizeof(*ord))) == NULL)
			return -1;
		s->ord = ord;
		s->capent = cap;
	}
	/* The load factor stays at most one half, so probes stay short. */
	if ((s->nent + 1) * 2 > ((size_t)1 << s->tabbits))
		return idx_rehash(s, s->tabbits + 1);
	return 0;
}

static int
pos_cmp(const void *a, const void *b)
{
	const struct pos *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void
ord_sort(struct store *s)
{
	if (s->unsorted)
		qsort(s->ord, s->nent, sizeof(*s->ord), pos_cmp);
	s->unsorted = 0;
}

/*
 * Puts p (the entry about to be ent[nent]) in ord.  Messages mostly come
 * in time order and go at the end.  One that does not (a late clock, a
 * catch-up by sync) is moved into its place once the log is open; while
 * it is read at open, ord is left unsorted and sorted once, at its first
 * use.
 */
static void
ord_add(struct store *s, struct pos p)
{
	size_t lo = 0, hi = s->nent;

	if (s->nent == 0 || pos_cmp(&p, &s->ord[s->nent - 1]) >= 0 ||
	    s->unsorted) {
		s->ord[s->nent] = p;
		return;
	}
	if (!s->live) {
		s->ord[s->nent] = p;
		s->unsorted = 1;
		return;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pos_cmp(&s->ord[mid], &p) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&s->ord[lo + 1], &s->ord[lo], (s->nent - lo) * sizeof(*s->ord));
	s->ord[lo] = p;
}

/* The digest is over the id text, which sec_msgid_valid has already
 * held to its one lowercase spelling. */
static void
digest_add(struct store *s, const char *id)
{
	uint8_t h[32];

	crypto_generichash(h, sizeof(h), (const unsigned char *)id,
	    PAPO_MSGID_LEN, NULL, 0);
	for (size_t i = 0; i < sizeof(h); i++)
		s->digest[i] ^= h[i];
}

/*
 * Adds a message to the index after idx_reserve.  Returns 1 when added,
 * 0 when its id was already there.
 */
static int
idx_add(struct store *s, const char *id, uint64_t v, uint64_t off,
    size_t len, uint64_t ts)
{
	struct ent *e;

	if (idx_find(s, v) != NULL)
		return 0;
	e = &s->ent[s->nent];
	e->id = v;
	e->off = off;
	e->len = (uint32_t)len;
	e->ts = ts;
	idx_place(s->tab, s->tabbits, v, (uint32_t)s->nent);
	ord_add(s, (struct pos){ ts, v, (uint32_t)s->nent });
	s->nent++;
	digest_add(s, id);
	return 1;
}

static int
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
read_all(int fd, void *p, size_t n, uint64_t off)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = pread(fd, c, n, (off_t)off);

		if (r == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		c += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

#ifdef PAPO_TESTING
/*
 * papo-testing only (tests/CMakeLists.txt compiles this file into it):
 * PAPO_TEST_STORE_FAIL=log or =outbox makes every append to that file
 * fail with EIO, as a failing disk would.  The papo binary has no such
 * setting.
 */
static int
test_fail(const char *file)
{
	const char *v = getenv("PAPO_TEST_STORE_FAIL");

	if (v == NULL || strcmp(v, file) != 0)
		return 0;
	errno = EIO;
	return 1;
}
#else
#define test_fail(file) 0
#endif

/*
 * Appends n bytes to fd, which ends at size, and makes them durable.  On
 * failure the file is cut back to size, so it is as it was, and errno
 * tells the first failure.
 */
static int
append(int fd, const void *p, size_t n, uint64_t size)
{
	int saved;

	if (write_all(fd, p, n) == 0 && fdatasync(fd) == 0)
		return 0;
	saved = errno;
	if (ftruncate(fd, (off_t)size) == -1 || fdatasync(fd) == -1)
		log_msg(LOG_ERROR, "cannot undo a failed append: %s",
		    strerror(errno));
	errno = saved;
	return -1;
}

/* Cuts fd back to size and makes that durable. */
static int
cut(char err[PAPO_ERR_LEN], int fd, const char *path, uint64_t size)
{
	if (ftruncate(fd, (off_t)size) == -1 || fdatasync(fd) == -1) {
		set_err(err, "cannot truncate %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Reads fd from its start once, in chunks, and hands every complete line
 * to fn.  Damaged lines are skipped with a warning; a damaged last line
 * or bytes after the last newline (a torn write) are cut off the file.
 * *end receives the file's size afterwards.
 */
static int
replay(char err[PAPO_ERR_LEN], struct store *s, int fd, const char *path,
    line_fn *fn, uint64_t *end)
{
	size_t cap = STORE_LINE_MAX + STORE_CHUNK;
	char *b = NULL;
	size_t have = 0;        /* bytes in b */
	uint64_t base = 0;      /* file offset of b[0] */
	uint64_t lstart = 0;    /* file offset of the line being read */
	uint64_t cut_at = 0;
	int skipping = 0;       /* inside a line too long to hold */
	int must_cut = 0;
	size_t lineno = 0;
	struct stat st;
	int rc = -1;

	if (fstat(fd, &st) == -1) {
		set_err(err, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	if ((b = malloc(cap)) == NULL) {
		set_err(err, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, b + have, cap - have);
		size_t p = 0;
		char *nl;

		if (r == -1) {
			if (errno == EINTR)
				continue;
			set_err(err, "cannot read %s: %s", path,
			    strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		have += (size_t)r;
		while ((nl = memchr(b + p, '\n', have - p)) != NULL) {
			size_t len = (size_t)(nl - (b + p));
			uint64_t lend = base + (uint64_t)(nl - b) + 1;
			int last = lend == (uint64_t)st.st_size;
			const char *why = NULL;
			int took;

			lineno++;
			if (skipping || len > STORE_LINE_MAX) {
				why = "line too long";
				took = 1;
			} else {
				took = fn(s, b + p, len, lstart, last, &why);
			}
			if (took == -1) {
				set_err(err, "cannot load %s: %s",
				    path, strerror(errno));
				goto out;
			}
			if (took == 1) {
				s->dropped++;
				if (last) {
					log_msg(LOG_WARN, "%s: line %zu: %s; "
					    "damaged last line cut off", path,
					    lineno, why);
					must_cut = 1;
					cut_at = lstart;
				} else {
					log_msg(LOG_WARN, "%s: line %zu: %s; "
					    "line skipped", path, lineno, why);
				}
			}
			skipping = 0;
			p = (size_t)(nl - b) + 1;
			lstart = base + p;
		}
		/* What is left is the start of a line.  Past the longest line
		 * accepted it is only looked for its end, not kept. */
		if (skipping || have - p > STORE_LINE_MAX) {
			skipping = 1;
			p = have;
		}
		memmove(b, b + p, have - p);
		have -= p;
		base += p;
	}
	if (skipping || have > 0) {
		log_msg(LOG_WARN, "%s: line %zu: torn last line (%llu bytes "
		    "without a newline) cut off", path, lineno + 1,
		    (unsigned long long)(base + have - lstart));
		s->dropped++;
		must_cut = 1;
		cut_at = lstart;
	}
	if (must_cut && cut(err, fd, path, cut_at) == -1)
		goto out;
	*end = must_cut ? cut_at : base + have;
	rc = 0;
out:
	free(b);
	return rc;
}

/*
 * Whether a line ends the way frame_encode ends every msg and ack: with
 * its signature.  A line cut short and later completed by a newline does
 * not, so the cheap reading below still refuses it.
 */
static int
ends_with_sig(const char *line, size_t len)
{
	size_t kl = sizeof(sig_key) - 1;
	const char *p;

	if (len < kl + SIG_B64_LEN + 2)
		return 0;
	p = line + len - SIG_B64_LEN - 2;
	if (memcmp(p - kl, sig_key, kl) != 0 ||
	    memcmp(p + SIG_B64_LEN, "\"}", 2) != 0)
		return 0;
	for (size_t i = 0; i < SIG_B64_LEN; i++) {
		char ch = p[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
			return 0;
	}
	return 1;
}

/*
 * Reads the id and time of a message line from the fixed order that
 * frame_encode writes, without decoding the JSON.  Returns 1 when the
 * line has that shape, else 0 (and the caller decodes it in full).
 */
static int
fast_msg(const char *line, size_t len, char id[PAPO_MSGID_LEN + 1],
    uint64_t *v, uint64_t *ts)
{
	size_t pl = sizeof(msg_prefix) - 1;
	const char *p, *end = line + len;
	uint64_t t = 0;
	size_t digits = 0;

	if (len < pl + PAPO_MSGID_LEN + 2 ||
	    memcmp(line, msg_prefix, pl) != 0 ||
	    line[pl + PAPO_MSGID_LEN] != '"' || !ends_with_sig(line, len))
		return 0;
	memcpy(id, line + pl, PAPO_MSGID_LEN);
	id[PAPO_MSGID_LEN] = '\0';
	if (!sec_msgid_valid(id, v))
		return 0;
	/* Inside a JSON string a quote is escaped, so the first unescaped
	 * ,"ts": of a msg object (which nests no objects) is its key. */
	for (p = line + pl + PAPO_MSGID_LEN + 1;; p++) {
		if ((p = memchr(p, ',', (size_t)(end - p))) == NULL)
			return 0;
		if ((size_t)(end - p) > sizeof(ts_key) - 1 &&
		    memcmp(p, ts_key, sizeof(ts_key) - 1) == 0)
			break;
	}
	for (p += sizeof(ts_key) - 1; p < end && *p >= '0' && *p <= '9'; p++) {
		if (t > (UINT64_MAX - 9) / 10)
			return 0;
		t = t * 10 + (uint64_t)(*p - '0');
		digits++;
	}
	if (digits == 0 || p == end || (*p != ',' && *p != '}') ||
	    (digits > 1 && p[-(ptrdiff_t)digits] == '0'))
		return 0;
	*ts = t;
	return 1;
}

/*
 * The retention line: only the first line of a log may be one (the
 * rewrite puts it there), and its numbers are taken as they stand.
 */
static int
ret_line(struct store *s, const char *line, size_t len, uint64_t off,
    const char **why)
{
	char text[128];
	unsigned long long floor, gone;
	int used = -1;

	if (off != 0 || len >= sizeof(text)) {
		*why = "a retention line that is not the first";
		return 1;
	}
	memcpy(text, line, len);
	text[len] = '\0';
	if (sscanf(text, RET_FMT "%n", &floor, &gone, &used) != 2 ||
	    used != (int)len || strpbrk(text, "+- \t") != NULL) {
		*why = "a malformed retention line";
		return 1;
	}
	s->floor = floor;
	s->gone = gone;
	return 0;
}

/*
 * A message's line seen again at off: the copy indexed first is kept,
 * unless it is damaged (read_msg drops it: a sync stored the message
 * again after a run found it so), and then this one is indexed.  -1 on
 * an I/O error.
 */
static int
twice(struct store *s, const char *id, uint64_t v, uint64_t off, size_t len,
    uint64_t ts)
{
	struct frame_msg m;
	int r = read_msg(s, idx_find(s, v), &m);

	if (r == 0) {
		log_msg(LOG_DEBUG, "%s: message %s stored twice", s->log_path,
		    id);
		frame_msg_clear(&m);
		return 0;
	}
	if (r == 1)
		idx_add(s, id, v, off, len, ts);
	return r == 1 ? 0 : -1;
}

static int
log_line(struct store *s, const char *line, size_t len, uint64_t off,
    int last, const char **why)
{
	char id[PAPO_MSGID_LEN + 1];
	struct frame f;
	enum frame_err fe;
	uint64_t v, ts;
	int rc = 1;

	/* A crash can damage only the last line, which is decoded in full.
	 * A line before it that has the shape frame_encode gives (type and
	 * id first, a "ts", the signature last) is taken from that shape
	 * alone, which keeps opening a long log fast; store_get decodes it
	 * when it is read.  Any other line is decoded in full too. */
	if (len >= sizeof(ret_prefix) - 1 &&
	    memcmp(line, ret_prefix, sizeof(ret_prefix) - 1) == 0)
		return ret_line(s, line, len, off, why);
	if (!last) {
		if (fast_msg(line, len, id, &v, &ts)) {
			if (idx_reserve(s) == -1)
				return -1;
			if (idx_add(s, id, v, off, len, ts) == 0 &&
			    twice(s, id, v, off, len, ts) == -1)
				return -1;
			return 0;
		}
		if (len >= sizeof(ack_prefix) - 1 &&
		    memcmp(line, ack_prefix, sizeof(ack_prefix) - 1) == 0 &&
		    ends_with_sig(line, len)) {
			s->acks++;
			return 0;
		}
	}
	fe = frame_decode(&s->k, line, len, FRAME_V3 | FRAME_TRUSTED, &f);
	if (fe != FRAME_OK) {
		*why = frame_strerror(fe);
		return 1;
	}
	switch (f.type) {
	case FRAME_MSG:
		if (!sec_msgid_valid(f.u.msg.id, &v)) {
			*why = "malformed message id";
			break;
		}
		if (idx_reserve(s) == -1) {
			rc = -1;
			break;
		}
		rc = 0;
		if (idx_add(s, f.u.msg.id, v, off, len, f.u.msg.ts) == 0 &&
		    twice(s, f.u.msg.id, v, off, len, f.u.msg.ts) == -1)
			rc = -1;
		break;
	case FRAME_ACK:
		s->acks++;
		rc = 0;
		break;
	default:
		*why = "not a msg or ack frame";
		break;
	}
	frame_clear(&f);
	return rc;
}

static int
ob_find(const struct store *s, const char *id)
{
	for (size_t i = 0; i < s->nob; i++)
		if (strcmp(s->ob[i], id) == 0)
			return (int)i;
	return -1;
}

/* home/name, malloc'd; NULL when it does not fit a path or without
 * memory. */
static char *
store_path(const char *home, const char *name)
{
	char path[PATH_MAX];

	return fs_path(path, sizeof(path), home, name) == -1 ? NULL :
	    strdup(path);
}

/* Makes room for one more outbox id, so that adding it after its line
 * is on disk cannot fail. */
static int
ob_reserve(struct store *s)
{
	if (s->nob == s->capob) {
		size_t cap = s->capob ? s->capob * 2 : 16;
		char (*ob)[PAPO_MSGID_LEN + 1];

		if ((ob = realloc(s->ob, cap * sizeof(*ob))) == NULL)
			return -1;
		s->ob = ob;
		s->capob = cap;
	}
	return 0;
}

static void
ob_push(struct store *s, const char *id)
{
	memcpy(s->ob[s->nob], id, PAPO_MSGID_LEN + 1);
	s->nob++;
}

static int
ob_line(struct store *s, const char *line, size_t len, uint64_t off,
    int last, const char **why)
{
	size_t pl = sizeof(OB_PREFIX) - 1;
	char id[PAPO_MSGID_LEN + 1];

	(void)off;
	(void)last;
	if (len != OB_LINE_LEN || memcmp(line, OB_PREFIX, pl) != 0 ||
	    memcmp(line + pl + PAPO_MSGID_LEN, OB_SUFFIX,
	    sizeof(OB_SUFFIX) - 1) != 0) {
		*why = "not an outbox entry";
		return 1;
	}
	memcpy(id, line + pl, PAPO_MSGID_LEN);
	id[PAPO_MSGID_LEN] = '\0';
	if (!sec_msgid_valid(id, NULL)) {
		*why = "malformed message id";
		return 1;
	}
	if (ob_find(s, id) != -1)
		return 0;
	if (ob_reserve(s) == -1)
		return -1;
	ob_push(s, id);
	return 0;
}

static int
open_file(char err[PAPO_ERR_LEN], const char *path)
{
	int fd;

	if ((fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600)) == -1)
		set_err(err, "cannot open %s: %s", path, strerror(errno));
	return fd;
}

struct store *
store_open(char err[PAPO_ERR_LEN], const char *home,
    const struct room_keys *k)
{
	struct store *s = NULL;
	uint64_t end;

	err[0] = '\0';
	if (sec_init() == -1) {
		set_err(err, "cannot initialise libsodium");
		goto fail;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		set_err(err, "cannot open the store: %s", strerror(errno));
		goto fail;
	}
	s->log_fd = s->ob_fd = -1;
	s->k = *k;
	if ((s->log_path = store_path(home, STORE_LOG)) == NULL ||
	    (s->ob_path = store_path(home, STORE_OUTBOX)) == NULL) {
		set_err(err, "path too long, or out of memory: %s", home);
		goto fail;
	}
	if (idx_rehash(s, STORE_TAB_BITS0) == -1) {
		set_err(err, "cannot open the store: %s", strerror(errno));
		goto fail;
	}
	if ((s->log_fd = open_file(err, s->log_path)) == -1 ||
	    (s->ob_fd = open_file(err, s->ob_path)) == -1)
		goto fail;
	/* A file just created lasts only once its directory entry does. */
	if (fs_sync_dir(s->log_path) == -1) {
		set_err(err, "cannot sync the directory of %s: %s",
		    s->log_path, strerror(errno));
		goto fail;
	}
	if (replay(err, s, s->log_fd, s->log_path, log_line,
	    &s->log_size) == -1 ||
	    replay(err, s, s->ob_fd, s->ob_path, ob_line, &end) == -1)
		goto fail;
	s->live = 1;
	return s;
fail:
	store_close(s);
	return NULL;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (s->log_fd != -1)
		close(s->log_fd);
	if (s->ob_fd != -1)
		close(s->ob_fd);
	free(s->ent);
	free(s->ord);
	free(s->tab);
	free(s->ob);
	free(s->log_path);
	free(s->ob_path);
	sodium_memzero(&s->k, sizeof(s->k));
	free(s);
}

/* Encodes f as one log line, '\n' included, into b. */
static int
encode_line(const struct frame *f, struct buf *b)
{
	if (frame_encode(f, b) == -1 || buf_u8(b, '\n') == -1) {
		errno = b->toobig ? E2BIG : EINVAL;
		return -1;
	}
	return 0;
}

int
store_add_msg(struct store *s, const struct frame_msg *m)
{
	struct frame f;
	struct buf b;
	uint64_t v;
	int rc = -1;

	buf_init(&b, STORE_LINE_MAX + 1);
	if (!sec_msgid_valid(m->id, &v)) {
		errno = EINVAL;
		goto out;
	}
	if (idx_find(s, v) != NULL) {
		rc = 0;
		goto out;
	}
	if (idx_reserve(s) == -1)
		goto out;
	/* The frame borrows m's body for the encoding; nothing is freed. */
	memset(&f, 0, sizeof(f));
	f.type = FRAME_MSG;
	f.u.msg = *m;
	if (encode_line(&f, &b) == -1)
		goto out;
	if (test_fail("log") ||
	    append(s->log_fd, b.p, b.len, s->log_size) == -1)
		goto out;
	idx_add(s, m->id, v, s->log_size, b.len - 1, m->ts);
	s->log_size += b.len;
	rc = 1;
out:
	buf_free(&b);
	return rc;
}

int
store_add_ack(struct store *s, const struct frame_ack *a)
{
	struct frame f;
	struct buf b;
	int rc = -1;

	buf_init(&b, STORE_LINE_MAX + 1);
	memset(&f, 0, sizeof(f));
	f.type = FRAME_ACK;
	f.u.ack = *a;
	if (encode_line(&f, &b) == -1)
		goto out;
	if (append(s->log_fd, b.p, b.len, s->log_size) == -1)
		goto out;
	s->log_size += b.len;
	s->acks++;
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

int
store_has(const struct store *s, const char *id)
{
	uint64_t v;

	if (!sec_msgid_valid(id, &v))
		return 0;
	return idx_find(s, v) != NULL;
}

/*
 * Forgets message e, whose line turned out damaged when it was read:
 * its shape was taken at open (log_line's fast reading) but it does not
 * decode.  History and sync go on without it, the digest no longer
 * counts it, so a sync fetches it again from the other members (and
 * stores it anew at the log's end); the line stays where it is until a
 * compaction leaves it out.  Said once, with the line's byte offset.
 */
static void
idx_drop(struct store *s, size_t k, const char *why)
{
	char id[PAPO_MSGID_LEN + 1];
	size_t j = 0;

	sec_msgid_format(s->ent[k].id, id);
	log_msg(LOG_WARN, "%s: damaged line at byte offset %llu (message %s: "
	    "%s) skipped; a sync fetches it again from the other members",
	    s->log_path, (unsigned long long)s->ent[k].off, id, why);
	digest_add(s, id);
	memmove(&s->ent[k], &s->ent[k + 1], (s->nent - k - 1) * sizeof(*s->ent));
	for (size_t i = 0; i < s->nent; i++) {
		if (s->ord[i].e == k)
			continue;
		s->ord[j] = s->ord[i];
		if (s->ord[j].e > k)
			s->ord[j].e--;
		j++;
	}
	s->nent--;
	/* The table is rebuilt in place: nothing to allocate, nothing to
	 * fail. */
	memset(s->tab, 0xff, ((size_t)1 << s->tabbits) * sizeof(*s->tab));
	for (size_t e = 0; e < s->nent; e++)
		idx_place(s->tab, s->tabbits, s->ent[e].id, (uint32_t)e);
	s->dropped++;
	s->damaged++;
}

/*
 * Reads e's line back and decodes it into *out, which then owns the
 * body.  0; 1 when the line is damaged (e is dropped from the index,
 * idx_drop, and *out is empty); -1 on an I/O error (errno set).
 */
static int
read_msg(struct store *s, const struct ent *e, struct frame_msg *out)
{
	char *line = NULL;
	struct frame f;
	enum frame_err fe;
	uint64_t v;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if ((line = malloc(e->len ? e->len : 1)) == NULL)
		goto out;
	if (read_all(s->log_fd, line, e->len, e->off) == -1) {
		log_msg(LOG_ERROR, "%s: cannot read at offset %llu: %s",
		    s->log_path, (unsigned long long)e->off, strerror(errno));
		goto out;
	}
	if ((fe = frame_decode(&s->k, line, e->len, FRAME_V3 | FRAME_TRUSTED,
	    &f)) != FRAME_OK) {
		idx_drop(s, (size_t)(e - s->ent), frame_strerror(fe));
		rc = 1;
		goto out;
	}
	if (f.type != FRAME_MSG || !sec_msgid_valid(f.u.msg.id, &v) ||
	    v != e->id) {
		frame_clear(&f);
		idx_drop(s, (size_t)(e - s->ent), "not the message indexed "
		    "there");
		rc = 1;
		goto out;
	}
	/* The body moves to *out: f is not cleared. */
	*out = f.u.msg;
	rc = 0;
out:
	free(line);
	return rc;
}

int
store_get(struct store *s, const char *id, struct frame_msg *out)
{
	const struct ent *e;
	uint64_t v;
	int r;

	memset(out, 0, sizeof(*out));
	if (!sec_msgid_valid(id, &v) || (e = idx_find(s, v)) == NULL ||
	    (r = read_msg(s, e, out)) == 1) {
		errno = ENOENT;
		return -1;
	}
	return r;
}

/* The first place in ord at or after (ts, id). */
static size_t
ord_lower(const struct store *s, uint64_t ts, uint64_t id)
{
	struct pos key = { ts, id, 0 };
	size_t lo = 0, hi = s->nent;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pos_cmp(&s->ord[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where history's walk back starts: the place after the last message
 * before q's cursor. */
static int
walk_start(struct store *s, const struct store_query *q, size_t *at)
{
	uint64_t bid = 0;

	if (q->before_id != NULL && q->before_id[0] != '\0' &&
	    !sec_msgid_valid(q->before_id, &bid)) {
		errno = EINVAL;
		return -1;
	}
	ord_sort(s);
	*at = q->before == 0 ? s->nent : ord_lower(s, q->before, bid);
	return 0;
}

long
store_history(struct store *s, const struct store_query *q,
    struct frame_msg *out, struct store_cursor *next)
{
	size_t i, filled = 0, bytes = 0;
	long rc = -1;

	memset(next, 0, sizeof(*next));
	if (walk_start(s, q, &i) == -1)
		return -1;
	/* Walking back from the cursor reads only what it returns (and,
	 * with an author to match, what it passes over), newest first. */
	for (; i > 0; i--) {
		const struct pos *p = &s->ord[i - 1];
		const struct ent *e = &s->ent[p->e];

		if (p->ts < q->since)
			break;
		if (filled == q->n ||
		    (q->bytes > 0 && bytes > 0 && bytes + e->len > q->bytes)) {
			next->more = 1;
			break;
		}
		bytes += e->len;
		next->ts = p->ts;
		sec_msgid_format(p->id, next->id);
		switch (read_msg(s, e, &out[filled])) {
		case -1:
			goto out;
		case 1:
			/* Dropped: ord[i - 1] is now the next newer one, and
			 * the walk goes on below it. */
			continue;
		}
		if (q->from != NULL && memcmp(out[filled].from, q->from,
		    32) != 0) {
			frame_msg_clear(&out[filled]);
			memset(&out[filled], 0, sizeof(out[filled]));
			continue;
		}
		filled++;
	}
	/* Oldest first. */
	for (size_t j = 0; j < filled / 2; j++) {
		struct frame_msg t = out[j];

		out[j] = out[filled - 1 - j];
		out[filled - 1 - j] = t;
	}
	rc = (long)filled;
out:
	if (rc == -1) {
		int saved = errno;

		for (size_t j = 0; j < filled; j++) {
			frame_msg_clear(&out[j]);
			memset(&out[j], 0, sizeof(out[j]));
		}
		errno = saved;
	}
	return rc;
}

long
store_ids(struct store *s, size_t n, uint64_t since,
    char (*ids)[PAPO_MSGID_LEN + 1], uint64_t *ts)
{
	size_t first;

	ord_sort(s);
	first = ord_lower(s, since, 0);
	if (s->nent - first > n)
		first = s->nent - n;
	for (size_t i = first; i < s->nent; i++) {
		sec_msgid_format(s->ord[i].id, ids[i - first]);
		if (ts != NULL)
			ts[i - first] = s->ord[i].ts;
	}
	return (long)(s->nent - first);
}

long
store_after(struct store *s, const char *id, size_t n, struct frame_msg *out,
    size_t *more, char *last)
{
	const struct ent *e;
	size_t start = 0, first, i;
	uint64_t v;
	long rc = 0;
	int r;

	*more = 0;
	last[0] = '\0';
	while (s->nent > 0) {
		struct frame_msg newest;

		if ((r = read_msg(s, &s->ent[s->nent - 1], &newest)) == 1)
			continue;
		if (r == 0) {
			memcpy(last, newest.id, PAPO_MSGID_LEN + 1);
			frame_msg_clear(&newest);
		}
		break;
	}
	if (id != NULL && sec_msgid_valid(id, &v) && (e = idx_find(s, v)) !=
	    NULL)
		start = (size_t)(e - s->ent) + 1;
	first = s->nent - start > n ? s->nent - n : start;
	*more = first - start;
	/* A damaged line drops its entry, and the next one takes its
	 * place at i. */
	for (i = first; i < s->nent;) {
		if ((r = read_msg(s, &s->ent[i], &out[rc])) == -1) {
			int saved = errno;

			while (rc > 0)
				frame_msg_clear(&out[--rc]);
			errno = saved;
			return -1;
		}
		if (r == 0) {
			rc++;
			i++;
		}
	}
	return rc;
}

size_t
store_damaged(struct store *s)
{
	size_t n = s->damaged;

	s->damaged = 0;
	return n;
}

void
store_digest(const struct store *s, uint8_t out[32])
{
	memcpy(out, s->digest, sizeof(s->digest));
}

void
store_stats(const struct store *s, struct store_stats *out)
{
	out->msgs = s->nent;
	out->floor = s->floor;
	out->gone = s->gone;
	out->acks = s->acks;
	out->dropped = s->dropped;
	out->outbox = s->nob;
}

int
store_outbox_add(struct store *s, const char *id)
{
	char line[OB_LINE_LEN + 2];
	struct stat st;
	int rc = -1;

	if (!sec_msgid_valid(id, NULL)) {
		errno = EINVAL;
		goto out;
	}
	if (ob_find(s, id) != -1) {
		rc = 0;
		goto out;
	}
	/* A failed reopen after a rewrite left no descriptor; try again. */
	if (s->ob_fd == -1) {
		char err[PAPO_ERR_LEN];

		if ((s->ob_fd = open_file(err, s->ob_path)) == -1) {
			log_msg(LOG_ERROR, "%s", err);
			goto out;
		}
	}
	if (fstat(s->ob_fd, &st) == -1)
		goto out;
	snprintf(line, sizeof(line), OB_PREFIX "%s" OB_SUFFIX "\n", id);
	if (ob_reserve(s) == -1)
		goto out;
	if (test_fail("outbox") ||
	    append(s->ob_fd, line, OB_LINE_LEN + 1, (uint64_t)st.st_size) == -1)
		goto out;
	ob_push(s, id);
	rc = 0;
out:
	return rc;
}

int
store_outbox_del(struct store *s, const char *id)
{
	char err[PAPO_ERR_LEN];
	char *text = NULL;
	size_t len = 0;
	int i, rc = -1;

	if ((i = ob_find(s, id)) == -1) {
		rc = 0;
		goto out;
	}
	if ((text = malloc(s->nob * (OB_LINE_LEN + 1) + 1)) == NULL)
		goto out;
	for (size_t j = 0; j < s->nob; j++) {
		if (j == (size_t)i)
			continue;
		len += (size_t)snprintf(text + len, OB_LINE_LEN + 2,
		    OB_PREFIX "%s" OB_SUFFIX "\n", s->ob[j]);
	}
	if (fs_write(err, s->ob_path, text, len) == -1) {
		log_msg(LOG_ERROR, "%s", err);
		goto out;
	}
	memmove(s->ob[i], s->ob[i + 1],
	    (s->nob - (size_t)i - 1) * sizeof(s->ob[0]));
	s->nob--;
	rc = 0;
	/* The old descriptor points at the replaced file.  The removal is
	 * durable already, so a failed reopen is only logged; the next add
	 * opens the file again. */
	if (s->ob_fd != -1)
		close(s->ob_fd);
	if ((s->ob_fd = open_file(err, s->ob_path)) == -1)
		log_msg(LOG_ERROR, "%s", err);
out:
	free(text);
	return rc;
}

int
store_outbox_has(const struct store *s, const char *id)
{
	return ob_find(s, id) != -1;
}

const char *
store_outbox_at(const struct store *s, size_t i)
{
	return i < s->nob ? s->ob[i] : NULL;
}

/* Retention. */

#define DAY_MS (24ull * 3600 * 1000)
#define KEEP_COUNT_MAX 100000000ull    /* PAPO_KEEP's largest count */
#define KEEP_DAYS_MAX 36500ull         /* and days: a hundred years */
#define COMPACT_BUF (1024 * 1024)      /* bytes written at once */

/* The rewrite under way: what store_compact hands replay's callback. */
struct compaction {
	int fd;               /* the new log, being written */
	char *b;              /* lines not written yet */
	size_t len;
	uint64_t floor;
	uint64_t *keep_ob;    /* the outbox's ids as numbers */
	size_t nob;
	size_t kept, dropped; /* messages */
	size_t pause_at;      /* tests: messages written before the pause */
	unsigned pause_ms;
};

int
store_keep_parse(char err[PAPO_ERR_LEN], const char *text,
    struct store_keep *k)
{
	unsigned long long n;
	char *end;

	memset(k, 0, sizeof(*k));
	if (text == NULL || text[0] == '\0')
		return 0;
	errno = 0;
	n = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || errno != 0 || n == 0 ||
	    (*end != '\0' && strcmp(end, "d") != 0) ||
	    (*end == '\0' && n > KEEP_COUNT_MAX) ||
	    (*end == 'd' && n > KEEP_DAYS_MAX)) {
		set_err(err, "PAPO_KEEP must be a count of messages (1 to "
		    "%llu, e.g. 1000) or days (1d to %llud, e.g. 30d), not "
		    "'%s'", KEEP_COUNT_MAX, KEEP_DAYS_MAX, text);
		return -1;
	}
	if (*end == 'd')
		k->ms = n * DAY_MS;
	else
		k->count = n;
	return 0;
}

int
store_below_floor(const struct store *s, uint64_t ts)
{
	return ts < s->floor;
}

/* The outbox's ids as numbers, for a rewrite's tests of each message. */
static uint64_t *
ob_values(const struct store *s)
{
	uint64_t *v = malloc((s->nob + 1) * sizeof(*v));

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < s->nob; i++)
		if (!sec_msgid_valid(s->ob[i], &v[i]))
			v[i] = UINT64_MAX;
	return v;
}

static int
in_list(const uint64_t *v, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == id)
			return 1;
	return 0;
}

static int
ts_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The floor k gives: with a count, the time of the count-th newest
 * message (all of that time are kept, so ties keep a few more); with
 * days, now less the window.  Never lower than the floor already kept.
 * -1 when out of memory.
 */
static int
new_floor(const struct store *s, const struct store_keep *k, uint64_t now_ms,
    uint64_t *floor)
{
	*floor = s->floor;
	if (k->ms != 0 && now_ms > k->ms && now_ms - k->ms > *floor)
		*floor = now_ms - k->ms;
	if (k->count != 0 && s->nent > k->count) {
		uint64_t *ts = malloc(s->nent * sizeof(*ts));

		if (ts == NULL)
			return -1;
		for (size_t i = 0; i < s->nent; i++)
			ts[i] = s->ent[i].ts;
		qsort(ts, s->nent, sizeof(*ts), ts_desc);
		if (ts[k->count - 1] > *floor)
			*floor = ts[k->count - 1];
		free(ts);
	}
	return 0;
}

int
store_compact_due(const struct store *s, const struct store_keep *k,
    uint64_t now_ms, int slack)
{
	uint64_t margin;

	if (k->count != 0) {
		margin = slack ? (k->count / 4 > 0 ? k->count / 4 : 1) : 0;
		return s->nent > k->count + margin;
	}
	if (k->ms == 0 || now_ms <= k->ms)
		return 0;
	margin = slack ? k->ms / 10 : 0;
	if (slack && margin < 3600 * 1000)
		margin = 3600 * 1000;
	if (now_ms - k->ms <= margin)
		return 0;
	for (size_t i = 0; i < s->nent; i++) {
		if (s->ent[i].ts >= now_ms - k->ms - margin)
			continue;
		/* Own messages still to deliver stay whatever their age. */
		for (size_t j = 0; j < s->nob; j++) {
			uint64_t v;

			if (sec_msgid_valid(s->ob[j], &v) && v == s->ent[i].id)
				goto next;
		}
		return 1;
next:		;
	}
	return 0;
}

static int
cw_flush(struct compaction *c)
{
	if (write_all(c->fd, c->b, c->len) == -1)
		return -1;
	c->len = 0;
	return 0;
}

static int
cw_put(struct compaction *c, const char *line, size_t len)
{
	if (c->len + len + 1 > COMPACT_BUF && cw_flush(c) == -1)
		return -1;
	if (len + 1 > COMPACT_BUF)
		return write_all(c->fd, line, len) == -1 ||
		    write_all(c->fd, "\n", 1) == -1 ? -1 : 0;
	memcpy(c->b + c->len, line, len);
	c->b[c->len + len] = '\n';
	c->len += len + 1;
	return 0;
}

/* Whether the message of id v stays: young enough, or still ours to
 * deliver. */
static int
cw_keeps(const struct store *s, const struct compaction *c, uint64_t v)
{
	const struct ent *e = idx_find(s, v);

	return e != NULL && (e->ts >= c->floor || in_list(c->keep_ob, c->nob, v));
}

/* Whether a message line at off is the copy the index holds: a second
 * copy, or a damaged one a later copy replaced, is left out. */
static int
cw_indexed(const struct store *s, uint64_t v, uint64_t off)
{
	const struct ent *e = idx_find(s, v);

	return e != NULL && e->off == off;
}

/*
 * replay's callback for a rewrite: copies each line that stays.  The
 * log was read whole at open, so a line that does not read now (one
 * skipped then) is left out, never cut: this never returns 1.
 */
static int
compact_line(struct store *s, const char *line, size_t len, uint64_t off,
    int last, const char **why)
{
	struct compaction *c = s->cw;
	char id[PAPO_MSGID_LEN + 1];
	struct frame f;
	uint64_t v, ts;
	int keep = 0, msg = 0;

	(void)last;
	(void)why;
	if (fast_msg(line, len, id, &v, &ts)) {
		keep = cw_keeps(s, c, v) && cw_indexed(s, v, off);
		msg = 1;
	} else if (frame_decode(&s->k, line, len, FRAME_V3 | FRAME_TRUSTED, &f) ==
	    FRAME_OK) {
		if (f.type == FRAME_MSG && sec_msgid_valid(f.u.msg.id, &v)) {
			keep = cw_keeps(s, c, v) && cw_indexed(s, v, off);
			msg = 1;
		} else if (f.type == FRAME_ACK &&
		    sec_msgid_valid(f.u.ack.id, &v))
			keep = cw_keeps(s, c, v);
		frame_clear(&f);
	}
	if (!keep) {
		c->dropped += msg;
		return 0;
	}
	if (cw_put(c, line, len) == -1)
		return -1;
	if (msg && ++c->kept == c->pause_at && c->pause_ms > 0) {
		/* Tests only (PAPO_TEST_COMPACT_PAUSE_MS): half the new log
		 * is on disk, so that a kill lands mid-rewrite. */
		if (cw_flush(c) == -1)
			return -1;
		log_msg(LOG_WARN, "compaction paused for %u ms (test setting)",
		    c->pause_ms);
		usleep(c->pause_ms * 1000u);
	}
	return 0;
}

/*
 * Forgets the index and reads the log at path again: after a rewrite.
 * On failure the store has no log descriptor, so every later append and
 * read fails (and nothing is acknowledged) rather than going to the
 * replaced file.
 */
static int
reload(char err[PAPO_ERR_LEN], struct store *s)
{
	close(s->log_fd);
	if ((s->log_fd = open_file(err, s->log_path)) == -1)
		return -1;
	s->nent = 0;
	s->unsorted = 0;
	s->live = 0;
	s->acks = 0;
	s->floor = s->gone = 0;
	memset(s->digest, 0, sizeof(s->digest));
	if (idx_rehash(s, STORE_TAB_BITS0) == -1) {
		set_err(err, "cannot index %s: %s", s->log_path,
		    strerror(errno));
		goto fail;
	}
	if (replay(err, s, s->log_fd, s->log_path, log_line,
	    &s->log_size) == -1)
		goto fail;
	s->live = 1;
	return 0;
fail:
	close(s->log_fd);
	s->log_fd = -1;
	s->nent = 0;
	memset(s->tab, 0xff, ((size_t)1 << s->tabbits) * sizeof(*s->tab));
	return -1;
}

/* Test setting: PAPO_TEST_COMPACT_PAUSE_MS, at most a minute. */
static unsigned
pause_ms(void)
{
	const char *v = getenv("PAPO_TEST_COMPACT_PAUSE_MS");
	long ms = v != NULL ? strtol(v, NULL, 10) : 0;

	return ms > 0 && ms <= 60000 ? (unsigned)ms : 0;
}

long
store_compact(char err[PAPO_ERR_LEN], struct store *s,
    const struct store_keep *k, uint64_t now_ms)
{
	struct compaction c;
	char tmp[PATH_MAX + 8], head[128];
	uint64_t floor, end;
	size_t drop = 0;
	int rfd = -1, n;
	long rc = -1;

	memset(&c, 0, sizeof(c));
	c.fd = -1;
	err[0] = '\0';
	if (new_floor(s, k, now_ms, &floor) == -1 ||
	    (c.keep_ob = ob_values(s)) == NULL) {
		set_err(err, "cannot compact %s: %s", s->log_path,
		    strerror(errno));
		goto out;
	}
	c.nob = s->nob;
	for (size_t i = 0; i < s->nent; i++)
		if (s->ent[i].ts < floor &&
		    !in_list(c.keep_ob, c.nob, s->ent[i].id))
			drop++;
	if (drop == 0) {
		rc = 0;
		goto out;
	}
	c.floor = floor;
	c.pause_ms = pause_ms();
	c.pause_at = (s->nent - drop) / 2 + 1;
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->log_path);
	if ((c.b = malloc(COMPACT_BUF)) == NULL ||
	    (c.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 ||
	    (rfd = open(s->log_path, O_RDONLY | O_CLOEXEC)) == -1) {
		set_err(err, "cannot compact %s: %s", s->log_path,
		    strerror(errno));
		goto out;
	}
	n = snprintf(head, sizeof(head), RET_FMT, (unsigned long long)floor,
	    (unsigned long long)(s->gone + drop));
	s->cw = &c;
	if (cw_put(&c, head, (size_t)n) == -1 ||
	    replay(err, s, rfd, s->log_path, compact_line, &end) == -1 ||
	    cw_flush(&c) == -1 || fsync(c.fd) == -1) {
		if (err[0] == '\0')
			set_err(err, "cannot write %s: %s", tmp,
			    strerror(errno));
		s->cw = NULL;
		goto out;
	}
	s->cw = NULL;
	if (close(c.fd) == -1) {
		c.fd = -1;
		set_err(err, "cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	c.fd = -1;
	/* From the rename on, the new log is the log. */
	if (rename(tmp, s->log_path) == -1) {
		set_err(err, "cannot replace %s: %s", s->log_path,
		    strerror(errno));
		goto out;
	}
	if (fs_sync_dir(s->log_path) == -1)
		log_msg(LOG_WARN, "cannot sync the directory of %s: %s",
		    s->log_path, strerror(errno));
	if (reload(err, s) == -1)
		goto out;
	rc = (long)drop;
out:
	if (c.fd != -1) {
		close(c.fd);
		unlink(tmp);
	}
	if (rfd != -1)
		close(rfd);
	free(c.b);
	free(c.keep_ob);
	return rc;
}
