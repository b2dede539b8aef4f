/*
 * attach.c: the lines at the end of a message's body that name its files
 * (docs/PROTOCOL.md, "Files between members"), their parser and their
 * writer, and the names and media types a file is shown by.  Pure: no
 * I/O, no clock, no allocation but the caller's buffer, so any thread may
 * call it and it is fuzzed (tests/fuzz/fuzz_attach.c).
 *
 * The body comes from another member: the parser trusts none of it.  It
 * reads lines backwards from the end and stops at the first that is not
 * a trailer line, so its work is linear in the body's length whatever
 * the body holds, and a line that is almost a trailer line stays text.
 */
#include <stdio.h>
#include <string.h>

#include "lib/b32.h"
#include "lib/err.h"
#include "lib/utf8.h"
#include "node/wire/attach.h"

#define MARK_LEN (sizeof(ATTACH_MARK) - 1)
#define SCHEME_LEN (sizeof(ATTACH_SCHEME) - 1)
#define BYTES_SEP " bytes, "
#define BYTES_SEP_LEN (sizeof(BYTES_SEP) - 1)
/* What ends every line: ") papo-file:REF:KEY". */
#define TAIL_LEN (2 + SCHEME_LEN + 2 * ATTACH_REF_LEN + 1)

static int
type_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("!#$&^_.+-", c) != NULL);
}

/* A media type's rules on s (n bytes): one '/', both sides not empty,
 * only the allowed characters. */
static int
type_ok(const char *s, size_t n)
{
	size_t slash = 0, nslash = 0;

	if (n < 3 || n > ATTACH_TYPE_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/') {
			slash = i;
			nslash++;
		} else if (!type_char(s[i]))
			return 0;
	}
	return nslash == 1 && slash > 0 && slash < n - 1;
}

static int
name_ok(const char *s, size_t n)
{
	if (n == 0 || n > ATTACH_NAME_MAX)
		return 0;
	if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	if (memchr(s, '/', n) != NULL || memchr(s, '\\', n) != NULL)
		return 0;
	return utf8_plain(s, n);
}

/* 32 bytes in ATTACH_REF_LEN lowercase base32 characters at s, the one
 * spelling of them (b32_decode alone takes upper case too). */
static int
key_decode(const char *s, uint8_t out[PAPO_KEY_LEN])
{
	size_t bad;

	for (size_t i = 0; i < ATTACH_REF_LEN; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			return -1;
	if (b32_decode(s, ATTACH_REF_LEN, out, PAPO_KEY_LEN, &bad) !=
	    PAPO_KEY_LEN)
		return -1;
	return 0;
}

/* A size in decimal: digits only, no leading zero, at most
 * ATTACH_SIZE_MAX. */
static int
size_decode(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (n == 0 || n > 20 || (s[0] == '0' && n > 1))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(s[i] - '0');
		if (x > ATTACH_SIZE_MAX)
			return -1;
	}
	*v = x;
	return 0;
}

/*
 * One trailer line (s, n bytes, no newline) into *a, or -1.  Read from
 * both ends: the mark starts it and ") papo-file:REF:KEY" ends it; TYPE
 * holds no space, so the " bytes, " before it is the last one, and the
 * name, which may hold anything printable, is what is left.
 */
static int
line_parse(const char *s, size_t n, struct attach *a)
{
	const char *t, *end;
	uint8_t root[PAPO_KEY_LEN];
	size_t tlen, dlen, nlen;

	if (n < MARK_LEN + 1 + 2 + 1 + BYTES_SEP_LEN + 3 + TAIL_LEN ||
	    n > ATTACH_LINE_MAX || memcmp(s, ATTACH_MARK, MARK_LEN) != 0)
		return -1;
	end = s + n - TAIL_LEN;
	if (memcmp(end, ") " ATTACH_SCHEME, 2 + SCHEME_LEN) != 0 ||
	    end[2 + SCHEME_LEN + ATTACH_REF_LEN] != ':' ||
	    key_decode(end + 2 + SCHEME_LEN, root) != 0 ||
	    key_decode(end + 3 + SCHEME_LEN + ATTACH_REF_LEN, a->key) != 0)
		return -1;
	for (t = end; t > s && t[-1] != ' '; t--)
		;
	tlen = (size_t)(end - t);
	if (!type_ok(t, tlen) ||
	    (size_t)(t - s) < MARK_LEN + 1 + 2 + 1 + BYTES_SEP_LEN ||
	    memcmp(t - BYTES_SEP_LEN, BYTES_SEP, BYTES_SEP_LEN) != 0)
		return -1;
	end = t - BYTES_SEP_LEN;
	for (t = end; t > s + MARK_LEN && t[-1] >= '0' && t[-1] <= '9'; t--)
		;
	dlen = (size_t)(end - t);
	if (size_decode(t, dlen, &a->size) != 0 ||
	    (size_t)(t - s) < MARK_LEN + 1 + 2 || memcmp(t - 2, " (", 2) != 0)
		return -1;
	nlen = (size_t)(t - 2 - (s + MARK_LEN));
	if (!name_ok(s + MARK_LEN, nlen))
		return -1;
	memcpy(a->name, s + MARK_LEN, nlen);
	a->name[nlen] = '\0';
	memcpy(a->type, t + dlen + BYTES_SEP_LEN, tlen);
	a->type[tlen] = '\0';
	memcpy(a->ref, s + n - TAIL_LEN + 2 + SCHEME_LEN, ATTACH_REF_LEN);
	a->ref[ATTACH_REF_LEN] = '\0';
	return 0;
}

size_t
attach_parse(const char *body, size_t len, struct attach *out, size_t max,
    size_t *text_len)
{
	struct attach run[ATTACH_MAX];
	size_t n = 0, start = len, end = len, got;

	*text_len = len;
	if (len == 0)
		return 0;
	/* Lines from the last backwards: each is [start, end).  The run
	 * ends at a line that is not a trailer line, or at ATTACH_MAX. */
	while (n < ATTACH_MAX) {
		size_t s = end;

		while (s > 0 && body[s - 1] != '\n')
			s--;
		if (line_parse(body + s, end - s,
		    &run[ATTACH_MAX - 1 - n]) != 0)
			break;
		n++;
		start = s;
		if (s == 0)
			break;
		end = s - 1;
	}
	if (n == 0)
		return 0;
	/* The text is what comes before the run, less its newline and the
	 * empty line that parts it from the run, when there is one. */
	if (start >= 2 && body[start - 2] == '\n')
		*text_len = start - 2;
	else if (start >= 1)
		*text_len = start - 1;
	else
		*text_len = 0;
	got = n < max ? n : max;
	if (got > 0)
		memcpy(out, run + ATTACH_MAX - n, got * sizeof(*out));
	return got;
}

int
attach_check(char err[PAPO_ERR_LEN], const struct attach *a)
{
	uint8_t k[PAPO_KEY_LEN];
	size_t n;

	if (strnlen(a->ref, sizeof(a->ref)) != ATTACH_REF_LEN ||
	    key_decode(a->ref, k) != 0) {
		snprintf(err, PAPO_ERR_LEN, "the reference is not %d "
		    "characters of lowercase base32 of %d bytes",
		    ATTACH_REF_LEN, PAPO_KEY_LEN);
		return -1;
	}
	if (a->size > ATTACH_SIZE_MAX) {
		snprintf(err, PAPO_ERR_LEN, "a file of %llu bytes is over "
		    "the limit of %llu", (unsigned long long)a->size,
		    (unsigned long long)ATTACH_SIZE_MAX);
		return -1;
	}
	n = strnlen(a->name, sizeof(a->name));
	if (n == sizeof(a->name) || !name_ok(a->name, n)) {
		snprintf(err, PAPO_ERR_LEN, "the name is not 1 to %d bytes "
		    "of UTF-8 without control or format characters, '/' or "
		    "'\\', "
		    "nor \".\" or \"..\"", ATTACH_NAME_MAX);
		return -1;
	}
	n = strnlen(a->type, sizeof(a->type));
	if (n == sizeof(a->type) || !type_ok(a->type, n)) {
		snprintf(err, PAPO_ERR_LEN, "the media type is not "
		    "type/subtype of lowercase letters, digits and "
		    "\"!#$&^_.+-\" (at most %d bytes)", ATTACH_TYPE_MAX);
		return -1;
	}
	return 0;
}

static int
line_format(struct buf *b, const struct attach *a)
{
	char key[ATTACH_REF_LEN + 1], size[24];

	b32_encode(a->key, PAPO_KEY_LEN, key);
	snprintf(size, sizeof(size), "%llu", (unsigned long long)a->size);
	if (buf_add(b, ATTACH_MARK, MARK_LEN) != 0 ||
	    buf_add(b, a->name, strlen(a->name)) != 0 ||
	    buf_add(b, " (", 2) != 0 ||
	    buf_add(b, size, strlen(size)) != 0 ||
	    buf_add(b, BYTES_SEP, BYTES_SEP_LEN) != 0 ||
	    buf_add(b, a->type, strlen(a->type)) != 0 ||
	    buf_add(b, ") " ATTACH_SCHEME, 2 + SCHEME_LEN) != 0 ||
	    buf_add(b, a->ref, ATTACH_REF_LEN) != 0 ||
	    buf_add(b, ":", 1) != 0 ||
	    buf_add(b, key, ATTACH_REF_LEN) != 0)
		return -1;
	return 0;
}

int
attach_format(struct buf *b, const char *text, size_t tlen,
    const struct attach *v, size_t n)
{
	char err[PAPO_ERR_LEN];
	size_t len = b->len;
	int toobig = b->toobig;

	if (n > ATTACH_MAX)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (attach_check(err, &v[i]) != 0)
			return -1;
	if (buf_add(b, text, tlen) != 0)
		goto fail;
	if (n > 0 && tlen > 0 && buf_add(b, "\n\n", 2) != 0)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if ((i > 0 && buf_add(b, "\n", 1) != 0) ||
		    line_format(b, &v[i]) != 0)
			goto fail;
	return 0;
fail:
	b->len = len;
	b->toobig = toobig;
	return -1;
}

void
attach_name(char out[ATTACH_NAME_MAX + 1], const char *path)
{
	size_t n = strlen(path), s, o = 0;

	/* The last part: trailing separators dropped ("dir/" is "dir"),
	 * then what follows the last one.  '\\' counts as one too, so a
	 * Windows path gives its file's name and never a folder's. */
	while (n > 0 && (path[n - 1] == '/' || path[n - 1] == '\\'))
		n--;
	for (s = n; s > 0 && path[s - 1] != '/' && path[s - 1] != '\\'; s--)
		;
	while (s < n) {
		uint32_t cp;
		size_t len = utf8_decode(path + s, n - s, &cp);
		const char *put = path + s;
		size_t w = len;

		if (len == 0) {
			put = "?";
			len = w = 1;
		} else if (cp < 0x20 || cp == 0x7f ||
		    (cp >= 0x80 && cp < 0xa0) || utf8_format(cp)) {
			put = "_";
			w = 1;
		}
		if (o + w > ATTACH_NAME_MAX)
			break;
		memcpy(out + o, put, w);
		o += w;
		s += len;
	}
	out[o] = '\0';
	if (o == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
		strcpy(out, "file");
}

static const struct {
	const char *ext, *type;
} exts[] = {
	{ "txt", "text/plain" }, { "md", "text/markdown" },
	{ "json", "application/json" }, { "c", "text/x-c" },
	{ "h", "text/x-c" }, { "py", "text/x-python" },
	{ "js", "text/javascript" }, { "ts", "text/x-typescript" },
	{ "html", "text/html" }, { "css", "text/css" },
	{ "csv", "text/csv" }, { "log", "text/plain" },
	{ "diff", "text/x-diff" }, { "patch", "text/x-diff" },
	{ "png", "image/png" }, { "jpg", "image/jpeg" },
	{ "gif", "image/gif" }, { "webp", "image/webp" },
	{ "svg", "image/svg+xml" }, { "pdf", "application/pdf" },
	{ "zip", "application/zip" }, { "gz", "application/gzip" },
	{ "tar", "application/x-tar" },
};

static const char *
type_by_head(const uint8_t *h, size_t n)
{
	if (n >= 8 && memcmp(h, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "image/png";
	if (n >= 3 && memcmp(h, "\xff\xd8\xff", 3) == 0)
		return "image/jpeg";
	if (n >= 6 && (memcmp(h, "GIF87a", 6) == 0 ||
	    memcmp(h, "GIF89a", 6) == 0))
		return "image/gif";
	if (n >= 12 && memcmp(h, "RIFF", 4) == 0 &&
	    memcmp(h + 8, "WEBP", 4) == 0)
		return "image/webp";
	if (n >= 5 && memcmp(h, "%PDF-", 5) == 0)
		return "application/pdf";
	if (n >= 2 && memcmp(h, "\x1f\x8b", 2) == 0)
		return "application/gzip";
	if (n >= 4 && (memcmp(h, "PK\x03\x04", 4) == 0 ||
	    memcmp(h, "PK\x05\x06", 4) == 0))
		return "application/zip";
	return NULL;
}

static const char *
type_by_ext(const char *name)
{
	const char *dot = strrchr(name, '.');
	char ext[8];
	size_t n;

	if (dot == NULL || (n = strlen(dot + 1)) == 0 || n >= sizeof(ext))
		return NULL;
	for (size_t i = 0; i <= n; i++)
		ext[i] = (char)(dot[1 + i] >= 'A' && dot[1 + i] <= 'Z' ?
		    dot[1 + i] - 'A' + 'a' : dot[1 + i]);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (strcmp(ext, exts[i].ext) == 0)
			return exts[i].type;
	return NULL;
}

/* Whether head is text: valid UTF-8 without NUL, allowing the head to
 * end inside a character (it is the first bytes of a longer file). */
static int
head_text(const uint8_t *h, size_t n)
{
	size_t cut = n;

	if (n == 0 || memchr(h, '\0', n) != NULL)
		return 0;
	if (utf8_valid((const char *)h, n))
		return 1;
	/* The last character's lead byte, at most 3 bytes back; what it
	 * starts must be longer than what is left. */
	while (cut > 0 && n - cut < 3 && (h[cut - 1] & 0xc0) == 0x80)
		cut--;
	if (cut == 0 || h[cut - 1] < 0xc2 || h[cut - 1] > 0xf4)
		return 0;
	cut--;
	if ((size_t)(h[cut] >= 0xf0 ? 4 : h[cut] >= 0xe0 ? 3 : 2) <= n - cut)
		return 0;
	return utf8_valid((const char *)h, cut);
}

void
attach_type(char out[ATTACH_TYPE_MAX + 1], const char *name,
    const uint8_t *head, size_t hlen)
{
	const char *t;

	if ((t = type_by_head(head, hlen)) == NULL &&
	    (t = type_by_ext(name)) == NULL)
		t = head_text(head, hlen) ? "text/plain" :
		    "application/octet-stream";
	snprintf(out, ATTACH_TYPE_MAX + 1, "%s", t);
}
