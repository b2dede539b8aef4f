/*
 * os_proc_linux.c: the platform layer's readings of processes on Linux
 * (os.h), from /proc: the program's own path, another process's command
 * line and descriptors, who holds a port (papo doctor), and the
 * process's name (prctl).  POSIX has no call for any of them, so the
 * portable build on Linux takes this file too; a port writes its own
 * (docs/ARCHITECTURE.md, "The platform layer").  Any thread.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lib/os.h"

void
os_set_name(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

int
os_self_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

size_t
os_proc_cmdline(long pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

ssize_t
os_proc_fd_path(long pid, int fd, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", pid, fd);
	if ((n = readlink(path, buf, size - 1)) <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The inode of a socket on port in a /proc/net table: listening for
 * TCP, bound for UDP.  0 when none. */
static unsigned long
os_inode(const char *table, unsigned port, int tcp)
{
	char line[512];
	unsigned long ino = 0;
	FILE *f = fopen(table, "r");

	if (f == NULL)
		return 0;
	while (ino == 0 && fgets(line, sizeof(line), f) != NULL) {
		unsigned lport, state;
		unsigned long inode;

		if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*s %x %*s %*s %*s "
		    "%*u %*u %lu", &lport, &state, &inode) != 3)
			continue;
		if (lport == port && (!tcp || state == 0x0a))
			ino = inode;
	}
	fclose(f);
	return ino;
}

/* Whether process pid (a name in /proc) has the socket want open. */
static int
os_has_socket(const char *pid, const char *want)
{
	char dir[64], path[320], link[64];
	struct dirent *de;
	DIR *fds;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	if ((fds = opendir(dir)) == NULL)
		return 0;
	while (!found && (de = readdir(fds)) != NULL) {
		ssize_t k;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((k = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[k] = '\0';
		found = strcmp(link, want) == 0;
	}
	closedir(fds);
	return found;
}

/* Only processes of this user are seen holding it (another user's
 * descriptors only root reads). */
long
os_port_holder(int tcp, unsigned port, char *comm, size_t size)
{
	char want[48], path[64];
	struct dirent *de;
	unsigned long ino;
	long pid = 0;
	DIR *proc;
	FILE *f;

	comm[0] = '\0';
	if ((ino = os_inode(tcp ? "/proc/net/tcp" : "/proc/net/udp", port,
	    tcp)) == 0 && (ino = os_inode(tcp ? "/proc/net/tcp6" :
	    "/proc/net/udp6", port, tcp)) == 0)
		return 0;
	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	if ((proc = opendir("/proc")) == NULL)
		return 0;
	while (pid == 0 && (de = readdir(proc)) != NULL)
		if (isdigit((unsigned char)de->d_name[0]) &&
		    os_has_socket(de->d_name, want))
			pid = strtol(de->d_name, NULL, 10);
	closedir(proc);
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (pid != 0 && (f = fopen(path, "r")) != NULL) {
		if (fgets(comm, (int)size, f) != NULL)
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	return pid;
}
