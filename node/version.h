/*
 * version.h: what the node library speaks and runs with, for `papo
 * version` (server/cli/cmd_version.c) and bug reports: the protocol
 * versions of the wire and of invites, and the version of each library
 * node/ alone links (ngtcp2, SQLite, the port mapping libraries), read
 * from the library at run time where it tells one.  Pure: any thread.
 */
#ifndef PAPO_VERSION_H
#define PAPO_VERSION_H

#include <stddef.h>

#define NODE_LIBS_MAX 8

/* A library and its version; note says how the version was known when
 * the library tells none at run time ("as built"), else is NULL. */
struct node_lib {
	const char *name;
	const char *version;
	const char *note;
};

struct node_versions {
	unsigned proto_oldest;      /* QUIC ALPN papo/N, oldest spoken */
	unsigned proto_newest;      /* and newest (offered first) */
	unsigned invite_oldest;     /* invite versions read (papo1...) */
	unsigned invite_newest;
	const char *invite_prefix;  /* "papo1" */
	struct node_lib libs[NODE_LIBS_MAX];
	size_t nlibs;
};

/* Fills v; its strings are static (the libraries' own), never freed. */
void node_versions(struct node_versions *v);

#endif
