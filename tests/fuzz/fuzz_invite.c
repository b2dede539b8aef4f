/*
 * fuzz_invite.c: libFuzzer target for node/wire/invite.c.  Any text given to
 * invite_decode must give an error or an invite, never a crash, and an
 * invite it accepts must survive encoding and decoding again unchanged:
 * an accepted invite that could not be handed on would strand a member.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/wire/invite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
invite_same(const struct invite *a, const struct invite *b)
{
	/* Not the version: one with extensions this papo skips (or none)
	 * is handed on as what it holds, version 1 when that is nothing. */
	if (a->naddr != b->naddr ||
	    memcmp(a->secret, b->secret, sizeof(a->secret)) != 0 ||
	    memcmp(a->inviter, b->inviter, sizeof(a->inviter)) != 0 ||
	    strcmp(a->room, b->room) != 0 ||
	    strcmp(a->relay.url, b->relay.url) != 0 ||
	    strcmp(a->relay.user, b->relay.user) != 0 ||
	    strcmp(a->relay.pass, b->relay.pass) != 0 ||
	    strcmp(a->relay.secret, b->relay.secret) != 0)
		return 0;
	for (size_t i = 0; i < a->naddr; i++) {
		const struct addr *x = &a->addr[i], *y = &b->addr[i];

		if (x->family != y->family || x->port != y->port ||
		    memcmp(x->ip, y->ip, x->family == 4 ? 4 : 16) != 0)
			return 0;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct invite a, b;
	size_t pos = 0;
	char *s, *again = NULL;
	enum invite_err e;

	/* invite_decode takes a C string; the copy gives it its NUL. */
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	e = invite_decode(s, &a, &pos);
	if (e == INVITE_CHAR && pos >= strlen(s))
		__builtin_trap();
	if (invite_strerror(e) == NULL)
		__builtin_trap();
	if (e == INVITE_OK) {
		if ((again = invite_encode(&a)) == NULL)
			__builtin_trap();
		if (invite_decode(again, &b, NULL) != INVITE_OK ||
		    !invite_same(&a, &b))
			__builtin_trap();
	}
	free(again);
	free(s);
	return 0;
}
