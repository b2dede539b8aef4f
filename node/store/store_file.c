/*
 * store_file.c: the store's few file operations: whole writes and
 * preads, a durable append that is cut back off when it fails, opening
 * for appends (0600); and, in papo-testing only, a failing disk.  Node
 * thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "node/store/store_int.h"


int
store_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int
store_read_all(int fd, void *p, size_t n, uint64_t off)
{
	long r = fs_pread(fd, p, n, off);

	if (r >= 0 && (size_t)r != n)
		errno = EIO;
	return r >= 0 && (size_t)r == n ? 0 : -1;
}

#ifdef PAPO_TESTING
/*
 * papo-testing only (tests/CMakeLists.txt compiles the store into it):
 * PAPO_TEST_STORE_FAIL=log or =outbox makes every append to that file
 * fail with EIO, as a failing disk would; =sync, every sync of the log's
 * new lines (store_commit).  The papo binary has no such
 * setting.
 */
int
store_test_fail(const char *file)
{
	const char *v = getenv("PAPO_TEST_STORE_FAIL");

	if (v == NULL || strcmp(v, file) != 0)
		return 0;
	errno = EIO;
	return 1;
}
#endif

/*
 * Appends n bytes to fd, which ends at size, and makes them durable.  On
 * failure the file is cut back to size, so it is as it was, and errno
 * tells the first failure.
 */
int
store_append(int fd, const void *p, size_t n, uint64_t size)
{
	int saved;

	if (store_write_all(fd, p, n) == 0 && fdatasync(fd) == 0)
		return 0;
	saved = errno;
	if (ftruncate(fd, (off_t)size) == -1 || fdatasync(fd) == -1)
		log_msg(LOG_ERROR, "cannot undo a failed append: %s",
		    strerror(errno));
	errno = saved;
	return -1;
}

int
store_open_file(char err[PAPO_ERR_LEN], const char *path)
{
	int fd;

	if ((fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600)) == -1)
		err_set(err, "cannot open %s: %s", path, strerror(errno));
	return fd;
}
