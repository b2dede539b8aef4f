/*
 * param.h: what the API's routes parse out of query parameters and
 * bodies alike (api.c, search.c): decimal numbers and message ids.
 * Pure functions.
 */
#ifndef PAPO_PARAM_H
#define PAPO_PARAM_H

#include <stdint.h>

#include "node/node.h"

/* Times are milliseconds since 1970, kept to integers JSON carries
 * exactly (docs/PROTOCOL.md, "Frames"). */
#define API_TIME_MAX (1ULL << 53)

/* Parses a decimal number of at most max; -1 for anything else (signs,
 * spaces, empty text, overflow). */
int api_number(const char *s, uint64_t max, uint64_t *out);
/* Copies a message id, lowercased, into out; -1 unless it is 10
 * characters of the base32 alphabet. */
int api_msgid(const char *s, char out[PAPO_MSGID_LEN + 1]);

#endif
