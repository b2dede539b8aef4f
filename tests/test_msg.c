/*
 * test_msg.c: node/msg.c.  A request's arguments are read only as its
 * own kind's: an accessor of another kind stops the program (checked in
 * a child, which must die of SIGABRT), the kinds that share an argument
 * struct each pass its accessor, and node_msg_free frees every string a
 * kind owns (the sanitized build's leak check fails otherwise).
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "node/msg.h"

/* Whether reading m's arguments with read stops the program. */
static int
stops(enum node_kind kind, void (*read)(struct node_msg *m))
{
	struct node_msg *m = node_msg_new(kind);
	int status = 0;
	pid_t pid;

	fflush(stderr);
	if ((pid = fork()) == 0) {
		/* The log line the abort says is the parent's stderr too:
		 * quiet it, the test says what matters. */
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(3);
		read(m);
		_exit(0);
	}
	node_msg_free(m);
	if (pid == -1 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void
read_send(struct node_msg *m)
{
	node_args_send(m)->person = 1;
}

static void
read_member(struct node_msg *m)
{
	node_args_member(m)->name = NULL;
}

static void
read_blob(struct node_msg *m)
{
	node_args_blob(m)->ref = NULL;
}

static void
test_kind_checked(void)
{
	CHECK_EQ_INT(stops(NODE_SEND, read_send), 0);
	CHECK_EQ_INT(stops(NODE_HISTORY, read_send), 1);
	CHECK_EQ_INT(stops(NODE_EV_MESSAGE, read_send), 1);
	/* Three kinds share one struct, and two another. */
	CHECK_EQ_INT(stops(NODE_ADMIN, read_member), 0);
	CHECK_EQ_INT(stops(NODE_REMOVE, read_member), 0);
	CHECK_EQ_INT(stops(NODE_RENAME, read_member), 0);
	CHECK_EQ_INT(stops(NODE_JOIN, read_member), 1);
	CHECK_EQ_INT(stops(NODE_BLOB, read_blob), 0);
	CHECK_EQ_INT(stops(NODE_FETCH, read_blob), 0);
	CHECK_EQ_INT(stops(NODE_BLOB_ADD, read_blob), 1);
}

/* Every owned string of every kind set, then freed with the message. */
static void
test_free(void)
{
	struct node_msg *m;

	m = node_msg_new(NODE_SEND);
	node_args_send(m)->text = strdup("t");
	node_args_send(m)->to = strdup("bo");
	node_args_send(m)->files = strdup("[]");
	m->room = strdup("r");
	m->tag = strdup("agent");
	m->json = strdup("{}");
	node_msg_free(m);
	m = node_msg_new(NODE_HISTORY);
	node_args_history(m)->from = strdup("bo");
	node_args_history(m)->ids = strdup("x");
	node_msg_free(m);
	m = node_msg_new(NODE_READ);
	node_args_read(m)->ids = strdup("x");
	node_msg_free(m);
	m = node_msg_new(NODE_SEARCH);
	node_args_search(m)->text = strdup("w");
	node_args_search(m)->from = strdup("a");
	node_args_search(m)->to = strdup("b");
	node_args_search(m)->cursor = strdup("s1.2");
	node_msg_free(m);
	m = node_msg_new(NODE_RENAME);
	node_args_member(m)->name = strdup("cy");
	node_msg_free(m);
	m = node_msg_new(NODE_CREATE);
	node_args_enter(m)->text = strdup("room");
	node_args_enter(m)->name = strdup("ana");
	node_args_enter(m)->about = strdup("about");
	node_msg_free(m);
	m = node_msg_new(NODE_BLOB_ADD);
	node_args_blob_add(m)->path = strdup("/p");
	node_args_blob_add(m)->name = strdup("n");
	node_args_blob_add(m)->type = strdup("text/plain");
	node_msg_free(m);
	m = node_msg_new(NODE_FETCH);
	node_args_blob(m)->ref = strdup("ref");
	node_msg_free(m);
	node_msg_free(NULL);
}

int
main(void)
{
	test_kind_checked();
	test_free();
	return check_exit();
}
