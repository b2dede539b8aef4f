#!/usr/bin/env bash
# search.sh: search as people and agents use it (README, "/api/search";
# README, "papo history -q"; docs/MCP.md, history): over a few hundred
# messages of two members, words, phrases, prefixes and accents found
# through the API, the CLI and MCP, filters (from, to, times, files,
# threads), pages by the cursor, bad input refused with a clear 400; the
# index deleted, truncated or damaged while the daemon is stopped and
# rebuilt at start with nothing lost (at once, or beside the room for a
# long log, even killed mid-way); a daemon killed with kill -9 during
# a burst of sends: every message it stored is findable after a restart.
# Usage: search.sh PATH_TO_PAPO.
PAPO=${1:?usage: search.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

# search NAME QUERY-STRING: the answer of /api/search?QUERY-STRING
search() { api "$1" "/api/search?$2"; }
# hits NAME QUERY-STRING: how many messages all its pages hold
hits() {
	local q=$2 page cur n=0 total=0
	while [ "$n" -lt 100 ]; do
		page=$(search "$1" "$q&limit=200${cur:+&cursor=$cur}")
		jqt '.messages' <<<"$page" || { echo "ERR $page"; return; }
		total=$((total + $(jq '.messages | length' <<<"$page")))
		cur=$(jq -r '.next // empty' <<<"$page")
		[ -n "$cur" ] || break
		n=$((n + 1))
	done
	echo "$total"
}
send() { # send NAME JSON: the id of the message sent
	post "$1" /api/send "$2" >/dev/null
	jq -r .id "$T/body"
}
urlq() { jq -rn --arg v "$1" '$v | @uri'; }
# The jq function marked: a hit's marked words (its excerpt's code
# points from each mark's start to its end).
MARKED='def marked: . as $h | [$h.marks[] | . as $m | $h.excerpt | explode | .[$m[0]:$m[1]] | implode];'

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "ana and bo meet" until_true 30 online ana bo

# 200 messages: ana's say "alpha N", bo's "beta N"; every 10th of ana's
# a deployment, one of accents, one addressed to bo.
for i in $(seq 1 100); do
	t="alpha n$i common"
	[ $((i % 10)) -eq 0 ] && t="$t deployment went fine"
	post ana /api/send "$(jq -cn --arg t "$t" '{text: $t}')" >/dev/null
	post bo /api/send "$(jq -cn --arg t "beta n$i common" '{text: $t}')" >/dev/null
done
root=$(send ana '{"text":"Le café crème est brûlé: a thread starts"}')
r1=$(send bo "$(jq -cn --arg r "$root" '{text: "first reply in thread", reply_to: $r}')")
r2=$(send ana "$(jq -cn --arg r "$r1" '{text: "second reply, deeper", reply_to: $r, to: "bo"}')")
check "ana holds all 203 messages" until_true 30 eval 'test "$(api ana /api/status | jq .messages)" = 203'

check "a word: 200 hits" test "$(hits ana 'q=common')" = 200
check "a rare word: 1 hit" test "$(hits ana 'q=n77')" = 2
check "a phrase" test "$(hits ana "q=$(urlq '"deployment went"')")" = 10
check "a phrase in the wrong order: none" test "$(hits ana "q=$(urlq '"went deployment"')")" = 0
check "a prefix" test "$(hits ana "q=$(urlq 'deploy*')")" = 10
check "accents folded" test "$(hits ana "q=$(urlq 'cafe creme brule')")" = 1
check "from bo" test "$(hits ana 'q=common&from=bo')" = 100
check "from ana, by her own name" test "$(hits ana 'q=common&from=ana')" = 100
check "from a name no member has: nothing, no error" test "$(hits ana 'q=common&from=nobody')" = 0
rid=$(api ana /api/rooms | jq -r '.rooms[0].id')
check "a room's own route: /api/rooms/ROOM/search" jqt '(.messages | length) == 2' <<<"$(api ana "/api/rooms/$rid/search?q=n77")"
check "and ?room=" jqt '(.messages | length) == 2' <<<"$(api ana "/api/search?q=n77&room=$rid")"
code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/search?q=n77&room=nosuchroom")
check "a room that is not one: refused ($code)" test "$code" = 404 -o "$code" = 400
check "to bo" test "$(hits ana 'to=bo')" = 1
search ana 'q=fine&limit=3' >"$T/p1"
check "a page of 3 with a cursor" jqt '(.messages | length) == 3 and (.next | type) == "string"' "$T/p1"
check "each hit has its excerpt, the word found marked" jqt "$MARKED"' all(.messages[]; (.excerpt | test("deployment went fine")) and (marked | index("fine") != null))' "$T/p1"
check "each hit is a message as history shows it" jqt 'all(.messages[]; .from == "ana" and (.id | length) == 10 and (.ts | type) == "number")' "$T/p1"
search ana "q=fine&limit=3&cursor=$(jq -r .next "$T/p1")" >"$T/p2"
check "the next page goes on without repeating" test -z "$(comm -12 <(jq -r '.messages[].id' "$T/p1" | sort) <(jq -r '.messages[].id' "$T/p2" | sort))"
# Times: the messages between root and r2.
tr=$(api ana "/api/history?limit=3" | jq '.messages[0].ts')
check "after and before" test "$(hits ana "after=$((tr - 1))&before=$((tr + 1))")" -ge 1
api ana "/api/history?thread=$root" >"$T/thread"
check "the thread, oldest first" test "$(jq -r '[.messages[].id] | join(" ")' "$T/thread")" = "$root $r1 $r2"
check "the thread from its middle" test "$(hits ana "thread=$r1")" = 2
check "words in a thread" test "$(hits ana "thread=$root&q=reply")" = 2

# Bad input: a clear 400, never SQLite's words.
for q in '' '(' '"' 'NEAR(' 'a:b' '*' 'AND OR' ; do
	code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/search?q=$(urlq "$q")")
	check "q='$q' answered ($code)" test "$code" = 200 -o "$code" = 400
	check "q='$q' says nothing of SQLite" bash -c "! grep -qi 'fts5\|sqlite\|syntax' $T/body"
done
code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/search?q=$(head -c 10240 /dev/zero | tr '\0' x)")
check "a 10 KB query refused ($code)" test "$code" = 400
has "$T/body" 'longer than' "the 10 KB query's error"
code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/search?q=a%00b")
check "a NUL answered ($code)" test "$code" = 200 -o "$code" = 400
for bad in 'limit=0' 'limit=x' 'before=-1' 'after=x' 'files=2' 'thread=short' 'cursor=nope' 'to=nobody' 'x=1'; do
	code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/search?q=a&$bad")
	check "$bad refused ($code: $(cat "$T/body"))" test "$code" = 400 -o "$code" = 404
done

# The CLI: papo history -q and its filters.
papo ana history -q deploy* -n 3 >"$T/cli" 2>&1
check "papo history -q: 3 hits" test "$(grep -c deployment "$T/cli")" = 3
check "papo history -q says how to page back" grep -Eq '^\(earlier ones: add --before [a-z2-7]{10}\)$' "$T/cli"
# Filtered history reads as plain history: oldest of the page first.
ts=$(grep -Eo '^[0-9-]{10} [0-9:]{8}' "$T/cli" | tr '\n' '|')
check "papo history -q prints the newest hits oldest first ($ts)" bash -c "grep -Eo '^[0-9-]{10} [0-9:]{8}' $T/cli | sort -c"
back=$(grep -Eo 'before [a-z2-7]{10}' "$T/cli" | cut -d' ' -f2)
papo ana history -q deploy* -n 3 --before "$back" >"$T/cli2" 2>&1
check "the hint's --before ID gives the page before: 3 other hits" \
	bash -c "test \$(grep -c deployment $T/cli2) = 3 && ! grep -Fxf <(grep deployment $T/cli) <(grep deployment $T/cli2)"
check "off a terminal, the excerpt is plain text" bash -c "! grep -q \$'\\e' $T/cli"
# At a terminal (script(1) gives it one), the words found are in bold.
PAPO_HOME=$T/ana script -qec "$PAPO history -q deploy* -n 3" /dev/null >"$T/cli" 2>&1
check "at a terminal, papo history -q shows the words found in bold" grep -q $'\e\[1mdeployment\e\[0m went fine' "$T/cli"
papo ana history -q common --from bo -n 200 --json >"$T/cli"
check "papo history --from bo: only bo's" jqt '(.messages | length) == 100 and all(.messages[]; .from == "bo")' "$T/cli"
papo ana history -q 'n77' --since 1h >"$T/cli"
check "papo history --since 1h" test "$(grep -c n77 "$T/cli")" = 2
papo ana history -q 'n77' --before 1h >"$T/cli"
check "papo history --before 1h: none" grep -q 'nothing found' "$T/cli"
papo ana history --thread "$r1" >"$T/cli"
check "papo history --thread" test "$(grep -c reply "$T/cli")" = 2
papo ana history -q x --since yesterday >"$T/cli" 2>&1
check "a bad time is a usage error ($?)" grep -q 'duration ago' "$T/cli"

# MCP: history with query and the filters.
M=${URL[ana]}/mcp
rpc "" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
SID=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
rpc "$SID" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
tool() { # tool ARGS-JSON: history's result text (JSON) into $T/tool
	rpc "$SID" "$(jq -cn --argjson a "$1" '{jsonrpc: "2.0", id: 9, method: "tools/call", params: {name: "history", arguments: $a}}')"
	jq -r '.result.content[0].text' "$T/body" >"$T/tool"
}
rpc "$SID" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
check "MCP: history's schema has query and the filters" jqt '.result.tools[] | select(.name == "history") | .inputSchema.properties | .query and .thread and .files and .cursor and .to and .after and .since and .before and .from' "$T/body"
tool '{"query":"\"deployment went\"","limit":4}'
check "MCP: a phrase, a page of 4 and a cursor" jqt "$MARKED"' (.messages | length) == 4 and (.next | type) == "string" and all(.messages[]; marked | join(" ") == "deployment went")' "$T/tool"
tool "$(jq -cn --arg c "$(jq -r .next "$T/tool")" '{query: "\"deployment went\"", limit: 4, cursor: $c}')"
check "MCP: the next page" jqt '(.messages | length) == 4' "$T/tool"
tool '{"query":"common","from":"bo","limit":200}'
check "MCP: from bo" jqt '(.messages | length) == 100 and all(.messages[]; .from == "bo")' "$T/tool"
tool "$(jq -cn --arg r "$root" '{thread: $r}')"
check "MCP: the thread, oldest first" test "$(jq -r '[.messages[].id] | join(" ")' "$T/tool")" = "$root $r1 $r2"
tool '{"query":"common","since":4000000000000}'
check "MCP: since the future: nothing" jqt '(.messages | length) == 0' "$T/tool"
tool '{"query":"( \" : * )"}'
check "MCP: a query of syntax only: a clear error" jqt '.result.isError == true and (.result.content[0].text | test("no words"))' "$T/body"
tool '{"thread":"short"}'
check "MCP: a bad thread: a tool error naming it" jqt '.result.isError == true and (.result.content[0].text | test("thread"))' "$T/body"

# A message's own brackets stay its text; CJK found inside a run.
send ana '{"text":"see [x] and ]y[ near zebra"}' >/dev/null
send ana '{"text":"東京タワーに行く"}' >/dev/null
check "brackets: the excerpt is the text, only the word found marked" jqt "$MARKED"' .messages[0] | (.excerpt == "see [x] and ]y[ near zebra") and (marked == ["zebra"])' <<<"$(search ana 'q=zebra')"
check "CJK: a word inside a run of characters is found and marked" jqt "$MARKED"' (.messages | length) == 1 and (.messages[0] | marked == ["タワー"])' <<<"$(search ana "q=$(urlq 'タワー')")"

# Every room at once: ana makes a second room, with its own messages.
post ana /api/rooms '{"room":"second","name":"ana"}' >/dev/null
check "ana is in two rooms" until_true 10 eval 'test "$(api ana /api/rooms | jq ".rooms | length")" = 2'
for i in $(seq 1 30); do
	post ana '/api/send?room=second' "$(jq -cn --arg t "gamma g$i common second-room" '{text: $t}')" >/dev/null
done
post ana '/api/send?room=second' '{"text":"zebra zebra zebra in the second room"}' >/dev/null
check "the default room's search is its own" test "$(hits ana 'q=common')" = 200
all=$(search ana 'q=zebra&room=*')
check "room=*: hits of both rooms, each with its room" jqt '(.messages | length) == 2 and ([.messages[].room] | index("second")) != null and ([.messages[].room_id] | unique | length) == 2' <<<"$all"
check "room=*: ranked together (the message that says it three times first)" jqt '.messages[0].room == "second"' <<<"$all"
check "room=*: every hit of both rooms, paged by the cursor" test "$(hits ana 'q=common&room=*')" = 230
check "room=*: a page's end past the first 1,000 hits: a clear 400" test "$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/search?q=common&room=*&limit=200&cursor=s1.900")" = 400
check "and it says why" grep -q 'first 1000 hits' "$T/body"
papo ana history -q zebra --all-rooms >"$T/cli" 2>&1
check "papo history --all-rooms: each hit after its room" grep -q '^\[second\] .*zebra zebra zebra' "$T/cli"
tool '{"query":"zebra","room":"*"}'
check "MCP: room \"*\" searches every room" jqt '(.messages | length) == 2 and .messages[0].room == "second"' "$T/tool"
tool '{"room":"*"}'
check "MCP: room \"*\" without a search: a clear error" jqt '.result.isError == true and (.result.content[0].text | test("for a search"))' "$T/body"

# The index damaged while the daemon is stopped: rebuilt at start from
# the log, nothing lost.
stop bo
for how in delete truncate garbage header; do
	stop ana
	db=$T/ana/search.db
	[ -f "$db" ] || db=$(ls "$T"/ana/rooms/*/search.db 2>/dev/null | head -1)
	check "the index is a file beside the log ($how)" test -f "$db"
	case $how in
	delete) rm -f "$db" "$db-wal" "$db-shm" ;;
	truncate) truncate -s $(($(stat -c %s "$db") / 3)) "$db"; rm -f "$db-wal" "$db-shm" ;;
	garbage) dd if=/dev/urandom of="$db" bs=1024 seek=8 count=16 conv=notrunc 2>/dev/null ;;
	header) printf 'not a database at all' | dd of="$db" conv=notrunc 2>/dev/null ;;
	esac
	start ana
	check "after the index was ${how}d: every message found" test "$(hits ana 'q=common')" = 200
	check "after the index was ${how}d: the thread" test "$(hits ana "thread=$root")" = 3
done
check "the rebuilds were logged" grep -q 'rebuilt' "$T/ana.err"

# A log longer than those rebuilt at once (the threshold lowered to 50
# messages for the test; 10,000 by default): the daemon starts, the
# index is rebuilt beside the room, which answers meanwhile, and search
# finds everything once it is done; a kill -9 in the middle of it
# changes nothing of that.
for kill in no yes; do
	stop ana
	rm -f "$db" "$db-wal" "$db-shm"
	PAPO_TEST_INDEX_INLINE=50 start ana
	check "the room answers while its index is rebuilt (kill $kill)" test "$(curl -s -o /dev/null -w '%{http_code}' "${URL[ana]}/api/status")" = 200
	if [ "$kill" = yes ]; then
		crash ana
		PAPO_TEST_INDEX_INLINE=50 start ana
	fi
	code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/search?q=common")
	check "search at once: the hits, or 503 saying the index is being rebuilt ($code)" \
		bash -c "[ $code = 200 ] || { [ $code = 503 ] && grep -q 'being rebuilt from the log' $T/body; }"
	check "once rebuilt beside the room, every message found (kill $kill)" until_true 30 eval 'test "$(hits ana "q=common")" = 200'
done
check "the rebuild ran beside the room" grep -q 'rebuilt from the log (.* messages), beside the room' "$T/ana.err"

# kill -9 during a burst of sends: after a restart, every message the log
# holds is found.
base=$(api ana /api/status | jq .messages)
( for i in $(seq 1 400); do
	curl -s -o /dev/null --max-time 5 -X POST -H 'Content-Type: application/json' \
		-d "{\"text\":\"burst b$i\"}" "${URL[ana]}/api/send" || break
done ) &
burst=$!
burst_going() { [ "$(count ana)" -gt $((base + 50)) ]; }
until_ok 30 "ana stores the burst" burst_going
crash ana
wait "$burst" 2>/dev/null
start ana
stored=$(( $(api ana /api/status | jq .messages) - base ))
check "the burst stored some messages before the kill ($stored)" test "$stored" -gt 0
check "every message of the burst found ($stored stored)" test "$(hits ana 'q=burst')" = "$stored"
check "and nothing else lost" test "$(hits ana 'q=common')" = 200
stop ana
finish
