/*
 * bridge_spawn.c: 'papo serve' started detached when no daemon runs on
 * the home (its output appended to $PAPO_HOME/serve.log), and waited for
 * until serve.json answers; the monotonic clock the bridge counts in.
 * Main thread.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/os.h"
#include "lib/units.h"
#include "node/node.h"
#include "server/cli/bridge_int.h"
#include "server/cli/client.h"

#define BRIDGE_LOG "serve.log"   /* in $PAPO_HOME: a daemon started here */
#define BRIDGE_START_MS 10000       /* for a daemon started here */

uint64_t
bridge_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / NS_PER_MS;
}

/*
 * Starts "papo serve" for home, detached: in a session of its own, stdin
 * /dev/null, stdout and stderr appended to home/serve.log, through a
 * middle process that leaves at once, so that the daemon is nobody's
 * child here and outlives papo mcp.  The daemon's pid goes to *pid and
 * the log's size before it to *logoff.
 */
int
bridge_spawn(char err[PAPO_ERR_LEN], const char *home, pid_t *pid,
    off_t *logoff)
{
	static const char failed[] = "papo: cannot run papo serve\n";
	char *argv[] = { "papo", "serve", NULL };
	char log[4096], exe[4096];
	int fds[2] = { -1, -1 }, logfd = -1, nullfd = -1, rc = -1, status;
	pid_t mid, child = -1;
	struct stat st;
	ssize_t n;

	/* serve makes home private itself; the log must have a place. */
	if (mkdir(home, 0700) == -1 && errno != EEXIST) {
		snprintf(err, PAPO_ERR_LEN, "cannot make %s: %s", home,
		    strerror(errno));
		goto out;
	}
	snprintf(log, sizeof(log), "%s/%s", home, BRIDGE_LOG);
	if ((logfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600)) == -1 || fstat(logfd, &st) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot open %s: %s", log,
		    strerror(errno));
		goto out;
	}
	*logoff = st.st_size;
	if (os_self_exe(exe, sizeof(exe)) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot tell where this papo binary "
		    "is: %s", strerror(errno));
		goto out;
	}
	if ((nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    pipe(fds) == -1 || fcntl(fds[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(fds[1], F_SETFD, FD_CLOEXEC) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot start papo serve: %s",
		    strerror(errno));
		goto out;
	}
	fflush(stdout);
	fflush(stderr);
	if ((mid = fork()) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot start papo serve: %s",
		    strerror(errno));
		goto out;
	}
	if (mid == 0) {
		sigset_t none;

		setsid();
		if ((child = fork()) == 0) {
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			signal(SIGPIPE, SIG_DFL);
			if (dup2(nullfd, STDIN_FILENO) == -1 ||
			    dup2(logfd, STDOUT_FILENO) == -1 ||
			    dup2(logfd, STDERR_FILENO) == -1)
				_exit(127);
			/* Nothing of the process that started it: a client's
			 * pipe kept open would never close. */
			os_close_from(STDERR_FILENO + 1);
			/* The very binary running now, wherever it lies. */
			execv(exe, argv);
			(void)!write(STDERR_FILENO, failed, sizeof(failed) - 1);
			_exit(127);
		}
		(void)!write(fds[1], &child, sizeof(child));
		_exit(child == -1);
	}
	close(fds[1]);
	fds[1] = -1;
	while ((n = read(fds[0], &child, sizeof(child))) == -1 && errno == EINTR)
		;
	while (waitpid(mid, &status, 0) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(child) || child <= 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot start papo serve: fork "
		    "failed");
		goto out;
	}
	*pid = child;
	rc = 0;
out:
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	if (logfd != -1)
		close(logfd);
	if (nullfd != -1)
		close(nullfd);
	return rc;
}

/* The last line the daemon wrote to serve.log after off, without its
 * "papo: " prefix; "" when none. */
static void
bridge_log_tail(const char *home, off_t off, char *out, size_t outlen)
{
	char path[4096], buf[4096], *p, *end;
	struct stat st;
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", home, BRIDGE_LOG);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	if (fstat(fd, &st) == 0 && st.st_size > off) {
		if (st.st_size - off > (off_t)sizeof(buf) - 1)
			off = st.st_size - (off_t)sizeof(buf) + 1;
		if ((n = pread(fd, buf, sizeof(buf) - 1, off)) > 0) {
			buf[n] = '\0';
			end = buf + n;
			while (end > buf && (end[-1] == '\n' || end[-1] == '\r'))
				*--end = '\0';
			p = strrchr(buf, '\n');
			p = p != NULL ? p + 1 : buf;
			if (strncmp(p, "papo: ", 6) == 0)
				p += 6;
			snprintf(out, outlen, "%s", p);
		}
	}
	close(fd);
}

/* Waits for the daemon just started to write serve.json. */
int
bridge_wait(char err[PAPO_ERR_LEN], struct bridge *b, pid_t pid, off_t off)
{
	char e[PAPO_ERR_LEN], why[PAPO_ERR_LEN], msg[2 * PAPO_ERR_LEN + 4096];
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	uint64_t until = bridge_now() + BRIDGE_START_MS;
	int dead = 0;

	for (;;) {
		if (client_open(e, b->home, &b->cl) == 0)
			return 0;
		dead = kill(pid, 0) == -1 && errno == ESRCH;
		if (dead || bridge_now() >= until)
			break;
		nanosleep(&tick, NULL);
	}
	/* It may have lost the lock to a daemon that came up meanwhile. */
	if (client_open(e, b->home, &b->cl) == 0)
		return 0;
	bridge_log_tail(b->home, off, why, sizeof(why));
	/* The daemon's reason whole: the pointer to the log goes first
	 * when both do not fit, and a reason too long for err is cut at a
	 * word, never within one. */
	snprintf(msg, sizeof(msg), "papo serve %s%s%s (see %s/serve.log)",
	    dead ? "did not start" : "did not come up in 10 s",
	    why[0] != '\0' ? ": " : "", why, b->home);
	if (strlen(msg) >= PAPO_ERR_LEN)
		snprintf(msg, sizeof(msg), "papo serve %s%s%s",
		    dead ? "did not start" : "did not come up in 10 s",
		    why[0] != '\0' ? ": " : "", why);
	if (strlen(msg) >= PAPO_ERR_LEN) {
		char *cut = msg + PAPO_ERR_LEN - 4;

		*cut = '\0';
		if ((cut = strrchr(msg, ' ')) != NULL)
			*cut = '\0';
		strcat(msg, "...");
	}
	snprintf(err, PAPO_ERR_LEN, "%s", msg);
	return -1;
}
