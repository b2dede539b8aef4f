/*
 * msg.h: struct node_msg, what crosses between the node thread and the
 * rest of the program: requests in, answers and events out (node.h says
 * how they are handed over).  node/msg.c makes and frees them.
 */
#ifndef PAPO_MSG_H
#define PAPO_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "lib/chan.h"
#include "lib/err.h"
#include "node/papo.h"

/* A request's arguments are its kind's struct below (none: it has
 * none); events carry json alone, and the room's id. */
enum node_kind {
	NODE_SEND = 1,       /* request: node_send_args -> json result */
	NODE_STATUS,         /* request: -> json status */
	NODE_HISTORY,        /* request: node_history_args -> json */
	NODE_READ,           /* request: node_read_args -> json */
	NODE_EV_MESSAGE,     /* event: a message from another member */
	NODE_EV_SENT,        /* event: a message this member sent, for
	                      * watchers (the dashboard), not its agents */
	NODE_EV_RECEIPT,     /* event: a delivered/read receipt */
	NODE_EV_PRESENCE,    /* event: a member went online or offline */
	NODE_EV_ADDRS,       /* event: what the node advertises changed;
	                      * json's "invite" is the invite to print from
	                      * now on */
	NODE_ADMIN,          /* request: node_member_args, the member to
	                      * make an admin (the owner only) -> json */
	NODE_EV_ROOM,        /* event: who governs the room changed (an
	                      * admin made), or its key (an epoch) */
	NODE_ROTATE,         /* request: a new key epoch (owner or admin)
	                      * -> json */
	NODE_REMOVE,         /* request: node_member_args, the member to
	                      * remove (owner or admin): a new epoch
	                      * without it -> json */
	NODE_EV_REFUSED,     /* event: the room's newest key was not given
	                      * to this member (an invite from before a key
	                      * change): json {"error"} says why; the room
	                      * stops */
	/* The rooms themselves (node.c), whatever room names: */
	NODE_ROOMS,          /* request: -> json {"rooms": [...], "default"} */
	NODE_JOIN,           /* request: node_enter_args -> json, the room */
	NODE_CREATE,         /* request: node_enter_args -> json, the room
	                      * and its "invite" */
	NODE_LEAVE,          /* request: room, node_leave_args -> json */
	NODE_DEFAULT,        /* request: room becomes the default -> json */
	NODE_EV_ROOMS,       /* event: a room joined, made or left: json
	                      * as NODE_ROOMS answers */
	NODE_INVITE,         /* request: room -> json {"invite", "room",
	                      * "room_id"}, its invite with the addresses
	                      * this node is reached at now */
	/* Files (docs/FILES.md): */
	NODE_BLOB_ADD,       /* request: node_blob_add_args.  Done by a
	                      * worker thread, never the node loop -> json
	                      * {"ref", "name", "size", "type"}; 400 not a
	                      * regular file or unreadable, 413 over
	                      * BLOB_SIZE_MAX or the room's quota, 507 the
	                      * disk full */
	NODE_BLOB,           /* request: node_blob_args -> json, the file's
	                      * state (docs/FILES.md, "A file's state"); 404
	                      * when no message of the room names it and it
	                      * is not held here */
	NODE_FETCH,          /* request: as NODE_BLOB, and starts fetching
	                      * it when it is not here yet */
	NODE_EV_BLOB,        /* event: a file's state changed (fetch
	                      * started, progress at most 4 times a second,
	                      * done, failed, waiting for a holder): json
	                      * as NODE_BLOB answers */
	/* Search (README, "/api/search"): */
	NODE_SEARCH,         /* request: node_search_args -> json
	                      * {"messages": [message + "excerpt"], "next":
	                      * cursor or null}; 400 a bad query or cursor,
	                      * 404 no such member, 503 the index
	                      * unavailable */
	NODE_RENAME,         /* request: node_member_args, this member's new
	                      * name, in room (NULL or "": every room) ->
	                      * json {"name", "rooms": [{"id", "name",
	                      * "was"}]} */
	NODE_KIND_END        /* not a kind: the number of them */
};

/*
 * Each request kind's arguments, declared here beside its kind rather
 * than beside the feature that takes it: server/ fills them and may
 * include only node/node.h of node/, and this is the one header of
 * node/ that both sides of the channel read.  Strings are the
 * message's, freed by node_msg_free (msg.c's table says which each kind
 * owns).  A request reads its arguments through its accessor below
 * (node_args_send(m) and the rest), which stops the program when m is
 * of another kind: no kind reads another's silently.
 */

/* NODE_SEND. */
struct node_send_args {
	char *text;
	char *to;                /* a member's name or id, or NULL */
	char reply_to[PAPO_MSGID_LEN + 1];
	/* The files the message names, a JSON array of references ("REF")
	 * or objects {"ref", "name", "type"} (name and type override those
	 * the file was added with); each a file this room holds
	 * (NODE_BLOB_ADD) or one a message of it named; NULL: none.  At
	 * most ATTACH_MAX (node/wire/attach.h: 16). */
	char *files;
	int person;              /* from the API (a person, the dashboard),
	                          * not an agent's MCP tool */
	int private;             /* sealed to to, read by it and this member
	                          * only (docs/PROTOCOL.md, "Private
	                          * messages") */
};

/* NODE_HISTORY: the last limit messages (0: 20), only from's (a
 * member's name or id; NULL: anyone's), since since (ms). */
struct node_history_args {
	size_t limit;
	char *from;
	uint64_t since;
	/* The newest messages before (before, before_id) in history's order
	 * (by time, then id; docs/RELIABILITY.md, "History order");
	 * before_id "" pages by time alone.  The result's "earlier" is the
	 * cursor that goes on. */
	uint64_t before;
	char before_id[PAPO_MSGID_LEN + 1];
	/* With after_set, the messages ids names ("ID ID ...") then the
	 * last limit messages of the others that came after message after
	 * in the log ("" or an id the log no longer holds: its start),
	 * oldest first, instead of by time; the result says the newest
	 * message of the log ("last", any author's) and how many more
	 * there were ("more"). */
	int after_set;
	char after[PAPO_MSGID_LEN + 1];
	char *ids;
};

/* NODE_READ: ids = the ids shown to an agent, space-separated: their
 * authors get read receipts. */
struct node_read_args {
	char *ids;
};

/* NODE_SEARCH. */
struct node_search_args {
	char *text;              /* words ("a phrase", prefix*); NULL: none */
	char *from, *to;         /* members' names or ids, or NULL */
	char thread[PAPO_MSGID_LEN + 1];  /* this message and its replies at
	                                   * any depth ("": any) */
	uint64_t before;         /* as history's before, before_id */
	char before_id[PAPO_MSGID_LEN + 1];
	uint64_t after_ts;       /* only messages after this time (ms, 0:
	                          * none) */
	int files_only;          /* only those that name files */
	size_t limit;
	char *cursor;            /* where the last page stopped (NULL: the
	                          * first; "next" of the answer before) */
	int in_time;             /* the newest hits (before before,
	                          * before_id), oldest first, and "earlier"
	                          * to page back as history does */
};

/* NODE_ADMIN, NODE_REMOVE: the member (a name or id); NODE_RENAME: this
 * member's new name. */
struct node_member_args {
	char *name;
};

/* NODE_JOIN (text: the invite), NODE_CREATE (text: the room's name;
 * NULL: the derived one): name and about are this member's there. */
struct node_enter_args {
	char *text;
	char *name, *about;
};

/* NODE_LEAVE. */
struct node_leave_args {
	int delete;              /* the room's files deleted, else moved
	                          * aside */
};

/* NODE_BLOB_ADD. */
struct node_blob_add_args {
	char *path;              /* a regular file, read by the node as this
	                          * process's user */
	char *name;              /* shown by (NULL: the path's last part) */
	char *type;              /* its media type (NULL: guessed from the
	                          * name and the first bytes) */
	int spool;               /* path is a spool the node removes once
	                          * read (or on failure) */
};

/* NODE_BLOB, NODE_FETCH: a file's reference. */
struct node_blob_args {
	char *ref;
};

/* One member per argument struct; which one a message holds is its
 * kind's (the accessors below). */
union node_args {
	struct node_send_args send;
	struct node_history_args history;
	struct node_read_args read;
	struct node_search_args search;
	struct node_member_args member;
	struct node_enter_args enter;
	struct node_leave_args leave;
	struct node_blob_add_args blob_add;
	struct node_blob_args blob;
};

struct node_msg {
	enum node_kind kind;
	struct chan_link link;   /* in the channel it crosses by (node.c) */
	void *ctx;               /* the requester's; the node leaves it be */
	char *tag;               /* the requester's too, but owned (MCP: the
	                          * agent a history is read back for) */
	/* The room a request is for: its name, its id or the start of its
	 * id (4 characters at least); NULL or "": the default room, which
	 * is the only one, else the one set (NODE_DEFAULT).  Owned. */
	char *room;
	/* Set by the node on every answer and event of a room: its id. */
	char room_id[PAPO_ROOMID_LEN + 1];
	union node_args args;    /* a request's: read through the accessors */
	/* Result: code 0, or an HTTP-like status (400 bad input, 404 no
	 * such member or message, 413 too long, 429 limited, 500) with err
	 * saying why. */
	int code;
	char err[PAPO_ERR_LEN];
	/* With 429: which limit ("rate" or "damping") and the seconds
	 * after which a send may pass again. */
	const char *limited;
	unsigned retry_after_s;
	char *json;              /* result or event as JSON text */
};

/* A set of kinds, for node_msg_as. */
#define NODE_BIT(k) (1u << (k))
_Static_assert(NODE_KIND_END <= 32, "a set of kinds is 32 bits");

/* m, when its kind is one of kinds (NODE_BIT(k) | ...); else the
 * program stops, saying so. */
struct node_msg *node_msg_as(struct node_msg *m, unsigned kinds);

/* Each kind's arguments, checked against m's kind. */
static inline struct node_send_args *
node_args_send(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_SEND))->args.send;
}

static inline struct node_history_args *
node_args_history(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_HISTORY))->args.history;
}

static inline struct node_read_args *
node_args_read(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_READ))->args.read;
}

static inline struct node_search_args *
node_args_search(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_SEARCH))->args.search;
}

/* NODE_ADMIN, NODE_REMOVE and NODE_RENAME. */
static inline struct node_member_args *
node_args_member(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_ADMIN) | NODE_BIT(NODE_REMOVE) |
	    NODE_BIT(NODE_RENAME))->args.member;
}

static inline struct node_enter_args *
node_args_enter(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_JOIN) |
	    NODE_BIT(NODE_CREATE))->args.enter;
}

static inline struct node_leave_args *
node_args_leave(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_LEAVE))->args.leave;
}

static inline struct node_blob_add_args *
node_args_blob_add(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_BLOB_ADD))->args.blob_add;
}

static inline struct node_blob_args *
node_args_blob(struct node_msg *m)
{
	return &node_msg_as(m, NODE_BIT(NODE_BLOB) |
	    NODE_BIT(NODE_FETCH))->args.blob;
}

struct node_msg *node_msg_new(enum node_kind kind);
void node_msg_free(struct node_msg *m);
/* Answers m with an error: its code and message, pushed to out. */
void node_msg_fail(struct node_msg *m, struct chan *out, int code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
