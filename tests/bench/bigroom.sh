#!/usr/bin/env bash
# bigroom.sh: one room of many daemons (docs/PERFORMANCE.md, "A room of
# hundreds"): does it settle, what does it cost idle, how fast does a
# message reach everyone, and how soon does everyone know of members that
# stop.
#
#   bash tests/bench/bigroom.sh [--quick]
#
# For each size in SIZES (PAPO_BIG_SIZES, default "16 64 128 256"), on
# loopback, in fresh temporary homes: d1 makes the room, d2..dN join it
# while stopped, then all start at once, and the clock runs until every
# daemon sees the N - 1 others online ("settled"; at most SETTLE_MAX s).
# Then IDLE s left alone, every daemon's /api/events followed
# (bench_presence): the CPU of all the daemons, and every member any
# stream shows offline (a settled room shows none).  Then bench_room
# spread: MSGS messages, the members taking turns, each timed until every
# other member's stream has it.  Then 10 members stop, 5 cleanly (SIGTERM:
# they say bye) and 5 killed (SIGKILL: they say nothing), and the clock
# runs until every survivor's stream has shown each of them offline (and
# any survivor a stream shows offline meanwhile is counted).
# Figures only: the run fails only when a daemon does not start or a send
# is refused; a room that does not settle is reported as such, and its
# later phases are left out.
set -u
# Loopback only: no LAN beacons, no port mapping.
export PAPO_LAN=off PAPO_PORTMAP=off
# The messages go faster than an agent may send (PAPO_RATE's default is
# 20/min); the receiving cap follows the rate.
export PAPO_RATE=${PAPO_RATE:-1000000/s}
. "$(dirname "$0")/common.sh"
bench_args bigroom.sh "$@"
bench_need bench_room bench_presence
. "$ROOT/tests/e2e/lib.sh"       # T, start, stop, crash, api, until_true
. "$ROOT/tests/bench/mesh.sh"    # cpu_ns, rss_kb, fig, settled, behind
ulimit -n "$(ulimit -Hn)" 2>/dev/null

SIZES=${PAPO_BIG_SIZES:-"16 64 128 256"}
GAP_MS=200 STOPPED=10
if [ "$QUICK" = 1 ]; then
	MSGS=10 IDLE=30 SETTLE_MAX=120 GONE_MAX=60
else
	MSGS=50 IDLE=300 SETTLE_MAX=300 GONE_MAX=120
fi

say() { echo "bigroom.sh: $*" >&2; }
die() { echo "bigroom.sh: $*" >&2; exit 1; }
load() { awk '{ printf "%s / %s / %s", $1, $2, $3 }' /proc/loadavg; }
now() { date +%s%N; }
secs() { awk -v d="$1" 'BEGIN { printf "%.1f s", d / 1e9 }'; }
# how_many_settled: the daemons that see all N - 1 others online.
how_many_settled() {
	local i k=0
	for i in $(seq 1 "$N"); do
		api "d$i" /api/rooms | jq -e --argjson w $((N - 1)) '.rooms[0].online == $w' \
			>/dev/null && k=$((k + 1))
	done
	echo "$k"
}
# watch FILE SECONDS NAME...: bench_presence on those daemons, in the
# background (WATCH is its pid), its lines in FILE; returns once every
# stream is open.
watch() {
	local file=$1 secs=$2 urls=() n; shift 2
	for n in "$@"; do urls+=("${URL[$n]}"); done
	mkfifo "$file.in"
	"$BENCH/bench_presence" watch "$secs" "${urls[@]}" <"$file.in" >"$file" &
	WATCH=$!
	exec 9>"$file.in"
	until_true 60 grep -qx ready "$file" || die "bench_presence did not get ready"
}
unwatch() { echo stop >&9; exec 9>&-; wait "$WATCH"; }
# gone_everywhere FILE SURVIVORS NAME...: every survivor's stream has
# shown each NAME offline.
gone_everywhere() {
	local file=$1 want=$(( $2 * ($# - 2) )); shift 2
	[ "$(awk -v names=" $* " '$3 == "offline" && index(names, " " $4 " ") { print $2, $4 }' "$file" |
		sort -u | wc -l)" -ge "$want" ]
}
# last_offline FILE T0 NAME...: when the last survivor showed the last of
# NAME offline, after T0 (ns).
last_offline() {
	local file=$1 t0=$2; shift 2
	awk -v t0="$t0" -v names=" $* " '$3 == "offline" && index(names, " " $4 " ") {
		k = $2 " " $4; if (!(k in first)) first[k] = $1 }
		END { m = 0; for (k in first) if (first[k] > m) m = first[k]; printf "%.1f s", (m - t0) / 1e9 }' "$file"
}

ROWS=()
START=$(date -u '+%Y-%m-%d %H:%M UTC')
for N in $SIZES; do
	say "$N daemons in one room"
	PAPO_HOME=$T/d1 "$PAPO" new --name d1 --room r1 >/dev/null || die "papo new failed"
	start d1 || die "d1 did not start"
	inv=$(invite d1)
	for i in $(seq 2 "$N"); do
		PAPO_HOME=$T/d$i "$PAPO" join "$inv" --name "d$i" >/dev/null || die "d$i could not join"
	done
	t0=$(now)
	for i in $(seq 2 "$N"); do
		PAPO_HOME=$T/d$i "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
			--name "d$i" >>"$T/d$i.out" 2>>"$T/d$i.err" </dev/null &
		echo $! >"$T/d$i.pid"
		disown   # killed later: no "Killed" line from the shell
	done
	for i in $(seq 2 "$N"); do
		until_true 60 test -s "$T/d$i/serve.json" || die "d$i did not start: $(tail -3 "$T/d$i.err")"
		URL[d$i]=$(jq -r .http "$T/d$i/serve.json")
	done
	PIDS=() URLS=() ALL=()
	for i in $(seq 1 "$N"); do
		PIDS+=("$(cat "$T/d$i.pid")") URLS+=("${URL[d$i]}") ALL+=("d$i")
	done
	if until_true "$SETTLE_MAX" settled 1; then
		settle=$(secs $(( $(now) - t0 )))
		ok_settled=1
	else
		settle="never: $(how_many_settled) of $N see all after $SETTLE_MAX s"
		ok_settled=0
	fi
	say "settled: $settle"

	# Idle, every stream followed: CPU, and anyone shown offline.
	L=$(load)
	watch "$T/idle$N" "$((IDLE + 60))" "${ALL[@]}"
	c0=$(cpu_ns)
	sleep "$IDLE"   # the idle time is what is measured
	c1=$(cpu_ns)
	unwatch
	idle=$(awk -v c=$((c1 - c0)) -v s="$IDLE" -v n="$N" \
		'BEGIN { printf "%.1f %% (%.3f %%)", c / (s * 1e9) * 100, c / (s * 1e9) * 100 / n }')
	flaps=$(grep -c ' offline ' "$T/idle$N")
	rss=$(( $(rss_kb) / N / 1024 ))
	say "idle: $idle, shown offline $flaps times, $rss MB a daemon"

	spread="—" gone_bye="—" gone_kill="—" false_gone="—"
	if [ "$ok_settled" = 1 ]; then
		"$BENCH/bench_room" spread "$MSGS" "$GAP_MS" r1 "${URLS[@]}" >"$T/spread$N" ||
			die "bench_room spread failed with $N members"
		spread=$(fig "$T/spread$N" "to every member")
		say "to every member: $spread"
	fi
	if [ "$ok_settled" = 1 ] && [ "$N" -gt $((STOPPED + 1)) ]; then
		# 10 stop: the first 5 of the last 10 cleanly, the rest killed.
		bye=() killed=() survivors=()
		for i in $(seq 1 "$N"); do
			if [ "$i" -gt $((N - STOPPED)) ] && [ "$i" -le $((N - STOPPED / 2)) ]; then bye+=("d$i")
			elif [ "$i" -gt $((N - STOPPED / 2)) ]; then killed+=("d$i")
			else survivors+=("d$i"); fi
		done
		watch "$T/gone$N" "$((GONE_MAX + 30))" "${survivors[@]}"
		t0=$(now)
		for n in "${killed[@]}"; do kill -KILL "$(cat "$T/$n.pid")"; done
		for n in "${bye[@]}"; do kill -TERM "$(cat "$T/$n.pid")"; done
		until_true "$GONE_MAX" gone_everywhere "$T/gone$N" "${#survivors[@]}" \
			"${bye[@]}" "${killed[@]}" || say "not all shown offline everywhere in $GONE_MAX s"
		unwatch
		gone_bye=$(last_offline "$T/gone$N" "$t0" "${bye[@]}")
		gone_kill=$(last_offline "$T/gone$N" "$t0" "${killed[@]}")
		gone_everywhere "$T/gone$N" "${#survivors[@]}" "${bye[@]}" || gone_bye="not everywhere in $GONE_MAX s"
		gone_everywhere "$T/gone$N" "${#survivors[@]}" "${killed[@]}" || gone_kill="not everywhere in $GONE_MAX s"
		# Survivors any stream showed offline meanwhile (none should be).
		false_gone=$(awk -v names=" ${survivors[*]} " '$3 == "offline" && index(names, " " $4 " ")' \
			"$T/gone$N" | wc -l)
		say "offline everywhere: bye $gone_bye, killed $gone_kill; survivors shown offline $false_gone times"
		for n in "${killed[@]}"; do rm -f "$T/$n.pid"; done
	fi
	# PAPO_TEST_KEEP=DIR (lib.sh): the streams' lines are kept too.
	[ -n "${PAPO_TEST_KEEP:-}" ] && mkdir -p "$PAPO_TEST_KEEP" &&
		cp "$T/idle$N" "$T"/gone"$N" "$PAPO_TEST_KEEP"/ 2>/dev/null
	ROWS+=("| $N | $settle | $idle | $flaps | $rss MB | $spread | $gone_bye | $gone_kill | $false_gone | $L |")
	for i in $(seq 1 "$N"); do
		[ -e "$T/d$i.pid" ] && { kill -TERM "$(cat "$T/d$i.pid")" 2>/dev/null; }
	done
	for i in $(seq 1 "$N"); do
		[ -e "$T/d$i.pid" ] && { until_true 30 bash -c "! kill -0 $(cat "$T/d$i.pid") 2>/dev/null"; rm -f "$T/d$i.pid"; }
		rm -rf "${T:?}/d$i"; unset "URL[d$i]" "QPORT[d$i]"
	done
done

echo "bigroom.sh$([ "$QUICK" = 1 ] && echo ' (--quick)'): started $START, finished $(date -u '+%H:%M UTC')"
echo
echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
echo "- papo: $PAPO ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ', with uncommitted changes'))"
echo "- every daemon on 127.0.0.1, one room; idle $IDLE s; $MSGS messages $GAP_MS ms apart; $STOPPED stopped (half with bye, half killed)"
echo
echo "| members | all see all online after | idle CPU of all (per member), % of a core | shown offline while idle | RSS per daemon | a message to every member p50 / p99 / max, ms | 5 stopped with bye: offline everywhere after | 5 killed: offline everywhere after | survivors shown offline meanwhile | load average (1/5/15 min) |"
echo "|---:|---|---|---:|---|---|---|---|---:|---|"
printf '%s\n' "${ROWS[@]}"
