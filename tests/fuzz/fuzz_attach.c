/*
 * fuzz_attach.c: libFuzzer target for node/wire/attach.c.  Any body must
 * parse without a crash into files that keep every rule and a text that
 * is a prefix of it; what it parses to, written again and parsed again,
 * must come back the same (a message named files another daemon reads
 * as those files).  The input is also a path for attach_name, whose
 * result must be a name the writer takes, and a head for attach_type.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/wire/attach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
same(const struct attach *a, const struct attach *b)
{
	return strcmp(a->ref, b->ref) == 0 && strcmp(a->name, b->name) == 0 &&
	    strcmp(a->type, b->type) == 0 && a->size == b->size &&
	    memcmp(a->key, b->key, PAPO_KEY_LEN) == 0;
}

static void
names(const uint8_t *data, size_t size)
{
	char path[ATTACH_LINE_MAX + 1], err[PAPO_ERR_LEN];
	size_t n = size < ATTACH_LINE_MAX ? size : ATTACH_LINE_MAX;
	struct attach a;

	memset(&a, 0, sizeof(a));
	memset(a.ref, 'a', ATTACH_REF_LEN);
	if (n > 0)
		memcpy(path, data, n);
	path[n] = '\0';
	attach_name(a.name, path);
	attach_type(a.type, a.name, data, size);
	if (attach_check(err, &a) != 0)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct attach v[ATTACH_MAX], w[ATTACH_MAX];
	const char *body = (const char *)data;
	char err[PAPO_ERR_LEN];
	size_t n, m, tl, tl2;
	struct buf b;

	names(data, size);
	n = attach_parse(body, size, v, ATTACH_MAX, &tl);
	if (n > ATTACH_MAX || tl > size || (n == 0 && tl != size))
		__builtin_trap();
	for (size_t i = 0; i < n; i++)
		if (attach_check(err, &v[i]) != 0)
			__builtin_trap();
	buf_init(&b, 2 * PAPO_BODY_MAX);
	if (attach_format(&b, body, tl, v, n) != 0)
		__builtin_trap();
	m = attach_parse((const char *)b.p, b.len, w, ATTACH_MAX, &tl2);
	if (m != n || tl2 != tl || (tl > 0 && memcmp(b.p, body, tl) != 0))
		__builtin_trap();
	for (size_t i = 0; i < n; i++)
		if (!same(&v[i], &w[i]))
			__builtin_trap();
	buf_free(&b);
	return 0;
}
