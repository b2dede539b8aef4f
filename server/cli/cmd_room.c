/*
 * cmd_room.c: the commands about the rooms a member is in: papo new,
 * join, invite, rooms and leave.  Main thread; a running daemon is asked,
 * else the home's files are written under serve.lock (serve_hold).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/ask.h"
#include "server/cli/client.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_room.h"
#include "server/cli/print.h"
#include "server/daemon/serve.h"

/* Where --force put the old room, when it did: one line on stderr. */
static void
cli_said_aside(const char *home, const char *aside)
{
	if (aside[0] != '\0')
		fprintf(stderr, "papo: the old room's files were moved into "
		    "%s/%s\n", home, aside);
}

/* Whether papo serve runs on home (its serve.json answers). */
static int
cli_running(const char *home)
{
	char err[PAPO_ERR_LEN];
	struct client cl;

	if (client_open(err, home, &cl) == -1)
		return 0;
	client_close(&cl);
	return 1;
}

/* papo new / papo join while the daemon runs: the room is added to it
 * at once (POST /api/rooms). */
static int
cli_add_room(const struct cli_opts *o, const char *invite)
{
	cJSON *req = cJSON_CreateObject(), *ans = NULL;
	const cJSON *v;
	char *body;
	int rc;

	if (invite != NULL)
		cJSON_AddStringToObject(req, "invite", invite);
	else if (o->room != NULL)
		cJSON_AddStringToObject(req, "room", o->room);
	cJSON_AddStringToObject(req, "name", o->name);
	if (o->about != NULL)
		cJSON_AddStringToObject(req, "about", o->about);
	body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	if (body == NULL)
		return cli_fail("out of memory");
	rc = cli_call(o->home, NULL, "/api/rooms", body, &ans, NULL);
	free(body);
	if (rc != CLI_OK)
		return rc;
	if (invite != NULL) {
		printf("joined room ");
		cli_put(cli_str(ans, "name"));
		printf(" as %s; the daemon follows it now.\n", o->name);
	} else {
		printf("new room ");
		cli_put(cli_str(ans, "name"));
		printf(" created beside the others; you are %s.\n"
		    "share this invite with the other members:\n", o->name);
		if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(ans,
		    "invite")))
			printf("%s\n", v->valuestring);
	}
	cJSON_Delete(ans);
	return CLI_OK;
}

int
cli_new(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN] = "";
	struct cli_opts o;
	char *invite = NULL;
	int rc, lockfd;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if (o.name == NULL)
		return cli_usage(c, "%s", "--name NAME is required");
	if (!o.force && cli_running(o.home))
		return cli_add_room(&o, NULL);
	/* Held until the new room is written: no daemon starts meanwhile. */
	if (serve_hold(err, o.home, &lockfd) == -1)
		return cli_fail(err);
	rc = room_create(err, o.home, o.name, o.about, o.room,
	    o.force ? aside : NULL, o.listen, &invite);
	if (lockfd != -1)
		close(lockfd);
	cli_said_aside(o.home, aside);
	if (rc == -1)
		return cli_fail(err);
	printf("new room created; you are %s.\n"
	    "share this invite with the other members:\n%s\n", o.name, invite);
	free(invite);
	return CLI_OK;
}

int
cli_join(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN] = "";
	struct cli_opts o;
	int rc, lockfd;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the INVITE is missing");
	if (o.name == NULL)
		return cli_usage(c, "%s", "--name NAME is required");
	if (!o.force && cli_running(o.home))
		return cli_add_room(&o, argv[optind]);
	if (serve_hold(err, o.home, &lockfd) == -1)
		return cli_fail(err);
	rc = room_join(err, o.home, argv[optind], o.name, o.about,
	    o.force ? aside : NULL);
	if (lockfd != -1)
		close(lockfd);
	cli_said_aside(o.home, aside);
	if (rc == -1)
		return cli_fail(err);
	printf("joined the room as %s; it starts with 'papo serve'.\n", o.name);
	return CLI_OK;
}

int
cli_invite(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], dir[4096];
	struct cli_opts o;
	char *invite = NULL;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	/* A running daemon's invite carries the port it really bound, and
	 * the addresses it is reached at now. */
	if (!o.listen_given && cli_running(o.home)) {
		cJSON *ans = NULL;

		if ((rc = cli_call(o.home, o.room, "/api/invite", NULL, &ans,
		    NULL)) == CLI_OK)
			printf("%s\n", cli_str(ans, "invite"));
		cJSON_Delete(ans);
		return rc;
	}
	if (o.room != NULL && o.room[0] != '\0') {
		if (room_dir_find(err, o.home, o.room, dir, sizeof(dir)) == -1)
			return cli_fail(err);
	} else if (snprintf(dir, sizeof(dir), "%s", o.home) >= (int)sizeof(dir))
		return cli_fail("PAPO_HOME is too long");
	if (room_invite(err, dir, o.listen, &invite) == -1)
		return cli_fail(err);
	printf("%s\n", invite);
	free(invite);
	return CLI_OK;
}

/* papo rooms [--json] | papo rooms default ROOM */
int
cli_rooms(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *r;
	cJSON *ans = NULL;
	char *text = NULL, path[1024];
	int rc;

	if (cli_start(c, argc, argv, &o, 2, &rc) == -1)
		return rc;
	if (optind < argc) {
		if (strcmp(argv[optind], "default") != 0)
			return cli_usage(c, "unknown subcommand '%s'",
			    argv[optind]);
		if (optind + 1 == argc)
			return cli_usage(c, "%s", "default needs the ROOM");
		if (cli_room_path(path, sizeof(path), "/api/default",
		    argv[optind + 1]) == -1)
			return cli_fail("the room's name is too long");
		rc = cli_call(o.home, NULL, path, "{}", &ans, &text);
	} else
		rc = cli_call(o.home, NULL, "/api/rooms", NULL, &ans, &text);
	if (rc != CLI_OK)
		goto out;
	if (o.json) {
		printf("%s\n", text);
		goto out;
	}
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ans,
	    "rooms")) == 0)
		printf("this member is in no room: 'papo join INVITE' or 'papo "
		    "new' adds one\n");
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(ans, "rooms")) {
		const cJSON *on = cJSON_GetObjectItemCaseSensitive(r, "online");
		const cJSON *mem = cJSON_GetObjectItemCaseSensitive(r, "members");
		const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(r,
		    "messages");

		printf("%s ", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r,
		    "default")) ? "*" : " ");
		cli_put(cli_str(r, "name"));
		printf("  %.8s  as ", cli_str(r, "id") != NULL ?
		    cli_str(r, "id") : "?");
		cli_put(cli_str(r, "me"));
		printf("  %d of %d online  %d messages",
		    cJSON_IsNumber(on) ? on->valueint : 0,
		    cJSON_IsNumber(mem) ? mem->valueint : 0,
		    cJSON_IsNumber(msgs) ? msgs->valueint : 0);
		if (cli_str(r, "refused") != NULL) {
			printf("  refused: ");
			cli_put(cli_str(r, "refused"));
		}
		printf("\n");
	}
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}

/* papo leave ROOM [--delete] [--json] */
int
cli_leave(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *kept;
	cJSON *ans = NULL;
	char *text = NULL, path[1024];
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the ROOM is missing (papo rooms "
		    "lists them)");
	if (cli_room_path(path, sizeof(path), o.delete ?
	    "/api/leave?delete=1" : "/api/leave", argv[optind]) == -1)
		return cli_fail("the room's name is too long");
	if ((rc = cli_call(o.home, NULL, path, "{}", &ans, &text)) != CLI_OK)
		goto out;
	if (o.json) {
		printf("%s\n", text);
		goto out;
	}
	printf("left room ");
	cli_put(cli_str(ans, "name"));
	kept = cJSON_GetObjectItemCaseSensitive(ans, "kept");
	if (cJSON_IsString(kept))
		printf("; its files are kept in %s\n", kept->valuestring);
	else
		printf("; its files are deleted\n");
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}
