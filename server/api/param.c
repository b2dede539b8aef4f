/*
 * param.c: numbers and message ids out of the API's parameters
 * (param.h).
 */
#include <string.h>

#include "server/api/param.h"

/* Parses a decimal number of at most max; -1 for anything else (signs,
 * spaces, empty text, overflow). */
int
api_number(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (*s < '0' || *s > '9')
			return -1;
		/* v * 10 + d > max, asked so that it cannot wrap around. */
		if (d > max || v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Copies a message id, lowercased, into out; -1 unless it is 10
 * characters of the base32 alphabet. */
int
api_msgid(const char *s, char out[PAPO_MSGID_LEN + 1])
{
	if (strlen(s) != PAPO_MSGID_LEN)
		return -1;
	for (size_t i = 0; i < PAPO_MSGID_LEN; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '2' && c <= '7')))
			return -1;
		out[i] = c;
	}
	out[PAPO_MSGID_LEN] = '\0';
	return 0;
}
