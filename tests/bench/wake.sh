#!/usr/bin/env bash
# wake.sh: the wake benchmark (docs/PERFORMANCE.md, "Waking an idle
# agent"): two daemons on loopback, ana and bo; ana's agent is idle.
# For RUNS runs (default 20) of each path, bo's `papo say` is timed to
#  - inbox: the wake line reaching a Unix socket that stands for Claude
#    Code's inbox (papo mcp running with CLAUDE_CODE_MESSAGING_SOCKET);
#  - hook:  a `papo hook` Stop hook, waiting in the background, exiting 2;
# and between runs a wait takes the message and the agent idles 2 s.
# Then what an idle daemon with a wake poll open costs: its wakeups
# (context switches) and CPU time over 30 s with nothing arriving.
# The model's own request after the wake (Claude Code reading its inbox)
# is tests/agents' measure, not this one's.
#
# Usage: wake.sh BUILD_DIR [RUNS]
set -eu
B=${1:?usage: wake.sh BUILD_DIR [RUNS]}
RUNS=${2:-20}
PAPO=$(realpath "$B/papo")
T=$(mktemp -d /tmp/papo-bench-wake.XXXXXX)
export PAPO_LAN=off PAPO_PORTMAP=off PAPO_RATE=1000000/s
unset PAPO_TOKEN CLAUDE_CODE_MESSAGING_SOCKET CLAUDE_CODE_MESSAGING_TOKEN
pids=()
# The daemons may be gone already: no kill failure may skip the rm (set -e
# holds in the trap too, and it would make the run exit 1).
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$T"' EXIT
serve() {
	PAPO_HOME=$T/$1 "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
		>"$T/$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do [ -s "$T/$1/serve.json" ] && return; sleep 0.1; done
	echo "$1 did not start" >&2; exit 1
}
PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
serve ana
PAPO_HOME=$T/bo "$PAPO" join "$(jq -r .invite "$T/ana/serve.json")" --name bo >/dev/null
serve bo
A=$(jq -r .http "$T/ana/serve.json")
for _ in $(seq 150); do
	curl -s "$A/api/status" | jq -e '.members[] | select(.name == "bo") | .online' >/dev/null && break
	sleep 0.1
done
say() { PAPO_HOME=$T/bo "$PAPO" say "$1" >/dev/null; }
drain() { # a wait gives what came; then the agent idles past the 1.5 s grace
	curl -s "$A/mcp" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: wait' \
		-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":0},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' >/dev/null
	sleep 2
}
stats() { # stats NAME: median and p99 of the numbers on stdin (ms)
	sort -n | awk -v n="$1" '{ v[NR] = $1 } END {
		p = int(NR * 0.99 + 0.999); if (p > NR) p = NR
		printf "%s: n=%d median %.1f ms, p99 %.1f ms, min %.1f, max %.1f\n",
		    n, NR, (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[p], v[1], v[NR] }'
}
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(uname -sr); $(date -u +%Y-%m-%d)"

# inbox: a listener that notes when each line arrives (ns, wall clock).
SOCK=$T/inbox.sock
python3 -u - "$SOCK" >"$T/inbox.times" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(16)
while True:
    c, _ = s.accept()
    data = b""
    while True:
        b = c.recv(65536)
        if not b: break
        data += b
        if b'"type":"user"' in data and data.endswith(b"\n"):
            print(time.time_ns(), flush=True); break
    c.close()
PY
pids+=($!)
sleep 0.5
# papo mcp as Claude Code starts it: stdin kept open, an initialize sent.
mkfifo "$T/in"
PAPO_HOME=$T/ana CLAUDE_CODE_MESSAGING_SOCKET=$SOCK CLAUDE_CODE_MESSAGING_TOKEN=t \
	"$PAPO" mcp <"$T/in" >"$T/mcp.out" 2>"$T/mcp.err" &
pids+=($!)
exec 7>"$T/in"
echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' >&7
sleep 2
: >"$T/inbox.ms"
for i in $(seq 1 "$RUNS"); do
	n=$(wc -l <"$T/inbox.times")
	t0=$(date +%s%N)
	say "inbox run $i"
	for _ in $(seq 300); do [ "$(wc -l <"$T/inbox.times")" -gt "$n" ] && break; sleep 0.01; done
	t1=$(tail -1 "$T/inbox.times")
	echo "$(( (t1 - t0) / 1000 ))" | awk '{ printf "%.2f\n", $1 / 1000 }' >>"$T/inbox.ms"
	drain
done
stats "say -> inbox wake" <"$T/inbox.ms"
exec 7>&-
sleep 1

# hook: a Stop hook waiting in the background when bo speaks.
: >"$T/hook.ms"
for i in $(seq 1 "$RUNS"); do
	( echo '{"hook_event_name":"Stop","session_id":"bench"}' |
		PAPO_HOME=$T/ana "$PAPO" hook 2>/dev/null || true; date +%s%N >"$T/hook.end" ) &
	hp=$!
	sleep 0.5
	t0=$(date +%s%N)
	say "hook run $i"
	wait $hp
	echo "$(( ($(cat "$T/hook.end") - t0) / 1000 ))" | awk '{ printf "%.2f\n", $1 / 1000 }' >>"$T/hook.ms"
	drain
done
stats "say -> Stop hook exit 2" <"$T/hook.ms"

# What an idle daemon costs with nothing arriving, without and then
# with a wake poll open (a Stop hook waiting): the poll should add none.
AP=$(jq .pid "$T/ana/serve.json")
cs() { awk '/ctxt_switches/ { s += $2 } END { print s }' /proc/"$AP"/task/*/status; }
cpu() { awk '{ print $14 + $15 }' /proc/"$AP"/stat; }
idle() { # idle LABEL
	local c0 u0 c1 u1
	c0=$(cs); u0=$(cpu); sleep 30; c1=$(cs); u1=$(cpu)
	echo "idle daemon, $1, 30 s: $(( c1 - c0 )) context switches ($(awk -v d=$(( c1 - c0 )) 'BEGIN { printf "%.2f", d / 30 }')/s, all threads), $(( u1 - u0 )) clock ticks of CPU"
}
sleep 2
idle "no wake poll"
( echo '{"hook_event_name":"Stop","session_id":"idle"}' | PAPO_HOME=$T/ana "$PAPO" hook >/dev/null 2>&1 ) &
pids+=($!)
sleep 1
idle "a Stop hook's wake poll open"
