/*
 * os.h: the platform layer, the one door to what differs between
 * operating systems.  Every call that exists on Linux only (epoll,
 * eventfd, signalfd, SOCK_CLOEXEC, IP_MTU_DISCOVER, /proc, prctl) is made
 * in the files behind it and nowhere else (ctest `platsyms` checks it).
 * CMake picks the files: os_linux.c, or with PAPO_PORTABLE os_posix.c,
 * the POSIX fallbacks (poll, a pipe, a self-pipe, fcntl); os_proc_linux.c
 * for what POSIX has no call for at all (a process's own path, another's
 * command line or sockets).  docs/ARCHITECTURE.md, "The platform layer",
 * says what a port to macOS or a BSD adds.
 *
 * Thread: the poller and a signal source belong to the thread that runs
 * their loop; a wakeup is written by any thread.
 */
#ifndef PAPO_OS_H
#define PAPO_OS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What a descriptor is watched for, and what came (lib/loop.h's). */
#define OS_IN    0x01u          /* readable */
#define OS_OUT   0x02u          /* writable */
#define OS_HUP   0x04u          /* the peer closed its side (a socket) */
#define OS_ERR   0x08u          /* an error or a full hang-up (reported) */

/* The build's backend, as `papo doctor` and the tests name it. */
extern const char os_backend[];
/* Whether os_udp_df can forbid fragments (1), or datagrams leave as the
 * system sends them (0: POSIX names no such option). */
extern const int os_has_df;

/* The poller: a loop's wait for ready descriptors. */
struct os_poller;
struct os_event {
	void *ptr;                  /* as given to os_poller_add */
	uint32_t events;            /* OS_* */
};
struct os_poller *os_poller_new(void);
void os_poller_free(struct os_poller *p);
/* One entry per fd; -1 with errno on failure (EEXIST: fd is watched). */
int os_poller_add(struct os_poller *p, int fd, uint32_t events, void *ptr);
int os_poller_mod(struct os_poller *p, int fd, uint32_t events, void *ptr);
void os_poller_del(struct os_poller *p, int fd);
/* Watches fd for this wait only, reported with ptr NULL: descriptors that
 * change at every round (libmicrohttpd's in select mode).  The portable
 * poller only: -1 (ENOSYS) on the others. */
int os_poller_once(struct os_poller *p, int fd, uint32_t events);
/* Waits up to timeout_ms (-1: forever) and fills at most max events: their
 * count, or -1 with errno (EINTR included). */
int os_poller_wait(struct os_poller *p, struct os_event *evs, int max,
    int timeout_ms);

/* Wakeups: fd[0] becomes readable when any thread posts to fd[1] (one
 * descriptor for both on Linux, a pipe elsewhere); non-blocking and
 * close-on-exec. */
int os_wake_new(int fd[2]);
void os_wake_free(int fd[2]);
void os_wake_post(const int fd[2]);
/* Reads every wakeup posted so far. */
void os_wake_drain(const int fd[2]);

/* Signals as a readable descriptor: signalfd, or a self-pipe its handler
 * writes.  The signals are blocked in every thread made after (the
 * caller does it before starting threads) and taken through the
 * descriptor. */
struct os_signals;
struct os_signals *os_signals_new(const int *sigs, int n);
void os_signals_free(struct os_signals *s);
int os_signals_fd(const struct os_signals *s);
/* The next signal taken, or 0 when none is pending. */
int os_signals_next(struct os_signals *s);

/* socket(2) made close-on-exec, and non-blocking with OS_NONBLOCK. */
#define OS_NONBLOCK 0x1
int os_socket(int domain, int type, int protocol, int flags);
/* The fd close-on-exec (an accepted socket, a pipe). */
int os_cloexec(int fd);

/* UDP: whether the kernel may fragment datagrams sent on fd.  With df
 * set, every datagram leaves with Don't Fragment and the kernel's own
 * path MTU estimate neither cuts nor refuses it (ngtcp2 probes the path
 * itself); 0 on success, -1 where the system has no such option. */
int os_udp_df(int fd, int family, int df);

/* Files. */
/* Starts writing fd's bytes [off, off + len) to disk, without waiting, so
 * that a later fdatasync finds little left to do; a hint, nothing where
 * the system has no such call. */
void os_write_start(int fd, off_t off, off_t len);

/* A socket's receive buffer set to bytes: past the system's cap where the
 * process may (root, on Linux), else as much as the cap allows. */
void os_rcvbuf(int fd, int bytes);

/* The process. */
/* Names the calling process for ps and top; nothing where it cannot. */
void os_set_name(const char *name);
/* Closes every descriptor from lowfd up (in a child about to exec). */
void os_close_from(int lowfd);
/* The absolute path of the running program into buf; -1 when unknown. */
int os_self_exe(char *buf, size_t size);
/* Another process's command line (its arguments NUL-separated, then a
 * NUL of ours): its length, or 0 when it cannot be read. */
size_t os_proc_cmdline(long pid, char *buf, size_t size);
/* Where process pid's descriptor fd leads (a path, "pipe:[N]"...): its
 * length, or -1 when it cannot be read. */
ssize_t os_proc_fd_path(long pid, int fd, char *buf, size_t size);
/* The process holding the socket on port (TCP, else UDP; listening, or
 * bound for UDP): its pid and name into comm; 0 when none is found or
 * the system cannot tell. */
long os_port_holder(int tcp, unsigned port, char *comm, size_t size);

#endif
