/*
 * fs.h: the few file operations every state file in $PAPO_HOME needs:
 * a private home directory, whole-file reads with a size limit, and
 * atomic replacement (temporary file, fsync, rename, fsync of the
 * directory) so that a crash leaves the old or the new file, never half.
 */
#ifndef PAPO_FS_H
#define PAPO_FS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* Creates home (mode 0700) if missing. */
int fs_home(char err[PAPO_ERR_LEN], const char *home);

/* Joins home and name into out (size n); -1 when it does not fit. */
int fs_path(char *out, size_t n, const char *home, const char *name);

/* Reads a whole file of at most max bytes into a malloc'd, NUL-terminated
 * buffer.  Returns 0, or -1 with err set; *exists is 0 when the file is
 * absent (err is then set too). */
int fs_read(char err[PAPO_ERR_LEN], const char *path, size_t max, char **data,
    size_t *len, int *exists);

/*
 * Replaces path atomically with len bytes of data, mode 0600: a private
 * temporary file beside it, fsync'd, renamed over it, and the directory
 * fsync'd, so a reader, or a crash, sees the old file or the whole new
 * one (every state file in $PAPO_HOME is written so).  0, or -1 with err
 * naming the file.
 */
int fs_write(char err[PAPO_ERR_LEN], const char *path, const void *data,
    size_t len);

/*
 * A whole number from a state file, read as strictly as the wire reads
 * one: 0 with *out set when v is a cJSON number that is finite, has no
 * fraction, and lies in [min, max] (both within +-2^53, where a double
 * holds every integer); -1 otherwise (v NULL or not a number, 1e999, a
 * value out of range, 1.5), and *out is left alone.  Every loader of a
 * file in $PAPO_HOME takes its numbers through it.
 */
struct cJSON;
int fs_json_int(const struct cJSON *v, int64_t min, int64_t max,
    int64_t *out);
#define FS_JSON_INT_MAX 9007199254740992LL     /* 2^53 */

/* pwrite of all n bytes at off, through short writes and EINTR: 0, or
 * -1 with errno. */
int fs_pwrite(int fd, const void *p, size_t n, uint64_t off);
/* pread of n bytes at off, through short reads and EINTR: the count,
 * short only at the end of the file, or -1 with errno. */
long fs_pread(int fd, void *p, size_t n, uint64_t off);

/* fsyncs the directory holding path, so a rename or create in it lasts. */
int fs_sync_dir(const char *path);

#endif
