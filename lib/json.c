/*
 * json.c: the one reading of JSON texts from outside (json.h): one
 * value, no \u0000 in a string, no key twice in an object at any depth.
 * Pure: bytes in, a cJSON tree or the reason out; any thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json.h"

/* Has a valid JSON text a string with the escape \u0000 in it? */
static int
json_has_nul(const char *s, size_t len)
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
json_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether an object in v, at any depth, has a key twice (sorted, each
 * object costs n log n).  The recursion is as deep as the nesting,
 * which cJSON bounded (JSON_DEPTH_MAX).
 */
static enum json_err
json_dups(const cJSON *v, char err[PAPO_ERR_LEN])
{
	const char **names = NULL;
	const cJSON *c;
	enum json_err e = JSON_OK;
	size_t n = 0;

	if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
		return JSON_OK;
	for (c = v->child; c != NULL; c = c->next, n++)
		if ((e = json_dups(c, err)) != JSON_OK)
			return e;
	if (!cJSON_IsObject(v) || n < 2)
		return JSON_OK;
	if ((names = malloc(n * sizeof(*names))) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return JSON_NOMEM;
	}
	n = 0;
	for (c = v->child; c != NULL; c = c->next)
		names[n++] = c->string;
	qsort(names, n, sizeof(*names), json_name_cmp);
	for (size_t i = 1; i < n && e == JSON_OK; i++)
		if (strcmp(names[i - 1], names[i]) == 0) {
			snprintf(err, PAPO_ERR_LEN, "the body has the key \"%.64s\" "
			    "twice in one object: give each key once", names[i]);
			e = JSON_KEY_TWICE;
		}
	free(names);
	return e;
}

enum json_err
json_read(char err[PAPO_ERR_LEN], const char *text, size_t len,
    struct cJSON **out)
{
	enum json_err e;
	cJSON *o;

	*out = NULL;
	/* The terminator is parsed too, so that cJSON refuses anything but
	 * white space after the value. */
	if (memchr(text, '\0', len) != NULL ||
	    (o = cJSON_ParseWithLengthOpts(text, len + 1, NULL, 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "the body is not valid JSON");
		return JSON_SYNTAX;
	}
	if (json_has_nul(text, len)) {
		cJSON_Delete(o);
		snprintf(err, PAPO_ERR_LEN, "the body has a string with a NUL "
		    "character (\\u0000), which papo does not carry");
		return JSON_NUL;
	}
	if ((e = json_dups(o, err)) != JSON_OK) {
		cJSON_Delete(o);
		return e;
	}
	*out = o;
	return JSON_OK;
}
