/*
 * blobs.c: the node's shared files outside its loop (blobs.h): the
 * worker thread that adds a file (NODE_BLOB_ADD: reading and encrypting
 * a whole file takes seconds for a large one, which the node loop must
 * not wait on), and reading a file that is here from any thread
 * (node_blob_open, node.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "node/blobs.h"
#include "node/room/files.h"
#include "node/store/blob.h"
#include "node/store/home.h"
#include "node/wire/attach.h"

#define HEAD_LEN 512           /* bytes looked at to guess a type */

struct job {
	struct chan_link link;
	struct node_msg *m;     /* NULL: the worker stops */
	char *dir;              /* the room's blob folder */
	uint64_t quota;
};

struct blobwork {
	pthread_t thread;
	int started;
	struct chan *in;
	struct chan *out;       /* the node's: answers go straight there */
};

static void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->dir);
	free(j);
}

static void
answer(struct blobwork *w, struct node_msg *m, int code, const char *err)
{
	m->code = code;
	if (code != 0)
		snprintf(m->err, sizeof(m->err), "%s", err);
	chan_push(w->out, &m->link);
}

/* The file's description and the answer's JSON. */
static char *
added_json(const struct attach *a)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "ref", a->ref);
	cJSON_AddStringToObject(o, "name", a->name);
	cJSON_AddNumberToObject(o, "size", (double)a->size);
	cJSON_AddStringToObject(o, "type", a->type);
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* NODE_BLOB_ADD, in the worker. */
static void
work_add(struct blobwork *w, struct job *j)
{
	struct node_msg *m = j->m;
	struct node_blob_add_args *args = node_args_blob_add(m);
	struct blob_store *bs = NULL;
	char err[PAPO_ERR_LEN];
	uint8_t head[HEAD_LEN];
	struct attach a;
	struct stat st;
	long hlen;
	int fd = -1, code = 0;

	memset(&a, 0, sizeof(a));
	/* O_NONBLOCK: a FIFO put where a file was must not hold the
	 * worker (it is refused below as not a regular file). */
	if (args->path == NULL || (fd = open(args->path, O_RDONLY | O_CLOEXEC |
	    O_NONBLOCK)) == -1) {
		err_set(err, "cannot open %s: %s", args->path != NULL ?
		    args->path : "(none)", args->path != NULL ?
		    strerror(errno) : "no path given");
		code = 400;
		goto out;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		err_set(err, "%s is not a regular file", args->path);
		code = 400;
		goto out;
	}
	if ((uint64_t)st.st_size > BLOB_SIZE_MAX) {
		err_set(err, "%s is %llu bytes; a shared file may have at most "
		    "%llu (4 GiB)", args->path, (unsigned long long)st.st_size,
		    (unsigned long long)BLOB_SIZE_MAX);
		code = 413;
		goto out;
	}
	attach_name(a.name, args->name != NULL && args->name[0] != '\0' ?
	    args->name : args->path);
	hlen = fs_pread(fd, head, sizeof(head), 0);
	if (args->type != NULL && args->type[0] != '\0')
		snprintf(a.type, sizeof(a.type), "%s", args->type);
	else
		attach_type(a.type, a.name, head, hlen > 0 ? (size_t)hlen : 0);
	if ((bs = blob_attach(err, j->dir, j->quota)) == NULL) {
		code = 500;
		goto out;
	}
	errno = 0;
	blob_key_new(a.key);
	if (blob_add(err, bs, fd, a.key, a.ref, &a.size) == -1) {
		code = errno == ENOSPC || errno == EDQUOT ? 507 :
		    strstr(err, "limit") != NULL ? 413 :
		    strstr(err, "chang") != NULL ? 409 : 500;
		goto out;
	}
	if (attach_check(err, &a) == -1) {
		code = 400;            /* a media type the caller gave */
		blob_remove(err, bs, a.ref);
		attach_check(err, &a);
		goto out;
	}
	/* Added here: described as added (an empty file's reference may
	 * name another, earlier one). */
	if (blob_meta_set(err, bs, &a) == -1) {
		code = errno == ENOSPC ? 507 : 500;
		goto out;
	}
	if ((m->json = added_json(&a)) == NULL) {
		code = 500;
		err_set(err, "out of memory");
	}
out:
	if (fd != -1)
		close(fd);
	if (args->spool && args->path != NULL)
		unlink(args->path);        /* a spool: ours once handed over */
	blob_close(bs);
	sodium_memzero(&a, sizeof(a));
	if (code != 0)
		log_msg(LOG_INFO, "sharing a file: %s", err);
	answer(w, m, code, err);
}

static void *
work_main(void *arg)
{
	struct blobwork *w = arg;
	struct pollfd p = { .fd = chan_fd(w->in), .events = POLLIN };

	for (;;) {
		struct chan_link *l;

		while ((l = chan_pop(w->in)) != NULL) {
			struct job *j = chan_item(l, struct job, link);

			if (j->m == NULL) {
				job_free(j);
				return NULL;
			}
			work_add(w, j);
			job_free(j);
		}
		if (poll(&p, 1, -1) == -1 && errno != EINTR)
			return NULL;
	}
}

struct blobwork *
blobwork_new(struct chan *out)
{
	struct blobwork *w = calloc(1, sizeof(*w));

	if (w == NULL || (w->in = chan_new()) == NULL) {
		free(w);
		return NULL;
	}
	w->out = out;
	return w;
}

static void
job_drop(struct chan_link *l)
{
	struct job *j = chan_item(l, struct job, link);

	node_msg_free(j->m);
	job_free(j);
}

void
blobwork_free(struct blobwork *w)
{
	struct job *stop;

	if (w == NULL)
		return;
	if (w->started && (stop = calloc(1, sizeof(*stop))) != NULL) {
		chan_push(w->in, &stop->link);
		pthread_join(w->thread, NULL);
	} else if (w->started) {
		pthread_cancel(w->thread);
		pthread_join(w->thread, NULL);
	}
	chan_free(w->in, job_drop);
	free(w);
}

int
blobwork_add(struct blobwork *w, struct node_msg *m, const char *room_dir,
    uint64_t quota)
{
	struct job *j = calloc(1, sizeof(*j));
	char dir[4096];

	if (j == NULL || fs_path(dir, sizeof(dir), room_dir, FILES_DIR) == -1 ||
	    (j->dir = strdup(dir)) == NULL) {
		free(j);
		return -1;
	}
	if (!w->started) {
		if ((errno = pthread_create(&w->thread, NULL, work_main, w)) !=
		    0) {
			job_free(j);
			return -1;
		}
		w->started = 1;
	}
	j->m = m;
	j->quota = quota ? quota : FILES_QUOTA_DEFAULT;
	chan_push(w->in, &j->link);
	return 0;
}

/* Reading, in any thread. */

struct node_blob {
	struct blob_store *bs;
	struct attach a;
};

struct node_blob *
blobs_open(char err[PAPO_ERR_LEN], int *code, const char *home,
    const char *room, const char *ref)
{
	char rdir[4096], dir[4096];
	struct node_blob *b = NULL;

	*code = 404;
	if (room == NULL || room[0] == '\0') {
		err_set(err, "no room named for file %s", ref ? ref : "");
		return NULL;
	}
	if (ref == NULL ||
	    home_dir_find(err, home, room, rdir, sizeof(rdir)) == -1)
		return NULL;
	*code = 500;
	if (fs_path(dir, sizeof(dir), rdir, FILES_DIR) == -1) {
		err_set(err, "the room's folder name is too long");
		return NULL;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		err_set(err, "out of memory");
		return NULL;
	}
	if ((b->bs = blob_attach(err, dir, 0)) == NULL)
		goto fail;
	if (blob_meta_load(err, b->bs, ref, &b->a) == -1 ||
	    !blob_has(b->bs, ref)) {
		if (b->a.ref[0] != '\0')
			err_set(err, "file %s is not here (yet)", ref);
		*code = 404;
		goto fail;
	}
	return b;
fail:
	blobs_close(b);
	return NULL;
}

uint64_t
blobs_size(const struct node_blob *b)
{
	return b->a.size;
}

const char *
blobs_name(const struct node_blob *b)
{
	return b->a.name;
}

const char *
blobs_type(const struct node_blob *b)
{
	return b->a.type;
}

int
blobs_read(char err[PAPO_ERR_LEN], struct node_blob *b, uint64_t off,
    void *out, size_t len)
{
	if (off > b->a.size || len > b->a.size - off) {
		err_set(err, "the range passes the end of the file");
		return -1;
	}
	return blob_read(err, b->bs, b->a.ref, b->a.key, off, out, len);
}

void
blobs_close(struct node_blob *b)
{
	if (b == NULL)
		return;
	blob_close(b->bs);
	sodium_memzero(&b->a, sizeof(b->a));
	free(b);
}
