#!/usr/bin/env bash
# history.sh: what the store answers after a catch-up and with a damaged
# log (docs/RELIABILITY.md, "History order" and "A damaged line"): paging
# /api/history back with the cursor each page gives reaches every message
# once though sync brought old times late; a damaged line in the middle of
# a log; a send that cannot be stored stores nothing; a member whose log
# cannot be synced acks and shows nothing until it can.
# Usage: history.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING.
PAPO=${1:?usage: history.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING}
PT=${2:?usage: history.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING}
. "$(dirname "$0")/lib.sh"

# page_all NAME LIMIT: pages NAME's /api/history back to its start with
# the "earlier" cursor of each page (a daemon that gives none is paged as
# the dashboard once did: before the oldest time of a full page); the ids,
# one a line, into $T/paged-NAME, and the number of pages into $T/pages.
page_all() {
	local q="limit=$2" page n=0
	: >"$T/paged-$1"
	while [ "$n" -lt 2000 ]; do
		page=$(api "$1" "/api/history?$q")
		n=$((n + 1))
		if ! jq -e '.messages' <<<"$page" >/dev/null 2>&1; then
			fail "$1: /api/history?$q answered $page"
			break
		fi
		jq -r '.messages[].id' <<<"$page" >>"$T/paged-$1"
		if jq -e .earlier <<<"$page" >/dev/null; then
			q="limit=$2&before=$(jq -r .earlier.before <<<"$page")&before_id=$(jq -r .earlier.before_id <<<"$page")"
		elif [ "$(jq '.messages | length' <<<"$page")" -ge "$2" ]; then
			q="limit=$2&before=$(jq '.messages[0].ts' <<<"$page")"
		else
			break
		fi
	done
	echo "$n" >"$T/pages"
}
says() { # says NAME PREFIX N: N messages
	local i
	for i in $(seq 1 "$3"); do papo "$1" say "$2$i" >/dev/null || fail "$1 say $2$i"; done
}

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
# ana writes alone, then bo alone (never having met ana), then ana again:
# each one's log then holds the other's middle stretch only after a sync,
# behind newer messages of its own.
says ana a 25
stop ana
start bo
says bo b 25
stop bo
start ana
says ana c 25
start bo
check "ana and bo meet" until_true 30 online ana bo
check "ana caught up: 75 messages" until_true 60 eval 'test "$(count ana)" = 75'
check "bo caught up: 75 messages" until_true 60 eval 'test "$(count bo)" = 75'
for m in ana bo; do
	log_ids "$m" >"$T/log-$m"
	page_all "$m" 7
	check "$m: paging by 7 reaches all 75 (reached $(sort -u "$T/paged-$m" | wc -l))" \
		test -z "$(comm -23 "$T/log-$m" <(sort -u "$T/paged-$m"))"
	check "$m: paging gives each message once: $(sort "$T/paged-$m" | uniq -d | head -3 | tr '\n' ' ')" \
		test "$(wc -l <"$T/paged-$m")" -eq 75
	check "$m: 11 pages of 7 (took $(cat "$T/pages"))" test "$(cat "$T/pages")" -eq 11
	# Time order, oldest first on every page and across them.
	api "$m" '/api/history?limit=500' | jq -r '.messages[].ts' >"$T/ts-$m"
	check "$m: /api/history is in time order" cmp -s "$T/ts-$m" <(sort -n "$T/ts-$m")
done
check "ana and bo show the same last page" \
	test "$(api ana '/api/history?limit=7' | jq -c '[.messages[].id]')" = \
	"$(api bo '/api/history?limit=7' | jq -c '[.messages[].id]')"
code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/history?before_id=aaaaaaaaaa")
check "before_id without before is refused ($code)" test "$code" = 400
has "$T/body" 'goes with before' "before_id's error"
code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/history?before=5&before_id=xyz")
check "a malformed before_id is refused ($code)" test "$code" = 400

# A damaged line in the middle of bo's log (a quote inside a body: the
# line keeps the shape that open takes on trust): history pages around
# it, the log names its offset once, and a sync brings the message back.
stop bo
log=$T/bo/log.jsonl
L=$(grep -n '"t":"msg"' "$log" | sed -n 40p | cut -d: -f1)
OFF=$(head -n $((L - 1)) "$log" | wc -c)
DID=$(sed -n "${L}p" "$log" | jq -r .id)
sed -i "${L}s/\"body\":\"./\"body\":\"\"/" "$log"
check "line $L of bo's log is damaged" bash -c "! sed -n '${L}p' '$log' | jq -e . >/dev/null 2>&1"
start bo
check "bo meets ana again" until_true 30 online bo ana
page_all bo 7
check "bo: history pages around the damaged line ($(wc -l <"$T/paged-bo") messages)" \
	test "$(sort -u "$T/paged-bo" | wc -l)" -ge 74
check "bo: the damaged line is named once, by its offset $OFF" \
	test "$(grep -c "damaged line at byte offset $OFF " "$T/bo.err")" -eq 1
check "bo: a sync brought message $DID back" \
	until_true 30 bash -c "curl -s '${URL[bo]}/api/history?limit=500' | jq -e --arg id $DID '.messages[] | select(.id == \$id)' >/dev/null"
page_all bo 7
check "bo: paging reaches all 75 again, each once" \
	test "$(sort -u "$T/paged-bo" | wc -l)" -eq 75 -a "$(wc -l <"$T/paged-bo")" -eq 75
check "bo: said once in this run" \
	test "$(grep -c "damaged line at byte offset" "$T/bo.err")" -eq 1
check "ana answers bo's syncs still (75 on both)" test "$(count ana)" = 75 -a "$(count bo)" = 75
# After a restart the copy sync stored is the one read.
stop bo
start bo
check "bo after a restart: 75, and $DID reads" test "$(count bo)" = 75 -a \
	"$(api bo '/api/history?limit=500' | jq --arg id "$DID" '[.messages[] | select(.id == $id)] | length')" = 1

# A send that cannot be stored (papo-testing's failing disk: the outbox's
# append, then the log's) answers 500 and stores nothing: not in history,
# not in the outbox, never delivered later by sync; a client may send
# it again.
for f in outbox log sync; do
	stop ana
	PAPO=$PT PAPO_TEST_STORE_FAIL=$f start ana
	code=$(post ana /api/send "{\"text\":\"never stored ($f)\"}")
	check "a send whose $f write fails answers 500 ($code)" test "$code" = 500
	has "$T/body" 'nothing was stored' "the 500's error ($f)"
	check "ana's history has no 'never stored ($f)'" bash -c "! curl -s '${URL[ana]}/api/history?limit=500' | grep -q 'never stored'"
	check "ana's outbox is empty ($f)" test "$(api ana /api/status | jq .outbox)" = 0
	check "ana still holds 75 ($f)" test "$(count ana)" = 75
done
stop ana
start ana
check "ana and bo meet again" until_true 30 online ana bo
code=$(post ana /api/send '{"text":"stored again"}')
check "the next send is stored ($code)" test "$code" = 200
check "bo gets it" until_true 20 has_text bo "stored again"
check "bo never gets a send that failed" bash -c "! curl -s '${URL[bo]}/api/history?limit=500' | grep -q 'never stored'"
check "76 on both" until_true 20 eval 'test "$(count ana)" = 76 -a "$(count bo)" = 76'

# A page is bounded in bytes, whatever its limit: 60 messages of 40,000
# characters (2.4 MB) come in pages of about 1 MiB, each with the cursor
# that goes on, and paging still reaches every message once.
big=$(head -c 30000 /dev/urandom | base64 -w0 | head -c 40000)
for i in $(seq 1 60); do
	printf '{"text":"%s %s"}' "$i" "$big" >"$T/big.json"
	code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data-binary @"$T/big.json" "${URL[ana]}/api/send")
	[ "$code" = 200 ] || fail "big send $i: $code"
done
check "ana holds 136" test "$(count ana)" = 136
size=$(curl -s -o "$T/page.json" -w '%{size_download}' "${URL[ana]}/api/history?limit=500")
check "one page of limit=500 is at most 1.2 MB ($size bytes)" test "$size" -le 1200000
check "and says where to go on" jq -e '.earlier.before_id' "$T/page.json" >/dev/null
log_ids ana >"$T/log-ana"
page_all ana 500
check "paging by 500 reaches all 136 once ($(wc -l <"$T/paged-ana") in $(cat "$T/pages") pages)" \
	test "$(sort -u "$T/paged-ana" | wc -l)" -eq 136 -a "$(wc -l <"$T/paged-ana")" -eq 136 \
	-a -z "$(comm -23 "$T/log-ana" <(sort -u "$T/paged-ana"))"
check "in 3 pages or more" test "$(cat "$T/pages")" -ge 3

# A member whose log cannot be synced (group commit,
# docs/RELIABILITY.md) acks nothing and shows nothing of what it could
# not make durable: the send answers queued, bo's history lacks it, and
# it reaches bo through the outbox once bo's disk works again.
held=$(count bo)
stop bo
PAPO=$PT PAPO_TEST_STORE_FAIL=sync start bo
check "ana and bo meet (bo's syncs failing)" until_true 30 online ana bo
code=$(post ana /api/send '{"text":"held for bo"}')
check "the send is answered ($code)" test "$code" = 200
check "queued: bo never acked it" jq -e '.state == "queued"' "$T/body"
check "bo does not show it" bash -c "! curl -s '${URL[bo]}/api/history?limit=500' | grep -q 'held for bo'"
check "bo holds $held still" test "$(count bo)" = "$held"
stop bo
start bo
check "bo gets it once its disk works" until_true 60 has_text bo "held for bo"

stop_all
finish
