#!/usr/bin/env bash
# rooms.sh: what a room costs (docs/PERFORMANCE.md, "The cost of a
# room").  A daemon idle in 1, 8 and 64 rooms it made, on loopback
# (PAPO_LAN=off, PAPO_PORTMAP=off), alone and then with a second daemon
# in every one of its rooms (a connection per room): its RSS once
# settled, and its wakeups (context switches of all its threads) and CPU
# time a second, the median of SAMPLES samples of 10 s.
#
# Usage: rooms.sh BUILD_DIR [SAMPLES]
set -eu
B=${1:?usage: rooms.sh BUILD_DIR [SAMPLES]}
SAMPLES=${2:-3}
PAPO=$(realpath "$B/papo")
T=$(mktemp -d /tmp/papo-bench-rooms.XXXXXX)
export PAPO_LAN=off PAPO_PORTMAP=off
unset PAPO_TOKEN PAPO_ROOM
pids=()
# The daemons may be gone already: no kill failure may skip the rm (set -e
# holds in the trap too, and it would make the run exit 1).
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$T"' EXIT

serve() { # serve HOME: papo serve on loopback, waited for; its pid in $pid
	PAPO_HOME=$1 "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
		>"$1.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 100); do [ -s "$1/serve.json" ] && return; sleep 0.1; done
	echo "$1 did not start" >&2; exit 1
}
switches() { # switches PID: context switches of all its threads so far
	cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }'
}
cpu_ticks() { # cpu_ticks PID: user + system clock ticks so far
	awk '{ print $14 + $15 }' /proc/"$1"/stat
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# measure PID: "RSS_KB WAKEUPS/S CPU_MS/S", medians of the samples.
measure() {
	local p=$1 i w0 w1 c0 c1 ws=() cs=() rss
	sleep 5
	rss=$(awk '/VmRSS/ { print $2 }' /proc/"$p"/status)
	for i in $(seq "$SAMPLES"); do
		w0=$(switches "$p"); c0=$(cpu_ticks "$p")
		sleep 10
		w1=$(switches "$p"); c1=$(cpu_ticks "$p")
		ws+=("$((w1 - w0))")
		cs+=("$(( (c1 - c0) * 1000 / $(getconf CLK_TCK) ))")
	done
	echo "$rss $(printf '%s\n' "${ws[@]}" | median | awk '{ printf "%.1f", $1 / 10 }') \
$(printf '%s\n' "${cs[@]}" | median | awk '{ printf "%.2f", $1 / 10 }')"
}

printf '%-6s %-12s %10s %12s %10s\n' rooms members rss_kb wakeups/s cpu_ms/s
for n in 1 8 64; do
	a=$T/a$n b=$T/b$n
	: >"$T/invites$n"
	for i in $(seq "$n"); do
		PAPO_HOME=$a "$PAPO" new --name ana --room "r$i" | grep '^papo1' >>"$T/invites$n"
	done
	serve "$a"; apid=$pid
	read -r rss w c <<<"$(measure "$apid")"
	printf '%-6s %-12s %10s %12s %10s\n' "$n" alone "$rss" "$w" "$c"
	# A second daemon in every room, each room's invite carrying the
	# port a really bound.
	port=$(jq -r .quic "$a/serve.json" | sed 's/.*://')
	while read -r inv; do
		PAPO_HOME=$b "$PAPO" join "$inv" --name bo >/dev/null
	done <"$T/invites$n"
	# The invites of papo new name port 7778: bo finds ana where she is.
	for d in "$b" "$b"/rooms/*; do
		[ -s "$d/room.json" ] || continue
		jq --arg a "127.0.0.1:$port" '.bootstrap = [$a]' "$d/room.json" >"$T/r.json" &&
			cp "$T/r.json" "$d/room.json"
	done
	serve "$b"; bpid=$pid
	url=$(jq -r .http "$a/serve.json")
	for _ in $(seq 600); do
		on=$(curl -s "$url/api/rooms" | jq '[.rooms[].online] | add')
		[ "$on" = "$n" ] && break
		sleep 0.1
	done
	[ "$on" = "$n" ] || { echo "bo is online in $on of $n rooms" >&2; exit 1; }
	read -r rss w c <<<"$(measure "$apid")"
	printf '%-6s %-12s %10s %12s %10s\n' "$n" "bo in each" "$rss" "$w" "$c"
	kill "$apid" "$bpid"; wait "$apid" "$bpid" 2>/dev/null || true
done
