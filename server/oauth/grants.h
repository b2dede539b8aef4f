/*
 * grants.h: what the OAuth authorization server (oauth.c) keeps across
 * restarts, in $PAPO_HOME/oauth.json (mode 0600, replaced atomically):
 * the clients that registered themselves (RFC 7591), and the grants a
 * person approved, each with the hashes of its current access and
 * refresh tokens and of the refresh tokens it rotated away.  Tokens
 * themselves are never stored: only their BLAKE2b hashes.  For the main
 * thread only.
 */
#ifndef PAPO_GRANTS_H
#define PAPO_GRANTS_H

#include <stddef.h>
#include <stdint.h>

#include "node/node.h"

#define GRANTS_FILE "oauth.json"
#define GRANTS_FILE_MAX (4 * 1024 * 1024)  /* bytes of oauth.json */
#define GRANTS_CLIENTS_MAX 100     /* registered clients kept */
#define GRANTS_MAX 1000            /* grants kept */
#define GRANTS_REDIRECTS_MAX 8     /* redirect URIs of one client */
#define GRANTS_URI_MAX 512         /* bytes of a client id or URI */
#define GRANTS_NAME_MAX 128        /* bytes of a client's name */
#define GRANTS_OLD_MAX 32          /* rotated refresh tokens remembered */
#define GRANTS_ID_LEN 16           /* hex digits of a grant's id */
#define GRANTS_HASH_LEN 32         /* bytes of a token's hash */
#define GRANTS_TOKEN_RAW 32        /* random bytes of a token */
#define GRANTS_TOKEN_LEN 43        /* their base64url */

struct grants_client {
	char id[GRANTS_URI_MAX + 1];
	char name[GRANTS_NAME_MAX + 1];
	char redirect[GRANTS_REDIRECTS_MAX][GRANTS_URI_MAX + 1];
	size_t nredirect;
	int64_t created;
};

struct grant {
	char id[GRANTS_ID_LEN + 1];
	char client_id[GRANTS_URI_MAX + 1];
	char client_name[GRANTS_NAME_MAX + 1];
	char resource[GRANTS_URI_MAX + 1];
	/* The redirect URI its approval went back to ("" in a file written
	 * before it was kept): /authorize's errors go back there only. */
	char redirect[GRANTS_URI_MAX + 1];
	char scope[64];
	int64_t created, last_used;       /* seconds since the epoch */
	int64_t access_expires, refresh_expires;
	unsigned char access[GRANTS_HASH_LEN];
	unsigned char refresh[GRANTS_HASH_LEN];
	unsigned char old[GRANTS_OLD_MAX][GRANTS_HASH_LEN];
	size_t nold;
};

struct grants {
	char path[4096];
	struct grants_client *clients;   /* GRANTS_CLIENTS_MAX slots */
	size_t nclients;
	struct grant *grants;            /* GRANTS_MAX slots */
	size_t ngrants;
};

/* Loads home's oauth.json (none yet: empty).  NULL with err when it is
 * damaged or unreadable: a person should look rather than lose grants. */
struct grants *grants_load(char err[PAPO_ERR_LEN], const char *home);
void grants_free(struct grants *g);
/* Writes oauth.json atomically.  -1 with err. */
int grants_save(char err[PAPO_ERR_LEN], struct grants *g);

/* The registered client of id, or NULL. */
struct grants_client *grants_client(struct grants *g, const char *id);
/* A new client slot (zeroed but for created), making room by dropping
 * the oldest client that no grant uses; NULL when every one is used. */
struct grants_client *grants_client_add(struct grants *g, int64_t now);

/* A new grant slot with a fresh id, or NULL when GRANTS_MAX are held. */
struct grant *grants_add(struct grants *g, int64_t now);
/* Drops grant (a pointer into g). */
void grants_remove(struct grants *g, struct grant *gr);
/* Drops the grant of id; -1 when there is none. */
int grants_revoke(struct grants *g, const char *id);
/* Drops every grant whose refresh token expired before now; how many. */
size_t grants_expire(struct grants *g, int64_t now);

/* The grant whose current access (or refresh) token hashes to hash. */
struct grant *grants_by_access(struct grants *g, const unsigned char *hash);
struct grant *grants_by_refresh(struct grants *g, const unsigned char *hash);
/* Whether a grant held at now was approved for client_id with redirect:
 * a person let this client in once, sent back to that URI. */
int grants_approved(const struct grants *g, const char *client_id,
    const char *redirect, int64_t now);
/* The grant that rotated a refresh token of hash away, or NULL. */
struct grant *grants_by_old(struct grants *g, const unsigned char *hash);

/* A new random token (GRANTS_TOKEN_LEN characters and a NUL) and its
 * hash. */
void grants_token(char out[GRANTS_TOKEN_LEN + 1],
    unsigned char hash[GRANTS_HASH_LEN]);
/* The hash of token. */
void grants_hash(const char *token, unsigned char hash[GRANTS_HASH_LEN]);

#endif
