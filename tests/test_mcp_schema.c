/*
 * test_mcp_schema.c: MCP's tools as their tables declare them
 * (server/mcp/mcp_schema.c).  For every tool: its tools/list entry is
 * valid JSON holding every argument of its table, of its kind's type,
 * with its description (its limits quoted from the table, none copied
 * into the text), and the required list; a value of the wrong type for
 * any argument, a missing required one, one past its bound are refused,
 * null is taken as absent.  Then the exact errors a model reads, and
 * what good arguments read as.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "server/mcp/mcp_schema.h"

static const char *const types[] = {
	[MA_STRING] = "string", [MA_MSGID] = "string",
	[MA_INTEGER] = "integer", [MA_TIME] = "integer",
	[MA_SECONDS] = "number", [MA_BOOLEAN] = "boolean",
	[MA_ARRAY] = "array",
};

/* The arguments of the last call, which what it read points into. */
static cJSON *last;

/* args read by d: the error, or "" when taken. */
static const char *
call(const struct mcp_tool_desc *d, const char *json, union mcp_tool_in *in)
{
	static char err[PAPO_ERR_LEN];
	int rc;

	cJSON_Delete(last);
	last = json != NULL ? cJSON_Parse(json) : NULL;
	CHECK(json == NULL || last != NULL);
	err[0] = '\0';
	rc = mcp_schema_read(err, d, last, in);
	CHECK((rc == 0) == (err[0] == '\0'));
	return err;
}

/* An object holding the required arguments of d, with good values. */
static cJSON *
required(const struct mcp_tool_desc *d)
{
	cJSON *o = cJSON_CreateObject();

	for (size_t i = 0; i < d->nargs; i++)
		if (d->args[i].flags & MA_REQUIRED)
			cJSON_AddStringToObject(o, d->args[i].name, "abcdefghjk");
	return o;
}

/* d read with args (taken) and name set to v (taken): the error. */
static const char *
call_with(const struct mcp_tool_desc *d, const char *name, cJSON *v)
{
	static char err[PAPO_ERR_LEN];
	cJSON *args = required(d);
	union mcp_tool_in in;

	cJSON_DeleteItemFromObjectCaseSensitive(args, name);
	cJSON_AddItemToObject(args, name, v);
	err[0] = '\0';
	mcp_schema_read(err, d, args, &in);
	cJSON_Delete(args);
	return err;
}

static int
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A value that a of kind does not take. */
static cJSON *
wrong(const struct mcp_arg *a)
{
	switch (a->kind) {
	case MA_STRING:
	case MA_MSGID:
		return cJSON_CreateNumber(7);
	case MA_ARRAY:
		return cJSON_CreateString("x");
	default:
		return cJSON_CreateString("seven");
	}
}

/* Its own limits are not written in a's raw description as digits: the
 * description says ${max} and ${default}. */
static int
quotes_digits(const struct mcp_arg *a)
{
	char n[32];

	if (a->max > 0 && a->kind != MA_TIME) {
		snprintf(n, sizeof(n), "%llu", (unsigned long long)a->max);
		if (strstr(a->description, n) != NULL)
			return 1;
	}
	if (a->def > 0) {
		snprintf(n, sizeof(n), "%llu", (unsigned long long)a->def);
		if (strstr(a->description, n) != NULL)
			return 1;
	}
	return 0;
}

static void
check_props(const cJSON *props, const struct mcp_arg *args, size_t n)
{
	const cJSON *p, *t, *desc;

	CHECK(cJSON_IsObject(props));
	CHECK_EQ_INT(cJSON_GetArraySize(props), n);
	for (size_t i = 0; i < n; i++) {
		const struct mcp_arg *a = &args[i];

		p = cJSON_GetObjectItemCaseSensitive(props, a->name);
		if (p == NULL)
			fprintf(stderr, "no property %s\n", a->name);
		CHECK(cJSON_IsObject(p));
		/* In the table's order. */
		CHECK(cJSON_GetArrayItem(props, (int)i) == p);
		t = cJSON_GetObjectItemCaseSensitive(p, "type");
		CHECK(cJSON_IsString(t));
		CHECK_EQ_STR(cJSON_IsString(t) ? t->valuestring : NULL,
		    types[a->kind]);
		desc = cJSON_GetObjectItemCaseSensitive(p, "description");
		CHECK(cJSON_IsString(desc) && desc->valuestring[0] != '\0' &&
		    strstr(desc->valuestring, "${") == NULL);
		CHECK(!quotes_digits(a));
		if (a->kind == MA_ARRAY) {
			const cJSON *mx = cJSON_GetObjectItemCaseSensitive(p,
			    "maxItems");
			const cJSON *items = cJSON_GetObjectItemCaseSensitive(p,
			    "items");

			CHECK(cJSON_IsNumber(mx) && mx->valuedouble ==
			    (double)a->max);
			check_props(cJSON_GetObjectItemCaseSensitive(items,
			    "properties"), a->items, a->nitems);
		}
	}
}

/* Every tool: its entry, and each argument refused when wrong. */
static void
test_every_tool(void)
{
	size_t ntools = 0;

	for (const struct mcp_tool_desc *const *dp = mcp_tool_descs;
	    *dp != NULL; dp++) {
		const struct mcp_tool_desc *d = *dp;
		cJSON *t = mcp_schema_tool(d), *back, *req;
		const cJSON *in, *name, *desc;
		char *text = t != NULL ? cJSON_PrintUnformatted(t) : NULL;
		char prefix[128];
		size_t nreq = 0;

		ntools++;
		CHECK(text != NULL);
		/* What tools/list sends is JSON, read back as it was. */
		back = text != NULL ? cJSON_Parse(text) : NULL;
		CHECK(back != NULL && cJSON_Compare(back, t, 1));
		name = cJSON_GetObjectItemCaseSensitive(back, "name");
		CHECK_EQ_STR(cJSON_IsString(name) ? name->valuestring : NULL,
		    d->name);
		desc = cJSON_GetObjectItemCaseSensitive(back, "description");
		CHECK(cJSON_IsString(desc) && strstr(desc->valuestring, "${") ==
		    NULL);
		in = cJSON_GetObjectItemCaseSensitive(back, "inputSchema");
		CHECK_EQ_STR(cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(in, "type")), "object");
		check_props(cJSON_GetObjectItemCaseSensitive(in, "properties"),
		    d->args, d->nargs);
		req = cJSON_GetObjectItemCaseSensitive(in, "required");
		for (size_t i = 0; i < d->nargs; i++) {
			const struct mcp_arg *a = &d->args[i];
			const char *e;
			cJSON *v;

			if (a->flags & MA_REQUIRED) {
				v = cJSON_GetArrayItem(req, (int)nreq++);
				CHECK_EQ_STR(cJSON_GetStringValue(v), a->name);
				/* Missing: said so. */
				snprintf(prefix, sizeof(prefix), "%s: %s is "
				    "missing: %s takes %s", d->name, a->name,
				    d->name, a->name);
				CHECK(starts(call_with(d, a->name,
				    cJSON_CreateNull()), prefix));
			} else
				CHECK_EQ_STR(call_with(d, a->name,
				    cJSON_CreateNull()), "");
			/* The wrong type: named, with what it must be. */
			snprintf(prefix, sizeof(prefix), "%s: %s must be ",
			    d->name, a->name);
			e = call_with(d, a->name, wrong(a));
			if (!starts(e, prefix))
				fprintf(stderr, "%s.%s: '%s'\n", d->name, a->name,
				    e);
			CHECK(starts(e, prefix));
			/* Its bound: taken, and one past it refused. */
			switch (a->kind) {
			case MA_INTEGER:
			case MA_SECONDS:
				CHECK_EQ_STR(call_with(d, a->name,
				    cJSON_CreateNumber((double)a->max)), "");
				CHECK(starts(call_with(d, a->name,
				    cJSON_CreateNumber((double)a->max + 1)),
				    prefix));
				if (a->min > 0)
					CHECK(starts(call_with(d, a->name,
					    cJSON_CreateNumber((double)a->min -
					    1)), prefix));
				break;
			case MA_STRING:
				if (a->max > 0) {
					char *s = malloc(a->max + 2);

					memset(s, 'a', a->max + 1);
					s[a->max + 1] = '\0';
					snprintf(prefix, sizeof(prefix), "%s: %s "
					    "is %llu bytes; at most %llu are "
					    "allowed", d->name, a->name,
					    (unsigned long long)a->max + 1,
					    (unsigned long long)a->max);
					CHECK(starts(call_with(d, a->name,
					    cJSON_CreateString(s)), prefix));
					s[a->max] = '\0';
					CHECK_EQ_STR(call_with(d, a->name,
					    cJSON_CreateString(s)), "");
					free(s);
				}
				break;
			case MA_MSGID:
				CHECK_EQ_STR(call_with(d, a->name,
				    cJSON_CreateString("abcdefghjk")), "");
				CHECK(starts(call_with(d, a->name,
				    cJSON_CreateString("abcdefghjkm")), prefix));
				break;
			case MA_ARRAY: {
				cJSON *arr = cJSON_CreateArray();

				for (uint64_t k = 0; k < a->max; k++)
					cJSON_AddItemToArray(arr,
					    cJSON_CreateObject());
				CHECK_EQ_STR(call_with(d, a->name,
				    cJSON_Duplicate(arr, 1)), "");
				cJSON_AddItemToArray(arr, cJSON_CreateObject());
				snprintf(prefix, sizeof(prefix), "%s: %llu %s; at "
				    "most %llu are allowed", d->name,
				    (unsigned long long)a->max + 1, a->name,
				    (unsigned long long)a->max);
				CHECK_EQ_STR(call_with(d, a->name, arr), prefix);
				break;
			}
			default:
				break;
			}
		}
		CHECK_EQ_INT(cJSON_GetArraySize(req), nreq);
		free(text);
		cJSON_Delete(back);
		cJSON_Delete(t);
	}
	CHECK_EQ_INT(ntools, 5);
}

/* The errors as a model reads them, word for word: a call's arguments
 * and what they get (long ones are made in test_errors). */
static const struct {
	const struct mcp_tool_desc *d;
	const char *args;
	const char *err;
} errors[] = {
	{ &mcp_send_desc, "{\"text\":7}",
	  "send: text must be a string of at most 49152 bytes: the message" },
	{ &mcp_send_desc, "{\"text\":\"x\",\"to\":[\"bo\"]}",
	  "send: to must be a string: a member's name or id" },
	{ &mcp_send_desc, "{\"text\":\"x\",\"reply_to\":\"zz\"}",
	  "send: reply_to must be a message id of 10 characters: the one "
	  "this answers, as history and wait show them" },
	{ &mcp_send_desc, "{\"room\":5}",
	  "send: room must be a string: a room's name or id (or 4 "
	  "characters or more of its id), as status lists them" },
	{ &mcp_send_desc, "{\"text\":\"x\",\"attachments\":\"x\"}",
	  "send: attachments must be an array of at most 16 items: files, "
	  "each {\"path\": \"/abs/path\"} or {\"name\", \"data\" (base64)}" },
	{ &mcp_send_desc, "{\"text\":\"x\",\"sender\":\"bo\"}",
	  "unknown argument 'sender': send takes text, to, reply_to, "
	  "attachments, public, room" },
	{ &mcp_wait_desc, "{\"timeout_s\":56}",
	  "wait: timeout_s must be a number of seconds from 0 to 55: call "
	  "wait again to wait longer" },
	{ &mcp_wait_desc, "{\"timeout_s\":\"soon\"}",
	  "wait: timeout_s must be a number of seconds from 0 to 55: call "
	  "wait again to wait longer" },
	{ &mcp_wait_desc, "{\"from\":7}",
	  "wait: from must be a string: a member's name or id" },
	{ &mcp_wait_desc, "{\"timeout\":5}",
	  "unknown argument 'timeout': wait takes timeout_s, from, room" },
	{ &mcp_history_desc, "{\"limit\":0}",
	  "history: limit must be a whole number from 1 to 500" },
	{ &mcp_history_desc, "{\"limit\":501}",
	  "history: limit must be a whole number from 1 to 500" },
	{ &mcp_history_desc, "{\"limit\":1.5}",
	  "history: limit must be a whole number from 1 to 500" },
	{ &mcp_history_desc, "{\"limit\":1e300}",
	  "history: limit must be a whole number from 1 to 500" },
	{ &mcp_history_desc, "{\"since\":\"yesterday\"}",
	  "history: since must be a whole number: ms since 1970" },
	{ &mcp_history_desc, "{\"after\":-1}",
	  "history: after must be a whole number: ms since 1970" },
	{ &mcp_history_desc, "{\"files\":1}",
	  "history: files must be true or false" },
	{ &mcp_history_desc, "{\"before_id\":\"abc\"}",
	  "history: before_id must be a message id of 10 characters: given "
	  "with before, the \"earlier\" of the page before" },
	{ &mcp_status_desc, "{\"verbose\":true}",
	  "unknown argument 'verbose': status takes room" },
	{ &mcp_fetch_desc, "{}",
	  "fetch: ref is missing: fetch takes ref (a file's ref or uri, from "
	  "its message's files), and optionally path, overwrite, timeout_s "
	  "and room" },
	{ &mcp_fetch_desc, NULL,
	  "fetch: ref is missing: fetch takes ref (a file's ref or uri, from "
	  "its message's files), and optionally path, overwrite, timeout_s "
	  "and room" },
	{ &mcp_fetch_desc, "{\"ref\":5}",
	  "fetch: ref must be a string: a file's ref or uri, from its "
	  "message's files" },
	{ &mcp_fetch_desc, "{\"ref\":\"r\",\"timeout_s\":3601}",
	  "fetch: timeout_s must be a number of seconds from 0 to 3600" },
	{ &mcp_fetch_desc, "{\"ref\":\"r\",\"overwrite\":\"yes\"}",
	  "fetch: overwrite must be true or false" },
};

static void
test_errors(void)
{
	union mcp_tool_in in;
	char err[PAPO_ERR_LEN], *big;

	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		CHECK_EQ_STR(call(errors[i].d, errors[i].args, &in),
		    errors[i].err);
	/* Over the limit, by a byte. */
	big = malloc(PAPO_BODY_MAX + 16);
	snprintf(big, PAPO_BODY_MAX + 16, "{\"text\":\"%0*d\"}",
	    PAPO_BODY_MAX + 1, 0);
	CHECK_EQ_STR(call(&mcp_send_desc, big, &in), "send: text is 49153 "
	    "bytes; at most 49152 are allowed: share a longer text as a file "
	    "(attachments)");
	free(big);
	big = malloc(MCP_QUERY_MAX + 32);
	snprintf(big, MCP_QUERY_MAX + 32, "{\"query\":\"%0*d\"}",
	    MCP_QUERY_MAX + 1, 0);
	CHECK_EQ_STR(call(&mcp_history_desc, big, &in), "history: query is "
	    "1025 bytes; at most 1024 are allowed");
	free(big);
	/* The handlers' own, made from the tables. */
	mcp_schema_missing(err, &mcp_send_desc, "text");
	CHECK_EQ_STR(err, "send: text is missing: send takes text (the "
	    "message), and optionally to, reply_to, attachments, public and "
	    "room");
	mcp_schema_bad(err, &mcp_fetch_desc, "path");
	CHECK_EQ_STR(err, "fetch: path must be a string: an absolute path to "
	    "save the file to");
}

/* Good arguments, and the defaults of those left out. */
static void
test_reads(void)
{
	union mcp_tool_in in;

	CHECK_EQ_STR(call(&mcp_history_desc, NULL, &in), "");
	CHECK_EQ_INT(in.history.limit, MCP_HISTORY_DEFAULT);
	CHECK(in.history.query == NULL && in.history.room == NULL &&
	    !in.history.has_after && !in.history.files &&
	    in.history.before == 0);
	CHECK_EQ_STR(call(&mcp_history_desc, "{\"limit\":500,\"after\":0,"
	    "\"files\":true,\"query\":\"hi\",\"before\":9007199254740992,"
	    "\"room\":\"*\",\"from\":null}", &in), "");
	CHECK_EQ_INT(in.history.limit, 500);
	CHECK(in.history.has_after && in.history.after == 0);
	CHECK(in.history.files);
	CHECK_EQ_STR(in.history.query, "hi");
	CHECK(in.history.before == 1ull << 53);
	CHECK(in.history.from == NULL);
	CHECK_EQ_STR(mcp_schema_str(&mcp_history_desc, &in, "room"), "*");
	CHECK(mcp_schema_str(&mcp_history_desc, &in, "limit") == NULL);
	CHECK(mcp_schema_str(&mcp_history_desc, &in, "nope") == NULL);

	CHECK_EQ_STR(call(&mcp_wait_desc, "{}", &in), "");
	CHECK(in.wait.timeout_s == MCP_WAIT_DEFAULT_S && in.wait.from == NULL);
	CHECK_EQ_STR(call(&mcp_wait_desc, "{\"timeout_s\":0.5,\"from\":\"bo\"}",
	    &in), "");
	CHECK(in.wait.timeout_s == 0.5);
	CHECK_EQ_STR(in.wait.from, "bo");

	CHECK_EQ_STR(call(&mcp_fetch_desc, "{\"ref\":\"r\"}", &in), "");
	CHECK(in.fetch.timeout_s == MCP_FETCH_DEFAULT_S && !in.fetch.overwrite);
	CHECK_EQ_STR(in.fetch.ref, "r");

	CHECK_EQ_STR(call(&mcp_send_desc, "{\"text\":\"hi\",\"reply_to\":"
	    "\"abcdefghjk\",\"attachments\":[]}", &in), "");
	CHECK_EQ_STR(in.send.text, "hi");
	CHECK_EQ_STR(in.send.reply_to, "abcdefghjk");
	CHECK(cJSON_IsArray(in.send.attachments));
	CHECK(in.send.to == NULL);
}

/* The descriptions quote the limits from the constants. */
static void
test_descriptions(void)
{
	cJSON *t = mcp_schema_tool(&mcp_history_desc);
	cJSON *f = mcp_schema_tool(&mcp_fetch_desc);
	cJSON *s = mcp_schema_tool(&mcp_send_desc);
	const cJSON *p;

	p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(t, "inputSchema"), "properties"),
	    "limit");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p,
	    "description")), "How many, default 20, at most 500 (a search: "
	    "200).");
	p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(s, "inputSchema"), "properties"),
	    "text");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p,
	    "description")), "The message, at most 49152 bytes of UTF-8.");
	CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f,
	    "description")), "text files up to 256 KiB as text, images up to "
	    "1 MiB as an image, others up to 256 KiB as base64") != NULL);
	cJSON_Delete(t);
	cJSON_Delete(f);
	cJSON_Delete(s);
}

int
main(void)
{
	test_every_tool();
	test_errors();
	test_reads();
	test_descriptions();
	cJSON_Delete(last);
	return check_exit();
}
