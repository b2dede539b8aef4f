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

struct serve_config {
	const char *home;        /* $PAPO_HOME */
	const char *http;        /* HTTP "ADDR:PORT"; port 0 picks one */
	const char *listen;      /* QUIC "ADDR:PORT"; port 0 picks one */
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
	unsigned long mcp_idle_s; /* an unused MCP session ends after
	                           * (PAPO_MCP_IDLE); 0: the default */
	const char *advertise;   /* "ADDR:PORT,..." (--advertise,
	                          * PAPO_ADVERTISE), advertised first */
	unsigned protocol;       /* 0: the newest; 1 or 2: speak as a daemon
	                          * of that protocol version (PAPO_PROTOCOL) */
	int nolan;               /* PAPO_LAN=off: no LAN discovery */
	int noportmap;           /* PAPO_PORTMAP=off: no port mapping */
	int portmap_private;     /* PAPO_PORTMAP_PRIVATE=1 (tests): a
	                          * mapping to a private address counts */
	const char *turn;        /* "turn:HOST[:PORT]" (--turn, PAPO_TURN),
	                          * or NULL: no relay */
	const char *turn_user;   /* PAPO_TURN_USER */
	const char *turn_pass;   /* PAPO_TURN_PASS */
	const char *turn_secret; /* PAPO_TURN_SECRET */
	int turn_noshare;        /* PAPO_TURN_SHARE=off: invites leave the
	                          * relay out */
	int oauth;               /* PAPO_OAUTH=on */
	int oauth_cimd_private;  /* PAPO_OAUTH_CIMD_PRIVATE=1 (tests) */
	unsigned oauth_access_s; /* PAPO_OAUTH_ACCESS_TTL (tests); 0: 1 h */
	unsigned oauth_code_s;   /* PAPO_OAUTH_CODE_TTL (tests); 0: 60 s */
	struct papo_rate rate;   /* PAPO_RATE; zero: the default */
	struct papo_damp damp;   /* PAPO_DAMP; zero: the default */
	int rate_self_off;       /* PAPO_TEST_NO_RATE=1, test builds only */
	const char *keep;        /* PAPO_KEEP (node_keep_check), or NULL */
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
