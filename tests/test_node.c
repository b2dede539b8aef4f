/*
 * test_node.c: two and three real nodes in one process, on 127.0.0.1
 * with free ports, talking over QUIC: a message sent on one is delivered
 * (the sender hears the ack) and in the others' history; a member joined
 * through another member's invite hears the first one too.
 */
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "tests/check.h"

/* Waits up to ms for a message of kind from n; events of other kinds are
 * dropped.  NULL on timeout. */
static struct node_msg *
wait_for(struct node *n, enum node_kind kind, int ms)
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

static cJSON *
request(struct node *n, struct node_msg *req, int ms)
{
	enum node_kind kind = req->kind;
	struct node_msg *r;
	cJSON *o = NULL;

	node_submit(n, req);
	if ((r = wait_for(n, kind, ms)) == NULL)
		return NULL;
	if (r->code != 0)
		fprintf(stderr, "request failed: %d %s\n", r->code, r->err);
	else
		o = cJSON_Parse(r->json);
	node_msg_free(r);
	return o;
}

static struct node *
start(const char *home)
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

/* Polls status until member name is online (or ms pass). */
static int
online(struct node *n, const char *name, int ms)
{
	for (int waited = 0; waited < ms; waited += 100) {
		cJSON *s = request(n, node_msg_new(NODE_STATUS), 2000), *m;
		int on = 0;

		cJSON_ArrayForEach(m, cJSON_GetObjectItem(s, "members"))
			if (strcmp(cJSON_GetObjectItem(m, "name")->valuestring,
			    name) == 0 && cJSON_IsTrue(cJSON_GetObjectItem(m, "online")))
				on = 1;
		cJSON_Delete(s);
		if (on)
			return 1;
		usleep(100000);
	}
	return 0;
}

static int
history_has(struct node *n, const char *text, int ms)
{
	for (int waited = 0; waited < ms; waited += 100) {
		struct node_msg *q = node_msg_new(NODE_HISTORY);
		cJSON *h, *m;
		int found = 0;

		q->limit = 100;
		h = request(n, q, 2000);
		cJSON_ArrayForEach(m, cJSON_GetObjectItem(h, "messages"))
			if (strcmp(cJSON_GetObjectItem(m, "text")->valuestring,
			    text) == 0)
				found = 1;
		cJSON_Delete(h);
		if (found)
			return 1;
		usleep(100000);
	}
	return 0;
}

int
main(void)
{
	char err[PAPO_ERR_LEN], root[] = "/tmp/papo-test-node-XXXXXX";
	char ha[256], hb[256], hc[256], cmd[300];
	char *inv = NULL, *inv_b = NULL;
	struct node *a, *b, *c;
	struct node_msg *req;
	cJSON *r;

	if (getenv("PAPO_LOG") != NULL && log_parse_level(getenv("PAPO_LOG")) >= 0)
		log_set_level((enum log_level)log_parse_level(getenv("PAPO_LOG")));
	CHECK(mkdtemp(root) != NULL);
	snprintf(ha, sizeof(ha), "%s/a", root);
	snprintf(hb, sizeof(hb), "%s/b", root);
	snprintf(hc, sizeof(hc), "%s/c", root);
	CHECK(room_create(err, ha, "ana", "", NULL, 0, "127.0.0.1:7778", &inv) == 0);
	free(inv);
	CHECK((a = start(ha)) != NULL);
	inv = node_invite(a);
	CHECK(room_join(err, hb, inv, "bo", "", 0) == 0);
	CHECK((b = start(hb)) != NULL);
	CHECK(online(a, "bo", 10000));
	CHECK(online(b, "ana", 10000));

	/* A message from ana is delivered to bo. */
	req = node_msg_new(NODE_SEND);
	req->text = strdup("hello bo");
	r = request(a, req, 12000);
	CHECK(r != NULL);
	CHECK_EQ_STR(cJSON_GetObjectItem(r, "state")->valuestring, "delivered");
	CHECK_EQ_STR(cJSON_GetArrayItem(cJSON_GetObjectItem(r,
	    "delivered_to"), 0)->valuestring, "bo");
	cJSON_Delete(r);
	CHECK(history_has(b, "hello bo", 5000));

	/* cy joins through bo's invite only, and still hears ana. */
	inv_b = node_invite(b);
	CHECK(room_join(err, hc, inv_b, "cy", "", 0) == 0);
	CHECK((c = start(hc)) != NULL);
	CHECK(online(c, "bo", 10000));
	CHECK(online(c, "ana", 15000));
	CHECK(online(a, "cy", 15000));
	req = node_msg_new(NODE_SEND);
	req->text = strdup("hello everyone");
	r = request(a, req, 12000);
	CHECK(r != NULL && strcmp(cJSON_GetObjectItem(r, "state")->valuestring,
	    "delivered") == 0);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(r, "delivered_to")), 2);
	cJSON_Delete(r);
	CHECK(history_has(c, "hello everyone", 5000));
	/* cy also got what was said before it joined (sync). */
	CHECK(history_has(c, "hello bo", 5000));

	/* Directed to a name nobody has: the error lists the members. */
	req = node_msg_new(NODE_SEND);
	req->text = strdup("x");
	req->to = strdup("zed");
	node_submit(a, req);
	req = wait_for(a, NODE_SEND, 5000);
	CHECK(req != NULL && req->code == 404 && strstr(req->err, "bo") != NULL);
	node_msg_free(req);

	/* bo leaves cleanly: ana sees it offline at once. */
	node_stop(b);
	CHECK(!online(a, "bo", 0) || !online(a, "bo", 0));
	{
		struct node_msg *ev;
		int off = 0;
		while ((ev = wait_for(a, NODE_EV_PRESENCE, 3000)) != NULL) {
			if (strstr(ev->json, "\"name\":\"bo\"") &&
			    strstr(ev->json, "\"online\":false"))
				off = 1;
			node_msg_free(ev);
			if (off)
				break;
		}
		CHECK(off);
	}
	node_stop(a);
	node_stop(c);
	free(inv);
	free(inv_b);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
	return check_exit();
}
