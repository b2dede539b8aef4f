/*
 * retain.c: retention, on the node thread (retain.h; docs/RELIABILITY.md,
 * "Retention").  It compacts the log to what PAPO_KEEP keeps, checking a
 * count at most every quarter of it and days at most once a minute, and
 * says what is kept as JSON.  It never blocks but for the compaction
 * itself (store_compact).
 */
#include <stdlib.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/room/retain.h"

/* Its own: when to check again. */
struct retention {
	uint64_t retain_checked;    /* ns of the last days-retention check */
	size_t retain_at;           /* count retention: messages held when
	                             * the next check is worth making */
};

#define RETAIN_CHECK_NS (60ull * NS_PER_S)   /* days: checked this often */

long
deliver_retain(struct room *room)
{
	const struct store_keep *k = &room->env.set->keep;
	char err[PAPO_ERR_LEN];
	uint64_t now = loop_now_ns();
	long n;

	if (k->count == 0 && k->ms == 0)
		return 0;
	/* A count costs nothing to check; days look at every message. */
	if (k->ms != 0) {
		if (room->retention->retain_checked != 0 &&
		    now - room->retention->retain_checked < RETAIN_CHECK_NS)
			return 0;
		room->retention->retain_checked = now;
	}
	if (k->count != 0) {
		struct store_stats st;

		store_stats(room->env.store, &st);
		if (st.msgs < room->retention->retain_at)
			return 0;
	}
	if (!store_compact_due(room->env.store, k, loop_wall_ms(), 1))
		return 0;
	if ((n = store_compact(err, room->env.store, k, loop_wall_ms())) == -1)
		room_log(room, LOG_ERROR, "retention: %s", err);
	else if (n > 0)
		room_log(room, LOG_INFO, "retention (PAPO_KEEP=%s): %ld messages "
		    "dropped from the log", room->env.set->keep_text, n);
	/* Own messages not yet acknowledged can keep the log over the
	 * count; the next try waits for as many new ones as a compaction
	 * is due after, rather than sorting the log at every message. */
	if (k->count != 0) {
		struct store_stats st;

		store_stats(room->env.store, &st);
		room->retention->retain_at = st.msgs + (k->count / 4 > 0 ? k->count / 4 : 1);
	}
	return n > 0 ? n : 0;
}

cJSON *
deliver_retention_json(const struct room *room)
{
	struct store_stats st;
	cJSON *o;

	store_stats(room->env.store, &st);
	if (st.floor == 0 && room->env.set->keep_text == NULL)
		return NULL;
	o = cJSON_CreateObject();
	if (room->env.set->keep_text != NULL)
		cJSON_AddStringToObject(o, "keep", room->env.set->keep_text);
	else
		cJSON_AddNullToObject(o, "keep");
	if (st.floor != 0)
		cJSON_AddNumberToObject(o, "starts", (double)st.floor);
	else
		cJSON_AddNullToObject(o, "starts");
	cJSON_AddNumberToObject(o, "dropped", (double)st.gone);
	return o;
}

int
retain_new(struct room *room)
{
	if ((room->retention = calloc(1, sizeof(*room->retention))) == NULL)
		return -1;
	return 0;
}

void
retain_free(struct room *room)
{
	free(room->retention);
	room->retention = NULL;
}
