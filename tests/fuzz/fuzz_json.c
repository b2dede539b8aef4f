/*
 * fuzz_json.c: libFuzzer target for lib/json.c's json_read, the reading
 * of every JSON body a client sends (the API's, OAuth's, MCP's).  Any
 * bytes must give either a tree with no key twice in any object, or a
 * typed error with a reason and no tree; never a crash, a leak or a read
 * past the terminator.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether an object in v, at any depth, has a key twice. */
static int
broken(const cJSON *v)
{
	const cJSON *c, *d;

	for (c = v->child; c != NULL; c = c->next) {
		if (broken(c))
			return 1;
		if (!cJSON_IsObject(v))
			continue;
		for (d = c->next; d != NULL; d = d->next)
			if (strcmp(c->string, d->string) == 0)
				return 1;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[PAPO_ERR_LEN] = "";
	enum json_err e;
	cJSON *o;
	char *text;

	/* Bodies come NUL-terminated (json.h); nothing past it is read. */
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	e = json_read(err, text, size, &o);
	if (e == JSON_OK) {
		if (o == NULL || broken(o))
			abort();
	} else if (o != NULL || err[0] == '\0' ||
	    (e != JSON_SYNTAX && e != JSON_NUL && e != JSON_KEY_TWICE &&
	    e != JSON_NOMEM)) {
		abort();
	}
	cJSON_Delete(o);
	free(text);
	return 0;
}
