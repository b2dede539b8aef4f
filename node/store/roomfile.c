/*
 * roomfile.c: a room's room.json (roomfile.h; docs/PROTOCOL.md,
 * "Files"): read, checked, written atomically and wiped; the names and
 * about texts it may hold.  Pure files and JSON, on the caller's thread.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/b32.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "node/store/blob.h"
#include "node/store/roomfile.h"
#include "node/wire/crypto.h"
#include "node/wire/frame.h"
#include "node/wire/invite.h"

#define ROOM_FILE_MAX (64 * 1024)

int
roomfile_check_name(char err[PAPO_ERR_LEN], const char *name)
{
	size_t n = name != NULL ? strlen(name) : 0;

	if (n == 0) {
		snprintf(err, PAPO_ERR_LEN, "the member name is empty");
		return -1;
	}
	if (n > PAPO_NAME_MAX) {
		snprintf(err, PAPO_ERR_LEN, "the member name has %zu bytes; "
		    "at most %d are allowed", n, PAPO_NAME_MAX);
		return -1;
	}
	if (!utf8_printable(name, n)) {
		snprintf(err, PAPO_ERR_LEN, "the member name must be UTF-8 "
		    "text without control characters");
		return -1;
	}
	return 0;
}

int
roomfile_check_about(char err[PAPO_ERR_LEN], const char *about)
{
	size_t n = about != NULL ? strlen(about) : 0;

	if (n > PAPO_ABOUT_MAX) {
		snprintf(err, PAPO_ERR_LEN, "the about text has %zu bytes; "
		    "at most %d are allowed", n, PAPO_ABOUT_MAX);
		return -1;
	}
	if (!utf8_printable(about != NULL ? about : "", n)) {
		snprintf(err, PAPO_ERR_LEN, "the about text must be UTF-8 "
		    "text without control characters");
		return -1;
	}
	return 0;
}

void
roomfile_wipe(struct room_file *r)
{
	sodium_memzero(r, sizeof(*r));
}

void
roomfile_derived_name(const uint8_t secret[PAPO_KEY_LEN],
    char out[ROOM_NAME_MAX + 1])
{
	struct room_keys keys;
	char rid[PAPO_ROOMID_LEN + 1];

	sec_room_keys(secret, &keys);
	sec_room_id_format(&keys, rid);
	snprintf(out, ROOM_NAME_MAX + 1, "papo-%.8s", rid);
	sodium_memzero(&keys, sizeof(keys));
}

const char *
roomfile_given_name(const struct room_file *r)
{
	char derived[ROOM_NAME_MAX + 1];

	roomfile_derived_name(r->secret, derived);
	return strcmp(r->name, derived) != 0 ? r->name : NULL;
}

int
roomfile_check_room(char err[PAPO_ERR_LEN], const char *room)
{
	size_t n = strlen(room);

	if (n == 0 || n > ROOM_NAME_MAX || !utf8_printable(room, n)) {
		snprintf(err, PAPO_ERR_LEN, "the room name must be 1 to %d "
		    "bytes of UTF-8 text without control characters",
		    ROOM_NAME_MAX);
		return -1;
	}
	return 0;
}

static const char *
roomfile_json_str(const cJSON *o, const char *name)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(c) ? c->valuestring : NULL;
}

/* Copies o's string field name (absent: "") into out of size n; -1 when
 * it is not a string or is too long. */
static int
roomfile_json_copy(const cJSON *o, const char *name, char *out, size_t n)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, name);

	if (c == NULL) {
		out[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(c) || strlen(c->valuestring) >= n)
		return -1;
	strcpy(out, c->valuestring);
	return 0;
}

/* The relay the invite carried ("relay" in room.json), if any. */
static int
roomfile_load_relay(const cJSON *o, struct invite_relay *r)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "relay");

	if (v == NULL)
		return 0;
	if (!cJSON_IsObject(v) ||
	    roomfile_json_copy(v, "url", r->url, sizeof(r->url)) == -1 ||
	    roomfile_json_copy(v, "user", r->user, sizeof(r->user)) == -1 ||
	    roomfile_json_copy(v, "pass", r->pass, sizeof(r->pass)) == -1 ||
	    roomfile_json_copy(v, "secret", r->secret, sizeof(r->secret)) == -1 ||
	    r->url[0] == '\0')
		return -1;
	return 0;
}

int
roomfile_load(char err[PAPO_ERR_LEN], const char *home, struct room_file *out)
{
	char path[4096];
	char *data = NULL;
	const char *s, *what = NULL;
	const cJSON *boot, *c;
	cJSON *o = NULL;
	size_t len;
	int exists, rc = -1;

	memset(out, 0, sizeof(*out));
	if (fs_path(path, sizeof(path), home, ROOM_FILE) == -1) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
		return -1;
	}
	if (fs_read(err, path, ROOM_FILE_MAX, &data, &len, &exists) == -1) {
		if (!exists)
			snprintf(err, PAPO_ERR_LEN, "%s has no room yet: run "
			    "'papo new --name NAME' or 'papo join INVITE --name "
			    "NAME' first", home);
		goto out;
	}
	if ((o = cJSON_ParseWithLength(data, len)) == NULL) {
		what = "it is not valid JSON";
		goto bad;
	}
	if ((s = roomfile_json_str(o, "room")) == NULL ||
	    roomfile_check_room(err, s) == -1) {
		what = "\"room\" is missing or invalid";
		goto bad;
	}
	strcpy(out->name, s);
	if ((s = roomfile_json_str(o, "secret")) == NULL ||
	    sec_id_parse(s, out->secret) == -1) {
		what = "\"secret\" is missing or malformed";
		goto bad;
	}
	if ((s = roomfile_json_str(o, "name")) == NULL ||
	    roomfile_check_name(err, s) == -1) {
		what = "\"name\" is missing or invalid";
		goto bad;
	}
	strcpy(out->me, s);
	if ((s = roomfile_json_str(o, "about")) == NULL)
		s = "";
	if (roomfile_check_about(err, s) == -1) {
		what = "\"about\" is invalid";
		goto bad;
	}
	strcpy(out->about, s);
	if ((s = roomfile_json_str(o, "inviter")) != NULL) {
		if (sec_id_parse(s, out->inviter) == -1) {
			what = "\"inviter\" is malformed";
			goto bad;
		}
		out->has_inviter = 1;
	}
	if ((s = roomfile_json_str(o, "owner")) != NULL) {
		if (sec_id_parse(s, out->owner) == -1) {
			what = "\"owner\" is malformed";
			goto bad;
		}
		out->has_owner = 1;
	}
	boot = cJSON_GetObjectItemCaseSensitive(o, "bootstrap");
	cJSON_ArrayForEach(c, boot) {
		if (out->nboot == PAPO_ADDR_MAX || !cJSON_IsString(c) ||
		    addr_parse(c->valuestring, &out->boot[out->nboot]) == -1) {
			what = "\"bootstrap\" holds a malformed address";
			goto bad;
		}
		out->nboot++;
	}
	if (roomfile_load_relay(o, &out->relay) == -1) {
		what = "\"relay\" is malformed";
		goto bad;
	}
	rc = 0;
	goto out;
bad:
	snprintf(err, PAPO_ERR_LEN, "%s is damaged: %s", path, what);
out:
	if (rc == -1)
		roomfile_wipe(out);
	if (data != NULL) {
		sodium_memzero(data, len);
		free(data);
	}
	cJSON_Delete(o);
	return rc;
}

int
roomfile_save(char err[PAPO_ERR_LEN], const char *home, const struct room_file *r)
{
	char path[4096], text[PAPO_ID_LEN + 1];
	cJSON *o = NULL, *boot, *relay;
	char *json = NULL;
	int rc = -1;

	if (fs_path(path, sizeof(path), home, ROOM_FILE) == -1) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
		return -1;
	}
	if (fs_home(err, home) == -1)
		return -1;
	if ((o = cJSON_CreateObject()) == NULL)
		goto nomem;
	b32_encode(r->secret, sizeof(r->secret), text);
	if (cJSON_AddStringToObject(o, "room", r->name) == NULL ||
	    cJSON_AddStringToObject(o, "secret", text) == NULL ||
	    cJSON_AddStringToObject(o, "name", r->me) == NULL ||
	    cJSON_AddStringToObject(o, "about", r->about) == NULL)
		goto nomem;
	if (r->has_inviter) {
		sec_id_format(r->inviter, text);
		if (cJSON_AddStringToObject(o, "inviter", text) == NULL)
			goto nomem;
	}
	if (r->has_owner) {
		sec_id_format(r->owner, text);
		if (cJSON_AddStringToObject(o, "owner", text) == NULL)
			goto nomem;
	}
	if ((boot = cJSON_AddArrayToObject(o, "bootstrap")) == NULL)
		goto nomem;
	for (size_t i = 0; i < r->nboot; i++) {
		char a[ADDR_STRLEN];

		addr_format(&r->boot[i], a);
		cJSON_AddItemToArray(boot, cJSON_CreateString(a));
	}
	if (r->relay.url[0] != '\0' &&
	    ((relay = cJSON_AddObjectToObject(o, "relay")) == NULL ||
	    cJSON_AddStringToObject(relay, "url", r->relay.url) == NULL ||
	    cJSON_AddStringToObject(relay, "user", r->relay.user) == NULL ||
	    cJSON_AddStringToObject(relay, "pass", r->relay.pass) == NULL ||
	    cJSON_AddStringToObject(relay, "secret", r->relay.secret) == NULL))
		goto nomem;
	if ((json = cJSON_Print(o)) == NULL)
		goto nomem;
	rc = fs_write(err, path, json, strlen(json));
	goto out;
nomem:
	snprintf(err, PAPO_ERR_LEN, "out of memory writing %s", path);
out:
	sodium_memzero(text, sizeof(text));
	if (json != NULL) {
		sodium_memzero(json, strlen(json));
		cJSON_free(json);
	}
	cJSON_Delete(o);
	return rc;
}
