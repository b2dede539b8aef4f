/*
 * outbox.c: the outbox of a room, on the node thread (outbox.h;
 * docs/RELIABILITY.md).  It keeps each own message until every member it
 * waits for acknowledged it, answers its send request (delivered, or
 * queued), sends what waits to members as they come back or through new
 * paths, resends it all every 30 s with a hello to every neighbour
 * (anti-entropy), and takes outbox.jsonl up again at start.  It never
 * blocks: the only waits are loop timers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/outbox.h"

#define OUTBOX_RETRY_NS (30ull * NS_PER_S)

/* Its own: the entries, newest first, and the retry timer. */
struct outbox {
	struct outmsg *list;
	struct loop_timer *retry_timer;
};

/* The outbox. */

static int
outmsg_has(struct member **v, size_t n, const struct member *m)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == m)
			return 1;
	return 0;
}

static cJSON *
names_json(struct member **v, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	char nb[16];

	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(member_name(v[i], nb)));
	return arr;
}

/* Answers the send request of o, if it still waits. */
void
outmsg_answer(struct room *room, struct outmsg *o)
{
	struct node_msg *req = o->req;
	cJSON *r;
	int delivered = o->nwait == 0 && (o->ndone > 0 || !o->any);

	if (req == NULL)
		return;
	o->req = NULL;
	loop_timer_set(o->timer, 0);
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "id", o->id);
	cJSON_AddStringToObject(r, "state", delivered ? "delivered" : "queued");
	cJSON_AddItemToObject(r, "delivered_to", names_json(o->done, o->ndone));
	cJSON_AddItemToObject(r, "waiting_for", names_json(o->wait, o->nwait));
	if (o->files != NULL) {
		cJSON_AddItemToObject(r, "files", o->files);
		o->files = NULL;
	}
	/* Answered as the daemon stops (room_free): kept in the outbox. */
	if (room->stopping)
		cJSON_AddBoolToObject(r, "stopping", 1);
	req->json = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	if (req->json == NULL) {
		req->code = 500;
		snprintf(req->err, sizeof(req->err), "out of memory");
	}
	room->env.emit(room->env.arg, req);
}

static void
outmsg_free(struct room *room, struct outmsg *o)
{
	struct outmsg **p;

	for (p = &room->outbox->list; *p != NULL; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			break;
		}
	outmsg_answer(room, o);
	loop_timer_free(o->timer);
	cJSON_Delete(o->files);
	free(o->wait);
	free(o->done);
	free(o);
}

static void
outmsg_timeout(void *arg)
{
	struct outmsg *o = arg;

	outmsg_answer(o->room, o);
}

struct outmsg *
outmsg_new(struct room *room, const char *id)
{
	struct outmsg *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return NULL;
	strcpy(o->id, id);
	o->room = room;
	if ((o->timer = loop_timer_new(room->env.loop, outmsg_timeout, o)) == NULL ||
	    (o->wait = calloc(members_n(room) + 1, sizeof(*o->wait))) == NULL ||
	    (o->done = calloc(o->done_cap = members_n(room) + 1,
	    sizeof(*o->done))) == NULL) {
		loop_timer_free(o->timer);
		free(o->wait);
		free(o);
		return NULL;
	}
	o->next = room->outbox->list;
	room->outbox->list = o;
	return o;
}

struct outmsg *
outmsg_find(struct room *room, const char *id)
{
	for (struct outmsg *o = room->outbox->list; o != NULL; o = o->next)
		if (strcmp(o->id, id) == 0)
			return o;
	return NULL;
}

/* Whether o's message is to go to m (connected) now: when o waits for
 * it, or, through it, to anyone, unless m has it already. */
static int
outmsg_for(const struct outmsg *o, const struct member *m, int through)
{
	if (through)
		return !outmsg_has(o->done, o->ndone, m);
	return o->any || outmsg_has(o->wait, o->nwait, m);
}

static void
outmsg_send(struct room *room, struct outmsg *o, struct member *only,
    int through)
{
	struct frame f;
	size_t i;

	/* Read the message back only when someone is there to take it. */
	for (i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);

		if (m->conn != NULL && (only == NULL || m == only) &&
		    outmsg_for(o, m, through))
			break;
	}
	if (i == members_n(room))
		return;
	memset(&f, 0, sizeof(f));
	if (store_get(room->env.store, o->id, &f.u.msg) == -1)
		return;
	f.type = FRAME_MSG;
	for (i = 0; i < members_n(room); i++) {
		struct member *m = member_at(room, i);

		if (m->conn == NULL || (only != NULL && m != only))
			continue;
		if (outmsg_for(o, m, through))
			member_send(room, m, &f);
	}
	frame_clear(&f);
}

static void
outmsg_resend(struct room *room, struct outmsg *o, struct member *only)
{
	outmsg_send(room, o, only, 0);
}

static void
outmsg_through(struct room *room, struct outmsg *o, struct member *only)
{
	outmsg_send(room, o, only, 1);
}

void
deliver_member_back(struct room *room, const struct member *m)
{
	for (struct outmsg *o = room->outbox->list; o != NULL; o = o->next)
		if (o->any || outmsg_has(o->wait, o->nwait, m))
			outmsg_through(room, o, NULL);
}

static void
deliver_retry(void *arg)
{
	struct room *room = arg;

	for (struct outmsg *o = room->outbox->list; o != NULL; o = o->next)
		outmsg_resend(room, o, NULL);
	/* Anti-entropy: greeting every neighbour again compares histories
	 * and syncs what a lost frame or a closed connection left out. */
	for (size_t i = 0; i < members_n(room); i++)
		if (member_at(room, i)->conn != NULL)
			hello_send(room, quic_data(member_at(room, i)->conn));
	loop_timer_set(room->outbox->retry_timer, loop_now_ns() + OUTBOX_RETRY_NS);
}

/* A delivered ack for an own message. */
void
outmsg_acked(struct room *room, struct outmsg *o, struct member *by)
{
	size_t i;

	for (i = 0; i < o->nwait; i++)
		if (o->wait[i] == by) {
			o->wait[i] = o->wait[--o->nwait];
			break;
		}
	/* A member added since the message was made may ack it too. */
	if (!outmsg_has(o->done, o->ndone, by) && o->ndone == o->done_cap) {
		struct member **v = realloc(o->done, 2 * o->done_cap * sizeof(*v));

		if (v != NULL) {
			o->done = v;
			o->done_cap *= 2;
		}
	}
	if (!outmsg_has(o->done, o->ndone, by) && o->ndone < o->done_cap)
		o->done[o->ndone++] = by;
	if (o->nwait > 0)
		return;
	if (store_outbox_done(room->env.store, o->id) == -1)
		room_log(room, LOG_WARN, "cannot update the outbox: %s", strerror(errno));
	outmsg_free(room, o);
}

/* At start: the messages outbox.jsonl kept wait for acks again. */
void
deliver_load_outbox(struct room *room)
{
	const char *id;

	for (size_t i = 0; (id = store_outbox_at(room->env.store, i)) != NULL; i++) {
		struct frame_msg m;
		struct outmsg *o;
		struct member *to;
		char gone[PAPO_MSGID_LEN + 1];

		memset(&m, 0, sizeof(m));
		if (store_get(room->env.store, id, &m) == -1) {
			/* A send that failed (its entry written, its message
			 * not) or a message retention or damage took: nothing
			 * to deliver. */
			memcpy(gone, id, sizeof(gone));
			room_log(room, LOG_WARN, "outbox message %s is not in the log; "
			    "dropped from the outbox", gone);
			if (store_outbox_del(room->env.store, gone) == 0)
				i--;
			continue;
		}
		/* Whom it waited for died with the process: an addressee
		 * still waits for its addressee; otherwise the first member
		 * to store it is enough, and sync takes it further. */
		if ((o = outmsg_new(room, id)) != NULL) {
			if (m.has_to && (to = member_add(room, m.to)) != NULL)
				o->wait[o->nwait++] = to;
			o->any = o->nwait == 0;
		}
		frame_msg_clear(&m);
	}
}

/* What waits in the outbox goes to m, and through it to those it
 * reaches: a member back, or a new path, takes it now. */
void
outbox_through(struct room *room, struct member *m)
{
	for (struct outmsg *o = room->outbox->list; o != NULL; o = o->next)
		outmsg_through(room, o, m);
}

size_t
outbox_n(const struct room *room)
{
	size_t nout = 0;

	for (struct outmsg *om = room->outbox->list; om != NULL; om = om->next)
		nout++;
	return nout;
}

/* Start and stop. */

int
outbox_new(struct room *room)
{
	if ((room->outbox = calloc(1, sizeof(*room->outbox))) == NULL ||
	    (room->outbox->retry_timer = loop_timer_new(room->env.loop,
	    deliver_retry, room)) == NULL)
		return -1;
	return 0;
}

void
outbox_start(struct room *room)
{
	loop_timer_set(room->outbox->retry_timer, loop_now_ns() +
	    OUTBOX_RETRY_NS);
}

void
outbox_stop(struct room *room)
{
	if (room->outbox == NULL)
		return;
	while (room->outbox->list != NULL)
		outmsg_free(room, room->outbox->list);
}

void
outbox_free(struct room *room)
{
	if (room->outbox == NULL)
		return;
	loop_timer_free(room->outbox->retry_timer);
	free(room->outbox);
	room->outbox = NULL;
}
