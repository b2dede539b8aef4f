/*
 * portmap.h: asking the home router for the daemon's UDP port, by
 * UPnP-IGD (libminiupnpc) or else NAT-PMP (libnatpmp), and keeping the
 * mapping: renewed before its lease ends, asked again after a failure,
 * removed by portmap_free (docs/REACHABILITY.md, "Port mapping").
 *
 * A portmap belongs to the thread that runs env->loop (the node thread):
 * every function here is called there, and changed() runs there.  The
 * talking to the router happens on a worker thread of its own, which
 * owns the libraries' handles and may block for seconds; its results
 * come back through a mutex and an eventfd the loop watches.
 */
#ifndef PAPO_PORTMAP_H
#define PAPO_PORTMAP_H

#include <stdint.h>

#include "lib/addr.h"
#include "lib/err.h"
#include "lib/loop.h"

/* What is asked of the router, and when. */
#define PORTMAP_LEASE_S 3600          /* UPnP lease and NAT-PMP lifetime */
#define PORTMAP_RETRY_S 60            /* first wait after a failure... */
#define PORTMAP_RETRY_MAX_S (30 * 60) /* ...doubling up to this */
#define PORTMAP_DESC "papo"           /* the mapping's UPnP description */

struct portmap;

enum portmap_state {
	PORTMAP_OFF,       /* built without both libraries, or turned off */
	PORTMAP_ASKING,    /* the first answer is not in yet */
	PORTMAP_MAPPED,    /* the router keeps a mapping for us */
	PORTMAP_FAILED,    /* no router, or it refused: asked again later */
};

struct portmap_env {
	struct loop *loop;      /* the owner's loop: watches the eventfd */
	uint16_t port;          /* our UDP port; the same external port is asked */
	int off;                /* PAPO_PORTMAP=off: PORTMAP_OFF, no worker */
	uint32_t lease_s;       /* lease to ask for; 0: PORTMAP_LEASE_S (tests
	                         * ask for seconds, to see renewals) */
	int allow_private;      /* a test setting (PAPO_PORTMAP_PRIVATE=1): an
	                         * external address in a private or shared
	                         * range counts as usable */
	/* On the loop's thread, after the state, method, external address
	 * or reason changed.  It may read pm but not free it. */
	void (*changed)(void *arg, const struct portmap *pm);
	void *arg;
};

/*
 * Starts asking at once, on the worker thread; never blocks the caller.
 * With env->off, or when built without both libraries, the portmap stays
 * PORTMAP_OFF and has a reason.  NULL with err only when a thread, an
 * eventfd or memory cannot be had.
 */
struct portmap *portmap_new(char err[PAPO_ERR_LEN],
    const struct portmap_env *env);

/*
 * Removes the mapping and ends the worker: waits for it at most
 * PORTMAP_STOP_MS (a router that does not answer by then keeps the
 * mapping until its lease ends; the worker finishes on its own).
 * NULL is a no-op.
 */
#define PORTMAP_STOP_MS 2000
void portmap_free(struct portmap *pm);

enum portmap_state portmap_state(const struct portmap *pm);
/* 0 with the external address (IP and port as the router gave them) when
 * MAPPED and usable: public, or env->allow_private; else -1. */
int portmap_mapped(const struct portmap *pm, struct addr *out);
/* "upnp" or "natpmp" while MAPPED, else NULL. */
const char *portmap_method(const struct portmap *pm);
/* Why it is OFF or FAILED, or why a mapping is not usable ("external
 * address 192.168.1.1 is private: not advertised"); NULL when MAPPED and
 * usable, or still ASKING. */
const char *portmap_reason(const struct portmap *pm);
/* Why an external address is not advertised ("private", "shared address
 * space (100.64.0.0/10, carrier-grade NAT)", "loopback"...), or NULL when
 * it is public.  Pure. */
const char *portmap_private(const struct addr *a);
/* "off", "asking", "mapped" or "failed": for status and logs. */
const char *portmap_state_name(enum portmap_state s);

#endif
