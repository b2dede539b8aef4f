/*
 * blobs.c: shared files through the JSON API (blobs.h; docs/FILES.md).
 * Main thread, inside http.c's callbacks.  An upload is written to a
 * spool file in node_spool_dir() as its body arrives, never held in
 * memory, then handed to the node (NODE_BLOB_ADD, which removes the
 * spool); an upload cut short leaves no spool behind.  A download reads
 * the file straight from the disk with node_blob_open/read, a chunk at a
 * time as the client takes it, so memory stays bounded whatever the
 * size; a file that is not here is answered with its state.  Nothing
 * here waits for the network: the node answers through http_submit.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/log.h"
#include "node/node.h"
#include "server/api/blobs.h"
#include "server/http/http.h"

/* The node reads and decrypts files in chunks of this size
 * (BLOB_CHUNK): reads that start on a chunk's edge decrypt each once. */
#define BLOBS_CHUNK (256 * 1024)

#define BLOBS_NAME_MAX 255        /* bytes of a file's name */
#define BLOBS_TYPE_MAX 127        /* bytes of a media type */

int
blobs_ref_ok(const char *s)
{
	size_t n = 0;

	for (; s[n] != '\0'; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') ||
		    (s[n] >= '2' && s[n] <= '7')))
			return 0;
	return n == BLOBS_REF_LEN;
}

/* A decimal number of digits only, at most 19 of them; -1 otherwise. */
static int
blobs_digits(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 19)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int
blobs_range(const char *h, uint64_t size, uint64_t *off, uint64_t *len)
{
	const char *dash, *end;
	uint64_t a, b;

	if (h == NULL || strncasecmp(h, "bytes=", 6) != 0)
		return -1;
	h += 6;
	while (*h == ' ')
		h++;
	end = h + strcspn(h, " ,");
	if (*end == ',' || end[strspn(end, " ")] != '\0')
		return -1;          /* several ranges: the whole body */
	if ((dash = memchr(h, '-', (size_t)(end - h))) == NULL)
		return -1;
	if (dash == h) {            /* "-N": the last N bytes */
		if (blobs_digits(dash + 1, (size_t)(end - dash - 1), &b) == -1)
			return -1;
		if (b == 0 || size == 0)
			return 1;
		*len = b < size ? b : size;
		*off = size - *len;
		return 0;
	}
	if (blobs_digits(h, (size_t)(dash - h), &a) == -1)
		return -1;
	if (dash + 1 == end)
		b = UINT64_MAX;     /* "A-": to the end */
	else if (blobs_digits(dash + 1, (size_t)(end - dash - 1), &b) == -1 ||
	    b < a)
		return -1;
	if (a >= size)
		return 1;
	if (b >= size)
		b = size - 1;
	*off = a;
	*len = b - a + 1;
	return 0;
}

/* Downloads. */

struct blobs_dl {
	struct node_blob *b;
	uint64_t off;               /* the first byte served */
	uint64_t len;               /* bytes served */
	char ref[BLOBS_REF_LEN + 1];
};

static long long
blobs_dl_read(void *arg, uint64_t pos, char *out, size_t max)
{
	struct blobs_dl *d = arg;
	char err[PAPO_ERR_LEN];
	uint64_t at = d->off + pos;
	size_t n = max;

	if (pos >= d->len)
		return -1;
	if (n > d->len - pos)
		n = (size_t)(d->len - pos);
	/* A range that starts inside a chunk: up to the chunk's end first,
	 * so that every read after starts on one. */
	if (at % BLOBS_CHUNK != 0 && n > BLOBS_CHUNK - at % BLOBS_CHUNK)
		n = BLOBS_CHUNK - (size_t)(at % BLOBS_CHUNK);
	if (node_blob_read(err, d->b, at, out, n) == -1) {
		/* The length was promised: the connection is cut, and the
		 * client sees a short answer, not a wrong one. */
		log_msg(LOG_WARN, "api: file %.12s: %s; its download is cut",
		    d->ref, err);
		return -1;
	}
	return (long long)n;
}

static void
blobs_dl_release(void *arg)
{
	struct blobs_dl *d = arg;

	node_blob_close(d->b);
	free(d);
}

/*
 * Content-Disposition (RFC 6266): attachment, the name in ASCII for old
 * clients (anything else, quotes and backslashes as '_'), and whole as
 * UTF-8 percent-encoded in filename*.
 */
static void
blobs_disposition(const char *name, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	char ascii[BLOBS_NAME_MAX + 1];
	size_t n = 0, i;

	for (i = 0; name[i] != '\0' && i < BLOBS_NAME_MAX; i++) {
		unsigned char c = (unsigned char)name[i];

		ascii[i] = c < 0x20 || c >= 0x7f || c == '"' || c == '\\' ?
		    '_' : (char)c;
	}
	ascii[i] = '\0';
	n = (size_t)snprintf(out, len, "attachment; filename=\"%s\"; "
	    "filename*=UTF-8''", ascii);
	for (const unsigned char *p = (const unsigned char *)name;
	    *p != '\0' && n + 4 < len; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("!#$&+-.^_`|~", *p) !=
		    NULL)
			out[n++] = (char)*p;
		else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n < len ? n : len - 1] = '\0';
}

/* Answers r with the file b holds (its range, when r asks one); b is
 * the answer's from here. */
static void
blobs_serve(struct http_req *r, struct node_blob *b, const char *ref)
{
	char disp[3 * BLOBS_NAME_MAX + 64], cr[80];
	uint64_t size = node_blob_size(b), off = 0, len = size;
	const char *type = node_blob_type(b);
	struct blobs_dl *d;
	int rg, status = 200;

	rg = blobs_range(http_req_header(r, "Range"), size, &off, &len);
	if (rg == 1) {
		node_blob_close(b);
		snprintf(cr, sizeof(cr), "bytes */%llu",
		    (unsigned long long)size);
		http_reply_header(r, "Content-Range", cr);
		http_reply_error(r, 416, "the range asked is not inside the "
		    "file's %llu bytes", (unsigned long long)size);
		return;
	}
	if (rg == 0) {
		status = 206;
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu",
		    (unsigned long long)off,
		    (unsigned long long)(off + len - 1),
		    (unsigned long long)size);
		http_reply_header(r, "Content-Range", cr);
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		node_blob_close(b);
		http_reply_error(r, 500, "out of memory");
		return;
	}
	d->b = b;
	d->off = off;
	d->len = len;
	snprintf(d->ref, sizeof(d->ref), "%s", ref);
	blobs_disposition(node_blob_name(b), disp, sizeof(disp));
	http_reply_header(r, "Content-Disposition", disp);
	http_reply_header(r, "Accept-Ranges", "bytes");
	http_reply_reader(r, status, type != NULL && type[0] != '\0' ? type :
	    "application/octet-stream", len, blobs_dl_read, blobs_dl_release,
	    d);
}

/* The node's answer for a request of kind about ref, submitted for r:
 * 400 when ref is not one's spelling. */
static void
blobs_ask(struct http_req *r, void *node, enum node_kind kind,
    const char *ref, http_node_cb *cb)
{
	struct node_msg *m;

	if (ref == NULL || !blobs_ref_ok(ref)) {
		http_reply_error(r, 400, "a file's reference is 52 characters "
		    "of a-z and 2-7");
		return;
	}
	if ((m = node_msg_new(kind)) == NULL ||
	    (node_args_blob(m)->ref = strdup(ref)) == NULL) {
		node_msg_free(m);
		http_reply_error(r, 500, "out of memory");
		return;
	}
	http_submit(r, node, m, cb, node);
}

/* The node's error, with its status. */
static void
blobs_error(struct http_req *r, const struct node_msg *m)
{
	if (m->code >= 400 && m->code <= 599)
		http_reply_error(r, m->code, "%s", m->err[0] != '\0' ? m->err :
		    "the node refused the request");
	else
		http_reply_error(r, 500, "the node gave no answer");
}

/* A state, or the node's error: for /state and /fetch. */
static void
blobs_state_done(struct http_req *r, struct node_msg *m, void *node)
{
	(void)node;
	if (m->code == 0 && m->json != NULL)
		http_reply(r, 200, m->json);
	else
		blobs_error(r, m);
	node_msg_free(m);
}

/*
 * GET /api/blobs/REF with no room named (the node answers for the
 * default one, whose id m->room_id names), or of a file that was not
 * here: the file if it is here now, else its state.  With
 * ?fetch=1 the node started fetching it: 202 and the state.  Else 404,
 * the state with an "error" saying why.  A file that came meanwhile is
 * served after all.
 */
static void
blobs_absent(struct http_req *r, struct node_msg *m, void *node)
{
	const char *ref = http_req_segment(r), *fetch, *st;
	char err[PAPO_ERR_LEN], why[PAPO_ERR_LEN];
	struct node_blob *b;
	cJSON *o = NULL;
	char *json = NULL;
	int code = 0;

	if (m->code != 0 || m->json == NULL) {
		blobs_error(r, m);
		goto out;
	}
	o = cJSON_Parse(m->json);
	st = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "state")) ?
	    cJSON_GetObjectItemCaseSensitive(o, "state")->valuestring : "";
	if (strcmp(st, "here") == 0 && (b = node_blob_open(err, &code, node,
	    m->room_id, ref)) != NULL) {
		blobs_serve(r, b, ref);
		goto out;
	}
	fetch = http_req_query(r, "fetch");
	if (fetch != NULL && strcmp(fetch, "1") == 0) {
		http_reply(r, 202, m->json);
		goto out;
	}
	if (strcmp(st, "failed") == 0)
		snprintf(why, sizeof(why), "file %s is not here: its fetch "
		    "failed", ref);
	else
		snprintf(why, sizeof(why), "file %s is not here (%s): fetch it "
		    "with ?fetch=1 or POST /api/blobs/REF/fetch", ref, st);
	if (o == NULL || !cJSON_IsObject(o) ||
	    cJSON_GetObjectItemCaseSensitive(o, "error") != NULL ||
	    cJSON_AddStringToObject(o, "error", why) == NULL ||
	    (json = cJSON_PrintUnformatted(o)) == NULL)
		http_reply_error(r, 404, "%s", why);
	else
		http_reply(r, 404, json);
out:
	cJSON_free(json);
	cJSON_Delete(o);
	node_msg_free(m);
}

void
blobs_get(struct http_req *r, void *node)
{
	static const char *const known[] = { "fetch", NULL };
	const char *ref = http_req_segment(r), *fetch;
	char err[PAPO_ERR_LEN];
	struct node_blob *b;
	int code = 0;

	if (http_req_query_unknown(r, known) != NULL) {
		http_reply_error(r, 400, "a file takes fetch=1 or nothing");
		return;
	}
	fetch = http_req_query(r, "fetch");
	if (fetch != NULL && strcmp(fetch, "1") != 0 &&
	    strcmp(fetch, "0") != 0) {
		http_reply_error(r, 400, "fetch is 1 or 0");
		return;
	}
	if (ref == NULL || !blobs_ref_ok(ref)) {
		http_reply_error(r, 400, "a file's reference is 52 characters "
		    "of a-z and 2-7");
		return;
	}
	/* A room named is read at once; with none, the node says which
	 * is the default, as for every other route (blobs_absent). */
	if (http_req_room(r) != NULL && http_req_room(r)[0] != '\0') {
		if ((b = node_blob_open(err, &code, node, http_req_room(r),
		    ref)) != NULL) {
			blobs_serve(r, b, ref);
			return;
		}
		if (code != 404) {
			http_reply_error(r, 500, "%s", err);
			return;
		}
	}
	blobs_ask(r, node, fetch != NULL && strcmp(fetch, "1") == 0 ?
	    NODE_FETCH : NODE_BLOB, ref, blobs_absent);
}

void
blobs_state(struct http_req *r, void *node)
{
	if (http_req_query_unknown(r, (const char *const[]){ NULL }) != NULL) {
		http_reply_error(r, 400, "a file's state takes no parameters");
		return;
	}
	blobs_ask(r, node, NODE_BLOB, http_req_segment(r), blobs_state_done);
}

void
blobs_fetch(struct http_req *r, void *node)
{
	size_t len;
	const char *body = http_req_body(r, &len);

	if (http_req_query_unknown(r, (const char *const[]){ NULL }) != NULL) {
		http_reply_error(r, 400, "a fetch takes no parameters");
		return;
	}
	if (len > 0 && strspn(body, " \t\r\n") != len &&
	    strcmp(body, "{}") != 0) {
		http_reply_error(r, 400, "a fetch takes no fields: send {} or "
		    "nothing");
		return;
	}
	blobs_ask(r, node, NODE_FETCH, http_req_segment(r), blobs_state_done);
}

/* Uploads. */

struct blobs_up {
	int fd;
	char path[4096];            /* the spool, or "" once removed */
	uint64_t size;
	int handed;                 /* the node has the spool now */
	char name[BLOBS_NAME_MAX + 1];
	char type[BLOBS_TYPE_MAX + 1];
	struct node *node;
};

/* Removes the spool (an upload refused or cut short). */
static void
blobs_up_drop(struct blobs_up *u)
{
	if (u->fd != -1)
		close(u->fd);
	u->fd = -1;
	if (u->path[0] != '\0' && !u->handed)
		unlink(u->path);
	u->path[0] = '\0';
}

static void
blobs_up_fail(struct http_req *r, struct blobs_up *u, int e)
{
	blobs_up_drop(u);
	if (e == ENOSPC || e == EDQUOT)
		http_reply_error(r, 507, "the disk is full: the upload stopped "
		    "after %llu bytes", (unsigned long long)u->size);
	else
		http_reply_error(r, 500, "cannot write the upload: %s",
		    strerror(e));
}

static int
blobs_up_data(struct http_req *r, const char *data, size_t n, void *arg)
{
	struct blobs_up *u = arg;
	ssize_t w;

	if (n > BLOBS_SIZE_MAX - u->size) {
		blobs_up_drop(u);
		http_reply_error(r, 413, "the file is over %llu bytes (4 GiB), "
		    "the largest a room shares", BLOBS_SIZE_MAX);
		return -1;
	}
	while (n > 0) {
		if ((w = write(u->fd, data, n)) == -1) {
			if (errno == EINTR)
				continue;
			blobs_up_fail(r, u, errno);
			return -1;
		}
		data += w;
		n -= (size_t)w;
		u->size += (uint64_t)w;
	}
	return 0;
}

/* The node has taken the file (or refused it): 201 and its JSON. */
static void
blobs_added(struct http_req *r, struct node_msg *m, void *arg)
{
	(void)arg;
	if (m->code == 0 && m->json != NULL)
		http_reply(r, 201, m->json);
	else
		blobs_error(r, m);
	node_msg_free(m);
}

static void
blobs_up_end(struct http_req *r, void *arg)
{
	struct blobs_up *u = arg;
	struct node_blob_add_args *a;
	struct node_msg *m;
	int fd = u->fd;

	u->fd = -1;
	if (close(fd) == -1) {
		blobs_up_fail(r, u, errno);
		return;
	}
	if ((m = node_msg_new(NODE_BLOB_ADD)) != NULL) {
		a = node_args_blob_add(m);
		a->path = strdup(u->path);
		a->name = strdup(u->name);
		if (u->type[0] != '\0')
			a->type = strdup(u->type);
	}
	if (m == NULL || a->path == NULL || a->name == NULL ||
	    (u->type[0] != '\0' && a->type == NULL)) {
		node_msg_free(m);
		blobs_up_drop(u);
		http_reply_error(r, 500, "out of memory");
		return;
	}
	a->spool = 1;               /* the node removes the spool */
	u->handed = 1;
	http_submit(r, u->node, m, blobs_added, u);
}

/* The exchange is over, whatever its end: a spool not handed over goes. */
static void
blobs_up_done(void *arg, int sent)
{
	struct blobs_up *u = arg;

	(void)sent;
	blobs_up_drop(u);
	free(u);
}

/*
 * The media type an upload gives: ?type=, else its Content-Type unless
 * that is one a client sends for any bytes (curl's form default,
 * octet-stream), which leaves the node to guess; without parameters.
 */
static void
blobs_up_type(struct http_req *r, char out[BLOBS_TYPE_MAX + 1])
{
	const char *t = http_req_query(r, "type");
	size_t n;

	out[0] = '\0';
	if (t == NULL) {
		t = http_req_header(r, "Content-Type");
		if (t == NULL || strncasecmp(t,
		    "application/x-www-form-urlencoded", 33) == 0 ||
		    strncasecmp(t, "application/octet-stream", 24) == 0 ||
		    strncasecmp(t, "multipart/", 10) == 0)
			return;
	}
	n = strcspn(t, "; ");
	if (n > BLOBS_TYPE_MAX)
		return;
	memcpy(out, t, n);
	out[n] = '\0';
}

/*
 * POST /api/blobs?name=NAME[&type=TYPE]: its handler runs before the
 * body (HTTP_UPLOAD), checks what it can, and takes the body into a
 * spool file.
 */
void
blobs_upload(struct http_req *r, void *node)
{
	static const char *const known[] = { "name", "type", NULL };
	const char *name, *cl, *bad;
	struct blobs_up *u;
	uint64_t len;

	if ((bad = http_req_query_unknown(r, known)) != NULL) {
		http_reply_error(r, 400, "unknown parameter '%.64s': an upload "
		    "takes name and type", bad);
		return;
	}
	name = http_req_query(r, "name");
	if (name == NULL || name[0] == '\0') {
		http_reply_error(r, 400, "name is needed: POST "
		    "/api/blobs?name=NAME, the name the file is shown by");
		return;
	}
	if (strlen(name) > BLOBS_NAME_MAX) {
		http_reply_error(r, 400, "name has %zu bytes; at most %d are "
		    "allowed", strlen(name), BLOBS_NAME_MAX);
		return;
	}
	cl = http_req_header(r, "Content-Length");
	if (cl != NULL && (blobs_digits(cl, strlen(cl), &len) == -1 ||
	    len > BLOBS_SIZE_MAX)) {
		http_reply_error(r, 413, "the file is over %llu bytes (4 GiB), "
		    "the largest a room shares", BLOBS_SIZE_MAX);
		return;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		http_reply_error(r, 500, "out of memory");
		return;
	}
	u->node = node;
	snprintf(u->name, sizeof(u->name), "%s", name);
	blobs_up_type(r, u->type);
	if ((size_t)snprintf(u->path, sizeof(u->path), "%s/upload-XXXXXX",
	    node_spool_dir(node)) >= sizeof(u->path) ||
	    (u->fd = mkstemp(u->path)) == -1) {
		int e = errno;

		free(u);
		http_reply_error(r, e == ENOSPC || e == EDQUOT ? 507 : 500,
		    "cannot make a spool file in %s: %s", node_spool_dir(node),
		    strerror(e));
		return;
	}
	http_req_on_done(r, blobs_up_done, u);
	http_req_sink(r, blobs_up_data, blobs_up_end, u);
}
