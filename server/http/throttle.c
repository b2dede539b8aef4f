/*
 * throttle.c: wrong credentials counted per client (throttle.h).  A
 * fixed table of THROTTLE_CLIENTS clients; a new one takes the slot of
 * one that is neither counting nor slowed, else of the one whose
 * window began longest ago, so that the table never grows.  Pure
 * bookkeeping, main thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "server/http/throttle.h"

struct throttle_client {
	unsigned char key[THROTTLE_KEY_LEN];
	int used;
	unsigned fails;             /* within the window */
	uint64_t window;            /* when the window began */
	uint64_t slow_until;        /* slowed until then, or 0 */
	uint64_t next;              /* slowed: the next check from then */
};

struct throttle {
	struct throttle_client c[THROTTLE_CLIENTS];
};

struct throttle *
throttle_new(void)
{
	return calloc(1, sizeof(struct throttle));
}

void
throttle_free(struct throttle *t)
{
	free(t);
}

static struct throttle_client *
throttle_find(struct throttle *t, const unsigned char *key)
{
	for (size_t i = 0; i < THROTTLE_CLIENTS; i++)
		if (t->c[i].used && memcmp(t->c[i].key, key,
		    THROTTLE_KEY_LEN) == 0)
			return &t->c[i];
	return NULL;
}

/* Whether c neither counts nor is slowed at now. */
static int
throttle_idle(const struct throttle_client *c, uint64_t now)
{
	return !c->used || (now - c->window >= THROTTLE_WINDOW_MS &&
	    now >= c->slow_until);
}

uint64_t
throttle_wait(struct throttle *t, const unsigned char key[THROTTLE_KEY_LEN],
    uint64_t now)
{
	struct throttle_client *c = throttle_find(t, key);

	if (c == NULL || now >= c->slow_until)
		return 0;
	if (now < c->next)
		return c->next - now;
	c->next = now + THROTTLE_GAP_MS;
	return 0;
}

int
throttle_failed(struct throttle *t, const unsigned char key[THROTTLE_KEY_LEN],
    uint64_t now)
{
	struct throttle_client *c = throttle_find(t, key);

	if (c == NULL) {
		c = &t->c[0];
		for (size_t i = 0; i < THROTTLE_CLIENTS; i++) {
			if (throttle_idle(&t->c[i], now)) {
				c = &t->c[i];
				break;
			}
			if (t->c[i].window < c->window)
				c = &t->c[i];
		}
		memset(c, 0, sizeof(*c));
		memcpy(c->key, key, THROTTLE_KEY_LEN);
		c->used = 1;
		c->window = now;
	}
	if (now - c->window >= THROTTLE_WINDOW_MS) {
		c->window = now;
		c->fails = 0;
	}
	c->fails++;
	if (now < c->slow_until || c->fails >= THROTTLE_FAILS) {
		/* Slowed: until a quiet minute has passed, and its next
		 * check not before the gap. */
		if (now >= c->slow_until)
			c->next = now + THROTTLE_GAP_MS;
		c->slow_until = now + THROTTLE_SLOW_MS;
		return 1;
	}
	return 0;
}
