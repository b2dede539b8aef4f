/* test_crypto.c: identity file, member and message ids, room keys, epoch
 * keys and epoch secrets sealed to one member. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "node/wire/crypto.h"
#include "tests/check.h"

int
main(void)
{
	char err[PAPO_ERR_LEN], home[64];
	char path[4200], text[PAPO_ID_LEN + 1], mid[PAPO_MSGID_LEN + 1];
	char rid1[PAPO_ROOMID_LEN + 1], rid2[PAPO_ROOMID_LEN + 1];
	struct identity *a, *b;
	struct room_keys k1, k2;
	uint8_t secret[PAPO_KEY_LEN] = { 1 }, pk[PAPO_KEY_LEN];
	struct stat st;
	uint64_t v;
	FILE *f;

	check_tmpdir(home, sizeof(home), "crypto");
	snprintf(path, sizeof(path), "%s/sub/identity", home);

	/* Created on first use, mode 0600, the same key the second time. */
	snprintf(path, sizeof(path), "%s/sub", home);
	CHECK((a = sec_identity_load(err, path)) != NULL);
	snprintf(path, sizeof(path), "%s/sub/identity", home);
	CHECK(stat(path, &st) == 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0600);
	CHECK_EQ_INT(st.st_size, PAPO_KEY_LEN);
	snprintf(path, sizeof(path), "%s/sub", home);
	CHECK((b = sec_identity_load(err, path)) != NULL);
	CHECK(a != NULL && b != NULL && memcmp(a->pk, b->pk, PAPO_KEY_LEN) == 0);
	sec_identity_free(b);

	/* A file others can read is refused, with the reason. */
	snprintf(path, sizeof(path), "%s/sub/identity", home);
	CHECK(chmod(path, 0644) == 0);
	snprintf(path, sizeof(path), "%s/sub", home);
	CHECK(sec_identity_load(err, path) == NULL);
	CHECK(strstr(err, "chmod 600") != NULL);

	/* A file of the wrong size is refused as damaged. */
	snprintf(path, sizeof(path), "%s/sub/identity", home);
	CHECK((f = fopen(path, "w")) != NULL);
	fputs("short", f);
	fclose(f);
	CHECK(chmod(path, 0600) == 0);
	snprintf(path, sizeof(path), "%s/sub", home);
	CHECK(sec_identity_load(err, path) == NULL);
	CHECK(strstr(err, "damaged") != NULL);

	/* Member ids: 52 lowercase characters, one spelling per key. */
	sec_id_format(a->pk, text);
	CHECK_EQ_INT(strlen(text), PAPO_ID_LEN);
	CHECK(sec_id_parse(text, pk) == 0 && memcmp(pk, a->pk, PAPO_KEY_LEN) == 0);
	text[0] = (char)(text[0] - 'a' + 'A');
	CHECK(sec_id_parse(text, pk) == -1);
	CHECK(sec_id_parse("abc", pk) == -1);
	sec_identity_free(a);
	sec_identity_free(NULL);

	/* Message ids: 10 base32 characters, random. */
	sec_msgid_new(mid);
	CHECK(sec_msgid_valid(mid, &v));
	CHECK(v < (1ull << 50));
	CHECK(sec_msgid_valid("aaaaaaaaab", &v) && v == 1);
	CHECK(!sec_msgid_valid("aaaaaaaaa", NULL));
	CHECK(!sec_msgid_valid("aaaaaaaaaaa", NULL));
	CHECK(!sec_msgid_valid("aaaaaaaaa1", NULL));
	CHECK(!sec_msgid_valid("AAAAAAAAAA", NULL));

	/* Room keys: deterministic per secret, distinct across secrets, and
	 * the public id reveals nothing of the sealing key. */
	sec_room_keys(secret, &k1);
	sec_room_keys(secret, &k2);
	CHECK(memcmp(&k1, &k2, sizeof(k1)) == 0);
	CHECK(memcmp(k1.seal, k1.id, sizeof(k1.id)) != 0);
	secret[0] = 2;
	sec_room_keys(secret, &k2);
	CHECK(memcmp(k1.seal, k2.seal, PAPO_KEY_LEN) != 0);
	sec_room_id_format(&k1, rid1);
	sec_room_id_format(&k2, rid2);
	CHECK_EQ_INT(strlen(rid1), PAPO_ROOMID_LEN);
	CHECK(strcmp(rid1, rid2) != 0);

	/* Epoch keys: the room's id, a sealing key of the epoch's own,
	 * neither the room's nor another epoch's. */
	{
		uint8_t es[PAPO_KEY_LEN], es2[PAPO_KEY_LEN], box[SEC_BOX_LEN], got[PAPO_KEY_LEN], bad[PAPO_KEY_LEN];
		struct room_keys e1, e2;
		struct identity *x, *y;

		randombytes_buf(es, sizeof(es));
		randombytes_buf(es2, sizeof(es2));
		sec_epoch_keys(&k1, es, &e1);
		CHECK(memcmp(e1.id, k1.id, sizeof(k1.id)) == 0);
		CHECK(memcmp(e1.seal, k1.seal, PAPO_KEY_LEN) != 0);
		sec_epoch_keys(&k1, es, &e2);
		CHECK(memcmp(&e1, &e2, sizeof(e1)) == 0);
		sec_epoch_keys(&k1, es2, &e2);
		CHECK(memcmp(e1.seal, e2.seal, PAPO_KEY_LEN) != 0);
		/* The epoch's sealing key is not the one the same secret
		 * would give as a room secret. */
		sec_room_keys(es, &e2);
		CHECK(memcmp(e1.seal, e2.seal, PAPO_KEY_LEN) != 0);

		/* An epoch secret sealed to x opens for x only, unaltered. */
		snprintf(path, sizeof(path), "%s/x", home);
		CHECK((x = sec_identity_load(err, path)) != NULL);
		snprintf(path, sizeof(path), "%s/y", home);
		CHECK((y = sec_identity_load(err, path)) != NULL);
		CHECK(sec_box_seal(box, es, x->pk) == 0);
		CHECK(sec_box_open(got, box, x) == 0 &&
		    memcmp(got, es, PAPO_KEY_LEN) == 0);
		CHECK(sec_box_open(bad, box, y) == -1);
		box[SEC_BOX_LEN - 1] ^= 1;
		CHECK(sec_box_open(bad, box, x) == -1);
		/* Not a point on the curve: refused, not sealed to garbage. */
		memset(bad, 0, sizeof(bad));
		CHECK(sec_box_seal(box, es, bad) == -1);
		sec_identity_free(x);
		sec_identity_free(y);
	}

	CHECK_EQ_INT(check_rmtree(home), 0);
	return check_exit();
}
