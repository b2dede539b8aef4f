/*
 * version.c: what the node library speaks and runs with (version.h).
 * The protocol versions come from the wire's own constants, so they
 * cannot drift from what the codecs accept; each library's version from
 * the library itself at run time, which is what a bug report needs (the
 * package may run with a newer library than it was built against).
 * libminiupnpc tells its version only at build time, libnatpmp not at
 * all: they are said as built.  Pure: no I/O, any thread.
 */
#include <sqlite3.h>
#include <ngtcp2/ngtcp2.h>

#ifdef PAPO_HAVE_MINIUPNPC
#include <miniupnpc/miniupnpc.h>
#endif

#include "node/version.h"
#include "node/wire/frame.h"
#include "node/wire/invite.h"

/* Version 1 is the oldest a daemon still serves (until the room's key
 * first changes: docs/PROTOCOL.md, "Versions"). */
#define NODE_PROTO_OLDEST 1

static void
node_lib_add(struct node_versions *v, const char *name, const char *version,
    const char *note)
{
	if (v->nlibs == NODE_LIBS_MAX)
		return;
	v->libs[v->nlibs].name = name;
	v->libs[v->nlibs].version = version;
	v->libs[v->nlibs].note = note;
	v->nlibs++;
}

void
node_versions(struct node_versions *v)
{
	const ngtcp2_info *ngtcp2 = ngtcp2_version(0);

	v->proto_oldest = NODE_PROTO_OLDEST;
	v->proto_newest = FRAME_VERSION;
	v->invite_oldest = INVITE_VERSION;
	v->invite_newest = INVITE_VERSION_EXT;
	v->invite_prefix = INVITE_PREFIX;
	v->nlibs = 0;
	node_lib_add(v, "ngtcp2", ngtcp2 != NULL ? ngtcp2->version_str : "?",
	    NULL);
	node_lib_add(v, "SQLite", sqlite3_libversion(), NULL);
#ifdef PAPO_HAVE_MINIUPNPC
	node_lib_add(v, "miniupnpc", MINIUPNPC_VERSION, "as built");
#else
	node_lib_add(v, "miniupnpc", "none", "built without: no UPnP-IGD");
#endif
#ifdef PAPO_HAVE_NATPMP
	node_lib_add(v, "libnatpmp", "linked", "it tells no version");
#else
	node_lib_add(v, "libnatpmp", "none", "built without: no NAT-PMP");
#endif
}
