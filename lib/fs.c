/*
 * fs.c: private home directory, bounded whole-file reads and atomic
 * file replacement for the state files in $PAPO_HOME.  Any thread; every
 * error message names the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/fs.h"

int
fs_home(char err[PAPO_ERR_LEN], const char *home)
{
	struct stat st;

	if (mkdir(home, 0700) == -1 && errno != EEXIST) {
		snprintf(err, PAPO_ERR_LEN, "cannot create %s: %s", home,
		    strerror(errno));
		return -1;
	}
	if (stat(home, &st) == -1 || !S_ISDIR(st.st_mode)) {
		snprintf(err, PAPO_ERR_LEN, "%s is not a directory", home);
		return -1;
	}
	return 0;
}

int
fs_path(char *out, size_t n, const char *home, const char *name)
{
	int r = snprintf(out, n, "%s/%s", home, name);

	return r < 0 || (size_t)r >= n ? -1 : 0;
}

int
fs_read(char err[PAPO_ERR_LEN], const char *path, size_t max, char **data,
    size_t *len, int *exists)
{
	struct stat st;
	char *p = NULL;
	size_t off = 0;
	int fd = -1, rc = -1;

	*data = NULL;
	*len = 0;
	*exists = 1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		*exists = errno != ENOENT;
		snprintf(err, PAPO_ERR_LEN, "cannot open %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) == -1 || (size_t)st.st_size > max) {
		snprintf(err, PAPO_ERR_LEN, "%s is larger than %zu bytes", path,
		    max);
		goto out;
	}
	if ((p = malloc((size_t)st.st_size + 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory reading %s", path);
		goto out;
	}
	while (off < (size_t)st.st_size) {
		ssize_t r = read(fd, p + off, (size_t)st.st_size - off);

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", path,
			    r == 0 ? "file shrank" : strerror(errno));
			goto out;
		}
		off += (size_t)r;
	}
	p[off] = '\0';
	*data = p;
	*len = off;
	p = NULL;
	rc = 0;
out:
	free(p);
	if (fd != -1)
		close(fd);
	return rc;
}

int
fs_sync_dir(const char *path)
{
	char copy[4096];
	int fd, rc;

	if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy))
		return -1;
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
fs_write(char err[PAPO_ERR_LEN], const char *path, const void *data,
    size_t len)
{
	char tmp[4096];
	const char *p = data;
	int fd = -1, rc = -1;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", path);
		return -1;
	}
	/* fchmod: a temporary file a crash left has the mode it had. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1 || fchmod(fd, 0600) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot create %s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1) {
			snprintf(err, PAPO_ERR_LEN, "cannot write %s: %s", tmp,
			    strerror(errno));
			goto out;
		}
		p += w;
		len -= (size_t)w;
	}
	rc = fsync(fd);
	if (close(fd) == -1)
		rc = -1;
	fd = -1;
	if (rc == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot write %s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	rc = -1;
	if (rename(tmp, path) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot replace %s: %s", path,
		    strerror(errno));
		goto out;
	}
	fs_sync_dir(path);
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	if (rc == -1)
		unlink(tmp);
	return rc;
}

int
fs_json_int(const struct cJSON *v, int64_t min, int64_t max, int64_t *out)
{
	double d;
	int64_t i;

	if (!cJSON_IsNumber(v))
		return -1;
	d = v->valuedouble;
	/* The range first (NaN fails it too): a double outside an integer
	 * type's range converted to it is undefined behaviour. */
	if (!(d >= -(double)FS_JSON_INT_MAX && d <= (double)FS_JSON_INT_MAX))
		return -1;
	i = (int64_t)d;
	if ((double)i != d || i < min || i > max)
		return -1;
	*out = i;
	return 0;
}

int
fs_pwrite(int fd, const void *p, size_t n, uint64_t off)
{
	const uint8_t *c = p;

	while (n > 0) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

long
fs_pread(int fd, void *p, size_t n, uint64_t off)
{
	uint8_t *c = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, c + got, n - got, (off_t)(off + got));

		if (r == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (long)got;
}
