/*
 * ask.h: a command asking the running daemon (through client.c), its
 * error said on one line of stderr.  Main thread.
 */
#ifndef PAPO_ASK_H
#define PAPO_ASK_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* path for the room named (NULL: the default): ?room=ROOM added,
 * percent-encoded, into out.  -1 when it does not fit. */
int cli_room_path(char *out, size_t len, const char *path, const char *room);

/*
 * Asks the running daemon about room (NULL: the default room): GET path,
 * or POST body.  On a 2xx answer, returns CLI_OK with the parsed JSON in
 * *out (and the text in *text when text is not NULL); otherwise prints
 * the one-line error and returns CLI_ERROR.  send: the request is a
 * message's (papo say), and an error says whether it was kept.
 */
int cli_request(const char *home, const char *room, const char *path,
    const char *body, cJSON **out, char **text, int send);
/* cli_request of anything but a message. */
int cli_call(const char *home, const char *room, const char *path,
    const char *body, cJSON **out, char **text);

#endif
