/*
 * mcp_schema.h: MCP's tools declared (docs/MCP.md, "Tools"), one table
 * per tool in the manner of node/wire/frame_int.h's descriptors: the
 * tool's name and description, and each argument's name, kind, bounds
 * (from the named limits below), default, place in the tool's input
 * struct and description.  From a table come tools/list's entry (its
 * inputSchema built with cJSON, its descriptions quoting the limits)
 * and a call's arguments checked and read into the input struct, with
 * the tool error a model reads when one is wrong.  What no table says
 * (a rule between two arguments) stays in the tool's handler.
 *
 * Pure: no I/O, no clock, no threads; it includes nothing of MCP's, so
 * tests/test_mcp_schema.c links it alone.
 */
#ifndef PAPO_MCP_SCHEMA_H
#define PAPO_MCP_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "node/node.h"

/* The limits the tools take and their descriptions quote.  Those of the
 * node are mirrored here (server/ sees node/node.h alone), each naming
 * the node's own. */
#define MCP_HISTORY_DEFAULT 20       /* messages a history page holds */
#define MCP_HISTORY_MAX 500          /* node/room/history.c's HISTORY_MAX */
#define MCP_SEARCH_MAX 200           /* IX_LIMIT_MAX: hits a search page
                                      * holds */
#define MCP_QUERY_MAX 1024           /* IX_QUERY_MAX: bytes of a query */
#define MCP_CURSOR_MAX 64            /* bytes of a search's cursor */
#define MCP_TIME_MAX (1ull << 53)    /* ms since 1970, as JSON holds them */
#define MCP_WAIT_DEFAULT_S 30
#define MCP_WAIT_MAX_S 55
#define MCP_FETCH_DEFAULT_S 60
#define MCP_FETCH_MAX_S 3600
#define MCP_ATTACH_MAX 16            /* ATTACH_MAX: files one message names */
#define MCP_INLINE_MAX (1u << 20)    /* bytes of an inline attachment */
#define MCP_TEXT_MAX (256u << 10)    /* a text file fetch returns as text */
#define MCP_IMAGE_MAX (1u << 20)     /* an image, as an image */
#define MCP_BLOB_MAX (256u << 10)    /* anything else, as base64 */

/* What an argument is: its JSON type in the schema, how it is checked,
 * and what it is read into (at off in the tool's input struct). */
enum mcp_arg_kind {
	MA_STRING = 1,  /* "string", const char *: at most max bytes (0:
	                 * any length) */
	MA_MSGID,       /* "string", const char *: a message id, of
	                 * PAPO_MSGID_LEN characters */
	MA_INTEGER,     /* "integer", uint64_t: a whole number from min to
	                 * max */
	MA_TIME,        /* "integer", uint64_t: ms since 1970, 0 to
	                 * MCP_TIME_MAX */
	MA_SECONDS,     /* "number", double: seconds from min to max */
	MA_BOOLEAN,     /* "boolean", int: 0 or 1 */
	MA_ARRAY,       /* "array", const cJSON *: at most max entries, each
	                 * an object of the fields items lists (named in
	                 * the schema; the handler checks them) */
};

/* Argument flags. */
#define MA_REQUIRED 1u  /* in the schema's required list; a call without
                         * it is refused */
#define MA_HAS 2u       /* the int at has_off is set when it is given */

/*
 * An argument.  A description is text for the model; in it, ${max},
 * ${min} and ${default} stand for this argument's own, and ${NAME} for
 * one of the limits mcp_schema.c names (SEARCH_MAX, INLINE_MAX, ...),
 * so no limit is written twice.  hint says what the value is, for the
 * errors ("from must be a string: a member's name or id").
 */
struct mcp_arg {
	const char *name;
	enum mcp_arg_kind kind;
	unsigned flags;                /* MA_* */
	size_t off;                    /* of its value in the input struct */
	size_t has_off;                /* MA_HAS: of its int flag */
	uint64_t min, max;             /* see the kinds */
	uint64_t def;                  /* MA_INTEGER, MA_SECONDS: the value
	                                * when it is not given */
	const char *hint;
	const char *too_long;          /* MA_STRING: what to do instead,
	                                * said after the error, or NULL */
	const char *description;
	const struct mcp_arg *items;    /* MA_ARRAY: its objects' fields */
	size_t nitems;
};

struct mcp_tool_desc {
	const char *name;
	const char *description;       /* ${NAME} as in an argument's */
	const struct mcp_arg *args;    /* in the schema's order */
	size_t nargs;
};

#define MCP_ARGS(a) (a), (sizeof(a) / sizeof((a)[0]))

/* Each tool's input, as its table reads it: an argument not given reads
 * as NULL, 0, or its default. */
struct mcp_send_in {
	const char *text, *to, *reply_to, *room;
	const cJSON *attachments;
	int public;
};
struct mcp_wait_in {
	double timeout_s;
	const char *from, *room;
};
struct mcp_history_in {
	const char *query, *to, *thread, *cursor, *before_id, *from, *room;
	uint64_t after, limit, before, since;
	int has_after, files;
};
struct mcp_status_in {
	const char *room;
};
struct mcp_fetch_in {
	const char *ref, *path, *room;
	int overwrite;
	double timeout_s;
};
/* Room for any tool's input. */
union mcp_tool_in {
	struct mcp_send_in send;
	struct mcp_wait_in wait;
	struct mcp_history_in history;
	struct mcp_status_in status;
	struct mcp_fetch_in fetch;
};

extern const struct mcp_tool_desc mcp_send_desc, mcp_wait_desc,
    mcp_history_desc, mcp_status_desc, mcp_fetch_desc;
/* Every tool, in tools/list's order; NULL-terminated. */
extern const struct mcp_tool_desc *const mcp_tool_descs[];

/* d's entry of tools/list, {name, description, inputSchema}: a new
 * object, or NULL without memory or when a description names a limit
 * that is not known (the unit test sees to it that none does). */
cJSON *mcp_schema_tool(const struct mcp_tool_desc *d);
/* Checks args (an object; NULL: none given) against d: no argument d
 * does not list, each of its kind and within its bounds, the required
 * ones there; and reads them into in (d's input struct).  0, or -1 with
 * err saying what is wrong, for the model ("history: limit must be a
 * whole number from 1 to 500"). */
int mcp_schema_read(char err[PAPO_ERR_LEN], const struct mcp_tool_desc *d,
    const cJSON *args, void *in);
/* The string argument name as mcp_schema_read read it into in (NULL
 * when not given, or when d has no string argument name). */
const char *mcp_schema_str(const struct mcp_tool_desc *d, const void *in,
    const char *name);
/* The errors a handler gives in a case its table cannot say: the
 * argument name of d is wrong ("send: reply_to must be ..."), or is
 * needed ("send: text is missing: send takes ..."). */
void mcp_schema_bad(char err[PAPO_ERR_LEN], const struct mcp_tool_desc *d,
    const char *name);
void mcp_schema_missing(char err[PAPO_ERR_LEN],
    const struct mcp_tool_desc *d, const char *name);

#endif
