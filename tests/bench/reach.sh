#!/usr/bin/env bash
# reach.sh: from a new member's `papo serve` to its first message delivered,
# for each kind of path (docs/PERFORMANCE.md, "A new member's first
# message, by path"), printed as a markdown table on stdout (progress on
# stderr).  Needs root, iproute2 and nftables for the lab of
# tests/e2e/lab.sh; the loopback row runs without them.
#
#   bash tests/bench/reach.sh [--quick]
#
# Each run: B joins A's room from an invite in a fresh home (a new member
# each time); a watcher on A's /api/events waits for B's text
# (bench_room watch); bench_start starts B's `papo serve` itself, the
# clock just before (so no shell's fork, nor the loading of bench_start's
# own libraries beside the daemon's, is counted), polls B's serve.json
# every millisecond, and the moment B answers /healthz it sends the text
# (POST /api/send).  The clock stops when the watcher reads the text from
# A's stream.  Paths:
#
#   loopback  A and B on 127.0.0.1, B joining from A's invite
#   lan       A and B on one LAN behind a NAT, B joining from A's invite
#   via R     A and B each behind a symmetric NAT (no direct path can
#             exist), R public; B joins from R's invite: its text reaches
#             A through R
#   punched   A and B each behind a cone NAT dropping unsolicited inbound,
#             R2 public (a room of its own); B joins from R2's invite: its first text goes
#             through R, and the row also gives when B's status first
#             shows A with path "punched" (polled by curl, every ~20 ms),
#             and the punch datagrams both spent (status "punch")
#
# Figures, never pass/fail on time: a run fails only when something did
# not work (a daemon that did not start, a message that never came).
set -u
. "$(dirname "$0")/common.sh"
bench_args reach.sh "$@"
bench_need bench_start bench_room
unset PAPO_TOKEN PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN \
	PAPO_ADVERTISE PAPO_PROTOCOL
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lab.sh"
RUNS=$([ "$QUICK" = 1 ] && echo 3 || echo 6)   # at most 8 members a room
START=$(date -u '+%Y-%m-%d %H:%M UTC')
progress() { echo "reach.sh: $*" >&2; }
die() { echo "reach.sh: $*" >&2; exit 1; }
now() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-";
	else if (NR % 2) print v[(NR + 1) / 2];
	else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s–%s", lo, hi }'; }

# first NAME_A NAME_B INVITE LISTEN RUN: one run; appends the figures to
# $T/first (ms to delivery), $T/ready (ms to /healthz), $T/state.
first() {
	local a=$1 b=$2 inv=$3 listen=$4 text w t0 t1 r
	text="first from $b"
	lab_papo "$b" join "$inv" --name "$b" >/dev/null || die "papo join on $b failed"
	lab_in "$a" "$BENCH/bench_room" watch "${URL[$a]}" "$text" 60 >"$T/watch" \
		2>>"$T/watch.err" &
	w=$!
	until_true 10 grep -q ready "$T/watch" || die "the watcher on $a did not start"
	# bench_start starts B's daemon itself, the clock just before.
	r=$(lab_in "$b" "$BENCH/bench_start" "$T/$b" spawn 30 "$text" \
		"$T/$b.err" "$T/$b.pid" env PAPO_HOME="$T/$b" "$PAPO" serve \
		--http 127.0.0.1:0 --listen "$listen" --name "$b") ||
		die "$b did not start: $(tail -3 "$T/$b.err")"
	t0=$(cut -f5 <<<"$r")
	URL[$b]=$(jq -r .http "$T/$b/serve.json")
	wait "$w" || die "$b's text did not reach $a in 60 s"
	t1=$(tail -1 "$T/watch")
	awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f\n", d / 1e6 }' >>"$T/first"
	cut -f2 <<<"$r" >>"$T/ready"
	cut -f4 <<<"$r" >>"$T/state"
	T0=$t0
}

# row PATH: the table row of the runs just made.
row() {
	local states
	states=$(sort "$T/state" | uniq -c | awk '{ printf "%s%s %d×", (NR > 1 ? ", " : ""), $2, $1 }')
	printf '| %s | median %s ms (%s ms, n = %s) | median %s ms | %s | %s |\n' \
		"$1" "$(median <"$T/first")" "$(spread <"$T/first")" \
		"$(wc -l <"$T/first")" "$(median <"$T/ready")" "$states" "${2:-}"
	: >"$T/first"; : >"$T/ready"; : >"$T/state"
}
# done_with NAME: stops it and forgets its home (the next run is a new
# member).  B's daemons are bench_start's children, not this shell's: they
# are waited for by their pid.
done_with() {
	local pid; pid=$(cat "$T/$1.pid")
	if [ "${2:-}" = spawned ]; then
		kill -TERM "$pid" 2>/dev/null
		until_true 20 bash -c "! kill -0 $pid 2>/dev/null" ||
			die "$1 did not stop on SIGTERM"
		rm -f "$T/$1.pid"
	else
		stop "$1"
	fi
	rm -rf "${T:?}/$1"
	unset "URL[$1]"
}

ROWS=()
: >"$T/first"; : >"$T/ready"; : >"$T/state"

# Loopback.
progress "loopback"
papo a new --name a >/dev/null
start a || die "a did not start"
for k in $(seq "$RUNS"); do
	first a "lb$k" "$(invite a)" 127.0.0.1:0
	done_with "lb$k" spawned
done
ROWS+=("$(row loopback)")
stop a

if [ "$(id -u)" != 0 ] || ! command -v nft >/dev/null || ! command -v ip >/dev/null; then
	progress "not root or no ip/nft: the lab rows are left out"
else
	lab_up
	lab_public r 203.0.113.11
	lab_public r2 203.0.113.12
	lab_nat lan cone 203.0.113.31
	lab_host la lan
	lab_nat syma symmetric 203.0.113.32
	lab_host sa syma
	lab_nat conea cone 203.0.113.33 drop
	lab_host ca conea
	for k in $(seq "$RUNS"); do
		lab_nat "symb$k" symmetric "203.0.113.$((40 + k))"
		lab_host "sb$k" "symb$k"
		lab_nat "coneb$k" cone "203.0.113.$((60 + k))" drop
		lab_host "cb$k" "coneb$k"
		lab_host "lb$k" lan
	done

	# LAN: A and B behind one NAT, B joining from A's invite.
	progress "lan"
	lab_papo la new --name la >/dev/null
	lab_start la || die "la did not start"
	for k in $(seq "$RUNS"); do
		first la "lb$k" "$(lab_papo la invite)" "0.0.0.0:$LAB_PORT"
		done_with "lb$k" spawned
	done
	ROWS+=("$(row lan)")
	done_with la

	# Through R: both behind symmetric NATs.
	progress "via R"
	lab_papo r new --name r >/dev/null
	lab_start r || die "r did not start"
	inv=$(lab_papo r invite)
	lab_papo sa join "$inv" --name sa >/dev/null
	lab_start sa || die "sa did not start"
	until_true 30 status_is sa "$(m r) | .online" || die "sa never saw r online"
	for k in $(seq "$RUNS"); do
		first sa "sb$k" "$inv" "0.0.0.0:$LAB_PORT"
		done_with "sb$k" spawned
	done
	ROWS+=("$(row "via R (both behind symmetric NATs)")")
	done_with sa

	done_with r

	# Punched: both behind cone NATs dropping unsolicited inbound, in a
	# room of its own (at most 8 members, where punching is tried: each
	# run adds a member).
	progress "punched"
	lab_papo r2 new --name r2 >/dev/null
	lab_start r2 || die "r2 did not start"
	inv=$(lab_papo r2 invite)
	lab_papo ca join "$inv" --name ca >/dev/null
	lab_start ca || die "ca did not start"
	until_true 30 status_is ca "$(m r2) | .online" || die "ca never saw r2 online"
	: >"$T/punched"; : >"$T/dgrams"
	for k in $(seq "$RUNS"); do
		b=cb$k
		first ca "$b" "$inv" "0.0.0.0:$LAB_PORT"
		if until_true 20 status_is "$b" "$(m ca) | .path == \"punched\""; then
			awk -v d=$(($(now) - T0)) 'BEGIN { printf "%.0f\n", d / 1e6 }' >>"$T/punched"
			s1=$(lab_api "$b" /api/status | jq '.punch.datagrams_sent')
			s2=$(lab_api ca /api/status | jq '.punch.datagrams_sent')
			echo "$s1 $s2" >>"$T/dgrams.$k"
		else
			progress "run $k: no punched path in 20 s"
		fi
		done_with "$b" spawned
	done
	# Datagrams per punch: ca's counter grows run by run; b's is its own.
	prev=0
	for k in $(seq "$RUNS"); do
		[ -s "$T/dgrams.$k" ] || continue
		read -r s1 s2 <"$T/dgrams.$k"
		echo $((s1 + s2 - prev)) >>"$T/dgrams"
		prev=$s2
	done
	ROWS+=("$(row "punched (both behind cone NATs), first text through R" \
		"path \`punched\` on B: median $(median <"$T/punched") ms after serve ($(spread <"$T/punched") ms, $(wc -l <"$T/punched") of $RUNS); punch datagrams (57 bytes each) per run, both sides: median $(median <"$T/dgrams")")")
	done_with ca
	done_with r2
fi

echo "Run $START on $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg) at the end; $RUNS runs per row; papo $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
echo
echo "| path | \`papo serve\` to first message delivered | of which to /healthz | send answered | also |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
finish >&2
