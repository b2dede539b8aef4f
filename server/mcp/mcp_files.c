/*
 * mcp_files.c: files for agents (mcp_int.h; docs/MCP.md, "Files"): send's
 * attachments (a path on this machine, or inline base64 spooled under
 * node_spool_dir), each added with NODE_BLOB_ADD before the message is
 * sent naming them; the fetch tool and resources/read of
 * papo://rooms/ID/files/REF, which ask the node to fetch a file, follow
 * it until it is here, then save it to a path or give its content; and
 * resources/list's files of the recent messages.
 *
 * Below the tool and resource tables, above mcp_ask.c.  Main thread
 * only.  What is read or written on the disk is bounded per turn of the
 * loop: an inline attachment (1 MiB), a content answer (1 MiB), and a
 * file saved to a path is copied MCP_COPY_TURN bytes at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/loop.h"
#include "lib/units.h"
#include "lib/utf8.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/mcp/mcp_int.h"

#define MCP_READ_WAIT_S 30           /* resources/read waits this long */
#define MCP_POLL_NS (250 * NS_PER_MS)    /* a file's state asked again */
#define MCP_COPY_BUF (1u << 20)
#define MCP_COPY_TURN (8u << 20)     /* bytes saved per turn of the loop */
#define MCP_LIST_MESSAGES 20         /* resources/list: of each room */
#define MCP_LIST_FILES 50            /* and at most this many files */
#define MCP_REF_MAX 64

/* a then b in a new string, or NULL without memory. */
static char *
mcp_join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *out = malloc(n);

	if (out != NULL)
		snprintf(out, n, "%s%s", a, b);
	return out;
}

/* Attachments: each file added, then the message sent. */

struct mcp_attach {
	struct mcp *m;
	cJSON *id;
	int rev;                     /* MCP_REV_* of the session */
	char room[PAPO_ROOMID_LEN + 1];
	struct node_msg *send;
	struct {
		char *path;          /* a file of this machine, or a spool */
		char *name, *type;   /* NULL: the node's choice */
		int spool;           /* the node removes it once read */
		char label[96];      /* for errors */
	} item[MCP_ATTACH_MAX];
	size_t n, next;
	cJSON *files;                /* the references added so far */
};

static void
mcp_attach_free(struct mcp_attach *a)
{
	for (size_t i = 0; i < a->n; i++) {
		/* A spool the node was not given is still ours. */
		if (a->item[i].spool && i >= a->next)
			unlink(a->item[i].path);
		free(a->item[i].path);
		free(a->item[i].name);
		free(a->item[i].type);
	}
	node_msg_free(a->send);
	cJSON_Delete(a->files);
	cJSON_Delete(a->id);
	free(a);
}

static void
mcp_attach_fail(struct mcp_attach *a, struct http_req *r, const char *msg)
{
	char text[PAPO_ERR_LEN + 160];

	snprintf(text, sizeof(text), "send: %s; nothing was sent", msg);
	mcp_reply_text(r, 200, mcp_result(a->id, mcp_tool_result(NULL, text),
	    a->rev));
	mcp_attach_free(a);
}

/* Decodes base64 b64 (padded or not, white space ignored) into a new
 * buffer of at most MCP_INLINE_MAX bytes: its length, -1 when it is not
 * base64, -2 when it is longer. */
static long
mcp_base64(const char *b64, unsigned char **out)
{
	size_t len = strlen(b64), chars = 0, got;
	const char *end;
	unsigned char *bin;

	for (size_t i = 0; i < len; i++)
		if (strchr(" \t\r\n=", b64[i]) == NULL)
			chars++;
	if (chars / 4 * 3 + (chars % 4 > 1 ? chars % 4 - 1 : 0) >
	    MCP_INLINE_MAX)
		return -2;
	if ((bin = malloc(MCP_INLINE_MAX + 1)) == NULL)
		return -1;
	if (sodium_base642bin(bin, MCP_INLINE_MAX + 1, b64, len, " \t\r\n",
	    &got, &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    end != b64 + len) {
		if (sodium_base642bin(bin, MCP_INLINE_MAX + 1, b64, len,
		    " \t\r\n", &got, &end,
		    sodium_base64_VARIANT_ORIGINAL_NO_PADDING) != 0 ||
		    end != b64 + len) {
			free(bin);
			return -1;
		}
	}
	*out = bin;
	return (long)got;
}

/* Writes len bytes to a new spool file of the node's: its path, or NULL
 * with err. */
static char *
mcp_spool(struct mcp *m, const unsigned char *data, size_t len,
    char err[PAPO_ERR_LEN])
{
	char *path;
	size_t off = 0;
	ssize_t w;
	int fd;

	if ((path = mcp_join(node_spool_dir(m->node), "/mcp-XXXXXX")) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	if ((fd = mkstemp(path)) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot spool it: %s",
		    strerror(errno));
		free(path);
		return NULL;
	}
	while (off < len) {
		if ((w = write(fd, data + off, len - off)) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, PAPO_ERR_LEN, "cannot spool it: %s",
			    strerror(errno));
			close(fd);
			unlink(path);
			free(path);
			return NULL;
		}
		off += (size_t)w;
	}
	close(fd);
	return path;
}

/* An optional string field of an attachment; -1 when of the wrong type. */
static int
mcp_attach_str(const cJSON *o, const char *name, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return -1;
	return (*out = strdup(v->valuestring)) == NULL ? -1 : 0;
}

/* Checks attachment i (o) and makes it ready to add: 0, or -1 with err. */
static int
mcp_attach_item(struct mcp_attach *a, size_t i, const cJSON *o,
    char err[PAPO_ERR_LEN])
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(o, "data");
	const cJSON *k;
	unsigned char *bin = NULL;
	struct stat st;
	long len;

	if (!cJSON_IsObject(o)) {
		snprintf(err, PAPO_ERR_LEN, "attachments[%zu] must be an "
		    "object: {\"path\": \"/abs/path\"} or {\"name\", \"data\" "
		    "(base64)}", i);
		return -1;
	}
	cJSON_ArrayForEach(k, o)
		if (strcmp(k->string, "path") != 0 &&
		    strcmp(k->string, "data") != 0 &&
		    strcmp(k->string, "name") != 0 &&
		    strcmp(k->string, "type") != 0) {
			snprintf(err, PAPO_ERR_LEN, "attachments[%zu]: unknown "
			    "field '%.32s' (an attachment takes path, or name "
			    "and data; type is optional)", i, k->string);
			return -1;
		}
	if (mcp_attach_str(o, "name", &a->item[i].name) == -1 ||
	    mcp_attach_str(o, "type", &a->item[i].type) == -1) {
		snprintf(err, PAPO_ERR_LEN, "attachments[%zu]: name and type "
		    "must be strings", i);
		return -1;
	}
	if ((path != NULL) == (data != NULL)) {
		snprintf(err, PAPO_ERR_LEN, "attachments[%zu] takes either "
		    "path (a file on this machine) or data (inline base64), "
		    "not %s", i, path != NULL ? "both" : "neither");
		return -1;
	}
	if (path != NULL) {
		if (!cJSON_IsString(path) || path->valuestring[0] != '/') {
			snprintf(err, PAPO_ERR_LEN, "attachments[%zu]: path must "
			    "be an absolute path (starting with /)", i);
			return -1;
		}
		snprintf(a->item[i].label, sizeof(a->item[i].label), "%s",
		    path->valuestring);
		if (stat(path->valuestring, &st) == -1) {
			snprintf(err, PAPO_ERR_LEN, "attachments[%zu]: %s: %s", i,
			    errno == ENOENT ? "no such file" : strerror(errno),
			    path->valuestring);
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, PAPO_ERR_LEN, "attachments[%zu]: %s is a "
			    "directory: attach its files one by one (or an "
			    "archive of it)", i, path->valuestring);
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, PAPO_ERR_LEN, "attachments[%zu]: %s is not "
			    "a regular file", i, path->valuestring);
			return -1;
		}
		if ((a->item[i].path = strdup(path->valuestring)) == NULL) {
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			return -1;
		}
		return 0;
	}
	if (a->item[i].name == NULL || a->item[i].name[0] == '\0') {
		snprintf(err, PAPO_ERR_LEN, "attachments[%zu]: inline data "
		    "needs a name (such as \"notes.txt\")", i);
		return -1;
	}
	snprintf(a->item[i].label, sizeof(a->item[i].label), "%s",
	    a->item[i].name);
	if (!cJSON_IsString(data) ||
	    (len = mcp_base64(data->valuestring, &bin)) == -1) {
		snprintf(err, PAPO_ERR_LEN, "attachments[%zu] (%.60s): data is "
		    "not base64", i, a->item[i].name);
		return -1;
	}
	if (len == -2) {
		snprintf(err, PAPO_ERR_LEN, "attachments[%zu] (%.60s): inline "
		    "data is too big: at most %u bytes decoded; give a path "
		    "for a larger file", i, a->item[i].name, MCP_INLINE_MAX);
		return -1;
	}
	a->item[i].path = mcp_spool(a->m, bin, (size_t)len, err);
	free(bin);
	if (a->item[i].path == NULL)
		return -1;
	a->item[i].spool = 1;
	return 0;
}

static void mcp_attach_next(struct mcp_attach *a, struct http_req *r);

static void
mcp_attach_added(struct http_req *r, struct node_msg *msg, void *arg)
{
	struct mcp_attach *a = arg;
	size_t i = a->next - 1;
	cJSON *o = NULL;
	const cJSON *ref;
	char err[PAPO_ERR_LEN + 128];

	if (msg->code != 0) {
		snprintf(err, sizeof(err), "attachments[%zu] (%.80s): %s", i,
		    a->item[i].label, msg->err);
		node_msg_free(msg);
		mcp_attach_fail(a, r, err);
		return;
	}
	o = msg->json != NULL ? cJSON_Parse(msg->json) : NULL;
	ref = cJSON_GetObjectItemCaseSensitive(o, "ref");
	if (!cJSON_IsString(ref)) {
		cJSON_Delete(o);
		node_msg_free(msg);
		mcp_attach_fail(a, r, "the node answered no reference");
		return;
	}
	cJSON_AddItemToArray(a->files, cJSON_CreateString(ref->valuestring));
	cJSON_Delete(o);
	node_msg_free(msg);
	mcp_attach_next(a, r);
}

/* Adds the next file, or sends the message once all are added. */
static void
mcp_attach_next(struct mcp_attach *a, struct http_req *r)
{
	struct node_blob_add_args *b;
	struct node_msg *req;
	size_t i = a->next;

	if (i == a->n) {
		req = a->send;
		a->send = NULL;
		if ((node_args_send(req)->files =
		    cJSON_PrintUnformatted(a->files)) == NULL) {
			node_msg_free(req);
			mcp_attach_fail(a, r, "out of memory");
			return;
		}
		mcp_ask_tool(a->m, a->rev, r, a->id, req, a->room);
		mcp_attach_free(a);
		return;
	}
	if ((req = node_msg_new(NODE_BLOB_ADD)) == NULL) {
		mcp_attach_fail(a, r, "out of memory");
		return;
	}
	b = node_args_blob_add(req);
	if ((b->path = strdup(a->item[i].path)) == NULL ||
	    (a->item[i].name != NULL &&
	    (b->name = strdup(a->item[i].name)) == NULL) ||
	    (a->item[i].type != NULL &&
	    (b->type = strdup(a->item[i].type)) == NULL) ||
	    (a->room[0] != '\0' && (req->room = strdup(a->room)) == NULL)) {
		node_msg_free(req);
		mcp_attach_fail(a, r, "out of memory");
		return;
	}
	b->spool = a->item[i].spool;
	a->next++;
	http_submit(r, a->m->node, req, mcp_attach_added, a);
}

void
mcp_attach(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *attachments, struct node_msg *req, const char *room)
{
	struct mcp_attach *a = calloc(1, sizeof(*a));
	char err[PAPO_ERR_LEN];
	const cJSON *o;

	if (a == NULL || (a->files = cJSON_CreateArray()) == NULL) {
		free(a);
		node_msg_free(req);
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	a->m = s->m;
	a->id = cJSON_Duplicate(id, 1);
	a->rev = s->rev;
	a->send = req;
	snprintf(a->room, sizeof(a->room), "%s", room);
	/* mcp_schema_read held their number to MCP_ATTACH_MAX; a->item
	 * holds no more, so it is what keeps the loop in bounds. */
	if (cJSON_GetArraySize(attachments) > MCP_ATTACH_MAX) {
		mcp_attach_fail(a, r, "too many attachments");
		return;
	}
	/* Every one is checked (and the inline ones spooled) before any is
	 * added: a mistake costs nothing. */
	cJSON_ArrayForEach(o, attachments) {
		a->n++;
		if (mcp_attach_item(a, a->n - 1, o, err) == -1) {
			mcp_attach_fail(a, r, err);
			return;
		}
	}
	mcp_attach_next(a, r);
}

/* Fetching: a file followed until it is here, then saved or returned. */

struct mcp_fetch {
	LIST_ENTRY(mcp_fetch) entry;     /* m->fetches */
	struct mcp *m;
	struct http_req *r;
	cJSON *id;
	int rev;                     /* MCP_REV_* of the session */
	char room[PAPO_ROOMID_LEN + 1];  /* "": the default room */
	char ref[MCP_REF_MAX + 1];
	char *uri;                   /* resources/read of it, or NULL */
	char *path;                  /* saved there, or NULL: returned */
	char *part;                  /* path.part, while it is written */
	int overwrite;
	uint64_t start, deadline;
	struct loop_timer *timer;
	struct node_blob *b;
	int fd;
	uint64_t off;
	unsigned char *buf;
	int asking;                  /* a request of it is with the node */
	int asked;                   /* NODE_FETCH was asked */
	int closed;                  /* the daemon stops: out of m->fetches */
	int watching;                /* r's client, between requests */
};

static void
mcp_fetch_free(struct mcp_fetch *f)
{
	if (f->watching && f->r != NULL)
		http_req_watch(f->r, NULL, NULL);
	if (!f->closed)
		LIST_REMOVE(f, entry);
	loop_timer_free(f->timer);
	if (f->fd != -1)
		close(f->fd);
	if (f->part != NULL)
		unlink(f->part);
	node_blob_close(f->b);
	cJSON_Delete(f->id);
	free(f->buf);
	free(f->uri);
	free(f->path);
	free(f->part);
	free(f);
}

/* r's client left while f waited between requests: r is closed
 * without an answer. */
static void
mcp_fetch_gone(struct http_req *r, void *arg)
{
	struct mcp_fetch *f = arg;

	(void)r;
	f->watching = 0;
	f->r = NULL;
	mcp_fetch_free(f);
}

/* f goes on at at (a turn of the loop, or a poll): its request waits,
 * its client watched, with no question to the node meanwhile. */
static void
mcp_fetch_later(struct mcp_fetch *f, uint64_t at)
{
	if (!f->watching) {
		http_req_watch(f->r, mcp_fetch_gone, f);
		f->watching = 1;
	}
	loop_timer_set(f->timer, at);
}

/* Answers with a tool error (or, for resources/read, a JSON-RPC error)
 * saying msg, and, when given, the file's state. */
static void
mcp_fetch_fail(struct mcp_fetch *f, const char *msg, cJSON *state)
{
	cJSON *res;

	if (f->uri != NULL) {
		cJSON *data = cJSON_CreateObject();

		cJSON_AddStringToObject(data, "uri", f->uri);
		if (state != NULL)
			cJSON_AddItemToObject(data, "state", state);
		mcp_reply_text(f->r, 200, mcp_error(f->id, f->rev == MCP_REV_2026_07_28 ?
		    JSONRPC_INVALID_PARAMS : MCP_RESOURCE_NOT_FOUND, msg, data));
	} else {
		res = mcp_tool_result(NULL, msg);
		if (state != NULL)
			cJSON_AddItemToObject(res, "structuredContent", state);
		mcp_reply_text(f->r, 200, mcp_result(f->id, res, f->rev));
	}
	mcp_fetch_free(f);
}

static void
mcp_fetch_answer(struct mcp_fetch *f, cJSON *res)
{
	mcp_reply_text(f->r, 200, mcp_result(f->id, res, f->rev));
	mcp_fetch_free(f);
}

static const char *
mcp_str(const cJSON *o, const char *name, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* The file is whole, saved: path.part renamed to path. */
static void
mcp_fetch_saved(struct mcp_fetch *f)
{
	cJSON *o;
	char msg[PAPO_ERR_LEN + 4200];
	int e = 0;

	if (fsync(f->fd) == -1 || close(f->fd) == -1)
		e = errno;
	f->fd = -1;
	if (e == 0 && f->overwrite && rename(f->part, f->path) == -1)
		e = errno;
	else if (e == 0 && !f->overwrite) {
		/* A link fails where a file appeared meanwhile, which
		 * rename would replace; where the file system has no hard
		 * links, a rename if nothing is there now. */
		if (link(f->part, f->path) == -1) {
			e = errno;
			if (e != EEXIST && access(f->path, F_OK) == -1 &&
			    errno == ENOENT && rename(f->part, f->path) == 0)
				e = 0;
		}
	}
	if (e != 0) {
		snprintf(msg, sizeof(msg), "fetch: cannot write %s: %s%s",
		    f->path, strerror(e), e == EEXIST ? " (it exists now: give "
		    "overwrite true to replace it)" : "");
		mcp_fetch_fail(f, msg, NULL);
		return;
	}
	if (!f->overwrite)
		unlink(f->part);
	free(f->part);
	f->part = NULL;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "ref", f->ref);
	cJSON_AddStringToObject(o, "path", f->path);
	cJSON_AddNumberToObject(o, "size", (double)node_blob_size(f->b));
	cJSON_AddStringToObject(o, "name", node_blob_name(f->b));
	cJSON_AddStringToObject(o, "type", node_blob_type(f->b));
	mcp_fetch_answer(f, mcp_tool_result(o, NULL));
}

/* Copies the next MCP_COPY_TURN bytes into path.part, and comes back on
 * the next turn of the loop until the whole file is there. */
static void
mcp_fetch_copy(void *arg)
{
	struct mcp_fetch *f = arg;
	uint64_t size = node_blob_size(f->b), turn = 0;
	char err[PAPO_ERR_LEN], msg[PAPO_ERR_LEN + 64];

	while (f->off < size && turn < MCP_COPY_TURN) {
		size_t n = size - f->off < MCP_COPY_BUF ?
		    (size_t)(size - f->off) : MCP_COPY_BUF;
		size_t done = 0;
		ssize_t w;

		if (node_blob_read(err, f->b, f->off, f->buf, n) == -1) {
			snprintf(msg, sizeof(msg), "fetch: %s", err);
			mcp_fetch_fail(f, msg, NULL);
			return;
		}
		while (done < n) {
			if ((w = write(f->fd, f->buf + done, n - done)) < 0) {
				if (errno == EINTR)
					continue;
				snprintf(msg, sizeof(msg), "fetch: cannot write "
				    "%.200s: %s", f->part, strerror(errno));
				mcp_fetch_fail(f, msg, NULL);
				return;
			}
			done += (size_t)w;
		}
		f->off += n;
		turn += n;
	}
	if (f->off < size) {
		mcp_fetch_later(f, loop_now_ns());
		return;
	}
	mcp_fetch_saved(f);
}

static void
mcp_fetch_save(struct mcp_fetch *f)
{
	char msg[PAPO_ERR_LEN + 4200];

	if ((f->part = mcp_join(f->path, ".part")) == NULL) {
		mcp_fetch_fail(f, "out of memory", NULL);
		return;
	}
	if ((f->buf = malloc(MCP_COPY_BUF)) == NULL) {
		mcp_fetch_fail(f, "out of memory", NULL);
		return;
	}
	if ((f->fd = open(f->part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0644)) == -1) {
		snprintf(msg, sizeof(msg), "fetch: cannot write %s: %s",
		    f->part, strerror(errno));
		free(f->part);
		f->part = NULL;
		mcp_fetch_fail(f, msg, NULL);
		return;
	}
	mcp_fetch_copy(f);
}

/* The whole file read into memory (at most max bytes: checked before). */
static unsigned char *
mcp_fetch_load(struct mcp_fetch *f, size_t size, char err[PAPO_ERR_LEN])
{
	unsigned char *data = malloc(size + 1);

	if (data == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	if (size > 0 && node_blob_read(err, f->b, 0, data, size) == -1) {
		free(data);
		return NULL;
	}
	data[size] = '\0';
	return data;
}

static char *
mcp_b64(const unsigned char *data, size_t len)
{
	size_t n = sodium_base64_ENCODED_LEN(len,
	    sodium_base64_VARIANT_ORIGINAL);
	char *out = malloc(n);

	if (out != NULL)
		sodium_bin2base64(out, n, data, len,
		    sodium_base64_VARIANT_ORIGINAL);
	return out;
}

/* The file's content as the answer: text, an image, or base64. */
static void
mcp_fetch_content(struct mcp_fetch *f)
{
	uint64_t size = node_blob_size(f->b);
	const char *type = node_blob_type(f->b);
	const char *name = node_blob_name(f->b);
	int text = strncmp(type, "text/", 5) == 0;
	int image = strncmp(type, "image/", 6) == 0;
	uint64_t max = image ? MCP_IMAGE_MAX : text ? MCP_TEXT_MAX :
	    MCP_BLOB_MAX;
	unsigned char *data;
	char *b64 = NULL, err[PAPO_ERR_LEN], msg[PAPO_ERR_LEN + 256];
	cJSON *res, *arr, *c, *in;

	if (size > max) {
		snprintf(msg, sizeof(msg), "%s (%.100s) is %llu bytes of %s, "
		    "more than the %llu that can be returned here: %s", f->ref,
		    name, (unsigned long long)size, type,
		    (unsigned long long)max, f->uri != NULL ? "use the fetch "
		    "tool with a path to save it to" : "give path (an absolute "
		    "path to save it to)");
		mcp_fetch_fail(f, msg, NULL);
		return;
	}
	if ((data = mcp_fetch_load(f, (size_t)size, err)) == NULL) {
		snprintf(msg, sizeof(msg), "%s: %s", f->ref, err);
		mcp_fetch_fail(f, msg, NULL);
		return;
	}
	/* Text that is not UTF-8 goes as bytes. */
	if (text && !utf8_valid((const char *)data, (size_t)size))
		text = 0;
	if (!text && (b64 = mcp_b64(data, (size_t)size)) == NULL) {
		free(data);
		mcp_fetch_fail(f, "out of memory", NULL);
		return;
	}
	res = cJSON_CreateObject();
	if (f->uri != NULL) {
		arr = cJSON_AddArrayToObject(res, "contents");
		c = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, c);
		cJSON_AddStringToObject(c, "uri", f->uri);
		cJSON_AddStringToObject(c, "name", name);
		cJSON_AddStringToObject(c, "mimeType", type);
		cJSON_AddStringToObject(c, text ? "text" : "blob", text ?
		    (const char *)data : b64);
		/* A file named by a message never changes. */
		mcp_cacheable(res, f->rev, MCP_TTL_MS, "private");
	} else {
		char uri[MCP_FILE_URI_MAX];

		snprintf(uri, sizeof(uri), MCP_ROOMS_URI "%s" MCP_FILES_URI
		    "%s", f->room, f->ref);
		arr = cJSON_AddArrayToObject(res, "content");
		c = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, c);
		if (text) {
			cJSON_AddStringToObject(c, "type", "text");
			cJSON_AddStringToObject(c, "text", (const char *)data);
		} else if (image) {
			cJSON_AddStringToObject(c, "type", "image");
			cJSON_AddStringToObject(c, "data", b64);
			cJSON_AddStringToObject(c, "mimeType", type);
		} else {
			cJSON_AddStringToObject(c, "type", "resource");
			in = cJSON_AddObjectToObject(c, "resource");
			cJSON_AddStringToObject(in, "uri", uri);
			cJSON_AddStringToObject(in, "mimeType", type);
			cJSON_AddStringToObject(in, "blob", b64);
		}
		cJSON_AddBoolToObject(res, "isError", 0);
	}
	free(data);
	free(b64);
	mcp_fetch_answer(f, res);
}

/* The file is here: saved, or returned. */
static void
mcp_fetch_here(struct mcp_fetch *f)
{
	char err[PAPO_ERR_LEN], msg[PAPO_ERR_LEN + 96];
	int code = 0;

	f->b = node_blob_open(err, &code, f->m->node, f->room[0] != '\0' ?
	    f->room : NULL, f->ref);
	if (f->b == NULL) {
		snprintf(msg, sizeof(msg), "%s: %s", f->ref, err);
		mcp_fetch_fail(f, msg, NULL);
		return;
	}
	if (f->path != NULL)
		mcp_fetch_save(f);
	else
		mcp_fetch_content(f);
}

static void mcp_fetch_ask(void *arg);

/* The node's answer: the file's state. */
static void
mcp_fetch_state(struct http_req *r, struct node_msg *msg, void *arg)
{
	struct mcp_fetch *f = arg;
	cJSON *o;
	const char *state;
	char text[PAPO_ERR_LEN + 320];
	uint64_t now = loop_now_ns();

	(void)r;
	f->asking = 0;
	if (f->closed) {
		node_msg_free(msg);
		mcp_fetch_fail(f, "papo serve is stopping", NULL);
		return;
	}
	if (msg->code != 0) {
		if (msg->code == 404)
			snprintf(text, sizeof(text), "no such file: %s is named "
			    "by no message of this room, and not held here (a "
			    "file's ref or uri is in its message's files)",
			    f->ref);
		else
			snprintf(text, sizeof(text), "%s: %s", f->ref, msg->err);
		node_msg_free(msg);
		mcp_fetch_fail(f, text, NULL);
		return;
	}
	if (msg->room_id[0] != '\0')
		snprintf(f->room, sizeof(f->room), "%s", msg->room_id);
	o = msg->json != NULL ? cJSON_Parse(msg->json) : NULL;
	node_msg_free(msg);
	state = mcp_str(o, "state", "");
	if (strcmp(state, "here") == 0) {
		cJSON_Delete(o);
		mcp_fetch_here(f);
		return;
	}
	if (strcmp(state, "failed") == 0) {
		snprintf(text, sizeof(text), "%s could not be fetched: %s", f->ref,
		    mcp_str(o, "error", "no reason given"));
		mcp_fetch_fail(f, text, o);
		return;
	}
	if (now >= f->deadline) {
		const cJSON *have = cJSON_GetObjectItemCaseSensitive(o, "have");
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(o, "size");

		/* The wait asked for, not the time it took: the answer may
		 * come a little after the deadline (a loaded machine). */
		snprintf(text, sizeof(text), "%s is not here yet after %.0f s: "
		    "it is %s%s (%.0f of %.0f bytes here); call fetch again to "
		    "wait on", f->ref, (double)(f->deadline - f->start) /
		    NS_PER_S,
		    state, strcmp(state, "waiting") == 0 ? ", no member online "
		    "holds it" : "", cJSON_IsNumber(have) ? have->valuedouble : 0,
		    cJSON_IsNumber(size) ? size->valuedouble : 0);
		mcp_fetch_fail(f, text, o);
		return;
	}
	cJSON_Delete(o);
	/* Asked again soon: the fetch goes on in the node meanwhile. */
	mcp_fetch_later(f, now + MCP_POLL_NS < f->deadline ?
	    now + MCP_POLL_NS : f->deadline);
}

/* Asks the node for the file's state (NODE_FETCH first, then NODE_BLOB:
 * asking again does not restart it). */
static void
mcp_fetch_ask(void *arg)
{
	struct mcp_fetch *f = arg;
	struct node_msg *req;

	if (f->b != NULL) {              /* saving: the copy's turn */
		mcp_fetch_copy(f);
		return;
	}
	req = node_msg_new(f->asked ? NODE_BLOB : NODE_FETCH);
	if (req == NULL || (node_args_blob(req)->ref = strdup(f->ref)) == NULL ||
	    (f->room[0] != '\0' && (req->room = strdup(f->room)) == NULL)) {
		node_msg_free(req);
		mcp_fetch_fail(f, "out of memory", NULL);
		return;
	}
	if (f->watching) {
		http_req_watch(f->r, NULL, NULL);
		f->watching = 0;
	}
	f->asking = 1;
	f->asked = 1;
	http_submit(f->r, f->m->node, req, mcp_fetch_state, f);
}

/* A fetch of ref in room ("": the default) for r: answered as the fetch
 * tool (uri NULL) or resources/read of uri. */
static struct mcp_fetch *
mcp_fetch_new(struct mcp *m, int rev, struct http_req *r,
    const cJSON *id, const char *room, const char *ref, const char *uri,
    double timeout_s)
{
	struct mcp_fetch *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->fd = -1;
	f->m = m;
	f->r = r;
	f->rev = rev;
	LIST_INSERT_HEAD(&m->fetches, f, entry);
	if ((f->id = cJSON_Duplicate(id, 1)) == NULL ||
	    (f->timer = loop_timer_new(m->loop, mcp_fetch_ask, f)) == NULL ||
	    (uri != NULL && (f->uri = strdup(uri)) == NULL)) {
		mcp_fetch_free(f);
		return NULL;
	}
	snprintf(f->room, sizeof(f->room), "%s", room);
	snprintf(f->ref, sizeof(f->ref), "%s", ref);
	f->start = loop_now_ns();
	f->deadline = f->start + (uint64_t)(timeout_s * NS_PER_S);
	return f;
}

/* Whether ref is one a file can be named by: base32 letters and digits. */
static int
mcp_ref_ok(const char *ref)
{
	size_t n = strlen(ref);

	if (n == 0 || n > MCP_REF_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((ref[i] >= 'a' && ref[i] <= 'z') ||
		    (ref[i] >= 'A' && ref[i] <= 'Z') ||
		    (ref[i] >= '0' && ref[i] <= '9')))
			return 0;
	return 1;
}

/*
 * The room and ref a file's URI names (papo://rooms/ID/files/REF): 0, or
 * -1 when uri is not one.
 */
static int
mcp_file_parse(const char *uri, char room[PAPO_ROOMID_LEN + 1],
    char ref[MCP_REF_MAX + 1])
{
	const size_t pre = sizeof(MCP_ROOMS_URI) - 1;
	const size_t mid = sizeof(MCP_FILES_URI) - 1;

	if (strncmp(uri, MCP_ROOMS_URI, pre) != 0 ||
	    strlen(uri) <= pre + PAPO_ROOMID_LEN + mid ||
	    strncmp(uri + pre + PAPO_ROOMID_LEN, MCP_FILES_URI, mid) != 0 ||
	    !mcp_ref_ok(uri + pre + PAPO_ROOMID_LEN + mid))
		return -1;
	snprintf(room, PAPO_ROOMID_LEN + 1, "%.*s", PAPO_ROOMID_LEN,
	    uri + pre);
	snprintf(ref, MCP_REF_MAX + 1, "%s", uri + pre + PAPO_ROOMID_LEN + mid);
	return 0;
}

int
mcp_file_uri(const char *uri)
{
	const size_t pre = sizeof(MCP_ROOMS_URI) - 1;

	return strncmp(uri, MCP_ROOMS_URI, pre) == 0 &&
	    strlen(uri) > pre + PAPO_ROOMID_LEN &&
	    strncmp(uri + pre + PAPO_ROOMID_LEN, MCP_FILES_URI,
	    sizeof(MCP_FILES_URI) - 1) == 0;
}

/* Whether session s may read files of room (an id): 0, or -1 with err. */
static int
mcp_file_room(const struct mcp_session *s, const char *room,
    char err[PAPO_ERR_LEN])
{
	if (mcp_room_get(s->m, room) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "no such room: this daemon is not "
		    "in room %s", room);
		return -1;
	}
	if (s->room[0] != '\0' && strcmp(s->room, room) != 0) {
		snprintf(err, PAPO_ERR_LEN, "this session is bound to room %s "
		    "(%.8s) by /mcp?room=, and the file is another room's",
		    s->room_name, s->room);
		return -1;
	}
	return 0;
}

void
tool_fetch(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const void *in, const cJSON *meta, const char *room)
{
	const struct mcp_fetch_in *a = in;
	const char *path = a->path;
	char msg[PAPO_ERR_LEN + 4200], err[PAPO_ERR_LEN];
	char in_room[PAPO_ROOMID_LEN + 1], name[MCP_REF_MAX + 1];
	struct mcp_fetch *f;
	struct stat st;

	(void)meta;
	snprintf(in_room, sizeof(in_room), "%s", room);
	/* A file's URI names its room too. */
	if (mcp_file_parse(a->ref, in_room, name) == 0) {
		if (mcp_file_room(s, in_room, err) == -1) {
			snprintf(msg, sizeof(msg), "fetch: %s", err);
			mcp_tool_error(s, r, id, msg);
			return;
		}
	} else if (mcp_ref_ok(a->ref))
		snprintf(name, sizeof(name), "%s", a->ref);
	else {
		mcp_tool_error(s, r, id, "fetch: ref must be a file's ref or "
		    "uri (papo://rooms/ID/files/REF), as its message's files "
		    "give them");
		return;
	}
	if (path != NULL && path[0] != '/') {
		mcp_tool_error(s, r, id, "fetch: path must be an absolute path "
		    "(starting with /) to save the file to");
		return;
	}
	if (path != NULL && stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(msg, sizeof(msg), "fetch: %s is a directory: "
			    "give the path of the file to write", path);
			mcp_tool_error(s, r, id, msg);
			return;
		}
		if (!a->overwrite) {
			snprintf(msg, sizeof(msg), "fetch: %s exists: give "
			    "overwrite true to replace it, or another path",
			    path);
			mcp_tool_error(s, r, id, msg);
			return;
		}
	}
	if ((f = mcp_fetch_new(s->m, s->rev, r, id, in_room, name, NULL,
	    a->timeout_s)) == NULL || (path != NULL &&
	    (f->path = strdup(path)) == NULL)) {
		if (f != NULL)
			mcp_fetch_free(f);
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	f->overwrite = a->overwrite;
	mcp_fetch_ask(f);
}

void
mcp_file_read(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const char *uri)
{
	char room[PAPO_ROOMID_LEN + 1], ref[MCP_REF_MAX + 1];
	char err[PAPO_ERR_LEN], msg[PAPO_ERR_LEN + 32];
	struct mcp_fetch *f;
	cJSON *data;

	if (mcp_file_parse(uri, room, ref) == -1 ||
	    mcp_file_room(s, room, err) == -1) {
		if (mcp_file_parse(uri, room, ref) == -1)
			snprintf(err, sizeof(err), "not a file's URI: a file is "
			    MCP_ROOMS_URI "ID" MCP_FILES_URI "REF, as its "
			    "message's files give it");
		snprintf(msg, sizeof(msg), "no such resource: %s", err);
		data = cJSON_CreateObject();
		cJSON_AddStringToObject(data, "uri", uri);
		mcp_reply_text(r, 200, mcp_error(id, s->rev == MCP_REV_2026_07_28 ?
		    JSONRPC_INVALID_PARAMS : MCP_RESOURCE_NOT_FOUND, msg, data));
		return;
	}
	if ((f = mcp_fetch_new(s->m, s->rev, r, id, room, ref, uri,
	    MCP_READ_WAIT_S)) == NULL) {
		mcp_reply_error(r, 200, id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	mcp_fetch_ask(f);
}

void
mcp_files_close(struct mcp *m)
{
	struct mcp_fetch *f;

	while ((f = LIST_FIRST(&m->fetches)) != NULL) {
		/* One with the node is answered when the node gives its
		 * request back. */
		if (f->asking) {
			LIST_REMOVE(f, entry);
			f->closed = 1;
			loop_timer_free(f->timer);
			f->timer = NULL;
			continue;
		}
		mcp_fetch_fail(f, "papo serve is stopping", NULL);
	}
}

/* resources/list: the files of each room's recent messages. */

struct mcp_listing {
	struct mcp *m;
	cJSON *id;
	int rev;                     /* MCP_REV_* of the session */
	cJSON *res;
	char rooms[PAPO_ROOMS_MAX][PAPO_ROOMID_LEN + 1];
	size_t nrooms, next, nfiles;
};

static void
mcp_listing_end(struct mcp_listing *l, struct http_req *r)
{
	/* The files change with the messages. */
	mcp_cacheable(l->res, l->rev, 0, "private");
	mcp_reply_text(r, 200, mcp_result(l->id, l->res, l->rev));
	cJSON_Delete(l->id);
	free(l);
}

static void mcp_listing_next(struct mcp_listing *l, struct http_req *r);

/* A file of a message as a resource. */
static void
mcp_listing_add(struct mcp_listing *l, cJSON *arr, const cJSON *msg,
    const cJSON *file, const char *room)
{
	const cJSON *ref = cJSON_GetObjectItemCaseSensitive(file, "ref");
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(file, "size");
	const cJSON *e;
	char uri[MCP_FILE_URI_MAX], desc[PAPO_NAME_MAX * 2 + 160];
	cJSON *o;

	if (!cJSON_IsString(ref) || !mcp_ref_ok(ref->valuestring))
		return;
	snprintf(uri, sizeof(uri), MCP_ROOMS_URI "%s" MCP_FILES_URI "%s", room,
	    ref->valuestring);
	cJSON_ArrayForEach(e, arr)
		if (strcmp(mcp_str(e, "uri", ""), uri) == 0)
			return;
	snprintf(desc, sizeof(desc), "A file %.64s shared in room %.64s (%s).",
	    mcp_str(msg, "from", "a member"), mcp_str(msg, "room", room),
	    mcp_str(file, "state", "?"));
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "uri", uri);
	cJSON_AddStringToObject(o, "name", mcp_str(file, "name", "file"));
	cJSON_AddStringToObject(o, "description", desc);
	cJSON_AddStringToObject(o, "mimeType", mcp_str(file, "type",
	    "application/octet-stream"));
	if (cJSON_IsNumber(size))
		cJSON_AddNumberToObject(o, "size", size->valuedouble);
	cJSON_AddItemToArray(arr, o);
	l->nfiles++;
}

static void
mcp_listing_history(struct http_req *r, struct node_msg *msg, void *arg)
{
	struct mcp_listing *l = arg;
	cJSON *o = msg->code == 0 && msg->json != NULL ?
	    cJSON_Parse(msg->json) : NULL;
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(l->res, "resources");
	const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(o, "messages");
	const cJSON *m, *f;
	const char *room = l->rooms[l->next - 1];

	/* Newest first, so the bound keeps the recent ones. */
	for (int i = cJSON_GetArraySize(msgs) - 1; i >= 0 &&
	    l->nfiles < MCP_LIST_FILES; i--) {
		m = cJSON_GetArrayItem(msgs, i);
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(m,
		    "files"))
			if (l->nfiles < MCP_LIST_FILES)
				mcp_listing_add(l, arr, m, f, room);
	}
	cJSON_Delete(o);
	node_msg_free(msg);
	mcp_listing_next(l, r);
}

static void
mcp_listing_next(struct mcp_listing *l, struct http_req *r)
{
	struct node_msg *req;

	if (l->next == l->nrooms || l->nfiles >= MCP_LIST_FILES) {
		mcp_listing_end(l, r);
		return;
	}
	if ((req = node_msg_new(NODE_HISTORY)) == NULL ||
	    (req->room = strdup(l->rooms[l->next])) == NULL) {
		node_msg_free(req);
		mcp_listing_end(l, r);
		return;
	}
	node_args_history(req)->limit = MCP_LIST_MESSAGES;
	l->next++;
	http_submit(r, l->m->node, req, mcp_listing_history, l);
}

void
mcp_files_list(struct mcp_session *s, struct http_req *r, const cJSON *id,
    cJSON *res)
{
	struct mcp_listing *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		mcp_cacheable(res, s->rev, 0, "private");
		mcp_reply_text(r, 200, mcp_result(id, res, s->rev));
		return;
	}
	l->m = s->m;
	l->id = cJSON_Duplicate(id, 1);
	l->rev = s->rev;
	l->res = res;
	for (size_t i = 0; i < s->m->nrooms; i++)
		if (s->room[0] == '\0' || strcmp(s->room, s->m->rooms[i].id) == 0)
			memcpy(l->rooms[l->nrooms++], s->m->rooms[i].id,
			    PAPO_ROOMID_LEN + 1);
	mcp_listing_next(l, r);
}
