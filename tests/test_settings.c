/*
 * test_settings.c: server/cli/settings.c, papo serve's settings, linked
 * alone (with papo_node for the node's own parsers): every kind of bad
 * value, from a variable or a flag, against its exact error; the rules
 * between settings; what good values, defaults, empty variables and
 * flags give.  The test sets and unsets PAPO_* variables and puts the
 * environment it was started with back at the end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "server/cli/settings.h"
#include "tests/check.h"

extern char **environ;

#define SIZE_TAKES "a size in bytes with K, M or G (256K, 16M, 4G; at most " \
	"1024G)"
#define TIME_TAKES "a time such as 1800, 90s, 30m or 2h (at least 1 s, at " \
	"most 30 days)"
#define TURN_ALONE "PAPO_TURN_USER, PAPO_TURN_PASS or PAPO_TURN_SECRET is " \
	"set without a TURN server: set PAPO_TURN=turn:HOST:PORT (or --turn)"

/* The PAPO_ variables the test started with, unset while it runs. */
static char *saved[256];
static size_t nsaved;

/* Unsets every PAPO_ variable. */
static void
env_clear(void)
{
	char name[128];

	for (size_t i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "PAPO_", 5) == 0) {
			snprintf(name, sizeof(name), "%.*s",
			    (int)strcspn(environ[i], "="), environ[i]);
			unsetenv(name);
			i = (size_t)-1;     /* environ changed: from the start */
		}
}

static void
env_save(void)
{
	for (char **e = environ; *e != NULL && nsaved < 256; e++)
		if (strncmp(*e, "PAPO_", 5) == 0)
			saved[nsaved++] = strdup(*e);
	env_clear();
}

static void
env_restore(void)
{
	for (size_t i = 0; i < nsaved; i++) {
		char *eq = strchr(saved[i], '=');

		*eq = '\0';
		setenv(saved[i], eq + 1, 1);
		free(saved[i]);
	}
}

/* "NAME=VALUE" pairs, at most 3: set, then unset. */
static void
env_set(const char *const *vars, int on)
{
	for (size_t i = 0; i < 3 && vars[i] != NULL; i++) {
		char name[64];
		const char *eq = strchr(vars[i], '=');

		snprintf(name, sizeof(name), "%.*s", (int)(eq - vars[i]),
		    vars[i]);
		if (on)
			setenv(name, eq + 1, 1);
		else
			unsetenv(name);
	}
}

static void
test_bad(void)
{
	static const struct {
		const char *vars[3];
		const char *flag, *value;
		const char *err;
	} cases[] = {
		/* Each kind of value. */
		{ { "PAPO_LAN=maybe" }, NULL, NULL,
		  "PAPO_LAN must be on or off, not 'maybe'" },
		{ { "PAPO_OAUTH=ON" }, NULL, NULL,
		  "PAPO_OAUTH must be on or off, not 'ON'" },
		{ { "PAPO_PORTMAP_PRIVATE=yes" }, NULL, NULL,
		  "PAPO_PORTMAP_PRIVATE must be 0 or 1, not 'yes'" },
		{ { "PAPO_TLS=on" }, NULL, NULL, "--tls (PAPO_TLS) must be "
		  "'self' or 'off', not 'on'; for a certificate of your own, "
		  "set PAPO_TLS_CERT and PAPO_TLS_KEY" },
		{ { NULL }, "--tls", "acme", "--tls (PAPO_TLS) must be 'self' or "
		  "'off', not 'acme'; for a certificate of your own, set "
		  "PAPO_TLS_CERT and PAPO_TLS_KEY" },
		{ { "PAPO_PROTOCOL=4" }, NULL, NULL, "PAPO_PROTOCOL must be a "
		  "whole number from 1 to 3, not '4'" },
		{ { "PAPO_PROTOCOL=0" }, NULL, NULL, "PAPO_PROTOCOL must be a "
		  "whole number from 1 to 3, not '0'" },
		{ { "PAPO_PROTOCOL=2x" }, NULL, NULL, "PAPO_PROTOCOL must be a "
		  "whole number from 1 to 3, not '2x'" },
		{ { "PAPO_MCP_IDLE=0" }, NULL, NULL,
		  "PAPO_MCP_IDLE must be " TIME_TAKES ", not '0'" },
		{ { "PAPO_MCP_IDLE=1d" }, NULL, NULL,
		  "PAPO_MCP_IDLE must be " TIME_TAKES ", not '1d'" },
		{ { "PAPO_MCP_IDLE=2592001" }, NULL, NULL,
		  "PAPO_MCP_IDLE must be " TIME_TAKES ", not '2592001'" },
		{ { "PAPO_MCP_IDLE=721h" }, NULL, NULL,
		  "PAPO_MCP_IDLE must be " TIME_TAKES ", not '721h'" },
		{ { "PAPO_OAUTH_CODE_TTL=-5" }, NULL, NULL,
		  "PAPO_OAUTH_CODE_TTL must be " TIME_TAKES ", not '-5'" },
		{ { "PAPO_FILES_QUOTA=0" }, NULL, NULL,
		  "PAPO_FILES_QUOTA must be " SIZE_TAKES ", not '0'" },
		{ { "PAPO_FILES_QUOTA=1025G" }, NULL, NULL,
		  "PAPO_FILES_QUOTA must be " SIZE_TAKES ", not '1025G'" },
		{ { "PAPO_FILES_QUOTA=4T" }, NULL, NULL,
		  "PAPO_FILES_QUOTA must be " SIZE_TAKES ", not '4T'" },
		{ { "PAPO_FILES_QUOTA=all" }, NULL, NULL,
		  "PAPO_FILES_QUOTA must be " SIZE_TAKES ", not 'all'" },
		{ { "PAPO_FILES_AUTO=some" }, NULL, NULL,
		  "PAPO_FILES_AUTO must be " SIZE_TAKES ", 0 or all, not 'some'" },
		/* The node's own parsers name the setting themselves. */
		{ { "PAPO_RATE=fast" }, NULL, NULL, "PAPO_RATE 'fast' must start "
		  "with a count of messages from 1 to 1000000, as in 20/min,10" },
		{ { "PAPO_RATE=5/day" }, NULL, NULL, "PAPO_RATE '5/day': the unit "
		  "after / must be s, min or h, as in 20/min,10" },
		{ { "PAPO_RATE=5/s,0" }, NULL, NULL, "PAPO_RATE '5/s,0': the burst "
		  "after the comma must be a count from 1 to 1000000, as in "
		  "20/min,10" },
		{ { "PAPO_DAMP=on" }, NULL, NULL, "PAPO_DAMP 'on' must be off or a "
		  "count of answers from 1 to 1000, a slash and a time, as in "
		  "12/5m" },
		{ { "PAPO_DAMP=12/25h" }, NULL, NULL, "PAPO_DAMP '12/25h': the "
		  "time after the slash must be a number and s, m or h, at most "
		  "24h, as in 12/5m" },
		{ { "PAPO_KEEP=forever" }, NULL, NULL, "PAPO_KEEP must be a count "
		  "of messages (1 to 100000000, e.g. 1000) or days (1d to "
		  "36500d, e.g. 30d), not 'forever'" },
		{ { "PAPO_KEEP=0" }, NULL, NULL, "PAPO_KEEP must be a count of "
		  "messages (1 to 100000000, e.g. 1000) or days (1d to 36500d, "
		  "e.g. 30d), not '0'" },
		/* A long value is quoted cut short. */
		{ { "PAPO_LAN=" "0123456789012345678901234567890123456789"
		  "0123456789012345678901234567890123456789" }, NULL, NULL,
		  "PAPO_LAN must be on or off, not '0123456789012345678901234567"
		  "890123456789012345678901234567890123'" },
		/* The rules between settings. */
		{ { "PAPO_TURN_USER=bo" }, NULL, NULL, TURN_ALONE },
		{ { "PAPO_TURN_SECRET=s" }, NULL, NULL, TURN_ALONE },
		{ { "PAPO_TURN=turn:relay.example:3478", "PAPO_TURN_USER=bo" },
		  NULL, NULL, "the TURN server turn:relay.example:3478 needs "
		  "PAPO_TURN_USER and PAPO_TURN_PASS, or PAPO_TURN_SECRET" },
		{ { "PAPO_TLS=self", "PAPO_TLS_CERT=/c.pem" }, NULL, NULL,
		  "PAPO_TLS=self and PAPO_TLS_CERT/PAPO_TLS_KEY exclude each "
		  "other: choose one" },
		{ { "PAPO_TLS_KEY=/k.pem" }, "--tls", "self", "PAPO_TLS=self and "
		  "PAPO_TLS_CERT/PAPO_TLS_KEY exclude each other: choose one" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct setting_arg arg = { cases[i].flag, cases[i].value };
		struct serve_config c = { .node.home = "/home" };
		char err[PAPO_ERR_LEN] = "";
		int rc;

		env_set(cases[i].vars, 1);
		rc = settings_load(err, &c, &arg, cases[i].flag != NULL);
		env_set(cases[i].vars, 0);
		if (rc != -1)
			fprintf(stderr, "case %zu passed\n", i);
		CHECK_EQ_INT(rc, -1);
		CHECK_EQ_STR(err, cases[i].err);
	}
}

static void
test_good(void)
{
	struct setting_arg args[] = {
		{ "--http", "127.0.0.1:0" },
		{ "--name", NULL },             /* not given */
		{ "--turn", "turn:relay.example:3478" },
	};
	struct serve_config c = { .node.home = "/home" };
	char err[PAPO_ERR_LEN] = "";

	/* The defaults, with nothing set. */
	CHECK_EQ_INT(settings_load(err, &c, NULL, 0), 0);
	CHECK_EQ_STR(c.node.home, "/home");     /* left as it was */
	CHECK_EQ_STR(c.http, "127.0.0.1:7777");
	CHECK_EQ_INT(c.node.nolan, 0);
	CHECK_EQ_INT(c.tls_self, 0);
	CHECK_EQ_INT(c.node.files_auto, 256 * 1024);
	CHECK_EQ_INT(c.node.files_quota, 4ULL << 30);
	CHECK(c.token == NULL && c.node.keep == NULL);

	/* Values of each kind; a flag wins over its variable; an empty
	 * variable is as one unset. */
	setenv("PAPO_HTTP", "0.0.0.0:1", 1);
	setenv("PAPO_NAME", "bo", 1);
	setenv("PAPO_TOKEN", "", 1);
	setenv("PAPO_LAN", "off", 1);
	setenv("PAPO_TURN_SECRET", "s", 1);
	setenv("PAPO_MCP_IDLE", "2h", 1);
	setenv("PAPO_OAUTH_ACCESS_TTL", "90s", 1);
	setenv("PAPO_PROTOCOL", "2", 1);
	setenv("PAPO_FILES_AUTO", "all", 1);
	setenv("PAPO_FILES_QUOTA", "16m", 1);
	setenv("PAPO_KEEP", "30d", 1);
	setenv("PAPO_TLS", "self", 1);
	CHECK_EQ_INT(settings_load(err, &c, args, 3), 0);
	CHECK_EQ_STR(c.http, "127.0.0.1:0");
	CHECK_EQ_STR(c.name, "bo");
	CHECK(c.token == NULL);
	CHECK_EQ_INT(c.node.nolan, 1);
	CHECK_EQ_STR(c.node.turn, "turn:relay.example:3478");
	CHECK_EQ_INT(c.mcp_idle_s, 7200);
	CHECK_EQ_INT(c.oauth_access_s, 90);
	CHECK_EQ_INT(c.node.version, 2);
	CHECK(c.node.files_auto == UINT64_MAX);
	CHECK_EQ_INT(c.node.files_quota, 16ULL << 20);
	CHECK_EQ_STR(c.node.keep, "30d");
	CHECK_EQ_INT(c.tls_self, 1);
	setenv("PAPO_FILES_AUTO", "0", 1);
	CHECK_EQ_INT(settings_load(err, &c, args, 3), 0);
	CHECK(c.node.files_auto == NODE_FILES_AUTO_NONE);
	env_clear();
}

static void
test_get(void)
{
	char err[PAPO_ERR_LEN] = "";
	int level = -1;

	CHECK_EQ_INT(settings_get(err, "PAPO_LOG", &level), 0);
	CHECK_EQ_INT(level, -1);
	setenv("PAPO_LOG", "debug", 1);
	CHECK_EQ_INT(settings_get(err, "PAPO_LOG", &level), 1);
	CHECK(level != -1);
	setenv("PAPO_LOG", "loud", 1);
	CHECK_EQ_INT(settings_get(err, "PAPO_LOG", &level), -1);
	CHECK_EQ_STR(err, "PAPO_LOG must be 'error', 'warn', 'info' or "
	    "'debug', not 'loud'");
	unsetenv("PAPO_LOG");
	CHECK_EQ_INT(settings_get(err, "PAPO_NOPE", &level), -1);
	CHECK_EQ_STR(err, "PAPO_NOPE is no setting");
}

int
main(void)
{
	env_save();
	test_bad();
	test_good();
	test_get();
	env_restore();
	return check_exit();
}
