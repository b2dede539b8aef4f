/*
 * test_json.c: lib/json.c, the reading of every JSON body: each text
 * against the exact answer, its typed error and the words a client is
 * told, or what the tree holds; nesting up to cJSON's limit and past it.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json.h"
#include "tests/check.h"

#define NOT_JSON "the body is not valid JSON"
#define HAS_NUL "the body has a string with a NUL character (\\u0000), " \
	"which papo does not carry"
#define TWICE(k) "the body has the key \"" k "\" twice in one object: " \
	"give each key once"

static const struct {
	const char *text;
	size_t len;             /* 0: strlen(text) */
	enum json_err e;
	const char *err;        /* the reason, or for JSON_OK the tree
	                         * printed again */
} cases[] = {
	{ "{}", 0, JSON_OK, "{}" },
	{ "[]", 0, JSON_OK, "[]" },
	{ "{\"a\":1,\"b\":[true,false,null]}", 0, JSON_OK,
	  "{\"a\":1,\"b\":[true,false,null]}" },
	{ " \t\r\n{\"a\":\"b\"} \n", 0, JSON_OK, "{\"a\":\"b\"}" },
	{ "\"text\"", 0, JSON_OK, "\"text\"" },            /* any value */
	{ "-1.5e3", 0, JSON_OK, "-1500" },
	{ "null", 0, JSON_OK, "null" },
	/* \u0001 and an escaped backslash before u0000 are not NULs. */
	{ "[\"\\u0001\"]", 0, JSON_OK, "[\"\\u0001\"]" },
	{ "[\"\\\\u0000\"]", 0, JSON_OK, "[\"\\\\u0000\"]" },
	/* The same key in two objects, or as a value, is no repeat. */
	{ "[{\"a\":1},{\"a\":2}]", 0, JSON_OK, "[{\"a\":1},{\"a\":2}]" },
	{ "{\"a\":{\"a\":1}}", 0, JSON_OK, "{\"a\":{\"a\":1}}" },
	{ "{\"a\":1,\"A\":2}", 0, JSON_OK, "{\"a\":1,\"A\":2}" },
	/* Not one JSON value. */
	{ "", 0, JSON_SYNTAX, NOT_JSON },
	{ "   ", 0, JSON_SYNTAX, NOT_JSON },
	{ "{", 0, JSON_SYNTAX, NOT_JSON },
	{ "{\"a\":}", 0, JSON_SYNTAX, NOT_JSON },
	{ "{\"a\":1,}", 0, JSON_SYNTAX, NOT_JSON },
	{ "{a:1}", 0, JSON_SYNTAX, NOT_JSON },
	{ "{} {}", 0, JSON_SYNTAX, NOT_JSON },             /* two values */
	{ "{}x", 0, JSON_SYNTAX, NOT_JSON },               /* garbage after */
	{ "tru", 0, JSON_SYNTAX, NOT_JSON },
	{ "\"open", 0, JSON_SYNTAX, NOT_JSON },
	{ "{}\0", 3, JSON_SYNTAX, NOT_JSON },              /* a NUL byte */
	{ "[\"a\0b\"]", 7, JSON_SYNTAX, NOT_JSON },
	/* A NUL character escaped, anywhere in a string. */
	{ "[\"\\u0000\"]", 0, JSON_NUL, HAS_NUL },
	{ "{\"a\\u0000b\":1}", 0, JSON_NUL, HAS_NUL },      /* in a key */
	{ "{\"x\":\"ab\\u0000\"}", 0, JSON_NUL, HAS_NUL },
	/* A key twice, at any depth, named. */
	{ "{\"a\":1,\"a\":2}", 0, JSON_KEY_TWICE, TWICE("a") },
	{ "{\"a\":1,\"b\":2,\"a\":1}", 0, JSON_KEY_TWICE, TWICE("a") },
	{ "{\"x\":{\"method\":1,\"method\":2}}", 0, JSON_KEY_TWICE,
	  TWICE("method") },
	{ "[1,[{\"k\":{},\"k\":[]}]]", 0, JSON_KEY_TWICE, TWICE("k") },
	{ "{\"\":1,\"\":2}", 0, JSON_KEY_TWICE, TWICE("") },
};

/* n arrays one inside the other: "[[...]]". */
static char *
nested(size_t n)
{
	char *s = malloc(2 * n + 1);

	memset(s, '[', n);
	memset(s + n, ']', n);
	s[2 * n] = '\0';
	return s;
}

int
main(void)
{
	char err[PAPO_ERR_LEN];
	cJSON *o;
	char *s;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].len != 0 ? cases[i].len :
		    strlen(cases[i].text);
		enum json_err e;

		/* A copy of exactly len bytes and the NUL, so that a read
		 * past it is ASan's to see. */
		s = malloc(len + 1);
		memcpy(s, cases[i].text, len);
		s[len] = '\0';
		err[0] = '\0';
		o = (cJSON *)&err;      /* must be set either way */
		e = json_read(err, s, len, &o);
		if (e != cases[i].e)
			fprintf(stderr, "case %zu: %s: %d\n", i, cases[i].text,
			    (int)e);
		CHECK_EQ_INT(e, cases[i].e);
		if (e == JSON_OK) {
			char *back = cJSON_PrintUnformatted(o);

			CHECK_EQ_STR(back, cases[i].err);
			cJSON_free(back);
			cJSON_Delete(o);
		} else {
			CHECK(o == NULL);
			CHECK_EQ_STR(err, cases[i].err);
		}
		free(s);
	}

	/* Nesting: JSON_DEPTH_MAX deep is read, one more is not. */
	s = nested(JSON_DEPTH_MAX);
	CHECK_EQ_INT(json_read(err, s, strlen(s), &o), JSON_OK);
	cJSON_Delete(o);
	free(s);
	s = nested(JSON_DEPTH_MAX + 1);
	CHECK_EQ_INT(json_read(err, s, strlen(s), &o), JSON_SYNTAX);
	CHECK_EQ_STR(err, NOT_JSON);
	CHECK(o == NULL);
	free(s);

	/* A key of any length is named cut to 64 bytes. */
	{
		char text[512], key[201], want[PAPO_ERR_LEN];

		memset(key, 'k', 200);
		key[200] = '\0';
		snprintf(text, sizeof(text), "{\"%s\":1,\"%s\":2}", key, key);
		CHECK_EQ_INT(json_read(err, text, strlen(text), &o),
		    JSON_KEY_TWICE);
		snprintf(want, sizeof(want), "the body has the key \"%.64s\" "
		    "twice in one object: give each key once", key);
		CHECK_EQ_STR(err, want);
	}
	return check_exit();
}
