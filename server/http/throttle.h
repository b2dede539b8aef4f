/*
 * throttle.h: wrong credentials counted per client, for http.c
 * (docs/SECURITY.md, "Wrong credentials").  A client is a key the
 * caller makes (its address, and whether it came through a tunnel);
 * after THROTTLE_FAILS wrong credentials within THROTTLE_WINDOW_MS it
 * is slowed: one credential of it is checked per THROTTLE_GAP_MS, the
 * others are refused unchecked, until THROTTLE_SLOW_MS pass without a
 * wrong one.  Pure bookkeeping: times come in as arguments (no clock,
 * no I/O).  Main thread only.
 */
#ifndef PAPO_THROTTLE_H
#define PAPO_THROTTLE_H

#include <stddef.h>
#include <stdint.h>

#define THROTTLE_FAILS 20           /* wrong credentials in a window */
#define THROTTLE_WINDOW_MS 60000u
#define THROTTLE_SLOW_MS 60000u     /* slowed this long after the last */
#define THROTTLE_GAP_MS 1000u       /* one check this often, slowed */
#define THROTTLE_CLIENTS 256        /* clients followed at once */
#define THROTTLE_KEY_LEN 17         /* an address and a flag */

struct throttle;

struct throttle *throttle_new(void);
void throttle_free(struct throttle *t);
/*
 * Whether the client key may have a credential checked at now_ms: 0
 * when it may (a slowed client's turn is then used up), else the
 * milliseconds until it may.
 */
uint64_t throttle_wait(struct throttle *t,
    const unsigned char key[THROTTLE_KEY_LEN], uint64_t now_ms);
/* The client key presented a wrong credential at now_ms: 1 when it is
 * slowed from now on (answer 429), 0 when not (401). */
int throttle_failed(struct throttle *t,
    const unsigned char key[THROTTLE_KEY_LEN], uint64_t now_ms);
#endif
