/*
 * ask.c: a command asking the running daemon (ask.h): the room named in
 * the path, the request through client.c, the daemon's error or its
 * silence said on one line.  Main thread.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/ask.h"
#include "server/cli/client.h"
#include "server/cli/cmd.h"

/*
 * What a send cut short says, after the error, when the daemon's answer
 * did not say (docs/RELIABILITY.md): no answer at all (the daemon died
 * with the request sent), or a 503 (it stopped before the node took the
 * request, which is then not stored; one it took is answered queued).
 */
#define CLI_SEND_UNANSWERED "; the message may have been kept: 'papo " \
	"history' shows it once papo serve runs again, before you send it again"
#define CLI_SEND_UNTAKEN "; the message was not taken: send it again " \
	"once papo serve runs"

int
cli_room_path(char *out, size_t len, const char *path, const char *room)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = (size_t)snprintf(out, len, "%s", path);

	if (n >= len)
		return -1;
	if (room == NULL || room[0] == '\0')
		return 0;
	n += (size_t)snprintf(out + n, len - n, "%croom=",
	    strchr(path, '?') != NULL ? '&' : '?');
	for (const unsigned char *p = (const unsigned char *)room; *p != '\0' &&
	    n + 4 < len; p++) {
		if (isalnum(*p) || strchr("-._~", *p) != NULL)
			out[n++] = (char)*p;
		else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	if (n + 4 >= len)
		return -1;
	out[n] = '\0';
	return 0;
}

int
cli_request(const char *home, const char *room, const char *path,
    const char *body, cJSON **out, char **text, int send)
{
	char err[PAPO_ERR_LEN], full[1024];
	struct client cl;
	const cJSON *e;
	char *answer = NULL;
	long status = 0;
	int rc = CLI_ERROR;

	*out = NULL;
	if (cli_room_path(full, sizeof(full), path, room) == -1)
		return cli_fail("the room's name is too long");
	path = full;
	if (client_open(err, home, &cl) == -1)
		return cli_fail(err);
	if (client_call(err, &cl, path, body, &status, &answer) == -1) {
		if (send)
			fprintf(stderr, "papo: %s%s\n", err,
			    CLI_SEND_UNANSWERED);
		else
			cli_fail(err);
		goto out;
	}
	*out = cJSON_Parse(answer);
	if (status < 200 || status > 299) {
		e = cJSON_GetObjectItemCaseSensitive(*out, "error");
		if (cJSON_IsString(e))
			snprintf(err, sizeof(err), "%s", e->valuestring);
		else
			snprintf(err, sizeof(err), "papo serve answered HTTP %ld",
			    status);
		fprintf(stderr, "papo: %s%s\n", err, send && status == 503 ?
		    CLI_SEND_UNTAKEN : "");
		goto out;
	}
	if (*out == NULL) {
		cli_fail("papo serve answered with something that is not JSON");
		goto out;
	}
	if (text != NULL) {
		*text = answer;
		answer = NULL;
	}
	rc = CLI_OK;
out:
	if (rc != CLI_OK) {
		cJSON_Delete(*out);
		*out = NULL;
	}
	free(answer);
	client_close(&cl);
	return rc;
}

int
cli_call(const char *home, const char *room, const char *path,
    const char *body, cJSON **out, char **text)
{
	return cli_request(home, room, path, body, out, text, 0);
}
