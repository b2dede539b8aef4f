/*
 * cmd_msg.c: the commands about the room's messages: papo say (with the
 * files it shares, each uploaded before the message names it), history
 * and tail, through the running daemon.  Main thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/api/api.h"
#include "server/cli/ask.h"
#include "server/cli/client.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_msg.h"
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
	else if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "papo: cannot read %s: %s\n", path,
		    strerror(errno));
		return CLI_ERROR;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "papo: %s is a directory: share a file\n",
		    path);
		goto out;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
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
	if (len > PAPO_BODY_MAX) {
		fprintf(stderr, "papo: the text is %zu bytes; at most %d (48 KiB) "
		    "are allowed\n", len, PAPO_BODY_MAX);
		goto out;
	}
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
		cJSON_AddItemToArray(refs, cJSON_CreateString(cli_str(one,
		    "ref")));
	}
	if ((req = cJSON_CreateObject()) == NULL ||
	    (len > 0 && cJSON_AddStringToObject(req, "text", msg) == NULL) ||
	    (o.nfiles > 0 && !cJSON_AddItemToObject(req, "files", refs)) ||
	    (o.to != NULL &&
	    cJSON_AddStringToObject(req, "to", o.to) == NULL) ||
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
		    "take: send it with fewer control characters\n", len, ctl,
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
		return cli_search(c, &o, n);
	}
	snprintf(path, sizeof(path), "/api/history?limit=%ld", n);
	if ((rc = cli_call(o.home, o.room, path, NULL, &ans, &text)) != CLI_OK)
		goto out;
	if (o.json) {
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

/* papo tail: the event stream, cut into events as they arrive. */
struct cli_tail {
	int json;
	char line[CLI_TAIL_LINE_MAX];
	size_t len;
	int toolong;
	char id[128];
	char event[32];
	char *data;          /* the event's data lines, joined */
	size_t datalen;
};

static void
cli_tail_event(struct cli_tail *t)
{
	cJSON *d;

	if (t->data == NULL)
		return;
	d = cJSON_Parse(t->data);
	if (t->json) {
		cJSON *o = cJSON_CreateObject();
		char *s;

		cJSON_AddStringToObject(o, "event", t->event[0] ? t->event :
		    "message");
		cJSON_AddStringToObject(o, "id", t->id);
		cJSON_AddItemToObject(o, "data", d != NULL ? d :
		    cJSON_CreateString(t->data));
		d = NULL;
		if ((s = cJSON_PrintUnformatted(o)) != NULL)
			printf("%s\n", s);
		cJSON_free(s);
		cJSON_Delete(o);
	} else if (d != NULL && strcmp(t->event, "message") == 0)
		cli_print_message(d);
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
	char path[1024];
	int rc, waited = 0;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if (cli_room_path(path, sizeof(path), "/api/events", o.room) == -1)
		return cli_fail("the room's name is too long");
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return cli_fail("out of memory");
	t->json = o.json;
	/* Follow until interrupted; when the daemon goes away, wait for it
	 * to come back (serve.json may name a new port) and resume. */
	for (;;) {
		struct client cl;

		if (client_open(err, o.home, &cl) == 0) {
			int r = client_stream(err, &cl, path,
			    t->id[0] != '\0' ? t->id : NULL, cli_tail_chunk, t);

			client_close(&cl);
			if (r == 0) {
				waited = 0;
				t->len = 0;
				continue;
			}
		}
		if (waited == 0 && t->id[0] == '\0') {
			rc = cli_fail(err);
			break;
		}
		if (waited++ >= CLI_TAIL_WAIT_S) {
			rc = cli_fail("papo serve did not come back in 60 s");
			break;
		}
		sleep(1);
	}
	free(t->data);
	free(t);
	return rc;
}
