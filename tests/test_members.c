/*
 * test_members.c: the member table at ten thousand members (member.h,
 * presence.h), without a network: a room's parts made by hand around a
 * loop that is never run, members added as an entry of theirs would
 * add them.  Finding, adding, peers.json written and read again, and a
 * table full at ROOM_MEMBERS_MAX, each within a CPU budget that a table
 * scanned from end to end on every lookup cannot meet.
 */
#include <time.h>

#include <sodium.h>

#include "lib/loop.h"
#include "node/room/presence.h"
#include "node/store/roomfile.h"
#include "tests/check.h"

#define N 10000
#define FINDS 1000000

/*
 * The budget, in CPU seconds, for N adds and FINDS finds.  Hashed, they
 * take about 0.1 s here, under the sanitizers well under 1 s.  Scanned,
 * each find compares about N/2 ids: 5e9 comparisons of 32 bytes, many
 * seconds at any speed; the adds alone N²/2 = 5e7.
 */
#define BUDGET_S 2.0

static struct identity ids[N];
static size_t presence_events;

static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The program's side: presence events counted, the rest dropped. */
static void
emit(void *arg, struct node_msg *m)
{
	(void)arg;
	presence_events += m->kind == NODE_EV_PRESENCE;
	node_msg_free(m);
}

struct fixture {
	struct room room;
	struct identity me;
	struct room_file rf;
	struct room_keys keys;
	struct room_settings set;
};

static void
fixture_init(struct fixture *x, struct loop *loop, const char *home)
{
	memset(x, 0, sizeof(*x));
	crypto_sign_keypair(x->me.pk, x->me.sk);
	strcpy(x->rf.name, "big");
	strcpy(x->rf.me, "me");
	randombytes_buf(x->rf.secret, sizeof(x->rf.secret));
	sec_room_keys(x->rf.secret, &x->keys);
	x->room.env.loop = loop;
	x->room.env.me = &x->me;
	x->room.env.keys = &x->keys;
	x->room.env.room = &x->rf;
	x->room.env.home = home;
	x->room.env.set = &x->set;
	x->room.env.emit = emit;
	x->room.keyring = keyring_new();
	CHECK(x->room.keyring != NULL);
	CHECK_EQ_INT(members_new(&x->room), 0);
	CHECK_EQ_INT(presence_new(&x->room), 0);
}

static void
fixture_free(struct fixture *x)
{
	presence_free(&x->room);
	members_free(&x->room);
	keyring_free(x->room.keyring);
}

/* N adds, FINDS finds: every one finds its own member, an id never
 * added finds none. */
static void
test_add_find(struct room *room)
{
	double t0 = cpu_s(), t1, t2;
	uint8_t other[PAPO_KEY_LEN];
	size_t wrong = 0;

	for (size_t i = 0; i < N; i++)
		if (member_add(room, ids[i].pk) == NULL)
			wrong++;
	t1 = cpu_s();
	for (size_t k = 0; k < FINDS; k++) {
		const struct member *m = member_find(room, ids[k % N].pk);

		wrong += m == NULL || memcmp(m->id, ids[k % N].pk,
		    PAPO_KEY_LEN) != 0;
	}
	t2 = cpu_s();
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(members_n(room), N);
	/* Added again: the one already there; ourselves: never. */
	CHECK(member_add(room, ids[5].pk) == member_find(room, ids[5].pk));
	CHECK_EQ_INT(members_n(room), N);
	CHECK(member_add(room, room->env.me->pk) == NULL);
	randombytes_buf(other, sizeof(other));
	CHECK(member_find(room, other) == NULL);
	printf("members: %d adds %.2f us each, %d finds %.3f us each, "
	    "sizeof(struct member) %zu B\n", N, (t1 - t0) * 1e6 / N, FINDS,
	    (t2 - t1) * 1e6 / FINDS, sizeof(struct member));
	CHECK(t2 - t0 < BUDGET_S);
}

/* peers.json of N members written and read into a new table: every
 * member found again, with its name. */
static void
test_save_load(struct room *room, struct loop *loop, const char *home)
{
	struct fixture y;
	size_t wrong = 0;
	double t0;

	for (size_t i = 0; i < N; i++) {
		struct member *m = member_find(room, ids[i].pk);

		snprintf(m->name, PAPO_NAME_MAX + 1, "agent-%zu", i);
		m->seen = m->announced = 1796000000000ull + i;
	}
	t0 = cpu_s();
	members_save(room);
	fixture_init(&y, loop, home);
	members_load(&y.room);
	printf("members: peers.json of %d written and read in %.2f s\n", N,
	    cpu_s() - t0);
	CHECK_EQ_INT(members_n(&y.room), N);
	for (size_t i = 0; i < N; i++) {
		const struct member *m = member_find(&y.room, ids[i].pk);
		char want[PAPO_NAME_MAX + 1];

		snprintf(want, sizeof(want), "agent-%zu", i);
		wrong += m == NULL || strcmp(m->name, want) != 0 ||
		    m->announced != 1796000000000ull + i;
	}
	CHECK_EQ_INT(wrong, 0);
	fixture_free(&y);
}

/* Filled up to ROOM_MEMBERS_MAX: one more is refused, those in it are
 * all still found. */
static void
test_full(struct room *room)
{
	uint8_t id[PAPO_KEY_LEN];
	size_t lost = 0;

	while (members_n(room) < ROOM_MEMBERS_MAX) {
		randombytes_buf(id, sizeof(id));
		if (member_add(room, id) == NULL)
			break;
	}
	CHECK_EQ_INT(members_n(room), ROOM_MEMBERS_MAX);
	randombytes_buf(id, sizeof(id));
	CHECK(member_add(room, id) == NULL);
	CHECK(member_find(room, id) == NULL);
	for (size_t i = 0; i < members_n(room); i++)
		lost += member_find(room, member_at(room, i)->id) !=
		    member_at(room, i);
	CHECK_EQ_INT(lost, 0);
}

int
main(void)
{
	char home[256];
	struct loop *loop;
	struct fixture x;

	if (sec_init() == -1)
		return 1;
	check_tmpdir(home, sizeof(home), "members");
	loop = loop_new();
	CHECK(loop != NULL);
	for (size_t i = 0; i < N; i++)
		crypto_sign_keypair(ids[i].pk, ids[i].sk);
	fixture_init(&x, loop, home);
	test_add_find(&x.room);
	test_save_load(&x.room, loop, home);
	test_full(&x.room);
	fixture_free(&x);
	loop_free(loop);
	check_rmtree(home);
	return check_exit();
}
