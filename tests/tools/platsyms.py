#!/usr/bin/env python3
"""
platsyms.py: every Linux-only call is made behind the platform layer
(lib/os.h; docs/ARCHITECTURE.md, "The platform layer").  This checks it.

Two looks, over the project's sources (lib/, node/, server/) but the
layer's own files (PLATFORM):

  calls      nm of the objects CMake built for papo_room, papo_node, papo-full and
             papo: an object that uses a symbol of SYMBOLS (or of a
             prefix in PREFIXES) fails, naming the object and symbol;
  sources    the text of each .c and .h, comments removed: a Linux-only
             header, constant or path (TOKENS) fails, naming the file and
             line.  Constants are macros, gone from the objects, so only
             the text shows them.

usage: platsyms.py BUILD_DIR SOURCE_DIR
       platsyms.py --self-test
Exits 0 when all is well, 1 when a Linux-only call or name is outside
the layer, 2 when there is nothing built to read.  The self-test runs
first, alone with --self-test: the two looks on synthetic input, each
use in which must be caught, and clean input, which must not, so that
a check that can no longer fail fails.
"""
import os
import re
import subprocess
import sys

DIRS = ("lib", "node", "server")
TARGETS = ("papo_room", "papo_node", "papo-full", "papo")
# The platform layer: the only files that may call Linux (libmicrohttpd's
# epoll mode is Linux's too).
PLATFORM = {"lib/os_linux.c", "lib/os_proc_linux.c",
            "server/http/http_poll_epoll.c"}
# Functions that exist on Linux alone (not in POSIX, not on the BSDs or
# macOS under that name).
SYMBOLS = {
    "accept4", "dup3", "pipe2", "eventfd", "eventfd_read", "eventfd_write",
    "signalfd", "recvmmsg", "sendmmsg", "prctl", "memfd_create", "splice",
    "tee", "vmsplice", "sendfile", "sendfile64", "sync_file_range",
    "fallocate", "fallocate64", "syncfs", "sched_getaffinity",
    "sched_setaffinity", "mallinfo", "mallinfo2", "malloc_trim", "gettid",
    "getauxval", "personality", "setns", "unshare", "clone", "clone3",
    "copy_file_range", "statx", "renameat2", "pthread_getattr_np",
}
PREFIXES = ("epoll_", "timerfd_", "inotify_", "fanotify_", "io_uring_",
            "signalfd")
# Headers, constants and paths of Linux alone, as they appear in C text.
TOKENS = [
    (re.compile(r"#\s*include\s*<(sys/(epoll|eventfd|signalfd|timerfd|"
                r"inotify|prctl|sendfile|sysinfo)\.h|linux/[^>]*)>"),
     "a Linux-only header"),
    (re.compile(r"\b(EPOLL[A-Z0-9_]*|EFD_[A-Z]+|SFD_[A-Z]+|TFD_[A-Z_]+|"
                r"IN_(CLOEXEC|NONBLOCK)|SOCK_(CLOEXEC|NONBLOCK)|"
                r"IPV?6?_MTU_DISCOVER|IPV?6?_PMTUDISC_[A-Z]+|IPV?6?_RECVERR|"
                r"MSG_ERRQUEUE|UDP_SEGMENT|UDP_GRO|SO_BINDTODEVICE|"
                r"SO_BUSY_POLL|SO_RCVBUFFORCE|SO_SNDBUFFORCE|TCP_USER_TIMEOUT|PR_SET_[A-Z_]+|O_TMPFILE|"
                r"O_PATH|SYNC_FILE_RANGE_[A-Z_]+|MHD_USE_EPOLL[A-Z_]*|"
                r"MHD_DAEMON_INFO_EPOLL_FD)\b"),
     "a Linux-only constant"),
    (re.compile(r'"/proc[/"]'), "a path of /proc"),
    (re.compile(r"\b_GNU_SOURCE\b"), "_GNU_SOURCE (glibc's extensions)"),
]


def linux_only(sym):
    return sym in SYMBOLS or sym.startswith(PREFIXES)


def strip_comments(text):
    """The text with its comments blanked (lines kept): /* */ and //,
    outside strings and character constants."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j == -1 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j == -1 else j
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def source_findings(name, text):
    """[(file, line, what, matched)] for one file's text."""
    found = []
    for lineno, line in enumerate(strip_comments(text).splitlines(), 1):
        for pat, what in TOKENS:
            m = pat.search(line)
            if m:
                found.append((name, lineno, what, m.group(0)))
    return found


def symbol_findings(name, nm_text):
    """[(object, symbol)] for one object's `nm -P` output."""
    found = []
    for line in nm_text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] == "U":
            sym = parts[0].split("@")[0]
            if linux_only(sym):
                found.append((name, sym))
    return found


def sources(root):
    for d in DIRS:
        for dp, _, names in os.walk(os.path.join(root, d)):
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dp, n), root)


def objects(build):
    """(source path, object path) of every object of the targets."""
    for t in TARGETS:
        top = os.path.join(build, "CMakeFiles", t + ".dir")
        for d, _, names in os.walk(top):
            for n in names:
                if n.endswith(".o"):
                    full = os.path.join(d, n)
                    yield os.path.relpath(full, top)[:-2], full


def check(build, root):
    bad, nobj = [], 0
    if self_test() != 0:
        return 1
    files = set(sources(root))
    for src, obj in objects(build):
        if src not in files:
            continue                    # generated (embedded.c), or stale
        nobj += 1
        if src in PLATFORM:
            continue
        nm = subprocess.run(["nm", "-P", obj], capture_output=True,
                            text=True, check=True).stdout
        for o, sym in symbol_findings(src, nm):
            bad.append(f"{o}: calls {sym}, which Linux alone has: "
                       f"through lib/os.h instead")
    if nobj == 0:
        print(f"platsyms: no objects of {', '.join(TARGETS)} under {build}: "
              "build first", file=sys.stderr)
        return 2
    for f in sorted(files - PLATFORM):
        with open(os.path.join(root, f), encoding="utf-8") as fp:
            text = fp.read()
        for name, line, what, m in source_findings(f, text):
            bad.append(f"{name}:{line}: {what} ({m}): behind lib/os.h "
                       "instead")
    for b in bad:
        print("platsyms: " + b)
    print(f"platsyms: {nobj} objects and {len(files)} sources read; "
          f"{len(bad)} Linux-only uses outside "
          f"{', '.join(sorted(PLATFORM))}")
    return 1 if bad else 0


def self_test():
    """The looks catch what they must and nothing else."""
    fails = 0

    def expect(cond, what):
        nonlocal fails
        if not cond:
            print("platsyms self-test: FAILED: " + what)
            fails += 1

    nm = ("epoll_wait U\nsocket U\neventfd U\nmy_fn T\n"
          "recvmmsg@GLIBC_2.12 U\ntimerfd_create U\nclose U\n")
    got = [s for _, s in symbol_findings("x.c", nm)]
    expect(got == ["epoll_wait", "eventfd", "recvmmsg", "timerfd_create"],
           f"the Linux-only calls of a synthetic nm, got {got}")
    expect(symbol_findings("x.c", "socket U\npoll U\npipe U\n") == [],
           "POSIX calls are no finding")
    text = ('#include <sys/epoll.h>\n'
            'int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);\n'
            'setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v));\n'
            'f = fopen("/proc/self/status", "r");\n'
            '/* epoll, SOCK_CLOEXEC and "/proc/x" in a comment are fine */\n'
            'char *s = "a /* not a comment */ EFD_NONBLOCK";\n'
            '// IP_PMTUDISC_PROBE after // too\n'
            'loop_add_fd(l, fd, LOOP_IN, cb, arg);\n'
            'd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_TLS, 0);\n')
    got = [(ln, m) for _, ln, _, m in source_findings("x.c", text)]
    expect(got == [(1, "#include <sys/epoll.h>"), (2, "SOCK_CLOEXEC"),
                   (3, "IP_MTU_DISCOVER"), (4, '"/proc/'),
                   (6, "EFD_NONBLOCK"), (9, "MHD_USE_EPOLL")],
           f"the Linux-only names of a synthetic source, got {got}")
    print(f"platsyms self-test: {'ok' if fails == 0 else 'FAILED'}")
    return 1 if fails else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    return check(sys.argv[1], sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
