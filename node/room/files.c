/*
 * files.c: a room's shared files, its face (files.h; docs/FILES.md): the
 * store in the room's folder, the body of a message naming files, what
 * the messages stored name (REF.meta), the files fetched at once, the
 * state JSON, the requests, retention.  files_bulk.c and its siblings
 * move the chunks.  Node thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "node/room/files_int.h"
#include "node/room/member.h"

int
files_new(struct room *room)
{
	const struct room_settings *set = room->env.set;
	char dir[4096], err[PAPO_ERR_LEN];
	struct files *fs;

	if ((fs = calloc(1, sizeof(*fs))) == NULL)
		return -1;
	room->files = fs;
	fs->automax = set->files_auto == FILES_AUTO_NONE ? 0 :
	    set->files_auto ? set->files_auto : FILES_AUTO_DEFAULT;
	if (fs_path(dir, sizeof(dir), room->env.home, FILES_DIR) == -1 ||
	    (fs->bs = blob_open(err, dir, set->files_quota ?
	    set->files_quota : FILES_QUOTA_DEFAULT)) == NULL) {
		log_msg(LOG_ERROR, "cannot open the room's files: %s", err);
		return -1;
	}
	if ((fs->chunk = malloc(BLOB_STORED_MAX)) == NULL ||
	    (fs->tick = loop_timer_new(room->env.loop, fetch_tick, room)) == NULL)
		return -1;
	/* Fetches a stop cut go on, once the room runs. */
	fs->resume = 1;
	loop_timer_set(fs->tick, loop_now_ns() + FETCH_TICK_NS);
	return 0;
}

void
files_free(struct room *room)
{
	struct files *fs = room->files;

	if (fs == NULL)
		return;
	fetch_free_all(room);
	loop_timer_free(fs->tick);
	blob_close(fs->bs);
	free(fs->chunk);
	free(fs);
	room->files = NULL;
}

/* One entry of a send's "files": "REF" or {"ref", "name", "type"}; what
 * this room knows of it into a.  0, or -1 with req answered. */
static int
files_entry(struct room *room, struct node_msg *req, const cJSON *e,
    struct attach *a)
{
	const cJSON *ref = cJSON_IsString(e) ? e :
	    cJSON_GetObjectItemCaseSensitive(e, "ref");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(e, "type");
	char err[PAPO_ERR_LEN];

	if (!cJSON_IsString(ref) || (!cJSON_IsString(e) &&
	    !cJSON_IsObject(e)) || (name != NULL && !cJSON_IsString(name)) ||
	    (type != NULL && !cJSON_IsString(type))) {
		room_fail(room, req, 400, "each of files is a reference "
		    "or an object {\"ref\", \"name\", \"type\"}");
		return -1;
	}
	if (blob_meta_load(err, room->files->bs, ref->valuestring, a) == -1) {
		room_fail(room, req, 404, "no file %s was shared in this room",
		    ref->valuestring);
		return -1;
	}
	if (name != NULL)
		attach_name(a->name, name->valuestring);
	if (type != NULL) {
		if (strlen(type->valuestring) > ATTACH_TYPE_MAX) {
			room_fail(room, req, 400, "a media type is too long");
			return -1;
		}
		snprintf(a->type, sizeof(a->type), "%s", type->valuestring);
	}
	if (attach_check(err, a) == -1) {
		room_fail(room, req, 400, "%s", err);
		return -1;
	}
	return 0;
}

int
files_body(struct room *room, struct node_msg *req, char **body, size_t *len)
{
	struct node_send_args *args = node_args_send(req);
	struct attach *v = NULL;
	cJSON *list = NULL;
	const cJSON *e;
	size_t n = 0, tlen = args->text != NULL ? strlen(args->text) : 0;
	struct buf b;
	int rc = -1;

	buf_init(&b, PAPO_BODY_MAX + 1);
	if ((list = cJSON_Parse(args->files)) == NULL || !cJSON_IsArray(list)) {
		room_fail(room, req, 400, "files is not a JSON array");
		goto out;
	}
	if (cJSON_GetArraySize(list) > ATTACH_MAX) {
		room_fail(room, req, 413, "a message names at most %d files",
		    ATTACH_MAX);
		goto out;
	}
	if ((v = calloc(ATTACH_MAX, sizeof(*v))) == NULL) {
		room_fail(room, req, 500, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(e, list)
		if (files_entry(room, req, e, &v[n++]) == -1)
			goto out;
	if (attach_format(&b, args->text != NULL ? args->text : "", tlen, v,
	    n) == -1 || b.len > PAPO_BODY_MAX) {
		room_fail(room, req, 413, "the text and the files' names "
		    "pass the %d KiB a message may hold", PAPO_BODY_MAX / 1024);
		goto out;
	}
	if ((*body = malloc(b.len + 1)) == NULL) {
		room_fail(room, req, 500, "out of memory");
		goto out;
	}
	memcpy(*body, b.p, b.len);
	(*body)[b.len] = '\0';
	*len = b.len;
	rc = 0;
out:
	if (v != NULL) {
		sodium_memzero(v, ATTACH_MAX * sizeof(*v));
		free(v);
	}
	sodium_memzero(b.p, b.len);
	buf_free(&b);
	cJSON_Delete(list);
	return rc;
}

/* A file named that is past the caps of fetches nobody offered
 * (fetch_may_start): counted, and said at most once a minute. */
static void
files_skip(struct room *room, const struct frame_msg *m, const struct attach *a)
{
	struct files *fs = room->files;
	uint64_t now = loop_now_ns();

	fs->skipped++;
	if (fs->skip_logged != 0 && now - fs->skip_logged < FETCH_SKIP_LOG_NS)
		return;
	fs->skip_logged = now;
	log_msg(LOG_INFO, "file %s of message %s is not fetched at once: %d "
	    "files that messages named wait for a member to offer them "
	    "(at most %d of one member's); it is fetched when asked", a->ref,
	    m->id, FETCH_UNOFFERED_ROOM, FETCH_UNOFFERED_MEMBER);
}

void
files_on_msg(struct room *room, const struct frame_msg *m)
{
	struct attach v[ATTACH_MAX];
	char err[PAPO_ERR_LEN];
	size_t n, tlen;

	n = attach_parse(m->body, m->body_len, v, ATTACH_MAX, &tlen);
	for (size_t k = 0; k < n; k++) {
		/* An empty file has one reference whatever its name: the
		 * latest message's name is kept, and each name it was shared
		 * by stays fetchable. */
		if ((v[k].size == 0 ? blob_meta_set(err, room->files->bs, &v[k]) :
		    blob_meta_save(err, room->files->bs, &v[k])) == -1) {
			log_msg(LOG_WARN, "file %s of message %s: %s", v[k].ref,
			    m->id, err);
			continue;
		}
		if (room->files->automax == 0 || v[k].size > room->files->automax ||
		    blob_has(room->files->bs, v[k].ref))
			continue;
		if (fetch_find(room, v[k].ref) == NULL &&
		    !fetch_may_start(room, m->from)) {
			files_skip(room, m, &v[k]);
			continue;
		}
		if (fetch_start(room, &v[k], m->from, 1, err) == -1)
			log_msg(LOG_WARN, "file %s: %s", v[k].ref, err);
	}
	sodium_memzero(v, sizeof(v));
}

int
files_text_check(struct room *room, struct node_msg *req)
{
	struct node_send_args *args = node_args_send(req);
	struct attach *v;
	size_t tlen, n;

	if (args->files != NULL || args->text == NULL)
		return 0;
	if ((v = malloc(sizeof(*v))) == NULL) {
		room_fail(room, req, 500, "out of memory");
		return -1;
	}
	n = attach_parse(args->text, strlen(args->text), v, 1, &tlen);
	sodium_memzero(v, sizeof(*v));
	free(v);
	if (n == 0)
		return 0;
	room_fail(room, req, 400, "the text ends with lines that name "
	    "files (\xf0\x9f\x93\x8e NAME (SIZE bytes, TYPE) papo-file:REF:KEY): "
	    "share a file with files (--file, attachments), not by writing "
	    "its line");
	return -1;
}

void
files_msg_json(struct room *room, const struct frame_msg *m, cJSON *o)
{
	struct attach v[ATTACH_MAX];
	size_t n, tlen;
	cJSON *arr;
	char *text;

	n = attach_parse(m->body, m->body_len, v, ATTACH_MAX, &tlen);
	if (n == 0) {
		cJSON_AddStringToObject(o, "text", m->body);
		return;
	}
	if ((text = malloc(tlen + 1)) != NULL) {
		memcpy(text, m->body, tlen);
		text[tlen] = '\0';
		cJSON_AddStringToObject(o, "text", text);
		free(text);
	}
	arr = cJSON_AddArrayToObject(o, "files");
	for (size_t k = 0; arr != NULL && k < n; k++) {
		cJSON *e = fetch_state_json(room, &v[k]);

		if (e != NULL)
			cJSON_AddItemToArray(arr, e);
	}
	sodium_memzero(v, sizeof(v));
}

void
files_request(struct room *room, struct node_msg *req)
{
	struct node_blob_args *args = node_args_blob(req);
	char err[PAPO_ERR_LEN];
	struct attach a;
	cJSON *o;

	if (args->ref == NULL || blob_meta_load(err, room->files->bs, args->ref,
	    &a) == -1) {
		room_fail(room, req, 404, "no message in this room names file %s",
		    args->ref != NULL ? args->ref : "(none)");
		return;
	}
	if (req->kind == NODE_FETCH && fetch_start(room, &a, NULL, 0, err) ==
	    -1) {
		room_fail(room, req, 413, "%s", err);
		sodium_memzero(&a, sizeof(a));
		return;
	}
	o = fetch_state_json(room, &a);
	sodium_memzero(&a, sizeof(a));
	if (o == NULL || (req->json = cJSON_PrintUnformatted(o)) == NULL) {
		cJSON_Delete(o);
		room_fail(room, req, 500, "out of memory");
		return;
	}
	cJSON_Delete(o);
	room->env.emit(room->env.arg, req);
}

/* The references the messages still in the log name, into *refs. */
static int
named_refs(struct room *room, char (**refs)[BLOB_REF_LEN + 1], size_t *nrefs)
{
	struct frame_msg page[64];
	struct store_query q = { .n = 64 };
	struct store_cursor cur;
	char at[PAPO_MSGID_LEN + 1] = "";
	struct attach v[ATTACH_MAX];
	size_t cap = 0, tlen;
	long got;

	*refs = NULL;
	*nrefs = 0;
	do {
		if ((got = store_history(room->env.store, &q, page, &cur)) == -1)
			return -1;
		for (long k = 0; k < got; k++) {
			size_t n = attach_parse(page[k].body, page[k].body_len,
			    v, ATTACH_MAX, &tlen);

			for (size_t j = 0; j < n; j++) {
				if (*nrefs == cap) {
					size_t c = cap ? cap * 2 : 64;
					void *p = realloc(*refs, c *
					    sizeof(**refs));

					if (p == NULL)
						goto fail;
					*refs = p;
					cap = c;
				}
				memcpy((*refs)[(*nrefs)++], v[j].ref,
				    BLOB_REF_LEN + 1);
			}
			frame_msg_clear(&page[k]);
		}
		memcpy(at, cur.id, sizeof(at));
		q.before = cur.ts;
		q.before_id = at;
	} while (cur.more);
	sodium_memzero(v, sizeof(v));
	return 0;
fail:
	sodium_memzero(v, sizeof(v));
	return -1;
}

void
files_retain(struct room *room)
{
	char (*refs)[BLOB_REF_LEN + 1] = NULL;
	const char **keep = NULL;
	char err[PAPO_ERR_LEN];
	size_t n = 0;
	long gone;

	if (named_refs(room, &refs, &n) == -1 ||
	    (keep = calloc(n + 1, sizeof(*keep))) == NULL) {
		log_msg(LOG_ERROR, "retention of files: cannot read the log");
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		keep[k] = refs[k];
	/* A fetch of a file no message names any more stops. */
	for (struct fetch *f = room->files->fetches, *next; f != NULL; f = next) {
		size_t k;

		next = f->next;
		for (k = 0; k < n && strcmp(keep[k], f->a.ref) != 0; k++)
			;
		if (k == n)
			fetch_forget(room, f);
	}
	if ((gone = blob_keep(err, room->files->bs, keep, n)) == -1)
		log_msg(LOG_ERROR, "retention of files: %s", err);
	else if (gone > 0)
		log_msg(LOG_INFO, "retention: %ld file%s no message names any "
		    "more removed", gone, gone == 1 ? "" : "s");
out:
	free(keep);
	free(refs);
}

void
files_status(const struct room *room, cJSON *o)
{
	cJSON *f = cJSON_AddObjectToObject(o, "files");
	cJSON *arr;

	if (f == NULL)
		return;
	cJSON_AddNumberToObject(f, "bytes", (double)blob_used(room->files->bs));
	cJSON_AddNumberToObject(f, "quota", (double)(room->env.set->files_quota ?
	    room->env.set->files_quota : FILES_QUOTA_DEFAULT));
	/* Every file (PAPO_FILES_AUTO=all) says so, not 1.8e19 bytes. */
	if (room->files->automax == UINT64_MAX)
		cJSON_AddStringToObject(f, "auto", "all");
	else
		cJSON_AddNumberToObject(f, "auto", (double)room->files->automax);
	cJSON_AddNumberToObject(f, "served", (double)room->files->served);
	cJSON_AddNumberToObject(f, "fetched", (double)room->files->fetched);
	cJSON_AddNumberToObject(f, "not_fetched", (double)room->files->skipped);
	cJSON_AddNumberToObject(f, "dropped", (double)room->files->dropped);
	if ((arr = cJSON_AddArrayToObject(f, "fetching")) == NULL)
		return;
	for (struct fetch *x = room->files->fetches; x != NULL; x = x->next) {
		cJSON *e = fetch_state_json((struct room *)room, &x->a);

		if (e != NULL)
			cJSON_AddItemToArray(arr, e);
	}
}

void
files_on_hello(struct room *room, const struct hello_in *in)
{
	fetch_hello(room, in->m);
}

void
files_bulk(struct room *room, struct link *l, const uint8_t *p, size_t n)
{
	fetch_bulk(room, l, p, n);
}

void
files_bulk_room(struct room *room, struct link *l)
{
	(void)l;
	fetch_pump_serve(room);
}

void
files_link_closed(struct room *room, struct link *l)
{
	fetch_link_closed(room, l);
}
