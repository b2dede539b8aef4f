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

enum node_kind {
	NODE_SEND = 1,       /* request: text, to, reply_to -> json result */
	NODE_STATUS,         /* request: -> json status */
	NODE_HISTORY,        /* request: limit, before, since, from -> json */
	NODE_READ,           /* request: text = ids shown to an agent, space-
	                      * separated: their authors get read receipts */
	NODE_EV_MESSAGE,     /* event: a message from another member */
	NODE_EV_SENT,        /* event: a message this member sent, for
	                      * watchers (the dashboard), not its agents */
	NODE_EV_RECEIPT,     /* event: a delivered/read receipt */
	NODE_EV_PRESENCE,    /* event: a member went online or offline */
	NODE_EV_ADDRS,       /* event: what the node advertises changed;
	                      * text is the invite to print from now on */
	NODE_ADMIN,          /* request: to = the member to make an admin
	                      * (the owner only) -> json */
	NODE_EV_ROOM,        /* event: who governs the room changed (an
	                      * admin made), or its key (an epoch) */
	NODE_ROTATE,         /* request: a new key epoch (owner or admin)
	                      * -> json */
	NODE_REMOVE,         /* request: to = the member to remove (owner or
	                      * admin): a new epoch without it -> json */
	NODE_EV_REFUSED,     /* event: the room's newest key was not given
	                      * to this member (an invite from before a key
	                      * change): text says why; the room stops */
	/* The rooms themselves (node.c), whatever room names: */
	NODE_ROOMS,          /* request: -> json {"rooms": [...], "default"} */
	NODE_JOIN,           /* request: text = an invite, name and about
	                      * this member's there -> json, the room */
	NODE_CREATE,         /* request: text = the room's name (NULL: the
	                      * derived one), name and about -> json, the
	                      * room and its "invite" */
	NODE_LEAVE,          /* request: room; limit 1: its files deleted,
	                      * else moved aside -> json */
	NODE_DEFAULT,        /* request: room becomes the default -> json */
	NODE_EV_ROOMS,       /* event: a room joined, made or left: json
	                      * as NODE_ROOMS answers */
	NODE_INVITE,         /* request: room -> json {"invite", "room",
	                      * "room_id"}, its invite with the addresses
	                      * this node is reached at now */
	/* Files (docs/FILES.md): */
	NODE_BLOB_ADD,       /* request: text = the path of a regular file
	                      * to share, read by the node as this process's
	                      * user; name = the name it is shown by (NULL:
	                      * the path's last part); about = its media
	                      * type (NULL: guessed from the name and the
	                      * first bytes); limit 1: text is a spool the
	                      * node removes once read (or on failure).
	                      * Done by a worker thread, never the node
	                      * loop -> json {"ref", "name", "size", "type"};
	                      * 400 not a regular file or unreadable, 413
	                      * over BLOB_SIZE_MAX or the room's quota, 507
	                      * the disk full */
	NODE_BLOB,           /* request: text = a reference -> json, the
	                      * file's state (docs/FILES.md, "A file's
	                      * state"); 404 when no message of the room
	                      * names it and it is not held here */
	NODE_FETCH,          /* request: as NODE_BLOB, and starts fetching
	                      * it when it is not here yet */
	NODE_EV_BLOB,        /* event: a file's state changed (fetch
	                      * started, progress at most 4 times a second,
	                      * done, failed, waiting for a holder): json
	                      * as NODE_BLOB answers */
	/* Search (README, "/api/search"): */
	NODE_SEARCH,         /* request: text = words ("a phrase",
	                      * prefix*; NULL: none), from, to, thread,
	                      * before, after_ts, files, limit, cursor ->
	                      * json {"messages": [message + "excerpt"],
	                      * "next": cursor or null}; 400 a bad query
	                      * or cursor, 404 no such member, 503 the
	                      * index unavailable */
	NODE_RENAME,         /* request: to = this member's new name, in
	                      * room (NULL or "": every room) -> json
	                      * {"name", "rooms": [{"id", "name", "was"}]} */
};

struct node_msg {
	enum node_kind kind;
	struct chan_link link;   /* in the channel it crosses by (node.c) */
	void *ctx;               /* the requester's; the node leaves it be */
	/* Request fields, owned by the message. */
	/* The room a request is for: its name, its id or the start of its
	 * id (4 characters at least); NULL or "": the default room, which
	 * is the only one, else the one set (NODE_DEFAULT). */
	char *room;
	/* Set by the node on every answer and event of a room: its id. */
	char room_id[PAPO_ROOMID_LEN + 1];
	char *name, *about;      /* join, create: this member's */
	char *text;
	char *to;                /* a member's name or id, or NULL */
	char *from;              /* history: only this member's messages */
	char reply_to[PAPO_MSGID_LEN + 1];
	/* send: the files the message names, a JSON array of references
	 * ("REF") or objects {"ref", "name", "type"} (name and type
	 * override those the file was added with); each a file this room
	 * holds (NODE_BLOB_ADD) or one a message of it named; NULL: none.
	 * At most ATTACH_MAX (node/wire/attach.h: 16). */
	char *files;
	/* history: with after set, the messages text names ("ID ID ...")
	 * then the last limit messages of the others that came after
	 * message after in the log ("" or an id the log no longer holds:
	 * its start), oldest first, instead of by time; the result says
	 * the newest message of the log ("last", any author's) and how
	 * many more there were ("more"). */
	int after_set;
	char after[PAPO_MSGID_LEN + 1];
	size_t limit;
	/* history: the newest messages before (before, before_id) in
	 * history's order (by time, then id; docs/RELIABILITY.md, "History
	 * order"); before_id "" pages by time alone.  The result's
	 * "earlier" is the cursor that goes on. */
	uint64_t before, since;
	char before_id[PAPO_MSGID_LEN + 1];
	/* search: only this message and its replies at any depth ("":
	 * any); only messages after this time (ms, 0: none); only those
	 * that name files; where the last page stopped (NULL: the first;
	 * "next" of the answer before). */
	char thread[PAPO_MSGID_LEN + 1];
	uint64_t after_ts;
	int files_only;
	char *cursor;
	int in_time;             /* search: the newest hits (before
	                          * before, before_id), oldest first, and
	                          * "earlier" to page back as history does */
	int person;              /* send: from the API (a person, the
	                          * dashboard), not an agent's MCP tool */
	int private;             /* send: sealed to `to`, read by it and
	                          * this member only (docs/PROTOCOL.md,
	                          * "Private messages") */
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

struct node_msg *node_msg_new(enum node_kind kind);
void node_msg_free(struct node_msg *m);
/* Answers m with an error: its code and message, pushed to out. */
void node_msg_fail(struct node_msg *m, struct chan *out, int code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
