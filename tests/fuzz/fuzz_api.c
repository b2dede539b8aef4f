/*
 * fuzz_api.c: libFuzzer target for the body of POST /api/send
 * (api_send_parse in server/api/api.c).  Any bytes must give either a send
 * request that keeps the API's promises (text of 1..PAPO_BODY_MAX bytes,
 * or of 0 when it names files, a well-formed reply_to) or a status among 400, 413 and 500 with an
 * error message: never a crash, a leak, or an empty error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "server/api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[PAPO_ERR_LEN] = "";
	const struct node_send_args *a;
	struct node_msg *m;
	char *body;
	size_t n;
	int status;

	/* The HTTP side hands over bodies NUL-terminated. */
	if ((body = malloc(size + 1)) == NULL)
		return 0;
	memcpy(body, data, size);
	body[size] = '\0';
	status = api_send_parse(body, size, &m, err);
	if (status == 0) {
		if (m == NULL || m->kind != NODE_SEND)
			abort();
		a = node_args_send(m);
		if (a->text == NULL && a->files == NULL)
			abort();
		n = a->text != NULL ? strlen(a->text) : 0;
		if ((n == 0 && a->files == NULL) || n > PAPO_BODY_MAX)
			abort();
		if (a->reply_to[0] != '\0' &&
		    strlen(a->reply_to) != PAPO_MSGID_LEN)
			abort();
		node_msg_free(m);
	} else if ((status != 400 && status != 413 && status != 500) ||
	    m != NULL || err[0] == '\0')
		abort();
	free(body);
	return 0;
}
