/*
 * keyring.c: the key epochs a room holds and who its key changes removed
 * (keyring.h), on the node thread.  Plain state behind functions: no
 * I/O, no frames, no calls into the rest of the room; epoch.c decides
 * what goes in.  Secrets are wiped when freed.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "node/room/keyring.h"

struct keyring {
	struct epoch_held *epochs;  /* unsorted */
	size_t nepochs;
	struct removal *removed;    /* members removed, as epochs said */
	size_t nremoved;
	int gone;                   /* we were removed: me_removal says how */
	struct removal me_removal;
};

struct keyring *
keyring_new(void)
{
	return calloc(1, sizeof(struct keyring));
}

void
keyring_free(struct keyring *k)
{
	if (k == NULL)
		return;
	for (size_t i = 0; i < k->nepochs; i++) {
		free(k->epochs[i].frame);
		sodium_memzero(&k->epochs[i], sizeof(k->epochs[i]));
	}
	free(k->epochs);
	free(k->removed);
	free(k);
}

struct epoch_held *
keyring_find(const struct keyring *k, uint32_t n)
{
	for (size_t i = 0; i < k->nepochs; i++)
		if (k->epochs[i].n == n)
			return &k->epochs[i];
	return NULL;
}

const struct room_keys *
keyring_keys(const struct keyring *k, uint32_t n)
{
	struct epoch_held *e = keyring_find(k, n);

	return e != NULL ? &e->keys : NULL;
}

uint32_t
keyring_newest(const struct keyring *k)
{
	uint32_t n = 0;

	for (size_t i = 0; i < k->nepochs; i++)
		if (k->epochs[i].n > n)
			n = k->epochs[i].n;
	return n;
}

size_t
keyring_count(const struct keyring *k)
{
	return k->nepochs;
}

struct epoch_held *
keyring_at(const struct keyring *k, size_t i)
{
	return &k->epochs[i];
}

struct epoch_held *
keyring_add(struct keyring *k)
{
	struct epoch_held *v;

	if ((v = reallocarray(k->epochs, k->nepochs + 1, sizeof(*v))) == NULL)
		return NULL;
	k->epochs = v;
	memset(&v[k->nepochs], 0, sizeof(*v));
	return &v[k->nepochs++];
}

const struct removal *
keyring_removed(const struct keyring *k, const uint8_t id[PAPO_KEY_LEN])
{
	for (size_t i = 0; i < k->nremoved; i++)
		if (memcmp(k->removed[i].id, id, PAPO_KEY_LEN) == 0)
			return &k->removed[i];
	return NULL;
}

size_t
keyring_nremoved(const struct keyring *k)
{
	return k->nremoved;
}

const struct removal *
keyring_removal_at(const struct keyring *k, size_t i)
{
	return &k->removed[i];
}

struct removal *
keyring_remove(struct keyring *k)
{
	struct removal *v;

	if ((v = reallocarray(k->removed, k->nremoved + 1, sizeof(*v))) == NULL)
		return NULL;
	k->removed = v;
	memset(&v[k->nremoved], 0, sizeof(*v));
	return &v[k->nremoved++];
}

int
keyring_gone(const struct keyring *k)
{
	return k->gone;
}

const struct removal *
keyring_me_removal(const struct keyring *k)
{
	return k->gone ? &k->me_removal : NULL;
}

struct removal *
keyring_set_gone(struct keyring *k)
{
	k->gone = 1;
	return &k->me_removal;
}
