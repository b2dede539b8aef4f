/*
 * check.h: the unit tests' whole framework.  CHECK records a failure with
 * its place and goes on; a test program's main returns check_exit(),
 * which prints "N passed, N failed" and fails when anything failed.
 */
#ifndef PAPO_CHECK_H
#define PAPO_CHECK_H

#include <stdio.h>
#include <string.h>

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

static inline int
check_exit(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

#endif
