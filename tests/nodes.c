/*
 * nodes.c: real nodes in one process for the unit tests (nodes.h).
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/nodes.h"

struct node *
nodes_start(const char *home)
{
	char err[PAPO_ERR_LEN];
	/* No LAN beacons on this machine's interfaces. */
	struct node_config c = { .home = home, .listen = "127.0.0.1:0",
	    .nolan = 1 };
	struct node *n = node_start(err, &c);

	if (n == NULL)
		fprintf(stderr, "node_start %s: %s\n", home, err);
	return n;
}

struct node_msg *
nodes_wait(struct node *n, enum node_kind kind, int ms)
{
	struct node_msg *m;

	for (int waited = 0; waited < ms; waited += 10) {
		while ((m = node_take(n)) != NULL) {
			if (m->kind == kind)
				return m;
			node_msg_free(m);
		}
		struct pollfd p = { node_fd(n), POLLIN, 0 };
		poll(&p, 1, 10);
	}
	return NULL;
}

cJSON *
nodes_request(struct node *n, struct node_msg *req, int ms)
{
	enum node_kind kind = req->kind;
	struct node_msg *r;
	cJSON *o = NULL;

	node_submit(n, req);
	if ((r = nodes_wait(n, kind, ms)) == NULL)
		return NULL;
	if (r->code != 0)
		fprintf(stderr, "request failed: %d %s\n", r->code, r->err);
	else
		o = cJSON_Parse(r->json);
	node_msg_free(r);
	return o;
}

int
nodes_shown(struct node *n, const char *name)
{
	cJSON *s = nodes_request(n, node_msg_new(NODE_STATUS), 5000), *m;
	int r = -1;

	cJSON_ArrayForEach(m, cJSON_GetObjectItem(s, "members"))
		if (strcmp(cJSON_GetObjectItem(m, "name")->valuestring,
		    name) == 0)
			r = cJSON_IsTrue(cJSON_GetObjectItem(m, "online"));
	cJSON_Delete(s);
	return r;
}

int
nodes_shown_as(struct node *n, const char *name, int want, int ms)
{
	for (int waited = 0; waited < ms; waited += 100) {
		if (nodes_shown(n, name) == want)
			return 1;
		usleep(100000);
	}
	return 0;
}

int
nodes_history_has(struct node *n, const char *text, int ms)
{
	for (int waited = 0;; waited += 100) {
		struct node_msg *q = node_msg_new(NODE_HISTORY);
		cJSON *h, *m;
		int found = 0;

		node_args_history(q)->limit = 100;
		h = nodes_request(n, q, 5000);
		cJSON_ArrayForEach(m, cJSON_GetObjectItem(h, "messages"))
			if (strcmp(cJSON_GetObjectItem(m, "text")->valuestring,
			    text) == 0)
				found = 1;
		cJSON_Delete(h);
		if (found)
			return 1;
		if (waited >= ms)
			return 0;
		usleep(100000);
	}
}
