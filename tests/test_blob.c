/*
 * test_blob.c: node/store/blob.c, the store of shared files, as its users
 * will see it: files shared and read back whole and by ranges, fetched
 * into a second store chunk by chunk in any order with a wrong chunk
 * refused, a fetch resumed after its process died, keys that make
 * different references and do not read each other's, damage on disk
 * found, the quota, a file changing while shared, a full disk (a file
 * size limit, RLIMIT_FSIZE, which gives EFBIG on any machine), retention,
 * a killed process's leftovers tidied at open, and memory that does not
 * grow with the file.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "check.h"
#include "lib/b32.h"
#include "node/store/blob.h"

static char top[64];

/* Deterministic bytes: byte k of the stream seeded seed. */
static uint8_t
byte_at(uint64_t k, uint32_t seed)
{
	uint64_t x = (k / 8 + 1) * 0x9e3779b97f4a7c15ULL ^ seed;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	return (uint8_t)(x >> (8 * (k % 8)));
}

/* Writes a file of size bytes under top; returns it open for reading. */
static int
make_file(const char *name, uint64_t size, uint32_t seed)
{
	static uint8_t buf[1 << 20];
	char path[512];
	uint64_t done = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", top, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	while (fd != -1 && done < size) {
		size_t n = size - done < sizeof(buf) ? (size_t)(size - done) :
		    sizeof(buf);

		for (size_t k = 0; k < n; k++)
			buf[k] = byte_at(done + k, seed);
		if (write(fd, buf, n) != (ssize_t)n)
			break;
		done += n;
	}
	return fd;
}

static int
same_bytes(const uint8_t *p, uint64_t off, size_t len, uint32_t seed)
{
	for (size_t k = 0; k < len; k++)
		if (p[k] != byte_at(off + k, seed))
			return 0;
	return 1;
}

static void
dir_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", top, name);
}

/* Names in dir, sorted, joined by spaces into out. */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
listing(const char *dir, char *out, size_t cap)
{
	char *names[64];
	int n = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	out[0] = '\0';
	while (d != NULL && (de = readdir(d)) != NULL && n < 64)
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	if (d != NULL)
		closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
	for (int k = 0; k < n; k++) {
		if (k > 0)
			strncat(out, " ", cap - strlen(out) - 1);
		strncat(out, names[k], cap - strlen(out) - 1);
		free(names[k]);
	}
	return n;
}

static int
contains(const char *s, const char *part)
{
	if (strstr(s, part) != NULL)
		return 1;
	fprintf(stderr, "expected \"%s\" in \"%s\"\n", part, s);
	return 0;
}

static uint64_t
cost(uint64_t size)
{
	return blob_stored_size(size) + (uint64_t)blob_chunks(size) *
	    PAPO_KEY_LEN;
}

static void
test_round_trip(void)
{
	static const uint64_t sizes[] = {0, 1, BLOB_CHUNK - 1, BLOB_CHUNK,
	    BLOB_CHUNK + 1, 3 * 1024 * 1024 + 123};
	char err[PAPO_ERR_LEN], dir[512], ref[BLOB_REF_LEN + 1];
	char again[BLOB_REF_LEN + 1];
	uint8_t key[PAPO_KEY_LEN];
	struct blob_store *bs;
	uint64_t used = 0, size;

	dir_of(dir, sizeof(dir), "round");
	bs = blob_open(err, dir, 0);
	CHECK(bs != NULL);
	if (bs == NULL)
		return;
	blob_key_new(key);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int fd = make_file("in", sizes[s], (uint32_t)s);
		uint8_t *out = malloc(sizes[s] + 1);

		CHECK_EQ_INT(blob_add(err, bs, fd, key, ref, &size), 0);
		CHECK_EQ_INT(size, sizes[s]);
		CHECK_EQ_INT(strlen(ref), BLOB_REF_LEN);
		CHECK(blob_has(bs, ref));
		CHECK_EQ_INT(blob_size(err, bs, ref, &size), 0);
		CHECK_EQ_INT(size, sizes[s]);
		used += cost(sizes[s]);
		CHECK_EQ_INT(blob_used(bs), used);
		CHECK_EQ_INT(blob_read(err, bs, ref, key, 0, out, sizes[s]), 0);
		CHECK(same_bytes(out, 0, sizes[s], (uint32_t)s));
		/* One byte past the end is refused, with the reason. */
		CHECK_EQ_INT(blob_read(err, bs, ref, key, sizes[s], out, 1), -1);
		CHECK(contains(err, "past the end"));
		/* The same bytes and key: the same blob, nothing more held. */
		CHECK_EQ_INT(blob_add(err, bs, fd, key, again, &size), 0);
		CHECK_EQ_STR(again, ref);
		CHECK_EQ_INT(blob_used(bs), used);
		if (sizes[s] > 2 * BLOB_CHUNK) {
			/* Ranges across chunk edges read only what they name. */
			static const uint64_t r[][2] = {
			    {BLOB_CHUNK - 10, 20}, {2 * BLOB_CHUNK - 1,
			    BLOB_CHUNK + 2}, {0, 1}, {BLOB_CHUNK, BLOB_CHUNK},
			    {3 * 1024 * 1024 + 122, 1}, {12345, 0}};

			for (size_t k = 0; k < sizeof(r) / sizeof(r[0]); k++) {
				memset(out, 0, sizes[s]);
				CHECK_EQ_INT(blob_read(err, bs, ref, key, r[k][0],
				    out, (size_t)r[k][1]), 0);
				CHECK(same_bytes(out, r[k][0], (size_t)r[k][1],
				    (uint32_t)s));
			}
		}
		free(out);
		close(fd);
	}
	/* Private: the folder 0700, its files 0600. */
	{
		char path[1024];
		struct stat st;

		CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
		snprintf(path, sizeof(path), "%s/%s", dir, ref);
		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
		snprintf(path, sizeof(path), "%s/%s.leaves", dir, ref);
		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	}
	/* Kept across a reopen, and the count too. */
	blob_close(bs);
	bs = blob_open(err, dir, 0);
	CHECK(bs != NULL && blob_used(bs) == used);
	CHECK(bs != NULL && blob_has(bs, ref));
	/* Not a reference: refused, never a path. */
	CHECK(!blob_has(bs, "../etc/passwd"));
	CHECK_EQ_INT(blob_remove(err, bs, "../../x"), -1);
	CHECK(contains(err, "not a file reference"));
	blob_close(bs);
}

static void
test_keys(void)
{
	char err[PAPO_ERR_LEN], dir[512], ra[BLOB_REF_LEN + 1];
	char rb[BLOB_REF_LEN + 1], path[1024];
	uint8_t ka[PAPO_KEY_LEN], kb[PAPO_KEY_LEN], out[64];
	struct blob_store *bs;
	uint64_t size;
	int fd = make_file("keys", 3 * BLOB_CHUNK, 7), tf;

	dir_of(dir, sizeof(dir), "keys.d");
	bs = blob_open(err, dir, 0);
	CHECK(bs != NULL);
	if (bs == NULL)
		return;
	blob_key_new(ka);
	blob_key_new(kb);
	CHECK_EQ_INT(blob_add(err, bs, fd, ka, ra, &size), 0);
	CHECK_EQ_INT(blob_add(err, bs, fd, kb, rb, &size), 0);
	/* Two agents sharing one file at once make two blobs. */
	CHECK(strcmp(ra, rb) != 0);
	/* The wrong key reads nothing: an error, no garbage. */
	memset(out, 0xaa, sizeof(out));
	CHECK_EQ_INT(blob_read(err, bs, ra, kb, 0, out, sizeof(out)), -1);
	CHECK(contains(err, "does not open under this key"));
	CHECK_EQ_INT(blob_read(err, bs, ra, ka, 0, out, sizeof(out)), 0);
	CHECK(same_bytes(out, 0, sizeof(out), 7));

	/* A byte of chunk 1 flipped on disk: reads of chunk 1 fail saying
	 * so; chunk 0 still reads, as only the chunks needed are opened. */
	snprintf(path, sizeof(path), "%s/%s", dir, ra);
	tf = open(path, O_RDWR);
	CHECK(tf != -1);
	if (tf != -1) {
		uint8_t b;
		off_t at = (off_t)BLOB_STORED_MAX + 100;

		CHECK_EQ_INT(pread(tf, &b, 1, at), 1);
		b ^= 1;
		CHECK_EQ_INT(pwrite(tf, &b, 1, at), 1);
		close(tf);
	}
	CHECK_EQ_INT(blob_read(err, bs, ra, ka, BLOB_CHUNK + 5, out, 10), -1);
	CHECK(contains(err, "damaged"));
	CHECK_EQ_INT(blob_read(err, bs, ra, ka, BLOB_CHUNK - 5, out, 10), -1);
	CHECK_EQ_INT(blob_read(err, bs, ra, ka, 5, out, 10), 0);
	CHECK(same_bytes(out, 5, 10, 7));
	blob_close(bs);
	close(fd);
}

/* Shuffles n indexes with a fixed seed. */
static void
shuffle(uint32_t *order, uint32_t n, uint32_t seed)
{
	for (uint32_t k = 0; k < n; k++)
		order[k] = k;
	for (uint32_t k = n; k > 1; k--) {
		uint32_t j = (byte_at(k, seed) | (uint32_t)byte_at(k + 1000,
		    seed) << 8) % k, t = order[k - 1];

		order[k - 1] = order[j];
		order[j] = t;
	}
}

static int
file_equal(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb, eq = fa != NULL && fb != NULL;

	while (eq) {
		ca = getc(fa);
		cb = getc(fb);
		if (ca != cb)
			eq = 0;
		if (ca == EOF)
			break;
	}
	if (fa != NULL)
		fclose(fa);
	if (fb != NULL)
		fclose(fb);
	return eq;
}

static void
test_fetch(void)
{
	char err[PAPO_ERR_LEN], da[512], db[512], ref[BLOB_REF_LEN + 1];
	char pa[1024], pb[1024], names[2048];
	uint8_t key[PAPO_KEY_LEN], *leaves = NULL, *chunk, *out;
	uint32_t n, order[16], first, have, total;
	uint64_t size = 4 * BLOB_CHUNK + 1000;
	struct blob_store *a, *b;
	size_t len;
	int fd = make_file("fetch", size, 11);

	dir_of(da, sizeof(da), "fa");
	dir_of(db, sizeof(db), "fb");
	a = blob_open(err, da, 0);
	b = blob_open(err, db, 0);
	CHECK(a != NULL && b != NULL);
	if (a == NULL || b == NULL)
		return;
	chunk = malloc(BLOB_STORED_MAX);
	out = malloc(size);
	blob_key_new(key);
	CHECK_EQ_INT(blob_add(err, a, fd, key, ref, &size), 0);
	CHECK_EQ_INT(blob_leaves(err, a, ref, &leaves, &n), 0);
	CHECK_EQ_INT(n, 5);

	/* A leaf list that is not the reference's, or a wrong size. */
	leaves[3 * PAPO_KEY_LEN] ^= 1;
	CHECK_EQ_INT(blob_fetch_start(err, b, ref, size, leaves, n),
	    BLOB_REFUSED);
	CHECK(contains(err, "do not make"));
	leaves[3 * PAPO_KEY_LEN] ^= 1;
	CHECK_EQ_INT(blob_fetch_start(err, b, ref, size + 1, leaves, n),
	    BLOB_REFUSED);
	CHECK_EQ_INT(blob_fetch_start(err, b, ref, size, leaves, n - 1),
	    BLOB_REFUSED);
	CHECK(contains(err, "has 5 chunks, not 4"));
	CHECK_EQ_INT(blob_fetch_start(err, b, ref, BLOB_SIZE_MAX + 1, leaves,
	    n), -1);
	CHECK(contains(err, "the largest"));
	CHECK_EQ_INT(listing(db, names, sizeof(names)), 0);

	CHECK_EQ_INT(blob_fetch_start(err, b, ref, size, leaves, n), 0);
	CHECK_EQ_INT(blob_used(b), cost(size));
	CHECK_EQ_INT(blob_missing(err, b, ref, 0, &first, &have, &total), 0);
	CHECK(first == 0 && have == 0 && total == 5);

	shuffle(order, n, 3);
	/* A wrong chunk is refused and nothing is written; a chunk of the
	 * wrong length too. */
	CHECK_EQ_INT(blob_chunk(err, a, ref, order[0], chunk, &len), 0);
	chunk[len / 2] ^= 0x40;
	CHECK_EQ_INT(blob_fetch_chunk(err, b, ref, order[0], chunk, len),
	    BLOB_REFUSED);
	CHECK(contains(err, "does not match its leaf"));
	CHECK_EQ_INT(blob_fetch_chunk(err, b, ref, order[0], chunk, len - 1),
	    BLOB_REFUSED);
	CHECK_EQ_INT(blob_missing(err, b, ref, 0, &first, &have, &total), 0);
	CHECK_EQ_INT(have, 0);
	for (uint32_t k = 0; k < n; k++) {
		CHECK_EQ_INT(blob_chunk(err, a, ref, order[k], chunk, &len), 0);
		CHECK_EQ_INT(blob_fetch_chunk(err, b, ref, order[k], chunk,
		    len), 0);
		if (k == 0) {
			uint8_t *c2 = malloc(BLOB_STORED_MAX);
			size_t l2;

			/* Written, not committed: served on by whoever wrote
			 * it, but not recorded, so not taken after a crash. */
			CHECK_EQ_INT(blob_missing(err, b, ref, 0, &first, &have,
			    &total), 0);
			CHECK_EQ_INT(have, 0);
			CHECK_EQ_INT(blob_chunk(err, b, ref, order[k], c2, &l2),
			    -1);
			CHECK(contains(err, "not here yet"));
			CHECK_EQ_INT(blob_part_chunk(err, b, ref, size,
			    order[k], c2, &l2), 0);
			CHECK(l2 == len && memcmp(c2, chunk, len) == 0);
			free(c2);
		}
		if (k == 1) {
			uint8_t *c2 = malloc(BLOB_STORED_MAX);
			size_t l2;

			CHECK_EQ_INT(blob_fetch_commit(err, b, ref, order, 2),
			    0);
			CHECK_EQ_INT(blob_missing(err, b, ref, 0, &first, &have,
			    &total), 0);
			CHECK_EQ_INT(have, 2);
			/* Not yet whole: not a file to read, but what it has
			 * it serves, and what it lacks it says it lacks. */
			CHECK(!blob_has(b, ref));
			CHECK_EQ_INT(blob_read(err, b, ref, key, 0, out, 1), -1);
			CHECK_EQ_INT(blob_chunk(err, b, ref, order[k], c2, &l2),
			    0);
			CHECK(l2 == len && memcmp(c2, chunk, len) == 0);
			CHECK_EQ_INT(blob_chunk(err, b, ref, order[k + 1], c2,
			    &l2), -1);
			CHECK(contains(err, "not here yet"));
			/* The same chunk twice is accepted, and a commit of
			 * none changes nothing. */
			CHECK_EQ_INT(blob_fetch_chunk(err, b, ref, order[k],
			    chunk, len), 0);
			CHECK_EQ_INT(blob_fetch_commit(err, b, ref, NULL, 0),
			    0);
			free(c2);
		}
	}
	/* A chunk index past the file is refused, nothing recorded. */
	{
		uint32_t past = n;

		CHECK_EQ_INT(blob_fetch_commit(err, b, ref, &past, 1), -1);
		CHECK(contains(err, "has 5 chunks"));
		CHECK(!blob_has(b, ref));
	}
	CHECK_EQ_INT(blob_fetch_commit(err, b, ref, order + 2, n - 2), 1);
	CHECK(blob_has(b, ref));
	CHECK_EQ_INT(blob_read(err, b, ref, key, 0, out, size), 0);
	CHECK(same_bytes(out, 0, size, 11));
	/* Every holder stores the same bytes, and nothing else is left. */
	snprintf(pa, sizeof(pa), "%s/%s", da, ref);
	snprintf(pb, sizeof(pb), "%s/%s", db, ref);
	CHECK(file_equal(pa, pb));
	CHECK_EQ_INT(listing(db, names, sizeof(names)), 2);
	CHECK_EQ_INT(blob_used(b), cost(size));
	CHECK_EQ_INT(blob_fetch_start(err, b, ref, size, leaves, n), 1);

	/* An empty file is whole as soon as its fetch starts. */
	{
		int ef = make_file("empty", 0, 1);
		char eref[BLOB_REF_LEN + 1];
		uint64_t esize;

		CHECK_EQ_INT(blob_add(err, a, ef, key, eref, &esize), 0);
		CHECK_EQ_INT(blob_fetch_start(err, b, eref, 0, NULL, 0), 1);
		CHECK(blob_has(b, eref));
		CHECK_EQ_INT(blob_size(err, b, eref, &esize), 0);
		CHECK_EQ_INT(esize, 0);
		CHECK_EQ_INT(blob_read(err, b, eref, key, 0, out, 0), 0);
		CHECK_EQ_INT(blob_remove(err, b, eref), 0);
		close(ef);
	}

	/* A fetch under way, then the same file shared here with the same
	 * key: one complete blob, counted once. */
	blob_close(b);
	dir_of(db, sizeof(db), "fc");
	b = blob_open(err, db, 0);
	CHECK(b != NULL);
	if (b != NULL) {
		char again[BLOB_REF_LEN + 1];

		CHECK_EQ_INT(blob_fetch_start(err, b, ref, size, leaves, n), 0);
		CHECK_EQ_INT(blob_add(err, b, fd, key, again, &size), 0);
		CHECK_EQ_STR(again, ref);
		CHECK(blob_has(b, ref));
		CHECK_EQ_INT(blob_used(b), cost(size));
		CHECK_EQ_INT(listing(db, names, sizeof(names)), 2);
	}
	free(leaves);
	free(chunk);
	free(out);
	blob_close(a);
	blob_close(b);
	close(fd);
}

/* A fetch cut off by its process's death resumes at reopen. */
static void
test_resume(void)
{
	char err[PAPO_ERR_LEN], da[512], db[512], ref[BLOB_REF_LEN + 1];
	char part[1024];
	uint8_t key[PAPO_KEY_LEN], *leaves = NULL, *chunk, *out;
	uint32_t n, first, have, total;
	uint64_t size = 6 * BLOB_CHUNK;
	struct blob_store *a, *b;
	size_t len;
	pid_t pid;
	int fd = make_file("resume", size, 13), status = -1;

	dir_of(da, sizeof(da), "ra");
	dir_of(db, sizeof(db), "rb");
	a = blob_open(err, da, 0);
	CHECK(a != NULL);
	if (a == NULL)
		return;
	chunk = malloc(BLOB_STORED_MAX);
	out = malloc(size);
	blob_key_new(key);
	CHECK_EQ_INT(blob_add(err, a, fd, key, ref, &size), 0);
	CHECK_EQ_INT(blob_leaves(err, a, ref, &leaves, &n), 0);
	pid = fork();
	if (pid == 0) {
		/* Chunks written, then the process dies at once. */
		b = blob_open(err, db, 0);
		if (b == NULL || blob_fetch_start(err, b, ref, size, leaves,
		    n) != 0)
			_exit(2);
		static const uint32_t three[] = {0, 1, 2};

		/* Three chunks committed, a fourth written and not. */
		for (uint32_t i = 0; i < 4; i++)
			if (blob_chunk(err, a, ref, i, chunk, &len) != 0 ||
			    blob_fetch_chunk(err, b, ref, i, chunk, len) != 0)
				_exit(3);
		if (blob_fetch_commit(err, b, ref, three, 3) != 0)
			_exit(4);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* And chunk 3 torn mid-write: bytes in .part, its bit not set. */
	snprintf(part, sizeof(part), "%s/%s.part", db, ref);
	{
		int pf = open(part, O_WRONLY);

		CHECK(pf != -1);
		if (pf != -1) {
			CHECK_EQ_INT(pwrite(pf, "torn", 4,
			    3 * (off_t)BLOB_STORED_MAX), 4);
			close(pf);
		}
	}
	b = blob_open(err, db, 0);
	CHECK(b != NULL);
	if (b == NULL)
		goto out;
	CHECK_EQ_INT(blob_used(b), cost(size));
	CHECK(!blob_has(b, ref));
	CHECK_EQ_INT(blob_missing(err, b, ref, 0, &first, &have, &total), 0);
	CHECK(first == 3 && have == 3 && total == 6);
	CHECK_EQ_INT(blob_fetch_start(err, b, ref, size, leaves, n), 0);
	CHECK_EQ_INT(blob_missing(err, b, ref, 0, &first, &have, &total), 0);
	CHECK_EQ_INT(have, 3);
	for (uint32_t i = first; i < n; i++) {
		CHECK_EQ_INT(blob_chunk(err, a, ref, i, chunk, &len), 0);
		CHECK_EQ_INT(blob_fetch_chunk(err, b, ref, i, chunk, len), 0);
		CHECK_EQ_INT(blob_fetch_commit(err, b, ref, &i, 1),
		    i + 1 == n ? 1 : 0);
	}
	CHECK_EQ_INT(blob_missing(err, b, ref, 0, &first, &have, &total), -1);
	CHECK_EQ_INT(blob_read(err, b, ref, key, 0, out, size), 0);
	CHECK(same_bytes(out, 0, size, 13));
	blob_close(b);
out:
	free(leaves);
	free(chunk);
	free(out);
	blob_close(a);
	close(fd);
}

static void
test_quota(void)
{
	char err[PAPO_ERR_LEN], dir[512], ref[BLOB_REF_LEN + 1];
	char before[2048], after[2048];
	uint8_t key[PAPO_KEY_LEN], leaf[PAPO_KEY_LEN] = {0};
	char want[128];
	uint64_t size, limit = 1000000;
	struct blob_store *bs;
	int fd = make_file("quota", 600000, 17);

	dir_of(dir, sizeof(dir), "quota.d");
	bs = blob_open(err, dir, limit);
	CHECK(bs != NULL);
	if (bs == NULL)
		return;
	blob_key_new(key);
	CHECK_EQ_INT(blob_add(err, bs, fd, key, ref, &size), 0);
	listing(dir, before, sizeof(before));
	blob_key_new(key);
	CHECK_EQ_INT(blob_add(err, bs, fd, key, ref, &size), -1);
	CHECK(contains(err, "limit is 1000000 bytes"));
	snprintf(want, sizeof(want), "needs %llu bytes",
	    (unsigned long long)cost(600000));
	CHECK(contains(err, want));
	CHECK_EQ_INT(blob_used(bs), cost(600000));
	listing(dir, after, sizeof(after));
	CHECK_EQ_STR(after, before);
	/* A fetch start too: checked before anything is written.  (Its
	 * leaves must make the reference first; one leaf of a 1-chunk file
	 * whose reference is computed here.) */
	{
		crypto_generichash_state h;
		uint8_t root[PAPO_KEY_LEN], s[8] = {0};
		char r2[BLOB_REF_LEN + 1];

		s[2] = 0x07;            /* 0x070000 = 458752 bytes */
		crypto_generichash_init(&h, NULL, 0, PAPO_KEY_LEN);
		crypto_generichash_update(&h, (const uint8_t *)BLOB_LABEL,
		    strlen(BLOB_LABEL));
		crypto_generichash_update(&h, s, 8);
		crypto_generichash_update(&h, leaf, PAPO_KEY_LEN);
		crypto_generichash_update(&h, leaf, PAPO_KEY_LEN);
		crypto_generichash_final(&h, root, PAPO_KEY_LEN);
		b32_encode(root, PAPO_KEY_LEN, r2);
		{
			uint8_t two[2 * PAPO_KEY_LEN] = {0};

			CHECK_EQ_INT(blob_fetch_start(err, bs, r2, 0x070000,
			    two, 2), -1);
			CHECK(contains(err, "limit is 1000000 bytes"));
		}
	}
	listing(dir, after, sizeof(after));
	CHECK_EQ_STR(after, before);
	blob_close(bs);
	close(fd);
}

/* Another process keeps writing the file while it is shared. */
static void
test_changing(void)
{
	char err[PAPO_ERR_LEN], dir[512], ref[BLOB_REF_LEN + 1];
	char names[2048];
	uint8_t key[PAPO_KEY_LEN];
	struct blob_store *bs;
	uint64_t size;
	pid_t pid;
	int fd = make_file("changing", 48 * 1024 * 1024, 19), pr;

	dir_of(dir, sizeof(dir), "changing.d");
	bs = blob_open(err, dir, 0);
	CHECK(bs != NULL);
	if (bs == NULL)
		return;
	blob_key_new(key);
	pid = fork();
	if (pid == 0) {
		for (;;) {
			pwrite(fd, "x", 1, 0);
			usleep(500);
		}
	}
	usleep(20000);
	CHECK_EQ_INT(blob_add(err, bs, fd, key, ref, &size), -1);
	CHECK(contains(err, "changed while it was read"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK_EQ_INT(listing(dir, names, sizeof(names)), 0);
	CHECK_EQ_INT(blob_used(bs), 0);

	/* A file that reads longer than its size says (as /proc's do). */
	pr = open("/proc/self/status", O_RDONLY);
	if (pr != -1) {
		CHECK_EQ_INT(blob_add(err, bs, pr, key, ref, &size), -1);
		CHECK(contains(err, "changed while it was read"));
		close(pr);
	}
	CHECK_EQ_INT(listing(dir, names, sizeof(names)), 0);
	/* Not a regular file at all. */
	pr = open(dir, O_RDONLY);
	CHECK_EQ_INT(blob_add(err, bs, pr, key, ref, &size), -1);
	CHECK(contains(err, "regular file"));
	close(pr);
	blob_close(bs);
	close(fd);
}

/* A full disk, as RLIMIT_FSIZE makes one: writes past 1 MB fail. */
static void
test_disk_full(void)
{
	char err[PAPO_ERR_LEN], da[512], db[512], ref[BLOB_REF_LEN + 1];
	char before[2048], after[2048];
	uint8_t key[PAPO_KEY_LEN], *leaves = NULL, *chunk;
	uint32_t n, first, have;
	uint64_t size = 3 * 1024 * 1024;
	struct blob_store *a, *b;
	struct rlimit old, small;
	size_t len;
	int fd = make_file("full", size, 23);

	dir_of(da, sizeof(da), "full.a");
	dir_of(db, sizeof(db), "full.b");
	a = blob_open(err, da, 0);
	b = blob_open(err, db, 0);
	CHECK(a != NULL && b != NULL);
	if (a == NULL || b == NULL)
		return;
	chunk = malloc(BLOB_STORED_MAX);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = 1024 * 1024;

	blob_key_new(key);
	setrlimit(RLIMIT_FSIZE, &small);
	CHECK_EQ_INT(blob_add(err, a, fd, key, ref, &size), -1);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(contains(err, "File too large"));
	CHECK_EQ_INT(listing(da, before, sizeof(before)), 0);
	CHECK_EQ_INT(blob_used(a), 0);
	/* Still usable once there is room. */
	CHECK_EQ_INT(blob_add(err, a, fd, key, ref, &size), 0);
	CHECK(blob_has(a, ref));

	/* A fetch's chunk past the limit fails (not refused: the sender
	 * was right); the chunk is still missing and is taken later. */
	CHECK_EQ_INT(blob_leaves(err, a, ref, &leaves, &n), 0);
	CHECK_EQ_INT(blob_fetch_start(err, b, ref, size, leaves, n), 0);
	listing(db, before, sizeof(before));
	CHECK_EQ_INT(blob_chunk(err, a, ref, 8, chunk, &len), 0);
	setrlimit(RLIMIT_FSIZE, &small);
	CHECK_EQ_INT(blob_fetch_chunk(err, b, ref, 8, chunk, len), -1);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(contains(err, "cannot write chunk 8"));
	CHECK_EQ_INT(blob_missing(err, b, ref, 8, &first, &have, NULL), 0);
	CHECK(first == 8 && have == 0);
	listing(db, after, sizeof(after));
	CHECK_EQ_STR(after, before);
	for (uint32_t i = 0; i < n; i++) {
		CHECK_EQ_INT(blob_chunk(err, a, ref, i, chunk, &len), 0);
		CHECK_EQ_INT(blob_fetch_chunk(err, b, ref, i, chunk, len), 0);
		CHECK_EQ_INT(blob_fetch_commit(err, b, ref, &i, 1),
		    i + 1 == n ? 1 : 0);
	}
	CHECK(blob_has(b, ref));
	signal(SIGXFSZ, SIG_DFL);
	free(leaves);
	free(chunk);
	blob_close(a);
	blob_close(b);
	close(fd);
}

static void
test_keep_and_tidy(void)
{
	char err[PAPO_ERR_LEN], dir[512], src[512], refs[4][BLOB_REF_LEN + 1];
	char path[1024], names[4096];
	uint8_t key[PAPO_KEY_LEN], *leaves = NULL, *chunk;
	const char *keep[2];
	struct blob_store *bs, *a;
	uint64_t size;
	uint32_t n, first, have;
	size_t len;
	int fd;

	dir_of(dir, sizeof(dir), "keep.d");
	dir_of(src, sizeof(src), "keep.src");
	bs = blob_open(err, dir, 0);
	a = blob_open(err, src, 0);
	CHECK(bs != NULL && a != NULL);
	if (bs == NULL || a == NULL)
		return;
	chunk = malloc(BLOB_STORED_MAX);
	blob_key_new(key);
	for (int k = 0; k < 3; k++) {
		fd = make_file("keep", 1000 + (uint64_t)k, 30 + (uint32_t)k);
		CHECK_EQ_INT(blob_add(err, bs, fd, key, refs[k], &size), 0);
		close(fd);
	}
	/* refs[3]: a fetch under way, one chunk of three written. */
	fd = make_file("keep", 2 * BLOB_CHUNK + 5, 40);
	CHECK_EQ_INT(blob_add(err, a, fd, key, refs[3], &size), 0);
	close(fd);
	CHECK_EQ_INT(blob_leaves(err, a, refs[3], &leaves, &n), 0);
	CHECK_EQ_INT(blob_fetch_start(err, bs, refs[3], size, leaves, n), 0);
	CHECK_EQ_INT(blob_chunk(err, a, refs[3], 1, chunk, &len), 0);
	CHECK_EQ_INT(blob_fetch_chunk(err, bs, refs[3], 1, chunk, len), 0);
	{
		uint32_t one = 1;

		CHECK_EQ_INT(blob_fetch_commit(err, bs, refs[3], &one, 1), 0);
	}

	/* What a killed process leaves: temporaries, a blob's files without
	 * the rest; and a file that is not the store's. */
	blob_close(bs);
	{
		static const char *const junk[] = {"add-AbC123", "x.tmp",
		    ".leaves.tmp", ".part", ".have", "notes.txt"};
		char fake[BLOB_REF_LEN + 1];

		memcpy(fake, refs[0], sizeof(fake));
		fake[0] = fake[0] == 'a' ? 'b' : 'a';
		for (size_t k = 0; k < sizeof(junk) / sizeof(junk[0]); k++) {
			int jf;

			if (junk[k][0] == '.')
				snprintf(path, sizeof(path), "%s/%s%s", dir,
				    fake, junk[k]);
			else
				snprintf(path, sizeof(path), "%s/%s", dir,
				    junk[k]);
			jf = open(path, O_WRONLY | O_CREAT, 0600);
			CHECK(jf != -1);
			if (jf != -1) {
				CHECK_EQ_INT(write(jf, "junk", 4), 4);
				close(jf);
			}
		}
	}
	bs = blob_open(err, dir, 0);
	CHECK(bs != NULL);
	if (bs == NULL)
		goto out;
	CHECK_EQ_INT(listing(dir, names, sizeof(names)), 10);
	CHECK(contains(names, "notes.txt"));
	/* (A reference may hold "tmp"; only a temporary ends in ".tmp".) */
	CHECK(strstr(names, ".tmp") == NULL && strstr(names, "add-") == NULL);
	CHECK_EQ_INT(blob_used(bs), cost(1000) + cost(1001) + cost(1002) +
	    cost(2 * BLOB_CHUNK + 5));
	CHECK_EQ_INT(blob_missing(err, bs, refs[3], 0, &first, &have, NULL),
	    0);
	CHECK(first == 0 && have == 1);

	/* Retention: only the blobs named stay, partial ones included. */
	keep[0] = refs[1];
	keep[1] = "not a reference";
	CHECK_EQ_INT(blob_keep(err, bs, keep, 2), 3);
	CHECK(!blob_has(bs, refs[0]) && blob_has(bs, refs[1]) &&
	    !blob_has(bs, refs[2]));
	CHECK_EQ_INT(blob_missing(err, bs, refs[3], 0, &first, &have, NULL),
	    -1);
	CHECK_EQ_INT(blob_used(bs), cost(1001));
	CHECK_EQ_INT(listing(dir, names, sizeof(names)), 3);
	CHECK_EQ_INT(blob_remove(err, bs, refs[1]), 0);
	CHECK_EQ_INT(blob_remove(err, bs, refs[1]), -1);
	CHECK(contains(err, "no file"));
	CHECK_EQ_INT(blob_used(bs), 0);
	CHECK_EQ_INT(listing(dir, names, sizeof(names)), 1);
	blob_close(bs);
out:
	free(leaves);
	free(chunk);
	blob_close(a);
}

static long
peak_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Run first, before the other tests raise the peak. */
static void
test_memory(void)
{
	char err[PAPO_ERR_LEN], dir[512], ref[BLOB_REF_LEN + 1];
	char path[1024];
	uint8_t key[PAPO_KEY_LEN];
	struct blob_store *bs;
	uint64_t size;
	long before, small, big;
	int fd;

	dir_of(dir, sizeof(dir), "mem.d");
	bs = blob_open(err, dir, 0);
	CHECK(bs != NULL);
	if (bs == NULL)
		return;
	blob_key_new(key);
	fd = make_file("mem", 256 * 1024 * 1024, 50);
	before = peak_kb();
	CHECK_EQ_INT(blob_add(err, bs, fd, key, ref, &size), 0);
	big = peak_kb();
	close(fd);
	snprintf(path, sizeof(path), "%s/mem", top);
	unlink(path);
	CHECK_EQ_INT(blob_remove(err, bs, ref), 0);
	fd = make_file("mem", 4 * 1024 * 1024, 51);
	CHECK_EQ_INT(blob_add(err, bs, fd, key, ref, &size), 0);
	small = peak_kb();
	close(fd);
	printf("peak RSS: %ld KiB before, %ld KiB after adding 256 MiB "
	    "(+%ld KiB), %ld KiB after 4 MiB more\n", before, big,
	    big - before, small);
	/* One plain and one stored chunk, not the file. */
	CHECK(big - before < 4 * 1024);
	CHECK_EQ_INT(blob_remove(err, bs, ref), 0);
	blob_close(bs);
}

int
main(void)
{
	if (sodium_init() == -1)
		return 1;
	check_tmpdir(top, sizeof(top), "blob");
	test_memory();
	test_round_trip();
	test_keys();
	test_fetch();
	test_resume();
	test_quota();
	test_changing();
	test_disk_full();
	test_keep_and_tidy();
	CHECK_EQ_INT(check_rmtree(top), 0);
	return check_exit();
}
