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

#include "lib/log.h"
#include "tests/check.h"
#include "tests/nodes.h"

int
main(void)
{
	char err[PAPO_ERR_LEN], root[64];
	char ha[256], hb[256], hc[256];
	char *inv = NULL, *inv_b = NULL;
	struct node *a, *b, *c;
	struct node_msg *req;
	cJSON *r;

	if (getenv("PAPO_LOG") != NULL && log_parse_level(getenv("PAPO_LOG")) >= 0)
		log_set_level((enum log_level)log_parse_level(getenv("PAPO_LOG")));
	check_tmpdir(root, sizeof(root), "node");
	snprintf(ha, sizeof(ha), "%s/a", root);
	snprintf(hb, sizeof(hb), "%s/b", root);
	snprintf(hc, sizeof(hc), "%s/c", root);
	CHECK(home_create(err, ha, "ana", "", NULL, 0, "127.0.0.1:7778", &inv) == 0);
	free(inv);
	CHECK((a = nodes_start(ha)) != NULL);
	inv = node_invite(a);
	CHECK(home_join(err, hb, inv, "bo", "", 0) == 0);
	CHECK((b = nodes_start(hb)) != NULL);
	CHECK(nodes_shown_as(a, "bo", 1, 10000));
	CHECK(nodes_shown_as(b, "ana", 1, 10000));

	/* A message from ana is delivered to bo. */
	req = node_msg_new(NODE_SEND);
	node_args_send(req)->text = strdup("hello bo");
	r = nodes_request(a, req, 12000);
	CHECK(r != NULL);
	CHECK_EQ_STR(cJSON_GetObjectItem(r, "state")->valuestring, "delivered");
	CHECK_EQ_STR(cJSON_GetArrayItem(cJSON_GetObjectItem(r,
	    "delivered_to"), 0)->valuestring, "bo");
	cJSON_Delete(r);
	CHECK(nodes_history_has(b, "hello bo", 5000));

	/* cy joins through bo's invite only, and still hears ana. */
	inv_b = node_invite(b);
	CHECK(home_join(err, hc, inv_b, "cy", "", 0) == 0);
	CHECK((c = nodes_start(hc)) != NULL);
	CHECK(nodes_shown_as(c, "bo", 1, 10000));
	CHECK(nodes_shown_as(c, "ana", 1, 15000));
	CHECK(nodes_shown_as(a, "cy", 1, 15000));
	req = node_msg_new(NODE_SEND);
	node_args_send(req)->text = strdup("hello everyone");
	r = nodes_request(a, req, 12000);
	CHECK(r != NULL && strcmp(cJSON_GetObjectItem(r, "state")->valuestring,
	    "delivered") == 0);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(r, "delivered_to")), 2);
	cJSON_Delete(r);
	CHECK(nodes_history_has(c, "hello everyone", 5000));
	/* cy also got what was said before it joined (sync). */
	CHECK(nodes_history_has(c, "hello bo", 5000));

	/* Directed to a name nobody has: the error lists the members. */
	req = node_msg_new(NODE_SEND);
	node_args_send(req)->text = strdup("x");
	node_args_send(req)->to = strdup("zed");
	node_submit(a, req);
	req = nodes_wait(a, NODE_SEND, 5000);
	CHECK(req != NULL && req->code == 404 && strstr(req->err, "bo") != NULL);
	node_msg_free(req);

	/* bo leaves cleanly: ana sees it offline at once. */
	node_stop(b);
	CHECK(!nodes_shown_as(a, "bo", 1, 0) || !nodes_shown_as(a, "bo", 1, 0));
	{
		struct node_msg *ev;
		int off = 0;
		while ((ev = nodes_wait(a, NODE_EV_PRESENCE, 3000)) != NULL) {
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
	CHECK_EQ_INT(check_rmtree(root), 0);
	return check_exit();
}
