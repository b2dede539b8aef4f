/* test_reach.c: observed addresses, NAT kinds and the advertised list. */
#include <string.h>

#include "node/net/beacon.h"
#include "node/net/punch.h"
#include "node/net/reach.h"
#include "tests/check.h"

/*
 * Punch datagrams and LAN beacons: made and checked under the room key;
 * another room's, a flipped byte, and one too old (a replay) are refused.
 */
static void
test_datagrams(void)
{
	struct room_keys k, other;
	uint8_t secret[PAPO_KEY_LEN], id[PAPO_KEY_LEN], got[PAPO_KEY_LEN], d[PUNCH_DATAGRAM_LEN];
	uint8_t b[BEACON_LEN];
	uint64_t now_ms = 1796000000000ull, now_s = now_ms / 1000;
	uint16_t port = 0;

	memset(secret, 7, sizeof(secret));
	sec_room_keys(secret, &k);
	memset(secret, 8, sizeof(secret));
	sec_room_keys(secret, &other);
	memset(id, 0x42, sizeof(id));

	punch_datagram_make(&k, id, now_ms, d);
	CHECK_EQ_INT(d[0] & 0x80, 0);            /* never a QUIC long header */
	CHECK(punch_datagram_check(&k, d, sizeof(d), now_ms + 5000, got) == 0);
	CHECK(memcmp(got, id, PAPO_KEY_LEN) == 0);
	CHECK(punch_datagram_check(&other, d, sizeof(d), now_ms, got) == -1);
	CHECK(punch_datagram_check(&k, d, sizeof(d), now_ms + 120000, got) == -1);
	CHECK(punch_datagram_check(&k, d, sizeof(d) - 1, now_ms, got) == -1);
	d[10] ^= 1;
	CHECK(punch_datagram_check(&k, d, sizeof(d), now_ms, got) == -1);

	beacon_make(&k, id, 7700, now_s, b);
	CHECK(beacon_open(&k, b, sizeof(b), now_s + 20, got, &port) == 0);
	CHECK(memcmp(got, id, PAPO_KEY_LEN) == 0 && port == 7700);
	/* Sealed: the member id does not appear in the clear. */
	for (size_t i = 0; i + 8 <= sizeof(b); i++)
		CHECK(memcmp(b + i, id, 8) != 0);
	CHECK(beacon_open(&other, b, sizeof(b), now_s, got, &port) == -1);
	CHECK(beacon_open(&k, b, sizeof(b), now_s + 120, got, &port) == -1);
	b[40] ^= 1;
	CHECK(beacon_open(&k, b, sizeof(b), now_s, got, &port) == -1);
}

static struct addr
A(const char *s)
{
	struct addr a;

	CHECK(addr_parse(s, &a) == 0);
	return a;
}

static const uint8_t *
peer(int n)
{
	static uint8_t ids[8][PAPO_KEY_LEN];

	memset(ids[n], n + 1, PAPO_KEY_LEN);
	return ids[n];
}

/* The advertised list as text, one space between. */
static const char *
addrs(const struct reach *r)
{
	static char out[8 * ADDR_STRLEN];
	struct addr v[PAPO_ADDR_MAX];
	char a[ADDR_STRLEN];
	size_t n = reach_addrs(r, v, PAPO_ADDR_MAX);

	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		addr_format(&v[i], a);
		if (i > 0)
			strcat(out, " ");
		strcat(out, a);
	}
	return out;
}

int
main(void)
{
	struct reach r;
	struct addr local[3] = { A("192.168.1.20:7700"), A("10.9.0.2:7700"),
	    A("127.0.0.1:7700") }, adv = A("198.51.100.9:7000"), pub, x;

	/* Loopback is left out unless it is all there is. */
	reach_init(&r, NULL, 0, local, 3);
	CHECK_EQ_STR(addrs(&r), "192.168.1.20:7700 10.9.0.2:7700");
	CHECK_EQ_INT(reach_nat(&r), REACH_UNKNOWN);
	reach_init(&r, NULL, 0, local + 2, 1);
	CHECK_EQ_STR(addrs(&r), "127.0.0.1:7700");

	/* A cone NAT: two peers agree; the address goes first after the
	 * advertised one, and changes what is advertised once. */
	reach_init(&r, &adv, 1, local, 3);
	x = A("203.0.113.5:40001");
	CHECK_EQ_INT(reach_observe(&r, peer(0), &x), 0);
	CHECK_EQ_INT(reach_nat(&r), REACH_UNKNOWN);
	CHECK_EQ_INT(reach_observe(&r, peer(1), &x), 1);
	CHECK_EQ_INT(reach_nat(&r), REACH_CONE);
	CHECK(reach_public(&r, &pub) == 0 && addr_equal(&pub, &x));
	CHECK_EQ_STR(addrs(&r), "198.51.100.9:7000 203.0.113.5:40001 "
	    "192.168.1.20:7700 10.9.0.2:7700");
	/* The same peer saying it again changes nothing. */
	CHECK_EQ_INT(reach_observe(&r, peer(1), &x), 0);
	/* One of them gone: no agreement, the address is withdrawn. */
	CHECK_EQ_INT(reach_forget(&r, peer(0)), 1);
	CHECK(reach_public(&r, &pub) == -1);
	CHECK_EQ_STR(addrs(&r), "198.51.100.9:7000 192.168.1.20:7700 "
	    "10.9.0.2:7700");

	/* One peer's word is offered for a punch, not advertised. */
	reach_init(&r, NULL, 0, local, 2);
	x = A("203.0.113.5:40001");
	reach_observe(&r, peer(0), &x);
	CHECK_EQ_STR(addrs(&r), "192.168.1.20:7700 10.9.0.2:7700");
	{
		struct addr v[PAPO_ADDR_MAX];
		size_t n = reach_punch_addrs(&r, v, PAPO_ADDR_MAX);

		CHECK_EQ_INT((int)n, 3);
		CHECK(addr_equal(&v[2], &x));
	}

	/* A symmetric NAT: same IP, other ports; no port advertised. */
	reach_init(&r, NULL, 0, local, 2);
	x = A("203.0.113.5:40001");
	reach_observe(&r, peer(0), &x);
	x = A("203.0.113.5:51234");
	reach_observe(&r, peer(1), &x);
	CHECK_EQ_INT(reach_nat(&r), REACH_SYMMETRIC);
	CHECK_EQ_STR(addrs(&r), "192.168.1.20:7700 10.9.0.2:7700");

	/* A router's mapping comes after the given addresses and before the
	 * agreed public one; a relayed address comes last, and stays when
	 * the list is full.  Setting or clearing either says whether the
	 * list changed. */
	reach_init(&r, &adv, 1, local, 3);
	x = A("203.0.113.5:40001");
	reach_observe(&r, peer(0), &x);
	reach_observe(&r, peer(1), &x);
	{
		struct addr m = A("198.51.100.20:7700"), rel = A("192.0.2.7:49152");
		struct addr many[PAPO_ADDR_MAX];

		CHECK_EQ_INT(reach_set_mapped(&r, &m), 1);
		CHECK_EQ_INT(reach_set_mapped(&r, &m), 0);
		CHECK_EQ_INT(reach_set_relayed(&r, &rel), 1);
		CHECK_EQ_STR(addrs(&r), "198.51.100.9:7000 198.51.100.20:7700 "
		    "203.0.113.5:40001 192.168.1.20:7700 10.9.0.2:7700 "
		    "192.0.2.7:49152");
		/* The mapping is the agreed address: said once. */
		CHECK_EQ_INT(reach_set_mapped(&r, &x), 1);
		CHECK_EQ_STR(addrs(&r), "198.51.100.9:7000 203.0.113.5:40001 "
		    "192.168.1.20:7700 10.9.0.2:7700 192.0.2.7:49152");
		CHECK_EQ_INT(reach_set_mapped(&r, NULL), 0);
		CHECK_EQ_INT(reach_set_relayed(&r, NULL), 1);
		CHECK_EQ_STR(addrs(&r), "198.51.100.9:7000 203.0.113.5:40001 "
		    "192.168.1.20:7700 10.9.0.2:7700");
		for (int i = 0; i < PAPO_ADDR_MAX; i++) {
			char t[32];

			snprintf(t, sizeof(t), "10.0.0.%d:7700", i + 1);
			addr_parse(t, &many[i]);
		}
		reach_init(&r, NULL, 0, many, PAPO_ADDR_MAX);
		reach_set_relayed(&r, &rel);
		CHECK_EQ_STR(addrs(&r), "10.0.0.1:7700 10.0.0.2:7700 "
		    "10.0.0.3:7700 10.0.0.4:7700 10.0.0.5:7700 10.0.0.6:7700 "
		    "10.0.0.7:7700 192.0.2.7:49152");
	}

	/* No NAT: peers see us where we are bound. */
	reach_init(&r, NULL, 0, local, 2);
	reach_observe(&r, peer(0), &local[0]);
	CHECK_EQ_INT(reach_nat(&r), REACH_UNKNOWN);
	reach_observe(&r, peer(1), &local[0]);
	CHECK_EQ_INT(reach_nat(&r), REACH_OPEN);
	CHECK_EQ_STR(reach_nat_name(REACH_OPEN), "open");

	/* A LAN peer and two outside ones: the outside ones decide. */
	reach_init(&r, NULL, 0, local, 2);
	reach_observe(&r, peer(0), &local[0]);
	x = A("203.0.113.5:40001");
	reach_observe(&r, peer(1), &x);
	reach_observe(&r, peer(2), &x);
	CHECK_EQ_INT(reach_nat(&r), REACH_CONE);

	/* A member lying about where it sees us cannot make us advertise
	 * its address alone; nor can more peers than the table holds push
	 * out an agreement for good. */
	reach_init(&r, NULL, 0, local, 2);
	x = A("192.0.2.66:6666");
	reach_observe(&r, peer(3), &x);
	CHECK(reach_public(&r, &pub) == -1);
	for (int i = 0; i < REACH_OBS_MAX + 4; i++) {
		uint8_t id[PAPO_KEY_LEN];

		memset(id, 0x80 + i, PAPO_KEY_LEN);
		x = A("203.0.113.5:40001");
		reach_observe(&r, id, &x);
	}
	CHECK(reach_public(&r, &pub) == 0);
	CHECK_EQ_INT((int)r.nobs, REACH_OBS_MAX);
	test_datagrams();
	return check_exit();
}
