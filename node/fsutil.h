/*
 * fsutil.h: the few file operations every state file in $PAPO_HOME needs:
 * a private home directory, whole-file reads with a size limit, and
 * atomic replacement (temporary file, fsync, rename, fsync of the
 * directory) so that a crash leaves the old or the new file, never half.
 */
#ifndef PAPO_FSUTIL_H
#define PAPO_FSUTIL_H

#include <stddef.h>

#include "node/node.h"

/* Creates home (mode 0700) if missing. */
int fs_home(char err[PAPO_ERR_LEN], const char *home);

/* Joins home and name into out (size n); -1 when it does not fit. */
int fs_path(char *out, size_t n, const char *home, const char *name);

/* Reads a whole file of at most max bytes into a malloc'd, NUL-terminated
 * buffer.  Returns 0, or -1 with err set; *exists is 0 when the file is
 * absent (err is then set too). */
int fs_read(char err[PAPO_ERR_LEN], const char *path, size_t max, char **data,
    size_t *len, int *exists);

/* fs_write, which server/ uses too, is declared in node.h. */

/* fsyncs the directory holding path, so a rename or create in it lasts. */
int fs_sync_dir(const char *path);

#endif
