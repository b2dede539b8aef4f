/*
 * test_attach.c: node/wire/attach.c.  Bodies that name files round-trip
 * with and without text; bodies whose end only looks like a trailer stay
 * text, as an older daemon would show them; fields that break a rule are
 * refused by the writer; names and media types are made as a person would
 * expect from paths and file heads they really meet.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "lib/b32.h"
#include "node/wire/attach.h"

#define REF_SAMPLE "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrsq"

static void
sample(struct attach *a, unsigned i)
{
	uint8_t root[PAPO_KEY_LEN];

	memset(a, 0, sizeof(*a));
	for (size_t k = 0; k < PAPO_KEY_LEN; k++) {
		root[k] = (uint8_t)(i * 31 + k * 7);
		a->key[k] = (uint8_t)(i * 17 + k * 13 + 1);
	}
	b32_encode(root, PAPO_KEY_LEN, a->ref);
	a->size = (uint64_t)i * 1000003;
	snprintf(a->name, sizeof(a->name), "report (%u) v2.txt", i);
	snprintf(a->type, sizeof(a->type), i % 2 ? "text/plain" :
	    "application/vnd.papo+json");
}

static int
same(const struct attach *a, const struct attach *b)
{
	return strcmp(a->ref, b->ref) == 0 && strcmp(a->name, b->name) == 0 &&
	    strcmp(a->type, b->type) == 0 && a->size == b->size &&
	    memcmp(a->key, b->key, PAPO_KEY_LEN) == 0;
}

/* format then parse: the same text and files come back. */
static void
round_trip(const char *text, size_t nfiles)
{
	struct attach v[ATTACH_MAX], got[ATTACH_MAX];
	struct buf b;
	size_t tl = 99, n, tlen = strlen(text);

	for (size_t i = 0; i < nfiles; i++)
		sample(&v[i], (unsigned)i);
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(attach_format(&b, text, tlen, v, nfiles), 0);
	n = attach_parse((const char *)b.p, b.len, got, ATTACH_MAX, &tl);
	CHECK_EQ_INT(n, nfiles);
	CHECK_EQ_INT(tl, tlen);
	CHECK(b.len >= tlen && (tlen == 0 || memcmp(b.p, text, tlen) == 0));
	for (size_t i = 0; i < n && i < nfiles; i++)
		CHECK(same(&v[i], &got[i]));
	/* Text, one empty line, then the lines: what a person reads. */
	if (nfiles > 0 && tlen > 0)
		CHECK(memcmp(b.p + tlen, "\n\n" ATTACH_MARK, 7) == 0);
	if (nfiles > 0)
		CHECK(b.p[b.len - 1] != '\n');
	buf_free(&b);
}

static void
test_round_trips(void)
{
	const char *texts[] = { "", "hello", "see the patch\n",
	    "two trailing\n\n", "line one\nline two", "\n" };

	for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		round_trip(texts[t], 0);
		round_trip(texts[t], 1);
		round_trip(texts[t], 16);
	}
}

static void
test_exact_line(void)
{
	struct attach a, got;
	struct buf b;
	char want[512], key[ATTACH_REF_LEN + 1];
	size_t tl;

	sample(&a, 3);
	b32_encode(a.key, PAPO_KEY_LEN, key);
	snprintf(want, sizeof(want), "hi\n\n\xf0\x9f\x93\x8e report (3) v2.txt "
	    "(3000009 bytes, text/plain) papo-file:%s:%s", a.ref, key);
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(attach_format(&b, "hi", 2, &a, 1), 0);
	CHECK(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0);
	buf_free(&b);

	/* A body an agent wrote by hand parses the same. */
	CHECK_EQ_INT(attach_parse(want, strlen(want), &got, 1, &tl), 1);
	CHECK_EQ_INT(tl, 2);
	CHECK(same(&a, &got));
	/* Room for fewer: the first ones, the text the same. */
	CHECK_EQ_INT(attach_parse(want, strlen(want), NULL, 0, &tl), 0);
	CHECK_EQ_INT(tl, 2);
}

/* One line built from its parts, for the near misses. */
static void
line(char *out, size_t cap, const char *name, const char *size,
    const char *type, const char *ref, const char *key)
{
	snprintf(out, cap, "text\n\n" ATTACH_MARK "%s (%s bytes, %s) "
	    ATTACH_SCHEME "%s:%s", name, size, type, ref, key);
}

static void
near_miss(const char *what, const char *name, const char *size,
    const char *type, const char *ref, const char *key)
{
	char body[1024];
	struct attach got;
	size_t tl = 0;

	line(body, sizeof(body), name, size, type, ref, key);
	if (attach_parse(body, strlen(body), &got, 1, &tl) != 0 ||
	    tl != strlen(body))
		fprintf(stderr, "near miss taken for a file: %s\n", what);
	CHECK_EQ_INT(attach_parse(body, strlen(body), &got, 1, &tl), 0);
	CHECK_EQ_INT(tl, strlen(body));
}

static void
test_near_misses(void)
{
	char body[1024], up[ATTACH_REF_LEN + 1], k51[ATTACH_REF_LEN];
	struct attach got;
	size_t tl;
	const char *key = REF_SAMPLE;

	/* The control: the parts below, unchanged, make a file. */
	line(body, sizeof(body), "a.txt", "12", "text/plain", REF_SAMPLE, key);
	CHECK_EQ_INT(attach_parse(body, strlen(body), &got, 1, &tl), 1);
	CHECK_EQ_INT(tl, 4);
	CHECK_EQ_INT(got.size, 12);
	CHECK_EQ_STR(got.name, "a.txt");
	line(body, sizeof(body), "a.txt", "4294967296", "text/plain",
	    REF_SAMPLE, key);
	CHECK_EQ_INT(attach_parse(body, strlen(body), &got, 1, &tl), 1);
	line(body, sizeof(body), "a.txt", "0", "text/plain", REF_SAMPLE, key);
	CHECK_EQ_INT(attach_parse(body, strlen(body), &got, 1, &tl), 1);

	memcpy(up, REF_SAMPLE, sizeof(up));
	up[0] = 'A';
	memcpy(k51, REF_SAMPLE, ATTACH_REF_LEN - 1);
	k51[ATTACH_REF_LEN - 1] = '\0';

	near_miss("size 01", "a.txt", "01", "text/plain", REF_SAMPLE, key);
	near_miss("size past max", "a.txt", "4294967297", "text/plain",
	    REF_SAMPLE, key);
	near_miss("size of 21 digits", "a.txt", "100000000000000000000",
	    "text/plain", REF_SAMPLE, key);
	near_miss("size +1", "a.txt", "+1", "text/plain", REF_SAMPLE, key);
	near_miss("size empty", "a.txt", "", "text/plain", REF_SAMPLE, key);
	near_miss("51-char key", "a.txt", "12", "text/plain", REF_SAMPLE, k51);
	near_miss("51-char ref", "a.txt", "12", "text/plain", k51, key);
	near_miss("uppercase key", "a.txt", "12", "text/plain", REF_SAMPLE,
	    up);
	near_miss("uppercase ref", "a.txt", "12", "text/plain", up, key);
	/* The last character carries unused bits: not zero, not base32 of
	 * 32 bytes in its one spelling. */
	near_miss("key with bits past 32 bytes", "a.txt", "12", "text/plain",
	    REF_SAMPLE, "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrsb");
	near_miss("type without /", "a.txt", "12", "textplain", REF_SAMPLE,
	    key);
	near_miss("type uppercase", "a.txt", "12", "Text/plain", REF_SAMPLE,
	    key);
	near_miss("type two /", "a.txt", "12", "text/plain/x", REF_SAMPLE,
	    key);
	near_miss("type empty subtype", "a.txt", "12", "text/", REF_SAMPLE,
	    key);
	near_miss("name with /", "../a.txt", "12", "text/plain", REF_SAMPLE,
	    key);
	near_miss("name with \\", "a\\b", "12", "text/plain", REF_SAMPLE,
	    key);
	near_miss("name with tab", "a\tb", "12", "text/plain", REF_SAMPLE,
	    key);
	near_miss("name with DEL", "a\x7f", "12", "text/plain", REF_SAMPLE,
	    key);
	near_miss("name with C1", "a\xc2\x85", "12", "text/plain",
	    REF_SAMPLE, key);
	near_miss("name invalid UTF-8", "a\xff", "12", "text/plain",
	    REF_SAMPLE, key);
	near_miss("name ..", "..", "12", "text/plain", REF_SAMPLE, key);
	near_miss("name .", ".", "12", "text/plain", REF_SAMPLE, key);
	near_miss("name empty", "", "12", "text/plain", REF_SAMPLE, key);

	/* Another scheme, a missing mark, a newline after the line. */
	snprintf(body, sizeof(body), ATTACH_MARK "a (1 bytes, text/plain) "
	    "http-file:%s:%s", REF_SAMPLE, key);
	CHECK_EQ_INT(attach_parse(body, strlen(body), &got, 1, &tl), 0);
	snprintf(body, sizeof(body), "a (1 bytes, text/plain) "
	    ATTACH_SCHEME "%s:%s", REF_SAMPLE, key);
	CHECK_EQ_INT(attach_parse(body, strlen(body), &got, 1, &tl), 0);
	snprintf(body, sizeof(body), ATTACH_MARK "a (1 bytes, text/plain) "
	    ATTACH_SCHEME "%s:%s\n", REF_SAMPLE, key);
	CHECK_EQ_INT(attach_parse(body, strlen(body), &got, 1, &tl), 0);
	CHECK_EQ_INT(tl, strlen(body));
}

/* A near miss just before real lines ends the run: it is text. */
static void
test_miss_then_lines(void)
{
	struct attach v[2], got[ATTACH_MAX];
	struct buf b;
	char text[512];
	size_t tl;

	sample(&v[0], 1);
	sample(&v[1], 2);
	line(text, sizeof(text), "a.txt", "01", "text/plain", REF_SAMPLE,
	    REF_SAMPLE);
	buf_init(&b, PAPO_BODY_MAX);
	/* The miss right above the lines, with a single newline. */
	CHECK_EQ_INT(buf_add(&b, text, strlen(text)), 0);
	CHECK_EQ_INT(buf_add(&b, "\n", 1), 0);
	CHECK_EQ_INT(attach_format(&b, "", 0, v, 2), 0);
	CHECK_EQ_INT(attach_parse((const char *)b.p, b.len, got, ATTACH_MAX,
	    &tl), 2);
	CHECK_EQ_INT(tl, strlen(text));
	CHECK(same(&got[0], &v[0]) && same(&got[1], &v[1]));
	buf_free(&b);
}

/* A trailer line in the middle of the text, text after it: all text. */
static void
test_line_in_middle(void)
{
	struct attach a, got;
	struct buf b;
	size_t tl;

	sample(&a, 5);
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(attach_format(&b, "look:", 5, &a, 1), 0);
	CHECK_EQ_INT(buf_add(&b, "\nwhat do you think?", 19), 0);
	CHECK_EQ_INT(attach_parse((const char *)b.p, b.len, &got, 1, &tl), 0);
	CHECK_EQ_INT(tl, b.len);
	buf_free(&b);
}

/* 17 lines: the last 16 are files, the first is text. */
static void
test_seventeen(void)
{
	struct attach v[17], got[ATTACH_MAX];
	struct buf b, first;
	size_t tl;

	for (unsigned i = 0; i < 17; i++)
		sample(&v[i], i);
	buf_init(&b, PAPO_BODY_MAX);
	buf_init(&first, PAPO_BODY_MAX);
	CHECK_EQ_INT(attach_format(&first, "", 0, v, 1), 0);
	/* Made by hand: the writer refuses 17. */
	CHECK_EQ_INT(attach_format(&b, "", 0, v, 1), 0);
	CHECK_EQ_INT(buf_add(&b, "\n", 1), 0);
	CHECK_EQ_INT(attach_format(&b, "", 0, v + 1, 16), 0);
	CHECK_EQ_INT(attach_parse((const char *)b.p, b.len, got, ATTACH_MAX,
	    &tl), 16);
	CHECK_EQ_INT(tl, first.len);
	for (size_t i = 0; i < 16; i++)
		CHECK(same(&got[i], &v[i + 1]));
	/* With only room for 4: the first 4 of the 16. */
	CHECK_EQ_INT(attach_parse((const char *)b.p, b.len, got, 4, &tl), 4);
	CHECK(same(&got[0], &v[1]) && same(&got[3], &v[4]));
	CHECK_EQ_INT(tl, first.len);
	buf_free(&b);
	buf_free(&first);
}

static void
refused(const char *what, const struct attach *a)
{
	struct attach ok;
	struct buf b;
	char err[PAPO_ERR_LEN] = "";

	sample(&ok, 9);
	CHECK_EQ_INT(attach_check(err, a), -1);
	if (err[0] == '\0')
		fprintf(stderr, "no reason given: %s\n", what);
	CHECK(err[0] != '\0');
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(buf_add(&b, "before", 6), 0);
	struct attach two[2] = { ok, *a };
	CHECK_EQ_INT(attach_format(&b, "text", 4, two, 2), -1);
	CHECK(b.len == 6 && memcmp(b.p, "before", 6) == 0 && !b.toobig);
	buf_free(&b);
}

static void
test_format_refuses(void)
{
	struct attach a, v[ATTACH_MAX + 1];
	struct buf b;
	char err[PAPO_ERR_LEN];

	sample(&a, 1);
	CHECK_EQ_INT(attach_check(err, &a), 0);

	sample(&a, 1); a.ref[0] = 'A';
	refused("uppercase ref", &a);
	sample(&a, 1); a.ref[51] = '\0';
	refused("short ref", &a);
	sample(&a, 1); a.ref[10] = '1';
	refused("ref with a 1", &a);
	sample(&a, 1); a.size = ATTACH_SIZE_MAX + 1;
	refused("size over max", &a);
	sample(&a, 1); strcpy(a.name, "");
	refused("empty name", &a);
	sample(&a, 1); strcpy(a.name, "..");
	refused("name ..", &a);
	sample(&a, 1); strcpy(a.name, "a/b");
	refused("name with /", &a);
	sample(&a, 1); strcpy(a.name, "a\\b");
	refused("name with \\", &a);
	sample(&a, 1); strcpy(a.name, "a\nb");
	refused("name with newline", &a);
	sample(&a, 1); strcpy(a.name, "\xe2\x82");
	refused("name cut UTF-8", &a);
	sample(&a, 1); memset(a.name, 'x', sizeof(a.name));
	refused("name without end", &a);
	sample(&a, 1); strcpy(a.type, "text");
	refused("type without /", &a);
	sample(&a, 1); strcpy(a.type, "text/plain; charset=utf-8");
	refused("type with parameters", &a);
	sample(&a, 1); strcpy(a.type, "/plain");
	refused("type empty", &a);

	/* Limits reached exactly are fine. */
	sample(&a, 1); memset(a.name, 'x', ATTACH_NAME_MAX);
	a.name[ATTACH_NAME_MAX] = '\0';
	a.size = ATTACH_SIZE_MAX;
	memset(a.type, 'a', ATTACH_TYPE_MAX);
	a.type[ATTACH_TYPE_MAX] = '\0';
	a.type[3] = '/';
	CHECK_EQ_INT(attach_check(err, &a), 0);
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(attach_format(&b, "", 0, &a, 1), 0);
	CHECK(b.len <= ATTACH_LINE_MAX);
	{
		struct attach got;
		size_t tl;

		CHECK_EQ_INT(attach_parse((const char *)b.p, b.len, &got, 1,
		    &tl), 1);
		CHECK(same(&a, &got));
	}
	buf_free(&b);

	for (unsigned i = 0; i <= ATTACH_MAX; i++)
		sample(&v[i], i);
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(buf_add(&b, "x", 1), 0);
	CHECK_EQ_INT(attach_format(&b, "t", 1, v, ATTACH_MAX + 1), -1);
	CHECK_EQ_INT(b.len, 1);
	buf_free(&b);

	/* Past the buffer's limit: refused, the buffer as it was and
	 * still usable. */
	buf_init(&b, 100);
	CHECK_EQ_INT(buf_add(&b, "x", 1), 0);
	CHECK_EQ_INT(attach_format(&b, "t", 1, v, 1), -1);
	CHECK_EQ_INT(b.len, 1);
	CHECK_EQ_INT(b.toobig, 0);
	CHECK_EQ_INT(buf_add(&b, "y", 1), 0);
	buf_free(&b);
}

static void
name_is(const char *path, const char *want)
{
	char out[ATTACH_NAME_MAX + 1];

	attach_name(out, path);
	CHECK_EQ_STR(out, want);
}

static void
test_names(void)
{
	char out[ATTACH_NAME_MAX + 1], path[400];
	struct attach a;
	char err[PAPO_ERR_LEN];

	name_is("report.pdf", "report.pdf");
	name_is("/home/ann/src/patch.diff", "patch.diff");
	name_is("build/", "build");
	name_is("C:\\Users\\ann\\log.txt", "log.txt");
	name_is("../../etc/passwd", "passwd");
	name_is("a\tb\nc\x7f", "a_b_c_");
	name_is("caf\xc3\xa9 \xf0\x9f\x93\x8e.md",
	    "caf\xc3\xa9 \xf0\x9f\x93\x8e.md");
	name_is("x\xc2\x85y", "x_y");
	name_is("bad\xff\xfe.bin", "bad??.bin");
	name_is("cut\xe2\x82", "cut??");
	name_is("..", "file");
	name_is(".", "file");
	name_is("", "file");
	name_is("/", "file");
	name_is("dir/..", "file");
	name_is(".hidden", ".hidden");

	/* 300 bytes of two-byte characters: cut before the one that would
	 * pass 255, never in its middle. */
	for (size_t i = 0; i < 150; i++)
		memcpy(path + 2 * i, "\xc3\xa9", 2);
	path[300] = '\0';
	attach_name(out, path);
	CHECK_EQ_INT(strlen(out), 254);
	CHECK(memcmp(out, path, 254) == 0);
	/* Three-byte characters after one ASCII byte: 1 + 3 * 84 = 253. */
	path[0] = 'a';
	for (size_t i = 0; i < 100; i++)
		memcpy(path + 1 + 3 * i, "\xe2\x82\xac", 3);
	path[301] = '\0';
	attach_name(out, path);
	CHECK_EQ_INT(strlen(out), 253);
	memset(path, 'z', 300);
	path[300] = '\0';
	attach_name(out, path);
	CHECK_EQ_INT(strlen(out), 255);

	/* Whatever comes in, what comes out is a name the writer takes. */
	const char *odd[] = { "a/b/", "\x01", "\xc0\xaf", "..\\..", "x y",
	    "\xed\xa0\x80", "dir\\", "./.", path };
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		sample(&a, 1);
		attach_name(a.name, odd[i]);
		CHECK_EQ_INT(attach_check(err, &a), 0);
	}
}

/*
 * Format characters (Unicode's Cf) are refused in names as control
 * characters are (issue 37): U+202E shows "photo\u202egnp.exe" as
 * "photoexe.png".  The maker replaces them; a line naming one is text.
 */
static void
test_format_chars(void)
{
	static const char *const cf[] = { "\xe2\x80\xae", "\xe2\x80\x8b",
	    "\xe2\x81\xa6", "\xc2\xad", "\xef\xbb\xbf",
	    "\xf3\xa0\x80\x81", "\xd8\x9c" };
	char path[64], err[PAPO_ERR_LEN];
	struct attach a, got[1];
	struct buf b;
	size_t tl;

	name_is("photo\xe2\x80\xaegnp.exe", "photo_gnp.exe");
	name_is("a\xe2\x80\x8b" "b\xef\xbb\xbf", "a_b_");
	/* Letters beside them stay: é, €, a CJK one, an emoji. */
	name_is("\xc3\xa9\xe2\x82\xac\xe4\xb8\xad\xf0\x9f\x98\x80",
	    "\xc3\xa9\xe2\x82\xac\xe4\xb8\xad\xf0\x9f\x98\x80");
	for (size_t i = 0; i < sizeof(cf) / sizeof(cf[0]); i++) {
		sample(&a, 3);
		snprintf(a.name, sizeof(a.name), "x%sy.png", cf[i]);
		CHECK_EQ_INT(attach_check(err, &a), -1);
		snprintf(path, sizeof(path), "x%sy.png", cf[i]);
		attach_name(a.name, path);
		CHECK_EQ_STR(a.name, "x_y.png");
		CHECK_EQ_INT(attach_check(err, &a), 0);
	}
	/* A line written by hand with U+202E in its name is text. */
	sample(&a, 4);
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(attach_format(&b, "t", 1, &a, 1), 0);
	CHECK_EQ_INT(attach_parse((const char *)b.p, b.len, got, 1, &tl), 1);
	buf_free(&b);
	buf_init(&b, PAPO_BODY_MAX);
	snprintf(a.name, sizeof(a.name), "exe\xe2\x80\xae.png");
	CHECK(buf_add(&b, "t\n\n" ATTACH_MARK, 3 + sizeof(ATTACH_MARK) - 1)
	    == 0);
	CHECK(buf_add(&b, a.name, strlen(a.name)) == 0);
	{
		char tail[200], key[ATTACH_REF_LEN + 1];

		b32_encode(a.key, PAPO_KEY_LEN, key);
		snprintf(tail, sizeof(tail), " (%llu bytes, %s) papo-file:%s:%s",
		    (unsigned long long)a.size, a.type, a.ref, key);
		CHECK(buf_add(&b, tail, strlen(tail)) == 0);
	}
	CHECK_EQ_INT(attach_parse((const char *)b.p, b.len, got, 1, &tl), 0);
	CHECK_EQ_INT(tl, b.len);
	buf_free(&b);
}

static void
type_is(const char *name, const char *head, size_t hlen, const char *want)
{
	char out[ATTACH_TYPE_MAX + 1];

	attach_type(out, name, (const uint8_t *)head, hlen);
	CHECK_EQ_STR(out, want);
}

static void
test_types(void)
{
	/* Signatures win over the name. */
	type_is("x.txt", "\x89PNG\r\n\x1a\n\0\0", 10, "image/png");
	type_is("x", "\xff\xd8\xff\xe0", 4, "image/jpeg");
	type_is("x", "GIF89a..", 8, "image/gif");
	type_is("x", "GIF87a", 6, "image/gif");
	type_is("x", "RIFF\x10\0\0\0WEBPVP8 ", 16, "image/webp");
	type_is("x.json", "%PDF-1.7\n", 9, "application/pdf");
	type_is("x", "\x1f\x8b\x08\0", 4, "application/gzip");
	type_is("x", "PK\x03\x04\x14\0", 6, "application/zip");
	/* A head too short for its signature is not it. */
	type_is("x", "\x89PNG", 4, "application/octet-stream");
	type_is("x", "RIFF\x10\0\0\0WAVE", 12, "application/octet-stream");

	/* Extensions, any case, the last one counting. */
	type_is("a.txt", NULL, 0, "text/plain");
	type_is("README.MD", NULL, 0, "text/markdown");
	type_is("a.json", NULL, 0, "application/json");
	type_is("a.c", NULL, 0, "text/x-c");
	type_is("a.h", NULL, 0, "text/x-c");
	type_is("a.py", NULL, 0, "text/x-python");
	type_is("a.js", NULL, 0, "text/javascript");
	type_is("a.ts", NULL, 0, "text/x-typescript");
	type_is("a.html", NULL, 0, "text/html");
	type_is("a.css", NULL, 0, "text/css");
	type_is("a.csv", NULL, 0, "text/csv");
	type_is("a.log", NULL, 0, "text/plain");
	type_is("a.diff", NULL, 0, "text/x-diff");
	type_is("a.patch", NULL, 0, "text/x-diff");
	type_is("a.png", NULL, 0, "image/png");
	type_is("a.JPG", NULL, 0, "image/jpeg");
	type_is("a.gif", NULL, 0, "image/gif");
	type_is("a.webp", NULL, 0, "image/webp");
	type_is("a.svg", NULL, 0, "image/svg+xml");
	type_is("a.pdf", NULL, 0, "application/pdf");
	type_is("a.zip", NULL, 0, "application/zip");
	type_is("src.tar.gz", NULL, 0, "application/gzip");
	type_is("a.tar", NULL, 0, "application/x-tar");

	/* No signature, no known extension: the head decides. */
	type_is("Makefile", "all:\n\tcc x.c\n", 13, "text/plain");
	type_is("notes", "caf\xc3\xa9", 5, "text/plain");
	type_is("notes", "caf\xc3", 4, "text/plain");          /* cut */
	type_is("notes", "x\xe2\x82", 3, "text/plain");        /* cut */
	type_is("notes", "x\xf0\x9f\x93", 4, "text/plain");    /* cut */
	type_is("notes", "x\xe2\x82z", 4, "application/octet-stream");
	type_is("notes", "\xc3\xa9\xff", 3, "application/octet-stream");
	type_is("data", "ab\0cd", 5, "application/octet-stream");
	type_is("data", "\x80", 1, "application/octet-stream");
	type_is("data.bin", NULL, 0, "application/octet-stream");
	type_is("", NULL, 0, "application/octet-stream");
	type_is("a.verylongextension", "text", 4, "text/plain");
}

/* A body of PAPO_BODY_MAX with 16 lines at its end, and one of short
 * lines that each almost parse: parsed quickly (linear, not quadratic). */
static void
test_linear(void)
{
	struct attach v[ATTACH_MAX], got[ATTACH_MAX];
	struct buf b;
	char *text;
	size_t tl, tlen;
	clock_t t0;

	for (unsigned i = 0; i < ATTACH_MAX; i++)
		sample(&v[i], i);
	buf_init(&b, PAPO_BODY_MAX);
	CHECK_EQ_INT(attach_format(&b, "", 0, v, ATTACH_MAX), 0);
	tlen = PAPO_BODY_MAX - b.len - 2;
	text = malloc(tlen);
	CHECK(text != NULL);
	if (text == NULL)
		return;
	memset(text, '\n', tlen);
	buf_reset(&b);
	CHECK_EQ_INT(attach_format(&b, text, tlen, v, ATTACH_MAX), 0);
	CHECK_EQ_INT(b.len, PAPO_BODY_MAX);
	t0 = clock();
	for (int r = 0; r < 200; r++)
		CHECK_EQ_INT(attach_parse((const char *)b.p, b.len, got,
		    ATTACH_MAX, &tl), ATTACH_MAX);
	CHECK_EQ_INT(tl, tlen);
	/* No newline at all: one long line, looked at once. */
	memset(text, 'x', tlen);
	for (int r = 0; r < 200; r++)
		CHECK_EQ_INT(attach_parse(text, tlen, got, ATTACH_MAX, &tl), 0);
	/* 200 x 2 parses of 48 KiB take well under a second when linear;
	 * a quadratic parser takes minutes. */
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
	free(text);
	buf_free(&b);
}

int
main(void)
{
	test_round_trips();
	test_exact_line();
	test_near_misses();
	test_miss_then_lines();
	test_line_in_middle();
	test_seventeen();
	test_format_refuses();
	test_names();
	test_format_chars();
	test_types();
	test_linear();
	return check_exit();
}
