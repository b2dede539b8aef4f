/*
 * attach.h: the files a message names (docs/PROTOCOL.md,
 * "Files between members"), written as lines at the end of the
 * message's body.  The
 * body is signed by the author and sealed under the room key like any
 * other, so only the room's members of that moment read the names and
 * keys, and no member can swap a file; a daemon of an older release
 * (protocol 1 to 3) takes the message as it is and shows the lines as
 * text saying a file was shared.
 *
 * The trailer: the body's text, then (when the text is not empty) one
 * empty line, then one line per file, the last without a newline:
 *
 *   📎 NAME (SIZE bytes, TYPE) papo-file:REF:KEY
 *
 * NAME is the file's name (UTF-8, 1 to ATTACH_NAME_MAX bytes, no control
 * character nor format character (Unicode's Cf: bidi controls, zero-width
 * characters, which could disguise a name), no '/' nor '\\', not "." or
 * ".."), SIZE its plain size in
 * decimal (no sign, no leading zero, at most BLOB_SIZE_MAX), TYPE its
 * media type (type/subtype, lowercase letters, digits and
 * "!#$&^_.+-", at most ATTACH_TYPE_MAX bytes), REF the blob's
 * reference (node/store/blob.h) and KEY its file key, both
 * ATTACH_REF_LEN characters of lowercase base32 (lib/b32.h).  A parser
 * takes the longest run of such lines that ends the body, at most
 * ATTACH_MAX counted from the end (with more, the earlier ones are
 * text); the text is what comes before it, less the newline that ends
 * it and the one empty line (when there is one).  A line that is almost
 * one (a bad size, a short key) ends the run: it and what comes before
 * are text.  The work is linear in the body's length.
 *
 * Pure: no I/O, no clock, no allocation; fuzzed.
 */
#ifndef PAPO_ATTACH_H
#define PAPO_ATTACH_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "node/papo.h"

#define ATTACH_MAX 16              /* files one message names */
#define ATTACH_NAME_MAX 255        /* bytes of a file's name */
#define ATTACH_TYPE_MAX 127        /* bytes of a media type */
#define ATTACH_REF_LEN 52          /* base32 of 32 bytes: REF and KEY */
#define ATTACH_SIZE_MAX (4ULL << 30)   /* BLOB_SIZE_MAX, checked there */
#define ATTACH_MARK "\xf0\x9f\x93\x8e "   /* U+1F4CE PAPERCLIP, a space */
#define ATTACH_SCHEME "papo-file:"
/* The longest line: mark, name, " (", size, " bytes, ", type, ") ",
 * scheme, REF, ':', KEY. */
#define ATTACH_LINE_MAX (5 + ATTACH_NAME_MAX + 2 + 20 + 8 + \
    ATTACH_TYPE_MAX + 2 + 10 + 2 * ATTACH_REF_LEN + 1)

struct attach {
	char ref[ATTACH_REF_LEN + 1];
	uint8_t key[PAPO_KEY_LEN];
	uint64_t size;
	char name[ATTACH_NAME_MAX + 1];
	char type[ATTACH_TYPE_MAX + 1];
};

/*
 * Parses body (len bytes, UTF-8): the files its trailer names, in order,
 * into out (room for max: the first max when it names more), and the
 * length of the text before the trailer into *text_len (len when there
 * is none).  Returns how many files it wrote; never fails (a body
 * without a trailer has none).
 */
size_t attach_parse(const char *body, size_t len, struct attach *out,
    size_t max, size_t *text_len);

/*
 * Appends text (tlen bytes) and the trailer naming the n files of v to
 * b.  -1 (b as it was) when a file's fields break the rules above
 * (attach_check says which), n is over ATTACH_MAX, or out of memory.
 */
int attach_format(struct buf *b, const char *text, size_t tlen,
    const struct attach *v, size_t n);

/* Whether one file's fields keep the rules: 0, or -1 with err. */
int attach_check(char err[PAPO_ERR_LEN], const struct attach *a);

/*
 * A name a file may be shown by, made from any path or name (a user's,
 * an agent's, a sender's): its last part, control characters, format
 * characters (Cf) and slashes replaced by '_' ('/' and '\\' both end a part), invalid
 * UTF-8 by '?' (a byte each), cut at a character
 * boundary to ATTACH_NAME_MAX bytes; "." and ".." and "" become "file".
 */
void attach_name(char out[ATTACH_NAME_MAX + 1], const char *path);

/*
 * The media type of a file named name whose first bytes are head (hlen,
 * may be 0): from its signature (PNG, JPEG, GIF, WebP, PDF, gzip, zip),
 * else its extension (a short table: txt, md, json, c, h, py, js, ts,
 * html, css, csv, log, diff, patch, png, jpg, gif, webp, svg, pdf, zip,
 * gz, tar), else "text/plain" when head is not empty and valid UTF-8
 * without NUL (its last character may be cut), else
 * "application/octet-stream".
 */
void attach_type(char out[ATTACH_TYPE_MAX + 1], const char *name,
    const uint8_t *head, size_t hlen);

#endif
