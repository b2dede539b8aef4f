#!/usr/bin/env bash
# limits.sh: issue 14's rate limits with real daemons (docs/SECURITY.md,
# "Rate limits and reply loops").
#  1. Bad PAPO_RATE and PAPO_DAMP values: serve refuses to start, saying
#     which and why, and makes no room.
#  2. A daemon of the test build ignoring its own limit (papo-testing,
#     PAPO_TEST_NO_RATE=1) sends 200 messages in two minutes of its clock
#     while the others are away.  When r comes back, r's log holds, for
#     each minute, no more than r's cap (5 x (burst + a minute's rate)),
#     exactly that many where f sent more; the drops are logged once a
#     minute though f's outbox sends them again and again.
#  3. r's own sends through the API: the burst passes, then 429 with
#     Retry-After and retry_after_s; after that wait a send passes again;
#     papo say prints the reason and fails.
#  4. d, away through all of it, comes back after f has gone: it gets
#     every message r holds (several minutes' caps of f's and r's own, in
#     one burst through sync) and drops none.
# Usage: limits.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING.
PAPO=${1:?usage: limits.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING}
PAPO_TESTING=${2:?usage: limits.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN
# 5 a minute in bursts of 2: a receiver keeps 5 x (2 + 5) = 35 of one
# author's messages per minute of its clock.
export PAPO_RATE=5/min,2 PAPO_LOG=info
CAP=35

# 1. Bad settings.
for v in 0/min 20 20/week 20/min,0 20/min,x abc 20/min10 -5/min; do
	expect 1 "PAPO_RATE=$v refused" -- env PAPO_RATE="$v" PAPO_HOME="$T/bad" \
		"$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0
	has "$T/err" "PAPO_RATE '.*'" "PAPO_RATE=$v: the reason names the setting"
done
for v in 12 12/5 0/5m 12/0m 12/5d 1001/5m 12/25h on; do
	expect 1 "PAPO_DAMP=$v refused" -- env PAPO_DAMP="$v" PAPO_HOME="$T/bad" \
		"$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0
	has "$T/err" "PAPO_DAMP '.*'" "PAPO_DAMP=$v: the reason names the setting"
done
check "nothing was made by the refused starts" test ! -e "$T/bad/room.json"

# The room: f (the test build), r and d know each other, then r and d go.
PAPO_HOME=$T/f "$PAPO_TESTING" new --name f >/dev/null
PAPO=$PAPO_TESTING PAPO_TEST_NO_RATE=1 start f
join r "$(invite f)"
join d "$(invite f)"
start r
start d
check "r sees d" until_true 20 online r d
check "d sees r" until_true 20 online d r
stop r
stop d

# 2. f floods: 100 messages, then 100 more in its clock's next minute.
flood() {
	local i
	for i in $(seq "$1" "$2"); do
		api f /api/send -H 'Content-Type: application/json' \
			-d "{\"text\":\"flood $i\"}" >/dev/null || return 1
	done
}
check "f sends 100 past its limit" flood 1 100
sleep $((61 - $(date +%-S)))   # time tested: the next minute's limit
check "f sends 100 more in the next minute" flood 101 200
api f '/api/history?limit=500&from=f' >"$T/f.hist"
check "f holds its 200" test "$(jq '.messages | length' "$T/f.hist")" -eq 200
# What r may keep: per minute of f's clock, all of them up to the cap.
want=$(jq --argjson cap $CAP '[.messages[] | (.ts / 60000 | floor)] |
	group_by(.) | map([length, $cap] | min) | add' "$T/f.hist")
check "f's messages fall in two minutes or more, one over the cap" \
	test "$want" -ge $((CAP + 1))

start r
fcount() { api r '/api/history?limit=500&from=f' | jq '.messages | length'; }
fcount_is() { [ "$(fcount)" -eq "$1" ]; }
check "r keeps $want of f's 200 (f's per minute: $(jq -c '[.messages[] |
	(.ts / 60000 | floor)] | group_by(.) | map(length)' "$T/f.hist"))" \
	until_true 100 fcount_is "$want"
dropped() { api r /api/status | jq '.members[] | select(.name == "f") | .dropped'; }
dropped_ge() { [ "$(dropped)" -ge "$1" ]; }
check "r counts f's messages dropped" until_true 60 dropped_ge $((200 - want))
# f's outbox sends the dropped ones again every 30 s: many more drops,
# one log line a minute.
t0=$(date +%s)
check "f sends them again, r drops them again" \
	until_true 100 dropped_ge $((2 * (200 - want)))
lines=$(grep -c 'dropped .* from f ' "$T/r.err")
mins=$(( ($(date +%s) - t0) / 60 + 2 ))
check "the drops are logged once a minute ($lines lines, $(dropped) drops)" \
	test "$lines" -ge 1 -a "$lines" -le "$mins"
check "r's count stays at $want" fcount_is "$want"
api r /api/status >"$T/r.status"
check "status shows the limits" jq -e '.limits.rate == "5/min,2" and
	.limits.receive_per_minute == 35 and .damping.limit == "12/5m"' "$T/r.status"

# 3. r's own sends.
send() { # send NAME TEXT: the status code; body in $T/body, headers in $T/hdr
	curl -sS -o "$T/body" -D "$T/hdr" -w '%{http_code}' "${URL[$1]}/api/send" \
		-H 'Content-Type: application/json' -d "{\"text\":\"$2\"}"
}
codes=""
for i in 1 2 3; do codes="$codes $(send r "r says $i")"; done
check "r's burst of 2 passes, the 3rd is refused: $codes" \
	test "$codes" = " 200 200 429"
retry=$(jq .retry_after_s "$T/body")
check "429 says retry_after_s" test "$retry" -ge 1 -a "$retry" -le 12
check "Retry-After says the same" grep -qi "^Retry-After: $retry" "$T/hdr"
check "the error says why" jq -e '.error | test("too fast.*PAPO_RATE=5/min,2")' "$T/body"
check "and which limit" jq -e '.limit == "rate"' "$T/body"
expect 1 "papo say fails when over the limit" -- env PAPO_HOME="$T/r" "$PAPO" say "too soon"
has "$T/err" "too fast" "papo say prints the reason"
sleep "$retry"   # time tested: retry_after_s is enough
check "after retry_after_s a send passes" test "$(send r 'r after waiting')" = 200
check "r holds its own 3" test "$(api r '/api/history?limit=500&from=r' |
	jq '.messages | length')" -eq 3

# 4. f goes; d comes back and catches up through r.
stop f
start d
ids() { api "$1" '/api/history?limit=500' | jq -r '.messages[].id' | sort; }
same() { [ "$(ids r)" = "$(ids d)" ]; }
check "d gets all $((want + 3)) messages r holds" until_true 60 same
check "d holds $want of f's" test "$(api d '/api/history?limit=500&from=f' |
	jq '.messages | length')" -eq "$want"
check "d dropped nothing" test "$(grep -c 'dropped' "$T/d.err")" -eq 0

stop_all
finish
