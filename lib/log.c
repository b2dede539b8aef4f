/*
 * log.c: one-line diagnostics on stderr at the level PAPO_LOG chose.  The
 * level is written once by main before threads start (log.h says why it
 * is the one global papo keeps); each line is written with one call so
 * lines from two threads do not interleave.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"

static enum log_level log_level = LOG_INFO;
static const char *const log_names[] = { "error", "warn", "info", "debug" };

int
log_parse_level(const char *s)
{
	for (size_t i = 0; i < sizeof(log_names) / sizeof(log_names[0]); i++)
		if (strcmp(s, log_names[i]) == 0)
			return (int)i;
	return -1;
}

void
log_set_level(enum log_level l)
{
	log_level = l;
}

void
log_msg(enum log_level l, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (l > log_level)
		return;
	n = snprintf(line, sizeof(line), "papo: %s: ", log_names[l]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	fputs(line, stderr);
}
