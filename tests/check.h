/*
 * check.h: the unit tests' whole framework.  CHECK records a failure with
 * its place and goes on; a test program's main returns check_exit(),
 * which prints "N passed, N failed" and fails when anything failed.
 * check_tmpdir and check_rmtree give a test its own folder and take it
 * away; check_cpu_s reads the process's CPU time, for the tests that hold
 * code to a budget.
 */
#ifndef PAPO_CHECK_H
#define PAPO_CHECK_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int check_passed, check_failed;

#define CHECK(cond) do {                                                    \
	if (cond) {                                                         \
		check_passed++;                                             \
	} else {                                                            \
		check_failed++;                                             \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,      \
		    __LINE__, #cond);                                       \
	}                                                                   \
} while (0)

#define CHECK_EQ_INT(a, b) do {                                             \
	long long check_a_ = (long long)(a), check_b_ = (long long)(b);     \
	if (check_a_ == check_b_) {                                         \
		check_passed++;                                             \
	} else {                                                            \
		check_failed++;                                             \
		fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",   \
		    __FILE__, __LINE__, #a, #b, check_a_, check_b_);        \
	}                                                                   \
} while (0)

#define CHECK_EQ_STR(a, b) do {                                             \
	const char *check_a_ = (a), *check_b_ = (b);                        \
	if (check_a_ != NULL && check_b_ != NULL &&                         \
	    strcmp(check_a_, check_b_) == 0) {                              \
		check_passed++;                                             \
	} else {                                                            \
		check_failed++;                                             \
		fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
		    __FILE__, __LINE__, #a, #b,                             \
		    check_a_ ? check_a_ : "(null)",                         \
		    check_b_ ? check_b_ : "(null)");                        \
	}                                                                   \
} while (0)

/* A new folder of its own, /tmp/papo-TAG-XXXXXX, into out (n bytes);
 * the test stops when none can be made. */
static inline void
check_tmpdir(char *out, size_t n, const char *tag)
{
	if ((size_t)snprintf(out, n, "/tmp/papo-%s-XXXXXX", tag) >= n ||
	    mkdtemp(out) == NULL) {
		perror("check_tmpdir");
		exit(1);
	}
}

/* Removes path and, when it is a folder, everything under it, never
 * following a link; 0 when it is gone. */
static inline int
check_rmtree(const char *path)
{
	struct stat st;
	struct dirent *d;
	DIR *dir;
	char sub[4096];
	int rc = 0;

	if (lstat(path, &st) == -1)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
		    d->d_name) >= sizeof(sub) || check_rmtree(sub) == -1)
			rc = -1;
	}
	closedir(dir);
	return rmdir(path) == -1 ? -1 : rc;
}

/* The CPU time this process has used, in seconds. */
static inline double
check_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int
check_exit(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

#endif
