#!/usr/bin/env bash
# run.sh: every papo benchmark, printed as one markdown table on stdout
# (progress on stderr).  docs/PERFORMANCE.md says what each row measures
# and records a dated run.
#
#   bash tests/bench/run.sh [--quick]
#
# It builds nothing: papo is $PAPO or build/papo, and the benchmark
# programs are in the tests/bench/ directory of the same build (or
# $PAPO_BENCH).  Daemons run on 127.0.0.1 with ports of their own choosing,
# in temporary homes removed at the end.  --quick: fewer calls and
# messages, 10 s instead of 60 s of idling, and no clean build or test
# suite.  Nothing here passes or fails on time: a run fails only when a
# benchmark could not run (a daemon that did not start, an error answer).
set -u
# Daemons here talk on loopback only: no LAN beacons, no port mapping.
export PAPO_LAN=off PAPO_PORTMAP=off
# Benchmarks send far faster than an agent may (PAPO_RATE's default).
export PAPO_RATE=${PAPO_RATE:-1000000/s}
. "$(dirname "$0")/common.sh"
bench_args run.sh "$@"
bench_need bench_mcp bench_streams bench_room bench_start gen_log
for tool in curl jq strip; do
	command -v $tool >/dev/null || { echo "run.sh: needs $tool" >&2; exit 1; }
done
unset PAPO_TOKEN PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN
. "$ROOT/tests/e2e/lib.sh"       # T, start, stop, join, invite, api, online
ulimit -n "$(ulimit -Hn)" 2>/dev/null

if [ "$QUICK" = 1 ]; then
	CALLS=200 BLOCKS=5 PUSHES=50 RUNS=5 JOINS=3 IDLE=10 STREAM_IDLE=10
	FANOUTS=3 ROOM_MSGS=20 ROOM32_MSGS=10 LOGMSGS=100000
else
	CALLS=1000 BLOCKS=10 PUSHES=200 RUNS=10 JOINS=10 IDLE=60 STREAM_IDLE=30
	FANOUTS=5 ROOM_MSGS=100 ROOM32_MSGS=50 LOGMSGS=1000000
fi
STREAMS=1000
ROWS=()
START=$(date -u '+%Y-%m-%d %H:%M UTC')

say_progress() { echo "run.sh: $*" >&2; }
die() { echo "run.sh: $*" >&2; exit 1; }
load() { awk '{ printf "%s / %s / %s", $1, $2, $3 }' /proc/loadavg; }
now() { date +%s%N; }

# ms VALUE: a time in ms as people read it.
ms() {
	awk -v v="$1" 'BEGIN {
		if (v >= 1000) printf "%.2f s", v / 1000
		else if (v >= 10) printf "%.1f ms", v
		else printf "%.2f ms", v }'
}
# row MEASURE PAPO GOAL RUST LOAD COMMAND (a '|' in a cell is escaped, as
# markdown tables need even inside code)
row() {
	ROWS+=("| ${1//|/\\|} | ${2//|/\\|} | $3 | $4 | $5 | \`${6//|/\\|}\` |")
	say_progress "$1: $2"
}
# fig FILE LABEL: a bench_print line as "median M, p99 P (spread A–B, n N)".
fig() {
	local l; l=$(grep -F -- "$2	" "$1" | head -1)
	[ -n "$l" ] || die "no figure '$2' in $1: $(cat "$1")"
	IFS=$'\t' read -r _ med p99 lo hi n <<<"$l"
	echo "median $(ms "$med"), p99 $(ms "$p99") (spread $(ms "$lo")–$(ms "$hi"), n = $n)"
}
# val FILE LABEL: a bench_value line's value.
val() {
	local l; l=$(grep -F -- "$2	" "$1" | head -1)
	[ -n "$l" ] || die "no value '$2' in $1: $(cat "$1")"
	cut -f2 <<<"$l"
}
median_of() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
min_of() { sort -n | head -1; }
max_of() { sort -n | tail -1; }
# stats FILE: "median M (spread A–B, n N)" of the ms values in FILE.
stats() {
	echo "median $(ms "$(median_of <"$1")") (spread $(ms "$(min_of <"$1")")–$(ms "$(max_of <"$1")"), n = $(wc -l <"$1"))"
}

# What /proc says of a daemon: every thread's CPU time (ns, schedstat) and
# context switches, its RSS and threads.
run_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }'
}
rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' /proc/"$1"/status; }
hwm_mb() { awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' /proc/"$1"/status; }
threads() { awk '/^Threads:/ { print $2 }' /proc/"$1"/status; }
pid_of() { cat "$T/$1.pid"; }

# pair A B: a fresh room of two running members, both seeing the other.
pair() {
	PAPO_HOME=$T/$1 "$PAPO" new --name "$1" >/dev/null || die "papo new failed"
	start "$1" || die "$1 did not start"
	join "$2" "$(invite "$1")" || die "papo join failed"
	start "$2" || die "$2 did not start"
	until_true 30 online "$1" "$2" || die "$1 does not see $2 online"
	until_true 30 online "$2" "$1" || die "$2 does not see $1 online"
}
# unpair NAME...: stops them and removes their homes.
unpair() {
	local n
	for n in "$@"; do stop "$n"; rm -rf "${T:?}/$n" "$T/$n".*; unset "URL[$n]" "QPORT[$n]"; done
}

say_progress "papo: $PAPO; results in a markdown table at the end"

# 1. MCP round trips, and papo mcp over stdio.
pair ana bo
L=$(load)
cmd="$BENCH/bench_mcp rtt ${URL[ana]}/mcp $CALLS $BLOCKS"
$cmd >"$T/rtt" || die "bench_mcp rtt failed"
row "MCP \`initialize\`, kept-alive connection" "$(fig "$T/rtt" "initialize, kept-alive connection")" "≤ 2 ms" "—" "$L" "$cmd"
row "MCP \`tools/call status\`, kept-alive connection" "$(fig "$T/rtt" "tools/call status, kept-alive connection")" "≤ 1 ms" "—" "$L" "$cmd"
row "MCP \`ping\`, kept-alive connection (no node round trip)" "$(fig "$T/rtt" "ping, kept-alive connection")" "—" "—" "$L" "$cmd"
row "MCP \`initialize\`, new connection per call" "$(fig "$T/rtt" "initialize, new connection per call")" "—" "—" "$L" "$cmd"
row "MCP \`tools/call status\`, new connection per call" "$(fig "$T/rtt" "tools/call status, new connection per call")" "—" "—" "$L" "$cmd"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"run.sh","version":"1"}}}'
L=$(load)
: >"$T/stdio"
for _ in $(seq "$RUNS"); do
	t0=$(now)
	printf '%s\n' "$init" | PAPO_HOME=$T/ana "$PAPO" mcp >"$T/stdio.out" 2>>"$T/stdio.err" ||
		die "papo mcp failed: $(tail -3 "$T/stdio.err")"
	t1=$(now)
	grep -q '"protocolVersion"' "$T/stdio.out" || die "papo mcp did not answer initialize"
	echo $(( (t1 - t0) / 1000 )) | awk '{ print $1 / 1000 }' >>"$T/stdio"
done
row "\`papo mcp\` (stdio) answering \`initialize\` and exiting at the end of stdin, daemon running" "$(stats "$T/stdio")" "—" "45 ms" "$L" "printf '%s\\n' '$init' | PAPO_HOME=$T/ana $PAPO mcp"

# 2. Push latency: tools/call send on ana to the notification on bo's stream.
L=$(load)
cmd="$BENCH/bench_mcp push ${URL[ana]}/mcp ${URL[bo]}/mcp $PUSHES"
$cmd >"$T/push" || die "bench_mcp push failed"
row "push: \`tools/call send\` on A to \`notifications/claude/channel\` on B's stream" "$(fig "$T/push" "push: send on A to notifications/claude/channel on B")" "≤ 10 ms" "—" "$L" "$cmd"
row "push: \`tools/call send\` on A to its answer (\`delivered\`, B's ack back)" "$(fig "$T/push" "push: send on A to its answer (delivered)")" "—" "—" "$L" "$cmd"

# 4a. papo say and papo status, whole processes, taking turns.
L=$(load)
: >"$T/say"; : >"$T/status"
for k in $(seq "$RUNS"); do
	t0=$(now)
	out=$(PAPO_HOME=$T/ana "$PAPO" say "bench say $k" --json) || die "papo say failed"
	t1=$(now)
	[ "$(jq -r .state <<<"$out")" = delivered ] || die "papo say: not delivered: $out"
	awk -v d=$((t1 - t0)) 'BEGIN { print d / 1e6 }' >>"$T/say"
	t0=$(now)
	PAPO_HOME=$T/ana "$PAPO" status >/dev/null || die "papo status failed"
	t1=$(now)
	awk -v d=$((t1 - t0)) 'BEGIN { print d / 1e6 }' >>"$T/status"
done
row "\`papo say\` with the addressee online, whole process (answer: delivered)" "$(stats "$T/say")" "—" "3.8–3.9 s" "$L" "PAPO_HOME=$T/ana $PAPO say 'bench say K' --json"
row "\`papo status\`, whole process" "$(stats "$T/status")" "—" "4.5 s" "$L" "PAPO_HOME=$T/ana $PAPO status"

# 4b. Joining with an invite to the first message delivered: the clock
# starts before papo join; papo serve starts the new member, papo say sends
# at once (queued while nobody is connected yet), and the clock stops when
# the message is on ana's /api/events stream.
L=$(load)
: >"$T/join"; : >"$T/join.ready"; : >"$T/join.state"
for k in $(seq "$JOINS"); do
	n=new$k
	inv=$(invite ana)
	"$BENCH/bench_room" watch "${URL[ana]}" "first from $n" 60 >"$T/watch" 2>>"$T/watch.err" &
	wpid=$!
	until_true 10 grep -q ready "$T/watch" || die "the watcher did not start"
	t0=$(now)
	PAPO_HOME=$T/$n "$PAPO" join "$inv" --name "$n" >/dev/null || die "papo join failed"
	PAPO_HOME=$T/$n "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
		>"$T/$n.out" 2>"$T/$n.err" </dev/null &
	echo $! >"$T/$n.pid"
	"$BENCH/bench_start" "$T/$n" "$t0" 30 >"$T/ready" || die "$n did not start"
	PAPO_HOME=$T/$n "$PAPO" say "first from $n" --json >"$T/first" || die "papo say on $n failed"
	wait "$wpid" || die "the first message of $n did not reach ana in 60 s"
	t1=$(tail -1 "$T/watch")
	awk -v d=$((t1 - t0)) 'BEGIN { print d / 1e6 }' >>"$T/join"
	cut -f2 "$T/ready" >>"$T/join.ready"
	jq -r .state "$T/first" >>"$T/join.state"
	stop "$n"
	rm -rf "${T:?}/$n"
done
row "new member: \`papo join\` + \`papo serve\` to its first message delivered (on the other member's event stream)" "$(stats "$T/join"); of which to /healthz answering: median $(ms "$(median_of <"$T/join.ready")"); papo say answered $(sort "$T/join.state" | uniq -c | awk '{ printf "%s%s %d×", (NR > 1 ? ", " : ""), $2, $1 }')" "—" "3.8–4.7 s" "$L" "papo join INVITE --name newK; papo serve --http 127.0.0.1:0 --listen 127.0.0.1:0 &; $BENCH/bench_start HOME T0; papo say 'first from newK' (clock stopped by $BENCH/bench_room watch URL_ANA TEXT 60)"
unpair ana bo

# 4c. An idle daemon with one peer.
pair idle peer
p=$(pid_of idle)
L=$(load)
sleep 10
rss10=$(rss_mb "$p") thr10=$(threads "$p")
sleep 6
cpu16=$(run_ns "$p")
rest=$((IDLE - 16)); [ "$rest" -gt 0 ] && sleep "$rest"
rss=$(rss_mb "$p") thr=$(threads "$p")
c0=$(run_ns "$p") s0=$(switches "$p")
sleep "$IDLE"
c1=$(run_ns "$p") s1=$(switches "$p")
row "idle \`papo serve\` with one peer: RSS and threads 10 s after the room was up" "$rss10 MB, $thr10 threads" "—" "21.8 MB, 14 threads" "$L" "grep -E 'VmRSS|Threads' /proc/PID/status"
row "idle \`papo serve\` with one peer: CPU over the first 16 s, start-up included" "$(awk -v c="$cpu16" 'BEGIN { printf "%.3f %%", c / 16e9 * 100 }')" "—" "0.5 %" "$L" "sum of field 1 of /proc/PID/task/*/schedstat, over 16 s"
row "idle \`papo serve\` with one peer: RSS and threads after ${IDLE} s" "$rss MB, $thr threads" "—" "—" "$L" "grep -E 'VmRSS|Threads' /proc/PID/status"
row "idle \`papo serve\` with one peer: CPU over ${IDLE} s" "$(awk -v c=$((c1 - c0)) -v s="$IDLE" 'BEGIN { printf "%.3f %%", c / (s * 1e9) * 100 }')" "no CPU while idle" "0.5 %" "$L" "sum of field 1 of /proc/PID/task/*/schedstat, before and after ${IDLE} s"
row "idle \`papo serve\` with one peer: wakeups (context switches, every thread)" "$(awk -v d=$((s1 - s0)) -v s="$IDLE" 'BEGIN { printf "%.2f /s", d / s }')" "—" "—" "$L" "sum of voluntary_ctxt_switches + nonvoluntary_ctxt_switches of /proc/PID/task/*/status, before and after ${IDLE} s"
unpair idle peer

# 3. Many open notification streams on one daemon.
for mode in mcp api; do
	pair s1 s2
	L=$(load)
	cmd="$BENCH/bench_streams $mode ${URL[s1]} ${URL[s2]} $(pid_of s1) $STREAMS $STREAM_IDLE $FANOUTS"
	$cmd >"$T/streams.$mode" || die "bench_streams $mode failed"
	f=$T/streams.$mode
	if [ $mode = mcp ]; then what="$STREAMS MCP sessions, each with its GET /mcp stream"; else what="$STREAMS GET /api/events streams"; fi
	row "$what: daemon RSS (before → with them open → after the messages), threads" "$(val "$f" "daemon RSS before the streams") → $(val "$f" "daemon RSS with the streams open") → $(val "$f" "daemon RSS after the messages") MB; $(val "$f" "daemon threads" | cut -d. -f1) threads" "≤ 50 MB, ≤ 4 threads" "—" "$L" "$cmd"
	row "$what: daemon CPU and wakeups over ${STREAM_IDLE} s idle" "$(val "$f" "daemon CPU while idle") %, $(val "$f" "daemon context switches while idle") switches/s" "no CPU while idle" "—" "$L" "$cmd"
	row "$what: one message from the other member to every stream" "$(fig "$f" "fan-out: to every stream"); first stream: median $(ms "$(grep -F "to the first stream" "$f" | cut -f2)")" "—" "—" "$L" "$cmd"
	unpair s1 s2
done

# 4d. Delivery latency by room size.
for size in 2 8 32; do
	say_progress "a room of $size"
	PAPO_HOME=$T/m1 "$PAPO" new --name m1 >/dev/null
	start m1 || die "m1 did not start"
	for i in $(seq 2 "$size"); do
		join "m$i" "$(invite "m$((i - 1))")" || die "papo join failed"
		start "m$i" || die "m$i did not start"
	done
	all_online() {
		local i n
		for i in $(seq 1 "$size"); do
			n=$(api "m$i" /api/status | jq '[.members[] | select(.online)] | length')
			[ "$n" = $((size - 1)) ] || return 1
		done
	}
	until_true 180 all_online || die "the room of $size did not come online"
	urls=()
	for i in $(seq 1 "$size"); do urls+=("${URL[m$i]}"); done
	msgs=$ROOM_MSGS; [ "$size" = 32 ] && msgs=$ROOM32_MSGS
	L=$(load)
	cmd="$BENCH/bench_room fanout $msgs ${urls[*]}"
	$cmd >"$T/room$size" || die "bench_room fanout failed in the room of $size"
	row "room of $size on one machine: \`POST /api/send\` on one member to the message on every other member's /api/events" "$(fig "$T/room$size" "to every member")" "—" "—" "$L" "$BENCH/bench_room fanout $msgs URL1 … URL$size"
	row "room of $size: the same, to each member" "$(fig "$T/room$size" "to each member")" "—" "—" "$L" "$BENCH/bench_room fanout $msgs URL1 … URL$size"
	for i in $(seq 1 "$size"); do stop "m$i"; rm -rf "${T:?}/m$i"; unset "URL[m$i]" "QPORT[m$i]"; done
done

# 4e. Start-up with a long log.
say_progress "writing a log of $LOGMSGS messages"
PAPO_HOME=$T/big "$PAPO" new --name big >/dev/null || die "papo new failed"
PAPO_HOME=$T/other "$PAPO" join "$(PAPO_HOME=$T/big "$PAPO" invite)" --name other >/dev/null || die "papo join failed"
"$BENCH/gen_log" "$T/big" "$T/other" "$LOGMSGS" >"$T/gen" || die "gen_log failed"
PAPO_HOME=$T/empty "$PAPO" new --name empty >/dev/null || die "papo new failed"
# serve_time NAME: starts it, prints ms until /healthz answers.
serve_time() {
	local n=$1 t0
	rm -f "$T/$n/serve.json"
	t0=$(now)
	PAPO_HOME=$T/$n "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
		>>"$T/$n.out" 2>>"$T/$n.err" </dev/null &
	echo $! >"$T/$n.pid"
	"$BENCH/bench_start" "$T/$n" "$t0" 120 >"$T/ready" || die "$n did not start: $(tail -3 "$T/$n.err")"
	URL[$n]=$(jq -r .http "$T/$n/serve.json")
	cut -f2 "$T/ready"
}
L=$(load)
: >"$T/start.empty"; : >"$T/start.big"
for _ in 1 2 3; do
	serve_time empty >>"$T/start.empty"; stop empty
	serve_time big >>"$T/start.big"
	rss_big=$(rss_mb "$(pid_of big)") hwm_big=$(hwm_mb "$(pid_of big)") thr_big=$(threads "$(pid_of big)")
	n=$(api big /api/status | jq .messages)
	[ "$n" = "$LOGMSGS" ] || die "the daemon counts $n messages, not $LOGMSGS"
	stop big
done
serve_time empty >/dev/null
rss_empty=$(rss_mb "$(pid_of empty)")
stop empty
row "\`papo serve\` start to \`/healthz\` answering, empty log" "$(stats "$T/start.empty"); RSS $rss_empty MB" "—" "—" "$L" "PAPO_HOME=H $PAPO serve --http 127.0.0.1:0 --listen 127.0.0.1:0 & $BENCH/bench_start H T0"
row "\`papo serve\` start to \`/healthz\` answering, log of $LOGMSGS messages ($(val "$T/gen" "log.jsonl size") MB, $(val "$T/gen" "lines written" | cut -d. -f1) lines, in the page cache)" "$(stats "$T/start.big"); RSS $rss_big MB (high-water $hwm_big MB), $thr_big threads" "—" "—" "$L" "$BENCH/gen_log H OTHER $LOGMSGS; PAPO_HOME=H $PAPO serve --http 127.0.0.1:0 --listen 127.0.0.1:0 & $BENCH/bench_start H T0"
serve_time big >/dev/null
L=$(load)
: >"$T/hist"
for _ in $(seq 20); do
	curl -s -o /dev/null -w '%{time_total}\n' "${URL[big]}/api/history?limit=20" | awk '{ print $1 * 1000 }' >>"$T/hist"
done
row "\`GET /api/history?limit=20\` with $LOGMSGS messages in the log" "$(stats "$T/hist")" "—" "—" "$L" "curl -s -w '%{time_total}' URL/api/history?limit=20"
stop big
rm -rf "${T:?}/big" "$T/other" "$T/empty"

# 4f. The binary.
L=$(load)
strip -o "$T/papo.stripped" "$PAPO" || die "strip failed"
row "\`papo\` binary, stripped (dynamically linked to the Debian libraries)" "$(stat -c %s "$T/papo.stripped" | awk '{ printf "%.2f MB (%d bytes)", $1 / 1e6, $1 }')" "—" "17.4 MB" "$L" "strip -o COPY $PAPO; stat -c %s COPY"

# 4g. Clean build and the test suite: full runs only.
if [ "$QUICK" = 0 ]; then
	L=$(load)
	t0=$(now)
	if cmake -S "$ROOT" -B "$T/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$T/build.log" 2>&1 &&
		cmake --build "$T/build" -j2 >>"$T/build.log" 2>&1; then
		t1=$(now)
		fig_build=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f s", d / 1e9 }')
	else
		fig_build="failed: $(grep -m1 -E 'error' "$T/build.log")"
	fi
	row "clean build, RelWithDebInfo (as .ci/setup), everything (papo, tests, benchmarks)" "$fig_build" "—" "255–316 s" "$L" "cmake -S . -B FRESH -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build FRESH -j2"
	L=$(load)
	t0=$(now)
	if cmake -S "$ROOT" -B "$T/build2" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$T/build2.log" 2>&1 &&
		cmake --build "$T/build2" -j2 --target papo >>"$T/build2.log" 2>&1; then
		t1=$(now)
		fig_build=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f s", d / 1e9 }')
	else
		fig_build="failed: $(grep -m1 -E 'error' "$T/build2.log")"
	fi
	row "clean build, RelWithDebInfo, \`papo\` alone" "$fig_build" "—" "255–316 s" "$L" "cmake -S . -B FRESH -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build FRESH -j2 --target papo"
	rm -rf "${T:?}/build" "$T/build2"

	say_progress "the test suite (a few minutes)"
	L=$(load)
	t0=$(now)
	ctest --test-dir "$(dirname "$PAPO")" >"$T/ctest.log" 2>&1
	t1=$(now)
	summary=$(grep -E 'tests passed' "$T/ctest.log" | head -1)
	row "the whole test suite, once" "$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f s", d / 1e9 }') ($summary)" "—" "—" "$L" "ctest --test-dir $(dirname "$PAPO")"
fi

# The codec benchmarks (tests/bench/codec.c and wire.c, docs/CODEC.md)
# report codec times and frame sizes; when they are built, their own
# output follows the table.
: >"$T/codec"
for b in codec wire; do
	if [ -x "$BENCH/$b" ]; then
		say_progress "$b (docs/CODEC.md)"
		{ echo; "$BENCH/$b"; } >>"$T/codec" || die "$b failed"
	fi
done

echo "papo benchmarks$([ "$QUICK" = 1 ] && echo ' (--quick)'): started $START, finished $(date -u '+%H:%M UTC')"
echo
echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo) RAM, Linux $(uname -r)"
echo "- papo: $PAPO ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ', with uncommitted changes'))"
echo
echo "| measure | papo | goal | Rust tool | load average (1/5/15 min) | command |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
cat "$T/codec"
