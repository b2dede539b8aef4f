/*
 * mcp_int.h: what MCP's own files share, and nothing else includes.
 * They call one way, each only the ones after it: mcp.c (the transport,
 * initialize, the 2026-07-28 checks, the method table), mcp_resources.c
 * (history resources, subscriptions/listen) and mcp_tools.c (the tool
 * table, send, history, status), neither calling the other; mcp_files.c
 * (attachments, the fetch tool, the files' resources); mcp_ask.c
 * (a question to the node, answered as a tool or resource result),
 * mcp_wake.c (waking an idle agent), mcp_deliver.c (the node's messages
 * and room lists handed out, pushes), mcp_wait.c (the wait tool, answers
 * in flight), mcp_store.c (agents.json), mcp_agent.c (agents, their
 * queues and positions, read receipts), mcp_room.c (the rooms served, a
 * room argument resolved), mcp_session.c (sessions, their streams,
 * events kept for replay), mcp_reply.c (JSON-RPC texts answered on a
 * request, declared in mcp_reply.h), mcp_rpc.c (JSON-RPC parsed, and
 * its texts: pure, declared in mcp_rpc.h) and mcp_schema.c (the tools
 * declared, their schemas made and arguments read, declared in
 * mcp_schema.h); those three headers include nothing of MCP's.  A lower
 * file * reaches a higher one only through a pointer mcp_new sets in struct mcp
 * (wait_end, wake_check).  The rest of server/ sees only mcp.h.  All of
 * it belongs to the main thread, and none of it may block.
 */
#ifndef PAPO_MCP_INT_H
#define PAPO_MCP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "lib/loop.h"
#include "node/node.h"
#include "server/http/http.h"
#include "server/mcp/mcp.h"
#include "server/mcp/mcp_reply.h"
#include "server/mcp/mcp_rpc.h"
#include "server/mcp/mcp_schema.h"

#define MCP_CHANNEL "claude/channel"  /* papo's pushes, as Claude Code
                                      * names them */
#define MCP_HISTORY_URI "papo://room/history"
/* A room's own history: papo://rooms/ID/history. */
#define MCP_ROOMS_URI "papo://rooms/"
#define MCP_ROOMS_URI_END "/history"
/* A file a message of a room names: papo://rooms/ID/files/REF. */
#define MCP_FILES_URI "/files/"
#define MCP_FILE_URI_MAX (sizeof(MCP_ROOMS_URI) + PAPO_ROOMID_LEN + \
	sizeof(MCP_FILES_URI) + 64)
#define MCP_SESSIONS_MAX 4096        /* 2025 sessions at once */
#define MCP_KEEP 256                 /* events kept per session to resume */
#define MCP_UNSEEN_MAX 500           /* messages queued for a session's wait */
#define MCP_PROGRESS_NS (10ull * NS_PER_S)
#define MCP_HEARTBEAT_NS (25ull * NS_PER_S)  /* comment on idle streams */
#define MCP_TTL_MS 600000            /* how long lists may be cached */

struct mcp_session;
struct mcp_wait;                     /* a wait in progress: mcp_wait.c's */
struct mcp_text;                     /* an event's text: mcp_session.c's */
struct mcp_slot;                     /* a replay ring's event: mcp_session.c's */
struct mcp_waker;                    /* a /api/wake poll: mcp_wake.c's */
struct mcp_fetch;                    /* a file fetched: mcp_files.c's */

/* A room the daemon is in, as the node's last list said (mcp_rooms). */
struct mcp_room {
	char id[PAPO_ROOMID_LEN + 1];
	char name[PAPO_NAME_MAX + 1];
	char last[PAPO_MSGID_LEN + 1];   /* its log's newest message known */
};

/* What a subscriptions/listen stream asked for (and was granted). */
#define MCP_WANT_CHANNEL 0x1         /* notifications/claude/channel */
#define MCP_WANT_HISTORY 0x2         /* resources/updated of the history */

/*
 * A stream of a session: a GET stream (sub NULL), which gets what the
 * session asked for, with event ids; or the answer to a
 * subscriptions/listen request (sub its id), which gets what want says,
 * each notification tagged with sub, and ends with a result.
 */
struct mcp_stream {
	LIST_ENTRY(mcp_stream) entry;
	struct http_stream *st;
	struct mcp_session *s;
	cJSON *sub;
	unsigned want;
	/* A listen stream's papo://rooms/ID/history subscriptions: the
	 * rooms' ids (NULL: none). */
	char (*rooms)[PAPO_ROOMID_LEN + 1];
	size_t nrooms;
};

/*
 * An answer on its way that gives messages to an agent (docs/MCP.md,
 * "Delivery"): they count as given (read receipts, and out of the
 * session's queue) once the connection took the whole answer, and a
 * wait's go back to the head of the queue when it did not.
 */
struct mcp_flight {
	LIST_ENTRY(mcp_flight) entry;   /* in m->flights */
	struct mcp *m;                  /* NULL once mcp_free ran */
	struct mcp_agent *a;            /* whose; NULL once mcp_free ran */
	struct mcp_msg **msgs;          /* a wait's, given back if unsent */
	size_t n;
	char *ids;                      /* "ID ID ..." of what it gives */
};

struct mcp_session {
	TAILQ_ENTRY(mcp_session) entry; /* m->sessions, least recently used
	                                 * first */
	struct mcp *m;
	char id[33];                 /* "" for a 2026-07-28 request's */
	char proto[16];
	int rev;                     /* MCP_REV_*: proto, in order */
	int modern;                  /* one 2026-07-28 request's: no id, it
	                              * ends when its request does */
	int closing;                 /* being freed */
	struct mcp_agent *a;         /* the agent it serves */
	int channels;                /* MCP_PUSH_*: what a push is to it */
	int level;                   /* index in mcp_levels, -1: none set */
	int subscribed;              /* to papo://room/history */
	char (*subs)[PAPO_ROOMID_LEN + 1];  /* rooms whose papo://rooms/ID/
	                              * history it subscribed to */
	size_t nsubs;
	/* The room it is bound to (?room=), or "": every room. */
	char room[PAPO_ROOMID_LEN + 1];
	char room_name[PAPO_NAME_MAX + 1];
	uint64_t last;               /* when it was last used (loop_now_ns) */
	uint64_t seq;                /* event ids */
	struct mcp_slot *ring;       /* MCP_KEEP events written to its GET
	                              * streams; NULL until one opened */
	LIST_HEAD(, mcp_stream) streams;
	struct mcp_wait *wait;
};

/*
 * A room message from another member, parsed once and shared by every
 * queue and answer that holds it (mcp_deliver.c makes them).
 */
struct mcp_msg {
	unsigned refs;
	uint64_t order;              /* arrival on this daemon: room order */
	cJSON *json;
	const char *id;              /* in json */
	char room[PAPO_ROOMID_LEN + 1];  /* the id of its room */
};

/* What a push on a session's streams is (docs/MCP.md, "Delivery"). */
#define MCP_PUSH_NONE 0              /* nothing: the session did not ask */
#define MCP_PUSH_ASKED 1             /* shown, maybe: ?channels=on only;
                                      * the message stays for wait */
#define MCP_PUSH_GIVES 2             /* given: the client declared it
                                      * takes claude/channel */

#define MCP_AGENTS_MAX 64            /* agents a daemon keeps */

/*
 * An agent that talks to this daemon, whatever its sessions: the
 * daemon's own ("" : every client that names none), or one named by
 * ?agent=NAME (papo mcp --agent NAME).  Each message from another member
 * is given to each agent once.  What it has not been given yet is its
 * queue (and the answers in flight); that and the newest message it has
 * seen are kept in agents.json, so a restart loses nothing of it.
 */
struct mcp_agent {
	LIST_ENTRY(mcp_agent) entry; /* m->agents */
	struct mcp *m;
	char name[MCP_AGENT_MAX + 1];
	struct mcp_msg **queue;      /* not given yet, oldest first */
	size_t nqueue, capqueue;
	/* The queue's messages by id, so that one is queued once without a
	 * scan: open addressing, a power of two at least twice capqueue. */
	struct mcp_msg **byid;
	size_t capbyid;
	uint64_t dropped;            /* let go from a full queue */
	/* Where it is in each room: the newest message queued or given to
	 * it, per room id (a message of one room never moves another's). */
	struct mcp_pos {
		char room[PAPO_ROOMID_LEN + 1];
		char seen[PAPO_MSGID_LEN + 1];   /* "": none yet */
		size_t queued;       /* its messages in the queue: the
		                      * cap's count, without a scan */
		int restoring;       /* 1: read back from the log; 2: where
		                      * the log ends is being learnt */
	} pos[PAPO_ROOMS_MAX];
	size_t npos;
	uint64_t active;             /* when a wait of it last began or
	                              * ended, or a history gave (loop ns) */
	/* Waking it (docs/MCP.md, "Waking an idle agent"): a burst is a run
	 * of messages that found it idle; each is woken once. */
	uint64_t burst, woken;
	uint64_t wake_ms;            /* when it was last woken (wall ms) */
	char wake_by[16];            /* by what: "inbox", "hook" */
	int wake_taken;              /* a wait or history followed */
	/* mcp_message's, for the message at hand: a pending wait of one
	 * of its sessions takes it; a push gave it. */
	int waiting, given;
	LIST_HEAD(, mcp_waker) wakers;
};

struct mcp {
	struct loop *loop;
	struct node *node;
	TAILQ_HEAD(mcp_sessions, mcp_session) sessions;
	size_t nsessions;            /* of 2025 (with an id) */
	size_t nstreams;             /* GET and listen streams open */
	uint64_t idle_ns;            /* a 2025 session unused this long ends */
	uint64_t order;              /* messages seen */
	struct loop_timer *heartbeat;
	struct loop_timer *expiry;
	LIST_HEAD(, mcp_flight) flights;
	cJSON *tools;                /* tools/list's, made once from
	                              * mcp_schema.c's tables */
	LIST_HEAD(, mcp_agent) agents;
	char agents_path[4096];      /* $PAPO_HOME/agents.json */
	struct mcp_room rooms[PAPO_ROOMS_MAX];   /* the node's list */
	size_t nrooms;
	char dflt[PAPO_ROOMID_LEN + 1];  /* the default room's id, or "" */
	cJSON *file;                 /* agents.json as read, until the rooms
	                              * are known (mcp_rooms) */
	int loaded;                  /* the agents' positions were read back */
	struct loop_timer *save;     /* agents.json is written soon */
	int dirty;                   /* and save is armed */
	uint64_t restored;           /* orders of messages read back */
	struct loop_timer *waking;   /* idle agents are looked at */
	uint64_t waking_at;          /* when it is armed for (0: not) */
	/* The two calls up, set by mcp_new: a session that ends answers its
	 * pending wait (mcp_wait.c's mcp_wait_end, for mcp_session.c), and
	 * a change for an agent (a message queued, a wait over, its queue
	 * read back) may wake it (mcp_wake.c's mcp_wake_check, for
	 * mcp_deliver.c and mcp_wait.c). */
	LIST_HEAD(, mcp_fetch) fetches;   /* mcp_files.c's, in progress */
	void (*wait_end)(struct mcp_wait *w, struct mcp_msg **msgs, size_t n);
	void (*wake_check)(struct mcp_agent *a);
};

/* mcp_room.c: the rooms MCP serves. */

/* The room of id, or NULL when the daemon is not (or no more) in it. */
struct mcp_room *mcp_room_get(struct mcp *m, const char *id);
/*
 * A session bound to a room by /mcp?room= sees that room alone: bound is
 * its id (a session's room), "" for a session that sees every room.
 * The room sel (an id, a name, 4 characters or more of an id) names
 * among those seen, or NULL with err saying why and naming them.
 */
struct mcp_room *mcp_room_find(struct mcp *m, const char *bound,
    const char *sel, char err[PAPO_ERR_LEN]);
/* "name (idprefix), ..." of every room seen, for errors. */
void mcp_room_names(const struct mcp *m, const char *bound, char *out,
    size_t len);
/* Takes the node's list of rooms (NODE_EV_ROOMS's JSON, parsed). */
void mcp_room_update(struct mcp *m, const cJSON *list);
/* Adds "room" (its name) and "room_id" to a message's json when absent,
 * and mcp_room_files's URIs. */
void mcp_room_tag(struct mcp *m, cJSON *json, const char *id);
/* Adds "uri" (papo://rooms/ID/files/REF) to each of the message json's
 * "files" of room id. */
void mcp_room_files(cJSON *json, const char *id);
/* The rooms seen as status lists them (a new array). */
cJSON *mcp_room_list(const struct mcp *m, const char *bound);
/* Whether s is bound to a room this daemon has left: 1, with msg saying
 * so for what (a tool's name, a method's), else 0. */
int mcp_room_left(const struct mcp_session *s, const char *what,
    char *msg, size_t len);

/* mcp_session.c: shared texts, sessions and their streams. */

/* Answers r with a tool error (isError) saying msg: a mistake in a
 * tool's arguments, which the model corrects (not -32602). */
void mcp_tool_error(struct mcp_session *s, struct http_req *r,
    const cJSON *id, const char *msg);

/* text (freed) as a shared event text with one ref; NULL on none. */
struct mcp_text *mcp_text_new(char *text);
/* Drops a ref of t; t NULL is a no-op. */
void mcp_text_unref(struct mcp_text *t);
/* A new session: a 2025 one, with an id to be named by, or a 2026-07-28
 * request's (modern).  At the cap of 2025 sessions, the one unused the
 * longest ends to make room.  NULL without memory. */
struct mcp_session *mcp_session_new(struct mcp *m, int modern);
/* The 2025 session named id (NULL: none), or NULL. */
struct mcp_session *mcp_session_find(struct mcp *m, const char *id);
/* Ends s: its streams (after retry: if asked), its pending wait
 * answered empty; s is freed. */
void mcp_session_free(struct mcp_session *s, int retry);
/* The session was used now: it goes to the end of the expiry line. */
void mcp_touch(struct mcp_session *s);
/* Ends a 2026-07-28 request's session when nothing of it is open. */
void mcp_session_release(struct mcp_session *s);
/* m->expiry's callback: the sessions idle too long end. */
void mcp_expire(void *arg);
/* m->heartbeat's callback: a comment on every open stream. */
void mcp_heartbeat(void *arg);
/* Answers r with a stream of s: a GET stream (sub NULL) or a listen
 * stream of request sub wanting want.  NULL when it cannot; r is then
 * still to be answered. */
struct mcp_stream *mcp_stream_open(struct mcp_session *s, struct http_req *r,
    const cJSON *sub, unsigned want);
/* Forgets ms, whose stream is closed or being closed. */
void mcp_stream_free(struct mcp_stream *ms);
/* Whether s's SSE streams begin with a priming event (2025-11-25). */
int mcp_primes(const struct mcp_session *s);
/* A GET stream opened: the events after last (Last-Event-ID, or NULL)
 * written again, then the priming event (mcp_primes).  -1 when the
 * stream failed. */
int mcp_stream_resume(struct mcp_session *s, struct mcp_stream *ms,
    const char *last);
/* The session's newest GET stream, or NULL. */
struct mcp_stream *mcp_get_stream(struct mcp_session *s);
/* Writes t to the GET stream ms (NULL: none open) with the session's
 * next event id, and keeps it for replay; id names the room message it
 * carries (or NULL).  0 when queued on ms; -1 when not (no stream, or
 * one let go for falling behind: the write that would carry it failed). */
int mcp_event(struct mcp_session *s, struct mcp_stream *ms,
    struct mcp_text *t, const char *id);
/* Whether the room message id is among the events kept for replay. */
int mcp_ring_has(const struct mcp_session *s, const char *id);
/* Writes json (NULL: nothing) to st as an event without an id.  0 or
 * -1, as mcp_event. */
int mcp_send(struct http_stream *st, const char *json);
/* Writes a notification to the listen stream ms, tagged with its id.
 * 0 or -1, as mcp_event. */
int mcp_send_tagged(struct mcp_stream *ms, const char *method,
    const cJSON *params);

/* mcp_agent.c: agents, their queues and positions, agents.json. */

/* Drops a ref of g; g NULL is a no-op. */
void mcp_msg_unref(struct mcp_msg *g);
/* A message of room (its id; NULL: the one json names) as the queues
 * keep it, tagged with its room, with one ref; json is taken.  NULL
 * when json is not one. */
struct mcp_msg *mcp_msg_new(struct mcp *m, cJSON *json, const char *room,
    uint64_t order);
/* Asks the node for read receipts of ids ("ID ID ..."; NULL: none). */
void mcp_mark_read(struct mcp *m, const char *ids);
/* The ids ("ID ID ...") of messages (a JSON array) or of the n of msgs,
 * for read receipts; NULL on none. */
char *mcp_ids(const cJSON *messages, struct mcp_msg *const *msgs,
    size_t n);
/* Whether g is of room (NULL or "": any) and of member from (a name or
 * id; NULL: any). */
int mcp_matches(const char *from, const char *room, const struct mcp_msg *g);
/* How many messages of room (NULL: all) wait in a's queue. */
size_t mcp_unread(const struct mcp_agent *a, const char *room);
/* a's position in room; NULL when it has none there. */
struct mcp_pos *mcp_pos(struct mcp_agent *a, const char *room);
/* a's position in room, made (nothing seen yet) when new; NULL when it
 * has one in as many rooms as a daemon holds already. */
struct mcp_pos *mcp_pos_add(struct mcp_agent *a, const char *room);
/* Whether a's positions are still being read back from the log. */
int mcp_restoring(const struct mcp_agent *a);
/* Puts g in a's queue in room order, once (a ref of its own); a room's
 * full queue lets its oldest go (a->dropped).  A message of a room a has
 * no position in (left meanwhile) is not queued. */
void mcp_queue_put(struct mcp_agent *a, struct mcp_msg *g);
/* Takes from a's queue the messages of from (NULL: all) in room (NULL
 * or "": every room), oldest first: their number, and them (their refs
 * with them) in a new array in *out. */
size_t mcp_queue_take(struct mcp_agent *a, const char *from,
    const char *room, struct mcp_msg ***out);
/* Drops from a's queue the messages whose ids are in ids. */
void mcp_queue_forget(struct mcp_agent *a, const char *ids);
/* The agent named name ("": the daemon's own), made when new; NULL
 * without memory, or at MCP_AGENTS_MAX. */
struct mcp_agent *mcp_agent(struct mcp *m, const char *name);
/* The agent's messages were given some way: it is not idle now. */
void mcp_agent_active(struct mcp_agent *a);
/* agents.json is to be written soon (a queue or position changed);
 * nothing before mcp_agents_load made m->save. */
void mcp_agents_dirty(struct mcp *m);
/* a is out of room: its position there and its queue of it go. */
void mcp_agent_leave(struct mcp_agent *a, const char *room);
/* Frees a (out of m->agents already) and what it holds; NULL: nothing. */
void mcp_agent_free(struct mcp_agent *a);

/* mcp_store.c: agents.json. */

/* Reads agents.json back (at start), and makes m->save; -1 with err
 * when it cannot (a damaged file is kept aside, not an error). */
int mcp_agents_load(char err[PAPO_ERR_LEN], struct mcp *m);
/* Places a in room (unless it is there): at start (start 1) as
 * agents.json says, else where the room's log ends, read back from the
 * node (mcp_deliver.c's mcp_node_answer takes the answer). */
void mcp_agent_place(struct mcp *m, struct mcp_agent *a, const char *room,
    int start);
/* Writes agents.json now (at stop), and frees the agents. */
void mcp_agents_free(struct mcp *m);

/* mcp_wait.c: the wait tool, and answers that give messages. */

/* A flight of s's, in m->flights; NULL without memory. */
struct mcp_flight *mcp_flight_new(struct mcp *m, struct mcp_session *s);
/* Frees f, which gave nothing. */
void mcp_flight_free(struct mcp_flight *f);
/* http_req_on_done's callback: the answer f rode on is over (sent 1:
 * whole), and f is freed. */
void mcp_flight_done(void *arg, int sent);
/* Answers w with the n messages of msgs (taken; 0: timed out), frees w;
 * m->wait_end, for mcp_session.c. */
void mcp_wait_end(struct mcp_wait *w, struct mcp_msg **msgs, size_t n);
/* Gives the pending waits of a's sessions what its queue holds for
 * them, the session used longest ago first. */
void mcp_offer(struct mcp_agent *a);
/* Whether a session of a has a wait pending that msg (NULL: any) would
 * answer. */
int mcp_waiting(const struct mcp_agent *a, const struct mcp_msg *msg);
/* Sets a->waiting of each agent a pending wait of one of its sessions
 * would answer with msg (the others' are left as they are): one walk of
 * the sessions for every agent. */
void mcp_waits_mark(struct mcp *m, const struct mcp_msg *msg);
/* The rooms changed: each pending wait on a room no more held ends,
 * saying so. */
void mcp_waits_left(struct mcp *m);
/* notifications/cancelled of s's pending wait rid: 1 if it was one. */
int mcp_wait_cancel(struct mcp_session *s, const cJSON *rid);
/* The wait tool, for mcp_tools.c's table (in: a struct mcp_wait_in):
 * for messages of room (its id; "": every room). */
void tool_wait(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const void *in, const cJSON *meta, const char *room);

/* mcp_deliver.c (which defines mcp.h's mcp_message, mcp_rooms,
 * mcp_owns and mcp_node_answer): pushes. */

/* A stream that delivers opened: s's queue goes out on ms, given. */
void mcp_flush(struct mcp_session *s, struct mcp_stream *ms);

/* mcp_ask.c: questions to the node. */

/*
 * Asks the node req (taken; NULL: out of memory, answered so) for r, of
 * room (its id; NULL or "": the default), answering it as a tool result,
 * or as resources/read of uri (not NULL).  read: the messages of the
 * answer are given to s's agent once it is sent.  extra: fields added to
 * the answer (taken).
 */
void mcp_ask(struct mcp_session *s, struct http_req *r, const cJSON *id,
    struct node_msg *req, const char *room, int read, const char *uri,
    cJSON *extra);
/* mcp_ask of a tool's request, for a caller whose session may be gone
 * since its request came (mcp_files.c's send, after its files). */
void mcp_ask_tool(struct mcp *m, int rev, struct http_req *r,
    const cJSON *id, struct node_msg *req, const char *room);

/* mcp_files.c: files (docs/MCP.md, "Files"). */

/* send with attachments: each added (NODE_BLOB_ADD), then req (taken, a
 * NODE_SEND) sent naming them; a tool error, and nothing sent, when one
 * fails. */
void mcp_attach(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const cJSON *attachments, struct node_msg *req, const char *room);
/* The fetch tool (in: a struct mcp_fetch_in). */
void tool_fetch(struct mcp_session *s, struct http_req *r, const cJSON *id,
    const void *in, const cJSON *meta, const char *room);
/* Whether uri is a file's (papo://rooms/ID/files/...). */
int mcp_file_uri(const char *uri);
/* resources/read of a file's uri. */
void mcp_file_read(struct mcp_session *s, struct http_req *r,
    const cJSON *id, const char *uri);
/* Answers resources/list with res (taken) and the files of the recent
 * messages of the rooms s hears. */
void mcp_files_list(struct mcp_session *s, struct http_req *r,
    const cJSON *id, cJSON *res);
/* The daemon stops: fetches in progress are answered so, and freed. */
void mcp_files_close(struct mcp *m);

/* mcp_tools.c and mcp_resources.c: the methods mcp.c's table names. */

typedef void mcp_method_fn(struct mcp_session *, struct http_req *,
    const cJSON *, const cJSON *);
/* A tool's handler: its arguments, checked and read into its input
 * struct (mcp_schema.h), _meta, and the room it acts on (its id; "":
 * the default room, or every room for wait). */
typedef void mcp_tool_fn(struct mcp_session *, struct http_req *,
    const cJSON *, const void *, const cJSON *, const char *);

/* Makes tools/list's entries into m->tools; -1 without memory, or when
 * the table of handlers and mcp_schema.c's tools differ (mcp_tools_close
 * frees what was made). */
int mcp_tools_open(struct mcp *m);
void mcp_tools_close(struct mcp *m);
mcp_method_fn m_tools_list, m_tools_call;
mcp_method_fn m_resources_list, m_resources_templates, m_resources_read,
    m_resources_subscribe, m_resources_unsubscribe, m_listen;

/* mcp_wake.c: waking an idle agent. */

/* Makes m->waking.  -1 without memory. */
int mcp_wake_open(struct mcp *m);
/* Answers every agent's waiting callers 503 (the daemon stops), frees
 * them and m->waking.  Safe on a half-built m. */
void mcp_wake_close(struct mcp *m);
/* Something changed for a (a message queued, a wait over, a caller
 * came): answers a caller when a needs waking, else arms m->waking.
 * mcp_deliver.c and mcp_wait.c call it through m->wake_check. */
void mcp_wake_check(struct mcp_agent *a);
/* GET /api/wake (mcp.c's route table). */
void mcp_wake_get(struct http_req *r, void *arg);
/* status: the wake part of a's state, as JSON. */
cJSON *mcp_wake_json(const struct mcp_agent *a);

#endif
