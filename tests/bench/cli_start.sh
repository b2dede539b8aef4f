#!/usr/bin/env bash
# cli_start.sh: what a short CLI command costs, side by side for two
# papo binaries in one run (docs/PERFORMANCE.md, "A CLI that starts in a
# millisecond"): the whole process's CPU time (user + system, from
# wait4's rusage) of /bin/true, then of each binary's `papo status`,
# `papo say`, `papo hook` (a UserPromptSubmit event with nothing
# waiting) and `papo --version`, against one daemon on 127.0.0.1, the
# runs interleaved (one of each in turn, N times: 20 by default), and
# their medians; then `papo mcp` answering initialize and tools/list and
# ending at EOF, as an agent's session starts it: OLD's papo mcp, NEW's
# papo-full mcp and NEW's papo mcp (the front), the whole process's CPU
# and wall time, interleaved, medians; then where `papo status`'s CPU
# goes in each (perf: the dynamic loader's share, the kernel's, the
# rest) and the number of shared objects each maps.
# Usage: bash tests/bench/cli_start.sh OLD_PAPO NEW_PAPO [N]
OLD=$(realpath "${1:?usage: cli_start.sh OLD_PAPO NEW_PAPO [N]}")
NEW=$(realpath "${2:?usage: cli_start.sh OLD_PAPO NEW_PAPO [N]}")
N=${3:-20}
PAPO=$NEW
. "$(dirname "$0")/../e2e/lib.sh"

papo a new --name ana >/dev/null
start a
export PAPO_HOME=$T/a
echo '{"hook_event_name":"UserPromptSubmit","session_id":"bench","prompt":"hi"}' >"$T/event"
for bin in "$OLD" "$NEW"; do
	"$bin" status >/dev/null && "$bin" say warm >/dev/null &&
	    "$bin" hook <"$T/event" >/dev/null ||
	    { echo "cli_start.sh: $bin cannot talk to the daemon" >&2; exit 1; }
done

# The table: each command's median CPU (ms) over N interleaved runs, and
# its ratio to /bin/true's.
python3 - "$N" "$OLD" "$NEW" "$T/event" <<'EOF'
import os, statistics, subprocess, sys
n, old, new, event = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
runs = [("/bin/true", ["/bin/true"], None)]
for name, b in (("OLD", old), ("NEW", new)):
    runs += [(name + " papo status", [b, "status"], None),
             (name + " papo say", [b, "say", "bench"], None),
             (name + " papo hook", [b, "hook"], event),
             (name + " papo --version", [b, "--version"], None)]
cpu = {r[0]: [] for r in runs}
for i in range(n):
    for label, argv, stdin in runs:
        f = open(stdin) if stdin else subprocess.DEVNULL
        p = subprocess.Popen(argv, stdin=f, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        if stdin:
            f.close()
        if status != 0:
            sys.exit("cli_start.sh: %s exited %d" % (" ".join(argv), status))
        cpu[label].append((ru.ru_utime + ru.ru_stime) * 1000)
base = statistics.median(cpu["/bin/true"])
print("| command | CPU median (ms) | min / max (ms) | × /bin/true |")
print("|---|---:|---|---:|")
for label, _, _ in runs:
    v = cpu[label]
    print("| %s | %.2f | %.2f / %.2f | %.1f |" % (label, statistics.median(v),
          min(v), max(v), statistics.median(v) / base))
EOF

# papo mcp as a stdio client starts it: initialize, its answer, then
# notifications/initialized and tools/list, its answer, then EOF (the
# bridge ends the session and exits).  CPU from wait4, wall from the
# spawn to the exit.
echo
python3 - "$N" "$OLD" "$NEW" <<'EOF'
import json, os, statistics, subprocess, sys, time
n, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]
full = os.path.join(os.path.dirname(new), "papo-full")
runs = [("OLD papo mcp", [old, "mcp"]),
        ("NEW papo-full mcp", [full, "mcp"]),
        ("NEW papo mcp (front)", [new, "mcp"])]
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "cli_start", "version": "1"}}}
rest = [{"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]

def line(o):
    return (json.dumps(o) + "\n").encode()

def one(argv):
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    p.stdin.write(line(init))
    p.stdin.flush()
    a = json.loads(p.stdout.readline())
    p.stdin.write(b"".join(line(o) for o in rest))
    p.stdin.flush()
    b = json.loads(p.stdout.readline())
    p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.monotonic() - t0) * 1000
    p.stdout.close()
    if status != 0 or "result" not in a or not b["result"]["tools"]:
        sys.exit("cli_start.sh: %s did not answer as it should" % argv)
    return (ru.ru_utime + ru.ru_stime) * 1000, wall

cpu = {r[0]: [] for r in runs}
wall = {r[0]: [] for r in runs}
for i in range(n):
    for label, argv in runs:
        c, w = one(argv)
        cpu[label].append(c)
        wall[label].append(w)
print("| papo mcp: initialize, tools/list, EOF | CPU median (ms) | min / max (ms) | wall median (ms) | min / max (ms) |")
print("|---|---:|---|---:|---|")
for label, _ in runs:
    c, w = cpu[label], wall[label]
    print("| %s | %.2f | %.2f / %.2f | %.2f | %.2f / %.2f |" % (label,
          statistics.median(c), min(c), max(c), statistics.median(w),
          min(w), max(w)))
EOF

# Where papo status's CPU goes (perf, when there is one: samples of the
# processes named papo, by shared object): the dynamic loader's share
# (ld-linux: mapping, relocating, binding symbols), the kernel's (exec,
# mmap, page faults), the rest (libraries' constructors, papo itself);
# and how many shared objects each binary maps.
echo
echo "| binary | shared objects (ldd) | papo status: loader | kernel | the rest |"
echo "|---|---:|---:|---:|---:|"
for which in OLD NEW; do
	bin=$OLD
	[ "$which" = NEW ] && bin=$NEW
	objs=$(ldd "$bin" | wc -l)
	if ! command -v perf >/dev/null ||
	    ! perf record -q -F 20000 -o "$T/perf.$which" -- bash -c \
	    'for i in $(seq "$1"); do "$2" status >/dev/null; done' _ "$N" "$bin" \
	    >/dev/null 2>&1; then
		echo "| $which | $objs | (no perf) | | |"
		continue
	fi
	perf report -i "$T/perf.$which" --sort comm,dso --stdio 2>/dev/null |
	    awk -v w="$which" -v objs="$objs" '
		$2 == "papo" { v = $1; sub("%", "", v); all += v
			if ($3 ~ /^ld-linux/) ld += v
			else if ($3 ~ /kernel/) k += v }
		END { printf "| %s | %d | %.0f %% | %.0f %% | %.0f %% |\n", w, objs,
			100 * ld / all, 100 * k / all, 100 * (all - ld - k) / all }'
done
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(awk -F: '/^model name/ { print $2; exit }' /proc/cpuinfo | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
stop a
