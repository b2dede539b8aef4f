/*
 * portmap_probe: node/net/portmap.c as the daemon will use it, for
 * tests/e2e/portmap.sh (not a ctest of its own).  It binds a UDP socket
 * on 0.0.0.0:PORT, runs a loop with a portmap for that port, and prints
 * one line on stdout for each change:
 *
 *   state asking
 *   state mapped method upnp external 203.0.113.21:7700
 *   state mapped method upnp reason external address 100.64.0.31 is ...
 *   state failed reason no UPnP or NAT-PMP router answered
 *   state off reason turned off (PAPO_PORTMAP=off)
 *
 * and "datagram from ADDR: TEXT" for each datagram its socket receives.
 * SIGTERM or SIGINT ends it cleanly: the mapping is removed, "stopped" is
 * printed, exit 0.  Settings, read as the daemon reads them:
 * PAPO_PORTMAP=off, PAPO_PORTMAP_PRIVATE=1, PAPO_LOG; and, for the test
 * only, PAPO_PORTMAP_LEASE=SECONDS (the lease asked for).
 *
 * Usage: portmap_probe PORT
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/loop.h"
#include "node/net/portmap.h"

struct probe {
	struct loop *loop;
	int udp, sig;
};

static void
probe_changed(void *arg, const struct portmap *pm)
{
	struct addr a;
	char at[ADDR_STRLEN];
	const char *method = portmap_method(pm), *reason = portmap_reason(pm);

	(void)arg;
	printf("state %s", portmap_state_name(portmap_state(pm)));
	if (method != NULL)
		printf(" method %s", method);
	if (portmap_mapped(pm, &a) == 0) {
		addr_format(&a, at);
		printf(" external %s", at);
	}
	if (reason != NULL)
		printf(" reason %s", reason);
	printf("\n");
}

static void
probe_datagram(void *arg, uint32_t events)
{
	struct probe *p = arg;
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	char buf[512], ip[INET_ADDRSTRLEN];
	ssize_t n;

	(void)events;
	while ((n = recvfrom(p->udp, buf, sizeof(buf) - 1, MSG_DONTWAIT,
	    (struct sockaddr *)&from, &flen)) >= 0) {
		buf[n] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		inet_ntop(AF_INET, &from.sin_addr, ip, sizeof(ip));
		printf("datagram from %s:%u: %s\n", ip, ntohs(from.sin_port),
		    buf);
		flen = sizeof(from);
	}
}

static void
probe_signal(void *arg, uint32_t events)
{
	struct probe *p = arg;
	struct signalfd_siginfo si;

	(void)events;
	if (read(p->sig, &si, sizeof(si)) == (ssize_t)sizeof(si))
		loop_stop(p->loop);
}

int
main(int argc, char **argv)
{
	struct probe p = { NULL, -1, -1 };
	struct portmap *pm = NULL;
	struct portmap_env env;
	struct sockaddr_in sin;
	char err[PAPO_ERR_LEN];
	const char *v;
	sigset_t mask;
	long port;
	int rc = 1, lvl;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2 || (port = strtol(argv[1], NULL, 10)) < 1 ||
	    port > 65535) {
		fprintf(stderr, "usage: portmap_probe PORT\n");
		return 2;
	}
	if ((v = getenv("PAPO_LOG")) != NULL && (lvl = log_parse_level(v)) >= 0)
		log_set_level((enum log_level)lvl);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	if ((p.loop = loop_new()) == NULL ||
	    (p.sig = signalfd(-1, &mask, SFD_CLOEXEC)) == -1 ||
	    (p.udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(p.udp, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    loop_add_fd(p.loop, p.udp, LOOP_IN, probe_datagram, &p) == -1 ||
	    loop_add_fd(p.loop, p.sig, LOOP_IN, probe_signal, &p) == -1) {
		fprintf(stderr, "portmap_probe: %s\n", strerror(errno));
		goto out;
	}

	memset(&env, 0, sizeof(env));
	env.loop = p.loop;
	env.port = (uint16_t)port;
	env.off = (v = getenv("PAPO_PORTMAP")) != NULL && strcmp(v, "off") == 0;
	env.allow_private = (v = getenv("PAPO_PORTMAP_PRIVATE")) != NULL &&
	    strcmp(v, "1") == 0;
	if ((v = getenv("PAPO_PORTMAP_LEASE")) != NULL)
		env.lease_s = (uint32_t)strtoul(v, NULL, 10);
	env.changed = probe_changed;
	if ((pm = portmap_new(err, &env)) == NULL) {
		fprintf(stderr, "portmap_probe: %s\n", err);
		goto out;
	}
	probe_changed(NULL, pm);
	if (loop_run(p.loop) == 0)
		rc = 0;
out:
	/* As the daemon stops: the mapping goes first, then the socket. */
	portmap_free(pm);
	if (rc == 0)
		printf("stopped\n");
	if (p.udp != -1)
		close(p.udp);
	if (p.sig != -1)
		close(p.sig);
	loop_free(p.loop);
	return rc;
}
