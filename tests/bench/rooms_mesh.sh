#!/usr/bin/env bash
# rooms_mesh.sh: delivery among 16 daemons in 8 rooms (docs/PERFORMANCE.md,
# "Many rooms: delivery among 16 daemons in 8 rooms"; issue 23), against
# the same 16 daemons in one room, in one run.
#
#   bash tests/bench/rooms_mesh.sh [--quick]
#
# For each case (1 room, then 8), on loopback, in fresh temporary homes:
# d1 makes the rooms through its running daemon (so the invites carry the
# port it really bound); d2..d16 join every room while stopped, then all
# fifteen start at once, and the clock runs until every daemon sees the
# 15 others online in every room (the mesh settled).  Then, the daemons
# left alone for IDLE s: their CPU, wakeups and total RSS.  Then
# bench_room spread: MSGS messages, the members taking turns to send and
# the rooms taking turns to carry, each timed from just before its POST
# until it is on the /api/events?room=* stream of each of the 15 others,
# GAP_MS of quiet after each.  Figures only: nothing passes or fails on
# time; the run fails only when a daemon does not start, a send is
# refused, a message has not reached every member after 60 s, or the
# mesh does not settle in 5 minutes.
set -u
# Daemons here talk on loopback only: no LAN beacons, no port mapping.
export PAPO_LAN=off PAPO_PORTMAP=off
# The benchmark sends faster than an agent may (PAPO_RATE's default is
# 20/min), and from each member: the receiving cap (5 times the rate)
# follows the rate, so it is lifted with it.  Damping does not apply:
# no message here is a reply.
export PAPO_RATE=${PAPO_RATE:-1000000/s}
. "$(dirname "$0")/common.sh"
bench_args rooms_mesh.sh "$@"
bench_need bench_room
. "$ROOT/tests/e2e/lib.sh"       # T, start, stop, post, api, until_true
. "$ROOT/tests/bench/mesh.sh"   # cpu_ns, switches, rss_kb, fig, settled, behind
ulimit -n "$(ulimit -Hn)" 2>/dev/null

N=16 GAP_MS=100
if [ "$QUICK" = 1 ]; then MSGS=20 IDLE=5; else MSGS=50 IDLE=10; fi
# The cases, in the order they run: one room, then eight.
CASES=${PAPO_MESH_CASES:-"1 8"}

say() { echo "rooms_mesh.sh: $*" >&2; }
die() { echo "rooms_mesh.sh: $*" >&2; exit 1; }
load() { awk '{ printf "%s / %s / %s", $1, $2, $3 }' /proc/loadavg; }
now() { date +%s%N; }
# direct: each daemon's own connections (members with "direct": true),
# summed over its rooms, as "min / median / max" over the daemons.
direct() {
	local i r
	for i in $(seq 1 "$N"); do
		for r in "${NAMES[@]}"; do
			api "d$i" "/api/rooms/$r/status" | jq '[.members[] | select(.direct)] | length'
		done | awk '{ s += $1 } END { print s }'
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%d / %d / %d", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

ROWS=()
START=$(date -u '+%Y-%m-%d %H:%M UTC')
for R in $CASES; do
	say "$N daemons in $R room(s)"
	NAMES=()
	for r in $(seq 1 "$R"); do NAMES+=("r$r"); done
	# d1 makes the rooms, the first before it starts, the rest through
	# its daemon: each answer carries the room's invite.
	PAPO_HOME=$T/d1 "$PAPO" new --name d1 --room r1 >/dev/null || die "papo new failed"
	start d1 || die "d1 did not start"
	invites=("$(invite d1)")
	for r in "${NAMES[@]:1}"; do
		code=$(post d1 /api/rooms "{\"room\":\"$r\",\"name\":\"d1\"}")
		[ "$code" = 200 ] || die "d1 could not make $r: $code $(cat "$T/body")"
		invites+=("$(jq -r .invite "$T/body")")
	done
	# The others join every room while stopped, so that their start is
	# the start of the whole mesh.
	for i in $(seq 2 "$N"); do
		for inv in "${invites[@]}"; do
			PAPO_HOME=$T/d$i "$PAPO" join "$inv" --name "d$i" >/dev/null ||
				die "d$i could not join"
		done
	done
	# The CPU of the start-up counts d1's since now, the others' whole.
	PIDS=("$(cat "$T/d1.pid")")
	c0=$(cpu_ns)
	t0=$(now)
	for i in $(seq 2 "$N"); do
		PAPO_HOME=$T/d$i "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
			--name "d$i" >>"$T/d$i.out" 2>>"$T/d$i.err" </dev/null &
		echo $! >"$T/d$i.pid"
	done
	for i in $(seq 2 "$N"); do
		until_true 30 test -s "$T/d$i/serve.json" || die "d$i did not start: $(tail -3 "$T/d$i.err")"
		URL[d$i]=$(jq -r .http "$T/d$i/serve.json")
	done
	PIDS=() URLS=()
	for i in $(seq 1 "$N"); do PIDS+=("$(cat "$T/d$i.pid")"); URLS+=("${URL[d$i]}"); done
	until_true 300 settled "$R" || die "the mesh of $R room(s) did not settle in 300 s:
$(behind)"
	t1=$(now)
	settle=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f s", d / 1e9 }')
	settle_cpu=$(awk -v c=$(( $(cpu_ns) - c0 )) 'BEGIN { printf "%.1f s", c / 1e9 }')
	conns=$(direct)
	say "settled in $settle; connections per daemon (min / median / max): $conns"

	# Members shown offline again after the mesh settled, in all the
	# daemons' logs, until the messages are done: a settled mesh has
	# none.
	drops0=$(cat "$T"/d*.err | grep -c ' is offline$')
	# Idle: the mesh as it stands, nothing sent.  The first seconds
	# after settling are left out: the last dials may still be going.
	sleep 5
	L=$(load)
	c0=$(cpu_ns) s0=$(switches)
	sleep "$IDLE"
	c1=$(cpu_ns) s1=$(switches)
	idle_cpu=$(awk -v c=$((c1 - c0)) -v s="$IDLE" 'BEGIN { printf "%.1f %%", c / (s * 1e9) * 100 }')
	idle_sw=$(awk -v d=$((s1 - s0)) -v s="$IDLE" 'BEGIN { printf "%.0f", d / s }')
	rss_idle=$(rss_kb)

	c0=$(cpu_ns)
	"$BENCH/bench_room" spread "$MSGS" "$GAP_MS" "$(IFS=,; echo "${NAMES[*]}")" "${URLS[@]}" \
		>"$T/spread$R" || die "bench_room spread failed in $R room(s)"
	c1=$(cpu_ns)
	send_cpu=$(awk -v c=$((c1 - c0)) -v m="$MSGS" 'BEGIN { printf "%.1f ms", c / m / 1e6 }')
	rss_after=$(rss_kb)
	drops=$(( $(cat "$T"/d*.err | grep -c ' is offline$') - drops0 ))
	ROWS+=("| $R | $settle ($settle_cpu CPU) | $drops | $conns | $idle_cpu, $idle_sw/s | $((rss_idle / 1024)) MB → $((rss_after / 1024)) MB | $(fig "$T/spread$R" "to each member") | $(fig "$T/spread$R" "to every member") | $(fig "$T/spread$R" "send answered") | $(grep -F "answers queued" "$T/spread$R" | cut -f2 | cut -d. -f1) | $send_cpu | $L |")
	say "${ROWS[-1]}"
	for i in $(seq 1 "$N"); do stop "d$i"; rm -rf "${T:?}/d$i"; unset "URL[d$i]" "QPORT[d$i]"; done
done

echo "rooms_mesh.sh$([ "$QUICK" = 1 ] && echo ' (--quick)'): started $START, finished $(date -u '+%H:%M UTC')"
echo
echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
echo "- papo: $PAPO ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ', with uncommitted changes'))"
echo "- $N daemons on 127.0.0.1, $MSGS messages a case, $GAP_MS ms apart; times in ms"
echo
echo "| rooms | settled in (CPU of all) | shown offline again afterwards | own connections per daemon, all rooms (min / median / max) | idle: CPU of all (of one core), wakeups | RSS of all: idle → after the messages | to each member p50 / p99 / max | to every member p50 / p99 / max | send answered p50 / p99 / max | answered queued | CPU of all per message | load average (1/5/15 min) |"
echo "|---:|---|---:|---|---|---|---|---|---|---:|---|---|"
printf '%s\n' "${ROWS[@]}"
