/*
 * portmap.c: the home router's port mapping for the daemon's UDP port
 * (portmap.h).  Two threads share one struct portmap_shared and nothing
 * else:
 *
 *  - the worker thread owns the libraries' handles (miniupnpc's URLs,
 *    libnatpmp's socket) and the schedule: it asks, sleeps on a condition
 *    variable until the renewal or the retry is due (asleep when idle),
 *    asks again, and removes the mapping when told to stop.  Discovery
 *    and SOAP calls block for seconds, so they never run on the loop.
 *  - the owner's thread (the one running env->loop) takes what the worker
 *    published through a channel (lib/chan.h) when its eventfd wakes
 *    it, logs one line when something changed, and calls env->changed.
 *
 * The worker never touches struct portmap, and the owner never touches
 * a router.  Whichever of the two lets go of the shared block last frees
 * it, so portmap_free can leave a worker stuck on a silent router behind.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef PAPO_HAVE_MINIUPNPC
#include <miniupnpc/miniupnpc.h>
#include <miniupnpc/upnpcommands.h>
#include <miniupnpc/upnperrors.h>
#endif
#ifdef PAPO_HAVE_NATPMP
#include <natpmp.h>
#endif

#include "lib/chan.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/portmap.h"

/* Whether either library is in: without both, every portmap is OFF.  A
 * plain 0 or 1 rather than #if around the code, so that each build
 * compiles (and warns about) all of it. */
#if defined(PAPO_HAVE_MINIUPNPC) || defined(PAPO_HAVE_NATPMP)
#define PORTMAP_BUILT 1
#else
#define PORTMAP_BUILT 0
#endif

/* How long the worker listens for routers: UPnP's SSDP search (for each
 * of the four kinds of device miniupnpc asks for in turn; 1 s is its
 * least, MX 1), then each NAT-PMP request (libnatpmp resends at 250 ms,
 * doubling).  A LAN router answers in milliseconds; these bound a
 * network without one: about 4 s, measured in the lab. */
#define PORTMAP_DISCOVER_MS 1000
#define PORTMAP_NATPMP_MS 2000
#define PORTMAP_REMOVE_MS 1000
/* A lease shorter than this is renewed this often all the same. */
#define PORTMAP_RENEW_MIN_S 2
#define PORTMAP_NEVER UINT64_MAX

/* What the worker found: the state and, when MAPPED, the external address
 * and the method; when FAILED, the reason. */
struct portmap_result {
	enum portmap_state state;
	const char *method;          /* a static string, or NULL */
	struct addr ext;
	char reason[PAPO_ERR_LEN];
};

/* A result on its way to the owner: the worker's until pushed, the
 * owner's once popped. */
struct portmap_sent {
	struct chan_link link;
	struct portmap_result res;
};

/* Shared by the worker and the owner, under mu (but results, a channel
 * with its own lock); port and lease are set before the worker starts
 * and only read after. */
struct portmap_shared {
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* stop (to the worker), done (to free) */
	struct chan *results;        /* to the owner, whose loop watches it */
	int refs;                    /* 2 while both hold it */
	int stop, done;
	uint16_t port;
	uint32_t lease;              /* asked for, seconds */
};

struct portmap {
	struct portmap_env env;
	struct portmap_shared *sh;   /* NULL when OFF */
	pthread_t thread;
	enum portmap_state state;
	const char *method;
	struct addr ext;
	int usable;
	char reason[PAPO_ERR_LEN];
};

static const char *const portmap_state_names[] = {
	[PORTMAP_OFF] = "off", [PORTMAP_ASKING] = "asking",
	[PORTMAP_MAPPED] = "mapped", [PORTMAP_FAILED] = "failed",
};

const char *
portmap_state_name(enum portmap_state s)
{
	return portmap_state_names[s];
}

/* The lab's "internet", 203.0.113.0/24, is a documentation range: it
 * counts as public here, as does any address that is none of these. */
const char *
portmap_private(const struct addr *a)
{
	enum addr_scope s = addr_scope(a);

	if (a->family != 4)
		return "not IPv4";
	return s == ADDR_SCOPE_PUBLIC ? NULL : addr_scope_name(s);
}

/* ---- the shared block ---- */

static void
portmap_sent_free(struct chan_link *l)
{
	free(chan_item(l, struct portmap_sent, link));
}

static void
portmap_shared_unref(struct portmap_shared *sh)
{
	int last;

	pthread_mutex_lock(&sh->mu);
	last = --sh->refs == 0;
	pthread_mutex_unlock(&sh->mu);
	if (!last)
		return;
	pthread_cond_destroy(&sh->cv);
	pthread_mutex_destroy(&sh->mu);
	/* Results the owner never took (it stopped first) go with it. */
	chan_free(sh->results, portmap_sent_free);
	free(sh);
}

static int
portmap_stopping(struct portmap_shared *sh)
{
	int stop;

	pthread_mutex_lock(&sh->mu);
	stop = sh->stop;
	pthread_mutex_unlock(&sh->mu);
	return stop;
}

/* Sleeps until the monotonic time until_ns (PORTMAP_NEVER: until told to
 * stop).  1 when told to stop. */
static int
portmap_sleep(struct portmap_shared *sh, uint64_t until_ns)
{
	struct timespec ts;
	int stop;

	ts.tv_sec = (time_t)(until_ns / NS_PER_S);
	ts.tv_nsec = (long)(until_ns % NS_PER_S);
	pthread_mutex_lock(&sh->mu);
	while (!sh->stop) {
		if (until_ns == PORTMAP_NEVER)
			pthread_cond_wait(&sh->cv, &sh->mu);
		else if (pthread_cond_timedwait(&sh->cv, &sh->mu, &ts) ==
		    ETIMEDOUT)
			break;
	}
	stop = sh->stop;
	pthread_mutex_unlock(&sh->mu);
	return stop;
}

/* Hands a copy of res to the owner.  Out of memory, it is not sent: the
 * owner keeps showing the last one until the next renewal or retry. */
static void
portmap_publish(struct portmap_shared *sh, const struct portmap_result *res)
{
	struct portmap_sent *p = malloc(sizeof(*p));

	if (p == NULL) {
		log_msg(LOG_WARN, "port mapping: out of memory");
		return;
	}
	p->res = *res;
	chan_push(sh->results, &p->link);
}

static void
portmap_fail(struct portmap_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
portmap_fail(struct portmap_result *res, const char *fmt, ...)
{
	va_list ap;

	memset(res, 0, sizeof(*res));
	res->state = PORTMAP_FAILED;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

/* ---- the worker: what it knows of the router ---- */

enum portmap_method { PM_NONE, PM_UPNP, PM_NATPMP };

struct portmap_router {
	enum portmap_method method;  /* the one holding our mapping */
	uint32_t asked;              /* lease asked for, seconds */
	uint32_t lease;              /* seconds granted; 0 permanent */
	struct addr ext;
#ifdef PAPO_HAVE_MINIUPNPC
	int have_igd;
	struct UPNPUrls urls;
	struct IGDdatas data;
	char lan[64];                /* our address as the IGD sees it */
#endif
#ifdef PAPO_HAVE_NATPMP
	int have_natpmp;
	natpmp_t np;
#endif
};

static void
portmap_router_close(struct portmap_router *r)
{
#ifdef PAPO_HAVE_MINIUPNPC
	if (r->have_igd)
		FreeUPNPUrls(&r->urls);
#endif
#ifdef PAPO_HAVE_NATPMP
	if (r->have_natpmp)
		closenatpmp(&r->np);
#endif
	memset(r, 0, sizeof(*r));
}

/* ---- UPnP-IGD ---- */

#ifdef PAPO_HAVE_MINIUPNPC

/* UPNP_GetValidIGD's answers: 1 connected, then (API 18 on) 2 connected
 * with a reserved address, then not connected, then "not an IGD".  All
 * but the last are usable: a router calling itself not connected still
 * maps (miniupnpd does so in the lab), and we judge the address
 * ourselves. */
#if MINIUPNPC_API_VERSION >= 18
#define PORTMAP_NOT_IGD 4
#else
#define PORTMAP_NOT_IGD 3
#endif

/* "718 ConflictInMappingEntry", or miniupnpc's own words for a failure
 * that is not the router's answer. */
static void
portmap_upnp_error(char *out, size_t len, int code)
{
	const char *s = strupnperror(code);

	if (code > 0)
		snprintf(out, len, "%d %s", code, s != NULL ? s : "(unknown)");
	else
		snprintf(out, len, "%s", s != NULL ? s : "no answer");
}

/* Finds the IGD.  0, or -1 when none answered on the LAN. */
static int
portmap_upnp_find(struct portmap_router *r)
{
	struct UPNPDev *devs;
	int err = 0, v;

	devs = upnpDiscover(PORTMAP_DISCOVER_MS, NULL, NULL,
	    UPNP_LOCAL_PORT_ANY, 0, 2, &err);
	if (devs == NULL)
		return -1;
#if MINIUPNPC_API_VERSION >= 18
	v = UPNP_GetValidIGD(devs, &r->urls, &r->data, r->lan, sizeof(r->lan),
	    NULL, 0);
#else
	v = UPNP_GetValidIGD(devs, &r->urls, &r->data, r->lan, sizeof(r->lan));
#endif
	freeUPNPDevlist(devs);
	if (v == 0)
		return -1;
	r->have_igd = 1;
	if (v >= PORTMAP_NOT_IGD) {
		FreeUPNPUrls(&r->urls);
		r->have_igd = 0;
		return -1;
	}
	log_msg(LOG_DEBUG, "port mapping: UPnP-IGD at %s (we are %s; "
	    "UPNP_GetValidIGD %d)", r->urls.controlURL, r->lan, v);
	return 0;
}

/*
 * Asks the IGD for port (or renews it: the same request again).  0 with
 * r->ext and r->lease; -1 with res saying why.
 */
static int
portmap_upnp_map(struct portmap_router *r, uint16_t port,
    struct portmap_result *res)
{
	char ps[8], ip[40] = "", lease[16], client[64] = "", iport[8] = "";
	char desc[80] = "", enabled[8] = "", left[16] = "", why[128];
	const char *ctl = r->urls.controlURL, *st = r->data.first.servicetype;
	int e;

	snprintf(ps, sizeof(ps), "%u", port);
	snprintf(lease, sizeof(lease), "%u", r->asked);
	e = UPNP_AddPortMapping(ctl, st, ps, ps, r->lan, PORTMAP_DESC, "UDP",
	    NULL, lease);
	/* Some IGDv1 routers take only permanent mappings (then nothing is
	 * renewed, and portmap_free still removes it). */
	if (e == 725) {
		snprintf(lease, sizeof(lease), "0");
		e = UPNP_AddPortMapping(ctl, st, ps, ps, r->lan, PORTMAP_DESC,
		    "UDP", NULL, lease);
	}
	/* Our own mapping, left by an earlier run or already there at a
	 * renewal, counts as granted; only someone else's is a conflict. */
	if (e == 718 && UPNP_GetSpecificPortMappingEntry(ctl, st, ps, "UDP",
	    NULL, client, iport, desc, enabled, left) == UPNPCOMMAND_SUCCESS &&
	    strcmp(client, r->lan) == 0 && strcmp(iport, ps) == 0)
		e = UPNPCOMMAND_SUCCESS;
	if (e != UPNPCOMMAND_SUCCESS) {
		portmap_upnp_error(why, sizeof(why), e);
		portmap_fail(res, "the router refused: %s", why);
		return -1;
	}
	/* What the router granted: the lease it reports, never more than
	 * asked (a router reporting 0 for a timed lease gets the asked). */
	r->lease = (uint32_t)strtoul(lease, NULL, 10);
	if (UPNP_GetSpecificPortMappingEntry(ctl, st, ps, "UDP", NULL, client,
	    iport, desc, enabled, left) == UPNPCOMMAND_SUCCESS) {
		unsigned long granted = strtoul(left, NULL, 10);

		if (granted > 0 && granted < r->lease)
			r->lease = (uint32_t)granted;
	}
	e = UPNP_GetExternalIPAddress(ctl, st, ip);
	memset(&r->ext, 0, sizeof(r->ext));
	if (e != UPNPCOMMAND_SUCCESS ||
	    inet_pton(AF_INET, ip, r->ext.ip) != 1) {
		/* Mapped, but where?  Unusable: remove it again. */
		UPNP_DeletePortMapping(ctl, st, ps, "UDP", NULL);
		portmap_fail(res, "the router gave no external address");
		return -1;
	}
	r->ext.family = 4;
	r->ext.port = port;
	r->method = PM_UPNP;
	return 0;
}

static void
portmap_upnp_remove(struct portmap_router *r, uint16_t port)
{
	char ps[8];

	snprintf(ps, sizeof(ps), "%u", port);
	UPNP_DeletePortMapping(r->urls.controlURL, r->data.first.servicetype,
	    ps, "UDP", NULL);
}

#endif

/* ---- NAT-PMP ---- */

#ifdef PAPO_HAVE_NATPMP

static const struct {
	int code;
	const char *text;
} portmap_natpmp_errors[] = {
	{ NATPMP_ERR_UNSUPPORTEDVERSION, "unsupported version" },
	{ NATPMP_ERR_UNSUPPORTEDOPCODE, "unsupported opcode" },
	{ NATPMP_ERR_UNDEFINEDERROR, "undefined error" },
	{ NATPMP_ERR_NOTAUTHORIZED, "not authorized" },
	{ NATPMP_ERR_NETWORKFAILURE, "network failure" },
	{ NATPMP_ERR_OUTOFRESOURCES, "out of resources" },
};

/* The router's refusal in words, or NULL when the code means that no
 * router answered. */
static const char *
portmap_natpmp_error(int code)
{
	for (size_t i = 0; i < sizeof(portmap_natpmp_errors) /
	    sizeof(portmap_natpmp_errors[0]); i++)
		if (portmap_natpmp_errors[i].code == code)
			return portmap_natpmp_errors[i].text;
	return NULL;
}

/* Waits up to ms for the answer to the request just sent, letting
 * libnatpmp resend it; returns when told to stop too.  libnatpmp's
 * answer: 0, or one of its NATPMP_ERR_ codes. */
static int
portmap_natpmp_wait(struct portmap_shared *sh, natpmp_t *np,
    natpmpresp_t *resp, unsigned ms)
{
	uint64_t until = loop_now_ns() + ms * NS_PER_MS;
	int e;

	for (;;) {
		struct timeval tv;
		struct pollfd pfd = { .fd = np->s, .events = POLLIN };
		uint64_t now = loop_now_ns(), wait_ms = 100;

		e = readnatpmpresponseorretry(np, resp);
		if (e != NATPMP_TRYAGAIN)
			return e;
		if (now >= until || portmap_stopping(sh))
			return NATPMP_ERR_NOGATEWAYSUPPORT;
		/* Wake for the answer, the next resend, or a stop (seen
		 * within 100 ms). */
		if (getnatpmprequesttimeout(np, &tv) == 0) {
			uint64_t t = (uint64_t)tv.tv_sec * 1000 +
			    (uint64_t)tv.tv_usec / 1000;

			if (t < wait_ms)
				wait_ms = t;
		}
		if (wait_ms > (until - now) / NS_PER_MS)
			wait_ms = (until - now) / NS_PER_MS;
		poll(&pfd, 1, (int)wait_ms + 1);
	}
}

/*
 * Asks the default gateway for port by NAT-PMP (or renews it).  0 with
 * r->ext and r->lease; -1 with res saying why, or -1 and res untouched
 * when nothing answered.
 */
static int
portmap_natpmp_map(struct portmap_shared *sh, struct portmap_router *r,
    uint16_t port, struct portmap_result *res)
{
	natpmpresp_t resp;
	struct addr ext;
	const char *why;
	int e;

	memset(&ext, 0, sizeof(ext));
	if (!r->have_natpmp) {
		if (initnatpmp(&r->np, 0, 0) < 0)
			return -1;
		r->have_natpmp = 1;
	}
	if (sendpublicaddressrequest(&r->np) < 0)
		return -1;
	e = portmap_natpmp_wait(sh, &r->np, &resp, PORTMAP_NATPMP_MS);
	if (e == 0 && resp.type == NATPMP_RESPTYPE_PUBLICADDRESS) {
		ext.family = 4;
		memcpy(ext.ip, &resp.pnu.publicaddress.addr, 4);
		if (sendnewportmappingrequest(&r->np, NATPMP_PROTOCOL_UDP, port,
		    port, r->asked) < 0)
			return -1;
		e = portmap_natpmp_wait(sh, &r->np, &resp, PORTMAP_NATPMP_MS);
	}
	if (e == 0 && resp.type == NATPMP_RESPTYPE_UDPPORTMAPPING) {
		/* The router may give another external port than asked. */
		ext.port = resp.pnu.newportmapping.mappedpublicport;
		r->ext = ext;
		r->lease = resp.pnu.newportmapping.lifetime;
		r->method = PM_NATPMP;
		return 0;
	}
	if (e == 0)
		portmap_fail(res, "the router answered NAT-PMP out of turn");
	else if ((why = portmap_natpmp_error(e)) != NULL)
		portmap_fail(res, "the router refused: NAT-PMP %s", why);
	return -1;
}

static void
portmap_natpmp_remove(struct portmap_router *r, uint16_t port)
{
	natpmpresp_t resp;

	/* Lifetime 0 removes it (RFC 6886, 3.4).  The stop is already
	 * set, so this waits in one piece, for PORTMAP_REMOVE_MS at most. */
	if (sendnewportmappingrequest(&r->np, NATPMP_PROTOCOL_UDP, port, 0,
	    0) < 0)
		return;
	for (uint64_t until = loop_now_ns() + PORTMAP_REMOVE_MS * NS_PER_MS;
	    loop_now_ns() < until;) {
		struct pollfd pfd = { .fd = r->np.s, .events = POLLIN };

		if (readnatpmpresponseorretry(&r->np, &resp) != NATPMP_TRYAGAIN)
			return;
		poll(&pfd, 1, 50);
	}
}

#endif

/* ---- the worker ---- */

/*
 * A whole ask: UPnP-IGD first, NAT-PMP when there is no IGD or it
 * refused.  The result is MAPPED, or FAILED with the most telling reason:
 * a router's refusal over silence.
 */
static void
portmap_ask(struct portmap_shared *sh, struct portmap_router *r,
    struct portmap_result *res)
{
	struct portmap_result refused;
	int ok = 0;

	memset(res, 0, sizeof(*res));
	memset(&refused, 0, sizeof(refused));
	portmap_router_close(r);
	r->asked = sh->lease;
#ifdef PAPO_HAVE_MINIUPNPC
	/* Discovery takes seconds: a stop meanwhile maps nothing. */
	ok = portmap_upnp_find(r) == 0 && !portmap_stopping(sh) &&
	    portmap_upnp_map(r, sh->port, &refused) == 0;
#endif
#ifdef PAPO_HAVE_NATPMP
	if (!ok && !portmap_stopping(sh))
		ok = portmap_natpmp_map(sh, r, sh->port, res) == 0;
#endif
	if (ok) {
		res->state = PORTMAP_MAPPED;
		res->method = r->method == PM_UPNP ? "upnp" : "natpmp";
		res->ext = r->ext;
		return;
	}
	if (res->state != PORTMAP_FAILED && refused.state == PORTMAP_FAILED)
		*res = refused;
	if (res->state != PORTMAP_FAILED)
		portmap_fail(res, "no UPnP or NAT-PMP router answered");
	portmap_router_close(r);
}

/* Renews the mapping with the router that holds it; a failure leads to a
 * whole ask. */
static void
portmap_renew(struct portmap_shared *sh, struct portmap_router *r,
    struct portmap_result *res)
{
	int e = -1;

	memset(res, 0, sizeof(*res));
#ifdef PAPO_HAVE_MINIUPNPC
	if (r->method == PM_UPNP)
		e = portmap_upnp_map(r, sh->port, res);
#endif
#ifdef PAPO_HAVE_NATPMP
	if (r->method == PM_NATPMP)
		e = portmap_natpmp_map(sh, r, sh->port, res);
#endif
	if (e != 0) {
		log_msg(LOG_DEBUG, "port mapping: renewal failed (%s); "
		    "asking again", res->reason[0] != '\0' ? res->reason :
		    "no answer");
		portmap_ask(sh, r, res);
		return;
	}
	log_msg(LOG_DEBUG, "port mapping: renewed for %u s", r->lease);
	res->state = PORTMAP_MAPPED;
	res->method = r->method == PM_UPNP ? "upnp" : "natpmp";
	res->ext = r->ext;
}

static void
portmap_remove(struct portmap_shared *sh, struct portmap_router *r)
{
	switch (r->method) {
#ifdef PAPO_HAVE_MINIUPNPC
	case PM_UPNP:
		portmap_upnp_remove(r, sh->port);
		break;
#endif
#ifdef PAPO_HAVE_NATPMP
	case PM_NATPMP:
		portmap_natpmp_remove(r, sh->port);
		break;
#endif
	default:
		break;
	}
	log_msg(LOG_DEBUG, "port mapping: UDP %u removed", sh->port);
}

static void *
portmap_main(void *arg)
{
	struct portmap_shared *sh = arg;
	struct portmap_router r;
	struct portmap_result res;
	uint64_t next = 0, backoff = PORTMAP_RETRY_S;

	memset(&r, 0, sizeof(r));
	while (!portmap_sleep(sh, next)) {
		if (r.method != PM_NONE)
			portmap_renew(sh, &r, &res);
		else
			portmap_ask(sh, &r, &res);
		/* Stopped meanwhile: nobody reads it; a mapping made is
		 * removed below. */
		if (portmap_stopping(sh))
			break;
		portmap_publish(sh, &res);
		if (res.state == PORTMAP_MAPPED) {
			uint64_t half = r.lease / 2;

			backoff = PORTMAP_RETRY_S;
			if (half < PORTMAP_RENEW_MIN_S)
				half = PORTMAP_RENEW_MIN_S;
			next = r.lease == 0 ? PORTMAP_NEVER :
			    loop_now_ns() + half * NS_PER_S;
		} else {
			next = loop_now_ns() + backoff * NS_PER_S;
			backoff *= 2;
			if (backoff > PORTMAP_RETRY_MAX_S)
				backoff = PORTMAP_RETRY_MAX_S;
		}
	}
	if (r.method != PM_NONE)
		portmap_remove(sh, &r);
	portmap_router_close(&r);
	pthread_mutex_lock(&sh->mu);
	sh->done = 1;
	pthread_cond_broadcast(&sh->cv);
	pthread_mutex_unlock(&sh->mu);
	portmap_shared_unref(sh);
	return NULL;
}

/* ---- the owner's side ---- */

/* Takes in what the worker published; logs and calls changed() when it
 * differs from what we had. */
static void
portmap_readable(void *arg, uint32_t events)
{
	struct portmap *pm = arg;
	struct portmap_shared *sh = pm->sh;
	struct portmap_result res;
	struct chan_link *l;
	const char *why = NULL;
	char reason[PAPO_ERR_LEN] = "", at[ADDR_STRLEN], ip[INET6_ADDRSTRLEN];
	int fresh = 0, usable = 0;

	(void)events;
	/* Only the newest counts: what it replaced is already history. */
	while ((l = chan_pop(sh->results)) != NULL) {
		res = chan_item(l, struct portmap_sent, link)->res;
		fresh = 1;
		portmap_sent_free(l);
	}
	if (!fresh)
		return;
	addr_format(&res.ext, at);
	if (res.state == PORTMAP_MAPPED) {
		why = portmap_private(&res.ext);
		usable = why == NULL || pm->env.allow_private;
		inet_ntop(AF_INET, res.ext.ip, ip, sizeof(ip));
		if (!usable)
			snprintf(reason, sizeof(reason), "external address "
			    "%s is %s: not advertised", ip, why);
	} else
		snprintf(reason, sizeof(reason), "%s", res.reason);
	if (res.state == pm->state && res.method == pm->method &&
	    addr_equal(&res.ext, &pm->ext) && usable == pm->usable &&
	    strcmp(reason, pm->reason) == 0)
		return;
	pm->state = res.state;
	pm->method = res.method;
	pm->ext = res.ext;
	pm->usable = usable;
	snprintf(pm->reason, sizeof(pm->reason), "%s", reason);
	if (res.state == PORTMAP_MAPPED && usable)
		log_msg(LOG_INFO, "port mapping: UDP %u mapped at %s by %s%s",
		    pm->env.port, at, res.method, why != NULL ?
		    " (a private address, allowed by PAPO_PORTMAP_PRIVATE)" : "");
	else if (res.state == PORTMAP_MAPPED)
		log_msg(LOG_WARN, "port mapping: UDP %u mapped by %s, but %s",
		    pm->env.port, res.method, reason);
	else
		log_msg(LOG_WARN, "port mapping failed: %s", reason);
	if (pm->env.changed != NULL)
		pm->env.changed(pm->env.arg, pm);
}

struct portmap *
portmap_new(char err[PAPO_ERR_LEN], const struct portmap_env *env)
{
	struct portmap *pm = NULL;
	struct portmap_shared *sh = NULL;
	pthread_condattr_t ca;
	int e;

	if (env->port == 0) {
		snprintf(err, PAPO_ERR_LEN, "port mapping: no port to map");
		return NULL;
	}
	if ((pm = calloc(1, sizeof(*pm))) == NULL)
		goto nomem;
	pm->env = *env;
	pm->state = PORTMAP_OFF;
	if (!PORTMAP_BUILT) {
		snprintf(pm->reason, sizeof(pm->reason),
		    "built without libminiupnpc and libnatpmp");
		return pm;
	}
	if (env->off) {
		snprintf(pm->reason, sizeof(pm->reason),
		    "turned off (PAPO_PORTMAP=off)");
		return pm;
	}
	if ((sh = calloc(1, sizeof(*sh))) == NULL)
		goto nomem;
	if ((sh->results = chan_new()) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "port mapping: channel: %s",
		    strerror(errno));
		free(sh);
		free(pm);
		return NULL;
	}
	pthread_mutex_init(&sh->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sh->cv, &ca);
	pthread_condattr_destroy(&ca);
	sh->port = env->port;
	sh->lease = env->lease_s != 0 ? env->lease_s : PORTMAP_LEASE_S;
	sh->refs = 1;
	pm->sh = sh;
	pm->state = PORTMAP_ASKING;
	if (loop_add_fd(env->loop, chan_fd(sh->results), LOOP_IN,
	    portmap_readable, pm) == -1) {
		snprintf(err, PAPO_ERR_LEN, "port mapping: loop: %s",
		    strerror(errno));
		goto fail;
	}
	sh->refs = 2;
	if ((e = pthread_create(&pm->thread, NULL, portmap_main, sh)) != 0) {
		sh->refs = 1;
		loop_del_fd(env->loop, chan_fd(sh->results));
		snprintf(err, PAPO_ERR_LEN, "port mapping: thread: %s",
		    strerror(e));
		goto fail;
	}
	return pm;
nomem:
	snprintf(err, PAPO_ERR_LEN, "port mapping: out of memory");
fail:
	if (sh != NULL)
		portmap_shared_unref(sh);
	free(pm);
	return NULL;
}

void
portmap_free(struct portmap *pm)
{
	struct portmap_shared *sh;
	struct timespec ts;
	uint64_t until;
	int done;

	if (pm == NULL)
		return;
	if ((sh = pm->sh) != NULL) {
		loop_del_fd(pm->env.loop, chan_fd(sh->results));
		until = loop_now_ns() + PORTMAP_STOP_MS * NS_PER_MS;
		ts.tv_sec = (time_t)(until / NS_PER_S);
		ts.tv_nsec = (long)(until % NS_PER_S);
		pthread_mutex_lock(&sh->mu);
		sh->stop = 1;
		pthread_cond_broadcast(&sh->cv);
		while (!sh->done && pthread_cond_timedwait(&sh->cv, &sh->mu,
		    &ts) != ETIMEDOUT)
			;
		done = sh->done;
		pthread_mutex_unlock(&sh->mu);
		if (done)
			pthread_join(pm->thread, NULL);
		else {
			/* Still searching or talking to a router: it ends
			 * on its own (making no new mapping, as it is told
			 * to stop) and frees the shared block, the last
			 * reference.  If the process ends first, a mapping
			 * it holds ends with its lease. */
			log_msg(LOG_WARN, "port mapping: stopped without "
			    "waiting more than %d ms for the router",
			    PORTMAP_STOP_MS);
			pthread_detach(pm->thread);
		}
		portmap_shared_unref(sh);
	}
	free(pm);
}

enum portmap_state
portmap_state(const struct portmap *pm)
{
	return pm->state;
}

int
portmap_mapped(const struct portmap *pm, struct addr *out)
{
	if (pm->state != PORTMAP_MAPPED || !pm->usable)
		return -1;
	*out = pm->ext;
	return 0;
}

const char *
portmap_method(const struct portmap *pm)
{
	return pm->state == PORTMAP_MAPPED ? pm->method : NULL;
}

const char *
portmap_reason(const struct portmap *pm)
{
	return pm->reason[0] != '\0' ? pm->reason : NULL;
}
