/*
 * store_outbox.c: outbox.jsonl (store.h), the ids of this member's
 * messages not yet acknowledged by everyone: one line per id, appended
 * (made durable by the store's group commit), replayed at open,
 * rewritten whole (atomically) when one is taken out, or, for ids
 * delivered, once enough of them are out.  Node thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "node/store/store_int.h"

static int
ob_find(const struct store *s, const char *id)
{
	for (size_t i = 0; i < s->nob; i++)
		if (strcmp(s->ob[i], id) == 0)
			return (int)i;
	return -1;
}

/* Makes room for one more outbox id, so that adding it after its line
 * is on disk cannot fail. */
static int
ob_reserve(struct store *s)
{
	if (s->nob == s->capob) {
		size_t cap = s->capob ? s->capob * 2 : 16;
		char (*ob)[PAPO_MSGID_LEN + 1];

		if ((ob = realloc(s->ob, cap * sizeof(*ob))) == NULL)
			return -1;
		s->ob = ob;
		s->capob = cap;
	}
	return 0;
}

static void
ob_push(struct store *s, const char *id)
{
	memcpy(s->ob[s->nob], id, PAPO_MSGID_LEN + 1);
	s->nob++;
}

int
store_ob_line(struct store *s, const char *line, size_t len, uint64_t off,
    int last, const char **why)
{
	size_t pl = sizeof(OB_PREFIX) - 1;
	char id[PAPO_MSGID_LEN + 1];

	(void)off;
	(void)last;
	if (len != OB_LINE_LEN || memcmp(line, OB_PREFIX, pl) != 0 ||
	    memcmp(line + pl + PAPO_MSGID_LEN, OB_SUFFIX,
	    sizeof(OB_SUFFIX) - 1) != 0) {
		*why = "not an outbox entry";
		return 1;
	}
	memcpy(id, line + pl, PAPO_MSGID_LEN);
	id[PAPO_MSGID_LEN] = '\0';
	if (!sec_msgid_valid(id, NULL)) {
		*why = "malformed message id";
		return 1;
	}
	if (ob_find(s, id) != -1)
		return 0;
	if (ob_reserve(s) == -1)
		return -1;
	ob_push(s, id);
	return 0;
}

int
store_outbox_add(struct store *s, const char *id)
{
	char line[OB_LINE_LEN + 2];
	struct stat st;
	int rc = -1;

	if (!sec_msgid_valid(id, NULL)) {
		errno = EINVAL;
		goto out;
	}
	if (ob_find(s, id) != -1) {
		rc = 0;
		goto out;
	}
	/* A failed reopen after a rewrite left no descriptor; try again. */
	if (s->ob_fd == -1) {
		char err[PAPO_ERR_LEN];

		if ((s->ob_fd = store_open_file(err, s->ob_path)) == -1) {
			log_msg(LOG_ERROR, "%s", err);
			goto out;
		}
	}
	if (fstat(s->ob_fd, &st) == -1)
		goto out;
	snprintf(line, sizeof(line), OB_PREFIX "%s" OB_SUFFIX "\n", id);
	if (ob_reserve(s) == -1)
		goto out;
	if (store_test_fail("outbox") ||
	    store_write_all(s->ob_fd, line, OB_LINE_LEN + 1) == -1) {
		int saved = errno;

		if (ftruncate(s->ob_fd, st.st_size) == -1)
			log_msg(LOG_ERROR, "cannot undo a failed append: %s",
			    strerror(errno));
		errno = saved;
		goto out;
	}
	s->ob_unsynced = 1;
	ob_push(s, id);
	rc = 0;
out:
	return rc;
}

/* Rewrites the file with the ids in memory but the i-th (-1: all of
 * them), durably; then takes the i-th out of memory.  0 or -1. */
static int
ob_rewrite(struct store *s, int i)
{
	char err[PAPO_ERR_LEN];
	char *text = NULL;
	size_t len = 0;
	int rc = -1;

	if ((text = malloc(s->nob * (OB_LINE_LEN + 1) + 1)) == NULL)
		goto out;
	for (size_t j = 0; j < s->nob; j++) {
		if (j == (size_t)i)
			continue;
		len += (size_t)snprintf(text + len, OB_LINE_LEN + 2,
		    OB_PREFIX "%s" OB_SUFFIX "\n", s->ob[j]);
	}
	if (fs_write(err, s->ob_path, text, len) == -1) {
		log_msg(LOG_ERROR, "%s", err);
		goto out;
	}
	if (i >= 0) {
		memmove(s->ob[i], s->ob[i + 1],
		    (s->nob - (size_t)i - 1) * sizeof(s->ob[0]));
		s->nob--;
	}
	s->ob_stale = 0;
	s->ob_unsynced = 0;
	rc = 0;
	/* The old descriptor points at the replaced file.  The removal is
	 * durable already, so a failed reopen is only logged; the next add
	 * opens the file again. */
	if (s->ob_fd != -1)
		close(s->ob_fd);
	if ((s->ob_fd = store_open_file(err, s->ob_path)) == -1)
		log_msg(LOG_ERROR, "%s", err);
out:
	free(text);
	return rc;
}

int
store_outbox_del(struct store *s, const char *id)
{
	int i = ob_find(s, id);

	return i == -1 ? 0 : ob_rewrite(s, i);
}

/*
 * A delivered message leaves the outbox in memory at once, and the file
 * is rewritten without it (and the others delivered since) once as many
 * are out as are left, 16 at least: a rewrite costs a file's creation
 * and two syncs, and one left in the file only means it is sent once
 * more after a crash (the others drop it as a copy and ack it).
 */
int
store_outbox_done(struct store *s, const char *id)
{
	int i = ob_find(s, id);

	if (i == -1)
		return 0;
	memmove(s->ob[i], s->ob[i + 1],
	    (s->nob - (size_t)i - 1) * sizeof(s->ob[0]));
	s->nob--;
	if (++s->ob_stale < 16 || s->ob_stale < s->nob)
		return 0;
	return ob_rewrite(s, -1);
}

int
store_outbox_tidy(struct store *s)
{
	return s->ob_stale > 0 ? ob_rewrite(s, -1) : 0;
}

int
store_outbox_has(const struct store *s, const char *id)
{
	return ob_find(s, id) != -1;
}

const char *
store_outbox_at(const struct store *s, size_t i)
{
	return i < s->nob ? s->ob[i] : NULL;
}
