/*
 * hand.c: a member speaking the protocol by hand (hand.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/store/home.h"
#include "node/store/roomfile.h"
#include "tests/hand.h"

static void
slice_end(void *arg)
{
	loop_stop(arg);
}

int
hand_room_of(struct node *n, const char *home, struct room_keys *keys,
    uint8_t pk[PAPO_KEY_LEN], struct addr *at)
{
	char err[PAPO_ERR_LEN];
	struct room_file r;
	cJSON *s, *me, *id, *quic;
	int rc = -1;

	if (roomfile_load(err, home, &r) == -1) {
		fprintf(stderr, "%s: %s\n", home, err);
		return -1;
	}
	sec_room_keys(r.secret, keys);
	roomfile_wipe(&r);
	s = nodes_request(n, node_msg_new(NODE_STATUS), 5000);
	me = cJSON_GetObjectItem(s, "me");
	id = cJSON_GetObjectItem(me, "id");
	quic = cJSON_GetObjectItem(s, "quic");
	if (cJSON_IsString(id) && cJSON_IsString(quic) &&
	    sec_id_parse(id->valuestring, pk) == 0 &&
	    addr_parse(quic->valuestring, at) == 0)
		rc = 0;
	else
		fprintf(stderr, "%s: no id or QUIC address in its status\n", home);
	cJSON_Delete(s);
	return rc;
}

void
hand_init(struct hand *h, const char *root, const char *name,
    const char *invite, unsigned version, const struct room_keys *keys,
    struct loop *l, const struct quic_cbs *cbs, void *arg)
{
	char err[PAPO_ERR_LEN], home[300];
	struct addr any;

	memset(h, 0, sizeof(*h));
	h->name = name;
	h->keys = keys;
	h->l = l;
	snprintf(home, sizeof(home), "%s/%s", root, name);
	addr_parse("127.0.0.1:0", &any);
	if (home_join(err, home, invite, name, "", 0) == -1 ||
	    (h->id = sec_identity_load(err, home)) == NULL ||
	    (h->q = quic_new(err, l, &any, h->id, version, cbs, arg)) == NULL ||
	    (h->slice = loop_timer_new(l, slice_end, l)) == NULL) {
		fprintf(stderr, "%s: %s\n", name, err);
		abort();
	}
}

void
hand_free(struct hand *h)
{
	quic_free(h->q);
	loop_timer_free(h->slice);
	sec_identity_free(h->id);
}

void
hand_send(struct hand *h, const struct frame *fr)
{
	struct buf b;

	buf_init(&b, PAPO_FRAME_MAX);
	/* Version 3 names the epoch: 0, the room secret's key. */
	if (h->c == NULL || (h->version >= 3 ?
	    frame_seal_epoch(h->keys, 0, fr, &b) :
	    frame_seal(h->keys, fr, &b)) == -1 ||
	    quic_send(h->c, b.p, b.len) == -1)
		fprintf(stderr, "%s: could not send a %s\n", h->name,
		    frame_type_name(fr->type));
	buf_free(&b);
}

enum frame_err
hand_open(struct hand *h, const uint8_t *p, size_t n, struct frame *fr)
{
	return h->version >= 3 ?
	    frame_open_epoch(h->keys, p, n, frame_flags(h->version), fr) :
	    frame_open(h->keys, p, n, frame_flags(h->version), fr);
}

void
hand_greet(struct hand *h, struct quic_conn *c)
{
	struct frame hello;

	h->c = c;
	h->version = quic_version(c);
	memset(&hello, 0, sizeof(hello));
	hello.type = FRAME_HELLO;
	hello.u.hello.version = h->version;
	memcpy(hello.u.hello.id, h->id->pk, PAPO_KEY_LEN);
	strcpy(hello.u.hello.name, h->name);
	hello.u.hello.obs = *quic_remote(c);
	hand_send(h, &hello);
	h->greeted = 1;
}

void
hand_lost(struct hand *h, struct quic_conn *c)
{
	if (h->c == c)
		h->c = NULL;
}

void
hand_msg(struct frame *m, const struct room_keys *keys,
    const struct identity *who, const char *name, const char *text,
    int forged)
{
	memset(m, 0, sizeof(*m));
	m->type = FRAME_MSG;
	sec_msgid_new(m->u.msg.id);
	strcpy(m->u.msg.name, name);
	m->u.msg.ts = loop_wall_ms();
	m->u.msg.body = strdup(text);
	m->u.msg.body_len = strlen(text);
	if (frame_msg_sign(&m->u.msg, keys, who) == -1)
		abort();
	m->u.msg.sig[5] ^= forged ? 1 : 0;
}

void
hand_run(struct hand *h, int ms)
{
	loop_timer_set(h->slice, loop_now_ns() + (uint64_t)ms * 1000000u);
	loop_run(h->l);
}

int
hand_dial(struct hand *h, const struct addr *at,
    const uint8_t pk[PAPO_KEY_LEN])
{
	if (h->c != NULL)
		quic_close(h->c);
	for (int i = 0; i < 50 && h->c != NULL; i++)
		hand_run(h, 100);
	h->greeted = 0;
	if (quic_dial(h->q, at, pk, 0) == NULL)
		return 0;
	for (int i = 0; i < 50 && !(h->greeted && h->c != NULL); i++)
		hand_run(h, 100);
	return h->greeted && h->c != NULL;
}

int
hand_until_has(struct hand *h, struct node *n, const char *text)
{
	for (int i = 0; i < 100; i++) {
		hand_run(h, 100);
		if (nodes_history_has(n, text, 0))
			return 1;
	}
	return 0;
}

int
hand_sync(struct hand *h, struct node *n, const char *text)
{
	struct frame m;
	int ok;

	hand_msg(&m, h->keys, h->id, h->name, text, 0);
	hand_send(h, &m);
	ok = hand_until_has(h, n, text);
	frame_clear(&m);
	return ok;
}
