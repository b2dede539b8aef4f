/*
 * beacon.c: LAN discovery by multicast beacons (beacon.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "lib/loop.h"
#include "lib/os.h"
#include "node/net/beacon.h"

#define BEACON_KIND 0x22
#define BEACON_PLAIN (4 + PAPO_KEY_LEN + 2)  /* epoch, id, port */
_Static_assert(BEACON_PLAIN == 38, "a beacon's length is the wire's");
#define BEACON_IFS_MAX 16
static const char beacon_ad[] = "papo beacon v2";

struct beacon {
	struct beacon_env env;
	int fd;
	struct in_addr ifs[BEACON_IFS_MAX];   /* interfaces joined and sent on */
	size_t nifs;
	struct loop_timer *timer;
	uint64_t sent, heard, bad;
};

void
beacon_make(const struct room_keys *k, const uint8_t id[PAPO_KEY_LEN], uint16_t port,
    uint64_t now_s, uint8_t out[BEACON_LEN])
{
	uint8_t plain[BEACON_PLAIN];
	uint32_t epoch = (uint32_t)(now_s / BEACON_EPOCH_S);
	unsigned long long clen;

	for (int i = 0; i < 4; i++)
		plain[i] = (uint8_t)(epoch >> (24 - 8 * i));
	memcpy(plain + 4, id, PAPO_KEY_LEN);
	plain[4 + PAPO_KEY_LEN] = (uint8_t)(port >> 8);
	plain[4 + PAPO_KEY_LEN + 1] = (uint8_t)port;
	out[0] = BEACON_KIND;
	randombytes_buf(out + 1, 24);
	crypto_aead_xchacha20poly1305_ietf_encrypt(out + 25, &clen, plain,
	    sizeof(plain), (const uint8_t *)beacon_ad, sizeof(beacon_ad), NULL,
	    out + 1, k->seal);
}

int
beacon_open(const struct room_keys *k, const uint8_t *d, size_t n,
    uint64_t now_s, uint8_t id[PAPO_KEY_LEN], uint16_t *port)
{
	uint8_t plain[BEACON_PLAIN];
	unsigned long long plen;
	uint32_t epoch = 0, now = (uint32_t)(now_s / BEACON_EPOCH_S);

	if (n != BEACON_LEN || d[0] != BEACON_KIND ||
	    crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL,
	    d + 25, n - 25, (const uint8_t *)beacon_ad, sizeof(beacon_ad),
	    d + 1, k->seal) != 0 || plen != sizeof(plain))
		return -1;
	for (int i = 0; i < 4; i++)
		epoch = epoch << 8 | plain[i];
	/* Within one step either way: about a minute at most. */
	if (epoch + 1 < now || epoch > now + 1)
		return -1;
	memcpy(id, plain + 4, PAPO_KEY_LEN);
	*port = (uint16_t)(plain[4 + PAPO_KEY_LEN] << 8 | plain[4 + PAPO_KEY_LEN + 1]);
	return *port != 0 ? 0 : -1;
}

static void
beacon_read(void *arg, uint32_t events)
{
	struct beacon *b = arg;
	uint8_t d[512], id[PAPO_KEY_LEN];
	struct sockaddr_in from;
	socklen_t fromlen;
	struct addr at;
	uint16_t port;
	ssize_t n;

	(void)events;
	for (;;) {
		fromlen = sizeof(from);
		n = recvfrom(b->fd, d, sizeof(d), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &fromlen);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (beacon_open(b->env.keys, d, (size_t)n,
		    loop_wall_ms() / 1000, id, &port) == -1) {
			b->bad++;
			continue;
		}
		if (memcmp(id, b->env.me->pk, PAPO_KEY_LEN) == 0)
			continue;          /* our own, looped back */
		b->heard++;
		memset(&at, 0, sizeof(at));
		at.family = 4;
		memcpy(at.ip, &from.sin_addr, 4);
		at.port = port;
		b->env.heard(b->env.arg, id, &at);
	}
}

static void
beacon_tick(void *arg)
{
	struct beacon *b = arg;
	struct sockaddr_in to;
	uint8_t d[BEACON_LEN];

	if (b->env.wanted(b->env.arg)) {
		memset(&to, 0, sizeof(to));
		to.sin_family = AF_INET;
		to.sin_port = htons(BEACON_PORT);
		inet_pton(AF_INET, BEACON_GROUP, &to.sin_addr);
		beacon_make(b->env.keys, b->env.me->pk, b->env.port,
		    loop_wall_ms() / 1000, d);
		for (size_t i = 0; i < b->nifs; i++) {
			setsockopt(b->fd, IPPROTO_IP, IP_MULTICAST_IF, &b->ifs[i],
			    sizeof(b->ifs[i]));
			if (sendto(b->fd, d, sizeof(d), MSG_DONTWAIT,
			    (struct sockaddr *)&to, sizeof(to)) == sizeof(d))
				b->sent++;
		}
	}
	loop_timer_set(b->timer, loop_now_ns() + BEACON_EVERY_NS);
}

/* Joins the group on every IPv4 interface that is up, can multicast and
 * is not loopback. */
static void
beacon_join(struct beacon *b)
{
	struct ifaddrs *ifa, *i;
	struct ip_mreq mr;

	if (getifaddrs(&ifa) == -1)
		return;
	inet_pton(AF_INET, BEACON_GROUP, &mr.imr_multiaddr);
	for (i = ifa; i != NULL && b->nifs < BEACON_IFS_MAX; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP) || !(i->ifa_flags & IFF_MULTICAST) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		mr.imr_interface = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		if (setsockopt(b->fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr,
		    sizeof(mr)) == 0)
			b->ifs[b->nifs++] = mr.imr_interface;
	}
	freeifaddrs(ifa);
}

struct beacon *
beacon_new(char err[PAPO_ERR_LEN], const struct beacon_env *env)
{
	struct beacon *b = calloc(1, sizeof(*b));
	struct sockaddr_in sin;
	int one = 1, ttl = 1;

	if (b == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return NULL;
	}
	b->env = *env;
	if ((b->fd = os_socket(AF_INET, SOCK_DGRAM, 0, OS_NONBLOCK)) == -1) {
		snprintf(err, PAPO_ERR_LEN, "no socket: %s", strerror(errno));
		goto fail;
	}
	/* Every daemon on the host hears the group. */
	setsockopt(b->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(b->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	setsockopt(b->fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
	setsockopt(b->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(BEACON_PORT);
	if (bind(b->fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot bind UDP port %d: %s",
		    BEACON_PORT, strerror(errno));
		goto fail;
	}
	beacon_join(b);
	if (b->nifs == 0) {
		snprintf(err, PAPO_ERR_LEN, "no interface to multicast on");
		goto fail;
	}
	if ((b->timer = loop_timer_new(env->loop, beacon_tick, b)) == NULL ||
	    loop_add_fd(env->loop, b->fd, LOOP_IN, beacon_read, b) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot watch the beacon socket");
		goto fail;
	}
	loop_timer_set(b->timer, loop_now_ns() + BEACON_EVERY_NS / 5);
	return b;
fail:
	beacon_free(b);
	return NULL;
}

void
beacon_free(struct beacon *b)
{
	if (b == NULL)
		return;
	if (b->fd != -1) {
		loop_del_fd(b->env.loop, b->fd);
		close(b->fd);
	}
	loop_timer_free(b->timer);
	free(b);
}

void
beacon_counts(const struct beacon *b, uint64_t *sent, uint64_t *heard,
    uint64_t *bad)
{
	*sent = b != NULL ? b->sent : 0;
	*heard = b != NULL ? b->heard : 0;
	*bad = b != NULL ? b->bad : 0;
}
