/*
 * reach.c: observed addresses, NAT kind and advertised addresses
 * (reach.h).
 */
#include <string.h>

#include "node/net/reach.h"

static int
reach_is_local(const struct reach *r, const struct addr *a)
{
	return addr_in(a, r->local, r->nlocal);
}

static int
reach_same_ip(const struct addr *a, const struct addr *b)
{
	return a->family == b->family &&
	    memcmp(a->ip, b->ip, a->family == 4 ? 4 : 16) == 0;
}

void
reach_init(struct reach *r, const struct addr *advertise, size_t nadv,
    const struct addr *local, size_t nlocal)
{
	memset(r, 0, sizeof(*r));
	r->nadvertise = nadv < PAPO_ADDR_MAX ? nadv : PAPO_ADDR_MAX;
	if (r->nadvertise > 0)
		memcpy(r->advertise, advertise, r->nadvertise * sizeof(*advertise));
	r->nlocal = nlocal < PAPO_ADDR_MAX ? nlocal : PAPO_ADDR_MAX;
	if (r->nlocal > 0)
		memcpy(r->local, local, r->nlocal * sizeof(*local));
}

/* What reach_addrs gives, to tell a change. */
static size_t
reach_snapshot(const struct reach *r, struct addr *out)
{
	return reach_addrs(r, out, PAPO_ADDR_MAX);
}

static int
reach_changed(const struct reach *r, const struct addr *before, size_t n)
{
	struct addr now[PAPO_ADDR_MAX];
	size_t k = reach_snapshot(r, now);

	if (k != n)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (!addr_equal(&now[i], &before[i]))
			return 1;
	return 0;
}

int
reach_set_local(struct reach *r, const struct addr *local, size_t nlocal)
{
	struct addr before[PAPO_ADDR_MAX];
	size_t n = reach_snapshot(r, before);

	r->nlocal = nlocal < PAPO_ADDR_MAX ? nlocal : PAPO_ADDR_MAX;
	if (r->nlocal > 0)
		memcpy(r->local, local, r->nlocal * sizeof(*local));
	return reach_changed(r, before, n);
}

int
reach_observe(struct reach *r, const uint8_t peer[PAPO_KEY_LEN], const struct addr *seen)
{
	struct addr before[PAPO_ADDR_MAX];
	size_t n = reach_snapshot(r, before), i;

	for (i = 0; i < r->nobs; i++)
		if (memcmp(r->obs[i].peer, peer, PAPO_KEY_LEN) == 0)
			break;
	if (i == r->nobs) {
		if (r->nobs < REACH_OBS_MAX)
			r->nobs++;
		else
			i = r->next++ % REACH_OBS_MAX;   /* the oldest goes */
	}
	memcpy(r->obs[i].peer, peer, PAPO_KEY_LEN);
	r->obs[i].seen = *seen;
	return reach_changed(r, before, n);
}

int
reach_forget(struct reach *r, const uint8_t peer[PAPO_KEY_LEN])
{
	struct addr before[PAPO_ADDR_MAX];
	size_t n = reach_snapshot(r, before);

	for (size_t i = 0; i < r->nobs; i++)
		if (memcmp(r->obs[i].peer, peer, PAPO_KEY_LEN) == 0) {
			r->obs[i] = r->obs[--r->nobs];
			break;
		}
	return reach_changed(r, before, n);
}

int
reach_public(const struct reach *r, struct addr *out)
{
	for (size_t i = 0; i < r->nobs; i++) {
		if (reach_is_local(r, &r->obs[i].seen))
			continue;
		for (size_t j = i + 1; j < r->nobs; j++)
			if (addr_equal(&r->obs[i].seen, &r->obs[j].seen)) {
				*out = r->obs[i].seen;
				return 0;
			}
	}
	return -1;
}

enum reach_nat
reach_nat(const struct reach *r)
{
	struct addr pub;
	size_t local = 0;

	if (reach_public(r, &pub) == 0)
		return REACH_CONE;
	for (size_t i = 0; i < r->nobs; i++) {
		if (reach_is_local(r, &r->obs[i].seen)) {
			local++;
			continue;
		}
		for (size_t j = i + 1; j < r->nobs; j++)
			if (!reach_is_local(r, &r->obs[j].seen) &&
			    reach_same_ip(&r->obs[i].seen, &r->obs[j].seen))
				return REACH_SYMMETRIC;
	}
	/* Every peer that told us sees us where we are bound. */
	return local >= 2 && local == r->nobs ? REACH_OPEN : REACH_UNKNOWN;
}

static size_t
reach_add(struct addr *out, size_t n, size_t max, const struct addr *a)
{
	if (addr_in(a, out, n))
		return n;
	if (n < max)
		out[n++] = *a;
	return n;
}

/* Sets or clears one learned address; 1 when the advertised list changed. */
static int
reach_set(struct reach *r, struct addr *slot, int *has, const struct addr *a)
{
	struct addr before[PAPO_ADDR_MAX];
	size_t n = reach_snapshot(r, before);

	*has = a != NULL;
	if (a != NULL)
		*slot = *a;
	return reach_changed(r, before, n);
}

int
reach_set_mapped(struct reach *r, const struct addr *a)
{
	return reach_set(r, &r->mapped, &r->has_mapped, a);
}

int
reach_set_relayed(struct reach *r, const struct addr *a)
{
	return reach_set(r, &r->relayed, &r->has_relayed, a);
}

size_t
reach_addrs(const struct reach *r, struct addr *out, size_t max)
{
	struct addr pub;
	size_t n = 0, nloop = 0, room;

	if (max == 0)
		return 0;
	room = r->has_relayed ? max - 1 : max;
	for (size_t i = 0; i < r->nadvertise; i++)
		n = reach_add(out, n, room, &r->advertise[i]);
	if (r->has_mapped)
		n = reach_add(out, n, room, &r->mapped);
	if (reach_public(r, &pub) == 0)
		n = reach_add(out, n, room, &pub);
	for (size_t i = 0; i < r->nlocal; i++)
		nloop += addr_is_loopback(&r->local[i]);
	for (size_t i = 0; i < r->nlocal; i++)
		if (nloop == r->nlocal || !addr_is_loopback(&r->local[i]))
			n = reach_add(out, n, room, &r->local[i]);
	if (r->has_relayed)
		n = reach_add(out, n, max, &r->relayed);
	return n;
}

size_t
reach_punch_addrs(const struct reach *r, struct addr *out, size_t max)
{
	size_t n = reach_addrs(r, out, max);

	for (size_t i = 0; i < r->nobs; i++)
		if (!reach_is_local(r, &r->obs[i].seen))
			n = reach_add(out, n, max, &r->obs[i].seen);
	return n;
}

const char *
reach_nat_name(enum reach_nat n)
{
	switch (n) {
	case REACH_OPEN: return "open";
	case REACH_CONE: return "cone";
	case REACH_SYMMETRIC: return "symmetric";
	case REACH_UNKNOWN: break;
	}
	return "unknown";
}
