/*
 * client_answer.c: what the CLI makes of a daemon's answer, whichever
 * way it came (client.c's plain HTTP, client_tls.c's HTTPS): the body
 * gathered, an error said in the CLI's terms.  Pure but for memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/client.h"
#include "server/cli/client_int.h"

int
client_buf_add(struct client_buf *b, const char *data, size_t n)
{
	char *p;

	if (n > CLIENT_ANSWER_MAX - b->len) {
		b->over = 1;
		return -1;
	}
	if ((p = realloc(b->p, b->len + n + 1)) == NULL)
		return -1;
	b->p = p;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* What a 409 of the daemon's says when no room is the default, and
 * what a join of a room held already says (node/node.c, node/store/
 * room.c): client_explain adds the CLI's part. */
#define CLIENT_NO_DEFAULT "none is the default"
#define CLIENT_HELD "(start it with 'papo serve')"

/*
 * The daemon's error answer (*out, its JSON) said in the CLI's terms
 * where the API's are HTTP's or assume no daemon runs: a 401 names
 * PAPO_TOKEN rather than the Authorization header, a daemon in several
 * rooms with no default says how to set one, and a room held already
 * is not to be started (its daemon runs).  *out is replaced then.
 */
void
client_explain(const struct client *c, long status, char **out)
{
	char msg[PAPO_ERR_LEN + 128];
	const char *e, *at;
	cJSON *o = cJSON_Parse(*out), *n = NULL;
	char *text;

	e = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "error"));
	if (status == 401)
		snprintf(msg, sizeof(msg), c->token == NULL ? "papo serve at %s "
		    "needs its token: set PAPO_TOKEN to the token it was "
		    "started with" : "PAPO_TOKEN is not the token papo serve "
		    "at %s was started with: set it to that one", c->url);
	else if (e != NULL && status == 409 &&
	    strstr(e, CLIENT_NO_DEFAULT) != NULL)
		snprintf(msg, sizeof(msg), "%s; or make one the default: papo "
		    "rooms default ROOM", e);
	else if (e != NULL && (at = strstr(e, CLIENT_HELD)) != NULL)
		snprintf(msg, sizeof(msg), "%.*s(its papo serve runs: pid %ld)%s",
		    (int)(at - e), e, c->pid, at + strlen(CLIENT_HELD));
	else {
		cJSON_Delete(o);
		return;
	}
	if ((n = cJSON_CreateObject()) != NULL &&
	    cJSON_AddStringToObject(n, "error", msg) != NULL &&
	    (text = cJSON_PrintUnformatted(n)) != NULL) {
		free(*out);
		*out = strdup(text);
		cJSON_free(text);
		if (*out == NULL)
			*out = calloc(1, 1);
	}
	cJSON_Delete(n);
	cJSON_Delete(o);
}

int
client_answer(char err[PAPO_ERR_LEN], const struct client *c,
    struct client_buf *b, long status, char **out)
{
	if (b->p == NULL && (b->p = calloc(1, 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	*out = b->p;
	b->p = NULL;
	if (status >= 400)
		client_explain(c, status, out);
	if (*out == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	return 0;
}

void
client_stream_error(char err[PAPO_ERR_LEN], const struct client *c,
    long status, struct client_buf *b)
{
	const char *e;
	cJSON *o;

	if (b->p != NULL)
		client_explain(c, status, &b->p);
	o = b->p != NULL ? cJSON_Parse(b->p) : NULL;
	e = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "error"));
	if (e != NULL)
		snprintf(err, PAPO_ERR_LEN, "%s", e);
	else
		snprintf(err, PAPO_ERR_LEN, "papo serve at %s answered HTTP %ld",
		    c->url, status);
	cJSON_Delete(o);
}

void
client_dl_error(const struct client *c, long status, struct client_buf *b,
    char **out)
{
	if (status == 200 || status == 206)
		return;
	*out = b->p != NULL ? b->p : strdup("");
	b->p = NULL;
	if (*out != NULL)
		client_explain(c, status, out);
}
