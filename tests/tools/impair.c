/*
 * impair: a link that loses, delays and reorders, for the lab's tests
 * (tests/e2e/lab.sh, lab_impair).  This machine's kernel has no netem
 * qdisc, so the impairment is done in user space: the program runs in a
 * namespace of its own between two veth ends, reads every Ethernet frame
 * that arrives on one of them with an AF_PACKET socket and writes it out
 * of the other, after deciding whether to lose it and when to send it.
 *
 * One thread, one loop: ppoll on the two sockets with a timeout until the
 * next frame is due; frames wait in a min-heap by the time they are due
 * (and by arrival, so that frames due together keep their order).  A
 * frame is lost with probability LOSS; the others are delayed by DELAY
 * plus or minus up to JITTER; with probability REORDER a frame skips its
 * delay and overtakes those that wait (as netem's reorder does; with no
 * delay it waits 10 ms instead, letting its successors go first).  The
 * impairments apply to the direction chosen with -o; the other passes
 * untouched, at once.  SIGTERM or SIGINT ends it, after a line of counts
 * on stderr.
 *
 * A frame sent by a socket of a namespace crosses veths with its UDP or
 * TCP checksum not yet computed (checksum offload: the kernel flags it
 * TP_STATUS_CSUMNOTREADY, and would fill it in at a real NIC); copied as
 * it is, the receiver would drop it.  So such a frame gets its checksum
 * computed here before it goes on.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IMPAIR_FRAME_MAX 65536  /* the largest frame a veth hands over */
#define IMPAIR_QUEUE_MAX 8192   /* frames waiting; beyond, new ones drop */
#define IMPAIR_BURST 64         /* frames read from a socket per wakeup */
#define IMPAIR_REORDER_WAIT_MS 10

struct frame {
	uint64_t due;           /* CLOCK_MONOTONIC, nanoseconds */
	uint64_t seq;           /* arrival order, for ties */
	int out;                /* the socket it leaves by */
	size_t len;
	uint8_t *data;
};

struct dir {
	double loss, reorder;   /* probabilities, 0 to 1 */
	uint64_t delay, jitter; /* nanoseconds */
	unsigned long in, lost, reordered, dropped, sent;
};

struct impair {
	int fd[2];
	struct dir dir[2];      /* [0] from A to B, [1] from B to A */
	struct frame *heap;
	size_t n;
	uint64_t seq;
	uint64_t rng;
};

static volatile sig_atomic_t impair_stop;

static void
usage(void)
{
	fprintf(stderr,
	    "usage: impair [-l LOSS%%] [-d DELAY_MS] [-j JITTER_MS] "
	    "[-r REORDER%%]\n"
	    "              [-o ab|ba|both] [-s SEED] IF_A IF_B\n"
	    "Copies every Ethernet frame between the interfaces IF_A and "
	    "IF_B,\nlosing LOSS %% of them, delaying them by DELAY_MS "
	    "(+/- JITTER_MS) and\nletting REORDER %% overtake, in the "
	    "direction -o names (default both:\nab is from IF_A to IF_B).\n");
	exit(2);
}

static void
on_signal(int sig)
{
	(void)sig;
	impair_stop = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: plenty for deciding about packets, and repeatable by -s. */
static double
rnd(struct impair *im)
{
	im->rng ^= im->rng >> 12;
	im->rng ^= im->rng << 25;
	im->rng ^= im->rng >> 27;
	return (double)((im->rng * 2685821657736338717ull) >> 11) /
	    (double)(1ull << 53);
}

static int
earlier(const struct frame *a, const struct frame *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void
heap_push(struct impair *im, struct frame f)
{
	size_t i = im->n++, up;

	while (i > 0) {
		up = (i - 1) / 2;
		if (!earlier(&f, &im->heap[up]))
			break;
		im->heap[i] = im->heap[up];
		i = up;
	}
	im->heap[i] = f;
}

static struct frame
heap_pop(struct impair *im)
{
	struct frame top = im->heap[0], last = im->heap[--im->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < im->n) {
		if (c + 1 < im->n && earlier(&im->heap[c + 1], &im->heap[c]))
			c++;
		if (!earlier(&im->heap[c], &last))
			break;
		im->heap[i] = im->heap[c];
		i = c;
	}
	if (im->n > 0)
		im->heap[i] = last;
	return top;
}

static int
open_if(const char *name)
{
	struct sockaddr_ll sll;
	struct packet_mreq mr;
	int fd, one = 1;
	unsigned idx;

	if ((idx = if_nametoindex(name)) == 0) {
		fprintf(stderr, "impair: %s: %s\n", name, strerror(errno));
		return -1;
	}
	/* Protocol 0: nothing arrives before bind names the interface. */
	if ((fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0)) == -1) {
		fprintf(stderr, "impair: socket: %s\n", strerror(errno));
		return -1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)idx;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) == -1) {
		fprintf(stderr, "impair: bind %s: %s\n", name, strerror(errno));
		goto err;
	}
	/* Frames for other MAC addresses are ours to forward too. */
	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = (int)idx;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
	    sizeof(mr)) == -1) {
		fprintf(stderr, "impair: promiscuous %s: %s\n", name,
		    strerror(errno));
		goto err;
	}
	/* Whether a frame's checksum is still to be computed. */
	if (setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one,
	    sizeof(one)) == -1) {
		fprintf(stderr, "impair: auxdata %s: %s\n", name,
		    strerror(errno));
		goto err;
	}
	/* Not our own frames back (older kernels: filtered in copy_in). */
	(void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
	    sizeof(one));
	return fd;
err:
	close(fd);
	return -1;
}

static uint32_t
sum16(uint32_t sum, const uint8_t *p, size_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len == 1)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* Fills in the UDP or TCP checksum of an Ethernet frame carrying IPv4 or
 * IPv6 (no extension headers, not a fragment); leaves others alone. */
static void
fix_checksum(uint8_t *f, size_t len)
{
	uint8_t *ip = f + 14, *l4, pseudo[40];
	size_t iplen, l4len, plen, at;
	uint32_t sum;
	int proto;

	if (len < 14 + 20)
		return;
	if (f[12] == 0x08 && f[13] == 0x00 && (ip[0] >> 4) == 4) {
		iplen = (size_t)(ip[0] & 0x0f) * 4;
		if ((ip[6] & 0x3f) != 0 || ip[7] != 0)
			return;        /* a fragment */
		l4len = ((size_t)ip[2] << 8 | ip[3]);
		if (iplen < 20 || l4len < iplen || 14 + l4len > len)
			return;
		l4len -= iplen;
		proto = ip[9];
		memcpy(pseudo, ip + 12, 8);
		pseudo[8] = 0;
		pseudo[9] = (uint8_t)proto;
		pseudo[10] = (uint8_t)(l4len >> 8);
		pseudo[11] = (uint8_t)l4len;
		plen = 12;
	} else if (f[12] == 0x86 && f[13] == 0xdd && len >= 14 + 40) {
		iplen = 40;
		l4len = ((size_t)ip[4] << 8 | ip[5]);
		if (14 + 40 + l4len > len)
			return;
		proto = ip[6];
		memcpy(pseudo, ip + 8, 32);
		pseudo[32] = (uint8_t)(l4len >> 24);
		pseudo[33] = (uint8_t)(l4len >> 16);
		pseudo[34] = (uint8_t)(l4len >> 8);
		pseudo[35] = (uint8_t)l4len;
		pseudo[36] = pseudo[37] = pseudo[38] = 0;
		pseudo[39] = (uint8_t)proto;
		plen = 40;
	} else
		return;
	l4 = ip + iplen;
	if (proto == IPPROTO_UDP && l4len >= 8)
		at = 6;
	else if (proto == IPPROTO_TCP && l4len >= 20)
		at = 16;
	else
		return;
	l4[at] = l4[at + 1] = 0;
	sum = sum16(sum16(0, pseudo, plen), l4, l4len);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	if (proto == IPPROTO_UDP && sum == 0)
		sum = 0xffff;
	l4[at] = (uint8_t)(sum >> 8);
	l4[at + 1] = (uint8_t)sum;
}

static int
parse_pct(const char *s, double *p)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v >= 0 && v <= 100))
		return -1;
	*p = v / 100;
	return 0;
}

static int
parse_ms(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v >= 0 && v <= 60000))
		return -1;
	*ns = (uint64_t)(v * 1e6);
	return 0;
}

/* Reads what waits on socket `from` (0 or 1) and queues or sends it. */
static void
copy_in(struct impair *im, int from, uint64_t now)
{
	static uint8_t buf[IMPAIR_FRAME_MAX];
	struct dir *d = &im->dir[from];
	struct sockaddr_ll sll;
	struct frame f;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;
	struct tpacket_auxdata aux;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl;
	ssize_t len;
	int64_t off;
	int k;

	for (k = 0; k < IMPAIR_BURST; k++) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = buf;
		iov.iov_len = sizeof(buf);
		mh.msg_name = &sll;
		mh.msg_namelen = sizeof(sll);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		len = recvmsg(im->fd[from], &mh, 0);
		if (len < 0)
			return;
		if (sll.sll_pkttype == PACKET_OUTGOING)
			continue;
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL;
		    cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_PACKET ||
			    cm->cmsg_type != PACKET_AUXDATA)
				continue;
			memcpy(&aux, CMSG_DATA(cm), sizeof(aux));
			if (aux.tp_status & TP_STATUS_CSUMNOTREADY)
				fix_checksum(buf, (size_t)len);
		}
		d->in++;
		if (d->loss > 0 && rnd(im) < d->loss) {
			d->lost++;
			continue;
		}
		f.due = now + d->delay;
		if (d->jitter > 0) {
			off = (int64_t)((2 * rnd(im) - 1) * (double)d->jitter);
			f.due = off < 0 && (uint64_t)-off > d->delay ? now :
			    f.due + (uint64_t)off;
		}
		if (d->reorder > 0 && rnd(im) < d->reorder) {
			d->reordered++;
			f.due = d->delay > 0 ? now :
			    now + IMPAIR_REORDER_WAIT_MS * 1000000ull;
		}
		f.out = im->fd[1 - from];
		if (f.due <= now && im->n == 0) {
			/* The usual case of a clean direction: no copy. */
			if (send(f.out, buf, (size_t)len, 0) == len)
				d->sent++;
			else
				d->dropped++;
			continue;
		}
		if (im->n == IMPAIR_QUEUE_MAX ||
		    (f.data = malloc((size_t)len)) == NULL) {
			d->dropped++;
			continue;
		}
		memcpy(f.data, buf, (size_t)len);
		f.len = (size_t)len;
		f.seq = im->seq++;
		heap_push(im, f);
	}
}

static void
send_due(struct impair *im, uint64_t now)
{
	struct frame f;
	struct dir *d;

	while (im->n > 0 && im->heap[0].due <= now) {
		f = heap_pop(im);
		d = &im->dir[f.out == im->fd[1] ? 0 : 1];
		if (send(f.out, f.data, f.len, 0) == (ssize_t)f.len)
			d->sent++;
		else
			d->dropped++;
		free(f.data);
	}
}

int
main(int argc, char **argv)
{
	struct impair im;
	struct dir set;
	struct pollfd pfd[2];
	struct sigaction sa;
	struct timespec ts, *tp;
	sigset_t block, empty;
	const char *which = "both";
	uint64_t now, wait;
	int c, i, rc = 1;

	memset(&im, 0, sizeof(im));
	memset(&set, 0, sizeof(set));
	im.fd[0] = im.fd[1] = -1;
	im.rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	while ((c = getopt(argc, argv, "l:d:j:r:o:s:h")) != -1) {
		switch (c) {
		case 'l':
			if (parse_pct(optarg, &set.loss) == -1)
				usage();
			break;
		case 'r':
			if (parse_pct(optarg, &set.reorder) == -1)
				usage();
			break;
		case 'd':
			if (parse_ms(optarg, &set.delay) == -1)
				usage();
			break;
		case 'j':
			if (parse_ms(optarg, &set.jitter) == -1)
				usage();
			break;
		case 'o':
			which = optarg;
			break;
		case 's':
			im.rng = strtoull(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
	if (strcmp(which, "ab") == 0)
		im.dir[0] = set;
	else if (strcmp(which, "ba") == 0)
		im.dir[1] = set;
	else if (strcmp(which, "both") == 0)
		im.dir[0] = im.dir[1] = set;
	else
		usage();
	if (im.rng == 0)
		im.rng = 1;

	/* Signals only inside ppoll: a SIGTERM is never missed between the
	 * check of impair_stop and the wait. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigemptyset(&empty);

	if ((im.heap = calloc(IMPAIR_QUEUE_MAX, sizeof(*im.heap))) == NULL) {
		fprintf(stderr, "impair: out of memory\n");
		goto out;
	}
	for (i = 0; i < 2; i++)
		if ((im.fd[i] = open_if(argv[optind + i])) == -1)
			goto out;
	for (i = 0; i < 2; i++) {
		pfd[i].fd = im.fd[i];
		pfd[i].events = POLLIN;
	}

	while (!impair_stop) {
		tp = NULL;
		if (im.n > 0) {
			now = now_ns();
			wait = im.heap[0].due > now ? im.heap[0].due - now : 0;
			ts.tv_sec = (time_t)(wait / 1000000000u);
			ts.tv_nsec = (long)(wait % 1000000000u);
			tp = &ts;
		}
		if (ppoll(pfd, 2, tp, &empty) == -1 && errno != EINTR) {
			fprintf(stderr, "impair: ppoll: %s\n", strerror(errno));
			goto out;
		}
		now = now_ns();
		for (i = 0; i < 2; i++)
			if (pfd[i].revents & POLLIN)
				copy_in(&im, i, now);
		send_due(&im, now_ns());
	}
	rc = 0;
out:
	for (i = 0; i < 2; i++)
		fprintf(stderr, "impair: %s: %lu in, %lu lost, %lu reordered, "
		    "%lu sent, %lu not sent\n", i == 0 ? "ab" : "ba",
		    im.dir[i].in, im.dir[i].lost, im.dir[i].reordered,
		    im.dir[i].sent, im.dir[i].dropped);
	while (im.n > 0)
		free(heap_pop(&im).data);
	free(im.heap);
	for (i = 0; i < 2; i++)
		if (im.fd[i] != -1)
			close(im.fd[i]);
	return rc;
}
