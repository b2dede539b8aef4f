/*
 * nodes.h: real nodes in one process, for the unit tests that run them
 * (test_node, test_presence, test_deliver): started on 127.0.0.1 with a
 * free port and no LAN beacons, asked through their request queue,
 * polled for what they show.
 */
#ifndef PAPO_TESTS_NODES_H
#define PAPO_TESTS_NODES_H

#include <cjson/cJSON.h>

#include "node/node.h"

/* The node of home, started; NULL (the reason printed) when it fails. */
struct node *nodes_start(const char *home);
/* Waits up to ms for a message of kind from n; events of other kinds are
 * dropped.  NULL on timeout. */
struct node_msg *nodes_wait(struct node *n, enum node_kind kind, int ms);
/* Submits req and waits up to ms for its answer's JSON; NULL when it
 * failed (the reason printed) or did not come. */
cJSON *nodes_request(struct node *n, struct node_msg *req, int ms);
/* Member name in n's status: 1 online, 0 offline, -1 not listed. */
int nodes_shown(struct node *n, const char *name);
/* Polls until nodes_shown(n, name) is want: 1 when it was within ms. */
int nodes_shown_as(struct node *n, const char *name, int want, int ms);
/* Polls n's history for a message of that text: 1 when there within ms
 * (looked at least once). */
int nodes_history_has(struct node *n, const char *text, int ms);

#endif
