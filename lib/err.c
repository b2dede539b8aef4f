/*
 * err.c: err_set, the one way a function fills its error buffer with a
 * formatted line (err.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "lib/err.h"

void
err_set(char err[PAPO_ERR_LEN], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, PAPO_ERR_LEN, fmt, ap);
	va_end(ap);
}
