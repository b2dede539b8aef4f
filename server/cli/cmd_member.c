/*
 * cmd_member.c: the commands about the room's members and its governance:
 * papo status, admin, rotate, remove and tokens (the daemon's OAuth
 * grants), through the running daemon.  Main thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/ask.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_member.h"
#include "server/cli/print.h"

/* The limits line, and damping's when it holds an exchange back:
 * "damping: on (12/5m): answers to bo refused for 240 s". */
/* "files: 5.0 MiB of 4.0 GiB", then one line per fetch under way with
 * its progress. */
static void
cli_status_files(const cJSON *files)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(files, "bytes");
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(files, "quota");
	const cJSON *f;
	char sb[32], sq[32];
	const char *s;

	if (!cJSON_IsNumber(b) || !cJSON_IsNumber(q))
		return;
	cli_size(b->valuedouble, sb);
	cli_size(q->valuedouble, sq);
	printf("files: %s of %s\n", sb, sq);
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(files,
	    "fetching")) {
		const cJSON *have = cJSON_GetObjectItemCaseSensitive(f, "have");
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(f, "size");
		double pc = cJSON_IsNumber(have) && cJSON_IsNumber(size) &&
		    size->valuedouble > 0 ? 100 * have->valuedouble /
		    size->valuedouble : 0;

		printf("  ");
		cli_put((s = cli_str(f, "name")) != NULL ? s : "?");
		printf("  ");
		cli_put((s = cli_str(f, "state")) != NULL ? s : "?");
		printf(" %.0f%%", pc);
		if ((s = cli_str(f, "error")) != NULL) {
			printf(" (");
			cli_put(s);
			printf(")");
		}
		printf("\n");
	}
}

static void
cli_status_limits(const cJSON *ans)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(ans, "limits");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(ans, "damping");
	const cJSON *e, *v;
	const char *s;

	if ((s = cli_str(l, "rate")) != NULL) {
		printf("sending limit: %s", s);
		v = cJSON_GetObjectItemCaseSensitive(l, "receive_per_minute");
		if (cJSON_IsNumber(v))
			printf("; keeping at most %.0f messages a minute from "
			    "any other member", v->valuedouble);
		printf("\n");
	}
	if ((s = cli_str(d, "limit")) == NULL)
		return;
	printf("damping: %s (%s)", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d,
	    "on")) ? "on" : strcmp(s, "off") == 0 ? "off" : "not now", s);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(d, "exchanges")) {
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "damped")))
			continue;
		v = cJSON_GetObjectItemCaseSensitive(e, "retry_after_s");
		printf(": answers to ");
		cli_put((s = cli_str(e, "with")) != NULL ? s : "?");
		printf(" refused for %.0f s", cJSON_IsNumber(v) ? v->valuedouble :
		    0);
	}
	printf("\n");
}

/* papo admin and papo remove: POST route {"name": NAME}.  *ans is the
 * answer to print, or NULL when there is nothing more to do (an error
 * said, or --json's text printed). */
static int
cli_member_call(const struct cli_cmd *c, int argc, char **argv,
    const char *route, cJSON **ans)
{
	struct cli_opts o;
	cJSON *req = NULL;
	char *body = NULL, *text = NULL;
	int rc;

	*ans = NULL;
	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the member's NAME is missing");
	rc = CLI_ERROR;
	if ((req = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(req, "name", argv[optind]) == NULL ||
	    (body = cJSON_PrintUnformatted(req)) == NULL)
		cli_fail("out of memory");
	else if ((rc = cli_call(o.home, o.room, route, body, ans, &text)) == CLI_OK &&
	    o.json)
		fputs(text, stdout);
	if (rc != CLI_OK || o.json) {
		cJSON_Delete(*ans);
		*ans = NULL;
	}
	cJSON_Delete(req);
	cJSON_free(body);
	free(text);
	return rc;
}

int
cli_admin(const struct cli_cmd *c, int argc, char **argv)
{
	cJSON *ans;
	const char *name;
	int rc = cli_member_call(c, argc, argv, "/api/admin", &ans);

	if (ans == NULL)
		return rc;
	name = cli_str(ans, "admin");
	cli_put(name != NULL ? name : "?");
	printf(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans, "already")) ?
	    " was an admin already\n" : " is now an admin of the room\n");
	cJSON_Delete(ans);
	return rc;
}

int
cli_rotate(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	cJSON *ans = NULL, *n;
	char *text = NULL;
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind != argc)
		return cli_usage(c, "%s", "rotate takes no NAME");
	if ((rc = cli_call(o.home, o.room, "/api/rotate", "{}", &ans, &text)) !=
	    CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	n = cJSON_GetObjectItemCaseSensitive(ans, "epoch");
	printf("the room's key changed (epoch %.0f)\n",
	    cJSON_IsNumber(n) ? n->valuedouble : 0);
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}

int
cli_remove(const struct cli_cmd *c, int argc, char **argv)
{
	cJSON *ans, *n;
	const char *name;
	int rc = cli_member_call(c, argc, argv, "/api/remove", &ans);

	if (ans == NULL)
		return rc;
	name = cli_str(ans, "removed");
	n = cJSON_GetObjectItemCaseSensitive(ans, "epoch");
	cli_put(name != NULL ? name : "?");
	printf(" was removed from the room; the room's key changed (epoch "
	    "%.0f)\n", cJSON_IsNumber(n) ? n->valuedouble : 0);
	cJSON_Delete(ans);
	return rc;
}

/* ", fingerprint XXXXXXXX": the room's (of id, the one the daemon
 * answered about), as papo serve's banner and logs give it, to tell
 * which room a log is of. */
static void
cli_fingerprint(const char *home, const char *id)
{
	char err[PAPO_ERR_LEN], name[PAPO_NAME_MAX + 1], fpr[PAPO_FPR_LEN + 1];
	char dir[4096];

	if (id != NULL && home_dir_find(err, home, id, dir, sizeof(dir)) == 0 &&
	    home_describe(err, dir, name, fpr) == 0)
		printf(", fingerprint %s", fpr);
}

int
cli_status(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *me, *members, *m, *v;
	const char *s;
	cJSON *ans = NULL;
	char *text = NULL, when[32];
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if ((rc = cli_call(o.home, o.room, "/api/status", NULL, &ans, &text)) != CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	printf("room: ");
	cli_put((s = cli_str(ans, "room")) != NULL ? s : "?");
	cli_fingerprint(o.home, cli_str(ans, "room_id"));
	me = cJSON_GetObjectItemCaseSensitive(ans, "me");
	printf("\nme: ");
	cli_put((s = cli_str(me, "name")) != NULL ? s : "?");
	if ((s = cli_str(me, "id")) != NULL) {
		printf(" (");
		cli_put(s);
		printf(")");
	}
	if ((s = cli_str(me, "about")) != NULL && s[0] != '\0') {
		printf(", ");
		cli_put(s);
	}
	/* Who governs the room: its owner, and the admins it made. */
	v = cJSON_GetObjectItemCaseSensitive(ans, "owner");
	printf("\nowner: ");
	cli_put((s = cli_str(v, "name")) != NULL ? s : "not known yet");
	v = cJSON_GetObjectItemCaseSensitive(ans, "admins");
	if (cJSON_GetArraySize(v) > 0) {
		printf("\nadmins: ");
		cJSON_ArrayForEach(m, v) {
			if (m != v->child)
				printf(", ");
			cli_put((s = cli_str(m, "name")) != NULL ? s : "?");
		}
	}
	/* The room's key, whom it left out, and whether we were. */
	v = cJSON_GetObjectItemCaseSensitive(ans, "epoch");
	if (cJSON_IsNumber(v))
		printf("\nkey epoch: %.0f", v->valuedouble);
	v = cJSON_GetObjectItemCaseSensitive(ans, "removed");
	cJSON_ArrayForEach(m, v) {
		printf("%s", m == v->child ? "\nremoved: " : ", ");
		cli_put((s = cli_str(m, "name")) != NULL ? s : "?");
		printf(" (by ");
		cli_put((s = cli_str(m, "by")) != NULL ? s : "?");
		printf(")");
	}
	v = cJSON_GetObjectItemCaseSensitive(me, "removed");
	if (cJSON_IsObject(v)) {
		printf("\nthis member was removed from the room by ");
		cli_put((s = cli_str(v, "by")) != NULL ? s : "?");
	}
	printf("\nreached at: ");
	v = cJSON_GetObjectItemCaseSensitive(me, "addrs");
	if (cJSON_GetArraySize(v) == 0)
		printf("nowhere yet");
	cJSON_ArrayForEach(m, v)
		if (cJSON_IsString(m))
			printf("%s%s", m == v->child ? "" : " ", m->valuestring);
	if ((s = cli_str(me, "nat")) != NULL)
		printf(" (NAT: %s)", s);
	printf("\n");
	/* The router's port mapping, when there is something to say. */
	v = cJSON_GetObjectItemCaseSensitive(me, "portmap");
	if ((s = cli_str(v, "state")) != NULL && strcmp(s, "off") != 0) {
		const char *ext = cli_str(v, "external");
		const char *why = cli_str(v, "reason");

		printf("port mapping: %s", s);
		if ((s = cli_str(v, "method")) != NULL)
			printf(" by %s", s);
		if (ext != NULL)
			printf(" at %s", ext);
		if (why != NULL) {
			printf(" (");
			cli_put(why);
			printf(")");
		}
		printf("\n");
	}
	/* The TURN relay, when one is set: "allocated at RELAYED on SERVER",
	 * "allocating on SERVER", "failed (REASON)"; "(from the invite)"
	 * when this member was not given one but its invite carried it. */
	v = cJSON_GetObjectItemCaseSensitive(me, "turn");
	if ((s = cli_str(v, "state")) != NULL && strcmp(s, "off") != 0) {
		const char *relayed = cli_str(v, "relayed");
		const char *server = cli_str(v, "server");
		const char *why = cli_str(v, "reason");
		const char *from = cli_str(v, "from");

		printf("relay: %s", s);
		if (relayed != NULL)
			printf(" at %s", relayed);
		if (server != NULL && why == NULL)
			printf(" on %s", server);
		if (from != NULL && strcmp(from, "invite") == 0)
			printf(" (from the invite)");
		if (why != NULL) {
			printf(" (");
			cli_put(why);
			printf(")");
		}
		printf("\n");
	}
	cli_status_limits(ans);
	v = cJSON_GetObjectItemCaseSensitive(ans, "messages");
	if (cJSON_IsNumber(v))
		printf("messages: %.0f", v->valuedouble);
	v = cJSON_GetObjectItemCaseSensitive(ans, "outbox");
	if (cJSON_IsNumber(v))
		printf(", waiting for acks: %.0f", v->valuedouble);
	printf("\n");
	cli_status_files(cJSON_GetObjectItemCaseSensitive(ans, "files"));
	printf("members:");
	members = cJSON_GetObjectItemCaseSensitive(ans, "members");
	if (cJSON_GetArraySize(members) == 0)
		printf(" none yet; share the invite ('papo invite')");
	printf("\n");
	cJSON_ArrayForEach(m, members) {
		v = cJSON_GetObjectItemCaseSensitive(m, "last_seen");
		cli_time(cJSON_IsNumber(v) ? v->valuedouble : 0, when);
		printf("  ");
		cli_put((s = cli_str(m, "name")) != NULL ? s : "?");
		printf("  %s  last seen %s",
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "online")) ?
		    "online" : "offline", when);
		if ((s = cli_str(m, "path")) != NULL) {
			printf("  path: ");
			cli_put(s);
			v = cJSON_GetObjectItemCaseSensitive(m, "rtt_ms");
			if (cJSON_IsNumber(v))
				printf(", %.1f ms", v->valuedouble);
		}
		if ((s = cli_str(m, "about")) != NULL && s[0] != '\0') {
			printf("  ");
			cli_put(s);
		}
		v = cJSON_GetObjectItemCaseSensitive(m, "dropped");
		if (cJSON_IsNumber(v) && v->valuedouble > 0)
			printf("  %.0f messages dropped over the limit",
			    v->valuedouble);
		printf("\n");
	}
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}

/* papo tokens: the daemon's OAuth grants, listed or one revoked. */
int
cli_tokens(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *g, *v;
	cJSON *ans = NULL, *req = NULL;
	char *text = NULL, *body = NULL, when[32];
	int rc;

	if (cli_start(c, argc, argv, &o, 2, &rc) == -1)
		return rc;
	if (optind < argc) {
		if (strcmp(argv[optind], "revoke") != 0)
			return cli_usage(c, "unknown subcommand '%s'",
			    argv[optind]);
		if (optind + 1 >= argc)
			return cli_usage(c, "%s", "the grant's ID is missing");
		if ((req = cJSON_CreateObject()) == NULL ||
		    cJSON_AddStringToObject(req, "id", argv[optind + 1]) ==
		    NULL || (body = cJSON_PrintUnformatted(req)) == NULL) {
			cJSON_Delete(req);
			return cli_fail("out of memory");
		}
		rc = cli_call(o.home, NULL, "/api/tokens/revoke", body, &ans, NULL);
		if (rc == CLI_OK)
			printf("revoked %s\n", argv[optind + 1]);
		goto out;
	}
	if ((rc = cli_call(o.home, NULL, "/api/tokens", NULL, &ans, &text)) != CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans, "oauth"))) {
		printf("OAuth is off on this daemon (PAPO_OAUTH=on turns it "
		    "on)\n");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(ans, "grants");
	if (cJSON_GetArraySize(v) == 0)
		printf("no grants\n");
	cJSON_ArrayForEach(g, v) {
		const char *s;

		cli_put((s = cli_str(g, "id")) != NULL ? s : "?");
		printf("  ");
		cli_put((s = cli_str(g, "client_name")) != NULL ? s : "?");
		printf(" (");
		cli_put((s = cli_str(g, "client_id")) != NULL ? s : "?");
		cli_time(cJSON_GetNumberValue(
		    cJSON_GetObjectItemCaseSensitive(g, "created")) * 1000, when);
		printf(")\n    created %s", when);
		cli_time(cJSON_GetNumberValue(
		    cJSON_GetObjectItemCaseSensitive(g, "last_used")) * 1000,
		    when);
		printf(", last used %s", when);
		cli_time(cJSON_GetNumberValue(
		    cJSON_GetObjectItemCaseSensitive(g, "expires")) * 1000, when);
		printf(", expires %s\n", when);
	}
out:
	cJSON_Delete(req);
	cJSON_Delete(ans);
	cJSON_free(body);
	free(text);
	return rc;
}
