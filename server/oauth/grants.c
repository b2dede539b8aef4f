/*
 * grants.c: the OAuth store, $PAPO_HOME/oauth.json: registered clients
 * and approved grants, with token hashes only.  The file is read once at
 * start and written whole (temporary file, fsync, rename, fsync of the
 * directory) after every change, so that a crash leaves the old or the
 * new file and a token a client was given is never forgotten while it
 * still holds the one before.  Runs on the main thread; the writes are
 * small and rare (a grant, a refresh, a revocation).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/fs.h"
#include "node/node.h"
#include "server/oauth/grants.h"

static int
grants_read(char err[PAPO_ERR_LEN], const char *path, char **out)
{
	struct stat st;
	char *buf = NULL;
	size_t off = 0;
	ssize_t n;
	int fd;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || st.st_size > GRANTS_FILE_MAX) {
		snprintf(err, PAPO_ERR_LEN, "%s is larger than %d bytes", path,
		    GRANTS_FILE_MAX);
		goto fail;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	while (off < (size_t)st.st_size) {
		if ((n = read(fd, buf + off, (size_t)st.st_size - off)) <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			snprintf(err, PAPO_ERR_LEN, "cannot read %s", path);
			goto fail;
		}
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	*out = buf;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

static int
grants_hex_in(const cJSON *v, unsigned char out[GRANTS_HASH_LEN])
{
	size_t n;

	if (!cJSON_IsString(v) || strlen(v->valuestring) != 2 * GRANTS_HASH_LEN)
		return -1;
	return sodium_hex2bin(out, GRANTS_HASH_LEN, v->valuestring,
	    2 * GRANTS_HASH_LEN, NULL, &n, NULL) == 0 && n == GRANTS_HASH_LEN ?
	    0 : -1;
}

/* Copies string member name of o into out (size n); -1 when it is
 * missing, not a string or too long. */
static int
grants_str_in(const cJSON *o, const char *name, char *out, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsString(v) || strlen(v->valuestring) >= n)
		return -1;
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

/* A time or count of oauth.json: a whole number from 0 to 2^53, else -1
 * (the file is then refused as damaged, with what to do). */
static int64_t
grants_num_in(const cJSON *o, const char *name)
{
	int64_t v;

	return fs_json_int(cJSON_GetObjectItemCaseSensitive(o, name), 0,
	    FS_JSON_INT_MAX, &v) == 0 ? v : -1;
}

static int
grants_client_in(const cJSON *o, struct grants_client *c)
{
	const cJSON *r, *u;

	memset(c, 0, sizeof(*c));
	if (grants_str_in(o, "id", c->id, sizeof(c->id)) == -1 ||
	    grants_str_in(o, "name", c->name, sizeof(c->name)) == -1 ||
	    (c->created = grants_num_in(o, "created")) < 0)
		return -1;
	r = cJSON_GetObjectItemCaseSensitive(o, "redirect_uris");
	if (!cJSON_IsArray(r))
		return -1;
	cJSON_ArrayForEach(u, r) {
		if (c->nredirect == GRANTS_REDIRECTS_MAX || !cJSON_IsString(u) ||
		    strlen(u->valuestring) > GRANTS_URI_MAX)
			return -1;
		strcpy(c->redirect[c->nredirect++], u->valuestring);
	}
	return 0;
}

static int
grants_grant_in(const cJSON *o, struct grant *gr)
{
	const cJSON *old, *v;

	memset(gr, 0, sizeof(*gr));
	if (grants_str_in(o, "id", gr->id, sizeof(gr->id)) == -1 ||
	    grants_str_in(o, "client_id", gr->client_id,
	    sizeof(gr->client_id)) == -1 ||
	    grants_str_in(o, "client_name", gr->client_name,
	    sizeof(gr->client_name)) == -1 ||
	    grants_str_in(o, "resource", gr->resource,
	    sizeof(gr->resource)) == -1 ||
	    grants_str_in(o, "scope", gr->scope, sizeof(gr->scope)) == -1 ||
	    (gr->created = grants_num_in(o, "created")) < 0 ||
	    (gr->last_used = grants_num_in(o, "last_used")) < 0 ||
	    (gr->access_expires = grants_num_in(o, "access_expires")) < 0 ||
	    (gr->refresh_expires = grants_num_in(o, "refresh_expires")) < 0 ||
	    grants_hex_in(cJSON_GetObjectItemCaseSensitive(o, "access"),
	    gr->access) == -1 ||
	    grants_hex_in(cJSON_GetObjectItemCaseSensitive(o, "refresh"),
	    gr->refresh) == -1)
		return -1;
	/* Optional: a file from before it was kept has none. */
	if (cJSON_GetObjectItemCaseSensitive(o, "redirect_uri") != NULL &&
	    grants_str_in(o, "redirect_uri", gr->redirect,
	    sizeof(gr->redirect)) == -1)
		return -1;
	old = cJSON_GetObjectItemCaseSensitive(o, "old");
	if (!cJSON_IsArray(old))
		return -1;
	cJSON_ArrayForEach(v, old) {
		if (gr->nold == GRANTS_OLD_MAX ||
		    grants_hex_in(v, gr->old[gr->nold]) == -1)
			return -1;
		gr->nold++;
	}
	return 0;
}

struct grants *
grants_load(char err[PAPO_ERR_LEN], const char *home)
{
	struct grants *g;
	cJSON *root = NULL;
	const cJSON *arr, *v;
	char *text = NULL;

	if ((g = calloc(1, sizeof(*g))) == NULL ||
	    (g->clients = calloc(GRANTS_CLIENTS_MAX,
	    sizeof(*g->clients))) == NULL ||
	    (g->grants = calloc(GRANTS_MAX, sizeof(*g->grants))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto fail;
	}
	if ((size_t)snprintf(g->path, sizeof(g->path), "%s/%s", home,
	    GRANTS_FILE) >= sizeof(g->path)) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
		goto fail;
	}
	if (grants_read(err, g->path, &text) == -1)
		goto fail;
	if (text == NULL)
		return g;
	if ((root = cJSON_Parse(text)) == NULL || !cJSON_IsObject(root))
		goto damaged;
	arr = cJSON_GetObjectItemCaseSensitive(root, "clients");
	if (!cJSON_IsArray(arr))
		goto damaged;
	cJSON_ArrayForEach(v, arr) {
		if (g->nclients == GRANTS_CLIENTS_MAX ||
		    grants_client_in(v, &g->clients[g->nclients]) == -1)
			goto damaged;
		g->nclients++;
	}
	arr = cJSON_GetObjectItemCaseSensitive(root, "grants");
	if (!cJSON_IsArray(arr))
		goto damaged;
	cJSON_ArrayForEach(v, arr) {
		if (g->ngrants == GRANTS_MAX ||
		    grants_grant_in(v, &g->grants[g->ngrants]) == -1)
			goto damaged;
		g->ngrants++;
	}
	cJSON_Delete(root);
	sodium_memzero(text, strlen(text));
	free(text);
	return g;
damaged:
	snprintf(err, PAPO_ERR_LEN, "%s is damaged; move it away to start "
	    "with no OAuth clients or grants (every client then asks again)",
	    g->path);
fail:
	cJSON_Delete(root);
	free(text);
	grants_free(g);
	return NULL;
}

void
grants_free(struct grants *g)
{
	if (g == NULL)
		return;
	if (g->grants != NULL)
		sodium_memzero(g->grants, GRANTS_MAX * sizeof(*g->grants));
	free(g->grants);
	free(g->clients);
	free(g);
}

static int
grants_hex_out(cJSON *o, const char *name, const unsigned char *h)
{
	char hex[2 * GRANTS_HASH_LEN + 1];

	sodium_bin2hex(hex, sizeof(hex), h, GRANTS_HASH_LEN);
	return cJSON_AddStringToObject(o, name, hex) != NULL ? 0 : -1;
}

static cJSON *
grants_client_out(const struct grants_client *c)
{
	cJSON *o = cJSON_CreateObject(), *r;

	if (o == NULL || cJSON_AddStringToObject(o, "id", c->id) == NULL ||
	    cJSON_AddStringToObject(o, "name", c->name) == NULL ||
	    cJSON_AddNumberToObject(o, "created", (double)c->created) == NULL ||
	    (r = cJSON_AddArrayToObject(o, "redirect_uris")) == NULL)
		goto fail;
	for (size_t i = 0; i < c->nredirect; i++)
		if (!cJSON_AddItemToArray(r, cJSON_CreateString(c->redirect[i])))
			goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static cJSON *
grants_grant_out(const struct grant *gr)
{
	cJSON *o = cJSON_CreateObject(), *old, *s;
	char hex[2 * GRANTS_HASH_LEN + 1];

	if (o == NULL || cJSON_AddStringToObject(o, "id", gr->id) == NULL ||
	    cJSON_AddStringToObject(o, "client_id", gr->client_id) == NULL ||
	    cJSON_AddStringToObject(o, "client_name", gr->client_name) == NULL ||
	    cJSON_AddStringToObject(o, "resource", gr->resource) == NULL ||
	    cJSON_AddStringToObject(o, "redirect_uri", gr->redirect) == NULL ||
	    cJSON_AddStringToObject(o, "scope", gr->scope) == NULL ||
	    cJSON_AddNumberToObject(o, "created", (double)gr->created) == NULL ||
	    cJSON_AddNumberToObject(o, "last_used",
	    (double)gr->last_used) == NULL ||
	    cJSON_AddNumberToObject(o, "access_expires",
	    (double)gr->access_expires) == NULL ||
	    cJSON_AddNumberToObject(o, "refresh_expires",
	    (double)gr->refresh_expires) == NULL ||
	    grants_hex_out(o, "access", gr->access) == -1 ||
	    grants_hex_out(o, "refresh", gr->refresh) == -1 ||
	    (old = cJSON_AddArrayToObject(o, "old")) == NULL)
		goto fail;
	for (size_t i = 0; i < gr->nold; i++) {
		sodium_bin2hex(hex, sizeof(hex), gr->old[i], GRANTS_HASH_LEN);
		if ((s = cJSON_CreateString(hex)) == NULL ||
		    !cJSON_AddItemToArray(old, s))
			goto fail;
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

int
grants_save(char err[PAPO_ERR_LEN], struct grants *g)
{
	cJSON *root = cJSON_CreateObject(), *cl, *gr, *o;
	char *text = NULL;
	int rc = -1;

	if (root == NULL ||
	    (cl = cJSON_AddArrayToObject(root, "clients")) == NULL ||
	    (gr = cJSON_AddArrayToObject(root, "grants")) == NULL)
		goto nomem;
	for (size_t i = 0; i < g->nclients; i++)
		if ((o = grants_client_out(&g->clients[i])) == NULL ||
		    !cJSON_AddItemToArray(cl, o))
			goto nomem;
	for (size_t i = 0; i < g->ngrants; i++)
		if ((o = grants_grant_out(&g->grants[i])) == NULL ||
		    !cJSON_AddItemToArray(gr, o))
			goto nomem;
	if ((text = cJSON_Print(root)) == NULL)
		goto nomem;
	if (fs_write(err, g->path, text, strlen(text)) == -1)
		goto out;
	rc = 0;
	goto out;
nomem:
	snprintf(err, PAPO_ERR_LEN, "out of memory");
out:
	if (text != NULL)
		sodium_memzero(text, strlen(text));
	cJSON_free(text);
	cJSON_Delete(root);
	return rc;
}

struct grants_client *
grants_client(struct grants *g, const char *id)
{
	for (size_t i = 0; i < g->nclients; i++)
		if (strcmp(g->clients[i].id, id) == 0)
			return &g->clients[i];
	return NULL;
}

static int
grants_client_used(const struct grants *g, const char *id)
{
	for (size_t i = 0; i < g->ngrants; i++)
		if (strcmp(g->grants[i].client_id, id) == 0)
			return 1;
	return 0;
}

struct grants_client *
grants_client_add(struct grants *g, int64_t now)
{
	struct grants_client *c;
	size_t victim = g->nclients;

	if (g->nclients == GRANTS_CLIENTS_MAX) {
		/* Clients register on every new install and never say they
		 * left: the oldest one no grant uses makes room. */
		for (size_t i = 0; i < g->nclients; i++)
			if (!grants_client_used(g, g->clients[i].id) &&
			    (victim == g->nclients ||
			    g->clients[i].created < g->clients[victim].created))
				victim = i;
		if (victim == g->nclients)
			return NULL;
		g->clients[victim] = g->clients[--g->nclients];
	}
	c = &g->clients[g->nclients++];
	memset(c, 0, sizeof(*c));
	c->created = now;
	return c;
}

struct grant *
grants_add(struct grants *g, int64_t now)
{
	struct grant *gr;
	unsigned char id[GRANTS_ID_LEN / 2];

	if (g->ngrants == GRANTS_MAX)
		return NULL;
	gr = &g->grants[g->ngrants++];
	memset(gr, 0, sizeof(*gr));
	randombytes_buf(id, sizeof(id));
	sodium_bin2hex(gr->id, sizeof(gr->id), id, sizeof(id));
	gr->created = gr->last_used = now;
	return gr;
}

void
grants_remove(struct grants *g, struct grant *gr)
{
	size_t i = (size_t)(gr - g->grants);

	if (i >= g->ngrants)
		return;
	g->grants[i] = g->grants[--g->ngrants];
	sodium_memzero(&g->grants[g->ngrants], sizeof(g->grants[0]));
}

int
grants_revoke(struct grants *g, const char *id)
{
	for (size_t i = 0; i < g->ngrants; i++)
		if (strcmp(g->grants[i].id, id) == 0) {
			grants_remove(g, &g->grants[i]);
			return 0;
		}
	return -1;
}

size_t
grants_expire(struct grants *g, int64_t now)
{
	size_t n = 0;

	for (size_t i = 0; i < g->ngrants;)
		if (g->grants[i].refresh_expires <= now) {
			grants_remove(g, &g->grants[i]);
			n++;
		} else {
			i++;
		}
	return n;
}

/* Every hash is compared in full, in constant time: which byte differs
 * must not show in how long a request took. */
struct grant *
grants_by_access(struct grants *g, const unsigned char *hash)
{
	for (size_t i = 0; i < g->ngrants; i++)
		if (sodium_memcmp(g->grants[i].access, hash,
		    GRANTS_HASH_LEN) == 0)
			return &g->grants[i];
	return NULL;
}

struct grant *
grants_by_refresh(struct grants *g, const unsigned char *hash)
{
	for (size_t i = 0; i < g->ngrants; i++)
		if (sodium_memcmp(g->grants[i].refresh, hash,
		    GRANTS_HASH_LEN) == 0)
			return &g->grants[i];
	return NULL;
}

struct grant *
grants_by_old(struct grants *g, const unsigned char *hash)
{
	for (size_t i = 0; i < g->ngrants; i++)
		for (size_t j = 0; j < g->grants[i].nold; j++)
			if (sodium_memcmp(g->grants[i].old[j], hash,
			    GRANTS_HASH_LEN) == 0)
				return &g->grants[i];
	return NULL;
}

int
grants_approved(const struct grants *g, const char *client_id,
    const char *redirect, int64_t now)
{
	for (size_t i = 0; i < g->ngrants; i++) {
		const struct grant *gr = &g->grants[i];

		if (gr->refresh_expires > now && gr->redirect[0] != '\0' &&
		    strcmp(gr->client_id, client_id) == 0 &&
		    strcmp(gr->redirect, redirect) == 0)
			return 1;
	}
	return 0;
}

void
grants_hash(const char *token, unsigned char hash[GRANTS_HASH_LEN])
{
	crypto_generichash(hash, GRANTS_HASH_LEN, (const unsigned char *)token,
	    strlen(token), NULL, 0);
}

void
grants_token(char out[GRANTS_TOKEN_LEN + 1],
    unsigned char hash[GRANTS_HASH_LEN])
{
	unsigned char raw[GRANTS_TOKEN_RAW];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(out, GRANTS_TOKEN_LEN + 1, raw, sizeof(raw),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
	grants_hash(out, hash);
}
