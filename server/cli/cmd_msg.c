/*
 * cmd_msg.c: the commands about the room's messages: papo say (with the
 * files it shares, each uploaded before the message names it), history
 * and tail, through the running daemon.  Main thread.
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

#include "node/node.h"
#include "server/api/api.h"
#include "server/api/param.h"
#include "server/cli/ask.h"
#include "server/cli/client.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_disk.h"
#include "server/cli/cmd_msg.h"
#include "server/cli/cmd_room.h"
#include "server/cli/cmd_search.h"
#include "server/cli/print.h"
#include "server/http/http.h"

/*
 * "papo say -": the text from stdin, one final newline taken off (as
 * "$(...)" does).  NULL after saying why; *len its length, counted past
 * what is kept when it is over the limit.
 */
static char *
cli_say_stdin(size_t *len)
{
	char *t = malloc(PAPO_BODY_MAX + 2);
	char chunk[4096];
	size_t n;

	*len = 0;
	if (t == NULL) {
		cli_fail("out of memory");
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
		if (*len < PAPO_BODY_MAX + 1)
			memcpy(t + *len, chunk, *len + n > PAPO_BODY_MAX + 1 ?
			    PAPO_BODY_MAX + 1 - *len : n);
		*len += n;
	}
	if (ferror(stdin)) {
		free(t);
		cli_fail("cannot read the text from stdin");
		return NULL;
	}
	if (*len <= PAPO_BODY_MAX + 1 && *len > 0 && t[*len - 1] == '\n')
		(*len)--;
	t[*len <= PAPO_BODY_MAX + 1 ? *len : PAPO_BODY_MAX + 1] = '\0';
	return t;
}

/* s percent-encoded for a query into out; -1 when it does not fit. */
static int
cli_encode(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0';
	    p++) {
		if (n + 4 > len)
			return -1;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL)
			out[n++] = (char)*p;
		else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
	return 0;
}

/*
 * Opens path to share it: a regular file (or a directory, refused by
 * the caller), never waiting on a FIFO or a device (a FIFO once
 * held papo say for good).  NULL after saying why.
 */
static FILE *
cli_upload_open(const char *path)
{
	struct stat st;
	FILE *f;
	int fd, fl;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		fprintf(stderr, "papo: cannot read %s: %s\n", path,
		    strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || (!S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode))) {
		fprintf(stderr, "papo: %s is not a regular file (a FIFO, a "
		    "socket or a device): pipe it instead, papo say --file - "
		    "--name NAME < %s\n", path, path);
		close(fd);
		return NULL;
	}
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1 ||
	    (f = fdopen(fd, "rb")) == NULL) {
		fprintf(stderr, "papo: cannot read %s: %s\n", path,
		    strerror(errno));
		close(fd);
		return NULL;
	}
	return f;
}

/*
 * Shares the file at path ("-": stdin) by the name given (NULL: the
 * path's last part): uploaded as libcurl reads it, never whole in
 * memory.  Its JSON ({"ref", "name", "size", "type"}) in *out, or
 * CLI_ERROR after saying why.
 */
static int
cli_upload(const struct cli_opts *o, const char *path, const char *name,
    cJSON **out)
{
	char err[PAPO_ERR_LEN], enc[3 * 256 + 1], q[1024], full[2048];
	struct client cl;
	struct stat st;
	const cJSON *e;
	char *answer = NULL;
	long status = 0;
	long long size = -1;
	FILE *f = NULL;
	int rc = CLI_ERROR, opened = 0;

	*out = NULL;
	if (name == NULL) {
		name = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 :
		    path;
		if (name[0] == '\0') {
			fprintf(stderr, "papo: %s names no file\n", path);
			return CLI_ERROR;
		}
	}
	if (strlen(name) > 255 || cli_encode(name, enc, sizeof(enc)) == -1) {
		fprintf(stderr, "papo: the name '%.64s...' is over 255 bytes\n",
		    name);
		return CLI_ERROR;
	}
	if (strcmp(path, "-") == 0)
		f = stdin;
	else if ((f = cli_upload_open(path)) == NULL)
		return CLI_ERROR;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "papo: %s is a directory: share a file\n",
		    path);
		goto out;
	}
	/* A regular file that says it is empty may not be (/proc, /sys):
	 * it is read to its end, as stdin is. */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > 0)
		size = (long long)st.st_size;
	snprintf(q, sizeof(q), "/api/blobs?name=%s", enc);
	if (cli_room_path(full, sizeof(full), q, o->room) == -1) {
		cli_fail("the room's name is too long");
		goto out;
	}
	if (client_open(err, o->home, &cl) == -1) {
		cli_fail(err);
		goto out;
	}
	opened = 1;
	if (client_upload(err, &cl, full, f, size, &status, &answer) == -1) {
		fprintf(stderr, "papo: %s: %s\n", path, err);
		goto out;
	}
	*out = cJSON_Parse(answer);
	if (status != 201 || cli_str(*out, "ref") == NULL) {
		e = cJSON_GetObjectItemCaseSensitive(*out, "error");
		fprintf(stderr, "papo: cannot share %s: ", path);
		if (cJSON_IsString(e))
			fputs(e->valuestring, stderr);
		else
			fprintf(stderr, "papo serve answered HTTP %ld", status);
		fprintf(stderr, "; nothing was sent\n");
		cJSON_Delete(*out);
		*out = NULL;
		goto out;
	}
	rc = CLI_OK;
out:
	if (opened)
		client_close(&cl);
	if (f != NULL && f != stdin)
		fclose(f);
	free(answer);
	return rc;
}

/* Whether s holds only blank space (ASCII white space, and U+00A0,
 * U+2000 to U+200B, U+3000 and U+FEFF in UTF-8). */
static int
cli_blank(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		if (strchr(" \t\n\r\v\f", *p) != NULL)
			p++;
		else if (p[0] == 0xc2 && p[1] == 0xa0)
			p += 2;
		else if ((p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0x80 &&
		    p[2] <= 0x8b) || (p[0] == 0xe3 && p[1] == 0x80 &&
		    p[2] == 0x80) || (p[0] == 0xef && p[1] == 0xbb &&
		    p[2] == 0xbf))
			p += 3;
		else
			return 0;
	}
	return 1;
}

/*
 * --reply-to ID: a message the daemon holds (GET /api/history?thread=ID
 * finds it), else refused, unless retention dropped messages, when the
 * daemon cannot tell whether ID was one of them.  CLI_OK, else the error
 * said.
 */
static int
cli_reply_known(const struct cli_opts *o)
{
	char enc[128], path[256], id[PAPO_MSGID_LEN + 1];
	cJSON *ans = NULL;
	int rc;

	if (api_msgid(o->reply_to, id) == -1 ||
	    cli_encode(o->reply_to, enc, sizeof(enc)) == -1) {
		fprintf(stderr, "papo: reply_to must be a message id: %d "
		    "characters of a-z and 2-7 (papo history shows them), not "
		    "'%.64s'\n", PAPO_MSGID_LEN, o->reply_to);
		return CLI_ERROR;
	}
	snprintf(path, sizeof(path), "/api/history?thread=%s&limit=1", enc);
	if ((rc = cli_call(o->home, o->room, path, NULL, &ans, NULL)) !=
	    CLI_OK)
		return rc;
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ans,
	    "messages")) == 0 && cJSON_GetObjectItemCaseSensitive(ans,
	    "retention") == NULL) {
		fprintf(stderr, "papo: no message %s in this room to reply to "
		    "(papo history shows the messages' ids)\n", enc);
		rc = CLI_ERROR;
	}
	cJSON_Delete(ans);
	return rc;
}

/* The options of a say with files, checked before anything is read. */
static int
cli_say_check(const struct cli_cmd *c, const struct cli_opts *o,
    const char *msg)
{
	int piped = 0;

	for (int i = 0; i < o->nfiles; i++)
		piped += strcmp(o->files[i], "-") == 0;
	if (piped > 1)
		return cli_usage(c, "%s", "stdin gives one file: --file - "
		    "once");
	if (piped && msg != NULL && strcmp(msg, "-") == 0)
		return cli_usage(c, "%s", "stdin gives the text or a file, not "
		    "both: put the TEXT on the command line");
	if (piped && !o->name_flag)
		return cli_usage(c, "%s", "--file - needs --name NAME, the "
		    "name the file from stdin is shown by");
	if (!piped && o->name_flag && o->nfiles != 1)
		return cli_usage(c, "%s", "--name names the file read from "
		    "stdin (--file -), or the one file shared");
	return CLI_OK;
}

/* A file of the message: its reference with the name and type it was
 * added by, which an earlier file of the same reference (every empty
 * file has one) does not replace. */
static cJSON *
cli_say_ref(const cJSON *up)
{
	cJSON *o = cJSON_CreateObject();
	const char *k[] = { "ref", "name", "type" };

	for (size_t i = 0; o != NULL && i < 3; i++)
		if (cli_str(up, k[i]) != NULL)
			cJSON_AddStringToObject(o, k[i], cli_str(up, k[i]));
	return o;
}

/* One line per file shared: its name, size and reference. */
static void
cli_say_files(const cJSON *up)
{
	const cJSON *f, *size;
	const char *s;

	cJSON_ArrayForEach(f, up) {
		size = cJSON_GetObjectItemCaseSensitive(f, "size");
		printf("  file ");
		cli_put((s = cli_str(f, "name")) != NULL ? s : "?");
		printf(", %.0f bytes: ", cJSON_IsNumber(size) ?
		    size->valuedouble : 0);
		cli_put((s = cli_str(f, "ref")) != NULL ? s : "?");
		printf("\n");
	}
}

int
cli_say(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *done, *wait;
	const char *id, *state, *msg;
	cJSON *req = NULL, *ans = NULL, *up = NULL, *refs = NULL, *one;
	char *body = NULL, *text = NULL, *in = NULL;
	size_t len, ctl = 0;
	int rc;

	if (cli_start(c, argc, argv, &o, 1, &rc) == -1)
		return rc;
	if (optind == argc && o.nfiles == 0)
		return cli_usage(c, "%s", "the TEXT is missing (or - to read "
		    "it from stdin, or --file PATH)");
	if (o.public && o.to == NULL)
		return cli_usage(c, "%s", "--public goes with --to NAME: a "
		    "message without --to is the whole room's already");
	msg = optind < argc ? argv[optind] : "";
	if (o.nfiles > 0 && (rc = cli_say_check(c, &o, msg)) != CLI_OK)
		return rc;
	len = strlen(msg);
	if (strcmp(msg, "-") == 0) {
		if ((in = cli_say_stdin(&len)) == NULL)
			return CLI_ERROR;
		msg = in;
	}
	rc = CLI_ERROR;
	/* The limits said here, in the text's terms, rather than as the
	 * size of the request that carries it. */
	if (len == 0 && o.nfiles == 0) {
		cli_fail("the text is empty: nothing to send");
		goto out;
	}
	if (len > 0 && cli_blank(msg)) {
		if (o.nfiles == 0) {
			cli_fail("the text is only blank space: nothing to send");
			goto out;
		}
		len = 0;            /* the files alone */
	}
	if (len > PAPO_BODY_MAX) {
		fprintf(stderr, "papo: the text is %zu bytes; at most %d (48 KiB) "
		    "are allowed: share a longer one as a file (papo say "
		    "--file PATH)\n", len, PAPO_BODY_MAX);
		goto out;
	}
	if (o.reply_to != NULL && (rc = cli_reply_known(&o)) != CLI_OK)
		goto out;
	rc = CLI_ERROR;
	/* The files first, each uploaded whole before the message names
	 * them: a file that cannot be shared sends nothing. */
	if ((up = cJSON_CreateArray()) == NULL ||
	    (refs = cJSON_CreateArray()) == NULL) {
		cli_fail("out of memory");
		goto out;
	}
	for (int i = 0; i < o.nfiles; i++) {
		if (cli_upload(&o, o.files[i], o.name_flag &&
		    (strcmp(o.files[i], "-") == 0 || o.nfiles == 1) ? o.name :
		    NULL, &one) != CLI_OK)
			goto out;
		cJSON_AddItemToArray(up, one);
		cJSON_AddItemToArray(refs, cli_say_ref(one));
	}
	if ((req = cJSON_CreateObject()) == NULL ||
	    (len > 0 && cJSON_AddStringToObject(req, "text", msg) == NULL) ||
	    (o.nfiles > 0 && !cJSON_AddItemToObject(req, "files", refs)) ||
	    (o.to != NULL &&
	    cJSON_AddStringToObject(req, "to", o.to) == NULL) ||
	    (o.public && cJSON_AddTrueToObject(req, "public") == NULL) ||
	    (o.reply_to != NULL &&
	    cJSON_AddStringToObject(req, "reply_to", o.reply_to) == NULL) ||
	    (body = cJSON_PrintUnformatted(req)) == NULL) {
		cli_fail("out of memory");
		goto out;
	}
	if (o.nfiles > 0)
		refs = NULL;        /* req's now */
	if (strlen(body) > HTTP_BODY_MAX) {
		for (size_t i = 0; i < len; i++)
			ctl += (unsigned char)msg[i] < 0x20;
		fprintf(stderr, "papo: the text is %zu bytes, but written out "
		    "(%zu control characters as 6-byte \\u escapes, quotes and "
		    "backslashes as 2) it is over the %d bytes a message may "
		    "take: send it with fewer control characters, or as a file "
		    "(papo say --file PATH)\n", len, ctl,
		    HTTP_BODY_MAX);
		goto out;
	}
	if ((rc = cli_request(o.home, o.room, "/api/send", body, &ans, &text,
	    1)) != CLI_OK)
		goto out;
	if (o.json) {
		fputs(text, stdout);
		goto out;
	}
	id = cli_str(ans, "id");
	state = cli_str(ans, "state");
	done = cJSON_GetObjectItemCaseSensitive(ans, "delivered_to");
	wait = cJSON_GetObjectItemCaseSensitive(ans, "waiting_for");
	cli_put(id != NULL ? id : "?");
	if (state != NULL && strcmp(state, "delivered") == 0) {
		printf(" delivered to ");
		cli_names(done);
		if (cJSON_GetArraySize(wait) > 0) {
			printf("; waiting for ");
			cli_names(wait);
		}
	} else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans,
	    "stopping"))) {
		/* The daemon stopped while it waited for acks. */
		printf(" kept, queued: papo serve stopped before ");
		if (cJSON_GetArraySize(wait) > 0)
			cli_names(wait);
		else
			printf("anyone");
		printf(" had it; it goes out when papo serve runs again");
	} else if (cJSON_GetArraySize(wait) > 0) {
		printf(" queued: waiting for ");
		cli_names(wait);
	} else {
		printf(" queued: no member can be reached now; it goes out "
		    "when one can");
	}
	printf("\n");
	cli_say_files(up);
out:
	cJSON_Delete(req);
	cJSON_Delete(ans);
	cJSON_Delete(up);
	cJSON_Delete(refs);
	cJSON_free(body);
	free(text);
	free(in);
	return rc;
}

/* One message, as history and tail print it: time, id, author, "→ TO"
 * when directed, "↳ ID" when a reply, and the text. */
static void
cli_print_message(const cJSON *m)
{
	const char *s;

	cli_message_head(m);
	/* A text of several lines is printed whole, its lines after the
	 * first indented under the message's line. */
	cli_put_in((s = cli_str(m, "text")) != NULL ? s : "", "    ");
	printf("\n");
	cli_files(cJSON_GetObjectItemCaseSensitive(m, "files"), "    ");
}

/* Where the log starts, when retention (PAPO_KEEP) dropped messages. */
static void
cli_print_retention(const cJSON *r)
{
	const cJSON *starts = cJSON_GetObjectItemCaseSensitive(r, "starts");
	const cJSON *gone = cJSON_GetObjectItemCaseSensitive(r, "dropped");
	const char *keep = cli_str(r, "keep");
	char when[32];

	if (!cJSON_IsNumber(starts) || !cJSON_IsNumber(gone))
		return;
	cli_time(starts->valuedouble, when);
	printf("(history starts at %s: %.0f earlier messages dropped by "
	    "retention", when, gone->valuedouble);
	if (keep != NULL) {
		printf(", PAPO_KEEP=");
		cli_put(keep);
	}
	printf(")\n");
}

static double
cli_event_ts(const cJSON *e)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "ts");

	return cJSON_IsNumber(t) ? t->valuedouble : 0;
}

/* "12:01:02 -- ana removed cy; the room key changed (epoch 3)". */
static void
cli_print_event(const cJSON *e)
{
	const char *s;
	char when[32];

	cli_time(cli_event_ts(e), when);
	printf("%s -- ", when);
	cli_put((s = cli_str(e, "text")) != NULL ? s : "?");
	printf("\n");
}

/* --since/--after T and --before T that leave no time between them
 * are refused: such a search could only find nothing. */
static int
cli_history_range(const struct cli_cmd *c, const struct cli_opts *o)
{
	const char *from = o->since != NULL ? o->since : o->after;
	const char *flag = o->since != NULL ? "--since" : "--after";
	uint64_t now = (uint64_t)time(NULL) * 1000, lo, hi;
	char msg[PAPO_ERR_LEN];

	if (from == NULL || o->before == NULL ||
	    cli_search_time(from, now, &lo) == -1 ||
	    cli_search_time(o->before, now, &hi) == -1 || lo < hi)
		return CLI_OK;
	snprintf(msg, sizeof(msg), "%s %.40s is not before --before %.40s: "
	    "no message can be between them (a duration counts back from "
	    "now: --since 3h --before 2h is the hour from 3 to 2 hours ago)",
	    flag, from, o->before);
	return cli_usage(c, "%s", msg);
}

int
cli_history(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	const cJSON *msgs, *m, *ev, *e;
	cJSON *ans = NULL;
	char *text = NULL, *end, path[64];
	long n = API_HISTORY_DEFAULT;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if (o.count != NULL) {
		n = strtol(o.count, &end, 10);
		if (o.count[0] == '\0' || *end != '\0' || n < 1 ||
		    n > API_HISTORY_MAX)
			return cli_usage(c, "-n takes a number from 1 to 500, "
			    "not '%s'", o.count);
	}
	if (cli_search_asked(&o)) {
		if (o.count == NULL)
			n = 20;
		if (n > SEARCH_PAGE_MAX)
			return cli_usage(c, "a search shows at most 200 at "
			    "once, not -n %s", o.count);
		if ((rc = cli_history_range(c, &o)) != CLI_OK)
			return rc;
		return cli_search(c, &o, n);
	}
	snprintf(path, sizeof(path), "/api/history?limit=%ld", n);
	/* With the daemon stopped, the log on the disk (node/offline.c). */
	rc = CLI_OK;
	if (!cli_running(o.home)) {
		if ((rc = cli_history_disk(o.home, o.room, (size_t)n, &text,
		    &ans)) != CLI_OK)
			goto out;
	} else if ((rc = cli_call(o.home, o.room, path, NULL, &ans,
	    &text)) != CLI_OK)
		goto out;
	if (o.json) {
		if (text != NULL)
			fputs(text, stdout);
		goto out;
	}
	cli_print_retention(cJSON_GetObjectItemCaseSensitive(ans, "retention"));
	msgs = cJSON_GetObjectItemCaseSensitive(ans, "messages");
	/* The room's key changes, each where it falls among the messages
	 * shown: none before the first shown when earlier ones are left
	 * out (a full page, or one the node cut at its size and that says
	 * so with "earlier"), all after the last. */
	ev = cJSON_GetObjectItemCaseSensitive(ans, "room");
	e = NULL;
	if (cJSON_GetArraySize(msgs) >= n ||
	    cJSON_GetObjectItemCaseSensitive(ans, "earlier") != NULL) {
		const cJSON *t0 = cJSON_GetObjectItemCaseSensitive(msgs->child,
		    "ts");

		for (e = ev != NULL ? ev->child : NULL; e != NULL &&
		    cli_event_ts(e) < (cJSON_IsNumber(t0) ? t0->valuedouble :
		    0); e = e->next)
			;
	} else if (ev != NULL)
		e = ev->child;
	cJSON_ArrayForEach(m, msgs) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "ts");

		for (; e != NULL && cli_event_ts(e) <= (cJSON_IsNumber(t) ?
		    t->valuedouble : 0); e = e->next)
			cli_print_event(e);
		cli_print_message(m);
	}
	for (; e != NULL; e = e->next)
		cli_print_event(e);
out:
	cJSON_Delete(ans);
	free(text);
	return rc;
}

#define CLI_TAIL_LINE_MAX (256 * 1024)   /* longest stream line */

#define CLI_TAIL_WAIT_S 60                /* for a daemon to come back */

#define CLI_TAIL_DEFAULT 10               /* messages shown first */

/* A room papo tail follows: its id and name, for the label. */
struct cli_tail_room {
	char id[PAPO_ROOMID_LEN + 1];
	char name[PAPO_NAME_MAX + 1];
};

/*
 * papo tail, as tail -f: the last n messages from the history, then the
 * event stream, opened first (from now on: ?since=now) so that nothing
 * falls between the two; a message in both is printed once.
 */
struct cli_tail {
	int json;
	const char *home;
	const char *room;        /* --room, "*" every room, NULL the default */
	long n;
	int label;               /* several rooms followed: each line says
	                          * its room */
	struct cli_tail_room rooms[PAPO_ROOMS_MAX];
	size_t nrooms;
	int started;             /* the last n printed */
	int failed;              /* ... or not: the error said */
	char (*shown)[PAPO_MSGID_LEN + 1];   /* their ids */
	size_t nshown;
	char line[CLI_TAIL_LINE_MAX];
	size_t len;
	int toolong;
	char id[128];
	char event[32];
	char *data;          /* the event's data lines, joined */
	size_t datalen;
};

/* "[ROOM] " before a message of the room of id, when several are
 * followed. */
static void
cli_tail_label(const struct cli_tail *t, const cJSON *m)
{
	const char *id = cli_str(m, "room_id"), *name = NULL;

	if (!t->label)
		return;
	for (size_t i = 0; id != NULL && i < t->nrooms; i++)
		if (strcmp(t->rooms[i].id, id) == 0)
			name = t->rooms[i].name;
	printf("[");
	cli_put(name != NULL ? name : id != NULL ? id : cli_str(m, "room") !=
	    NULL ? cli_str(m, "room") : "?");
	printf("] ");
}

/* One message as --json prints every event: {"event", "id", "data"}. */
static void
cli_tail_json(const char *event, const char *id, cJSON *data)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	cJSON_AddStringToObject(o, "event", event);
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddItemToObject(o, "data", data);
	if ((s = cJSON_PrintUnformatted(o)) != NULL)
		printf("%s\n", s);
	cJSON_free(s);
	cJSON_Delete(o);
}

static int
cli_tail_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	double tx = cli_event_ts(x), ty = cli_event_ts(y);

	return tx < ty ? -1 : tx > ty;
}

/*
 * The rooms followed (GET /api/rooms: every room for "*", else the one
 * named or the default), then the last t->n messages of them, oldest
 * first, their ids kept in t->shown.  CLI_OK, or CLI_ERROR said.
 */
static int
cli_tail_start(struct cli_tail *t)
{
	cJSON *rooms = NULL, *all = NULL, **pick = NULL;
	const cJSON *r, *m;
	char path[1024];
	size_t npick = 0, cap = 0;
	int rc = CLI_ERROR, every = t->room != NULL && strcmp(t->room, "*") == 0;

	if (cli_call(t->home, NULL, "/api/rooms", NULL, &rooms, NULL) !=
	    CLI_OK)
		return CLI_ERROR;
	t->nrooms = 0;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(rooms,
	    "rooms")) {
		const char *id = cli_str(r, "id"), *name = cli_str(r, "name");

		if (id == NULL || t->nrooms == PAPO_ROOMS_MAX)
			continue;
		snprintf(t->rooms[t->nrooms].id, sizeof(t->rooms[0].id), "%s",
		    id);
		snprintf(t->rooms[t->nrooms].name, sizeof(t->rooms[0].name),
		    "%s", name != NULL ? name : id);
		t->nrooms++;
	}
	t->label = every && t->nrooms > 1;
	if ((all = cJSON_CreateArray()) == NULL)
		goto oom;
	/* Each room's last n (the room named, or the default, alone), then
	 * the last n of them all. */
	for (size_t i = 0; i < (every ? t->nrooms : 1) && t->n > 0; i++) {
		cJSON *h = NULL, *msgs;

		snprintf(path, sizeof(path), "/api/history?limit=%ld", t->n);
		if (cli_call(t->home, every ? t->rooms[i].id : t->room, path,
		    NULL, &h, NULL) != CLI_OK)
			goto out;
		msgs = cJSON_DetachItemFromObjectCaseSensitive(h, "messages");
		cJSON_Delete(h);
		while (msgs != NULL && msgs->child != NULL) {
			cJSON *one = cJSON_DetachItemViaPointer(msgs, msgs->child);

			/* A room's history names its room once, not in each
			 * message: the label needs it in each. */
			if (every && cli_str(one, "room_id") == NULL)
				cJSON_AddStringToObject(one, "room_id",
				    t->rooms[i].id);
			cJSON_AddItemToArray(all, one);
		}
		cJSON_Delete(msgs);
	}
	cJSON_ArrayForEach(m, all) {
		if (npick == cap) {
			cJSON **p = realloc(pick, (cap = cap ? 2 * cap : 64) *
			    sizeof(*pick));

			if (p == NULL)
				goto oom;
			pick = p;
		}
		pick[npick++] = (cJSON *)m;
	}
	if (npick > 0)
		qsort(pick, npick, sizeof(*pick), cli_tail_cmp);
	if ((t->shown = calloc((size_t)t->n + 1, sizeof(*t->shown))) == NULL)
		goto oom;
	for (size_t i = npick > (size_t)t->n ? npick - (size_t)t->n : 0;
	    i < npick; i++) {
		const char *id = cli_str(pick[i], "id");

		if (id != NULL)
			snprintf(t->shown[t->nshown++], sizeof(t->shown[0]), "%s",
			    id);
		if (t->json)
			cli_tail_json("message", "", cJSON_Duplicate(pick[i], 1));
		else {
			cli_tail_label(t, pick[i]);
			cli_print_message(pick[i]);
		}
	}
	fflush(stdout);
	rc = CLI_OK;
	goto out;
oom:
	cli_fail("out of memory");
out:
	free(pick);
	cJSON_Delete(all);
	cJSON_Delete(rooms);
	return rc;
}

/* Whether the message of id was among the last n printed first. */
static int
cli_tail_shown(const struct cli_tail *t, const char *id)
{
	for (size_t i = 0; id != NULL && i < t->nshown; i++)
		if (strcmp(t->shown[i], id) == 0)
			return 1;
	return 0;
}

static void
cli_tail_event(struct cli_tail *t)
{
	const char *event = t->event[0] != '\0' ? t->event : "message";
	cJSON *d;

	if (t->data == NULL)
		return;
	d = cJSON_Parse(t->data);
	if (strcmp(event, "message") == 0 && d != NULL &&
	    cli_tail_shown(t, cli_str(d, "id")))
		;
	else if (t->json) {
		cli_tail_json(event, t->id, d != NULL ? d :
		    cJSON_CreateString(t->data));
		d = NULL;
	} else if (d != NULL && strcmp(event, "message") == 0) {
		cli_tail_label(t, d);
		cli_print_message(d);
	}
	cJSON_Delete(d);
	fflush(stdout);
	free(t->data);
	t->data = NULL;
	t->datalen = 0;
	t->event[0] = '\0';
}

/* One line of the stream (SSE: "field: value", a blank line ends an
 * event, ":" starts a comment). */
static void
cli_tail_line(struct cli_tail *t, const char *l)
{
	const char *v = strchr(l, ':');
	size_t n;

	if (l[0] == '\0') {
		cli_tail_event(t);
		return;
	}
	if (v == NULL || v == l)
		return;
	n = (size_t)(v - l);
	v++;
	if (*v == ' ')
		v++;
	if (n == 2 && strncmp(l, "id", 2) == 0)
		snprintf(t->id, sizeof(t->id), "%s", v);
	else if (n == 5 && strncmp(l, "event", 5) == 0)
		snprintf(t->event, sizeof(t->event), "%s", v);
	else if (n == 4 && strncmp(l, "data", 4) == 0) {
		size_t add = strlen(v);
		char *p = realloc(t->data, t->datalen + add + 2);

		if (p == NULL)
			return;
		t->data = p;
		if (t->datalen > 0)
			t->data[t->datalen++] = '\n';
		memcpy(t->data + t->datalen, v, add + 1);
		t->datalen += add;
	}
}

static int
cli_tail_chunk(const char *data, size_t n, void *arg)
{
	struct cli_tail *t = arg;

	/* The stream is open (its first bytes came): now the last n, so
	 * that whatever comes after them comes through the stream. */
	if (!t->started) {
		t->started = 1;
		if (cli_tail_start(t) != CLI_OK) {
			t->failed = 1;
			return -1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			t->line[t->len] = '\0';
			if (!t->toolong)
				cli_tail_line(t, t->line);
			t->len = 0;
			t->toolong = 0;
		} else if (data[i] != '\r') {
			if (t->len + 1 < sizeof(t->line))
				t->line[t->len++] = data[i];
			else
				t->toolong = 1;
		}
	}
	return 0;
}

int
cli_tail(const struct cli_cmd *c, int argc, char **argv)
{
	char err[PAPO_ERR_LEN];
	struct cli_tail *t;
	struct cli_opts o;
	char path[1024], *end;
	long n = CLI_TAIL_DEFAULT;
	int rc, waited = 0;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if (o.count != NULL) {
		n = strtol(o.count, &end, 10);
		if (o.count[0] == '\0' || *end != '\0' || n < 0 ||
		    n > API_HISTORY_MAX)
			return cli_usage(c, "-n takes a number from 0 to 500, "
			    "not '%s'", o.count);
	}
	if (o.all_rooms && o.room_flag)
		return cli_usage(c, "%s", "give --room or --all-rooms, not "
		    "both");
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return cli_fail("out of memory");
	t->json = o.json;
	t->home = o.home;
	t->room = o.all_rooms ? "*" : o.room;
	t->n = n;
	/* Follow until interrupted; when the daemon goes away, wait for it
	 * to come back (serve.json may name a new port) and resume where
	 * the stream left off. */
	for (;;) {
		struct client cl;

		if (cli_room_path(path, sizeof(path), t->started ?
		    "/api/events" : "/api/events?since=now", t->room) == -1) {
			rc = cli_fail("the room's name is too long");
			break;
		}
		if (client_open(err, o.home, &cl) == 0) {
			int r = client_stream(err, &cl, path,
			    t->id[0] != '\0' ? t->id : NULL, cli_tail_chunk, t);

			client_close(&cl);
			if (t->failed) {
				rc = CLI_ERROR;
				break;
			}
			if (r == 0) {
				waited = 0;
				t->len = 0;
				continue;
			}
		}
		if (waited == 0 && !t->started) {
			rc = cli_fail(err);
			break;
		}
		if (waited++ >= CLI_TAIL_WAIT_S) {
			rc = cli_fail("papo serve did not come back in 60 s");
			break;
		}
		sleep(1);
	}
	free(t->shown);
	free(t->data);
	free(t);
	return rc;
}
