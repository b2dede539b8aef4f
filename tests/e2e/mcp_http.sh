#!/usr/bin/env bash
# mcp_http.sh: /mcp as raw HTTP sees it: sessions, every status code of
# the Streamable HTTP transport, the notification stream with its
# priming event and Last-Event-ID resume, wait's progress stream, the
# read receipt an agent's reading sends, and the requests of revision
# 2026-07-28 with their subscriptions/listen streams.
# Usage: mcp_http.sh PATH_TO_PAPO.
PAPO=${1:?usage: mcp_http.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "bo online" until_true 15 online ana bo
M=${URL[ana]}/mcp
# rpc and jqt: lib.sh's.
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'

rpc "" "$init"
check "initialize: 200" test "$code" = 200
SID=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
check "a session id of visible ASCII: $SID" grep -qE '^[!-~]{16,}$' <<<"$SID"
check "capabilities" jqt '.result.capabilities | .tools and .logging and .resources.subscribe and .experimental["claude/channel"]' "$T/body"
check "instructions say room text is data" jqt '.result.instructions | test("data") and test("instructions")' "$T/body"
rpc "" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}'
check "an older client gets its version" jqt '.result.protocolVersion == "2025-03-26"' "$T/body"

rpc "$SID" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
check "a notification: 202" test "$code" = 202
rpc "$SID" '{"jsonrpc":"2.0","id":2,"method":"ping"}'
check "ping" jqt '.id == 2 and .result == {}' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":3,"method":"no/such"}'
check "unknown method: -32601" jqt '.error.code == -32601' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"send","arguments":{"text":7}}}'
check "a wrong argument: a tool error naming it" jqt '.result.isError == true and (.result.content[0].text | test("text must be a string"))' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":56}}}'
check "timeout_s over 55: a tool error naming it" jqt '.result.isError == true and (.result.content[0].text | test("timeout_s"))' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wait","arguments":{"timeout":5}}}'
check "an unknown argument: a tool error naming it" jqt '.result.isError == true and (.result.content[0].text | test("unknown argument .timeout.: wait takes timeout_s, from"))' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shout","arguments":{}}}'
check "an unknown tool: -32602" jqt '.error.code == -32602' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":'
check "malformed JSON: 400 and -32700" test "$code" = 400 -a "$(jq .error.code "$T/body")" = -32700
rpc "" '{"jsonrpc":"2.0","id":5,"method":"ping"}'
check "no session id: 400" test "$code" = 400
rpc "nosuchsession" '{"jsonrpc":"2.0","id":5,"method":"ping"}'
check "unknown session: 404" test "$code" = 404
rpc "$SID" '{"jsonrpc":"2.0","id":5,"method":"ping"}' -H 'MCP-Protocol-Version: 1999-01-01'
check "unsupported MCP-Protocol-Version: 400" test "$code" = 400
rpc "$SID" '{"jsonrpc":"2.0","id":5,"method":"ping"}' -H 'MCP-Protocol-Version: 2025-06-18'
check "a supported MCP-Protocol-Version: 200" test "$code" = 200
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: text/html' -H "$CT" -H "MCP-Session-Id: $SID" -d '{"jsonrpc":"2.0","id":6,"method":"ping"}' "$M")
check "a wrong Accept: 406" test "$code" = 406
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$ACC" -H 'Content-Type: text/plain' -H "MCP-Session-Id: $SID" -d 'x' "$M")
check "a non-JSON body: 415" test "$code" = 415
# /mcp takes up to 2 MiB (HTTP_LARGE_MAX: send's inline attachments).
head -c 2097153 /dev/zero | tr '\0' 'x' >"$T/big"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$ACC" -H "$CT" -H "MCP-Session-Id: $SID" --data-binary @"$T/big" "$M")
check "over the body limit: 413" test "$code" = 413
code=$(curl -s -o /dev/null -D "$T/hdr" -w '%{http_code}' -X PUT "$M")
check "another method: 405 with Allow" test "$code" = 405 -a -n "$(grep -i '^allow: .*POST' "$T/hdr")"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$ACC" -H "$CT" -H 'Origin: http://evil.example' -d "$init" "$M")
check "a foreign Origin: 403" test "$code" = 403
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$ACC" -H "$CT" -H 'Host: evil.example' -d "$init" "$M")
check "a forged Host: 403" test "$code" = 403
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: application/json' -H "MCP-Session-Id: $SID" "$M")
check "GET without text/event-stream: 406" test "$code" = 406

# The notification stream: priming event, then pushed messages (for a
# session that did not opt in, a courtesy: see below).
curl -sN --max-time 6 -H 'Accept: text/event-stream' -H "MCP-Session-Id: $SID" "$M" >"$T/get1" &
get1=$!
check "priming event: an id and empty data" until_true 3 grep -qE '^data: ?$' "$T/get1"
papo bo say "one for the agent" >/dev/null
papo bo say "two for the agent" >/dev/null
check "pushed as notifications/claude/channel" until_true 3 grep -q 'notifications/claude/channel.*"content":"two for the agent"' "$T/get1"
check "meta carries from, from_id, from_role, from_label and id" grep -q '"meta":{"from":"bo","from_id":"[a-z2-7]\{52\}","from_role":"member","from_label":"bo","id":"[a-z2-7]\{10\}"' "$T/get1"
wait "$get1"
first=$(grep -A1 '^id: ' "$T/get1" | grep -B1 'one for the agent' | head -1 | cut -d' ' -f2)
curl -sN --max-time 2 -H 'Accept: text/event-stream' -H "MCP-Session-Id: $SID" -H "Last-Event-ID: $first" "$M" >"$T/get2"
check "Last-Event-ID replays what was missed" grep -q '"content":"two for the agent"' "$T/get2"
check "and not what was had" bash -c "! grep -q 'one for the agent' '$T/get2'"
check "once" test "$(grep -c 'two for the agent' "$T/get2")" = 1

# This session did not opt in to channel pushes: those were a courtesy,
# not a delivery.  The messages wait for its wait, and bo gets read
# receipts only once wait has returned them.
ids_bo=$(api bo '/api/history?limit=10' | jq -r '.messages[] | select(.text | endswith("for the agent")) | .id')
read_ok() { for i in $ids_bo; do grep "\"id\":\"$i\"" "$T/bo/log.jsonl" | grep -q '"state":"read"' || return 1; done; }
read_none() { for i in $ids_bo; do grep "\"id\":\"$i\"" "$T/bo/log.jsonl" | grep -q '"state":"read"' && return 1; done; return 0; }
sleep 1   # time tested: no read receipt comes within 1 s
check "a courtesy push sends no read receipt" read_none
rpc "$SID" '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"status","arguments":{}}}'
check "status: two unread for this session, no channels" jqt '.result.structuredContent.unread == 2 and .result.structuredContent.channels == false' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":5}}}'
check "wait returns both pushed messages, in order" jqt '[.result.structuredContent.messages[].text] == ["one for the agent","two for the agent"]' "$T/body"
check "bo got read receipts once wait returned them" until_true 5 read_ok

# wait: returns as soon as a message comes; with a progress token, as a
# stream whose progress notifications come every 10 s.
# Nothing shows a pending wait, so its request is given 1 s to arrive.
(sleep 1; papo bo say "while waiting" >/dev/null) &
sayer=$!
rpc "$SID" '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":20}}}'
check "wait returns the message" jqt '.result.structuredContent.messages[0].text == "while waiting"' "$T/body"
wait "$sayer"
rpc "$SID" '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":12},"_meta":{"progressToken":"p1"}}}'
check "wait with a progress token answers as a stream" grep -qi '^content-type: text/event-stream' "$T/hdr"
check "a progress notification came" grep -q '"method":"notifications/progress".*"progressToken":"p1"' "$T/body"
check "then the result, empty at the timeout" grep -q '"id":8,"result":{.*"timed_out":true' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"send","arguments":{"text":"x","to":"nobody"}}}'
check "an unknown addressee is a tool error naming the members" jqt '.result.isError == true and (.result.content[0].text | test("bo"))' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"papo://room/history"}}'
check "the history resource" jqt '.result.contents[0].uri == "papo://room/history"' "$T/body"
rpc "$SID" '{"jsonrpc":"2.0","id":11,"method":"logging/setLevel","params":{"level":"info"}}'
check "logging/setLevel" jqt '.result == {}' "$T/body"

# Three sessions of one agent, each with a stream that gets the history's
# updates and the log; the oldest has a wait pending.  A message comes:
# the wait takes it, and every stream carries each notification of it
# once (the walk over the sessions once met the waiting one again after
# its wait ended and moved it to the end of the line: pushed twice).
declare -A S spid
for k in 1 2 3; do
	rpc "" "$init"
	S[$k]=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
	rpc "${S[$k]}" '{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"papo://room/history"}}'
	rpc "${S[$k]}" '{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}'
	curl -sN --max-time 60 -H 'Accept: text/event-stream' -H "MCP-Session-Id: ${S[$k]}" "$M" >"$T/s$k" &
	spid[$k]=$!
	check "session $k's stream is open" until_true 10 grep -qE '^data: ?$' "$T/s$k"
done
curl -sS --max-time 30 -o "$T/w1" -H "$ACC" -H "$CT" -H "MCP-Session-Id: ${S[1]}" \
	-d '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":25}}}' "$M" &
w1=$!
sleep 1   # as above: for session 1's wait to be pending
rpc "${S[2]}" '{"jsonrpc":"2.0","id":5,"method":"ping"}'   # 1 is no longer the newest
rpc "${S[3]}" '{"jsonrpc":"2.0","id":5,"method":"ping"}'
papo bo say "once per stream" >/dev/null
wait "$w1"
check "the pending wait of the oldest session took it" jqt '[.result.structuredContent.messages[].text] == ["once per stream"]' "$T/w1"
for k in 1 2 3; do
	check "session $k's stream got the log of it" until_true 10 grep -q '"method":"notifications/message".*once per stream' "$T/s$k"
done
sleep 0.5   # time tested: nothing comes twice within 0.5 s
for k in 1 2 3; do
	n_log=$(grep -c '"method":"notifications/message".*once per stream' "$T/s$k")
	n_upd=$(grep -c '"method":"notifications/resources/updated"' "$T/s$k")
	n_chan=$(grep -c '"method":"notifications/claude/channel".*once per stream' "$T/s$k")
	check "session $k's stream: the log once ($n_log), the update once ($n_upd), no channel push ($n_chan): the wait took it" \
		test "$n_log/$n_upd/$n_chan" = 1/1/0
	kill "${spid[$k]}" 2>/dev/null; wait "${spid[$k]}" 2>/dev/null
done

# DELETE ends the session; it is then unknown.
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "MCP-Session-Id: $SID" "$M")
check "DELETE: 200" test "$code" = 200
rpc "$SID" '{"jsonrpc":"2.0","id":12,"method":"ping"}'
check "after DELETE: 404" test "$code" = 404

# Revision 2026-07-28, on bo's daemon (messages come from ana's): no
# session; every request names its revision in params._meta and in the
# MCP-Protocol-Version and Mcp-Method headers.
M=${URL[bo]}/mcp
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
V26='MCP-Protocol-Version: 2026-07-28'
# rpc26 METHOD PARAMS [CURL ARGS]: one request of 2026-07-28; PARAMS are
# the members of params besides _meta.
rpc26() {
	local method=$1 params=$2; shift 2
	rpc "" "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"$method\",\"params\":{$meta${params:+,$params}}}" \
		-H "$V26" -H "Mcp-Method: $method" "$@"
}
# listen NAME ID FILTER [CURL ARGS]: opens a subscriptions/listen stream
# in the background: its bytes in $T/NAME, its headers in $T/NAME.hdr.
declare -A lpid
listen() {
	local name=$1 id=$2 filter=$3; shift 3
	curl -sN --max-time 90 -D "$T/$name.hdr" -H "$ACC" -H "$CT" "$@" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"subscriptions/listen\",\"params\":{$meta,\"notifications\":$filter}}" \
		"$M" >"$T/$name" &
	lpid[$name]=$!
}
listen26() { local n=$1; shift; listen "$n" "$@" -H "$V26" -H 'Mcp-Method: subscriptions/listen'; }
# events NAME: the JSON-RPC messages a stream carried so far, one a line.
events() { sed -n 's/^data: //p' "$T/$1" | grep -v '^$'; }
# ev NAME JQ: the jq filter holds over the array of NAME's messages.
ev() { events "$1" | jq -s -e "$2" >/dev/null; }
acked() { ev "$1" 'length > 0'; }

rpc26 server/discover ''
check "server/discover lists 2026-07-28 and the 2025 revisions" jqt '.result.supportedVersions == ["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]' "$T/body"
check "server/discover: resultType, serverInfo, capabilities" jqt '.result.resultType == "complete" and .result._meta["io.modelcontextprotocol/serverInfo"].name == "papo" and .result.capabilities.resources.subscribe and .result.capabilities.experimental["claude/channel"]' "$T/body"
check "no session is made" bash -c "! grep -qi '^mcp-session-id:' '$T/hdr'"
rpc26 tools/call '"name":"status","arguments":{}' -H 'Mcp-Name: status'
check "tools/call of 2026-07-28" jqt '.result.resultType == "complete" and .result.structuredContent.me.name == "bo"' "$T/body"
rpc26 tools/call '"name":"status","arguments":{}' -H 'Mcp-Name: =?base64?c3RhdHVz?='
check "Mcp-Name in base64" jqt '.result.structuredContent.me.name == "bo"' "$T/body"
rpc26 tools/list ''
check "tools/list of 2026-07-28 may be cached" jqt '(.result.tools | length) == 5 and .result.ttlMs > 0 and .result.cacheScope == "public"' "$T/body"
rpc26 tools/call '"name":"status","arguments":{}' -H 'Mcp-Name: send'
check "an Mcp-Name unlike the body: 400, -32020" test "$code" = 400 -a "$(jq .error.code "$T/body")" = -32020
rpc "" '{"jsonrpc":"2.0","id":"r1","method":"tools/list","params":{'"$meta"'}}' -H "$V26"
check "no Mcp-Method: 400, -32020" test "$code" = 400 -a "$(jq .error.code "$T/body")" = -32020
rpc "" '{"jsonrpc":"2.0","id":"r1","method":"tools/list","params":{'"$meta"'}}' -H 'MCP-Protocol-Version: 2025-11-25' -H 'Mcp-Method: tools/list'
check "an MCP-Protocol-Version unlike _meta: 400, -32020" test "$code" = 400 -a "$(jq .error.code "$T/body")" = -32020
rpc "" '{"jsonrpc":"2.0","id":"r1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	-H 'MCP-Protocol-Version: 2099-01-01' -H 'Mcp-Method: tools/list'
check "an unknown revision: 400, -32022 with what is supported" jqt '.id == "r1" and .error.code == -32022 and .error.data.supported == ["2026-07-28"] and .error.data.requested == "2099-01-01"' "$T/body"
check "(HTTP 400)" test "$code" = 400
rpc "" '{"jsonrpc":"2.0","id":"r1","method":"tools/list","params":{}}' -H "$V26" -H 'Mcp-Method: tools/list'
check "no _meta: 400, -32602" test "$code" = 400 -a "$(jq .error.code "$T/body")" = -32602
rpc26 ping ''
check "ping is not of 2026-07-28: 404, -32601" test "$code" = 404 -a "$(jq .error.code "$T/body")" = -32601
rpc26 initialize '"protocolVersion":"2026-07-28"'
check "nor initialize" test "$code" = 404 -a "$(jq .error.code "$T/body")" = -32601
rpc "" "$init" -H "$V26"
check "an initialize without _meta is of 2025, whatever the header says" jqt '.result.protocolVersion == "2025-11-25"' "$T/body"
# Each request's state ends with it: more requests than there may be
# sessions at once all succeed.
echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$meta}}" >"$T/list.json"
for i in $(seq 4200); do
	printf 'url = "%s"\nheader = "%s"\nheader = "%s"\nheader = "%s"\nheader = "Mcp-Method: tools/list"\ndata = "@%s"\noutput = /dev/null\nwrite-out = "%%{http_code}\\n"\n' \
		"$M" "$ACC" "$CT" "$V26" "$T/list.json"
	[ "$i" -lt 4200 ] && echo next
done >"$T/many.cfg"
check "4,200 requests of 2026-07-28 in a row: every one 200" test "$(curl -s -K "$T/many.cfg" | sort | uniq -c | tr -s ' ')" = " 4200 200"

# subscriptions/listen: bad params are refused at once.
rpc26 subscriptions/listen ''
check "listen without notifications: -32602" jqt '.error.code == -32602 and (.error.message | test("notifications"))' "$T/body"
rpc26 subscriptions/listen '"notifications":{"resourceSubscriptions":"papo://room/history"}'
check "resourceSubscriptions not an array: -32602" jqt '.error.code == -32602 and (.error.message | test("resourceSubscriptions"))' "$T/body"
rpc26 subscriptions/listen '"notifications":{"toolsListChanged":"yes"}'
check "a flag not a boolean: -32602" jqt '.error.code == -32602 and (.error.message | test("toolsListChanged"))' "$T/body"

# Listeners: L1 wants the messages and the history's updates (and kinds
# papo never sends), L2 only the history's updates, L3 is a request of a
# 2025 session and wants the messages.
listen26 L1 '"L1"' '{"claude/channel":true,"toolsListChanged":true,"resourceSubscriptions":["papo://room/history","papo://nothing"]}'
listen26 L2 7 '{"resourceSubscriptions":["papo://room/history"]}'
rpc "" "$init"
SID2=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
listen L3 '"L3"' '{"claude/channel":true}' -H "MCP-Session-Id: $SID2" -H 'MCP-Protocol-Version: 2025-11-25'
check "listen answers with a stream" until_true 10 grep -qi '^content-type: text/event-stream' "$T/L1.hdr"
check "L1 acknowledged" until_true 10 acked L1
check "L2 acknowledged" until_true 10 acked L2
check "L3 acknowledged" until_true 10 acked L3
check "the acknowledgement first, tagged, with what papo will send" ev L1 '.[0] == {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"resourceSubscriptions":["papo://room/history"],"claude/channel":true},"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}'
check "a numeric request id is the tag as it was" ev L2 '.[0].params._meta["io.modelcontextprotocol/subscriptionId"] == 7 and .[0].params.notifications == {"resourceSubscriptions":["papo://room/history"]}'
check "no event ids on a listen stream" bash -c "! grep -q '^id:' '$T/L1'"
papo ana say "for the listeners" --to bo >/dev/null
chan() { ev "$1" 'any(.[]; .method == "notifications/claude/channel")'; }
upd() { ev "$1" 'any(.[]; .method == "notifications/resources/updated")'; }
check "L1 got the message" until_true 10 chan L1
check "L2 got the history's update" until_true 10 upd L2
check "L3 got the message" until_true 10 chan L3
check "the message: tagged, with its text and author" ev L1 'map(select(.method == "notifications/claude/channel")) | length == 1 and (.[0].params | .content == "for the listeners" and .meta.from == "ana" and .meta.to == "bo" and (.meta.id | test("^[a-z2-7]{10}$")) and ._meta["io.modelcontextprotocol/subscriptionId"] == "L1")'
check "and the history's update, tagged" until_true 5 ev L1 'any(.[]; .method == "notifications/resources/updated" and .params.uri == "papo://room/history" and .params._meta["io.modelcontextprotocol/subscriptionId"] == "L1")'
check "L2's update is tagged 7" ev L2 'map(select(.method == "notifications/resources/updated")) | length == 1 and .[0].params._meta["io.modelcontextprotocol/subscriptionId"] == 7'
check "L2's filter kept the message out" ev L2 'all(.[]; .method != "notifications/claude/channel")'
check "L3's filter kept the update out" ev L3 'all(.[]; .method != "notifications/resources/updated") and (map(select(.method == "notifications/claude/channel"))[0].params._meta["io.modelcontextprotocol/subscriptionId"] == "L3")'
check "nothing untagged, nothing request-scoped" ev L1 'all(.[]; .params._meta["io.modelcontextprotocol/subscriptionId"] == "L1" and .method != "notifications/message")'
# Closing L2 cancels it; the others go on.
kill "${lpid[L2]}"; wait "${lpid[L2]}" 2>/dev/null
papo ana say "after L2 left" >/dev/null
check "L1 still gets messages" until_true 10 ev L1 'any(.[]; .params.content == "after L2 left")'
# In a session, notifications/cancelled ends a listen stream (as on
# stdio, for papo mcp's clients): no result, nothing more.
listen L4 '"L4"' '{"claude/channel":true}' -H "MCP-Session-Id: $SID2" -H 'MCP-Protocol-Version: 2025-11-25'
check "L4 acknowledged" until_true 10 acked L4
rpc "$SID2" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L4"}}'
check "notifications/cancelled: 202" test "$code" = 202
check "L4 ended" until_true 10 bash -c "! kill -0 ${lpid[L4]} 2>/dev/null"
check "without a result" ev L4 'all(.[]; has("result") | not)'
check "and L3 goes on" bash -c "kill -0 ${lpid[L3]}"
# Deleting the session ends its listen stream with the listen's result.
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "MCP-Session-Id: $SID2" "$M")
check "DELETE of L3's session: 200" test "$code" = 200
wait "${lpid[L3]}"
check "L3 ended with its result" ev L3 'last | .id == "L3" and .result.resultType == "complete" and .result._meta["io.modelcontextprotocol/subscriptionId"] == "L3" and .result._meta["io.modelcontextprotocol/serverInfo"].name == "papo"'

# Shutdown: an open stream is told when to come back (retry:); a listen
# stream ends with its request's result.
M=${URL[ana]}/mcp
rpc "" "$init"
SID=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
curl -sN --max-time 10 -H 'Accept: text/event-stream' -H "MCP-Session-Id: $SID" "$M" >"$T/get3" &
get3=$!
until_ok 5 "the stream to ana is open" grep -qE '^data: ?$' "$T/get3"
stop ana
wait "$get3"
check "retry: before the stream closes on shutdown" grep -q '^retry: [0-9]' "$T/get3"
M=${URL[bo]}/mcp
listen26 L5 5 '{"claude/channel":true}'
check "L5 acknowledged" until_true 10 acked L5
stop bo
for l in L1 L5; do
	wait "${lpid[$l]}"
	rc=$?
	check "$l ended with the daemon, cleanly (curl exit $rc)" test "$rc" = 0
	check "$l ended with its result" ev $l 'last | .id == (.result._meta["io.modelcontextprotocol/subscriptionId"]) and .result.resultType == "complete"'
	check "and retry: before it" grep -q '^retry: [0-9]' "$T/$l"
done
check "each its own: L1" ev L1 'last.id == "L1"'
check "each its own: L5" ev L5 'last.id == 5'
finish
