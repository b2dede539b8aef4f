#!/usr/bin/env bash
# tls.sh: what HTTPS costs (docs/PERFORMANCE.md, "HTTPS against HTTP"),
# printed as a markdown table on stdout (progress on stderr).
#
#   bash tests/bench/tls.sh [--quick]
#
# Two pairs of daemons on 127.0.0.1 in one run: one member serving plain
# HTTP, one serving HTTPS with a certificate of a test CA (ECDSA P-256,
# as `tailscale cert` and certbot give by default now), each with a
# peer.  bench_mcp rtt runs against each in turn, twice, alternating (so
# that a burst of load on the shared machine falls on both): initialize
# on a new connection per call (TCP, the TLS handshake, the request) and
# tools/call status on a kept-alive connection.  Then each daemon's RSS
# idle, and bench_streams api with 1,000 GET /api/events streams on each.
# Figures, never pass/fail on time: a run fails only when a benchmark
# could not run.
set -u
export PAPO_LAN=off PAPO_PORTMAP=off
. "$(dirname "$0")/common.sh"
bench_args tls.sh "$@"
bench_need bench_mcp bench_streams
for tool in curl jq openssl; do
	command -v $tool >/dev/null || { echo "tls.sh: needs $tool" >&2; exit 1; }
done
unset PAPO_TOKEN PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN \
	PAPO_TLS PAPO_TLS_CERT PAPO_TLS_KEY PAPO_PUBLIC_URL PAPO_CORS_ORIGINS
. "$ROOT/tests/e2e/lib.sh"
ulimit -n "$(ulimit -Hn)" 2>/dev/null

if [ "$QUICK" = 1 ]; then
	CALLS=200 BLOCKS=5 IDLE=5 STREAM_IDLE=5 FANOUTS=3
else
	CALLS=1000 BLOCKS=10 IDLE=30 STREAM_IDLE=20 FANOUTS=5
fi
STREAMS=1000
ROWS=()
START=$(date -u '+%Y-%m-%d %H:%M UTC')
say_progress() { echo "tls.sh: $*" >&2; }
die() { echo "tls.sh: $*" >&2; exit 1; }
load() { awk '{ printf "%s / %s / %s", $1, $2, $3 }' /proc/loadavg; }
ms() {
	awk -v v="$1" 'BEGIN {
		if (v >= 1000) printf "%.2f s", v / 1000
		else if (v >= 10) printf "%.1f ms", v
		else printf "%.2f ms", v }'
}
row() { ROWS+=("| $1 | $2 | $3 | $4 | \`$5\` |"); say_progress "$1: $2 / $3"; }
fig() { # fig FILE LABEL: "median M (spread A–B)"
	local l; l=$(grep -F -- "$2	" "$1" | head -1)
	[ -n "$l" ] || die "no figure '$2' in $1: $(cat "$1")"
	IFS=$'\t' read -r _ med p99 lo hi n <<<"$l"
	echo "median $(ms "$med") (p99 $(ms "$p99"), spread $(ms "$lo")–$(ms "$hi"), n = $n)"
}
val() {
	local l; l=$(grep -F -- "$2	" "$1" | head -1)
	[ -n "$l" ] || die "no value '$2' in $1: $(cat "$1")"
	cut -f2 <<<"$l"
}
pid_of() { cat "$T/$1.pid"; }
rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' /proc/"$1"/status; }

# The test CA and its certificate for 127.0.0.1.
C=$T/certs
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=papo-bench-ca -keyout "$C/ca.key" -out "$C/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=papo-bench \
	-keyout "$C/key.pem" -out "$C/req.csr" 2>/dev/null
openssl x509 -req -in "$C/req.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
	-days 2 -out "$C/cert.pem" \
	-extfile <(printf 'subjectAltName=IP:127.0.0.1\n') 2>/dev/null ||
	die "openssl could not make the test certificate"
export PAPO_BENCH_CA=$C/ca.pem CURL_CA_BUNDLE=$C/ca.pem   # bench programs; lib.sh's curl
tls() { PAPO_TLS_CERT=$C/cert.pem PAPO_TLS_KEY=$C/key.pem "$@"; }

# pair A B [tls]: A (over HTTPS with tls) and B, a peer of A's room.
pair() {
	if [ "${3:-}" = tls ]; then tls start "$1" || die "$1 did not start"
	else start "$1" || die "$1 did not start"; fi
	join "$2" "$(invite "$1")"
	start "$2" || die "$2 did not start"
	until_true 30 online "$1" "$2" || die "$1 and $2 did not meet"
}
say_progress "papo: $PAPO"
pair plain plainpeer
pair secure securepeer tls
case "${URL[secure]}" in https://*) ;; *) die "the TLS daemon serves ${URL[secure]}" ;; esac

# 1. Round trips, alternating.
L=$(load)
for round in 1 2; do
	for d in plain secure; do
		say_progress "bench_mcp rtt on $d, round $round"
		"$BENCH/bench_mcp" rtt "${URL[$d]}/mcp" "$CALLS" "$BLOCKS" >"$T/rtt.$d.$round" ||
			die "bench_mcp rtt on $d failed"
	done
done
for round in 1 2; do
	row "MCP \`initialize\` on a new connection per call (round $round)" \
		"$(fig "$T/rtt.plain.$round" "initialize, new connection per call")" \
		"$(fig "$T/rtt.secure.$round" "initialize, new connection per call")" "$L" \
		"PAPO_BENCH_CA=ca.pem $BENCH/bench_mcp rtt URL/mcp $CALLS $BLOCKS"
	row "MCP \`tools/call status\`, kept-alive connection (round $round)" \
		"$(fig "$T/rtt.plain.$round" "tools/call status, kept-alive connection")" \
		"$(fig "$T/rtt.secure.$round" "tools/call status, kept-alive connection")" "$L" \
		"PAPO_BENCH_CA=ca.pem $BENCH/bench_mcp rtt URL/mcp $CALLS $BLOCKS"
done

# 2. Idle RSS, after IDLE s.
say_progress "idling $IDLE s"
sleep "$IDLE"
row "idle \`papo serve\` with one peer: RSS after the round trips and ${IDLE} s idle" \
	"$(rss_mb "$(pid_of plain)") MB" "$(rss_mb "$(pid_of secure)") MB" "$(load)" \
	"grep VmRSS /proc/PID/status"
stop_all
rm -rf "${T:?}"/plain* "${T:?}"/secure*
unset 'URL[plain]' 'URL[plainpeer]' 'URL[secure]' 'URL[securepeer]'
unset 'QPORT[plain]' 'QPORT[plainpeer]' 'QPORT[secure]' 'QPORT[securepeer]'

# 3. 1,000 event streams on each, one after the other (fresh daemons).
for d in plain secure; do
	if [ $d = secure ]; then pair s1 s2 tls; else pair s1 s2; fi
	L=$(load)
	"$BENCH/bench_streams" api "${URL[s1]}" "${URL[s2]}" "$(pid_of s1)" $STREAMS \
		$STREAM_IDLE $FANOUTS >"$T/streams.$d" || die "bench_streams on $d failed"
	stop_all
	rm -rf "${T:?}"/s1* "${T:?}"/s2*
	unset 'URL[s1]' 'URL[s2]' 'QPORT[s1]' 'QPORT[s2]'
done
s() { echo "$(val "$T/streams.$1" "daemon RSS before the streams") → $(val "$T/streams.$1" "daemon RSS with the streams open") MB"; }
row "$STREAMS GET /api/events streams: daemon RSS (before → with them open)" \
	"$(s plain)" "$(s secure)" "$L" \
	"PAPO_BENCH_CA=ca.pem $BENCH/bench_streams api URL OTHER PID $STREAMS $STREAM_IDLE $FANOUTS"
c() { echo "$(val "$T/streams.$1" "daemon CPU while idle") %"; }
row "$STREAMS GET /api/events streams: daemon CPU over ${STREAM_IDLE} s idle" \
	"$(c plain)" "$(c secure)" "$L" "(same run)"
f() { local l; l=$(fig "$T/streams.$1" "fan-out: to every stream"); echo "${l%% (*}"; }
row "$STREAMS GET /api/events streams: one message to every stream" \
	"$(f plain)" "$(f secure)" "$L" "(same run)"

echo "Run $START – $(date -u '+%H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$([ "$QUICK" = 1 ] && echo ', --quick')."
echo
echo "| Measure | HTTP | HTTPS | Load (1/5/15 min) | Command |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
