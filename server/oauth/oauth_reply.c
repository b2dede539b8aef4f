/*
 * oauth_reply.c: what OAuth's routes share to answer (oauth_int.h),
 * above oauth_check.c and below the other OAuth files: the clock every
 * expiry is counted in, the answers (JSON, RFC 6749 errors) and the 403
 * for all but the daemon's own token.  Main thread only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/http/http.h"
#include "server/oauth/oauth_int.h"

int64_t
oauth_now(void)
{
	return (int64_t)time(NULL);
}

/* Helpers for answers. */

void
oauth_json(struct http_req *r, int status, cJSON *o)
{
	char *text = o != NULL ? cJSON_PrintUnformatted(o) : NULL;

	if (text == NULL)
		http_reply_error(r, 500, "out of memory");
	else
		http_reply(r, status, text);
	cJSON_free(text);
	cJSON_Delete(o);
}

/* An OAuth error (RFC 6749 5.2): {"error", "error_description"}. */
void
oauth_error(struct http_req *r, int status, const char *code,
    const char *fmt, ...)
{
	char msg[PAPO_ERR_LEN];
	cJSON *o = cJSON_CreateObject();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (o != NULL && (cJSON_AddStringToObject(o, "error", code) == NULL ||
	    cJSON_AddStringToObject(o, "error_description", msg) == NULL)) {
		cJSON_Delete(o);
		o = NULL;
	}
	oauth_json(r, status, o);
}

/* Whether r carries the daemon's own token (PAPO_TOKEN): what lists
 * and revokes grants; else 0 and r answered 403. */
int
oauth_owner(struct http_req *r, struct oauth *o)
{
	const char *a = http_req_header(r, "Authorization");

	if (a == NULL || strncasecmp(a, "Bearer ", 7) != 0 ||
	    !oauth_token_ok(o, a + 7 + strspn(a + 7, " "))) {
		http_reply_error(r, 403, "only the daemon's own token "
		    "(PAPO_TOKEN) lists and revokes grants");
		return 0;
	}
	return 1;
}
