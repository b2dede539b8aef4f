/*
 * client_tls.c: the CLI's requests to a daemon that serves HTTPS
 * (client.h's calls when serve.json's URL is https://), made by libcurl
 * with the daemon's public key pinned; and client_setup, which the MCP
 * bridge's own libcurl requests use.  Only papo-full links it (libcurl
 * and what it loads); the front program hands such a daemon's commands
 * to papo-full (full.c).  Runs on the main thread of a short-lived
 * command; it must never talk to anything but the URL serve.json names
 * (proxies from the environment are ignored).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/client_int.h"

void
client_setup(const struct client *c, void *curl)
{
	curl_easy_setopt(curl, CURLOPT_PROXY, "");
	if (c->pin == NULL)
		return;
	/* The pin is the whole check: libcurl compares the key before it
	 * sends a byte, and refuses any other. */
	curl_easy_setopt(curl, CURLOPT_PINNEDPUBLICKEY, c->pin);
	curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
}

static size_t
client_write(char *data, size_t size, size_t n, void *arg)
{
	return client_buf_add(arg, data, size * n) == -1 ? 0 : size * n;
}

int
client_tls_call(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, const char *body, long *status, char **out)
{
	char url[1024], auth[300];
	struct curl_slist *headers = NULL;
	struct client_buf b = { NULL, 0, 0 };
	CURL *curl = NULL;
	CURLcode cc;
	int rc = -1;

	*out = NULL;
	snprintf(url, sizeof(url), "%s%s", c->url, path);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (curl = curl_easy_init()) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot start libcurl");
		goto out;
	}
	if (body != NULL) {
		headers = curl_slist_append(headers,
		    "Content-Type: application/json");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	}
	if (c->token != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		    c->token);
		headers = curl_slist_append(headers, auth);
		explicit_bzero(auth, sizeof(auth));
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	client_setup(c, curl);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)CLIENT_CONNECT_S);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)CLIENT_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, client_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	if ((cc = curl_easy_perform(curl)) != CURLE_OK) {
		if (b.over)
			snprintf(err, PAPO_ERR_LEN, "the answer of papo serve at "
			    "%s is over %d bytes", c->url, CLIENT_ANSWER_MAX);
		else
			snprintf(err, PAPO_ERR_LEN, "cannot reach papo serve at "
			    "%s: %s", c->url, curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	rc = client_answer(err, c, &b, *status, out);
out:
	free(b.p);
	curl_slist_free_all(headers);
	if (curl != NULL)
		curl_easy_cleanup(curl);
	curl_global_cleanup();
	return rc;
}

struct client_stream {
	client_chunk_cb *cb;
	void *arg;
	CURL *curl;
	struct client_buf err;   /* an error answer's body */
};


static size_t
client_stream_write(char *data, size_t size, size_t n, void *arg)
{
	struct client_stream *st = arg;
	long status = 0;

	/* An error answer is not a stream: its body is its error. */
	curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		return st->err.len + size * n > CLIENT_STREAM_ERR_MAX ? 0 :
		    client_write(data, size, n, &st->err);
	return st->cb(data, size * n, st->arg) == -1 ? 0 : size * n;
}

int
client_tls_stream(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, const char *last, client_chunk_cb *cb, void *arg)
{
	char url[1024], auth[300], lastid[128];
	struct curl_slist *headers = NULL;
	struct client_stream st = { cb, arg, NULL, { NULL, 0, 0 } };
	long status = 0;
	CURLcode cc;
	int rc = -1;

	snprintf(url, sizeof(url), "%s%s", c->url, path);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (st.curl = curl_easy_init()) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot start libcurl");
		goto out;
	}
	headers = curl_slist_append(headers, "Accept: text/event-stream");
	if (last != NULL) {
		snprintf(lastid, sizeof(lastid), "Last-Event-ID: %s", last);
		headers = curl_slist_append(headers, lastid);
	}
	if (c->token != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		    c->token);
		headers = curl_slist_append(headers, auth);
		explicit_bzero(auth, sizeof(auth));
	}
	curl_easy_setopt(st.curl, CURLOPT_URL, url);
	curl_easy_setopt(st.curl, CURLOPT_HTTPHEADER, headers);
	client_setup(c, st.curl);
	curl_easy_setopt(st.curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(st.curl, CURLOPT_CONNECTTIMEOUT,
	    (long)CLIENT_CONNECT_S);
	curl_easy_setopt(st.curl, CURLOPT_WRITEFUNCTION, client_stream_write);
	curl_easy_setopt(st.curl, CURLOPT_WRITEDATA, &st);
	cc = curl_easy_perform(st.curl);
	curl_easy_getinfo(st.curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 0 && status != 200) {
		client_stream_error(err, c, status, &st.err);
		goto out;
	}
	if (cc != CURLE_OK && cc != CURLE_WRITE_ERROR &&
	    cc != CURLE_PARTIAL_FILE && cc != CURLE_RECV_ERROR) {
		snprintf(err, PAPO_ERR_LEN, "cannot reach papo serve at %s: %s",
		    c->url, curl_easy_strerror(cc));
		goto out;
	}
	rc = 0;
out:
	free(st.err.p);
	curl_slist_free_all(headers);
	if (st.curl != NULL)
		curl_easy_cleanup(st.curl);
	curl_global_cleanup();
	return rc;
}

/* Sets what every request needs: the URL, the token, the pin. */
static struct curl_slist *
client_prepare(const struct client *c, CURL *curl, const char *path,
    struct curl_slist *headers)
{
	char url[1024], auth[300];

	snprintf(url, sizeof(url), "%s%s", c->url, path);
	if (c->token != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		    c->token);
		headers = curl_slist_append(headers, auth);
		explicit_bzero(auth, sizeof(auth));
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	client_setup(c, curl);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)CLIENT_CONNECT_S);
	/* A file takes as long as it takes; a daemon that stops answering
	 * for a minute is given up on. */
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, (long)CLIENT_IDLE_S);
	return headers;
}

static size_t
client_read_file(char *out, size_t size, size_t n, void *arg)
{
	FILE *f = arg;
	size_t got = fread(out, 1, size * n, f);

	if (got == 0 && ferror(f))
		return CURL_READFUNC_ABORT;
	return got;
}

int
client_tls_upload(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, FILE *f, long long size, long *status, char **out)
{
	struct curl_slist *headers = NULL;
	struct client_buf b = { NULL, 0, 0 };
	CURL *curl = NULL;
	CURLcode cc;
	int rc = -1;

	*out = NULL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (curl = curl_easy_init()) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot start libcurl");
		goto out;
	}
	headers = curl_slist_append(headers,
	    "Content-Type: application/octet-stream");
	if (size < 0)
		headers = curl_slist_append(headers,
		    "Transfer-Encoding: chunked");
	headers = client_prepare(c, curl, path, headers);
	curl_easy_setopt(curl, CURLOPT_POST, 1L);
	curl_easy_setopt(curl, CURLOPT_READFUNCTION, client_read_file);
	curl_easy_setopt(curl, CURLOPT_READDATA, f);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)(size < 0 ? -1 : size));
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, client_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	if ((cc = curl_easy_perform(curl)) != CURLE_OK) {
		snprintf(err, PAPO_ERR_LEN, cc == CURLE_ABORTED_BY_CALLBACK ?
		    "cannot read the file: %s" : "cannot upload to papo serve "
		    "at %s", cc == CURLE_ABORTED_BY_CALLBACK ?
		    strerror(errno) : c->url);
		if (cc != CURLE_ABORTED_BY_CALLBACK)
			snprintf(err + strlen(err), PAPO_ERR_LEN - strlen(err),
			    ": %s", curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	rc = client_answer(err, c, &b, *status, out);
out:
	free(b.p);
	curl_slist_free_all(headers);
	if (curl != NULL)
		curl_easy_cleanup(curl);
	curl_global_cleanup();
	return rc;
}

struct client_dl {
	CURL *curl;
	FILE *f;
	struct client_buf err;     /* an error answer's body */
	int failed;                /* f could not be written */
	unsigned long long bytes;
	client_progress_cb *progress;
	void *arg;
};

static size_t
client_dl_write(char *data, size_t size, size_t n, void *arg)
{
	struct client_dl *d = arg;
	long status = 0;

	curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200 && status != 206)
		return client_write(data, size, n, &d->err);
	if (fwrite(data, 1, size * n, d->f) != size * n) {
		d->failed = 1;
		return 0;
	}
	d->bytes += size * n;
	if (d->progress != NULL)
		d->progress(d->arg, d->bytes);
	return size * n;
}

int
client_tls_download(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, unsigned long long off, FILE *f,
    client_progress_cb *progress, void *arg, long *status, char **out)
{
	struct curl_slist *headers = NULL;
	struct client_dl d;
	char range[64];
	CURLcode cc;
	int rc = -1;

	*out = NULL;
	memset(&d, 0, sizeof(d));
	d.f = f;
	d.progress = progress;
	d.arg = arg;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (d.curl = curl_easy_init()) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot start libcurl");
		goto out;
	}
	if (off > 0) {
		snprintf(range, sizeof(range), "Range: bytes=%llu-", off);
		headers = curl_slist_append(headers, range);
	}
	headers = client_prepare(c, d.curl, path, headers);
	curl_easy_setopt(d.curl, CURLOPT_WRITEFUNCTION, client_dl_write);
	curl_easy_setopt(d.curl, CURLOPT_WRITEDATA, &d);
	cc = curl_easy_perform(d.curl);
	if (d.failed) {
		snprintf(err, PAPO_ERR_LEN, "cannot write the file: %s",
		    strerror(errno));
		goto out;
	}
	if (cc != CURLE_OK) {
		snprintf(err, PAPO_ERR_LEN, "the download from papo serve at "
		    "%s stopped: %s", c->url, curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(d.curl, CURLINFO_RESPONSE_CODE, status);
	client_dl_error(c, *status, &d.err, out);
	rc = 0;
out:
	free(d.err.p);
	curl_slist_free_all(headers);
	if (d.curl != NULL)
		curl_easy_cleanup(d.curl);
	curl_global_cleanup();
	return rc;
}
