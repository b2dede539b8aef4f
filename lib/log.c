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

/* One line: "papo: LEVEL: ", then "room ROOM: " when room is not NULL,
 * then fmt with ap. */
static void
log_line(enum log_level l, const char *room, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	n = snprintf(line, sizeof(line), "papo: %s: ", log_names[l]);
	if (room != NULL)
		n += snprintf(line + n, sizeof(line) - (size_t)n - 1,
		    "room %.64s: ", room);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	strcat(line, "\n");
	fputs(line, stderr);
}

void
log_msg(enum log_level l, const char *fmt, ...)
{
	va_list ap;

	if (l > log_level)
		return;
	va_start(ap, fmt);
	log_line(l, NULL, fmt, ap);
	va_end(ap);
}

void
log_room(enum log_level l, const char *room, const char *fmt, ...)
{
	va_list ap;

	if (l > log_level)
		return;
	va_start(ap, fmt);
	log_line(l, room, fmt, ap);
	va_end(ap);
}
