/*
 * tokenize.c: the search index's tokenizer, "papo" (tokenize.h):
 * SQLite's unicode61 (case and accents folded), except that a
 * character of a script written without spaces between words (Chinese,
 * Japanese, Korean syllables, Thai) is a token of its own.  unicode61
 * alone takes a whole run of such characters for one word, so "東京"
 * was found only where it stood between spaces or punctuation; here
 * "東京" is the phrase 東 京, found inside any run.  The same tokenizer
 * reads documents and queries, so a query's CJK word becomes a phrase
 * of its characters by itself.  Node thread (or the thread that owns
 * the connection).
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "node/store/tokenize.h"

struct tok {
	fts5_tokenizer inner;    /* unicode61's methods */
	Fts5Tokenizer *word;     /* unicode61 for the document */
	Fts5Tokenizer *part;     /* and another for the runs between CJK
	                          * characters, called from word's callback */
};

/* One xTokenize call's state. */
struct tok_call {
	struct tok *t;
	void *ctx;
	int (*emit)(void *, int, const char *, int, int, int);
	const char *text;
	int base;                /* offset of the part being tokenized */
	int flags;
};

/* Whether code point c is of a script written without spaces. */
static int
is_unspaced(unsigned c)
{
	return (c >= 0x3040 && c <= 0x30ff) ||      /* kana */
	    (c >= 0x31f0 && c <= 0x31ff) ||
	    (c >= 0x3400 && c <= 0x4dbf) ||         /* Han */
	    (c >= 0x4e00 && c <= 0x9fff) ||
	    (c >= 0xf900 && c <= 0xfaff) ||
	    (c >= 0x20000 && c <= 0x3ffff) ||
	    (c >= 0xac00 && c <= 0xd7af) ||         /* Hangul syllables */
	    (c >= 0xff66 && c <= 0xff9f) ||         /* halfwidth kana */
	    (c >= 0x0e00 && c <= 0x0e7f);           /* Thai */
}

/* The code point at s (n bytes left; valid UTF-8 is not assumed) and
 * its length in *len (1 for a byte that starts no sequence). */
static unsigned
utf8_at(const unsigned char *s, int n, int *len)
{
	unsigned c = s[0];
	int k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;

	if (k > n) {
		*len = 1;
		return c;
	}
	*len = k;
	if (k == 1)
		return c;
	c &= 0x3f >> (k - 1);
	for (int i = 1; i < k; i++)
		c = c << 6 | (s[i] & 0x3f);
	return c;
}

/* A token of a run between CJK characters: its offsets moved back to
 * the document's. */
static int
tok_part(void *arg, int tflags, const char *token, int n, int start, int end)
{
	struct tok_call *c = arg;

	return c->emit(c->ctx, tflags, token, n, c->base + start,
	    c->base + end);
}

/* unicode61's token at text[start, end): passed on as it is, or, when
 * it holds a CJK character, cut into those characters and the runs
 * between them (tokenized again, for their folding). */
static int
tok_word(void *arg, int tflags, const char *token, int n, int start, int end)
{
	struct tok_call *c = arg;
	const unsigned char *s = (const unsigned char *)c->text;
	int i, run = start, len, rc;
	unsigned cp;

	for (i = start; i < end; i += len)
		if (is_unspaced(utf8_at(s + i, end - i, &len)))
			break;
	if (i == end)
		return c->emit(c->ctx, tflags, token, n, start, end);
	for (i = start; i < end; i += len) {
		cp = utf8_at(s + i, end - i, &len);
		if (!is_unspaced(cp))
			continue;
		if (run < i) {
			c->base = run;
			if ((rc = c->t->inner.xTokenize(c->t->part, c,
			    c->flags, c->text + run, i - run, tok_part)) !=
			    SQLITE_OK)
				return rc;
		}
		if ((rc = c->emit(c->ctx, 0, c->text + i, len, i, i + len)) !=
		    SQLITE_OK)
			return rc;
		run = i + len;
	}
	if (run < end) {
		c->base = run;
		return c->t->inner.xTokenize(c->t->part, c, c->flags,
		    c->text + run, end - run, tok_part);
	}
	return SQLITE_OK;
}

static int
tok_tokenize(Fts5Tokenizer *self, void *ctx, int flags, const char *text,
    int n, int (*emit)(void *, int, const char *, int, int, int))
{
	struct tok *t = (struct tok *)(void *)self;
	struct tok_call c = { t, ctx, emit, text, 0, flags };

	return t->inner.xTokenize(t->word, &c, flags, text, n, tok_word);
}

static void
tok_delete(Fts5Tokenizer *self)
{
	struct tok *t = (struct tok *)(void *)self;

	if (t == NULL)
		return;
	if (t->word != NULL)
		t->inner.xDelete(t->word);
	if (t->part != NULL)
		t->inner.xDelete(t->part);
	sqlite3_free(t);
}

/* The arguments (remove_diacritics 2, ...) are unicode61's. */
static int
tok_create(void *arg, const char **argv, int argc, Fts5Tokenizer **out)
{
	fts5_api *api = arg;
	struct tok *t;
	void *ud;
	int rc;

	*out = NULL;
	if ((t = sqlite3_malloc(sizeof(*t))) == NULL)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	if ((rc = api->xFindTokenizer(api, "unicode61", &ud, &t->inner)) !=
	    SQLITE_OK ||
	    (rc = t->inner.xCreate(ud, argv, argc, &t->word)) != SQLITE_OK ||
	    (rc = t->inner.xCreate(ud, argv, argc, &t->part)) != SQLITE_OK) {
		tok_delete((Fts5Tokenizer *)(void *)t);
		return rc;
	}
	*out = (Fts5Tokenizer *)(void *)t;
	return SQLITE_OK;
}

int
tokenize_register(sqlite3 *db)
{
	static fts5_tokenizer methods = { tok_create, tok_delete,
	    tok_tokenize };
	fts5_api *api = NULL;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) !=
	    SQLITE_OK)
		return -1;
	sqlite3_bind_pointer(st, 1, &api, "fts5_api_ptr", NULL);
	sqlite3_step(st);
	sqlite3_finalize(st);
	if (api == NULL || api->iVersion < 2)
		return -1;
	rc = api->xCreateTokenizer(api, TOKENIZE_NAME, api, &methods, NULL);
	return rc == SQLITE_OK ? 0 : -1;
}
