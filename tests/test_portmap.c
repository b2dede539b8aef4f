/*
 * test_portmap.c: what of node/net/portmap.c needs no router: which external
 * addresses are advertised, and a portmap that is off (PAPO_PORTMAP=off,
 * or a build without both libraries).  It never starts a worker: that
 * would ask this machine's own router.  Mapping against a real router is
 * tests/e2e/portmap.sh, in the lab.
 */
#include "lib/loop.h"
#include "node/net/portmap.h"
#include "tests/check.h"

/* The reason portmap_private gives for "IP:1", or "public". */
static const char *
why(const char *ip)
{
	char text[64];
	struct addr a;
	const char *r;

	snprintf(text, sizeof(text), "%s:1", ip);
	if (addr_parse(text, &a) != 0)
		return "unparsed";
	r = portmap_private(&a);
	return r != NULL ? r : "public";
}

static int changes;

static void
changed(void *arg, const struct portmap *pm)
{
	(void)arg;
	(void)pm;
	changes++;
}

static void
off(struct loop *l, int turned_off, const char *reason)
{
	struct portmap_env env = { .loop = l, .port = 7700, .off = turned_off,
	    .changed = changed };
	char err[PAPO_ERR_LEN] = "";
	struct portmap *pm = portmap_new(err, &env);
	struct addr a;

	CHECK(pm != NULL);
	if (pm == NULL)
		return;
	CHECK_EQ_INT(portmap_state(pm), PORTMAP_OFF);
	CHECK_EQ_STR(portmap_state_name(portmap_state(pm)), "off");
	CHECK_EQ_STR(portmap_reason(pm), reason);
	CHECK(portmap_method(pm) == NULL);
	CHECK_EQ_INT(portmap_mapped(pm, &a), -1);
	portmap_free(pm);
	CHECK_EQ_INT(changes, 0);
}

int
main(void)
{
	struct loop *l = loop_new();
	struct portmap_env env = { .loop = l, .port = 0 };
	char err[PAPO_ERR_LEN] = "";

	CHECK_EQ_STR(why("203.0.113.21"), "public");   /* the lab's internet */
	CHECK_EQ_STR(why("8.8.8.8"), "public");
	CHECK_EQ_STR(why("172.15.255.255"), "public");
	CHECK_EQ_STR(why("172.32.0.1"), "public");
	CHECK_EQ_STR(why("100.63.255.255"), "public");
	CHECK_EQ_STR(why("100.128.0.1"), "public");
	CHECK_EQ_STR(why("223.255.255.254"), "public");
	CHECK_EQ_STR(why("192.168.1.1"), "private");
	CHECK_EQ_STR(why("10.1.2.3"), "private");
	CHECK_EQ_STR(why("172.16.0.1"), "private");
	CHECK_EQ_STR(why("172.31.255.255"), "private");
	CHECK_EQ_STR(why("169.254.1.1"), "link-local");
	CHECK_EQ_STR(why("100.64.0.1"), "shared address space (100.64.0.0/10, "
	    "carrier-grade NAT)");
	CHECK_EQ_STR(why("100.127.255.255"), "shared address space "
	    "(100.64.0.0/10, carrier-grade NAT)");
	CHECK_EQ_STR(why("127.0.0.1"), "loopback");
	CHECK_EQ_STR(why("0.0.0.0"), "unspecified");
	CHECK_EQ_STR(why("0.1.2.3"), "reserved");
	CHECK_EQ_STR(why("224.0.0.1"), "multicast");
	CHECK_EQ_STR(why("255.255.255.255"), "reserved");
	CHECK_EQ_STR(why("[2001:db8::1]"), "not IPv4");

	/* No port: refused with the reason. */
	CHECK(portmap_new(err, &env) == NULL);
	CHECK_EQ_STR(err, "port mapping: no port to map");

#if defined(PAPO_HAVE_MINIUPNPC) || defined(PAPO_HAVE_NATPMP)
	off(l, 1, "turned off (PAPO_PORTMAP=off)");
#else
	/* Without both libraries it is off, asked for or not. */
	off(l, 0, "built without libminiupnpc and libnatpmp");
	off(l, 1, "built without libminiupnpc and libnatpmp");
#endif
	portmap_free(NULL);
	loop_free(l);
	return check_exit();
}
