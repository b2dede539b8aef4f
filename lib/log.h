/*
 * log.h: diagnostics, one line each on stderr, prefixed with the level.
 * The level is the one process-wide setting papo keeps: main sets it once
 * from PAPO_LOG before any thread starts; afterwards it is only read.
 */
#ifndef PAPO_LOG_H
#define PAPO_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Parses "error", "warn", "info" or "debug"; -1 for anything else. */
int log_parse_level(const char *s);
void log_set_level(enum log_level l);
void log_msg(enum log_level l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* log_msg about one of several things of a kind (a room: its name), so
 * that a daemon in many rooms says which: "papo: info: room ROOM: ...". */
void log_room(enum log_level l, const char *room, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
