/*
 * msg.c: making and freeing struct node_msg (msg.h), for the node thread
 * and its callers alike.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "node/msg.h"

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
	free(m->room);
	free(m->name);
	free(m->about);
	free(m->text);
	free(m->to);
	free(m->from);
	free(m->files);
	free(m->cursor);
	free(m->json);
	free(m);
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
