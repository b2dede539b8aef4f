/*
 * ctflush: empties the connection tracking table of the network namespace
 * it runs in, as `conntrack -F` does, for the lab's tests of NAT rebinding
 * (tests/e2e/lab.sh, lab_rebind).  The conntrack tool is not installed
 * here, nftables has no command for it and /proc has no file that does
 * it, so this asks the kernel itself: one ctnetlink IPCTNL_MSG_CT_DELETE
 * with no tuple, which the kernel takes for "delete every entry" (of
 * every family, with AF_UNSPEC), and waits for its acknowledgement.
 */
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct {
		struct nlmsghdr nh;
		struct nfgenmsg nf;
	} req;
	struct sockaddr_nl sa;
	union {
		struct nlmsghdr nh;
		char buf[8192];
	} ans;
	struct nlmsgerr *e;
	ssize_t len;
	int fd, rc = 1;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: ctflush\n"
		    "Deletes every connection tracking entry of this "
		    "network namespace.\n");
		return 2;
	}
	if ((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
	    NETLINK_NETFILTER)) == -1) {
		fprintf(stderr, "ctflush: socket: %s\n", strerror(errno));
		return 1;
	}
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.nh.nlmsg_seq = 1;
	req.nf.nfgen_family = AF_UNSPEC;
	req.nf.version = NFNETLINK_V0;
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa,
	    sizeof(sa)) != (ssize_t)sizeof(req)) {
		fprintf(stderr, "ctflush: send: %s\n", strerror(errno));
		goto out;
	}
	if ((len = recv(fd, &ans, sizeof(ans), 0)) < 0) {
		fprintf(stderr, "ctflush: recv: %s\n", strerror(errno));
		goto out;
	}
	if (!NLMSG_OK(&ans.nh, (size_t)len) ||
	    ans.nh.nlmsg_type != NLMSG_ERROR) {
		fprintf(stderr, "ctflush: unexpected answer\n");
		goto out;
	}
	e = NLMSG_DATA(&ans.nh);
	if (e->error != 0) {
		fprintf(stderr, "ctflush: %s\n", strerror(-e->error));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}
