/*
 * cmd_room.c: the commands about the rooms a member is in: papo new,
 * join, invite, rooms, leave and rename.  Main thread; a running daemon is asked,
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

int
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
	/* No --name: the daemon takes the one this member has already. */
	if (o->name != NULL)
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
		printf(" as ");
		cli_put(cli_str(ans, "me"));
		printf("; the daemon follows it now.\n");
	} else {
		printf("new room ");
		cli_put(cli_str(ans, "name"));
		printf(" created beside the others; you are ");
		cli_put(cli_str(ans, "me"));
		printf(".\nshare this invite with the other members:\n");
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
	char name[PAPO_NAME_MAX + 1] = "";
	struct cli_opts o;
	char *invite = NULL;
	int rc, lockfd;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	/* Without --name, the name this member has in its rooms. */
	if (o.name == NULL && home_member_name(err, o.home, name) == -1)
		return cli_usage(c, "%s", "--name NAME is required (this home "
		    "holds no room whose name to take)");
	if (!o.force && cli_running(o.home))
		return cli_add_room(&o, NULL);
	/* Held until the new room is written: no daemon starts meanwhile. */
	if (serve_hold(err, o.home, &lockfd) == -1)
		return cli_fail(err);
	rc = home_create(err, o.home, o.name, o.about, o.room,
	    o.force ? aside : NULL, o.listen, &invite);
	if (lockfd != -1)
		close(lockfd);
	cli_said_aside(o.home, aside);
	if (rc == -1)
		return cli_fail(err);
	printf("new room created; you are %s.\n"
	    "share this invite with the other members:\n%s\n",
	    o.name != NULL ? o.name : name, invite);
	free(invite);
	return CLI_OK;
}

int
cli_join(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], aside[PAPO_ASIDE_LEN] = "", dir[4096];
	struct room_file r;
	struct cli_opts o;
	int rc, lockfd;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the INVITE is missing");
	/* Without --name, the name this member has in its rooms (home_join
	 * refuses when it has none). */
	if (!o.force && cli_running(o.home))
		return cli_add_room(&o, argv[optind]);
	if (serve_hold(err, o.home, &lockfd) == -1)
		return cli_fail(err);
	rc = home_join_in(err, o.home, argv[optind], o.name, o.about,
	    o.force ? aside : NULL, dir);
	if (lockfd != -1)
		close(lockfd);
	cli_said_aside(o.home, aside);
	if (rc == -1)
		return cli_fail(err);
	if (roomfile_load(err, dir, &r) == -1)
		return cli_fail(err);
	if (rc == 1)
		printf("this member was in room %s already, as %s: it takes "
		    "the invite's newer key, and the room's history is kept; "
		    "it starts with 'papo serve'.\n", r.name, r.me);
	else
		printf("joined the room as %s; it starts with 'papo serve'.\n",
		    r.me);
	roomfile_wipe(&r);
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
		if (home_dir_find(err, o.home, o.room, dir, sizeof(dir)) == -1)
			return cli_fail(err);
	} else if (snprintf(dir, sizeof(dir), "%s", o.home) >= (int)sizeof(dir))
		return cli_fail("PAPO_HOME is too long");
	if (home_invite(err, dir, o.listen, &invite) == -1)
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
	char *text = NULL, path[1024], id[32] = "";
	int rc;

	if (cli_start(c, argc, argv, &o, 2, &rc) == -1)
		return rc;
	if (optind < argc) {
		if (strcmp(argv[optind], "default") != 0)
			return cli_usage(c, "unknown subcommand '%s'",
			    argv[optind]);
		if (optind + 1 == argc)
			return cli_usage(c, "%s", "default needs the ROOM");
		if (cli_room_pick(o.home, argv[optind + 1], id) == -1)
			return CLI_ERROR;
		if (cli_room_path(path, sizeof(path), "/api/default",
		    id[0] != '\0' ? id : argv[optind + 1]) == -1)
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
	char *text = NULL, path[1024], id[32] = "";
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the ROOM is missing (papo rooms "
		    "lists them)");
	if (cli_room_pick(o.home, argv[optind], id) == -1)
		return CLI_ERROR;
	if (cli_room_path(path, sizeof(path), o.delete ?
	    "/api/leave?delete=1" : "/api/leave", id[0] != '\0' ? id :
	    argv[optind]) == -1)
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

/* papo rename NAME with no daemon running: room.json of each room (or
 * of --room's) rewritten under serve.lock. */
static int
cli_rename_files(const struct cli_opts *o, const char *name)
{
	char err[PAPO_ERR_LEN], one[4096], **dirs = NULL;
	size_t n = 0, done = 0;
	int lockfd, rc = CLI_ERROR;

	if (serve_hold(err, o->home, &lockfd) == -1)
		return cli_fail(err);
	if (o->room != NULL && o->room[0] != '\0') {
		if (home_dir_find(err, o->home, o->room, one, sizeof(one)) == -1 ||
		    (dirs = calloc(1, sizeof(*dirs))) == NULL ||
		    (dirs[0] = strdup(one)) == NULL) {
			if (dirs != NULL)
				snprintf(err, PAPO_ERR_LEN, "out of memory");
			goto out;
		}
		n = 1;
	} else if (home_dirs(err, o->home, &dirs, &n) == -1)
		goto out;
	if (n == 0) {
		snprintf(err, PAPO_ERR_LEN, "%s holds no room yet", o->home);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct room_file r;

		if (roomfile_load(err, dirs[i], &r) == -1)
			goto out;
		if (strcmp(r.me, name) != 0) {
			printf("room %s: %s is now %s\n", r.name, r.me, name);
			snprintf(r.me, sizeof(r.me), "%s", name);
			if (roomfile_save(err, dirs[i], &r) == -1) {
				roomfile_wipe(&r);
				goto out;
			}
			done++;
		}
		roomfile_wipe(&r);
	}
	if (done == 0)
		printf("this member is %s already\n", name);
	else
		printf("the rooms' members learn it at the next 'papo "
		    "serve'.\n");
	rc = CLI_OK;
out:
	if (lockfd != -1)
		close(lockfd);
	home_dirs_free(dirs, n);
	return rc == CLI_OK ? CLI_OK : cli_fail(err);
}

/* papo rename NAME [--room ROOM] [--json] */
int
cli_rename(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], path[1024], *body, *text = NULL;
	struct cli_opts o;
	const cJSON *e;
	cJSON *req, *ans = NULL;
	size_t n = 0;
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc)
		return cli_usage(c, "%s", "the NAME is missing");
	if (roomfile_check_name(err, argv[optind]) == -1)
		return cli_fail(err);
	if (!cli_running(o.home))
		return cli_rename_files(&o, argv[optind]);
	if ((req = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(req, "name", argv[optind]) == NULL ||
	    (body = cJSON_PrintUnformatted(req)) == NULL) {
		cJSON_Delete(req);
		return cli_fail("out of memory");
	}
	cJSON_Delete(req);
	/* No --room: every room (the route without one). */
	if (o.room != NULL && o.room[0] != '\0')
		rc = cli_room_path(path, sizeof(path), "/api/rename", o.room);
	else
		rc = snprintf(path, sizeof(path), "/api/rename") < 0 ? -1 : 0;
	if (rc == -1) {
		free(body);
		return cli_fail("the room's name is too long");
	}
	rc = cli_call(o.home, NULL, path, body, &ans, &text);
	free(body);
	if (rc != CLI_OK)
		goto out;
	if (o.json) {
		printf("%s\n", text);
		goto out;
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(ans, "rooms")) {
		printf("room ");
		cli_put(cli_str(e, "name"));
		printf(": ");
		cli_put(cli_str(e, "was"));
		printf(" is now ");
		cli_put(argv[optind]);
		printf("\n");
		n++;
	}
	if (n == 0)
		printf("this member is %s already\n", argv[optind]);
	else
		printf("its members learn it as the daemon greets them.\n");
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}
