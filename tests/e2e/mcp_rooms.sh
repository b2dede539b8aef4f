#!/usr/bin/env bash
# mcp_rooms.sh: one /mcp for every room (issue 23; docs/MCP.md, "Rooms"),
# as an agent sees it through curl.  Two daemons share two rooms, alpha
# (the default) and beta.  A session bound to no room hears both, each
# message naming its room; wait takes room to hear one; send, history
# and status take room; /mcp?room= binds a session to one room (and
# papo mcp --room does); clear errors for a room that names none, a
# bound session given another room, ?room= naming none, two rooms and no
# default, a bound room left; a pending wait on a room that is left ends
# at once, one on every room goes on; status lists the rooms; each
# room's history is a resource of its own, with its own updates (to
# resources/subscribe and subscriptions/listen), unknown rooms' refused
# saying why; and what the agent was given is kept per room across a
# restart (agents.json).
# Usage: mcp_rooms.sh PATH_TO_PAPO.
PAPO=${1:?usage: mcp_rooms.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN PAPO_ROOM

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
# session [QUERY]: a new session of ana's /mcp (QUERY: "?room=beta"),
# its id printed.
session() {
	rpc_to "$M${1:-}" "" "$init"
	grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r'
}
# call SID TOOL ARGS: a tools/call; the result in $T/body.
call() {
	rpc "$1" "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
}
# rpc posts to $M, not to a URL of its own: this one to URL.
rpc_to() {
	local url=$1 sid=$2 body=$3
	code=$(curl -sS --max-time 40 -o "$T/body" -D "$T/hdr" -w '%{http_code}' \
		-H "$ACC" -H "$CT" ${sid:+-H "MCP-Session-Id: $sid"} --data-binary "$body" "$url")
}
# waited SID ARGS: a wait, its messages appended to $T/got as
# "ROOM TEXT" lines.
waited() {
	call "$1" wait "$2"
	jq -r '.result.structuredContent.messages[] | "\(.room) \(.text)"' "$T/body" >>"$T/got"
}
all_in() { local l; for l in "$@"; do grep -qxF -- "$l" "$T/got" || return 1; done; }
# gets SID ARGS LINE...: waits (5 times at most) until every LINE came.
gets() {
	local sid=$1 args=$2; shift 2
	for _ in 1 2 3 4 5; do
		all_in "$@" && return 0
		waited "$sid" "$args"
	done
	all_in "$@"
}
tool_error() { # tool_error PATTERN: the last answer is a tool error saying it
	jq -e --arg p "$1" '.result.isError == true and (.result.content[0].text | test($p))' "$T/body" >/dev/null
}

# ana makes alpha, bo joins; ana makes beta beside it, bo joins that too,
# both while their daemons run.
papo ana new --name ana --room alpha >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "bo sees ana in alpha" until_true 20 online_in bo alpha ana
expect 0 "ana makes beta" -- papo ana new --name ana --room beta
BETA=$(grep '^papo1' "$T/out" | head -1)
expect 0 "bo joins beta" -- papo bo join "$BETA" --name bo
check "ana sees bo in beta" until_true 20 online_in ana beta bo
ALPHA_ID=$(room_id ana alpha)
BETA_ID=$(room_id ana beta)
check "two rooms, two ids" test -n "$ALPHA_ID" -a -n "$BETA_ID" -a "$ALPHA_ID" != "$BETA_ID"
M=${URL[ana]}/mcp

# status lists the rooms.
S=$(session)
check "a session: $S" test -n "$S"
call "$S" status '{}'
check "status lists both rooms, alpha the default" jqt --arg a "$ALPHA_ID" --arg b "$BETA_ID" \
	'.result.structuredContent | (.rooms | length) == 2 and (.rooms[] | select(.id == $a) | .name == "alpha" and .default == true) and (.rooms[] | select(.id == $b) | .name == "beta" and .default == false) and .bound == null and .room == "alpha"' "$T/body"
call "$S" status '{"room":"beta"}'
check "status of room beta" jqt --arg b "$BETA_ID" '.result.structuredContent | .room == "beta" and .room_id == $b and (.rooms | length) == 2' "$T/body"

# An unbound session's wait gets both rooms' messages, each naming its
# room (and its id).
: >"$T/got"
expect 0 "bo says in alpha" -- papo bo say "a1" --room alpha
expect 0 "bo says in beta" -- papo bo say "b1" --room beta
check "wait gives both rooms' messages, each with its room" gets "$S" '{"timeout_s":10}' "alpha a1" "beta b1"
call "$S" history '{"room":"beta","limit":5}'
check "history of beta: its messages, its room named" jqt --arg b "$BETA_ID" \
	'.result.structuredContent | .room_id == $b and ([.messages[].text] | index("b1") != null and index("a1") == null)' "$T/body"
expect 0 "bo says in beta" -- papo bo say "b0" --room beta
call "$S" wait '{"timeout_s":10}'
check "a waited message carries room and room_id" jqt --arg b "$BETA_ID" \
	'.result.structuredContent.messages[0] | .text == "b0" and .room == "beta" and .room_id == $b' "$T/body"

# send with room goes to that room only.
call "$S" send '{"text":"ana to beta","room":"beta"}'
check "send to beta answers with its room" jqt --arg b "$BETA_ID" '.result.isError == false and .result.structuredContent.room_id == $b' "$T/body"
check "bo has it in beta" until_true 15 has_in bo beta "ana to beta"
check "and not in alpha" bash -c "! curl -sS '${URL[bo]}/api/rooms/alpha/history?limit=500' | jq -r '.messages[].text' | grep -qxF 'ana to beta'"
call "$S" send '{"text":"ana to the default"}'
check "send without room goes to the default (alpha)" until_true 15 has_in bo alpha "ana to the default"
call "$S" send '{"text":"by prefix","room":"'"${BETA_ID:0:6}"'"}'
check "a room named by the start of its id" until_true 15 has_in bo beta "by prefix"

# wait with room waits on that room only.
: >"$T/got"
expect 0 "bo says in beta" -- papo bo say "b2" --room beta
expect 0 "bo says in alpha" -- papo bo say "a2" --room alpha
check "ana has both" until_true 15 has_in ana alpha "a2"
waited "$S" '{"timeout_s":10,"room":"alpha"}'
check "wait with room alpha gives alpha's only: $(cat "$T/got")" test "$(cat "$T/got")" = "alpha a2"
: >"$T/got"
waited "$S" '{"timeout_s":5}'
check "beta's waited meanwhile: $(cat "$T/got")" test "$(cat "$T/got")" = "beta b2"

# Errors a model can act on.
call "$S" send '{"text":"lost","room":"nosuch"}'
check "send to no such room: a tool error naming the rooms" tool_error "no room named 'nosuch'; the rooms are alpha .*beta"
call "$S" wait '{"timeout_s":1,"room":"nosuch"}'
check "wait on no such room: a tool error" tool_error "no room named 'nosuch'"
call "$S" send '{"text":"x","room":7}'
check "a room that is not a string: a tool error" tool_error "send: room must be a string"
sleep 1   # time tested: nothing reaches bo within 1 s
check "nothing was sent to bo's alpha" bash -c "! curl -sS '${URL[bo]}/api/rooms/alpha/history?limit=500' | jq -r '.messages[].text' | grep -qxF lost"
check "nor beta" bash -c "! curl -sS '${URL[bo]}/api/rooms/beta/history?limit=500' | jq -r '.messages[].text' | grep -qxF lost"
rpc_to "$M?room=nosuch" "" "$init"
check "?room= naming no room: 404 (got $code)" test "$code" = 404
check "with a JSON-RPC error naming the rooms" jqt '.error.code == -32602 and (.error.message | test("no room named .nosuch.; the rooms are alpha.*beta")) and (.error.data.rooms | length) == 2' "$T/body"

# A session bound to beta.
SB=$(session "?room=beta")
check "?room=beta: a session" test -n "$SB"
call "$SB" status '{}'
check "its status: beta, bound" jqt --arg b "$BETA_ID" '.result.structuredContent | .room == "beta" and .bound == $b' "$T/body"
# Bound to beta, it learns nothing of the daemon's other rooms (issue 37).
check "its status lists beta alone" jqt --arg b "$BETA_ID" '[.result.structuredContent.rooms[].id] == [$b]' "$T/body"
check "... and names alpha nowhere" bash -c "! grep -qE 'alpha|$ALPHA_ID' '$T/body'"
call "$SB" send '{"text":"bound send"}'
check "its send without room goes to beta" until_true 15 has_in bo beta "bound send"
call "$SB" send '{"text":"x","room":"alpha"}'
check "given another room: a tool error" tool_error "bound to room beta .*'alpha' does not name it"
call "$SB" send '{"text":"x","room":"zzzz"}'
check "given a room nobody has: the same error, naming no other room" bash -c "grep -q 'bound to room beta' '$T/body' && ! grep -qE '$ALPHA_ID|\\(${ALPHA_ID:0:8}\\)' '$T/body'"
call "$SB" send '{"text":"same","room":"beta"}'
check "given its own room: fine" jqt '.result.isError == false' "$T/body"
: >"$T/got"
expect 0 "bo says in alpha" -- papo bo say "a3" --room alpha
expect 0 "bo says in beta" -- papo bo say "b3" --room beta
check "ana has both" until_true 15 has_in ana beta "b3"
waited "$SB" '{"timeout_s":5}'
check "the bound session's wait: beta's only: $(cat "$T/got")" test "$(cat "$T/got")" = "beta b3"
: >"$T/got"
waited "$S" '{"timeout_s":5}'
check "the unbound one gets alpha's: $(cat "$T/got")" test "$(cat "$T/got")" = "alpha a3"
rpc "$SB" '{"jsonrpc":"2.0","id":3,"method":"resources/list"}'
check "its resources: the plain history and beta's" jqt --arg b "papo://rooms/$BETA_ID/history" '[.result.resources[].uri] == ["papo://room/history", $b]' "$T/body"
rpc "$SB" '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"papo://rooms/'"$ALPHA_ID"'/history"}}'
check "it cannot read alpha's" jqt '.error.code == -32002 and (.error.message | test("bound to room beta .*another room.s"))' "$T/body"

# Each room's history is a resource.
rpc "$S" '{"jsonrpc":"2.0","id":3,"method":"resources/list"}'
check "resources: the plain history and each room's" jqt --arg a "papo://rooms/$ALPHA_ID/history" --arg b "papo://rooms/$BETA_ID/history" \
	'[.result.resources[].uri] == ["papo://room/history", $a, $b]' "$T/body"
rpc "$S" '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"papo://rooms/'"$BETA_ID"'/history"}}'
check "beta's history resource has beta's messages only" jqt --arg u "papo://rooms/$BETA_ID/history" \
	'.result.contents[0].uri == $u and ((.result.contents[0].text | fromjson | [.messages[].text]) | index("b3") != null and index("a3") == null)' "$T/body"
rpc "$S" '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"papo://room/history"}}'
check "the plain one is the default room's" jqt '(.result.contents[0].text | fromjson | [.messages[].text]) | index("a3") != null and index("b3") == null' "$T/body"
rpc "$S" '{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"papo://rooms/'"$BETA_ID"'/history"}}'
check "subscribe to beta's history" jqt '.result == {}' "$T/body"
rpc "$S" '{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"papo://rooms/NOSUCH/history"}}'
check "no such room's history: no such resource" jqt '.error.code == -32002' "$T/body"
check "saying the URI names no room id, and the rooms" jqt '.error.message | test("names no room id.*the rooms are alpha .*beta")' "$T/body"
NOTIN=aaaaaaaaaaaaaaaaaaaaaaaaaa
rpc "$S" '{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"papo://rooms/'$NOTIN'/history"}}'
check "a room id this daemon is not in: -32002 saying so, and the rooms" \
	jqt --arg n "$NOTIN" '.error.code == -32002 and (.error.message | test("not in room " + $n + ".*the rooms are alpha .*beta"))' "$T/body"
# subscriptions/listen (2026-07-28) takes a room's history too.
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
V26='MCP-Protocol-Version: 2026-07-28'
rpc26() { # rpc26 PARAMS: a subscriptions/listen of 2026-07-28 to $M
	rpc "" "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"subscriptions/listen\",\"params\":{$meta,$1}}" \
		-H "$V26" -H "Mcp-Method: subscriptions/listen"
}
rpc26 '"notifications":{"resourceSubscriptions":["papo://rooms/'$NOTIN'/history"]}'
check "listen to a room this daemon is not in: -32602 saying so" \
	jqt --arg n "$NOTIN" '.error.code == -32602 and (.error.message | test("resourceSubscriptions: .*not in room " + $n)) and .error.data.uri == "papo://rooms/" + $n + "/history"' "$T/body"
MB=$M; M="$M?room=beta"
rpc26 '"notifications":{"resourceSubscriptions":["papo://rooms/'"$ALPHA_ID"'/history"]}'
check "listen bound to beta, to alpha's history: -32602 saying so" jqt '.error.code == -32602 and (.error.message | test("bound to room beta"))' "$T/body"
M=$MB
curl -sN --max-time 8 -H 'Accept: text/event-stream' -H "MCP-Session-Id: $S" "$M" >"$T/stream" 2>/dev/null &
SPID=$!
curl -sN --max-time 8 -H "$ACC" -H "$CT" -H "$V26" -H 'Mcp-Method: subscriptions/listen' \
	--data-binary '{"jsonrpc":"2.0","id":"LB","method":"subscriptions/listen","params":{'"$meta"',"notifications":{"resourceSubscriptions":["papo://rooms/'"$BETA_ID"'/history","papo://room/history"]}}}' \
	"$M" >"$T/listen" 2>/dev/null &
LPID=$!
streams_open() { grep -qE '^data: ?$' "$T/stream" && grep -q 'subscriptions/acknowledged' "$T/listen"; }
until_ok 5 "the stream and the listen are open" streams_open
expect 0 "bo says in beta" -- papo bo say "b4" --room beta
expect 0 "bo says in alpha" -- papo bo say "a4" --room alpha
wait $SPID
wait $LPID
check "beta's resource is updated" grep -qF "\"uri\":\"papo://rooms/$BETA_ID/history\"" "$T/stream"
check "alpha's is not (no subscription)" bash -c "! grep -qF 'papo://rooms/$ALPHA_ID/history' '$T/stream'"
levents() { sed -n 's/^data: //p' "$T/listen" | grep -v '^$' | jq -s -e "$@" >/dev/null; }
check "listen acknowledges beta's history and the plain one" levents --arg b "papo://rooms/$BETA_ID/history" \
	'.[0].method == "notifications/subscriptions/acknowledged" and .[0].params.notifications.resourceSubscriptions == ["papo://room/history", $b]'
check "listen: beta's history updated once, tagged" levents --arg b "papo://rooms/$BETA_ID/history" \
	'[.[] | select(.method == "notifications/resources/updated" and .params.uri == $b and .params._meta["io.modelcontextprotocol/subscriptionId"] == "LB")] | length == 1'
check "listen: the plain one once (alpha, the default, had one)" levents \
	'[.[] | select(.method == "notifications/resources/updated" and .params.uri == "papo://room/history")] | length == 1'
check "listen: alpha's own history not (not asked)" bash -c "! grep -qF 'papo://rooms/$ALPHA_ID/history' '$T/listen'"
check "the channel push names its room" bash -c "grep '^data: {' '$T/stream' | sed 's/^data: //' | jq -s -e '[.[] | select(.method == \"notifications/claude/channel\" and .params.content == \"b4\")][0].params.meta | .room == \"beta\" and .room_id == \"$BETA_ID\"' >/dev/null"
: >"$T/got"
check "both wait for the agent" gets "$S" '{"timeout_s":5}' "alpha a4" "beta b4"

# papo mcp --room binds its session too.
printf '%s\n' "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status","arguments":{}}}' |
	(cat; until_true 15 grep -q '"id":2' "$T/stdio") | PAPO_HOME=$T/ana timeout 20 "$PAPO" mcp --room beta >"$T/stdio" 2>"$T/stdio.err"
check "papo mcp --room beta: its status is beta's, bound" bash -c "jq -e 'select(.id == 2) | .result.structuredContent | .room == \"beta\" and .bound == \"$BETA_ID\"' '$T/stdio' >/dev/null"

# What the agent was given, per room, across a restart: alpha's read is
# not given again; beta's unread still is, and so is what came to each
# room while the daemon was stopped.
: >"$T/got"
expect 0 "bo says in alpha" -- papo bo say "alpha read" --room alpha
check "ana's agent reads it" gets "$S" '{"timeout_s":10,"room":"alpha"}' "alpha alpha read"
expect 0 "bo says in beta" -- papo bo say "beta unread" --room beta
check "ana has it" until_true 15 has_in ana beta "beta unread"
beta_unread() { call "$S" status '{"room":"beta"}'; jqt '.result.structuredContent.unread == 1' "$T/body"; }
until_ok 10 "ana's agent has it unread" beta_unread
stop ana
check "agents.json keeps a position per room" jqt --arg a "$ALPHA_ID" --arg b "$BETA_ID" \
	'.agents[] | select(.name == "") | .rooms[$a].seen != null and (.rooms[$b].unread | length) == 1' "$T/ana/agents.json"
expect 0 "bo says in beta while ana is stopped" -- papo bo say "beta while down" --room beta
expect 0 "bo says in alpha while ana is stopped" -- papo bo say "alpha while down" --room alpha
start ana
M=${URL[ana]}/mcp
check "ana has beta's message of its absence" until_true 30 has_in ana beta "beta while down"
check "and alpha's" until_true 30 has_in ana alpha "alpha while down"
S2=$(session)
: >"$T/got"
check "after the restart: beta's unread ones and those of the absence" gets "$S2" '{"timeout_s":5}' "beta beta unread" "beta beta while down" "alpha alpha while down"
check "alpha's read one is not given again: $(tr '\n' '|' <"$T/got")" bash -c "! grep -qxF 'alpha alpha read' '$T/got'"
check "each once" test "$(sort "$T/got" | uniq -d)" = ""
# A room left under pending waits: a wait of a session bound to it, and
# a wait with room naming it (answering as a stream, with a progress
# token), end at once saying so; a wait on every room goes on and gets
# the next message.  The bound session says so on its next call too.
# Two rooms and no default: the default (gamma) left.
expect 0 "ana makes gamma" -- papo ana new --name ana --room gamma
expect 0 "gamma is the default" -- papo ana rooms default gamma
serves_gamma() { call "$S2" status '{"room":"alpha"}'; jq -e '.result.structuredContent.rooms | any(.name == "gamma")' "$T/body" >/dev/null; }
check "MCP serves gamma" until_true 10 serves_gamma
SG=$(session "?room=gamma")
check "a session bound to gamma" test -n "$SG"
S3=$(session)
call "$S2" wait '{"timeout_s":0}'
# bgwait SID ARGS FILE [META]: a wait in the background, its answer in
# FILE; answer FILE: that answer's JSON-RPC response, plain or SSE.
bgwait() {
	curl -sS --max-time 40 -o "$3" -H "$ACC" -H "$CT" -H "MCP-Session-Id: $1" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"wait\",\"arguments\":$2${4:+,\"_meta\":$4}}}" "$M" &
}
answer() {
	if grep -q '^data: {' "$1"; then sed -n 's/^data: //p' "$1" | grep -v '^$' | jq -c 'select(.id == 9)'; else cat "$1"; fi
}
bgwait "$SG" '{"timeout_s":30}' "$T/wbound"; WB=$!
bgwait "$S3" '{"timeout_s":30,"room":"gamma"}' "$T/wroom" '{"progressToken":"p1"}'; WR=$!
bgwait "$S2" '{"timeout_s":30}' "$T/wall"; WA=$!
sleep 1   # nothing shows a pending wait: 1 s for the three requests to arrive
check "the three waits are pending" kill -0 $WB $WR $WA
t0=$SECONDS
expect 0 "ana leaves gamma" -- papo ana leave gamma
wait $WB $WR
check "the waits on gamma ended at once ($((SECONDS - t0)) s), not at their timeout" test $((SECONDS - t0)) -lt 10
answer "$T/wbound" >"$T/body"
check "the bound session's wait: a tool error saying gamma was left" \
	jqt '.result.isError == true and (.result.content[0].text | test("room gamma .*was left by this daemon while this wait was pending.*bound to it: start a new session")) and .result.structuredContent.left == true and .result.structuredContent.room == "gamma"' "$T/body"
answer "$T/wroom" >"$T/body"
check "the wait with room gamma (a stream): the same, naming the rooms now" \
	jqt '.result.isError == true and (.result.content[0].text | test("room gamma .*was left.*call wait without room.*the rooms now: alpha .*beta")) and (.result.structuredContent.rooms | length) == 2' "$T/body"
check "the wait on every room goes on" kill -0 $WA
expect 0 "bo says in beta" -- papo bo say "b5" --room beta
wait $WA
check "and gets the next message" jqt '.result.structuredContent.messages | map(.text) == ["b5"]' "$T/wall"
check "ana is in two rooms" until_true 10 eval 'test "$(rooms_json ana | jq ".rooms | length")" = 2'
call "$SG" wait '{"timeout_s":1}'
check "the session bound to gamma: a tool error saying it was left" tool_error "bound to room gamma .*has left"
rpc "$SG" '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"papo://room/history"}}'
check "its resources/read too" jqt '.error.code == -32002 and (.error.message | test("bound to room gamma .*has left"))' "$T/body"
call "$S2" send '{"text":"no default"}'
check "two rooms, no default, no room: a tool error naming them" tool_error "none is the default.*alpha.*beta"
call "$S2" send '{"text":"named","room":"alpha"}'
check "naming one works" jqt '.result.isError == false' "$T/body"
call "$S2" status '{}'
check "status without room: the same error" tool_error "none is the default"
call "$S2" status '{"room":"beta"}'
check "status of beta: the rooms, none the default" jqt '.result.structuredContent | .room == "beta" and (.rooms | length) == 2 and ([.rooms[].default] | any | not)' "$T/body"

stop_all
finish
