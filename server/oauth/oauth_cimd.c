/*
 * oauth_cimd.c: Client ID Metadata Documents, for oauth_approve.c's
 * /authorize: a client_id that is an https URL with a path names a JSON
 * document with the client's name and redirect URIs, which is fetched,
 * checked and kept here (a good one for 10 minutes, a failure for 30 s).
 *
 * Runs on the main thread and must never block it: a metadata document
 * is fetched by a thread of its own (libcurl, bounded in time and size,
 * never at a private address unless a test allows it), which hands
 * itself back through a channel (lib/chan.h) watched by the loop while
 * the request waits.  That thread touches nothing but its own struct
 * oauth_fetch, and nothing at all once it is pushed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "lib/addr.h"
#include "lib/chan.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/os.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/oauth/grants.h"
#include "server/oauth/oauth_int.h"

#define OAUTH_CIMD_MAX 5120         /* bytes of a metadata document */
#define OAUTH_CIMD_OK_S 600         /* a fetched document is kept */
#define OAUTH_CIMD_FAIL_S 30        /* a failed fetch is remembered */
#define OAUTH_CIMD_TIMEOUT_MS 5000  /* a fetch, all told */
#define OAUTH_FETCHES_MAX 4         /* fetches at once */

/* One fetch of a document, on its own thread. */
struct oauth_fetch {
	struct oauth *o;                 /* the main thread's only */
	pthread_t thread;
	char url[GRANTS_URI_MAX + 1];
	int private_ok;
	const char *ca;                  /* test CA (private_ok only) */
	struct chan *done;               /* o->fetched: pushed when done */
	struct chan_link link;
	struct http_req *req;            /* waiting for it; NULL: gone */
	http_handler *again;             /* req's handler, run again */
	char *doc;
	size_t len;
	long status;
	char err[PAPO_ERR_LEN];          /* set when the fetch failed */
	int refused;                     /* an address it may not reach */
	LIST_ENTRY(oauth_fetch) entry;
};

/* Is id the URL of a Client ID Metadata Document: https with a path (or
 * http too when a test allows private addresses)? */
int
oauth_is_cimd(const struct oauth *o, const char *id)
{
	const char *p;

	if (strncmp(id, "https://", 8) == 0)
		p = id + 8;
	else if (o->cimd_private && strncmp(id, "http://", 7) == 0)
		p = id + 7;
	else
		return 0;
	p = strchr(p, '/');
	return p != NULL && p[1] != '\0' && strchr(id, '#') == NULL &&
	    strchr(id, '@') == NULL && strlen(id) <= GRANTS_URI_MAX;
}

/* May a document be fetched from this address?  Never from loopback,
 * private, link-local, shared (CGNAT), multicast or unspecified ones,
 * unless a test allows them: a client id must not make the daemon
 * reach into its own network. */
static int
oauth_addr_public(const struct sockaddr *sa)
{
	struct addr a;

	return addr_from_sockaddr(sa, &a) == 0 &&
	    addr_scope(&a) == ADDR_SCOPE_PUBLIC;
}

static curl_socket_t
oauth_opensocket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct oauth_fetch *f = arg;

	(void)purpose;
	if (!f->private_ok && !oauth_addr_public(&a->addr)) {
		f->refused = 1;
		return CURL_SOCKET_BAD;
	}
	return os_socket(a->family, a->socktype, a->protocol, 0);
}

static size_t
oauth_fetch_write(char *data, size_t size, size_t n, void *arg)
{
	struct oauth_fetch *f = arg;
	char *p;

	n *= size;
	if (f->len + n > OAUTH_CIMD_MAX) {
		snprintf(f->err, sizeof(f->err), "its metadata document is "
		    "larger than %d bytes", OAUTH_CIMD_MAX);
		return 0;
	}
	if ((p = realloc(f->doc, f->len + n + 1)) == NULL)
		return 0;
	f->doc = p;
	memcpy(f->doc + f->len, data, n);
	f->len += n;
	f->doc[f->len] = '\0';
	return n;
}

/* The fetch's thread: touches only f, then hands it back. */
static void *
oauth_fetch_run(void *arg)
{
	struct oauth_fetch *f = arg;
	CURL *c = curl_easy_init();
	CURLcode rc;

	if (c == NULL) {
		snprintf(f->err, sizeof(f->err), "out of memory");
		goto done;
	}
	curl_easy_setopt(c, CURLOPT_URL, f->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR,
	    f->private_ok ? "https,http" : "https");
	if (f->ca != NULL && *f->ca != '\0')
		curl_easy_setopt(c, CURLOPT_CAINFO, f->ca);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)OAUTH_CIMD_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE, (long)OAUTH_CIMD_MAX);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "papo");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, oauth_opensocket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, f);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, oauth_fetch_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &f->status);
	if (f->err[0] != '\0')
		;
	else if (f->refused)
		snprintf(f->err, sizeof(f->err), "its metadata document's "
		    "host resolves to a private, loopback or link-local "
		    "address, which papo does not fetch from");
	else if (rc == CURLE_FILESIZE_EXCEEDED)
		snprintf(f->err, sizeof(f->err), "its metadata document is "
		    "larger than %d bytes", OAUTH_CIMD_MAX);
	else if (rc != CURLE_OK)
		snprintf(f->err, sizeof(f->err), "its metadata document "
		    "could not be fetched: %s", curl_easy_strerror(rc));
	else if (f->status != 200)
		snprintf(f->err, sizeof(f->err), "its metadata document "
		    "answered HTTP %ld, not 200", f->status);
	curl_easy_cleanup(c);
done:
	chan_push(f->done, &f->link);
	return NULL;
}

/* The slot a document of url is cached in: its own, else the oldest. */
static struct oauth_cimd *
oauth_cimd_slot(struct oauth *o, const char *url)
{
	struct oauth_cimd *old = &o->cimd[0];

	for (size_t i = 0; i < OAUTH_CIMD_CACHE; i++) {
		if (strcmp(o->cimd[i].url, url) == 0)
			return &o->cimd[i];
		if (o->cimd[i].until < old->until)
			old = &o->cimd[i];
	}
	return old;
}

struct oauth_cimd *
oauth_cimd_find(struct oauth *o, const char *url)
{
	int64_t now = oauth_now();

	for (size_t i = 0; i < OAUTH_CIMD_CACHE; i++)
		if (strcmp(o->cimd[i].url, url) == 0 && o->cimd[i].until > now)
			return &o->cimd[i];
	return NULL;
}

/* Checks a fetched document (RFC draft "OAuth Client ID Metadata
 * Document") into e; e->ok or e->err. */
static void
oauth_cimd_parse(struct oauth_fetch *f, struct oauth_cimd *e)
{
	struct grants_client *c = &e->client;
	const cJSON *v, *u;
	cJSON *j = NULL;

	memset(c, 0, sizeof(*c));
	e->ok = 0;
	if (f->err[0] != '\0') {
		snprintf(e->err, sizeof(e->err), "%s", f->err);
		return;
	}
	if (f->doc == NULL || (j = cJSON_ParseWithLength(f->doc, f->len)) ==
	    NULL || !cJSON_IsObject(j)) {
		snprintf(e->err, sizeof(e->err), "its metadata document is not "
		    "a JSON object");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "client_id");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, f->url) != 0) {
		snprintf(e->err, sizeof(e->err), "its metadata document's "
		    "client_id is not the URL it was fetched from");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "token_endpoint_auth_method");
	if (v != NULL && (!cJSON_IsString(v) ||
	    strcmp(v->valuestring, "none") != 0)) {
		snprintf(e->err, sizeof(e->err), "its metadata document asks "
		    "for token_endpoint_auth_method other than \"none\"; papo "
		    "takes public clients only");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "redirect_uris");
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0 ||
	    cJSON_GetArraySize(v) > GRANTS_REDIRECTS_MAX) {
		snprintf(e->err, sizeof(e->err), "its metadata document needs "
		    "redirect_uris: 1 to %d URIs", GRANTS_REDIRECTS_MAX);
		goto out;
	}
	cJSON_ArrayForEach(u, v) {
		if (!cJSON_IsString(u) || !oauth_redirect_ok(u->valuestring)) {
			snprintf(e->err, sizeof(e->err), "its metadata "
			    "document has a redirect URI that is not https, "
			    "http on loopback or a private-use scheme");
			goto out;
		}
		strcpy(c->redirect[c->nredirect++], u->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "client_name");
	if (cJSON_IsString(v) && v->valuestring[0] != '\0' &&
	    strlen(v->valuestring) <= GRANTS_NAME_MAX)
		snprintf(c->name, sizeof(c->name), "%s", v->valuestring);
	else
		oauth_uri_host(f->url, c->name, sizeof(c->name));
	snprintf(c->id, sizeof(c->id), "%s", f->url);
	e->ok = 1;
out:
	cJSON_Delete(j);
}

static void
oauth_fetch_free(struct oauth *o, struct oauth_fetch *f)
{
	pthread_join(f->thread, NULL);
	LIST_REMOVE(f, entry);
	o->nfetch--;
	free(f->doc);
	free(f);
}

static void
oauth_on_fetched(void *arg, uint32_t events)
{
	struct oauth *o = arg;
	struct oauth_fetch *f;
	struct oauth_cimd *e;
	struct http_req *r;
	struct chan_link *l;
	http_handler *again;

	(void)events;
	while ((l = chan_pop(o->fetched)) != NULL) {
		f = chan_item(l, struct oauth_fetch, link);
		e = oauth_cimd_slot(o, f->url);
		memset(e, 0, sizeof(*e));
		snprintf(e->url, sizeof(e->url), "%s", f->url);
		oauth_cimd_parse(f, e);
		e->until = oauth_now() + (e->ok ? OAUTH_CIMD_OK_S :
		    OAUTH_CIMD_FAIL_S);
		if (!e->ok)
			log_msg(LOG_INFO, "oauth: client %s: %s", f->url, e->err);
		r = f->req;
		again = f->again;
		oauth_fetch_free(o, f);
		if (r != NULL) {
			http_req_watch(r, NULL, NULL);
			again(r, o);
		}
	}
}

static void
oauth_fetch_gone(struct http_req *r, void *arg)
{
	struct oauth_fetch *f = arg;

	(void)r;
	f->req = NULL;
}

/* Starts fetching url's document for r, which waits, and is handed to
 * again when it is in.  -1 when it cannot. */
int
oauth_fetch_start(struct oauth *o, struct http_req *r, const char *url,
    http_handler *again)
{
	struct oauth_fetch *f;

	if (o->nfetch >= OAUTH_FETCHES_MAX || (f = calloc(1, sizeof(*f))) ==
	    NULL)
		return -1;
	f->o = o;
	snprintf(f->url, sizeof(f->url), "%s", url);
	f->private_ok = o->cimd_private;
	/*
	 * A test serving documents over HTTPS on loopback names its own CA;
	 * only with the test setting, so that no deployment trusts more
	 * than the system's CAs.
	 */
	if (f->private_ok)
		f->ca = getenv("PAPO_OAUTH_CIMD_CA");
	f->done = o->fetched;
	f->req = r;
	f->again = again;
	if (pthread_create(&f->thread, NULL, oauth_fetch_run, f) != 0) {
		free(f);
		return -1;
	}
	LIST_INSERT_HEAD(&o->fetches, f, entry);
	o->nfetch++;
	http_defer(r);
	http_req_watch(r, oauth_fetch_gone, f);
	return 0;
}

int
oauth_cimd_open(char err[PAPO_ERR_LEN], struct oauth *o)
{
	if ((o->fetched = chan_new()) == NULL ||
	    loop_add_fd(o->loop, chan_fd(o->fetched), LOOP_IN,
	    oauth_on_fetched, o) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot make OAuth's channel: %s",
		    strerror(errno));
		chan_free(o->fetched, NULL);
		o->fetched = NULL;
		return -1;
	}
	/* libcurl's global state is set up here, on the main thread,
	 * before any fetch's thread could race for it. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return 0;
}

void
oauth_cimd_close(struct oauth *o)
{
	struct oauth_fetch *f;

	/* Each fetch ends within its timeout; its request is answered
	 * now, while HTTP still runs. */
	while ((f = LIST_FIRST(&o->fetches)) != NULL) {
		if (f->req != NULL) {
			http_req_watch(f->req, NULL, NULL);
			http_reply_error(f->req, 503, "papo serve is stopping");
		}
		oauth_fetch_free(o, f);
	}
	if (o->fetched != NULL) {
		loop_del_fd(o->loop, chan_fd(o->fetched));
		/* What it still holds are fetches freed just above. */
		chan_free(o->fetched, NULL);
		o->fetched = NULL;
	}
}
