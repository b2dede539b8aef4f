#!/usr/bin/env bash
# files_lab.sh: a shared file's throughput across the lab of
# tests/e2e/lab.sh (docs/PERFORMANCE.md, "Files"), where tests/bench/files.sh
# measures loopback.  Prints markdown on stdout, progress on stderr.
# Needs root, iproute2, nftables, python3 and coturn's turnserver (for the
# relay).
#
#   bash tests/bench/files_lab.sh [--quick]
#
# PAPO (default build/papo); LAB_IMPAIR (default tests/impair beside it);
# SIZE_MB (default 100, --quick 20); RUNS (default 3); DELAY_MS (40) and
# LOSS (1, in %); RELAY_LINKS (default "clean impaired"): the links the
# relay's rows are measured over; CURL_CCS (default "bbr cubic"): the TCP
# congestion controls curl's file is sent with, one curl each (papo's
# QUIC, ngtcp2's default, is CUBIC).
#
#  1. Impaired: da and db public (203.0.113.21, .22), da's link to the
#     internet router through tests/tools/impair: DELAY_MS one way in each
#     direction (so the round trip is twice that) and LOSS % of the frames
#     lost in each direction.  Each run: da adds a SIZE_MB MiB file (POST
#     /api/blobs) and names it in a message; once db shows it named, db asks
#     for it (POST /api/blobs/REF/fetch) and polls its state every 20 ms
#     until "here", all from one bash inside db's namespace (its clock);
#     then curl in db's namespace fetches the same file from a python3
#     http.server in da's namespace over the same link (its eth0 sending
#     frames of the MTU, see below), once with each of CURL_CCS; db's copy
#     is compared with the file.
#  2. Relay: xa and xb each behind a symmetric NAT, no public member,
#     coturn on 203.0.113.5 set on both (PAPO_TURN): their only path is
#     the relay (checked: xb's status shows xa with path "relay").  The
#     same fetch, over clean links, then with the impairment above on
#     xa's NAT's link.  No curl goes through a TURN relay, so the
#     comparison given is the same fetch between two public members (pa,
#     pb) over clean links (direct), and curl between them.
#
# Each fetch row gives the CPU seconds the two daemons (and the forwarder,
# and the relay) spent during it, from /proc: what tells a CPU-bound fetch
# from one held by the network.  Figures, never pass/fail on time: a run
# fails only when something did not work (a fetch that never completes:
# its last state is printed).
set -u
. "$(dirname "$0")/common.sh"
bench_args files_lab.sh "$@"
bench_need
LAB_IMPAIR=${LAB_IMPAIR:-$(dirname "$PAPO")/tests/impair}
SIZE_MB=${SIZE_MB:-$([ "$QUICK" = 1 ] && echo 20 || echo 100)}
RUNS=${RUNS:-3}
DELAY_MS=${DELAY_MS:-40}
LOSS=${LOSS:-1}
RELAY_LINKS=${RELAY_LINKS:-clean impaired}
CURL_CCS=${CURL_CCS:-bbr cubic}
STALL_S=${STALL_S:-60}          # no new chunk for this long: broken
unset PAPO_TOKEN PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN \
	PAPO_ADVERTISE PAPO_PROTOCOL PAPO_TURN PAPO_TURN_USER PAPO_TURN_PASS
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lab.sh"
START=$(date -u '+%Y-%m-%d %H:%M UTC')
HZ=$(getconf CLK_TCK)
HTTP_PORT=8080
progress() { echo "files_lab.sh: $*" >&2; }
die() { echo "files_lab.sh: $*" >&2; exit 1; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-";
	else if (NR % 2) print v[(NR + 1) / 2];
	else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rate() { awk -v mb="$SIZE_MB" -v s="$1" 'BEGIN { printf "%.2f", mb / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
[ -x "$LAB_IMPAIR" ] || die "$LAB_IMPAIR is missing: build first (cmake --build build --target impair)"
command -v python3 >/dev/null || die "no python3"
[ "$(id -u)" = 0 ] || die "the lab needs root"

# cpu PID...: the CPU seconds (user + system) each has spent so far, on
# one line; "-" for one that is gone.
cpu() {
	local p
	for p in "$@"; do
		if [ -r "/proc/$p/stat" ]; then
			awk -v hz="$HZ" '{ sub(/.*\) /, ""); printf "%.2f ", ($12 + $13) / hz }' "/proc/$p/stat"
		else
			printf -- '- '
		fi
	done
	echo
}
# spent BEFORE AFTER: the difference of two `cpu` lines, " / " between.
spent() {
	awk -v b="$1" -v a="$2" 'BEGIN { n = split(b, x); split(a, y)
		for (k = 1; k <= n; k++)
			printf "%s%s", (k > 1 ? " / " : ""),
				(x[k] == "-" || y[k] == "-" ? "-" : sprintf("%.1f", y[k] - x[k]))
		print "" }'
}

# serve_http NAME: python3's http.server on 0.0.0.0:$HTTP_PORT in NAME's
# namespace, serving $T/files; a request's "?cc=ALGO" sets the TCP
# congestion control of its connection (TCP_CONGESTION: a namespace's
# default may only be one of tcp_allowed_congestion_control, a socket's
# anything loaded, for root).
serve_http() {
	(ip netns exec "${LABNS[$1]}" python3 - "$HTTP_PORT" "$T/files" \
		>"$T/http-$1.log" 2>&1 <<-'EOF' &
		import functools, http.server, socket, sys, urllib.parse
		class H(http.server.SimpleHTTPRequestHandler):
		    def do_GET(self):
		        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
		        if "cc" in q:
		            self.connection.setsockopt(socket.IPPROTO_TCP,
		                socket.TCP_CONGESTION, q["cc"][0].encode())
		        super().do_GET()
		    def log_message(self, *a):
		        pass
		h = functools.partial(H, directory=sys.argv[2])
		http.server.ThreadingHTTPServer(("0.0.0.0", int(sys.argv[1])), h).serve_forever()
	EOF
	echo $! >"$T/http-$1.pid")
	until_true 10 lab_in "$1" curl -sf -o /dev/null "http://127.0.0.1:$HTTP_PORT/" ||
		die "http.server in $1 did not start: $(tail -3 "$T/http-$1.log")"
}

# unserve_http NAME: ends it.
unserve_http() {
	kill -TERM "$(cat "$T/http-$1.pid")" 2>/dev/null
	rm -f "$T/http-$1.pid"
}

# upload NAME: adds $T/files/f.bin at NAME and names it in a message;
# prints the reference.
upload() {
	local n=$1 ref
	ref=$(lab_api "$n" "/api/blobs?name=f.bin" -X POST --data-binary @"$T/files/f.bin" |
		jq -r .ref) || return 1
	[ -n "$ref" ] && [ "$ref" != null ] || return 1
	lab_api "$n" /api/send -H 'Content-Type: application/json' \
		-d "{\"text\":\"file $ref\",\"files\":[\"$ref\"]}" >/dev/null || return 1
	echo "$ref"
}

# fetch_timed NAME REF: NAME fetches REF; "T0 T1" (seconds since the
# epoch, from NAME's namespace: the POST, then the state first "here").
# Progress every 5 s on stderr; fails, with the last state, if no chunk
# came for $STALL_S seconds or the state is "failed".
fetch_timed() {
	lab_in "$1" bash -c '
		u=$1 ref=$2 stall=$3
		t0=$EPOCHREALTIME
		curl -sS --max-time 10 -X POST -H "Content-Type: application/json" \
			-d "{}" "$u/api/blobs/$ref/fetch" >/dev/null || exit 1
		last=-1 moved=$SECONDS said=$SECONDS
		while :; do
			s=$(curl -sS --max-time 10 "$u/api/blobs/$ref/state")
			read -r st have all <<<"$(jq -r "\"\(.state) \(.chunks_have) \(.chunks)\"" <<<"$s")"
			[ "$st" = here ] && break
			case $st in failed) echo "failed: $s" >&2; exit 1 ;; esac
			if [ "$have" != "$last" ]; then last=$have moved=$SECONDS; fi
			if [ $((SECONDS - moved)) -ge "$stall" ]; then
				echo "no chunk for $stall s: $s" >&2; exit 1
			fi
			if [ $((SECONDS - said)) -ge 5 ]; then
				echo "files_lab.sh:   $st $have/$all chunks" >&2; said=$SECONDS
			fi
			sleep 0.02
		done
		echo "$t0 $EPOCHREALTIME"' _ "${URL[$1]}" "$2" "$STALL_S"
}

# verify NAME REF: NAME's copy of REF is the file.
verify() {
	lab_api "$1" "/api/blobs/$2" -o "$T/got" || return 1
	cmp -s "$T/got" "$T/files/f.bin"
	local rc=$?
	rm -f "$T/got"
	return $rc
}

# curl_timed FROM TO_IP CC: curl in FROM's namespace of f.bin from the
# http.server at TO_IP, sent with congestion control CC; "SECONDS BYTES".
curl_timed() {
	lab_in "$1" curl -sS --max-time 1200 -o /dev/null \
		-w '%{time_total} %{size_download}\n' "http://$2:$HTTP_PORT/f.bin?cc=$3"
}

# runs LABEL FROM TO PIDS [CURL_IP]: RUNS runs of FROM sharing and TO
# fetching, then (with CURL_IP) curl in TO's namespace from FROM's
# http.server, once for each congestion control of $CURL_CCS (set on
# the sender's socket); rows into $T/rows.  PIDS: the
# processes whose CPU is counted during the fetch.
runs() {
	local label=$1 from=$2 to=$3 pids=$4 ip=${5:-} k ref t c0 c1 cu cc
	local s0 s1 bytes cells
	: >"$T/fe.s"
	for cc in $CURL_CCS; do : >"$T/cu-$cc.s"; done
	for k in $(seq "$RUNS"); do
		progress "$label, run $k: share at $from"
		ref=$(upload "$from") || die "$label: adding the file at $from failed"
		until_true 30 test "$(lab_api "$to" "/api/blobs/$ref/state" | jq -r .state)" = named ||
			die "$label: $to never showed $ref named: $(lab_api "$to" "/api/blobs/$ref/state")"
		s0=$(lab_api "$from" /api/status | jq -r .files.served)
		progress "$label, run $k: fetch at $to"
		c0=$(cpu $pids)
		t=$(fetch_timed "$to" "$ref") || die "$label, run $k: the fetch at $to did not complete (ref $ref)"
		c1=$(cpu $pids)
		s1=$(lab_api "$from" /api/status | jq -r .files.served)
		verify "$to" "$ref" || die "$label, run $k: $to's copy differs from the file"
		t=$(awk '{ printf "%.3f", $2 - $1 }' <<<"$t")
		echo "$t" >>"$T/fe.s"
		cells=""
		for cc in $CURL_CCS; do
			if [ -z "$ip" ]; then cells="$cells none | | |"; continue; fi
			if ! kill -0 "$(cat "$T/http-$from.pid")" 2>/dev/null; then
				progress "http.server in $from had ended ($(tail -3 "$T/http-$from.log" | tr '\n' ' ')): started again"
				NOTES+=("$label, run $k: the http.server had ended, started again")
				serve_http "$from"
			fi
			progress "$label, run $k: curl ($cc)"
			read -r cu bytes <<<"$(curl_timed "$to" "$ip" "$cc")"
			[ "${bytes:-}" = $((SIZE_MB * 1048576)) ] ||
				die "$label, run $k: curl ($cc) got ${bytes:-nothing} bytes"
			cu=$(awk -v s="$cu" 'BEGIN { printf "%.3f", s }')
			echo "$cu" >>"$T/cu-$cc.s"
			cells="$cells $cu | $(rate "$cu") | $(ratio "$t" "$cu") |"
		done
		echo "| $label | $k | $t | $(rate "$t") |$cells $(spent "$c0" "$c1") | $(ratio "$((s1 - s0))" "$((SIZE_MB * 1048576))") |" >>"$T/rows"
		progress "$(tail -1 "$T/rows")"
	done
	t=$(median <"$T/fe.s")
	cells=""
	for cc in $CURL_CCS; do
		if [ -z "$ip" ]; then cells="$cells none | | |"; continue; fi
		cu=$(median <"$T/cu-$cc.s")
		cells="$cells **$cu** | **$(rate "$cu")** | **$(ratio "$t" "$cu")** |"
	done
	echo "| **$label, median** | | **$t** | **$(rate "$t")** |$cells | |" >>"$T/rows"
}

# pair A B: A makes a room, B joins; both serve; B sees A online with
# the jq path test PATH.
pair() {
	local a=$1 b=$2 path=$3
	lab_papo "$a" new --name "$a" >/dev/null || die "papo new on $a failed"
	lab_start "$a" || die "$a did not start"
	if [ -n "${PAPO_TURN:-}" ]; then
		until_true 20 status_is "$a" '.me.turn.state == "allocated"' ||
			die "$a's relay is not allocated: $(shown "$a")"
	fi
	lab_papo "$b" join "$(lab_papo "$a" invite)" --name "$b" >/dev/null ||
		die "papo join on $b failed"
	lab_start "$b" || die "$b did not start"
	until_true 60 status_is "$b" "$(m "$a") | .online and ($path)" ||
		die "$b does not see $a online ($path): $(shown "$b")"
	until_true 30 status_is "$a" "$(m "$b") | .online" ||
		die "$a does not see $b online: $(shown "$a")"
}
rtt_of() { status_is "$1" true && jq -r "$(m "$2") | \"\(.path) \(.rtt_ms)\"" "$T/status-$1"; }
pid_of() { cat "$T/$1.pid"; }
# impair_counts NAME: the forwarder's last line of counts, shortened.
impair_counts() { grep 'impair:' "$T/impair-$1.log" | tail -2 | tr '\n' ' '; }

mkdir -p "$T/files"
progress "making a ${SIZE_MB} MiB file"
head -c "${SIZE_MB}M" /dev/urandom >"$T/files/f.bin"
: >"$T/rows"; : >"$T/medians"; NOTES=()

lab_up

# 1. Two public members, a's link impaired.
progress "impaired: ${DELAY_MS} ms each way, ${LOSS} % loss each way, on da's link"
lab_public da 203.0.113.21
lab_public db 203.0.113.22
lab_impair da "$LOSS" "$DELAY_MS" 0 0 both
# TCP hands the veth segments of up to 64 KiB (GSO) that a wire would
# carry as frames of the MTU; the forwarder cannot send a frame larger
# than the MTU and drops them (its "not sent"), which holds curl to a few
# KiB/s even with no loss.  One segment per frame, as on a wire.
for n in da db; do
	lab_net ip -n "${LABNS[$n]}" link set eth0 gso_max_segs 1
done
pair da db '.path == "direct"'
serve_http da
CPU_PIDS="$(pid_of da) $(pid_of db) $(cat "$T/impair-da.pid") $(cat "$T/http-da.pid")"
runs "impaired, direct" da db "$CPU_PIDS" 203.0.113.21
NOTES+=("impaired, direct: rtt_ms db→da $(rtt_of db da), da→db $(rtt_of da db); CPU columns: da / db / forwarder / http.server")
unserve_http da
stop db; stop da
lab_unimpair da
NOTES+=("forwarder on da's link: $(impair_counts da)")

# 2. Through the relay.
if ! command -v turnserver >/dev/null; then
	progress "no turnserver (coturn): the relay rows are left out"
else
	lab_turn turn 203.0.113.5
	export PAPO_TURN=turn:203.0.113.5:3478 PAPO_TURN_USER=u PAPO_TURN_PASS=p
	lab_nat symxa symmetric 203.0.113.81
	lab_host xa symxa
	lab_nat symxb symmetric 203.0.113.82
	lab_host xb symxb
	pair xa xb '.path == "relay"'
	CPU_PIDS="$(pid_of xa) $(pid_of xb) $(pid_of turn)"
	for link in $RELAY_LINKS; do
		case $link in
		clean)
			progress "relay, clean links"
			runs "relay, clean links" xa xb "$CPU_PIDS"
			NOTES+=("relay, clean links: rtt_ms xb→xa $(rtt_of xb xa), xa→xb $(rtt_of xa xb); CPU columns: xa / xb / turnserver")
			;;
		impaired)
			progress "relay, xa's NAT's link impaired"
			lab_impair symxa "$LOSS" "$DELAY_MS" 0 0 both
			until_true 30 status_is xb "$(m xa) | .online and .path == \"relay\"" ||
				die "xb lost xa once impaired: $(shown xb)"
			runs "relay, impaired" xa xb "$CPU_PIDS $(cat "$T/impair-symxa.pid")"
			NOTES+=("relay, impaired (${DELAY_MS} ms each way, ${LOSS} % loss each way, on xa's NAT's link): rtt_ms xb→xa $(rtt_of xb xa), xa→xb $(rtt_of xa xb); CPU columns: xa / xb / turnserver / forwarder")
			lab_unimpair symxa
			NOTES+=("forwarder on xa's NAT's link: $(impair_counts symxa)")
			;;
		*) die "RELAY_LINKS: '$link' is neither clean nor impaired" ;;
		esac
	done
	stop xb; stop xa
	unset PAPO_TURN PAPO_TURN_USER PAPO_TURN_PASS

	# The comparison: direct between public members, clean links.
	progress "direct, clean links (the relay's comparison)"
	lab_public pa 203.0.113.83
	lab_public pb 203.0.113.84
	pair pa pb '.path == "direct"'
	serve_http pa
	CPU_PIDS="$(pid_of pa) $(pid_of pb) $(cat "$T/http-pa.pid")"
	runs "direct, clean links" pa pb "$CPU_PIDS" 203.0.113.83
	NOTES+=("direct, clean links: rtt_ms pb→pa $(rtt_of pb pa); CPU columns: pa / pb / http.server")
	unserve_http pa
	stop pb; stop pa
fi

echo "## Files across the lab, $START"
echo
echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg) at the end; papo $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); a ${SIZE_MB} MiB file of random bytes, $RUNS runs; MiB/s = MiB per second; papo's QUIC: ngtcp2 0.12, CUBIC (its default); curl's TCP: the congestion control named, set at the sender, with one TCP segment per frame (gso_max_segs 1) on the impaired link."
echo
echo "Impaired link: tests/tools/impair on the sender's link to the lab's router, ${DELAY_MS} ms one way in each direction (round trip $((2 * DELAY_MS)) ms added) and ${LOSS} % of the frames lost in each direction."
echo
h="| path | run | papo fetch (s) | MiB/s |" h2="|---|---:|---:|---:|"
for cc in $CURL_CCS; do
	h="$h curl, $cc (s) | MiB/s | fetch / curl |" h2="$h2---:|---:|---:|"
done
echo "$h CPU s during the fetch | served by the sharer / file |"
echo "$h2---|---:|"
cat "$T/rows"
echo
printf -- '- %s\n' "${NOTES[@]}"
stop turn 2>/dev/null || true
