#!/usr/bin/env bash
# permsg.sh: the CPU a message costs each member of a room of 8
# (docs/PERFORMANCE.md, "Per-message cost").
#
#   bash tests/bench/permsg.sh [--quick]
#
# Eight daemons on loopback, in fresh temporary homes, in one room
# (d1 makes it; d2..d8 join while stopped, then all start).  Once each
# sees the 7 others online, for each rate of RATES (messages a second; 0
# is as fast as the daemons take them, at most WINDOW sends unanswered)
# bench_room blast sends MSGS messages, the members taking turns, each to
# the room.  The clock runs from the first send until every daemon holds
# every message (/api/status's count).  Figures: messages a second
# delivered to all 8, and the daemons' CPU (utime + stime from
# /proc/PID/stat, all threads) divided by messages x members.  With
# PERMSG_PERF=1 (and perf installed), perf record samples d2 during the
# last rate and the top functions are printed.  At the end the daemons
# stop and each one's log must hold every message sent exactly once: the
# run fails when a message is lost or doubled, never on time.
set -u
export PAPO_LAN=off PAPO_PORTMAP=off
# Far faster than an agent may send (PAPO_RATE's default is 20/min).
export PAPO_RATE=${PAPO_RATE:-1000000/s}
. "$(dirname "$0")/common.sh"
bench_args permsg.sh "$@"
bench_need bench_room
. "$ROOT/tests/e2e/lib.sh"       # T, start, stop, api, until_true
ulimit -n "$(ulimit -Hn)" 2>/dev/null

N=8
RATES=${PERMSG_RATES:-"100 300 1000 0"}
WINDOW=${PERMSG_WINDOW:-512}
if [ "$QUICK" = 1 ]; then SECS=2; else SECS=${PERMSG_SECS:-5}; fi
# At rate 0 the count is that of 1,000 a second.
msgs_for() { local r=$1; [ "$r" = 0 ] && r=1000; echo $(( r * SECS )); }

say() { echo "permsg.sh: $*" >&2; }
die() { echo "permsg.sh: $*" >&2; exit 1; }
load() { awk '{ printf "%s / %s / %s", $1, $2, $3 }' /proc/loadavg; }
now() { date +%s%N; }
# utime + stime of the daemons, in clock ticks, all threads.
ticks() {
	local p; for p in "${PIDS[@]}"; do cat /proc/"$p"/stat; done |
		sed 's/.*) //' | awk '{ s += $12 + $13 } END { print s + 0 }'
}
# The fewest messages any daemon holds.
least() {
	local i; for i in $(seq 1 "$N"); do api "d$i" /api/status | jq .messages; done |
		sort -n | head -1
}
settled() {
	local i
	for i in $(seq 1 "$N"); do
		[ "$(api "d$i" /api/status | jq '[.members[]? | select(.online)] | length')" = $((N - 1)) ] ||
			[ "$(api "d$i" /api/rooms | jq '[.rooms[].online] | add')" = $((N - 1)) ] || return 1
	done
}

PAPO_HOME=$T/d1 "$PAPO" new --name d1 --room r1 >/dev/null || die "papo new failed"
start d1 || die "d1 did not start"
inv=$(invite d1)
for i in $(seq 2 "$N"); do join "d$i" "$inv" || die "d$i could not join"; done
for i in $(seq 2 "$N"); do start "d$i" || die "d$i did not start"; done
PIDS=() URLS=()
for i in $(seq 1 "$N"); do PIDS+=("$(cat "$T/d$i.pid")"); URLS+=("${URL[d$i]}"); done
until_true 120 settled || die "the room did not settle in 120 s"
sleep 2
HZ=$(getconf CLK_TCK)
START=$(date -u '+%Y-%m-%d %H:%M UTC')
ROWS=() TOTAL=0 TAGS=()
for R in $RATES; do
	M=$(msgs_for "$R")
	TAG="p$R-$(date +%s)"
	TAGS+=("$TAG:$M")
	base=$(least)
	L=$(load)
	c0=$(ticks) t0=$(now)
	if [ "${PERMSG_PERF:-0}" = 1 ] && [ "$R" = "$(echo $RATES | awk '{ print $NF }')" ]; then
		perf record -F 299 --call-graph dwarf,16384 -o "$T/perf.data" -p "${PIDS[1]}" 2>/dev/null >/dev/null &
		PERF=$!
	fi
	"$BENCH/bench_room" blast "$M" "$R" "$WINDOW" "$TAG" "${URLS[@]}" >"$T/blast$R" ||
		die "bench_room blast failed at rate $R: $(cat "$T/blast$R")"
	until_true 300 test "$(least)" -ge $((base + M)) ||
		die "after 300 s a daemon holds $(least) of $((base + M)) messages"
	t1=$(now) c1=$(ticks)
	if [ -n "${PERF:-}" ]; then kill -INT "$PERF"; wait "$PERF" 2>/dev/null; PERF=; fi
	TOTAL=$((TOTAL + M))
	secs=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f", d / 1e9 }')
	got=$(awk -v m="$M" -v s="$secs" 'BEGIN { printf "%.0f", m / s }')
	cpu=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v s="$secs" 'BEGIN { printf "%.0f %%", c / hz / s * 100 }')
	per=$(awk -v c=$((c1 - c0)) -v hz="$HZ" -v m="$M" -v n="$N" 'BEGIN { printf "%.3f", c / hz * 1000 / (m * n) }')
	ans=$(grep -F "send answered	" "$T/blast$R" | awk -F'\t' '{ printf "%.0f / %.0f", $2, $3 }')
	q=$(grep -F "answered queued" "$T/blast$R" | cut -f2 | cut -d. -f1)
	rate=$([ "$R" = 0 ] && echo "as fast as taken" || echo "$R")
	ROWS+=("| $rate | $M | $got | $secs s | $cpu | **$per ms** | $ans | $q | $L |")
	say "${ROWS[-1]}"
done

for i in $(seq 1 "$N"); do stop "d$i"; done
bad=0
for i in $(seq 1 "$N"); do
	jq -R -r 'fromjson? | select(.t == "msg") | .body' "$T/d$i/log.jsonl" >"$T/texts$i"
	for tm in "${TAGS[@]}"; do
		tag=${tm%:*} m=${tm#*:}
		all=$(grep -c "^$tag-" "$T/texts$i")
		uniq=$(grep "^$tag-" "$T/texts$i" | sort -u | wc -l)
		if [ "$all" != "$m" ] || [ "$uniq" != "$m" ]; then
			say "d$i holds $all messages of $tag ($uniq distinct), not $m"
			bad=1
		fi
	done
done

echo "permsg.sh$([ "$QUICK" = 1 ] && echo ' (--quick)'): started $START, finished $(date -u '+%H:%M UTC')"
echo
echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
echo "- papo: $PAPO ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ', with uncommitted changes'))"
echo "- $N daemons on 127.0.0.1 in one room, each message to all $N; at most $WINDOW sends unanswered"
echo "- lost or doubled: $([ "$bad" = 0 ] && echo "none ($TOTAL messages, each once in each of the $N logs)" || echo "**YES**")"
echo
echo "| rate asked (msg/s) | messages | delivered to all 8 (msg/s) | first send to last held | CPU of the 8 daemons (of one core) | CPU per member per message | send answered p50 / p99 (ms) | answered queued | load average (1/5/15 min) |"
echo "|---|---:|---:|---:|---:|---:|---|---:|---|"
printf '%s\n' "${ROWS[@]}"
if [ -f "$T/perf.data" ]; then
	# Self time by library, then papo's functions with what they call
	# (children): the share of d2's samples spent in each and below.
	echo
	echo "perf, d2, last rate: samples by library (self %)"
	perf report -i "$T/perf.data" --no-children --sort dso --stdio 2>/dev/null |
		grep -E '^ +[0-9]' | head -12
	echo
	echo "perf, d2, last rate: functions with their callees (children %, self %; top 70)"
	perf report -i "$T/perf.data" --children --sort symbol --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9]' | grep -v ' 0x0' | head -70
	echo
	echo "perf, d2, last rate: kernel and libc symbols (self %, top 15)"
	perf report -i "$T/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null |
		grep -E '^ +[0-9]' | grep -v papo | head -15
fi
exit "$bad"
