/*
 * limit.h: the limits on messages (docs/SECURITY.md, "Rate limits and
 * reply loops"): the token bucket on our own sends, the cap on what
 * another member's messages may store here, and reply-loop damping.
 * Pure bookkeeping: times come in as arguments (no clock, no I/O), so
 * that tests/test_limit.c drives it.  A limit belongs to the node
 * thread (deliver.c); the parsers may run anywhere.
 */
#ifndef PAPO_LIMIT_H
#define PAPO_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "node/papo.h"

/*
 * Sending limits (docs/SECURITY.md, "Rate limits and reply loops").
 * rate: a token bucket of burst messages, filled with n every per_s
 * seconds; all zero means the default, 20/min,10.  damp: n answers
 * between two members within window_s seconds, then answers into that
 * exchange are refused; all zero means the default 12/5m, off set means
 * never.
 */
struct papo_rate {
	uint32_t n, per_s, burst;
};
struct papo_damp {
	uint32_t n, window_s;
	int off;
};
#define PAPO_RATE_DEFAULT "20/min,10"
#define PAPO_DAMP_DEFAULT "12/5m"

/* Parses PAPO_RATE, "N/UNIT[,BURST]" (UNIT s, min or h; BURST defaults
 * to N), into out; -1 with the reason. */
int rate_parse(char err[PAPO_ERR_LEN], const char *s, struct papo_rate *out);
/* Parses PAPO_DAMP, "N/TIME" (TIME as 300s, 5m or 1h) or "off"; -1 with
 * the reason. */
int damp_parse(char err[PAPO_ERR_LEN], const char *s, struct papo_damp *out);

/* A receiver stores up to this many times what an honest author could
 * send in any one minute of its clock. */
#define LIMIT_RECV_MULT 5
#define LIMIT_AUTHORS 256       /* authors whose minutes are counted */
#define LIMIT_MINUTES 64        /* minutes counted per author */
#define LIMIT_PAIRS 64          /* exchanges followed for damping */
#define LIMIT_DAMP_MAX 1000     /* largest N of PAPO_DAMP */
#define LIMIT_LOG_MS 60000u     /* one drop line per author this often */

struct limit;

/* What receiving a message may do. */
enum limit_recv {
	LIMIT_KEEP,                 /* store it */
	LIMIT_DROP,                 /* over the cap: drop it silently */
	LIMIT_DROP_LOG,             /* drop it and log (*nlog dropped since
	                             * the last line, this one included) */
};

/* An exchange of answers between us and another member. */
struct limit_exchange {
	uint8_t with[PAPO_KEY_LEN];
	unsigned answers;           /* within the window */
	unsigned retry_after_s;     /* 0 unless damped */
};

/* rate and damp are resolved (no zeros but damp's off); self_off: our
 * own sends are not limited (tests).  NULL when out of memory. */
struct limit *limit_new(const struct papo_rate *rate,
    const struct papo_damp *damp, int self_off);
void limit_free(struct limit *l);
/* The settings with their defaults filled in. */
void limit_defaults(struct papo_rate *rate, struct papo_damp *damp);
/* Formats a setting back in its own syntax. */
void limit_rate_format(const struct papo_rate *r, char *out, size_t len);
void limit_damp_format(const struct papo_damp *d, char *out, size_t len);

/* Takes a token for one own message at monotonic now_ns: 0 when the
 * message may go, else the whole seconds until a token is there. */
unsigned limit_send(struct limit *l, uint64_t now_ns);
/* Tokens there now (for status). */
unsigned limit_tokens(struct limit *l, uint64_t now_ns);
/* The most messages of one author stored per minute of its clock. */
unsigned limit_recv_cap(const struct limit *l);
/* Whether to store author's message written at ts (its clock, ms) when
 * our clock says now_ms. */
enum limit_recv limit_recv(struct limit *l, const uint8_t author[PAPO_KEY_LEN],
    uint64_t ts, uint64_t now_ms, uint64_t *nlog);
/* Messages of author dropped so far. */
uint64_t limit_dropped(const struct limit *l, const uint8_t author[PAPO_KEY_LEN]);

/* A message stored: author wrote it at ts, answering a message of
 * answered (NULL when not an answer, or an answer to itself).  A message
 * newer than an exchange it is not part of ends that exchange. */
void limit_damp_note(struct limit *l, const uint8_t author[PAPO_KEY_LEN],
    const uint8_t *answered, uint64_t ts);
/* A person spoke as who at ts (the dashboard, the API; here, or at who's
 * daemon): who's exchanges with nothing newer end. */
void limit_damp_person(struct limit *l, const uint8_t who[PAPO_KEY_LEN], uint64_t ts);
/* 0 when me may answer other now, else the seconds until the oldest
 * answer counted leaves the window. */
unsigned limit_damp_check(const struct limit *l, const uint8_t me[PAPO_KEY_LEN],
    const uint8_t other[PAPO_KEY_LEN], uint64_t now_ms);
/* The exchanges of me with answers in the window, up to max; their
 * count. */
size_t limit_damp_list(const struct limit *l, const uint8_t me[PAPO_KEY_LEN],
    uint64_t now_ms, struct limit_exchange *out, size_t max);
/* The damping setting (off: n is 0). */
void limit_damp_conf(const struct limit *l, struct papo_damp *out);
void limit_rate_conf(const struct limit *l, struct papo_rate *out);

#endif
