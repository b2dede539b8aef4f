#!/usr/bin/env bash
# private.sh: a private message against a room message of the same
# text (docs/PERFORMANCE.md, "Private messages").  First the library's
# figures (tests/bench/private: bytes of the sealed frame, CPU to make
# one and to take one in); then a room of 8 real daemons on loopback
# (PAPO_LAN=off, PAPO_PORTMAP=off), each joining by the previous one's
# invite, where m1 sends MESSAGES room messages and MESSAGES private
# ones to m2, interleaved (bench_room pair), each timed from the send to
# m2's /api/events having it; medians and p99 side by side.
#
# Usage: private.sh BUILD_DIR [MESSAGES]
set -eu
B=${1:?usage: private.sh BUILD_DIR [MESSAGES]}
MESSAGES=${2:-100}
SIZE=8
PAPO=$(realpath "$B/papo")
T=$(mktemp -d /tmp/papo-bench-private.XXXXXX)
export PAPO_LAN=off PAPO_PORTMAP=off PAPO_RATE=1000000/s
unset PAPO_TOKEN PAPO_ROOM
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$T"' EXIT

serve() { # serve NAME: papo serve on loopback as NAME, waited for
	PAPO_HOME=$T/$1 "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
		--name "$1" >"$T/$1.log" 2>&1 &
	pids+=("$!")
	for _ in $(seq 200); do [ -s "$T/$1/serve.json" ] && return; sleep 0.1; done
	echo "$1 did not start" >&2; exit 1
}
url() { jq -r .http "$T/$1/serve.json"; }
online_count() { curl -sS "$(url "$1")/api/status" | jq '[.members[] | select(.online)] | length'; }

echo "== $(date -u +%F) on $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$B/tests/bench/private"

PAPO_HOME=$T/m1 "$PAPO" new --name m1 >/dev/null
serve m1
for i in $(seq 2 $SIZE); do
	PAPO_HOME=$T/m$i "$PAPO" join "$(jq -r .invite "$T/m$((i - 1))/serve.json")" \
		--name "m$i" >/dev/null
	serve "m$i"
done
for _ in $(seq 600); do
	ok=1
	for i in $(seq 1 $SIZE); do
		[ "$(online_count "m$i")" = $((SIZE - 1)) ] || { ok=0; break; }
	done
	[ $ok = 1 ] && break
	sleep 0.2
done
[ $ok = 1 ] || { echo "the room of $SIZE did not come online" >&2; exit 1; }
urls=()
for i in $(seq 1 $SIZE); do urls+=("$(url "m$i")"); done
echo "== a room of $SIZE: $MESSAGES room and $MESSAGES private messages, m1 to m2, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$B/tests/bench/bench_room" pair "$MESSAGES" m2 "${urls[@]}"
