/*
 * msg.c: making and freeing struct node_msg (msg.h), for the node thread
 * and its callers alike.  What each kind's arguments own is said once,
 * in descs[] below; which part of the node takes each request is said
 * in node/roomset.c's requests[] table, which only the node thread
 * reads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/log.h"
#include "node/msg.h"

static void
send_free(union node_args *a)
{
	free(a->send.text);
	free(a->send.to);
	free(a->send.files);
}

static void
history_free(union node_args *a)
{
	free(a->history.from);
	free(a->history.ids);
}

static void
read_free(union node_args *a)
{
	free(a->read.ids);
}

static void
search_free(union node_args *a)
{
	free(a->search.text);
	free(a->search.from);
	free(a->search.to);
	free(a->search.cursor);
}

static void
member_free(union node_args *a)
{
	free(a->member.name);
}

static void
enter_free(union node_args *a)
{
	free(a->enter.text);
	free(a->enter.name);
	free(a->enter.about);
}

static void
blob_add_free(union node_args *a)
{
	free(a->blob_add.path);
	free(a->blob_add.name);
	free(a->blob_add.type);
}

static void
blob_free(union node_args *a)
{
	free(a->blob.ref);
}

/* Each kind's: what its arguments own (NULL: nothing, or none). */
static const struct node_kind_desc {
	void (*free)(union node_args *a);
} descs[NODE_KIND_END] = {
	[NODE_SEND] = { send_free },
	[NODE_HISTORY] = { history_free },
	[NODE_READ] = { read_free },
	[NODE_SEARCH] = { search_free },
	[NODE_ADMIN] = { member_free },
	[NODE_REMOVE] = { member_free },
	[NODE_RENAME] = { member_free },
	[NODE_JOIN] = { enter_free },
	[NODE_CREATE] = { enter_free },
	[NODE_BLOB_ADD] = { blob_add_free },
	[NODE_BLOB] = { blob_free },
	[NODE_FETCH] = { blob_free },
};

struct node_msg *
node_msg_new(enum node_kind kind)
{
	struct node_msg *m = calloc(1, sizeof(*m));

	if (m != NULL)
		m->kind = kind;
	return m;
}

void
node_msg_free(struct node_msg *m)
{
	if (m == NULL)
		return;
	if (m->kind > 0 && m->kind < NODE_KIND_END &&
	    descs[m->kind].free != NULL)
		descs[m->kind].free(&m->args);
	free(m->tag);
	free(m->room);
	free(m->json);
	free(m);
}

/* A wrong kind's arguments read would be another struct's bytes taken
 * for pointers: stopping at once is the only safe answer. */
struct node_msg *
node_msg_as(struct node_msg *m, unsigned kinds)
{
	if (m->kind <= 0 || m->kind >= NODE_KIND_END ||
	    (NODE_BIT(m->kind) & kinds) == 0) {
		log_msg(LOG_ERROR, "a message of kind %d read as one of kinds "
		    "%#x", (int)m->kind, kinds);
		abort();
	}
	return m;
}

void
node_msg_fail(struct node_msg *m, struct chan *out, int code,
    const char *fmt, ...)
{
	va_list ap;

	m->code = code;
	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	chan_push(out, &m->link);
}
