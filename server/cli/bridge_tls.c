/*
 * bridge_tls.c: papo mcp's requests to a daemon that serves HTTPS
 * (bridge_int.h, "bridge_tls"), made by libcurl with the key serve.json
 * pins (client_setup): one curl_multi carries them side by side, and
 * its wait watches the bridge's other descriptors too.  Only papo-full
 * links it; the front hands such a daemon to papo-full before it starts
 * (bridge_notls.c).  Main thread, inside the bridge's loop; the answer's
 * headers and body go to the callbacks the bridge gave, from inside
 * curl_multi_perform.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "node/node.h"
#include "server/cli/bridge_int.h"
#include "server/cli/client.h"

#define BRIDGE_TLS_FDS 64           /* descriptors waited on beside curl's */

/* One request's handle and what its callbacks need. */
struct bridge_tls {
	CURL *curl;
	struct curl_slist *headers;
	httpc_head_cb *head;
	httpc_body_cb *body;
	struct xfer *x;
};

int
bridge_tls_open(char err[PAPO_ERR_LEN], struct bridge *b)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (b->tls = curl_multi_init()) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot start libcurl");
		return -1;
	}
	return 0;
}

void
bridge_tls_close(struct bridge *b)
{
	if (b->tls == NULL)
		return;
	curl_multi_cleanup(b->tls);
	b->tls = NULL;
	curl_global_cleanup();
}

/* A line of the answer's head: "Name: value" to the bridge's callback,
 * a status line (a 1xx before the answer too) as its start. */
static size_t
bridge_tls_header(char *data, size_t size, size_t n, void *arg)
{
	struct bridge_tls *t = arg;
	size_t len = size * n;
	char line[BRIDGE_SESSION_MAX + 64], *v, *end;
	long status = 0;

	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		t->x->session[0] = '\0';
		t->x->sse_type = 0;
		return len;
	}
	/* Longer headers are none the bridge reads. */
	if (len >= sizeof(line))
		return len;
	memcpy(line, data, len);
	line[len] = '\0';
	if ((v = strchr(line, ':')) == NULL)
		return len;
	*v++ = '\0';
	v += strspn(v, " \t");
	end = v + strlen(v);
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
	    end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
	t->head(t->x, status, line, v);
	return len;
}

static size_t
bridge_tls_write(char *data, size_t size, size_t n, void *arg)
{
	struct bridge_tls *t = arg;
	long status = 0;

	curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
	return t->body(t->x, status, data, size * n) == -1 ? 0 : size * n;
}

static size_t
bridge_tls_discard(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

/* A handle for url with what every request to the daemon needs. */
static CURL *
bridge_tls_handle(struct bridge *b, const char *url,
    const char *const *headers, struct curl_slist **list)
{
	struct curl_slist *l;
	CURL *curl;

	*list = NULL;
	for (size_t i = 0; headers[i] != NULL; i++) {
		if ((l = curl_slist_append(*list, headers[i])) == NULL)
			goto fail;
		*list = l;
	}
	if ((curl = curl_easy_init()) == NULL)
		goto fail;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, *list);
	client_setup(&b->cl, curl);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	return curl;
fail:
	curl_slist_free_all(*list);
	*list = NULL;
	return NULL;
}

int
bridge_tls_start(struct xfer *x, const char *url,
    const char *const *headers, httpc_head_cb *head, httpc_body_cb *body)
{
	struct bridge_tls *t = calloc(1, sizeof(*t));
	const char *more[HTTPC_HEADERS_MAX + 2];
	size_t n = 0;

	if (t == NULL)
		return -1;
	for (; headers[n] != NULL && n < HTTPC_HEADERS_MAX; n++)
		more[n] = headers[n];
	/* A large body must not wait for "100 Continue". */
	more[n++] = x->kind == XFER_POST ? "Expect:" : NULL;
	more[n] = NULL;
	t->x = x;
	t->head = head;
	t->body = body;
	x->tls = t;
	if ((t->curl = bridge_tls_handle(x->b, url, more, &t->headers)) ==
	    NULL)
		goto fail;
	curl_easy_setopt(t->curl, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(t->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(t->curl, CURLOPT_HEADERFUNCTION, bridge_tls_header);
	curl_easy_setopt(t->curl, CURLOPT_HEADERDATA, t);
	curl_easy_setopt(t->curl, CURLOPT_WRITEFUNCTION, bridge_tls_write);
	curl_easy_setopt(t->curl, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(t->curl, CURLOPT_PRIVATE, t);
	if (x->kind == XFER_POST) {
		curl_easy_setopt(t->curl, CURLOPT_POSTFIELDS, x->body);
		curl_easy_setopt(t->curl, CURLOPT_POSTFIELDSIZE,
		    (long)strlen(x->body));
	}
	if (curl_multi_add_handle(x->b->tls, t->curl) != CURLM_OK)
		goto fail;
	return 0;
fail:
	bridge_tls_stop(x);
	return -1;
}

void
bridge_tls_stop(struct xfer *x)
{
	struct bridge_tls *t = x->tls;

	if (t == NULL)
		return;
	if (t->curl != NULL) {
		curl_multi_remove_handle(x->b->tls, t->curl);
		curl_easy_cleanup(t->curl);
	}
	curl_slist_free_all(t->headers);
	free(t);
	x->tls = NULL;
}

int
bridge_tls_poll(struct bridge *b, struct pollfd *fds, nfds_t n, int timeout)
{
	struct curl_waitfd w[BRIDGE_TLS_FDS];
	int numfds, running;

	if (n > BRIDGE_TLS_FDS)
		n = BRIDGE_TLS_FDS;
	for (nfds_t i = 0; i < n; i++) {
		w[i].fd = fds[i].fd;
		w[i].events = (short)((fds[i].events & POLLIN ?
		    CURL_WAIT_POLLIN : 0) | (fds[i].events & POLLOUT ?
		    CURL_WAIT_POLLOUT : 0));
		w[i].revents = 0;
	}
	if (curl_multi_poll(b->tls, n > 0 ? w : NULL, (unsigned)n, timeout,
	    &numfds) != CURLM_OK)
		return -1;
	curl_multi_perform(b->tls, &running);
	return 0;
}

int
bridge_tls_done(struct bridge *b, struct xfer **x, enum xfer_end *end,
    const char **why, long *status)
{
	struct bridge_tls *t = NULL;
	struct CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(b->tls, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &t);
		if (t == NULL)
			continue;
		*status = 0;
		curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE,
		    status);
		*end = m->data.result == CURLE_OK ? XFER_OK :
		    m->data.result == CURLE_COULDNT_CONNECT ? XFER_CONNECT :
		    m->data.result == CURLE_SSL_PINNEDPUBKEYNOTMATCH ?
		    XFER_PINNED : XFER_FAILED;
		*why = curl_easy_strerror(m->data.result);
		*x = t->x;
		return 1;
	}
	return 0;
}

void
bridge_tls_delete(struct bridge *b, const char *url,
    const char *const *headers, int ms)
{
	struct curl_slist *list;
	CURL *curl;

	if ((curl = bridge_tls_handle(b, url, headers, &list)) == NULL)
		return;
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, bridge_tls_discard);
	curl_easy_perform(curl);
	curl_easy_cleanup(curl);
	curl_slist_free_all(list);
}
