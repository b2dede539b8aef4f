#!/usr/bin/env bash
# history.sh: a large history asked in one request (docs/RELIABILITY.md,
# "History order"): 500 messages of 48,000 characters, then GET
# /api/history?limit=500 on ana while bo sends ana a message; prints the
# request's time and size, and bo's send's time to delivered, with the
# same send alone first.  Usage: PAPO=path bash tests/bench/history.sh
# [--quick] (--quick: 100 messages, one run).
. "$(dirname "$0")/common.sh"
bench_args history.sh "$@"
bench_need
. "$ROOT/tests/e2e/lib.sh"
N=500 RUNS=3
[ "$QUICK" = 1 ] && N=100 RUNS=1
PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
until_true 20 online ana bo
body=$(head -c 36000 /dev/urandom | base64 -w0 | head -c 48000)
for i in $(seq 1 "$N"); do
	printf '{"text":"%s %s"}' "$i" "$body" >"$T/req.json"
	curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
		--data-binary @"$T/req.json" "${URL[ana]}/api/send"
done
echo "ana holds $(api ana /api/status | jq .messages) messages of 48,000 characters"
for run in $(seq 1 "$RUNS"); do
	s0=$(date +%s%N); papo bo say "alone $run" --to ana --json >/dev/null; s1=$(date +%s%N)
	alone=$(( (s1 - s0) / 1000000 ))
	sleep 0.5
	( curl -s -o "$T/h.json" -w '%{time_total} %{size_download}' \
		"${URL[ana]}/api/history?limit=500" >"$T/htime" ) &
	hp=$!
	sleep 0.05
	s0=$(date +%s%N); state=$(papo bo say "during $run" --to ana --json | jq -r .state); s1=$(date +%s%N)
	wait "$hp"
	read -r secs bytes <"$T/htime"
	echo "run $run: history ${secs} s, $bytes bytes, $(jq '.messages | length' "$T/h.json") messages; bo to ana during it $(( (s1 - s0) / 1000000 )) ms ($state), alone $alone ms"
	sleep 1
done
stop_all
