/*
 * epoch.h: the room's key changes (epoch.c): epoch frames received, made
 * and handed on, epochs.json, and the requests that change the key.
 * What they decided (the epochs held, who was removed) is keyring.h's.
 * Above role.h and member.h; on the node thread.
 */
#ifndef PAPO_EPOCH_H
#define PAPO_EPOCH_H

#include "node/room/role.h"

/* At start: epoch 0 (the room's key), then those epochs.json keeps. */
void epoch_load(struct room *room);
/* epoch.c's state, empty (epoch_load fills it): 0, or -1 out of
 * memory; freed with epoch_free (NULL state: a no-op). */
int epoch_new(struct room *room);
void epoch_free(struct room *room);
/* The list of rooms' "refused": why this member was shut out of the
 * room (a key change it was not given), when it was. */
void epoch_summary_json(const struct room *room, cJSON *o);
/* Holds epoch n (frame: its signed epoch frame's JSON text, or NULL)
 * and saves epochs.json: 1 added, 0 held already, -1 out of memory. */
int epoch_add(struct room *room, uint32_t n, const uint8_t secret[PAPO_KEY_LEN],
    const uint8_t by[PAPO_KEY_LEN], const char *frame);
/* Status: "epoch". */
void epoch_json(const struct room *room, cJSON *o);
/* A hello taken (a hook, core.h): the epoch frames its member missed,
 * if it holds fewer, and those that removed someone. */
void epoch_on_hello(struct room *room, const struct hello_in *in);
/* A version 3 hello from a member we never met, under an epoch older
 * than our newest: refused with the reason (logged, and the newest epoch
 * frame sent to it), l closed; 1 when refused. */
int epoch_refuse(struct room *room, struct link *l,
    const struct frame_hello *h);
/* An epoch frame received on l (a handler, core.h). */
void epoch_on_frame(struct room *room, struct link *l, struct frame *f);
/* A frame from l that named an epoch we hold did not open under it:
 * l's member may hold another change of that number; it gets ours
 * (once per link and epoch). */
void epoch_unopened(struct room *room, struct link *l, const uint8_t *p,
    size_t n);
/* Takes req (NODE_ROTATE, or NODE_REMOVE with to: the member) and
 * answers it. */
void epoch_request_rotate(struct room *room, struct node_msg *req);
/* History's "room": each key change held, with its line ("ana removed
 * cy; the room key changed (epoch 3)"). */
void epoch_history_json(const struct room *room, cJSON *o);
/* After members_load: removed members marked (never dialled). */
void epoch_mark(struct room *room);

#endif
