/*
 * offline.c: a room's history read from the disk with no node running
 * (offline.h; papo history with the daemon stopped): its log
 * and search index, into the JSON /api/history and /api/search would
 * answer, so that papo history prints it as it prints theirs.  The
 * caller holds serve.lock.  Main thread of a short-lived command.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/fs.h"
#include "node/offline.h"
#include "node/store/index.h"
#include "node/store/home.h"
#include "node/store/store.h"
#include "node/wire/attach.h"
#include "node/wire/crypto.h"
#include "node/wire/private.h"

/* An offline read: the room's folder and its open log; the member whose
 * private messages it opens (NULL: a home with no identity yet). */
struct offline {
	char dir[4096];
	struct store *s;
	struct identity *me;
	uint8_t room_id[16];
};

/* The default room's id as rooms.json keeps it, into id (empty when
 * none is set). */
static void
offline_default(const char *home, char id[PAPO_ROOMID_LEN + 1])
{
	char path[4096], err[PAPO_ERR_LEN], *text = NULL;
	size_t len = 0;
	int exists = 0;
	cJSON *o;
	const char *d;

	id[0] = '\0';
	if (fs_path(path, sizeof(path), home, "rooms.json") == -1 ||
	    fs_read(err, path, 4096, &text, &len, &exists) == -1)
		return;
	if ((o = cJSON_ParseWithLength(text, len)) != NULL &&
	    (d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o,
	    "default"))) != NULL)
		snprintf(id, PAPO_ROOMID_LEN + 1, "%s", d);
	cJSON_Delete(o);
	free(text);
}

/* The folder of home's only room into dir; -1 with err when it holds
 * none or several (with no default, --room must say which). */
static int
offline_only(char err[PAPO_ERR_LEN], const char *home, char *dir,
    size_t len)
{
	char **dirs;
	size_t n;
	int rc = -1;

	if (home_dirs(err, home, &dirs, &n) == -1)
		return -1;
	if (n == 1) {
		snprintf(dir, len, "%s", dirs[0]);
		rc = 0;
	} else
		snprintf(err, PAPO_ERR_LEN, "%s %s: give --room ROOM", home,
		    n == 0 ? "holds no room yet" : "is in several rooms and "
		    "none is the default");
	home_dirs_free(dirs, n);
	return rc;
}

/* Opens the log of the room sel names (else the default room, else
 * the home's only room): 0, or -1 with err. */
/* home's identity, when it has one: a read never makes one. */
static struct identity *
offline_me(const char *home)
{
	char path[4096], err[PAPO_ERR_LEN];

	if (fs_path(path, sizeof(path), home, "identity") == -1 ||
	    access(path, F_OK) == -1)
		return NULL;
	return sec_identity_load(err, home);
}

static int
offline_open(char err[PAPO_ERR_LEN], const char *home, const char *sel,
    struct offline *f)
{
	char dflt[PAPO_ROOMID_LEN + 1];
	struct room_file r;
	struct room_keys keys;

	f->s = NULL;
	f->me = NULL;
	if (sel == NULL) {
		offline_default(home, dflt);
		if (dflt[0] != '\0')
			sel = dflt;
	}
	if (sel != NULL) {
		if (home_dir_find(err, home, sel, f->dir, sizeof(f->dir)) == -1)
			return -1;
	} else if (offline_only(err, home, f->dir, sizeof(f->dir)) == -1)
		return -1;
	if (roomfile_load(err, f->dir, &r) == -1)
		return -1;
	sec_room_keys(r.secret, &keys);
	roomfile_wipe(&r);
	memcpy(f->room_id, keys.id, sizeof(f->room_id));
	f->me = offline_me(home);
	f->s = store_open(err, f->dir, &keys, f->me);
	sodium_memzero(&keys, sizeof(keys));
	if (f->s != NULL)
		return 0;
	sec_identity_free(f->me);
	f->me = NULL;
	return -1;
}

static void
offline_close(struct offline *f)
{
	store_close(f->s);
	sec_identity_free(f->me);
}

/* ans as JSON text (malloc'd), freed; NULL with err when out of
 * memory. */
static char *
offline_text(char err[PAPO_ERR_LEN], cJSON *ans)
{
	char *t = ans != NULL ? cJSON_PrintUnformatted(ans) : NULL;

	if (t == NULL)
		snprintf(err, PAPO_ERR_LEN, "out of memory");
	cJSON_Delete(ans);
	return t;
}

/* Message m as the daemon's history gives it, as far as the disk says:
 * the names are those the messages bear. */
static cJSON *
offline_seen_json(const struct offline *f, const struct frame_msg *m,
    int private)
{
	struct attach a[ATTACH_MAX];
	char id[PAPO_ID_LEN + 1], path[4096];
	size_t n, tl;
	cJSON *o = cJSON_CreateObject(), *files;

	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddStringToObject(o, "from", m->name);
	sec_id_format(m->from, id);
	cJSON_AddStringToObject(o, "from_id", id);
	if (m->has_to) {
		sec_id_format(m->to, id);
		cJSON_AddStringToObject(o, "to_id", id);
		cJSON_AddStringToObject(o, "to", id);
	}
	if (m->has_reply_to)
		cJSON_AddStringToObject(o, "reply_to", m->reply_to);
	cJSON_AddNumberToObject(o, "ts", (double)m->ts);
	cJSON_AddBoolToObject(o, "private", private);
	n = attach_parse(m->body, m->body_len, a, ATTACH_MAX, &tl);
	{
		char *text = strndup(m->body, tl);

		cJSON_AddStringToObject(o, "text", text != NULL ? text : "");
		free(text);
	}
	if (n == 0)
		return o;
	files = cJSON_AddArrayToObject(o, "files");
	for (size_t i = 0; i < n; i++) {
		cJSON *j = cJSON_CreateObject();

		cJSON_AddStringToObject(j, "ref", a[i].ref);
		cJSON_AddStringToObject(j, "name", a[i].name);
		cJSON_AddNumberToObject(j, "size", (double)a[i].size);
		cJSON_AddStringToObject(j, "type", a[i].type);
		snprintf(path, sizeof(path), "%s/blobs/%s", f->dir, a[i].ref);
		cJSON_AddStringToObject(j, "state", access(path, F_OK) == 0 ?
		    "here" : "named");
		cJSON_AddItemToArray(files, j);
	}
	sodium_memzero(a, sizeof(a));
	return o;
}

/* What this member sees of m (private.h, priv_view), as JSON; NULL: a
 * private message of two others, shown to nobody here. */
static cJSON *
offline_msg_json(const struct offline *f, const struct frame_msg *m)
{
	struct frame_msg view;
	struct buf inner;
	cJSON *o = NULL;

	switch (priv_view(f->me, f->room_id, m, &view, &inner)) {
	case PRIV_NOT_PRIVATE:
		o = offline_seen_json(f, m, 0);
		break;
	case PRIV_OK:
		o = offline_seen_json(f, &view, 1);
		break;
	default:
		break;
	}
	buf_free(&inner);
	return o;
}

char *
node_history_offline(char err[PAPO_ERR_LEN], const char *home,
    const char *room, size_t n)
{
	struct offline f;
	struct store_query q = { .n = n };
	struct store_cursor next;
	struct frame_msg *v;
	cJSON *ans = NULL, *arr;
	long got;

	if (offline_open(err, home, room, &f) == -1)
		return NULL;
	if ((v = calloc(n, sizeof(*v))) == NULL ||
	    (got = store_history(f.s, &q, v, &next)) < 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot read %s/log.jsonl", f.dir);
		goto out;
	}
	ans = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(ans, "messages");
	for (long i = 0; i < got; i++) {
		/* NULL (not ours to see) adds nothing. */
		cJSON_AddItemToArray(arr, offline_msg_json(&f, &v[i]));
		frame_msg_clear(&v[i]);
	}
	if (next.more) {
		cJSON *e = cJSON_AddObjectToObject(ans, "earlier");

		cJSON_AddNumberToObject(e, "before", (double)next.ts);
		cJSON_AddStringToObject(e, "before_id", next.id);
	}
out:
	free(v);
	offline_close(&f);
	return ans != NULL ? offline_text(err, ans) : NULL;
}

char *
node_search_offline(char err[PAPO_ERR_LEN], const char *home,
    const struct node_offline_query *oq)
{
	struct offline f;
	struct ix_query q;
	struct ix_hit *h = NULL;
	struct ix *x;
	char path[4096];
	cJSON *ans = NULL, *arr;
	int more = 0, ranked = 0, code = 0;
	long got = -1;

	memset(&q, 0, sizeof(q));
	q.text = oq->text;
	q.from_name = oq->from;
	q.thread = oq->thread;
	q.files = oq->files;
	q.after = oq->after;
	q.before = oq->before;
	q.newest = 1;
	q.limit = oq->n;
	q.ms = IX_TIME_MS;
	if (offline_open(err, home, oq->room, &f) == -1)
		return NULL;
	if (oq->before_id != NULL) {
		struct frame_msg m;

		/* --before ID: the hint's message, its time from the log. */
		if (store_get(f.s, oq->before_id, &m) == -1) {
			snprintf(err, PAPO_ERR_LEN, "no message %.16s here to page "
			    "back from", oq->before_id);
			goto out;
		}
		q.before = m.ts;
		q.before_id = oq->before_id;
		frame_msg_clear(&m);
	}
	if (fs_path(path, sizeof(path), f.dir, "search.db") == -1 ||
	    (x = ix_open_ro(err, path)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "the search index cannot be read "
		    "with the daemon stopped (%s/search.db): papo serve "
		    "rebuilds it", f.dir);
		goto out;
	}
	if ((h = calloc(oq->n, sizeof(*h))) != NULL)
		got = ix_search(err, x, &q, h, &more, &ranked, &code);
	else
		snprintf(err, PAPO_ERR_LEN, "out of memory");
	ix_close(x);
	if (got < 0)
		goto out;
	ans = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(ans, "messages");
	/* Newest first from the index; given oldest first. */
	for (long i = got - 1; i >= 0; i--) {
		struct frame_msg m;
		cJSON *j, *marks;

		if (store_get(f.s, h[i].id, &m) == -1)
			continue;
		j = offline_msg_json(&f, &m);
		frame_msg_clear(&m);
		if (j == NULL)
			continue;
		if (h[i].excerpt != NULL)
			cJSON_AddStringToObject(j, "excerpt", h[i].excerpt);
		else
			cJSON_AddNullToObject(j, "excerpt");
		marks = cJSON_AddArrayToObject(j, "marks");
		for (size_t k = 0; k < h[i].nmarks; k++) {
			int pair[2] = { (int)h[i].marks[k][0],
			    (int)h[i].marks[k][1] };

			cJSON_AddItemToArray(marks, cJSON_CreateIntArray(pair, 2));
		}
		cJSON_AddItemToArray(arr, j);
	}
	if (more && got > 0) {
		cJSON *e = cJSON_AddObjectToObject(ans, "earlier");

		cJSON_AddNumberToObject(e, "before", (double)h[got - 1].ts);
		cJSON_AddStringToObject(e, "before_id", h[got - 1].id);
	}
out:
	if (h != NULL && got > 0)
		ix_hits_free(h, (size_t)got);
	free(h);
	offline_close(&f);
	return ans != NULL ? offline_text(err, ans) : NULL;
}
