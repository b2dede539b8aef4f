/*
 * quic_cid.c: connection ids (quic.h): the endpoint's table from ids to
 * connections, a chained hash table keyed by SipHash under a random key
 * (the first id of a connection is the peer's choice, so the hash must
 * not be predictable); ids ngtcp2 issues and retires; stateless reset
 * tokens derived from the member key's secret.  Node thread.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "node/net/quic_int.h"

/* The stateless reset token of one of our connection ids. */
int
quic_reset_token(const struct quic *q, const ngtcp2_cid *cid, uint8_t *token)
{
	return ngtcp2_crypto_generate_stateless_reset_token(token,
	    q->reset_secret, sizeof(q->reset_secret), cid) == 0 ? 0 : -1;
}

/* The connection id table (struct cidmap). */

static size_t
quic_cidmap_slot(const struct cidmap *m, const uint8_t *id, size_t len)
{
	uint8_t h[crypto_shorthash_BYTES];
	uint64_t v = 0;

	crypto_shorthash(h, id, len, m->key);
	for (size_t i = 0; i < sizeof(v); i++)
		v = v << 8 | h[i];
	return (size_t)(v & (m->nb - 1));
}

int
quic_cidmap_init(struct cidmap *m)
{
	m->nb = QUIC_CIDMAP_MIN;
	m->n = 0;
	randombytes_buf(m->key, sizeof(m->key));
	m->b = calloc(m->nb, sizeof(*m->b));
	return m->b != NULL ? 0 : -1;
}

void
quic_cidmap_free(struct cidmap *m)
{
	for (size_t i = 0; m->b != NULL && i < m->nb; i++)
		while (m->b[i] != NULL) {
			struct cid_entry *e = m->b[i];

			m->b[i] = e->next;
			free(e);
		}
	free(m->b);
	m->b = NULL;
}

/* Doubles the buckets; on failure the table stays as it was (longer
 * chains, still right). */
static void
quic_cidmap_grow(struct cidmap *m)
{
	struct cid_entry **old = m->b;
	size_t oldnb = m->nb;

	if ((m->b = calloc(oldnb * 2, sizeof(*m->b))) == NULL) {
		m->b = old;
		return;
	}
	m->nb = oldnb * 2;
	for (size_t i = 0; i < oldnb; i++)
		while (old[i] != NULL) {
			struct cid_entry *e = old[i];
			size_t s = quic_cidmap_slot(m, e->cid.data, e->cid.datalen);

			old[i] = e->next;
			e->next = m->b[s];
			m->b[s] = e;
		}
	free(old);
}

static struct quic_conn *
quic_cidmap_get(const struct cidmap *m, const uint8_t *id, size_t len)
{
	for (struct cid_entry *e = m->b[quic_cidmap_slot(m, id, len)]; e != NULL;
	    e = e->next)
		if (e->cid.datalen == len && memcmp(e->cid.data, id, len) == 0)
			return e->c;
	return NULL;
}

static int
quic_cidmap_put(struct cidmap *m, const ngtcp2_cid *cid, struct quic_conn *c)
{
	struct cid_entry *e = malloc(sizeof(*e));
	size_t s;

	if (e == NULL)
		return -1;
	if (m->n >= m->nb)
		quic_cidmap_grow(m);
	s = quic_cidmap_slot(m, cid->data, cid->datalen);
	e->cid = *cid;
	e->c = c;
	e->next = m->b[s];
	m->b[s] = e;
	m->n++;
	return 0;
}

void
quic_cidmap_del(struct cidmap *m, const ngtcp2_cid *cid, const struct quic_conn *c)
{
	struct cid_entry **p = &m->b[quic_cidmap_slot(m, cid->data, cid->datalen)];

	for (; *p != NULL; p = &(*p)->next)
		if ((*p)->c == c && ngtcp2_cid_eq(&(*p)->cid, cid)) {
			struct cid_entry *e = *p;

			*p = e->next;
			free(e);
			m->n--;
			return;
		}
}

/* One more id of c's: packets to it find c (quic_find). */
int
quic_cid_add(struct quic_conn *c, const ngtcp2_cid *cid)
{
	if (c->ncid == QUIC_MAXCID || quic_cidmap_put(&c->q->cids, cid, c) == -1)
		return -1;
	c->cids[c->ncid++] = *cid;
	return 0;
}

int
quic_cb_new_cid(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
    void *user)
{
	struct quic_conn *c = user;

	(void)conn;
	if (quic_random(cid->data, cidlen) == -1)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	cid->datalen = cidlen;
	if (quic_reset_token(c->q, cid, token) == -1)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	return quic_cid_add(c, cid) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

int
quic_cb_remove_cid(ngtcp2_conn *conn, const ngtcp2_cid *cid, void *user)
{
	struct quic_conn *c = user;

	(void)conn;
	for (size_t i = 0; i < c->ncid; i++)
		if (ngtcp2_cid_eq(&c->cids[i], cid)) {
			quic_cidmap_del(&c->q->cids, cid, c);
			c->cids[i] = c->cids[--c->ncid];
			break;
		}
	return 0;
}

struct quic_conn *
quic_find(struct quic *q, const uint8_t *dcid, size_t dcidlen)
{
	return quic_cidmap_get(&q->cids, dcid, dcidlen);
}
