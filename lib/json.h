/*
 * json.h: the one reading of a JSON text that came from outside (a
 * request body: the API's, OAuth's and MCP's JSON-RPC): one value, no
 * string with \u0000, no key twice in an object at any depth.  Pure:
 * bytes in, a cJSON tree or a typed error with its reason out; no I/O,
 * no clock, no state, so it is unit-tested (tests/test_json.c) and
 * fuzzed (tests/fuzz/fuzz_json.c).
 */
#ifndef PAPO_JSON_H
#define PAPO_JSON_H

#include <stddef.h>

#include "lib/err.h"

struct cJSON;

/*
 * How deep arrays and objects may nest: cJSON's CJSON_NESTING_LIMIT,
 * which refuses a deeper text as not valid JSON, and which bounds the
 * recursion of the duplicate-key check.  How long a text may be is the
 * caller's to bound before it reads it whole (HTTP_BODY_MAX).
 */
#define JSON_DEPTH_MAX 1000

enum json_err {
	JSON_OK = 0,
	JSON_SYNTAX,        /* not one JSON value and white space, or a NUL
	                     * byte: "the body is not valid JSON" */
	JSON_NUL,           /* a string with the escape \u0000 */
	JSON_KEY_TWICE,     /* an object with a key twice (err names it) */
	JSON_NOMEM,         /* "out of memory" */
};

/*
 * Reads text (len bytes, and a NUL after them: text[len] == '\0', as
 * every request body has it) as one JSON value into *out, which the
 * caller deletes.  JSON_OK, or the error with *out NULL and err saying
 * why in the words a client is answered with: a string holding a NUL
 * character would be cut short silently in C, and cJSON keeps both of a
 * key given twice and finds the first where other readers take the
 * last, so that two readers could act on different values.
 */
enum json_err json_read(char err[PAPO_ERR_LEN], const char *text, size_t len,
    struct cJSON **out);

#endif
