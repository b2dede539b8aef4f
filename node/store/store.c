/*
 * store.c: the member's durable history, $PAPO_HOME/log.jsonl, and its
 * outbox, $PAPO_HOME/outbox.jsonl (docs/PROTOCOL.md, "Files"): the store
 * opened (both files replayed into memory) and closed.  It owns both
 * files' descriptors, the in-memory index of the log (one compact entry
 * per message and a hash set over their ids) and the outbox ids.  The
 * node thread runs it; nothing here is shared with another thread.
 *
 * Its files call one way: store.c > store_compact.c > store_log.c >
 * store_read.c > store_outbox.c > store_index.c > store_file.c; what
 * they share is in store_int.h.
 *
 * It must never acknowledge a line that is not on disk: every append is
 * one write() followed by fdatasync() before the call returns, and a
 * failed append is cut back off so the file is as it was.  It must never
 * read a whole log into memory: replay reads the file once, in chunks,
 * and later reads fetch single lines with pread().  It does not check
 * signatures; the caller verifies a frame before it stores it.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "node/store/store_int.h"

/* home/name, malloc'd; NULL when it does not fit a path or without
 * memory. */
static char *
store_path(const char *home, const char *name)
{
	char path[PATH_MAX];

	return fs_path(path, sizeof(path), home, name) == -1 ? NULL :
	    strdup(path);
}

struct store *
store_open(char err[PAPO_ERR_LEN], const char *home,
    const struct room_keys *k, const struct identity *me)
{
	struct store *s = NULL;
	uint64_t end;

	err[0] = '\0';
	if (sec_init() == -1) {
		err_set(err, "cannot initialise libsodium");
		goto fail;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		err_set(err, "cannot open the store: %s", strerror(errno));
		goto fail;
	}
	s->log_fd = s->ob_fd = -1;
	s->k = *k;
	s->me = me;
	if ((s->log_path = store_path(home, STORE_LOG)) == NULL ||
	    (s->ob_path = store_path(home, STORE_OUTBOX)) == NULL) {
		err_set(err, "path too long, or out of memory: %s", home);
		goto fail;
	}
	if (store_idx_rehash(s, STORE_TAB_BITS0) == -1) {
		err_set(err, "cannot open the store: %s", strerror(errno));
		goto fail;
	}
	if ((s->log_fd = store_open_file(err, s->log_path)) == -1 ||
	    (s->ob_fd = store_open_file(err, s->ob_path)) == -1)
		goto fail;
	/* A file just created lasts only once its directory entry does. */
	if (fs_sync_dir(s->log_path) == -1) {
		err_set(err, "cannot sync the directory of %s: %s",
		    s->log_path, strerror(errno));
		goto fail;
	}
	if (store_replay(err, s, s->log_fd, s->log_path, store_log_line,
	    &s->log_size) == -1 ||
	    store_replay(err, s, s->ob_fd, s->ob_path, store_ob_line, &end) == -1)
		goto fail;
	s->live = 1;
	store_ix_open(s);
	return s;
fail:
	store_close(s);
	return NULL;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (store_commit(s) == -1)
		log_msg(LOG_ERROR, "%s: the last lines were lost at close",
		    s->log_path);
	if (store_outbox_tidy(s) == -1)
		log_msg(LOG_WARN, "%s: delivered ids stay in the outbox, sent "
		    "once more at the next start", s->ob_path);
	store_ix_stop(s);
	if (s->log_fd != -1)
		close(s->log_fd);
	if (s->ob_fd != -1)
		close(s->ob_fd);
	free(s->ent);
	free(s->ackv);
	free(s->ord);
	free(s->tab);
	free(s->ob);
	free(s->log_path);
	free(s->ob_path);
	sodium_memzero(&s->k, sizeof(s->k));
	free(s);
}
