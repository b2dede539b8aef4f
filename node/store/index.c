/*
 * index.c: a room's search index in SQLite (index.h): the schema, the
 * mark that ties it to the log, messages added one transaction each (or
 * in a rebuild's batches), and searches built from the user's text
 * without letting any of it reach FTS5's syntax.  Node thread.
 *
 * Durability is the log's business: the database runs in WAL mode with
 * synchronous=NORMAL, so an add costs no fsync; a crash may lose the
 * last adds, and the store's check at open puts them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lib/buf.h"
#include "node/store/index.h"
#include "node/store/tokenize.h"
#include "node/wire/attach.h"
#include "node/wire/crypto.h"

#define IX_SNIPPET_TOKENS 16     /* words an excerpt shows */
/* What the index's layout is: 2 since the papo tokenizer (1, unmarked:
 * unicode61 alone).  An index of another version is rebuilt. */
#define IX_VERSION 2
/* snippet()'s marks around a hit: bytes that valid UTF-8 never holds,
 * so a message's own brackets are never taken for them. */
#define IX_OPEN "\xfe"
#define IX_CLOSE "\xff"

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS msg(rowid INTEGER PRIMARY KEY,"
    " id TEXT NOT NULL UNIQUE, ts INTEGER NOT NULL,"
    " from_id TEXT NOT NULL, from_name TEXT NOT NULL, to_id TEXT,"
    " reply_to TEXT, files INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS msg_reply ON msg(reply_to)"
    " WHERE reply_to IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS msg_ts ON msg(ts);"
    "CREATE INDEX IF NOT EXISTS msg_from ON msg(from_id);"
    "CREATE INDEX IF NOT EXISTS msg_name ON msg(from_name);"
    "CREATE INDEX IF NOT EXISTS msg_to ON msg(to_id)"
    " WHERE to_id IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS msg_files ON msg(files) WHERE files > 0;"
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text,"
    " tokenize='" TOKENIZE_NAME " remove_diacritics 2');"
    "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY,"
    " v INTEGER NOT NULL);";

struct ix {
	sqlite3 *db;
	sqlite3_stmt *ins_msg, *ins_fts, *set_meta;
	struct ix_mark mark;
	uint64_t version;        /* meta's version (0: none) */
	int batch;               /* inside ix_begin */
};

static int ix_put_mark(struct ix *x);
static long ix_search_run(char err[PAPO_ERR_LEN], struct ix *x,
    const struct ix_query *q, struct ix_hit *out, int *more, int *ranked,
    int *code);

static int
ix_exec(char err[PAPO_ERR_LEN], struct ix *x, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(x->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_set(err, "search index: %s", msg != NULL ? msg :
		    sqlite3_errmsg(x->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Whether quick_check finds the database whole. */
static int
ix_whole(char err[PAPO_ERR_LEN], struct ix *x)
{
	sqlite3_stmt *st;
	int ok;

	if (sqlite3_prepare_v2(x->db, "PRAGMA quick_check", -1, &st,
	    NULL) != SQLITE_OK) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		return 0;
	}
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *r = (const char *)sqlite3_column_text(st, 0);

		ok = r != NULL && strcmp(r, "ok") == 0;
		if (!ok)
			err_set(err, "search index damaged: %s",
			    r != NULL ? r : "?");
	} else {
		ok = 0;
		err_set(err, "search index damaged: %s",
		    sqlite3_errmsg(x->db));
	}
	sqlite3_finalize(st);
	return ok;
}

static int
ix_read_mark(char err[PAPO_ERR_LEN], struct ix *x)
{
	sqlite3_stmt *st;
	int rc;

	memset(&x->mark, 0, sizeof(x->mark));
	x->version = 0;
	if (sqlite3_prepare_v2(x->db, "SELECT k, v FROM meta", -1, &st,
	    NULL) != SQLITE_OK) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		uint64_t v = (uint64_t)sqlite3_column_int64(st, 1);

		if (k == NULL)
			continue;
		if (strcmp(k, "count") == 0)
			x->mark.count = v;
		else if (strcmp(k, "sum") == 0)
			x->mark.sum = v;
		else if (strcmp(k, "last") == 0)
			x->mark.last = v;
		else if (strcmp(k, "version") == 0)
			x->version = v;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		return -1;
	}
	return 0;
}

/* x's connection to path opened with flags (SQLite's), its errors
 * extended and papo's tokenizer registered: 0, or -1 with err. */
static int
ix_connect(char err[PAPO_ERR_LEN], struct ix *x, const char *path, int flags)
{
	if (sqlite3_open_v2(path, &x->db, flags | SQLITE_OPEN_NOMUTEX,
	    NULL) != SQLITE_OK) {
		err_set(err, "cannot open %s: %s", path, x->db != NULL ?
		    sqlite3_errmsg(x->db) : "out of memory");
		return -1;
	}
	sqlite3_extended_result_codes(x->db, 1);
	if (tokenize_register(x->db) == -1) {
		err_set(err, "%s", "search index: this SQLite has no FTS5");
		return -1;
	}
	return 0;
}

static struct ix *ix_open_as(char err[PAPO_ERR_LEN], const char *path,
    struct ix_mark *mark, int check);

struct ix *
ix_open(char err[PAPO_ERR_LEN], const char *path, struct ix_mark *mark)
{
	return ix_open_as(err, path, mark, 1);
}

struct ix *
ix_open_unchecked(char err[PAPO_ERR_LEN], const char *path,
    struct ix_mark *mark)
{
	return ix_open_as(err, path, mark, 0);
}

struct ix *
ix_open_ro(char err[PAPO_ERR_LEN], const char *path)
{
	struct ix *x;

	if ((x = calloc(1, sizeof(*x))) == NULL) {
		err_set(err, "search index: %s", strerror(errno));
		return NULL;
	}
	if (ix_connect(err, x, path, SQLITE_OPEN_READONLY) == -1 ||
	    ix_read_mark(err, x) == -1)
		goto fail;
	if (x->version != IX_VERSION) {
		err_set(err, "search index of another version (%llu, not %d)",
		    (unsigned long long)x->version, IX_VERSION);
		goto fail;
	}
	return x;
fail:
	ix_close(x);
	return NULL;
}

/* SQLite's progress handler of ix_check: nonzero interrupts. */
static int
ix_stopped(void *arg)
{
	return atomic_load((atomic_int *)arg);
}

int
ix_check(char err[PAPO_ERR_LEN], const char *path, atomic_int *stop)
{
	struct ix x;
	int rc = -1;

	memset(&x, 0, sizeof(x));
	if (sqlite3_open_v2(path, &x.db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		err_set(err, "cannot open %s: %s", path, x.db != NULL ?
		    sqlite3_errmsg(x.db) : "out of memory");
		goto out;
	}
	/* The schema names the tokenizer: known here too. */
	if (tokenize_register(x.db) == -1) {
		err_set(err, "%s", "search index: this SQLite has no FTS5");
		goto out;
	}
	sqlite3_progress_handler(x.db, 10000, ix_stopped, stop);
	rc = ix_whole(err, &x);
	if (atomic_load(stop)) {
		err_set(err, "%s", "search index: check stopped");
		rc = -1;
	}
out:
	sqlite3_close(x.db);
	return rc;
}

static struct ix *
ix_open_as(char err[PAPO_ERR_LEN], const char *path, struct ix_mark *mark,
    int check)
{
	struct ix *x;
	struct stat st;
	int fd, fresh;

	if ((x = calloc(1, sizeof(*x))) == NULL) {
		err_set(err, "search index: %s", strerror(errno));
		return NULL;
	}
	/* The index holds the messages' text: mode 0600 like the log, and
	 * SQLite gives its -wal and -shm files the database's mode. */
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1 ||
	    fchmod(fd, 0600) == -1 || fstat(fd, &st) == -1) {
		err_set(err, "cannot open %s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		goto fail;
	}
	fresh = st.st_size == 0;
	close(fd);
	if (ix_connect(err, x, path, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE) == -1)
		goto fail;
	if (ix_exec(err, x, schema) == -1 || (check && !ix_whole(err, x)) ||
	    ix_read_mark(err, x) == -1)
		goto fail;
	if (fresh && x->version == 0) {
		char sql[96];

		snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO meta(k, v) "
		    "VALUES ('version', %d)", IX_VERSION);
		if (ix_exec(err, x, sql) == -1)
			goto fail;
		x->version = IX_VERSION;
	}
	if (x->version != IX_VERSION) {
		err_set(err, "search index of another version (%llu, not %d)",
		    (unsigned long long)x->version, IX_VERSION);
		goto fail;
	}
	if (sqlite3_prepare_v2(x->db, "INSERT OR IGNORE INTO msg(id, ts, "
	    "from_id, from_name, to_id, reply_to, files) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?)", -1, &x->ins_msg, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(x->db, "INSERT INTO fts(rowid, text) "
	    "VALUES (?, ?)", -1, &x->ins_fts, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(x->db, "INSERT OR REPLACE INTO meta(k, v) "
	    "VALUES ('count', ?), ('sum', ?), ('last', ?)", -1, &x->set_meta,
	    NULL) != SQLITE_OK) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		goto fail;
	}
	*mark = x->mark;
	return x;
fail:
	ix_close(x);
	return NULL;
}

void
ix_close(struct ix *x)
{
	if (x == NULL)
		return;
	sqlite3_finalize(x->ins_msg);
	sqlite3_finalize(x->ins_fts);
	sqlite3_finalize(x->set_meta);
	sqlite3_close(x->db);
	free(x);
}

int
ix_bulk(struct ix *x)
{
	char err[PAPO_ERR_LEN];

	return ix_exec(err, x, "PRAGMA journal_mode=OFF;"
	    "PRAGMA synchronous=OFF;PRAGMA cache_size=-65536");
}

int
ix_begin(struct ix *x)
{
	char err[PAPO_ERR_LEN];

	if (ix_exec(err, x, "BEGIN") == -1)
		return -1;
	x->batch = 1;
	return 0;
}

int
ix_commit(struct ix *x)
{
	char err[PAPO_ERR_LEN];

	x->batch = 0;
	if (ix_put_mark(x) == -1) {
		sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return ix_exec(err, x, "COMMIT");
}

int
ix_rollback(struct ix *x)
{
	char err[PAPO_ERR_LEN];

	x->batch = 0;
	if (sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	/* The mark as it was: the one the transaction left unwritten. */
	return ix_read_mark(err, x);
}

/* Binds text, or NULL when it is NULL. */
static int
bind_text(sqlite3_stmt *st, int i, const char *text)
{
	return text == NULL ? sqlite3_bind_null(st, i) :
	    sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
}

/* One message's rows and the new mark, in the transaction open. */
static int
ix_rows(struct ix *x, const struct frame_msg *m, uint64_t v)
{
	struct attach files[ATTACH_MAX];     /* a rebuild runs on its own thread */
	char from[PAPO_ID_LEN + 1], to[PAPO_ID_LEN + 1];
	size_t tlen, nfiles;
	sqlite3_int64 row;

	nfiles = attach_parse(m->body, m->body_len, files, ATTACH_MAX, &tlen);
	sec_id_format(m->from, from);
	if (m->has_to)
		sec_id_format(m->to, to);
	sqlite3_reset(x->ins_msg);
	if (sqlite3_bind_text(x->ins_msg, 1, m->id, -1, SQLITE_STATIC) ||
	    sqlite3_bind_int64(x->ins_msg, 2, (sqlite3_int64)m->ts) ||
	    sqlite3_bind_text(x->ins_msg, 3, from, -1, SQLITE_STATIC) ||
	    sqlite3_bind_text(x->ins_msg, 4, m->name, -1, SQLITE_STATIC) ||
	    bind_text(x->ins_msg, 5, m->has_to ? to : NULL) ||
	    bind_text(x->ins_msg, 6, m->has_reply_to ? m->reply_to : NULL) ||
	    sqlite3_bind_int(x->ins_msg, 7, (int)nfiles) ||
	    sqlite3_step(x->ins_msg) != SQLITE_DONE)
		return -1;
	if (sqlite3_changes(x->db) == 0)
		return 0;          /* there already */
	row = sqlite3_last_insert_rowid(x->db);
	sqlite3_reset(x->ins_fts);
	if (sqlite3_bind_int64(x->ins_fts, 1, row) ||
	    sqlite3_bind_text(x->ins_fts, 2, m->body != NULL ? m->body : "",
	    (int)tlen, SQLITE_STATIC) ||
	    sqlite3_step(x->ins_fts) != SQLITE_DONE)
		return -1;
	x->mark.count++;
	x->mark.sum += v;
	x->mark.last = v;
	/* A batch writes its mark once, at its commit. */
	return x->batch ? 0 : ix_put_mark(x);
}

/* The mark into meta, in the transaction open. */
static int
ix_put_mark(struct ix *x)
{
	sqlite3_reset(x->set_meta);
	if (sqlite3_bind_int64(x->set_meta, 1,
	    (sqlite3_int64)x->mark.count) ||
	    sqlite3_bind_int64(x->set_meta, 2, (sqlite3_int64)x->mark.sum) ||
	    sqlite3_bind_int64(x->set_meta, 3, (sqlite3_int64)x->mark.last) ||
	    sqlite3_step(x->set_meta) != SQLITE_DONE)
		return -1;
	return 0;
}

int
ix_add(char err[PAPO_ERR_LEN], struct ix *x, const struct frame_msg *m,
    uint64_t v)
{
	struct ix_mark was = x->mark;

	if (!x->batch && ix_exec(err, x, "BEGIN") == -1)
		return -1;
	if (ix_rows(x, m, v) == -1) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		if (!x->batch) {
			sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
			x->mark = was;
		}
		return -1;
	}
	if (!x->batch && ix_exec(err, x, "COMMIT") == -1) {
		sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
		x->mark = was;
		return -1;
	}
	return 0;
}

int
ix_skip(char err[PAPO_ERR_LEN], struct ix *x, uint64_t v)
{
	x->mark.count++;
	x->mark.sum += v;
	x->mark.last = v;
	if (!x->batch && ix_put_mark(x) == -1) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		return -1;
	}
	return 0;
}

int
ix_drop(char err[PAPO_ERR_LEN], struct ix *x, char (*ids)[PAPO_MSGID_LEN + 1],
    size_t n, const struct ix_mark *mark)
{
	struct ix_mark was = x->mark;
	sqlite3_stmt *row = NULL, *fts = NULL, *del = NULL;

	if (ix_exec(err, x, "BEGIN") == -1)
		return -1;
	if (sqlite3_prepare_v2(x->db, "SELECT rowid FROM msg WHERE id = ?",
	    -1, &row, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(x->db, "DELETE FROM fts WHERE rowid = ?", -1,
	    &fts, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(x->db, "DELETE FROM msg WHERE rowid = ?", -1,
	    &del, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		sqlite3_int64 r;
		int rc;

		sqlite3_reset(row);
		sqlite3_bind_text(row, 1, ids[i], -1, SQLITE_STATIC);
		if ((rc = sqlite3_step(row)) == SQLITE_DONE)
			continue;          /* a line never indexed (ix_skip) */
		if (rc != SQLITE_ROW)
			goto fail;
		r = sqlite3_column_int64(row, 0);
		sqlite3_reset(fts);
		sqlite3_reset(del);
		if (sqlite3_bind_int64(fts, 1, r) ||
		    sqlite3_step(fts) != SQLITE_DONE ||
		    sqlite3_bind_int64(del, 1, r) ||
		    sqlite3_step(del) != SQLITE_DONE)
			goto fail;
	}
	x->mark = *mark;
	if (ix_put_mark(x) == -1)
		goto fail;
	sqlite3_finalize(row);
	sqlite3_finalize(fts);
	sqlite3_finalize(del);
	if (ix_exec(err, x, "COMMIT") == -1) {
		sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
		x->mark = was;
		return -1;
	}
	return 0;
fail:
	err_set(err, "search index: %s", sqlite3_errmsg(x->db));
	sqlite3_finalize(row);
	sqlite3_finalize(fts);
	sqlite3_finalize(del);
	sqlite3_exec(x->db, "ROLLBACK", NULL, NULL, NULL);
	x->mark = was;
	return -1;
}

/* Appends one term as a quoted FTS5 phrase. */
static void
add_term(struct buf *b, const char *p, size_t n, int prefix)
{
	if (b->len > 0)
		buf_u8(b, ' ');
	buf_u8(b, '"');
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '"')
			buf_u8(b, '"');
		buf_u8(b, (uint8_t)p[i]);
	}
	buf_u8(b, '"');
	if (prefix)
		buf_u8(b, '*');
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	    c == '\f' || c == '\v';
}

static int
is_word_byte(unsigned char c)
{
	return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z');
}

/* The words of a term (runs of letters and digits; a phrase has
 * several), and in *last the characters of its last one, one of three
 * bytes or more counted as two (a CJK character is a word of its own:
 * its prefix reads few). */
static size_t
term_words(const char *p, size_t n, size_t *last)
{
	size_t words = 0;
	int in = 0;

	*last = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (!is_word_byte(c)) {
			in = 0;
			continue;
		}
		if (!in) {
			words++;
			*last = 0;
		}
		in = 1;
		if ((c & 0xc0) != 0x80)
			*last += c >= 0xe0 ? 2 : 1;
	}
	return words;
}

int
ix_fts_query(char err[PAPO_ERR_LEN], const char *text, char **out)
{
	struct buf b;
	const char *p = text != NULL ? text : "";
	size_t words = 0;

	*out = NULL;
	if (strlen(p) > IX_QUERY_MAX) {
		err_set(err, "the query is longer than %d bytes",
		    IX_QUERY_MAX);
		return -1;
	}
	buf_init(&b, 4 * IX_QUERY_MAX + 16);
	while (*p != '\0') {
		const char *s, *e;
		size_t w, last;
		int prefix = 0;

		if (is_space(*p)) {
			p++;
			continue;
		}
		if (*p == '"') {
			s = ++p;
			while (*p != '\0' && *p != '"')
				p++;
			e = p;
			if (*p == '"')
				p++;
		} else {
			s = p;
			while (*p != '\0' && *p != '"' && !is_space(*p))
				p++;
			e = p;
		}
		while (e > s && e[-1] == '*') {
			e--;
			prefix = 1;
		}
		if (*p == '*') {
			prefix = 1;
			while (*p == '*')
				p++;
		}
		/* Each word costs a read of its matches, a prefix those of
		 * every word it starts: bounded (docs/SECURITY.md, "Search
		 * bounds"). */
		if ((w = term_words(s, (size_t)(e - s), &last)) == 0)
			continue;
		words += w;
		if (words > IX_TERMS_MAX) {
			buf_free(&b);
			err_set(err, "the query has more than %d words: search "
			    "for fewer (each word must be found)",
			    IX_TERMS_MAX);
			return -1;
		}
		if (prefix && last < IX_PREFIX_MIN) {
			buf_free(&b);
			err_set(err, "a prefix needs at least %d letters or "
			    "digits before its * (one letter and * would "
			    "read nearly every word)", IX_PREFIX_MIN);
			return -1;
		}
		add_term(&b, s, (size_t)(e - s), prefix);
	}
	if (b.toobig || b.len == 0 || buf_u8(&b, '\0') == -1) {
		buf_free(&b);
		err_set(err, "the query has no words to search for (letters "
		    "or digits; \"a phrase\"; a prefix*)");
		return -1;
	}
	*out = (char *)b.p;
	return 0;
}

void
ix_hits_free(struct ix_hit *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].excerpt);
		v[i].excerpt = NULL;
	}
}

/* Binds :name to text when the statement has that parameter. */
static int
bind_named(sqlite3_stmt *st, const char *name, const char *text)
{
	int i = sqlite3_bind_parameter_index(st, name);

	return i == 0 ? SQLITE_OK : sqlite3_bind_text(st, i, text, -1,
	    SQLITE_STATIC);
}

static int
bind_named_int(sqlite3_stmt *st, const char *name, sqlite3_int64 v)
{
	int i = sqlite3_bind_parameter_index(st, name);

	return i == 0 ? SQLITE_OK : sqlite3_bind_int64(st, i, v);
}

/*
 * How a search with words reads the index.  Ranking by bm25 costs as
 * much as there are matches (a word in every message of a long log:
 * 35 ms a page over a million on 2 cores, a phrase or a prefix several
 * times that); so when more than IX_WINDOW messages match, the hits
 * come newest first instead, which FTS5 reads in rowid order and stops
 * after a page; rank is then not even selected (bm25's statistics count
 * every match of each phrase, a read of them all).  With filters besides the words (from, to, files, a
 * thread, times) that few messages pass, those are read first (by the
 * msg table's indexes) and each is matched by its rowid: a common word
 * and a filter nothing passes no longer read every match to reject it.
 */
enum ix_mode {
	IX_ALL,        /* every hit ranked (or no words) */
	IX_OLD,        /* more than IX_WINDOW match: newest first (no bm25,
	                * whose statistics alone read every match) */
	IX_FEW,        /* the messages the filters pass, matched, ranked */
	IX_FEW_OLD,    /* those, newest first (more than IX_WINDOW match) */
};
#define IX_WINDOW IX_RANKED_MAX
#define IX_FEW_MAX 5000          /* messages passing filters matched one
                                  * by one */

/* Whether q filters by more than words. */
static int
ix_filtered(const struct ix_query *q)
{
	return q->from_id != NULL || q->from_name != NULL ||
	    q->to_id != NULL || q->before != 0 || q->after != 0 ||
	    q->files || q->thread != NULL;
}

/* Appends q's filters (" AND ..." on the msg table, m) to sql at *n. */
static void
ix_filters(char *sql, size_t size, size_t *n, const struct ix_query *q)
{
#define ADD(...) (*n += (size_t)snprintf(sql + *n, size - *n, __VA_ARGS__))
	if (q->from_id != NULL)
		ADD(" AND m.from_id = :from");
	if (q->from_name != NULL)
		ADD(" AND m.from_name = :fromname");
	if (q->to_id != NULL)
		ADD(" AND m.to_id = :to");
	if (q->before != 0 && q->before_id != NULL)
		ADD(" AND (m.ts < :before OR (m.ts = :before AND"
		    " m.id < :beforeid))");
	else if (q->before != 0)
		ADD(" AND m.ts < :before");
	if (q->after != 0)
		ADD(" AND m.ts > :after");
	if (q->files)
		ADD(" AND m.files > 0");
	if (q->thread != NULL)
		ADD(" AND m.id IN (SELECT id FROM t)");
#undef ADD
}

/* Binds q's filters' parameters (those st has). */
static int
ix_bind(sqlite3_stmt *st, const struct ix_query *q)
{
	return bind_named(st, ":thread", q->thread) ||
	    bind_named(st, ":from", q->from_id) ||
	    bind_named(st, ":fromname", q->from_name) ||
	    bind_named(st, ":to", q->to_id) ||
	    bind_named(st, ":beforeid", q->before_id) ||
	    bind_named_int(st, ":before", (sqlite3_int64)q->before) ||
	    bind_named_int(st, ":after", (sqlite3_int64)q->after);
}

#define IX_THREAD_CTE "WITH RECURSIVE t(id) AS (SELECT :thread UNION " \
	"SELECT c.id FROM msg c JOIN t ON c.reply_to = t.id) "

/* How many messages q's filters pass, counting up to IX_FEW_MAX + 1;
 * -1 on an error. */
static long
ix_few(struct ix *x, const struct ix_query *q)
{
	char sql[1024];
	size_t n = 0;
	sqlite3_stmt *st;
	long count = -1;

	n += (size_t)snprintf(sql, sizeof(sql), "%sSELECT count(*) FROM "
	    "(SELECT 1 FROM msg m WHERE 1", q->thread != NULL ?
	    IX_THREAD_CTE : "");
	ix_filters(sql, sizeof(sql), &n, q);
	n += (size_t)snprintf(sql + n, sizeof(sql) - n, " LIMIT %d)",
	    IX_FEW_MAX + 1);
	if (n >= sizeof(sql) ||
	    sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (ix_bind(st, q) == 0 && sqlite3_step(st) == SQLITE_ROW)
		count = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return count;
}

/* The statement q asks for, fts the FTS5 query (NULL: none). */
static int
ix_prepare(struct ix *x, const struct ix_query *q, const char *fts,
    enum ix_mode mode, sqlite3_stmt **st)
{
	int newest = mode == IX_OLD || mode == IX_FEW_OLD;

	char sql[2048];
	size_t n = 0;

#define ADD(...) (n += (size_t)snprintf(sql + n, sizeof(sql) - n, __VA_ARGS__))
	if (q->thread != NULL)
		ADD(IX_THREAD_CTE);
	if (fts != NULL && q->newest) {
		/* The page chosen by time first, without excerpts: snippet()
		 * is then made for its rows only, not for every match. */
		ADD("SELECT m.id, snippet(fts, 0, '" IX_OPEN "', '" IX_CLOSE
		    "', '…', %d), m.ts, 0 FROM fts JOIN msg m ON m.rowid = "
		    "fts.rowid WHERE fts MATCH :q AND m.rowid IN (SELECT "
		    "m.rowid FROM fts JOIN msg m ON m.rowid = fts.rowid "
		    "WHERE fts MATCH :q", IX_SNIPPET_TOKENS);
		ix_filters(sql, sizeof(sql), &n, q);
		ADD(" ORDER BY m.ts DESC, m.id DESC LIMIT :limit OFFSET "
		    ":offset) ORDER BY m.ts DESC, m.id DESC");
		goto prepare;
	}
	if (fts != NULL)
		ADD("SELECT m.id, snippet(fts, 0, '" IX_OPEN "', '" IX_CLOSE
		    "', '…', %d), m.ts, %s FROM %s "
		    "WHERE fts MATCH :q", IX_SNIPPET_TOKENS,
		    newest ? "0" : "fts.rank",
		    mode == IX_FEW || mode == IX_FEW_OLD ?
		    "msg m CROSS JOIN fts ON fts.rowid = m.rowid" :
		    "fts JOIN msg m ON m.rowid = fts.rowid");
	else
		ADD("SELECT m.id, NULL, m.ts, 0 FROM msg m WHERE 1");
	ix_filters(sql, sizeof(sql), &n, q);
	if (mode == IX_OLD)
		ADD(" ORDER BY fts.rowid DESC");
	else if (mode == IX_FEW_OLD)
		ADD(" ORDER BY m.rowid DESC");
	else if (fts != NULL)
		ADD(" ORDER BY fts.rank, m.ts DESC");
	else if (q->thread != NULL && !q->newest)
		ADD(" ORDER BY m.ts, m.id");
	else
		ADD(" ORDER BY m.ts DESC, m.id DESC");
	ADD(" LIMIT :limit OFFSET :offset");
#undef ADD
prepare:
	if (n >= sizeof(sql) ||
	    sqlite3_prepare_v2(x->db, sql, -1, st, NULL) != SQLITE_OK)
		return -1;
	if (ix_bind(*st, q) || bind_named(*st, ":q", fts))
		return -1;
	return 0;
}

/* Not 0 when more than IX_WINDOW messages match (then newest first),
 * 0 when they are few enough to rank; -1 on an error. */
static sqlite3_int64
ix_window(struct ix *x, const char *fts)
{
	sqlite3_stmt *st;
	sqlite3_int64 min = 0;
	int rc;

	if (sqlite3_prepare_v2(x->db, "SELECT rowid FROM fts WHERE fts "
	    "MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?", -1, &st,
	    NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, fts, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, IX_WINDOW);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		min = sqlite3_column_int64(st, 0) + 1;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? min : -1;
}

/*
 * The hit's excerpt from snippet()'s, whose marks (IX_OPEN, IX_CLOSE)
 * become h->marks: code point offsets in the text left, a mark that
 * ends where the next starts (CJK characters found one by one, the
 * words of a phrase) made one.  0, or -1 when out of memory.
 */
static int
ix_excerpt(struct ix_hit *h, const char *snip)
{
	size_t n = strlen(snip), k = 0;
	uint32_t cp = 0, open = 0;
	char *out;

	h->nmarks = 0;
	if ((out = malloc(n + 1)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)snip[i];

		if (c == (unsigned char)IX_OPEN[0]) {
			open = cp;
		} else if (c == (unsigned char)IX_CLOSE[0]) {
			if (h->nmarks > 0 && h->marks[h->nmarks - 1][1] == open)
				h->marks[h->nmarks - 1][1] = cp;
			else if (h->nmarks < IX_MARKS_MAX) {
				h->marks[h->nmarks][0] = open;
				h->marks[h->nmarks++][1] = cp;
			}
		} else {
			out[k++] = (char)c;
			if ((c & 0xc0) != 0x80)
				cp++;
		}
	}
	out[k] = '\0';
	h->excerpt = out;
	return 0;
}

/* Runs one read (mode) for at most want rows from offset, appending
 * the hits to out[*n].  0, or -1 with err. */
static int
ix_read(char err[PAPO_ERR_LEN], struct ix *x, const struct ix_query *q,
    const char *fts, enum ix_mode mode, uint64_t offset,
    size_t want, struct ix_hit *out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t got = 0;
	int rc;

	if (ix_prepare(x, q, fts, mode, &st) == -1 ||
	    bind_named_int(st, ":limit", (sqlite3_int64)want) ||
	    bind_named_int(st, ":offset", (sqlite3_int64)offset)) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		sqlite3_finalize(st);
		return -1;
	}
	while (got < want && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);
		const char *ex = (const char *)sqlite3_column_text(st, 1);
		struct ix_hit *h = &out[*n];

		got++;
		if (id == NULL || strlen(id) != PAPO_MSGID_LEN)
			continue;
		memcpy(h->id, id, PAPO_MSGID_LEN + 1);
		h->excerpt = NULL;
		h->nmarks = 0;
		h->ts = (uint64_t)sqlite3_column_int64(st, 2);
		h->rank = sqlite3_column_double(st, 3);
		if (ex != NULL && ix_excerpt(h, ex) == -1) {
			err_set(err, "%s", "out of memory");
			sqlite3_finalize(st);
			return -1;
		}
		(*n)++;
	}
	if (got < want && rc != SQLITE_DONE) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/* A search's bound in time, for SQLite's progress handler. */
struct ix_deadline {
	struct timespec end;
	int timed;               /* end is set */
	atomic_int *stop;
	int hit;                 /* 1 past end, 2 stopped */
};

#define IX_PROGRESS_OPS 1000     /* VM steps between two looks */

static int
ix_past(void *arg)
{
	struct ix_deadline *d = arg;
	struct timespec now;

	if (d->stop != NULL && atomic_load(d->stop)) {
		d->hit = 2;
		return 1;
	}
	if (!d->timed)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > d->end.tv_sec || (now.tv_sec == d->end.tv_sec &&
	    now.tv_nsec >= d->end.tv_nsec)) {
		d->hit = 1;
		return 1;
	}
	return 0;
}

long
ix_search(char err[PAPO_ERR_LEN], struct ix *x, const struct ix_query *q,
    struct ix_hit *out, int *more, int *ranked, int *code)
{
	struct ix_deadline d;
	long n;

	memset(&d, 0, sizeof(d));
	d.stop = q->stop;
	if (q->ms > 0) {
		clock_gettime(CLOCK_MONOTONIC, &d.end);
		d.end.tv_sec += q->ms / 1000;
		d.end.tv_nsec += (long)(q->ms % 1000) * 1000000;
		if (d.end.tv_nsec >= 1000000000) {
			d.end.tv_sec++;
			d.end.tv_nsec -= 1000000000;
		}
		d.timed = 1;
	}
	if (d.timed || d.stop != NULL)
		sqlite3_progress_handler(x->db, IX_PROGRESS_OPS, ix_past, &d);
	n = ix_search_run(err, x, q, out, more, ranked, code);
	sqlite3_progress_handler(x->db, 0, NULL, NULL);
	if (n == -1 && d.hit == 1) {
		*code = 400;
		err_set(err, "the search took longer than %u ms and was "
		    "stopped: search for fewer or longer words, or add a "
		    "filter (from, since, before)", q->ms);
	} else if (n == -1 && d.hit == 2) {
		*code = 503;
		err_set(err, "%s", "the search was stopped (the room is "
		    "closing)");
	}
	return n;
}

static long
ix_search_run(char err[PAPO_ERR_LEN], struct ix *x, const struct ix_query *q,
    struct ix_hit *out, int *more, int *ranked, int *code)
{
	struct ix_hit *v = NULL;
	char *fts = NULL;
	sqlite3_int64 min = 0;
	long few = IX_FEW_MAX + 1;
	enum ix_mode mode = IX_ALL;
	size_t n = 0, want;

	*more = 0;
	*ranked = 0;
	*code = 400;
	if (q->limit == 0 || q->limit > IX_LIMIT_MAX + IX_RANKED_MAX) {
		err_set(err, "limit must be from 1 to %d", IX_LIMIT_MAX);
		return -1;
	}
	if (q->offset > INT32_MAX) {
		err_set(err, "%s", "the cursor is not one search gave");
		return -1;
	}
	if (q->text != NULL && q->text[0] != '\0' &&
	    ix_fts_query(err, q->text, &fts) == -1)
		return -1;
	*code = 500;
	/* One more than asked: whether more are left. */
	want = q->limit + 1;
	if ((v = calloc(want, sizeof(*v))) == NULL) {
		err_set(err, "%s", "out of memory");
		goto fail;
	}
	/* By time, the page is chosen before excerpts are made: neither
	 * the window nor the filters' count change how it is read. */
	if (fts != NULL && !q->newest && (min = ix_window(x, fts)) != 0)
		mode = IX_OLD;
	if (min != -1 && fts != NULL && !q->newest && ix_filtered(q) &&
	    (few = ix_few(x, q)) >= 0 && few <= IX_FEW_MAX)
		mode = mode == IX_OLD ? IX_FEW_OLD : IX_FEW;
	if (min == -1 || few == -1) {
		err_set(err, "search index: %s", sqlite3_errmsg(x->db));
		goto fail;
	}
	if (few != 0 && ix_read(err, x, q, fts, mode, q->offset, want, v,
	    &n) == -1)
		goto fail;
	*ranked = fts != NULL && !q->newest && mode != IX_OLD &&
	    mode != IX_FEW_OLD;
	if (n > q->limit) {
		*more = 1;
		ix_hits_free(v + q->limit, n - q->limit);
		n = q->limit;
	}
	memcpy(out, v, n * sizeof(*v));
	free(v);
	free(fts);
	*code = 0;
	return (long)n;
fail:
	if (v != NULL)
		ix_hits_free(v, n);
	free(v);
	free(fts);
	return -1;
}
