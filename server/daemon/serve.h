/*
 * serve.h: "papo serve", the daemon: what it is started with, and the
 * files in $PAPO_HOME by which other commands find it.
 */
#ifndef PAPO_SERVE_H
#define PAPO_SERVE_H

#include "node/node.h"

/* {"pid", "http", "mcp", "dashboard", "quic", "invite"} of the running
 * daemon, and over HTTPS "tls_fingerprint", "tls_pin" (the SHA-256 of
 * its public key, which clients pin) and "tls_cert", mode 0600; written
 * once both sockets are bound (again when SIGHUP loads another
 * certificate), removed when it stops. */
#define SERVE_JSON "serve.json"
/* Held with flock by the running daemon, and holding its pid. */
#define SERVE_LOCK "serve.lock"

/*
 * What papo serve is started with.  The settings table (server/cli/
 * settings.c) fills it from the command line and the environment, one
 * entry per setting; the node's part is the node's own struct, handed
 * to node_start as it is.
 */
struct serve_config {
	struct node_config node; /* $PAPO_HOME, the QUIC address, reachability,
	                          * TURN, limits and retention */
	const char *http;        /* HTTP "ADDR:PORT"; port 0 picks one */
	const char *token;       /* NULL or "": no token */
	const char *tls_cert;    /* PAPO_TLS_CERT: a PEM chain, or NULL */
	const char *tls_key;     /* PAPO_TLS_KEY: its PEM key */
	int tls_self;            /* --tls self, PAPO_TLS=self: a self-signed
	                          * certificate made once in home */
	const char *public_url;  /* PAPO_PUBLIC_URL, or NULL */
	const char *cors;        /* PAPO_CORS_ORIGINS, or NULL */
	const char *name;        /* the member name for a room made at first
	                          * start; NULL: the login name */
	const char *about;
	const char *room;        /* the name of a room made at first start
	                          * (--room, PAPO_ROOM), or NULL */
	const char *invite;      /* joined at first start (PAPO_INVITE) */
	unsigned mcp_idle_s;     /* an unused MCP session ends after
	                          * (PAPO_MCP_IDLE); 0: the default */
	int oauth;               /* PAPO_OAUTH=on */
	int oauth_cimd_private;  /* PAPO_OAUTH_CIMD_PRIVATE=1 (tests) */
	unsigned oauth_access_s; /* PAPO_OAUTH_ACCESS_TTL (tests); 0: 1 h */
	unsigned oauth_code_s;   /* PAPO_OAUTH_CODE_TTL (tests); 0: 60 s */
};

/*
 * For a command that replaces home's room (papo new, papo join): takes
 * serve.lock into *fd (-1 when home has none: no daemon ever ran there),
 * which the caller closes when done, so that no daemon starts meanwhile.
 * -1 with err saying to stop it when a daemon runs on home.
 */
int serve_hold(char err[PAPO_ERR_LEN], const char *home, int *fd);

/*
 * Runs the daemon on the calling (main) thread until SIGINT or SIGTERM;
 * SIGHUP reads the TLS certificate and key again.
 * With no room in home yet, it first joins c->invite or creates one.
 * Returns 0 after a clean stop; -1 with err when it could not start.
 */
int serve_run(char err[PAPO_ERR_LEN], const struct serve_config *c);

#endif
