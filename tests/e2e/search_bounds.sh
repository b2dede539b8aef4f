#!/usr/bin/env bash
# search_bounds.sh: a search cannot stall the node (issue 37, item 1;
# docs/SECURITY.md, "Search bounds").  Over a room of 4,000 messages
# written by gen_log:
#  - a query of 340 one-letter prefixes (c* c* ...), which took 4.2 s on
#    the node thread over 1,651 messages, is refused at once with a 400
#    that says why; so is one of 17 words; through MCP too (history with
#    query: a tool error saying why);
#  - the heaviest queries allowed (16 two-letter prefixes), 4 at a time
#    in a loop, run while /api/status is asked again and again: every
#    status answers within 0.5 s, every search with its hits or a 400
#    saying it took too long;
#  - a search that runs past its time (papo-testing with
#    PAPO_TEST_SEARCH_MS=1) is stopped with a 400 that says so, and the
#    daemon goes on answering.
# Usage: search_bounds.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING PATH_TO_GEN_LOG.
PAPO=${1:?usage: search_bounds.sh PAPO PAPO_TESTING GEN_LOG}
PT=${2:?usage: search_bounds.sh PAPO PAPO_TESTING GEN_LOG}
GEN_LOG=${3:?usage: search_bounds.sh PAPO PAPO_TESTING GEN_LOG}
. "$(dirname "$0")/lib.sh"
N=4000

papo a new --name a >/dev/null
start a
join b "$(invite a)"
stop a
"$GEN_LOG" "$T/a" "$T/b" "$N" >"$T/gen" || { fail "gen_log"; finish; exit 1; }
rm -f "$T/a/search.db"*
start a
check "a holds the $N messages" until_true 30 eval 'test "$(api a /api/status | jq .messages)" = "$N"'
check "its index is built" until_true 60 bash -c \
	"curl -s -o /dev/null -w '%{http_code}' '${URL[a]}/api/search?q=build' | grep -qx 200"

# code QUERY-STRING: the status of /api/search?QUERY-STRING, the body
# in $T/body, the seconds it took in $T/secs.
code() {
	curl -sS --max-time 60 -o "$T/body" -w '%{http_code} %{time_total}' \
		"${URL[a]}/api/search?$1" >"$T/cs"
	cut -d' ' -f2 "$T/cs" >"$T/secs"
	cut -d' ' -f1 "$T/cs"
}
urlq() { jq -rn --arg v "$1" '$v | @uri'; }
fast() { awk -v s="$(cat "$T/secs")" -v m="$1" 'BEGIN { exit !(s < m) }'; }

q340=$(printf 'c* %.0s' $(seq 340))
c=$(code "q=$(urlq "$q340")")
check "340 one-letter prefixes: refused ($c, $(cat "$T/secs") s)" test "$c" = 400
check "at once" fast 1
has "$T/body" 'prefix needs at least 2 letters' "the prefix's error"
c=$(code "q=$(urlq "$(printf 'ab%.0s ' $(seq 300))")")
check "300 words: refused ($c)" test "$c" = 400
has "$T/body" 'more than 16 words' "the words' error"
c=$(code "q=$(urlq 'a b c d e f g h i j k l m n o p q')")
check "17 words: refused ($c)" test "$c" = 400
c=$(code "q=$(urlq '"a b c d e f g h i j k l m n o p q"')")
check "a phrase of 17 words: refused ($c)" test "$c" = 400
c=$(code "q=$(urlq 'a b c d e f g h i j k l m n o p')")
check "16 words: answered ($c)" test "$c" = 200
c=$(code "q=$(urlq 'th*')")
check "a two-letter prefix: answered ($c)" test "$c" = 200
check "with hits" jqt '(.messages | length) > 0' "$T/body"

# MCP's history tool with a query says the same.
M="${URL[a]}/mcp"
rpc '' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
sid=$(grep -i '^mcp-session-id:' "$T/hdr" | tr -d '\r' | cut -d' ' -f2)
rpc "$sid" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
rpc "$sid" "$(jq -cn --arg q "$q340" '{jsonrpc:"2.0",id:2,method:"tools/call",params:{name:"history",arguments:{query:$q}}}')"
check "MCP history with 340 prefixes: a tool error" jqt '.result.isError == true' "$T/body"
check "saying why" jqt '.result.content[0].text | test("prefix needs at least 2")' "$T/body"

# The heaviest queries allowed, 4 at a time, while status is asked.
# 16 prefixes of gen_log's words: each reads many, all are found.
heavy=$(urlq 'th* bu* is* gr* ag* af* mo* pa* in* fi* ca* yo* lo* te* pl* me*')
: >"$T/heavy"
loops=()
for w in 1 2 3 4; do
	( end=$((SECONDS + 4))
	  while [ "$SECONDS" -lt "$end" ]; do
		curl -sS --max-time 60 -o /dev/null -w '%{http_code} %{time_total}\n' \
			"${URL[a]}/api/search?q=$heavy&limit=200" >>"$T/heavy"
	  done ) &
	loops+=($!)
done
sleep 0.3   # nothing shows a search running: 0.3 s for the four to start
: >"$T/status"
for i in $(seq 1 20); do
	curl -sS --max-time 30 -o /dev/null -w '%{time_total}\n' "${URL[a]}/api/status" >>"$T/status"
	sleep 0.1   # time tested: status asked over the searches' 4 s
done
wait "${loops[@]}"     # not the daemon, also a child of this shell
echo "search_bounds: status during heavy searches (s): $(sort -n "$T/status" | tr '\n' ' ')"
echo "search_bounds: heavy searches (code s): $(sort -k2 -n "$T/heavy" | tail -3 | tr '\n' ' ')"
check "heavy searches ran ($(wc -l <"$T/heavy"))" test "$(wc -l <"$T/heavy")" -ge 4
check "each answered 200 or 400" bash -c "! grep -qv '^\(200\|400\) ' $T/heavy"
check "status answered within 0.5 s each time ($(sort -n "$T/status" | tail -1) s at most)" \
	awk '$1 >= 0.5 { bad = 1 } END { exit bad }' "$T/status"
check "20 status answers" test "$(wc -l <"$T/status")" = 20
stop a

# A search past its time: stopped, said, and the daemon goes on.
PAPO=$PT PAPO_TEST_SEARCH_MS=1 start a
c=$(code "q=$heavy&limit=200")
check "past its time: refused ($c)" test "$c" = 400
has "$T/body" 'took longer than 1 ms' "the time's error"
check "status still answers" jqt ".messages == $N" <<<"$(api a /api/status)"
stop a
finish
