/*
 * hello.h: this member's hello (hello.c), the first frame on every
 * connection and the anti-entropy greeting.  Above role.h; on the node
 * thread.
 */
#ifndef PAPO_HELLO_H
#define PAPO_HELLO_H

#include "node/room/core.h"

/* Greets the member at the other end of l: our hello, with our history's
 * count and digest. */
void hello_send(struct room *room, struct link *l);

#endif
