#!/usr/bin/env bash
# reach.sh: from a new member's `papo serve` to its first message delivered,
# for each kind of path (docs/PERFORMANCE.md, "A new member's first
# message, by path"), printed as a markdown table on stdout (progress on
# stderr).  Needs root, iproute2 and nftables for the lab of
# tests/e2e/lab.sh (and coturn's turnserver for the relay); the loopback
# row runs without them.
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
#   relay     A and B each behind a symmetric NAT, no public member, a
#             TURN server (coturn, lab_turn) set on both (PAPO_TURN); B
#             joins from A's invite, made once A's relay is allocated, so
#             it has A's relayed address: the row also gives B's path to
#             A just after (status)
#
# Then, relayed against direct, in two rooms of two already connected
# (xa and xb each behind a symmetric NAT: path "relay"; pa and pb public:
# "direct"; the same TURN settings on all four):
#   - a message's time from B's POST /api/send to A's /api/events showing
#     it, the two rooms taking turns (40 each, 10 with --quick), medians
#     and spread, and the rtt_ms each side's status gives the other;
#   - the UDP packets and bytes per message (200 texts of 200 bytes, 50
#     with --quick, B to A), counted by nftables on each eth0 (B's, A's,
#     the TURN server's), and the mean size of the datagrams of 200 bytes
#     or more (a message, a receipt), which shows TURN's wrapping.
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

# lat A B TEXT: the ms from B's POST /api/send of TEXT to A's /api/events
# showing it.  The sender is a bash already running in B's namespace: it
# reads the clock ($EPOCHREALTIME) and writes the request on a connection
# it opened before, so no program's start is counted; the watcher on A
# gives the wall clock when the bytes came (bench_room watch).
lat() {
	local a=$1 b=$2 text=$3 w t0 t1
	lab_in "$a" "$BENCH/bench_room" watch "${URL[$a]}" "$text" 30 >"$T/lat-a" \
		2>>"$T/watch.err" &
	w=$!
	until_true 10 grep -q ready "$T/lat-a" || die "the watcher on $a did not start"
	t0=$(lab_in "$b" bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		body="{\"text\":\"$2\"}"
		req=$(printf "POST /api/send HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" "$1" "${#body}" "$body")
		t=$EPOCHREALTIME
		printf "%s" "$req" >&3
		answer=$(cat <&3)
		case $answer in *\"delivered\"*) echo "${t/./}000" ;; *) echo "$answer" >&2; exit 1 ;; esac' \
		_ "${URL[$b]##*:}" "$text" 2>"$T/say") || die "the send on $b failed: $(cat "$T/say")"
	wait "$w" || die "'$text' did not reach $a in 30 s"
	t1=$(tail -1 "$T/lat-a")
	awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f\n", d / 1e6 }'
}

# burst B N SIZE TAG: N texts of SIZE bytes from B, one POST /api/send
# after the other on one kept-alive connection (one curl), each answered
# once delivered.
burst() {
	local b=$1 n=$2 size=$3 tag=$4 k args=() pad
	pad=$(head -c "$size" /dev/zero | tr '\0' x)
	for k in $(seq "$n"); do
		[ "$k" = 1 ] || args+=(--next)
		args+=(-sS --max-time 30 -H 'Content-Type: application/json' \
			-d "{\"text\":\"$(printf '%s %04d %s' "$tag" "$k" "$pad" | head -c "$size")\"}" \
			"${URL[$b]}/api/send")
	done
	lab_in "$b" curl "${args[@]}" >"$T/burst" 2>&1 || die "the sends on $b failed: $(tail -3 "$T/burst")"
	[ "$(grep -o '"delivered"' "$T/burst" | wc -l)" = "$n" ] ||
		die "not every send on $b answered delivered: $(head -c 300 "$T/burst")"
}

# counted MIN NAME...: each one's "IN_PACKETS IN_BYTES OUT_PACKETS
# OUT_BYTES" (of datagrams of MIN bytes or more, with MIN), on one line.
counted() {
	local n min=$1; shift
	for n in "$@"; do printf '%s ' "$(lab_counted "$n" "$min")"; done
	echo
}

# per_dgram BEFORE AFTER: from two `counted` lines, the mean size of a
# datagram in, then out, for each name.
per_dgram() {
	awk -v b="$1" -v a="$2" 'BEGIN {
		split(b, x); split(a, y)
		for (k = 1; k <= length(y); k += 2) {
			p = y[k] - x[k]
			printf "%s%s", (k > 1 ? " " : ""),
				(p > 0 ? sprintf("%.1f", (y[k + 1] - x[k + 1]) / p) : "-")
		}
		print "" }'
}

# per_msg BEFORE AFTER N: from two `counted` lines, the packets and bytes
# per message of each column.
per_msg() {
	awk -v n="$3" -v b="$1" -v a="$2" 'BEGIN {
		split(b, x); split(a, y)
		for (k = 1; k <= length(y); k++)
			printf "%s%.1f", (k > 1 ? " " : ""), (y[k] - x[k]) / n
		print "" }'
}

# relay_rows: the rows of the relay (docs/PERFORMANCE.md, "The relay").
relay_rows() {
	local k inv relayed a b sample lr ld rtt c0 c1 b0 b1 t0 t1 msgs size
	if ! command -v turnserver >/dev/null; then
		progress "no turnserver (coturn): the relay rows are left out"
		return
	fi
	lab_turn turn 203.0.113.5
	export PAPO_TURN=turn:203.0.113.5:3478 PAPO_TURN_USER=u PAPO_TURN_PASS=p
	lab_nat symra symmetric 203.0.113.71
	lab_host ra symra
	for k in $(seq "$RUNS"); do
		lab_nat "symrb$k" symmetric "203.0.113.$((71 + k))"
		lab_host "rb$k" "symrb$k"
	done

	# A's relayed address in its invite: B's only way to A.
	progress "relay"
	lab_papo ra new --name ra >/dev/null
	lab_start ra || die "ra did not start"
	until_true 20 status_is ra '.me.turn.state == "allocated"' ||
		die "ra's relay is not allocated: $(shown ra)"
	relayed=$(jq -r .me.turn.relayed "$T/status-ra")
	inv=$(lab_papo ra invite)
	invite_addrs "$inv" | grep -qxF "$relayed" ||
		die "ra's invite lacks its relayed address $relayed: $(invite_addrs "$inv" | tr '\n' ' ')"
	: >"$T/paths"
	for k in $(seq "$RUNS"); do
		first ra "rb$k" "$inv" "0.0.0.0:$LAB_PORT"
		status_is "rb$k" "$(m ra)" || true
		jq -r "$(m ra) | .path" "$T/status-rb$k" >>"$T/paths"
		done_with "rb$k" spawned
	done
	ROWS+=("$(row "relay: A and B each behind a symmetric NAT, no public member, a TURN server; B from A's invite (A's relayed address)" \
		"B's path to A just after: $(sort "$T/paths" | uniq -c | awk '{ printf "%s%s %d×", (NR > 1 ? ", " : ""), $2, $1 }')")")
	done_with ra

	# A connected room over the relay (xa, xb behind symmetric NATs)
	# and one over a direct path (pa, pb public), the same settings.
	progress "relay against direct: added latency, bytes"
	lab_nat symxa symmetric 203.0.113.81
	lab_host xa symxa
	lab_nat symxb symmetric 203.0.113.82
	lab_host xb symxb
	lab_public pa 203.0.113.83
	lab_public pb 203.0.113.84
	for a in xa pa; do
		b=${a/a/b}
		lab_papo "$a" new --name "$a" >/dev/null
		lab_start "$a" || die "$a did not start"
		until_true 20 status_is "$a" '.me.turn.state == "allocated"' ||
			die "$a's relay is not allocated: $(shown "$a")"
		lab_papo "$b" join "$(lab_papo "$a" invite)" --name "$b" >/dev/null
		lab_start "$b" || die "$b did not start"
	done
	until_true 30 status_is xb "$(m xa) | .path == \"relay\"" ||
		die "xb does not show xa relayed: $(shown xb)"
	until_true 30 status_is pb "$(m pa) | .path == \"direct\"" ||
		die "pb does not show pa direct: $(shown pb)"
	# Settled: a few messages each way, unmeasured.
	for k in 1 2 3; do
		lat xa xb "warm-xb-$k" >/dev/null
		lat pa pb "warm-pb-$k" >/dev/null
	done
	: >"$T/lat-relay"; : >"$T/lat-direct"
	sample=$([ "$QUICK" = 1 ] && echo 10 || echo 40)
	for k in $(seq "$sample"); do
		lat xa xb "relayed-$k" >>"$T/lat-relay"
		lat pa pb "direct-$k" >>"$T/lat-direct"
	done
	for a in xa pa; do
		b=${a/a/b}
		status_is "$b" true || die "no status from $b"
		rtt="${rtt:-}$(jq -r "$(m "$a") | \"\(.path) \(.rtt_ms)\"" "$T/status-$b") "
		status_is "$a" true || die "no status from $a"
		rtt="$rtt$(jq -r "$(m "$b") | \"\(.path) \(.rtt_ms)\"" "$T/status-$a") "
	done
	read -r lr _ <<<"$(median <"$T/lat-relay")"
	read -r ld _ <<<"$(median <"$T/lat-direct")"
	set -- $rtt
	ROWS2+=("| B to A in a connected room, relay against direct (alternated, $sample each) | relayed **median $lr ms** ($(spread <"$T/lat-relay") ms); direct **median $ld ms** ($(spread <"$T/lat-direct") ms); added by the relay: $(awk -v r="$lr" -v d="$ld" 'BEGIN { printf "%.2f", r - d }') ms | \`rtt_ms\` in status: relayed xb→xa $2 ($1), xa→xb $4; direct pb→pa $6 ($5), pa→pb $8 |")

	# Bytes: N texts of a fixed size, B to A; counters on each eth0
	# (xb, turn, xa; pb, pa).
	msgs=$([ "$QUICK" = 1 ] && echo 50 || echo 200)
	size=200
	# Datagrams of 200 bytes or more carry a message or its receipt;
	# smaller ones are QUIC's ACKs, PINGs, TURN's keepalives.
	for a in xb turn xa pb pa; do lab_count "$a"; lab_count "$a" 200; done
	for a in relay direct; do
		case $a in
		relay) set -- xb turn xa ;;
		direct) set -- pb pa ;;
		esac
		c0=$(counted "" "$@") b0=$(counted 200 "$@")
		t0=$(now)
		burst "${1}" "$msgs" "$size" "$a bytes"
		t1=$(now)
		c1=$(counted "" "$@") b1=$(counted 200 "$@")
		per_msg "$c0" "$c1" "$msgs" >"$T/bytes-$a"
		per_dgram "$b0" "$b1" >"$T/big-$a"
		echo "$(( (t1 - t0) / 1000000 ))" >"$T/burst-ms-$a"
	done
	echo "$msgs" >"$T/burst-n"; echo "$size" >"$T/burst-size"
	bytes_rows
	for a in xa xb pa pb; do done_with "$a"; done
	unset PAPO_TURN PAPO_TURN_USER PAPO_TURN_PASS
}

# bytes_rows: the bytes table from $T/bytes-relay (xb, turn, xa: in
# packets, in bytes, out packets, out bytes each) and $T/big-relay (xb,
# turn, xa: the mean size in, out of datagrams of 200 bytes or more), and
# $T/bytes-direct, $T/big-direct (pb, pa).
bytes_rows() {
	local r d rb db
	read -r -a r <"$T/bytes-relay"
	read -r -a d <"$T/bytes-direct"
	read -r -a rb <"$T/big-relay"
	read -r -a db <"$T/big-direct"
	both() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
	BYTES=(
	"| direct (pb → pa, public) | B's eth0 | ${d[2]} | ${d[3]} | ${d[0]} | ${d[1]} | $(both "${d[1]}" "${d[3]}") | ${db[1]} out, ${db[0]} in |"
	"| relayed (xb → turn → xa) | B's eth0 (B's leg) | ${r[2]} | ${r[3]} | ${r[0]} | ${r[1]} | $(both "${r[1]}" "${r[3]}") | ${rb[1]} out, ${rb[0]} in |"
	"| relayed | A's eth0 (A's leg) | ${r[10]} | ${r[11]} | ${r[8]} | ${r[9]} | $(both "${r[9]}" "${r[11]}") | ${rb[5]} out, ${rb[4]} in |"
	"| relayed | TURN server's eth0 (both legs) | ${r[6]} | ${r[7]} | ${r[4]} | ${r[5]} | $(both "${r[5]}" "${r[7]}") | ${rb[3]} out, ${rb[2]} in |"
	)
}

ROWS=() ROWS2=() BYTES=()
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

	relay_rows
fi

echo "Run $START on $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg) at the end; $RUNS runs per row; papo $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
echo
echo "| path | \`papo serve\` to first message delivered | of which to /healthz | send answered | also |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
if [ ${#ROWS2[@]} -gt 0 ]; then
	echo
	echo "| relay against direct | B's text delivered at A | also |"
	echo "|---|---|---|"
	printf '%s\n' "${ROWS2[@]}"
	echo
	echo "Bytes per message: $(cat "$T/burst-n") texts of $(cat "$T/burst-size") bytes, B to A, one \`POST /api/send\` after the other (each answered delivered; $(cat "$T/burst-ms-relay") ms relayed, $(cat "$T/burst-ms-direct") ms direct), UDP as IP lengths (all that went through each eth0 meanwhile):"
	echo
	echo "| path | counted on | packets out | bytes out | packets in | bytes in | bytes, both ways | mean size of a datagram of 200 bytes or more (a message, a receipt) |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${BYTES[@]}"
fi
# No checks here (it fails by die): finish only looks for sanitizer
# reports, and would fail for want of a passed check.
finish >&2 || [ "$failed" = 0 ]
