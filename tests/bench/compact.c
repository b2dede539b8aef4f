/*
 * compact.c: the retention benchmark (docs/PERFORMANCE.md): how long
 * store_compact takes to cut a long log to its newest COUNT messages, and
 * the memory it needs for that.
 *
 *   compact HOME COUNT
 *
 * HOME holds a room and a log.jsonl (gen_log writes one).  Opens the
 * store as the daemon does, then resets the process's peak RSS
 * (/proc/self/clear_refs, 5) so that the peak read afterwards is the
 * compaction's own, and compacts.  Prints, as run.sh reads them (label
 * TAB value TAB unit): messages before and after, the time of the open
 * and of the compaction, RSS after the open and the peak during the
 * compaction, and the log's size before and after.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sodium.h>

#include "node/store/home.h"
#include "node/store/store.h"
#include "node/wire/crypto.h"

static double
seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	    (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void
die(const char *what, const char *why)
{
	fprintf(stderr, "compact: %s: %s\n", what, why);
	exit(1);
}

/* A field of /proc/self/status (VmRSS, VmHWM) in MB; -1 if unread. */
static double
status_mb(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	double kb = -1;
	FILE *f;

	if ((f = fopen("/proc/self/status", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			kb = strtod(line + n + 1, NULL);
	fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

static double
log_mb(const char *home)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/log.jsonl", home);
	return stat(path, &st) == -1 ? -1 : (double)st.st_size / 1e6;
}

int
main(int argc, char **argv)
{
	char err[PAPO_ERR_LEN];
	struct room_file room;
	struct room_keys k;
	struct store_keep keep;
	struct store_stats st;
	struct timespec t0;
	struct store *s;
	double open_s, compact_s, rss, size0;
	size_t before;
	long dropped;
	FILE *f;

	if (argc != 3)
		die("usage", "compact HOME COUNT");
	if (sec_init() == -1)
		die("libsodium", "cannot initialise");
	if (store_keep_parse(err, argv[2], &keep) == -1 || keep.count == 0)
		die("COUNT", "a count of messages, such as 1000");
	if (roomfile_load(err, argv[1], &room) == -1)
		die(argv[1], err);
	sec_room_keys(room.secret, &k);
	size0 = log_mb(argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((s = store_open(err, argv[1], &k, NULL)) == NULL)
		die("store_open", err);
	open_s = seconds_since(&t0);
	store_stats(s, &st);
	before = st.msgs;
	rss = status_mb("VmRSS");
	/* From here on VmHWM is the compaction's peak. */
	if ((f = fopen("/proc/self/clear_refs", "w")) == NULL ||
	    fputs("5", f) == EOF || fclose(f) == EOF)
		die("/proc/self/clear_refs", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((dropped = store_compact(err, s, &keep, 0)) == -1)
		die("store_compact", err);
	compact_s = seconds_since(&t0);
	store_stats(s, &st);
	printf("messages before\t%zu\tmessages\n", before);
	printf("messages after\t%zu\tmessages\n", st.msgs);
	printf("messages dropped\t%ld\tmessages\n", dropped);
	printf("log.jsonl before\t%.1f\tMB\n", size0);
	printf("log.jsonl after\t%.2f\tMB\n", log_mb(argv[1]));
	printf("store_open\t%.0f\tms\n", open_s * 1000);
	printf("store_compact\t%.0f\tms\n", compact_s * 1000);
	printf("RSS after the open\t%.1f\tMB\n", rss);
	printf("peak RSS during the compaction\t%.1f\tMB\n",
	    status_mb("VmHWM"));
	store_close(s);
	sodium_memzero(&room, sizeof(room));
	return 0;
}
