/*
 * http_body.c: the one reading of JSON bodies (http_json_parse): one
 * value, no \u0000 in a string, no key twice in an object at any depth.
 * Pure: bytes in, a cJSON tree or the reason out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/http/http.h"
#include "server/http/http_int.h"

/* Has a valid JSON text a string with the escape \u0000 in it? */
static int
http_json_nul(const char *s, size_t len)
{
	int in = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"')
			in = !in;
		else if (in && s[i] == '\\') {
			if (i + 5 < len && s[i + 1] == 'u' &&
			    memcmp(s + i + 2, "0000", 4) == 0)
				return 1;
			i++;
		}
	}
	return 0;
}

static int
http_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether an object in v, at any depth, has a key twice: cJSON keeps
 * both and its lookups find the first, where other readers take the
 * last, so the two could act on different values.  -1 with err naming
 * the key (sorted, each object costs n log n).
 */
static int
http_json_dups(const cJSON *v, char err[PAPO_ERR_LEN])
{
	const char **names = NULL;
	const cJSON *c;
	size_t n = 0;
	int ret = 0;

	if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
		return 0;
	for (c = v->child; c != NULL; c = c->next, n++)
		if (http_json_dups(c, err) == -1)
			return -1;
	if (!cJSON_IsObject(v) || n < 2)
		return 0;
	if ((names = malloc(n * sizeof(*names))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	n = 0;
	for (c = v->child; c != NULL; c = c->next)
		names[n++] = c->string;
	qsort(names, n, sizeof(*names), http_name_cmp);
	for (size_t i = 1; i < n && ret == 0; i++)
		if (strcmp(names[i - 1], names[i]) == 0) {
			snprintf(err, PAPO_ERR_LEN, "the body has the key \"%.64s\" "
			    "twice in one object: give each key once", names[i]);
			ret = -1;
		}
	free(names);
	return ret;
}

cJSON *
http_json_parse(const char *body, size_t len, char err[PAPO_ERR_LEN])
{
	cJSON *o;

	/* The terminator is parsed too, so that cJSON refuses anything but
	 * white space after the value. */
	if (memchr(body, '\0', len) != NULL ||
	    (o = cJSON_ParseWithLengthOpts(body, len + 1, NULL, 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "the body is not valid JSON");
		return NULL;
	}
	if (http_json_nul(body, len)) {
		cJSON_Delete(o);
		snprintf(err, PAPO_ERR_LEN, "the body has a string with a NUL "
		    "character (\\u0000), which papo does not carry");
		return NULL;
	}
	if (http_json_dups(o, err) == -1) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
