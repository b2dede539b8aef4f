/*
 * settings.c: the table of papo serve's settings (settings.h), in the
 * manner of tmux's options_table: one entry per setting, from which the
 * parser, the errors and the help are made.  Runs on the main thread of
 * 'papo serve' before anything starts: it only reads the environment
 * and the flags it is given, and never opens a file or a socket, so a
 * bad value stops the daemon before it touched $PAPO_HOME.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "node/node.h"
#include "server/cli/settings.h"
#include "server/http/http.h"

enum setting_kind {
	SETTING_TEXT,       /* any text (const char *) */
	SETTING_SWITCH,     /* on or off (int) */
	SETTING_BIT,        /* 0 or 1 (int), for tests */
	SETTING_CHOICE,     /* one of choices: its value (int) */
	SETTING_NUMBER,     /* a whole number from min to max (unsigned) */
	SETTING_DURATION,   /* seconds: 90, 90s, 30m, 2h (unsigned) */
	SETTING_RATE,       /* N/UNIT[,BURST] (struct papo_rate) */
	SETTING_DAMP,       /* N/TIME or off (struct papo_damp) */
	SETTING_KEEP,       /* a count of messages or days (const char *) */
	SETTING_SIZE,       /* bytes: 4096, 256K, 16M, 4G (uint64_t) */
};

/* The offset of a setting not in struct serve_config: PAPO_HOME, read
 * by every command (cli.c), and PAPO_LOG, read at process start by
 * main.c through settings_get. */
#define SETTING_ELSEWHERE SIZE_MAX

#define SETTING_OFF_MEANS_1 0x1  /* a switch: the field is 1 when off */
#define SETTING_TESTS       0x2  /* for tests: not in the help or docs */
#define SETTING_SIZE_AUTO   0x4  /* a size that also takes "all" (every
                                  * file: UINT64_MAX) and "0" (none:
                                  * NODE_FILES_AUTO_NONE) */

/* A size is at most 1 TiB (a quota), and 0 only where SETTING_SIZE_AUTO
 * gives it a meaning. */
#define SETTING_SIZE_MAX (1ULL << 40)

#define SETTINGS_HELP_WIDTH 78

/* A duration is at least 1 s and at most 30 days. */
#define SETTING_DURATION_MAX (30ul * 86400)

/* A word a SETTING_CHOICE takes, and the value it stores. */
struct setting_choice {
	const char *word;
	int value;
};

struct setting {
	const char *env;            /* PAPO_... */
	const char *flag;           /* "--http", or NULL */
	const char *arg;            /* what the help calls the value */
	enum setting_kind kind;
	const char *def;            /* used when not set, or NULL */
	const char *help;           /* one line */
	size_t off;                 /* in struct serve_config */
	unsigned bits;              /* SETTING_OFF_MEANS_1, SETTING_TESTS */
	const struct setting_choice *choices; /* SETTING_CHOICE, ending
	                                       * with a NULL word */
	unsigned long min, max;     /* SETTING_NUMBER */
	const char *hint;           /* after the error, or NULL */
};

/*
 * A setting of a kind, whose value goes to field of struct serve_config:
 * the field's type is checked against the kind's when this compiles (a
 * _Generic with no match for it does not).
 */
#define SETTING_AT(field, type) (offsetof(struct serve_config, field) + \
	0 * sizeof(_Generic(((struct serve_config *)0)->field, type: 1)))
#define IN_TEXT(f)     .kind = SETTING_TEXT, .off = SETTING_AT(f, const char *)
#define IN_KEEP(f)     .kind = SETTING_KEEP, .off = SETTING_AT(f, const char *)
#define IN_SWITCH(f)   .kind = SETTING_SWITCH, .off = SETTING_AT(f, int)
#define IN_BIT(f)      .kind = SETTING_BIT, .off = SETTING_AT(f, int)
#define IN_CHOICE(f)   .kind = SETTING_CHOICE, .off = SETTING_AT(f, int)
#define IN_NUMBER(f)   .kind = SETTING_NUMBER, .off = SETTING_AT(f, unsigned)
#define IN_DURATION(f) .kind = SETTING_DURATION, \
	.off = SETTING_AT(f, unsigned)
#define IN_RATE(f)     .kind = SETTING_RATE, \
	.off = SETTING_AT(f, struct papo_rate)
#define IN_DAMP(f)     .kind = SETTING_DAMP, \
	.off = SETTING_AT(f, struct papo_damp)
#define IN_SIZE(f)     .kind = SETTING_SIZE, .off = SETTING_AT(f, uint64_t)

static const struct setting_choice settings_tls[] = {
	{ "self", 1 }, { "off", 0 }, { NULL, 0 } };
static const struct setting_choice settings_log[] = {
	{ "error", LOG_ERROR }, { "warn", LOG_WARN }, { "info", LOG_INFO },
	{ "debug", LOG_DEBUG }, { NULL, 0 } };

static const struct setting settings_table[] = {
	{ .env = "PAPO_HOME", .arg = "DIR", .kind = SETTING_TEXT,
	  .help = "where the member's state lives (default ~/.papo)",
	  .off = SETTING_ELSEWHERE },
	{ .env = "PAPO_LOG", .kind = SETTING_CHOICE, .choices = settings_log,
	  .help = "how much goes to stderr (default info)",
	  .off = SETTING_ELSEWHERE },
	{ .env = "PAPO_HTTP", .flag = "--http", .arg = "ADDR:PORT",
	  .def = HTTP_DEFAULT_BIND,
	  .help = "the HTTP API, MCP and the dashboard; port 0 picks one",
	  IN_TEXT(http) },
	{ .env = "PAPO_LISTEN", .flag = "--listen", .arg = "ADDR:PORT",
	  .def = PAPO_DEFAULT_LISTEN,
	  .help = "QUIC with the other members (UDP); port 0 picks one",
	  IN_TEXT(node.listen) },
	{ .env = "PAPO_TOKEN", .flag = "--token", .arg = "T",
	  .help = "the bearer token every request but /healthz needs "
	  "(32 characters or more); needed off loopback",
	  IN_TEXT(token) },
	{ .env = "PAPO_NAME", .flag = "--name", .arg = "NAME",
	  .help = "this member's name in a room made or joined at first "
	  "start (default the login name)",
	  IN_TEXT(name) },
	{ .env = "PAPO_ABOUT", .flag = "--about", .arg = "TEXT",
	  .help = "a line about this member, in a room made or joined at "
	  "first start",
	  IN_TEXT(about) },
	{ .env = "PAPO_ROOM", .flag = "--room", .arg = "ROOM",
	  .help = "the name of a room made at first start (1 to 64 bytes)",
	  IN_TEXT(room) },
	{ .env = "PAPO_INVITE", .arg = "INVITE",
	  .help = "the room joined at first start; another room's is "
	  "ignored later, with a warning",
	  IN_TEXT(invite) },
	{ .env = "PAPO_MCP_IDLE",
	  .help = "an unused MCP session ends after this (default 30m)",
	  IN_DURATION(mcp_idle_s) },
	{ .env = "PAPO_ADVERTISE", .flag = "--advertise",
	  .arg = "ADDR:PORT,...",
	  .help = "where other members reach this one (a port forward), "
	  "first in its invites; the flag may repeat",
	  IN_TEXT(node.advertise) },
	{ .env = "PAPO_LAN", .def = "on",
	  .help = "LAN discovery by sealed multicast beacons",
	  IN_SWITCH(node.nolan), .bits = SETTING_OFF_MEANS_1 },
	{ .env = "PAPO_PORTMAP", .def = "on",
	  .help = "ask the home router for a port (UPnP-IGD, NAT-PMP)",
	  IN_SWITCH(node.noportmap), .bits = SETTING_OFF_MEANS_1 },
	{ .env = "PAPO_PORTMAP_PRIVATE",
	  .help = "a mapping to a private address counts",
	  IN_BIT(node.portmap_private), .bits = SETTING_TESTS },
	{ .env = "PAPO_PROTOCOL", .min = 1, .max = 3,
	  .help = "speak as a daemon of that protocol version (default the "
	  "newest)",
	  IN_NUMBER(node.version), .bits = SETTING_TESTS },
	{ .env = "PAPO_TURN", .flag = "--turn", .arg = "turn:HOST[:PORT]",
	  .help = "a TURN server members with no direct path reach each "
	  "other through",
	  IN_TEXT(node.turn) },
	{ .env = "PAPO_TURN_USER", .arg = "USER",
	  .help = "the TURN server's user (never on the command line)",
	  IN_TEXT(node.turn_user) },
	{ .env = "PAPO_TURN_PASS", .arg = "PASS",
	  .help = "its password, with PAPO_TURN_USER",
	  IN_TEXT(node.turn_pass) },
	{ .env = "PAPO_TURN_SECRET", .arg = "SECRET",
	  .help = "coturn's REST API shared secret, instead of the password",
	  IN_TEXT(node.turn_secret) },
	{ .env = "PAPO_TURN_SHARE", .def = "on",
	  .help = "invites carry the TURN server, so joiners need none set",
	  IN_SWITCH(node.turn_noshare), .bits = SETTING_OFF_MEANS_1 },
	{ .env = "PAPO_TLS", .flag = "--tls",
	  .choices = settings_tls, .def = "off",
	  .help = "self: HTTPS with a self-signed certificate made once in "
	  "PAPO_HOME",
	  IN_CHOICE(tls_self),
	  .hint = "for a certificate of your own, set PAPO_TLS_CERT and "
	  "PAPO_TLS_KEY" },
	{ .env = "PAPO_TLS_CERT", .arg = "FILE",
	  .help = "HTTPS with this PEM certificate chain (read again on "
	  "SIGHUP)",
	  IN_TEXT(tls_cert) },
	{ .env = "PAPO_TLS_KEY", .arg = "FILE",
	  .help = "its PEM private key",
	  IN_TEXT(tls_key) },
	{ .env = "PAPO_PUBLIC_URL", .arg = "URL",
	  .help = "how the daemon is reached from outside (a tunnel); "
	  "requests through it need the token",
	  IN_TEXT(public_url) },
	{ .env = "PAPO_CORS_ORIGINS", .arg = "ORIGIN,...",
	  .help = "the origins of web pages that may call the daemon",
	  IN_TEXT(cors) },
	{ .env = "PAPO_OAUTH", .def = "off",
	  .help = "an OAuth 2.1 server for MCP clients that connect by URL "
	  "(needs the token)",
	  IN_SWITCH(oauth) },
	{ .env = "PAPO_OAUTH_CIMD_PRIVATE",
	  .help = "client metadata documents may be fetched from private "
	  "addresses",
	  IN_BIT(oauth_cimd_private), .bits = SETTING_TESTS },
	{ .env = "PAPO_OAUTH_ACCESS_TTL",
	  .help = "how long an access token lasts (default 1h)",
	  IN_DURATION(oauth_access_s), .bits = SETTING_TESTS },
	{ .env = "PAPO_OAUTH_CODE_TTL",
	  .help = "how long an authorization code lasts (default 60s)",
	  IN_DURATION(oauth_code_s), .bits = SETTING_TESTS },
	{ .env = "PAPO_RATE",
	  .help = "how fast this member may send: N messages a UNIT (s, min "
	  "or h), BURST at once (default " PAPO_RATE_DEFAULT ")",
	  IN_RATE(node.rate) },
	{ .env = "PAPO_DAMP",
	  .help = "after N answers between this member's agent and another "
	  "within TIME, more wait for a third voice (default "
	  PAPO_DAMP_DEFAULT ")",
	  IN_DAMP(node.damp) },
	{ .env = "PAPO_KEEP",
	  .help = "retention: the newest N messages (1000) or days (30d); "
	  "unset keeps everything",
	  IN_KEEP(node.keep) },
	{ .env = "PAPO_FILES_AUTO", .def = "256K",
	  .help = "a shared file of at most this size is fetched at once by "
	  "every member; 0: none, all: every file (others when asked)",
	  IN_SIZE(node.files_auto), .bits = SETTING_SIZE_AUTO },
	{ .env = "PAPO_FILES_QUOTA", .def = "4G",
	  .help = "the most a room's shared files take on this disk; a file "
	  "past it is refused",
	  IN_SIZE(node.files_quota) },
#ifdef PAPO_TESTING
	/* Only the test build (tests/CMakeLists.txt, papo-testing) has this:
	  * a daemon sending past its own limit, as a broken one would. */
	{ .env = "PAPO_TEST_NO_RATE",
	  .help = "this daemon's own sends are not limited",
	  IN_BIT(node.rate_self_off), .bits = SETTING_TESTS },
#endif
};
#define SETTINGS_N (sizeof(settings_table) / sizeof(settings_table[0]))

/* "--tls (PAPO_TLS)" or "PAPO_LAN": how an error names s. */
static void
settings_name(const struct setting *s, char *out, size_t len)
{
	if (s->flag != NULL)
		snprintf(out, len, "%s (%s)", s->flag, s->env);
	else
		snprintf(out, len, "%s", s->env);
}

/* What s takes, in words, for its error and its help. */
static void
settings_takes(const struct setting *s, char *out, size_t len)
{
	size_t n = 0;

	switch (s->kind) {
	case SETTING_SWITCH:
		snprintf(out, len, "on or off");
		return;
	case SETTING_BIT:
		snprintf(out, len, "0 or 1");
		return;
	case SETTING_NUMBER:
		snprintf(out, len, "a whole number from %lu to %lu", s->min,
		    s->max);
		return;
	case SETTING_DURATION:
		snprintf(out, len, "a time such as 1800, 90s, 30m or 2h (at "
		    "least 1 s, at most 30 days)");
		return;
	case SETTING_CHOICE:
		out[0] = '\0';
		for (size_t i = 0; s->choices[i].word != NULL && n < len; i++)
			n += (size_t)snprintf(out + n, len - n, "%s'%s'",
			    i == 0 ? "" : s->choices[i + 1].word == NULL ?
			    " or " : ", ", s->choices[i].word);
		return;
	case SETTING_RATE:
		snprintf(out, len, "N/UNIT[,BURST]");
		return;
	case SETTING_DAMP:
		snprintf(out, len, "N/TIME or off");
		return;
	case SETTING_KEEP:
		snprintf(out, len, "a count of messages or days (1000, 30d)");
		return;
	case SETTING_SIZE:
		snprintf(out, len, "a size in bytes with K, M or G (256K, 16M, "
		    "4G; at most 1024G)%s", s->bits & SETTING_SIZE_AUTO ?
		    ", 0 or all" : "");
		return;
	case SETTING_TEXT:
		snprintf(out, len, "%s", s->arg != NULL ? s->arg : "text");
		return;
	}
}

/* A time in seconds: "90", "90s", "30m", "2h", from 1 s to 30 days. */
static int
settings_duration(const char *v, unsigned *out)
{
	unsigned long n, unit = 1;
	char *end;

	if (v[0] < '0' || v[0] > '9')
		return -1;
	n = strtoul(v, &end, 10);
	if (strcmp(end, "m") == 0)
		unit = 60;
	else if (strcmp(end, "h") == 0)
		unit = 3600;
	else if (strcmp(end, "s") != 0 && *end != '\0')
		return -1;
	if (n == 0 || n > SETTING_DURATION_MAX / unit)
		return -1;
	*out = (unsigned)(n * unit);
	return 0;
}

/* A size: digits, then K, M or G (powers of 1024) or nothing; from 1
 * byte to SETTING_SIZE_MAX. */
static int
settings_size(const char *v, unsigned bits, uint64_t *out)
{
	unsigned long long n, unit = 1;
	char *end;

	if (bits & SETTING_SIZE_AUTO) {
		if (strcmp(v, "all") == 0) {
			*out = UINT64_MAX;
			return 0;
		}
		if (strcmp(v, "0") == 0) {
			*out = NODE_FILES_AUTO_NONE;
			return 0;
		}
	}
	if (v[0] < '0' || v[0] > '9')
		return -1;
	n = strtoull(v, &end, 10);
	if (strcmp(end, "K") == 0 || strcmp(end, "k") == 0)
		unit = 1ULL << 10;
	else if (strcmp(end, "M") == 0 || strcmp(end, "m") == 0)
		unit = 1ULL << 20;
	else if (strcmp(end, "G") == 0 || strcmp(end, "g") == 0)
		unit = 1ULL << 30;
	else if (*end != '\0')
		return -1;
	if (n == 0 || n > SETTING_SIZE_MAX / unit)
		return -1;
	*out = (uint64_t)(n * unit);
	return 0;
}

/* A whole number of digits only, from min to max. */
static int
settings_number(const char *v, unsigned long min, unsigned long max,
    unsigned *out)
{
	unsigned long n;
	char *end;

	if (v[0] < '0' || v[0] > '9')
		return -1;
	n = strtoul(v, &end, 10);
	if (*end != '\0' || n < min || n > max)
		return -1;
	*out = (unsigned)n;
	return 0;
}

/* v into s's field of c (at offset s->off).  -1 with err naming s and
 * what it takes. */
static int
settings_set(char err[PAPO_ERR_LEN], const struct setting *s, void *c,
    const char *v)
{
	char name[64], takes[160];
	void *at = (char *)c + s->off;
	int r = 0;

	switch (s->kind) {
	case SETTING_TEXT:
		*(const char **)at = v;
		return 0;
	case SETTING_SWITCH:
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
			r = -1;
			break;
		}
		*(int *)at = (strcmp(v, "off") == 0) ==
		    ((s->bits & SETTING_OFF_MEANS_1) != 0);
		return 0;
	case SETTING_BIT:
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
			r = -1;
			break;
		}
		*(int *)at = v[0] == '1';
		return 0;
	case SETTING_CHOICE:
		r = -1;
		for (size_t i = 0; s->choices[i].word != NULL; i++)
			if (strcmp(v, s->choices[i].word) == 0) {
				*(int *)at = s->choices[i].value;
				r = 0;
			}
		if (r == 0)
			return 0;
		break;
	case SETTING_NUMBER:
		if ((r = settings_number(v, s->min, s->max, at)) == 0)
			return 0;
		break;
	case SETTING_DURATION:
		if ((r = settings_duration(v, at)) == 0)
			return 0;
		break;
	/* Their parsers' reasons name the setting already. */
	case SETTING_RATE:
		return rate_parse(err, v, at);
	case SETTING_DAMP:
		return damp_parse(err, v, at);
	case SETTING_KEEP:
		if (node_keep_check(err, v) == -1)
			return -1;
		*(const char **)at = v;
		return 0;
	case SETTING_SIZE:
		if ((r = settings_size(v, s->bits, at)) == 0)
			return 0;
		break;
	}
	settings_name(s, name, sizeof(name));
	settings_takes(s, takes, sizeof(takes));
	snprintf(err, PAPO_ERR_LEN, "%s must be %s, not '%.64s'%s%s", name,
	    takes, v, s->hint != NULL ? "; " : "",
	    s->hint != NULL ? s->hint : "");
	return r;
}

int
settings_get(char err[PAPO_ERR_LEN], const char *env, void *out)
{
	for (size_t i = 0; i < SETTINGS_N; i++) {
		const struct setting *s = &settings_table[i];
		struct setting one = *s;
		const char *v = getenv(env);

		if (strcmp(s->env, env) != 0)
			continue;
		if (v == NULL || v[0] == '\0')
			return 0;
		/* The same parser, with out as the whole config. */
		one.off = 0;
		return settings_set(err, &one, out, v) == -1 ? -1 : 1;
	}
	snprintf(err, PAPO_ERR_LEN, "%s is no setting", env);
	return -1;
}

/* The rules between settings, once each has its value. */
static int
settings_relate(char err[PAPO_ERR_LEN], const struct serve_config *c)
{
	const struct node_config *n = &c->node;

	if (n->turn == NULL && (n->turn_user != NULL || n->turn_pass != NULL ||
	    n->turn_secret != NULL)) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_TURN_USER, PAPO_TURN_PASS or "
		    "PAPO_TURN_SECRET is set without a TURN server: set "
		    "PAPO_TURN=turn:HOST:PORT (or --turn)");
		return -1;
	}
	if (n->turn != NULL && n->turn_secret == NULL &&
	    (n->turn_user == NULL || n->turn_pass == NULL)) {
		snprintf(err, PAPO_ERR_LEN, "the TURN server %.200s needs "
		    "PAPO_TURN_USER and PAPO_TURN_PASS, or PAPO_TURN_SECRET",
		    n->turn);
		return -1;
	}
	if (c->tls_self && (c->tls_cert != NULL || c->tls_key != NULL)) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_TLS=self and PAPO_TLS_CERT/"
		    "PAPO_TLS_KEY exclude each other: choose one");
		return -1;
	}
	return 0;
}

int
settings_load(char err[PAPO_ERR_LEN], struct serve_config *c,
    const struct setting_arg *args, size_t nargs)
{
	const char *home = c->node.home;

	memset(c, 0, sizeof(*c));
	c->node.home = home;
	for (size_t i = 0; i < SETTINGS_N; i++) {
		const struct setting *s = &settings_table[i];
		const char *v = NULL;

		if (s->off == SETTING_ELSEWHERE)
			continue;
		for (size_t j = 0; s->flag != NULL && j < nargs; j++)
			if (args[j].value != NULL &&
			    strcmp(args[j].flag, s->flag) == 0)
				v = args[j].value;
		/* An empty variable is as one unset. */
		if (v == NULL && (v = getenv(s->env)) != NULL && v[0] == '\0')
			v = NULL;
		if (v == NULL)
			v = s->def;
		if (v != NULL && settings_set(err, s, c, v) == -1)
			return -1;
	}
	return settings_relate(err, c);
}

/* text on lines of at most SETTINGS_HELP_WIDTH: the first after indent,
 * the others after more. */
static void
settings_wrap(FILE *f, const char *indent, const char *more,
    const char *text)
{
	while (*text != '\0') {
		size_t width = SETTINGS_HELP_WIDTH - strlen(indent);

		size_t n = strlen(text), cut = n;

		if (n > width) {
			for (cut = width; cut > 0 && text[cut] != ' '; cut--)
				;
			if (cut == 0)
				cut = width;
		}
		fprintf(f, "%s%.*s\n", indent, (int)cut, text);
		indent = more;
		text += cut;
		while (*text == ' ')
			text++;
	}
}

void
settings_help(FILE *f)
{
	char line[320], takes[160];

	fprintf(f, "\nsettings (a flag wins over its variable; an empty "
	    "variable is as one unset):\n");
	for (size_t i = 0; i < SETTINGS_N; i++) {
		const struct setting *s = &settings_table[i];

		if (s->bits & SETTING_TESTS)
			continue;
		settings_takes(s, takes, sizeof(takes));
		snprintf(line, sizeof(line), "%s%s%s: %s%s%s%s", s->env,
		    s->flag != NULL ? ", " : "", s->flag != NULL ? s->flag : "",
		    takes, s->def != NULL ? " (default " : "",
		    s->def != NULL ? s->def : "", s->def != NULL ? ")" : "");
		settings_wrap(f, "  ", "    ", line);
		settings_wrap(f, "      ", "      ", s->help);
	}
}
