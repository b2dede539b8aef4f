/*
 * test_param.c: server/api/param.c, the API's numbers and message ids,
 * each input against the exact answer: what passes and its value, and
 * every kind of bad text refused.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "server/api/param.h"

static void
test_number(void)
{
	static const struct {
		const char *s;
		uint64_t max;
		int rc;
		uint64_t v;
	} cases[] = {
		{ "0", 10, 0, 0 },
		{ "10", 10, 0, 10 },
		{ "007", 10, 0, 7 },
		{ "11", 10, -1, 0 },                     /* over max */
		{ "", 10, -1, 0 },                       /* empty */
		{ "-1", 10, -1, 0 },                     /* a sign */
		{ "+1", 10, -1, 0 },
		{ " 1", 10, -1, 0 },                     /* spaces */
		{ "1 ", 10, -1, 0 },
		{ "1e3", 10000, -1, 0 },                 /* not decimal digits */
		{ "0x10", 100, -1, 0 },
		{ "1.5", 10, -1, 0 },
		{ "9007199254740992", API_TIME_MAX, 0, API_TIME_MAX },
		{ "9007199254740993", API_TIME_MAX, -1, 0 },
		{ "18446744073709551615", UINT64_MAX, 0, UINT64_MAX },
		/* Past 2^64: refused, not wrapped around. */
		{ "18446744073709551616", UINT64_MAX, -1, 0 },
		{ "99999999999999999999999", UINT64_MAX, -1, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int rc = api_number(cases[i].s, cases[i].max, &v);

		if (rc != cases[i].rc)
			fprintf(stderr, "api_number(\"%s\"): %d\n", cases[i].s,
			    rc);
		CHECK_EQ_INT(rc, cases[i].rc);
		/* A refused text leaves out as it was. */
		CHECK_EQ_INT(v, rc == 0 ? cases[i].v : 12345);
	}
}

static void
test_msgid(void)
{
	static const struct {
		const char *s, *want;     /* want NULL: refused */
	} cases[] = {
		{ "abcdefgh23", "abcdefgh23" },
		{ "ABCDEFGH27", "abcdefgh27" },          /* lowercased */
		{ "aBcDeFgH45", "abcdefgh45" },
		{ "abcdefgh2", NULL },                   /* 9 characters */
		{ "abcdefgh234", NULL },                 /* 11 */
		{ "", NULL },
		{ "abcdefgh18", NULL },                  /* 1 and 8: not base32 */
		{ "abcdefgh0o", NULL },
		{ "abcd efgh2", NULL },
		{ "abcdefgh2-", NULL },
		{ "\xc3\xa9" "bcdefgh2", NULL },         /* UTF-8 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[PAPO_MSGID_LEN + 1] = "";
		int rc = api_msgid(cases[i].s, out);

		CHECK_EQ_INT(rc, cases[i].want != NULL ? 0 : -1);
		if (cases[i].want != NULL)
			CHECK_EQ_STR(out, cases[i].want);
	}
}

int
main(void)
{
	test_number();
	test_msgid();
	return check_exit();
}
