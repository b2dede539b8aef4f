/*
 * inbox.c: a line into Claude Code's inbox socket (inbox.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/os.h"
#include "lib/units.h"
#include "server/cli/inbox.h"

#define INBOX_WAIT_MS 1000

/* Writes all of buf to the non-blocking fd by deadline (CLOCK_MONOTONIC
 * ms): 0, or -1 with errno. */
static int
write_all(int fd, const char *buf, size_t len, int64_t deadline)
{
	while (len > 0) {
		struct timespec ts;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t n = write(fd, buf, len);
		int64_t now;

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (int64_t)ts.tv_sec * 1000 +
		    (int64_t)((uint64_t)ts.tv_nsec / NS_PER_MS);
		if (now >= deadline || poll(&p, 1, (int)(deadline - now)) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

int
inbox_post(char err[PAPO_ERR_LEN], const char *path, const char *token,
    const char *text)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timespec ts;
	cJSON *auth = NULL, *user, *msg;
	char *a = NULL, *u, *lines = NULL;
	int fd = -1, rc = -1;
	int64_t deadline;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, PAPO_ERR_LEN, "the inbox path is too long");
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* {"type":"auth","token":T} when there is a token, then
	 * {"type":"user","message":{"role":"user","content":TEXT}}. */
	if (token != NULL && token[0] != '\0') {
		auth = cJSON_CreateObject();
		cJSON_AddStringToObject(auth, "type", "auth");
		cJSON_AddStringToObject(auth, "token", token);
		a = cJSON_PrintUnformatted(auth);
	}
	user = cJSON_CreateObject();
	cJSON_AddStringToObject(user, "type", "user");
	msg = cJSON_AddObjectToObject(user, "message");
	cJSON_AddStringToObject(msg, "role", "user");
	cJSON_AddStringToObject(msg, "content", text);
	u = cJSON_PrintUnformatted(user);
	if (u == NULL || (auth != NULL && a == NULL) || (lines = malloc(
	    (a != NULL ? strlen(a) + 1 : 0) + strlen(u) + 2)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto out;
	}
	sprintf(lines, "%s%s%s\n", a != NULL ? a : "", a != NULL ? "\n" : "",
	    u);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (int64_t)ts.tv_sec * 1000 +
	    (int64_t)((uint64_t)ts.tv_nsec / NS_PER_MS) +
	    INBOX_WAIT_MS;
	if ((fd = os_socket(AF_UNIX, SOCK_STREAM, 0, OS_NONBLOCK)) == -1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    write_all(fd, lines, strlen(lines), deadline) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot post into the inbox %s: %s",
		    path, strerror(errno));
		goto out;
	}
	shutdown(fd, SHUT_WR);
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	free(lines);
	cJSON_free(a);
	cJSON_free(u);
	cJSON_Delete(auth);
	cJSON_Delete(user);
	return rc;
}
