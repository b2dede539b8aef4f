/*
 * client.c: the CLI's side of the daemon's API (client.h).  It reads
 * serve.json to find the daemon, and makes one HTTP request at a time
 * with the bearer token from PAPO_TOKEN: plain http:// by lib/httpc,
 * https:// by client_tls.c (libcurl, with the daemon's key pinned).
 * Runs on the main thread of a short-lived command; it must never talk
 * to anything but the URL serve.json names (it uses no proxy).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/fs.h"
#include "lib/httpc.h"
#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/client_int.h"
#include "server/daemon/serve.h"

#define CLIENT_FILE_MAX (64 * 1024)   /* bytes of serve.json */

/* Reads a whole small file; NULL when absent, unreadable or too big. */
static char *
client_read(const char *path)
{
	char *data = NULL;
	size_t len;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	if ((data = malloc(CLIENT_FILE_MAX + 1)) != NULL) {
		len = fread(data, 1, CLIENT_FILE_MAX + 1, f);
		if (ferror(f) || len > CLIENT_FILE_MAX) {
			free(data);
			data = NULL;
		} else {
			data[len] = '\0';
		}
	}
	fclose(f);
	return data;
}

int
client_open(char err[PAPO_ERR_LEN], const char *home, struct client *c)
{
	char path[4096];
	const cJSON *pid, *url, *pin;
	int64_t pidv;
	cJSON *o = NULL;
	char *data = NULL;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/%s", home, SERVE_JSON);
	if ((data = client_read(path)) == NULL) {
		if (errno == ENOENT)
			goto none;
		snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", path,
		    strerror(errno));
		goto out;
	}
	o = cJSON_Parse(data);
	pid = cJSON_GetObjectItemCaseSensitive(o, "pid");
	url = cJSON_GetObjectItemCaseSensitive(o, "http");
	pin = cJSON_GetObjectItemCaseSensitive(o, "tls_pin");
	if (fs_json_int(pid, 1, INT32_MAX, &pidv) == -1 ||
	    !cJSON_IsString(url) ||
	    (strncmp(url->valuestring, "https://", 8) == 0 &&
	    (!cJSON_IsString(pin) ||
	    strncmp(pin->valuestring, "sha256//", 8) != 0))) {
		snprintf(err, PAPO_ERR_LEN, "%s is damaged: remove it and start "
		    "'papo serve' again", path);
		goto out;
	}
	c->pid = (long)pidv;
	/* A daemon killed without its clean stop leaves the file behind. */
	if (kill((pid_t)c->pid, 0) == -1 && errno == ESRCH)
		goto none;
	if ((c->url = strdup(url->valuestring)) == NULL ||
	    (cJSON_IsString(pin) &&
	    (c->pin = strdup(pin->valuestring)) == NULL)) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto out;
	}
	c->token = getenv("PAPO_TOKEN");
	if (c->token != NULL && c->token[0] == '\0')
		c->token = NULL;
	rc = 0;
	goto out;
none:
	/* With no room, 'papo serve' would make a new one: say first how
	 * to get the room the person means. */
	snprintf(path, sizeof(path), "%s/room.json", home);
	if (access(path, F_OK) == -1 && errno == ENOENT)
		snprintf(err, PAPO_ERR_LEN, "%s has no room yet: join one with "
		    "'papo join INVITE --name NAME' (or make one with 'papo new "
		    "--name NAME'), then start 'papo serve'", home);
	else
		snprintf(err, PAPO_ERR_LEN, "no papo serve is running on %s: "
		    "start one with 'papo serve'", home);
out:
	if (rc == -1)
		client_close(c);
	cJSON_Delete(o);
	free(data);
	return rc;
}

void
client_close(struct client *c)
{
	free(c->url);
	free(c->pin);
	c->url = c->pin = NULL;
}

/* Whether c's daemon is reached over HTTPS (client_tls.c's). */
static int
client_tls(const struct client *c)
{
	return strncmp(c->url, "https://", 8) == 0;
}

/* What every request to the daemon carries: its token, then up to two
 * headers of the caller's; the rest of r zeroed.  auth holds the token's
 * header, which the caller wipes. */
static void
client_req(const struct client *c, struct httpc_req *r, char auth[300],
    const char *method, const char *path, const char *h1, const char *h2)
{
	int n = 0;

	memset(r, 0, sizeof(*r));
	r->url = c->url;
	r->method = method;
	r->path = path;
	r->connect_ms = CLIENT_CONNECT_S * 1000;
	if (c->token != NULL) {
		snprintf(auth, 300, "Authorization: Bearer %s", c->token);
		r->headers[n++] = auth;
	}
	if (h1 != NULL)
		r->headers[n++] = h1;
	if (h2 != NULL)
		r->headers[n++] = h2;
}

static int
client_take(void *arg, long status, const char *p, size_t n)
{
	(void)status;
	return client_buf_add(arg, p, n);
}

int
client_call(char err[PAPO_ERR_LEN], const struct client *c, const char *path,
    const char *body, long *status, char **out)
{
	struct client_buf b = { NULL, 0, 0 };
	struct httpc_req r;
	enum httpc_end end;
	char auth[300];
	int rc = -1;

	*out = NULL;
	if (client_tls(c))
		return client_tls_call(err, c, path, body, status, out);
	client_req(c, &r, auth, body != NULL ? "POST" : "GET", path,
	    body != NULL ? "Content-Type: application/json" : NULL, NULL);
	r.body = body;
	r.body_len = body != NULL ? strlen(body) : 0;
	r.total_ms = CLIENT_TIMEOUT_S * 1000;
	r.on_body = client_take;
	r.body_arg = &b;
	end = httpc_do(&r, status);
	explicit_bzero(auth, sizeof(auth));
	if (end != HTTPC_OK) {
		if (b.over)
			snprintf(err, PAPO_ERR_LEN, "the answer of papo serve at "
			    "%s is over %d bytes", c->url, CLIENT_ANSWER_MAX);
		else
			snprintf(err, PAPO_ERR_LEN, "cannot reach papo serve at "
			    "%s: %s", c->url, httpc_why(end));
		goto out;
	}
	rc = client_answer(err, c, &b, *status, out);
out:
	free(b.p);
	return rc;
}

struct client_stream {
	client_chunk_cb *cb;
	void *arg;
	struct client_buf err;   /* an error answer's body */
};

static int
client_stream_take(void *arg, long status, const char *p, size_t n)
{
	struct client_stream *st = arg;

	/* An error answer is not a stream: its body is its error. */
	if (status != 200)
		return st->err.len + n > CLIENT_STREAM_ERR_MAX ? -1 :
		    client_buf_add(&st->err, p, n);
	return st->cb(p, n, st->arg);
}

int
client_stream(char err[PAPO_ERR_LEN], const struct client *c, const char *path,
    const char *last, client_chunk_cb *cb, void *arg)
{
	struct client_stream st = { cb, arg, { NULL, 0, 0 } };
	char auth[300], lastid[128];
	struct httpc_req r;
	enum httpc_end end;
	long status = 0;
	int rc = -1;

	if (client_tls(c))
		return client_tls_stream(err, c, path, last, cb, arg);
	if (last != NULL)
		snprintf(lastid, sizeof(lastid), "Last-Event-ID: %s", last);
	client_req(c, &r, auth, "GET", path, "Accept: text/event-stream",
	    last != NULL ? lastid : NULL);
	r.on_body = client_stream_take;
	r.body_arg = &st;
	end = httpc_do(&r, &status);
	explicit_bzero(auth, sizeof(auth));
	if (status != 0 && status != 200) {
		client_stream_error(err, c, status, &st.err);
		goto out;
	}
	/* A stream the daemon ended, or cut (it stopped), or the caller
	 * stopped, has ended as streams do. */
	if (end != HTTPC_OK && end != HTTPC_STOPPED && end != HTTPC_CUT) {
		snprintf(err, PAPO_ERR_LEN, "cannot reach papo serve at %s: %s",
		    c->url, httpc_why(end));
		goto out;
	}
	rc = 0;
out:
	free(st.err.p);
	return rc;
}

static long
client_read_file(void *arg, char *p, size_t n)
{
	FILE *f = arg;
	size_t got = fread(p, 1, n, f);

	if (got == 0 && ferror(f))
		return -1;
	return (long)got;
}

int
client_upload(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, FILE *f, long long size, long *status, char **out)
{
	struct client_buf b = { NULL, 0, 0 };
	struct httpc_req r;
	enum httpc_end end;
	char auth[300];
	int rc = -1;

	*out = NULL;
	if (client_tls(c))
		return client_tls_upload(err, c, path, f, size, status, out);
	client_req(c, &r, auth, "POST", path,
	    "Content-Type: application/octet-stream", NULL);
	r.read = client_read_file;
	r.read_arg = f;
	r.read_len = size < 0 ? -1 : size;
	r.idle_ms = CLIENT_IDLE_S * 1000;
	r.on_body = client_take;
	r.body_arg = &b;
	end = httpc_do(&r, status);
	explicit_bzero(auth, sizeof(auth));
	if (end == HTTPC_READ) {
		snprintf(err, PAPO_ERR_LEN, "cannot read the file: %s",
		    strerror(errno));
		goto out;
	}
	if (end != HTTPC_OK) {
		snprintf(err, PAPO_ERR_LEN, "cannot upload to papo serve at %s: "
		    "%s", c->url, httpc_why(end));
		goto out;
	}
	rc = client_answer(err, c, &b, *status, out);
out:
	free(b.p);
	return rc;
}

struct client_dl {
	FILE *f;
	struct client_buf err;     /* an error answer's body */
	int failed;                /* f could not be written */
	unsigned long long bytes;
	client_progress_cb *progress;
	void *arg;
};

static int
client_dl_take(void *arg, long status, const char *p, size_t n)
{
	struct client_dl *d = arg;

	if (status != 200 && status != 206)
		return client_buf_add(&d->err, p, n);
	if (fwrite(p, 1, n, d->f) != n) {
		d->failed = 1;
		return -1;
	}
	d->bytes += n;
	if (d->progress != NULL)
		d->progress(d->arg, d->bytes);
	return 0;
}

int
client_download(char err[PAPO_ERR_LEN], const struct client *c,
    const char *path, unsigned long long off, FILE *f,
    client_progress_cb *progress, void *arg, long *status, char **out)
{
	struct httpc_req r;
	struct client_dl d;
	char auth[300], range[64];
	enum httpc_end end;
	int rc = -1;

	*out = NULL;
	if (client_tls(c))
		return client_tls_download(err, c, path, off, f, progress, arg,
		    status, out);
	memset(&d, 0, sizeof(d));
	d.f = f;
	d.progress = progress;
	d.arg = arg;
	if (off > 0)
		snprintf(range, sizeof(range), "Range: bytes=%llu-", off);
	client_req(c, &r, auth, "GET", path, off > 0 ? range : NULL, NULL);
	r.idle_ms = CLIENT_IDLE_S * 1000;
	r.on_body = client_dl_take;
	r.body_arg = &d;
	end = httpc_do(&r, status);
	explicit_bzero(auth, sizeof(auth));
	if (d.failed) {
		snprintf(err, PAPO_ERR_LEN, "cannot write the file: %s",
		    strerror(errno));
		goto out;
	}
	if (end != HTTPC_OK) {
		snprintf(err, PAPO_ERR_LEN, "the download from papo serve at "
		    "%s stopped: %s", c->url, httpc_why(end));
		goto out;
	}
	client_dl_error(c, *status, &d.err, out);
	rc = 0;
out:
	free(d.err.p);
	return rc;
}
