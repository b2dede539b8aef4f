/*
 * cmd_get.c: papo get REF: asks the running daemon to fetch a shared
 * file (POST /api/blobs/REF/fetch), follows its state every 200 ms with
 * a progress line (one line redrawn on a terminal, plain lines
 * otherwise), then downloads it from the daemon into PATH.REF8.part
 * (REF8 the reference's first 8 characters), resuming what an earlier
 * papo get of the same file left there (Range), and renames it to PATH
 * once whole.  An existing PATH is never replaced without --force.  The
 * part is created exclusively and never through a symbolic link; one
 * that exists is taken only when it is a regular file of this user's
 * with no other link (a link planted in a shared folder must
 * not make papo get write through it).  A name that starts with '.' or
 * '-', or holds format characters, is saved only by -o PATH.  Main
 * thread of a short-lived command.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/utf8.h"
#include "node/node.h"
#include "server/api/blobs.h"
#include "server/cli/ask.h"
#include "server/cli/client.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_get.h"
#include "server/cli/print.h"

#define GET_POLL_NS (200 * 1000000L)   /* between two looks at the state */
#define GET_REFETCH_S 5                /* a file still only named is asked
                                        * for again after this */

struct get {
	struct cli_opts o;
	struct client cl;
	char ref[BLOBS_REF_LEN + 1];
	char name[256];
	char dest[4096];
	char part[4096 + 16];
	unsigned long long size;
	int tty;
	/* Progress: what was last shown, and where its rate counts from. */
	char shown[16];
	int step;
	double t0;
	unsigned long long have0;
	int line;                       /* a progress line is open */
	double drawn;                   /* when saving was last shown */
};

static double
get_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Ends a progress line left open on the terminal. */
static void
get_endline(struct get *g)
{
	if (g->line)
		fputc('\n', stderr);
	g->line = 0;
}

/*
 * Shows progress: what ("fetching", "downloading"), the bytes there are
 * of size, the percentage and the rate since the phase began.  On a
 * terminal one line redrawn; else a line at each phase and each 25 %.
 */
static void
get_progress(struct get *g, const char *what, unsigned long long have)
{
	char h[32], s[32], rate[32];
	double pct = g->size > 0 ? 100.0 * (double)have / (double)g->size :
	    100.0, dt;
	int step = (int)(pct / 25);

	if (strcmp(g->shown, what) != 0) {
		get_endline(g);
		snprintf(g->shown, sizeof(g->shown), "%s", what);
		g->t0 = get_now();
		g->have0 = have;
		g->step = -1;
	}
	dt = get_now() - g->t0;
	cli_size((double)have, h);
	cli_size((double)g->size, s);
	if (dt > 0.2 && have > g->have0)
		cli_size((double)(have - g->have0) / dt, rate);
	else
		snprintf(rate, sizeof(rate), "-");
	if (g->tty) {
		fprintf(stderr, "\r%s %.40s: %s of %s, %3.0f%%, %s/s\033[K",
		    what, g->name, h, s, pct, rate);
		g->line = 1;
	} else if (step != g->step) {
		fprintf(stderr, "%s %s: %s of %s, %.0f%%, %s/s\n", what,
		    g->name, h, s, pct, rate);
		g->step = step;
	}
	fflush(stderr);
}

/*
 * Asks the daemon: GET path, or POST body.  A 2xx answer's JSON in *out;
 * else CLI_ERROR after saying the daemon's error.
 */
static int
get_ask(struct get *g, const char *path, const char *body, cJSON **out)
{
	char err[PAPO_ERR_LEN], full[1024];
	const cJSON *e;
	char *answer = NULL;
	long status = 0;

	*out = NULL;
	if (cli_room_path(full, sizeof(full), path, g->o.room) == -1)
		return cli_fail("the room's name is too long");
	if (client_call(err, &g->cl, full, body, &status, &answer) == -1) {
		get_endline(g);
		return cli_fail(err);
	}
	*out = cJSON_Parse(answer);
	free(answer);
	if (status >= 200 && status <= 299 && *out != NULL)
		return CLI_OK;
	get_endline(g);
	e = cJSON_GetObjectItemCaseSensitive(*out, "error");
	if (cJSON_IsString(e))
		fprintf(stderr, "papo: %s\n", e->valuestring);
	else
		fprintf(stderr, "papo: papo serve answered HTTP %ld\n", status);
	cJSON_Delete(*out);
	*out = NULL;
	return CLI_ERROR;
}

static unsigned long long
get_num(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(v) && v->valuedouble > 0 ?
	    (unsigned long long)v->valuedouble : 0;
}

/*
 * Where the file goes: -o PATH, else its name in the current directory
 * or in the directory -o names.  A name that is not one plain name
 * there is refused: a path, "." or "..", one that starts with '.' (it
 * would be hidden, or a shell's own file such as .bashrc) or '-' (a
 * command would take it for an option), one with control or format
 * characters (U+202E shows "gnp.exe" as "exe.png").  CLI_ERROR when it
 * exists and --force was not given.
 */
static int
get_dest(struct get *g, const cJSON *st)
{
	const char *name = cli_str(st, "name"), *why = NULL;
	struct stat sb;

	snprintf(g->name, sizeof(g->name), "%s", name != NULL ? name : g->ref);
	if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		why = "is not one to save by here";
	else if (name[0] == '.')
		why = "starts with '.' (a hidden file)";
	else if (name[0] == '-')
		why = "starts with '-' (commands would take it for an option)";
	else if (!utf8_plain(name, strlen(name)))
		why = "holds control or format characters, which show it as "
		    "another name";
	/* -o DIR: the file's name in DIR. */
	if (g->o.output != NULL && (stat(g->o.output, &sb) == -1 ||
	    !S_ISDIR(sb.st_mode))) {
		snprintf(g->dest, sizeof(g->dest), "%s", g->o.output);
	} else if (why != NULL) {
		fprintf(stderr, "papo: the file's name ");
		if (name != NULL && utf8_plain(name, strlen(name)))
			fprintf(stderr, "'%s' ", name);
		fprintf(stderr, "%s: save it under a name you choose with -o "
		    "PATH\n", why);
		return CLI_ERROR;
	} else {
		if (g->o.output == NULL)
			snprintf(g->dest, sizeof(g->dest), "%s", name);
		else
			snprintf(g->dest, sizeof(g->dest), "%s/%s",
			    g->o.output, name);
	}
	snprintf(g->part, sizeof(g->part), "%s.%.8s.part", g->dest, g->ref);
	if (!g->o.force && access(g->dest, F_OK) == 0) {
		fprintf(stderr, "papo: %s exists: papo get does not replace it "
		    "(--force does, or -o PATH saves elsewhere)\n", g->dest);
		return CLI_ERROR;
	}
	return CLI_OK;
}

/*
 * Follows the file's state until it is here: CLI_OK; a fetch that
 * failed, or with nobody online holding it (unless --wait), CLI_ERROR
 * after saying why.
 */
static int
get_follow(struct get *g, cJSON *st)
{
	char path[128];
	double asked = get_now();
	const char *s;
	int rc = CLI_ERROR, waiting = 0;

	snprintf(path, sizeof(path), "/api/blobs/%s/state", g->ref);
	for (;;) {
		struct timespec pause = { 0, GET_POLL_NS };
		cJSON *next;

		s = cli_str(st, "state");
		if (s == NULL)
			s = "";
		if (strcmp(s, "here") == 0) {
			if (strcmp(g->shown, "fetching") == 0)
				get_progress(g, "fetching", g->size);
			rc = CLI_OK;
			break;
		}
		if (strcmp(s, "failed") == 0) {
			get_endline(g);
			fprintf(stderr, "papo: the fetch of %s failed: %s\n",
			    g->name, cli_str(st, "error") != NULL ?
			    cli_str(st, "error") : "the daemon gave no reason");
			break;
		}
		if (strcmp(s, "waiting") == 0 && !g->o.wait) {
			get_endline(g);
			fprintf(stderr, "papo: no member online holds %s (%s); "
			    "papo will fetch it when one comes back (papo get "
			    "--wait waits for it)\n", g->name, g->ref);
			break;
		}
		if (strcmp(s, "waiting") == 0 && !waiting) {
			get_endline(g);
			fprintf(stderr, "waiting for a member that holds %s to "
			    "come online\n", g->name);
		}
		waiting = strcmp(s, "waiting") == 0;
		if (strcmp(s, "fetching") == 0)
			get_progress(g, "fetching", get_num(st, "have"));
		/* A file still only named: the fetch is asked for again. */
		if (strcmp(s, "named") == 0 && get_now() - asked >
		    GET_REFETCH_S) {
			char fetch[128];

			snprintf(fetch, sizeof(fetch), "/api/blobs/%s/fetch",
			    g->ref);
			if (get_ask(g, fetch, "{}", &next) != CLI_OK)
				break;
			cJSON_Delete(next);
			asked = get_now();
		}
		nanosleep(&pause, NULL);
		if (get_ask(g, path, NULL, &next) != CLI_OK)
			break;
		cJSON_Delete(st);
		st = next;
	}
	cJSON_Delete(st);
	return rc;
}

static void
get_dl_progress(void *arg, unsigned long long bytes)
{
	struct get *g = arg;
	double now = get_now();

	/* At most 10 redraws a second. */
	if (now - g->drawn < 0.1)
		return;
	g->drawn = now;
	get_progress(g, "saving", g->have0 + bytes);
}

/*
 * Opens the part for writing, at its end (or emptied, restart): created
 * exclusively and never through a symbolic link; one already there is
 * taken only when it is a regular file of this user's with one link,
 * the part an earlier papo get of this file left.  NULL after saying
 * why.
 */
static FILE *
get_part_open(struct get *g, int restart)
{
	struct stat sb;
	FILE *f;
	int fd;

	fd = open(g->part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1 && errno == EEXIST) {
		fd = open(g->part, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		if (fd == -1 && errno == ELOOP) {
			fprintf(stderr, "papo: %s is a symbolic link: papo get "
			    "does not write through it (remove it, or -o PATH "
			    "saves elsewhere)\n", g->part);
			return NULL;
		}
		if (fd != -1 && (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
		    sb.st_uid != geteuid() || sb.st_nlink != 1)) {
			close(fd);
			fprintf(stderr, "papo: %s exists and is not a part papo "
			    "get left (not a regular file of yours with one "
			    "link): remove it, or -o PATH saves elsewhere\n",
			    g->part);
			return NULL;
		}
	}
	if (fd == -1) {
		fprintf(stderr, "papo: cannot write %s: %s\n", g->part,
		    strerror(errno));
		return NULL;
	}
	if ((restart && ftruncate(fd, 0) == -1) ||
	    lseek(fd, 0, SEEK_END) == -1 || (f = fdopen(fd, "wb")) == NULL) {
		fprintf(stderr, "papo: cannot write %s: %s\n", g->part,
		    strerror(errno));
		close(fd);
		return NULL;
	}
	return f;
}

/*
 * Downloads the file into its part from where an earlier papo get left
 * it (Range), once again from the start when that part is not one of
 * this file.  CLI_OK when the part holds the whole file.
 */
static int
get_download(struct get *g)
{
	char err[PAPO_ERR_LEN], path[128], full[1024];
	unsigned long long off;
	struct stat sb;
	const cJSON *e;
	char *answer = NULL;
	cJSON *o;
	long status = 0;
	FILE *f = NULL;
	int tries = 0, rc = CLI_ERROR;

	snprintf(path, sizeof(path), "/api/blobs/%s", g->ref);
	if (cli_room_path(full, sizeof(full), path, g->o.room) == -1)
		return cli_fail("the room's name is too long");
again:
	if (f != NULL)
		fclose(f);
	if ((f = get_part_open(g, tries > 0)) == NULL)
		return CLI_ERROR;
	off = fstat(fileno(f), &sb) == 0 ? (unsigned long long)sb.st_size : 0;
	if (off > g->size) {
		tries++;
		goto again;
	}
	if (off == g->size) {
		rc = CLI_OK;
		goto out;
	}
	g->shown[0] = '\0';
	get_progress(g, "saving", off);
	g->have0 = off;
	free(answer);
	answer = NULL;
	if (client_download(err, &g->cl, full, off, f, get_dl_progress, g,
	    &status, &answer) == -1) {
		get_endline(g);
		fprintf(stderr, "papo: %s (what came is kept in %s: papo get "
		    "again goes on from there)\n", err, g->part);
		goto out;
	}
	/* A whole answer to a range, or a range refused: the part is not
	 * of this file; it is started again, once. */
	if ((status == 200 && off > 0) || status == 416) {
		if (tries++ > 0)
			goto fail;
		goto again;
	}
	if (status == 200 || status == 206) {
		if (fflush(f) != 0 || fsync(fileno(f)) == -1) {
			get_endline(g);
			fprintf(stderr, "papo: cannot write %s: %s\n", g->part,
			    strerror(errno));
			goto out;
		}
		get_progress(g, "saving", g->size);
		rc = CLI_OK;
		goto out;
	}
fail:
	get_endline(g);
	o = cJSON_Parse(answer != NULL ? answer : "");
	e = cJSON_GetObjectItemCaseSensitive(o, "error");
	if (cJSON_IsString(e))
		fprintf(stderr, "papo: %s\n", e->valuestring);
	else
		fprintf(stderr, "papo: papo serve answered HTTP %ld to the "
		    "download\n", status);
	cJSON_Delete(o);
out:
	if (f != NULL && fclose(f) != 0 && rc == CLI_OK) {
		fprintf(stderr, "papo: cannot write %s: %s\n", g->part,
		    strerror(errno));
		rc = CLI_ERROR;
	}
	free(answer);
	return rc;
}

/* The part becomes PATH: without --force never over a file that
 * appeared meanwhile (a link fails where one exists). */
static int
get_finish(struct get *g)
{
	struct stat sb;
	char sz[32];

	get_endline(g);
	if (lstat(g->part, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (unsigned long long)sb.st_size != g->size) {
		fprintf(stderr, "papo: %s does not hold the file's %llu bytes; "
		    "papo get again goes on\n", g->part, g->size);
		return CLI_ERROR;
	}
	if (g->o.force ? rename(g->part, g->dest) == -1 :
	    link(g->part, g->dest) == -1 || unlink(g->part) == -1) {
		fprintf(stderr, "papo: cannot save %s: %s\n", g->dest,
		    strerror(errno));
		return CLI_ERROR;
	}
	cli_size((double)g->size, sz);
	printf("saved ");
	cli_put(g->name);
	printf(" (%s) to ", sz);
	cli_put(g->dest);
	printf("\n");
	return CLI_OK;
}

int
cli_get(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN], path[128];
	struct get *g;
	cJSON *st = NULL;
	int rc, opened = 0;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return cli_fail("out of memory");
	if (cli_start(c, argc, argv, &g->o, 1, &rc) == -1)
		goto out;
	rc = CLI_USAGE;
	if (optind == argc) {
		cli_usage(c, "%s", "the file's REF is missing (from papo "
		    "history or papo say --file)");
		goto out;
	}
	snprintf(g->ref, sizeof(g->ref), "%s", argv[optind]);
	for (char *p = g->ref; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if (strlen(argv[optind]) != BLOBS_REF_LEN || !blobs_ref_ok(g->ref)) {
		cli_usage(c, "a file's REF is 52 characters of a-z and 2-7, "
		    "not '%.64s'", argv[optind]);
		goto out;
	}
	rc = CLI_ERROR;
	g->tty = isatty(STDERR_FILENO);
	if (client_open(err, g->o.home, &g->cl) == -1) {
		rc = cli_fail(err);
		goto out;
	}
	opened = 1;
	snprintf(path, sizeof(path), "/api/blobs/%s/fetch", g->ref);
	if (get_ask(g, path, "{}", &st) != CLI_OK)
		goto out;
	g->size = get_num(st, "size");
	if (get_dest(g, st) != CLI_OK)
		goto out;
	rc = get_follow(g, st);
	st = NULL;
	if (rc == CLI_OK && (rc = get_download(g)) == CLI_OK)
		rc = get_finish(g);
out:
	get_endline(g);
	cJSON_Delete(st);
	if (opened)
		client_close(&g->cl);
	free(g);
	return rc;
}
