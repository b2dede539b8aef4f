#!/usr/bin/env bash
# mcp_http.sh: /mcp as raw HTTP sees it: sessions, every status code of
# the Streamable HTTP transport, the notification stream with its
# priming event and Last-Event-ID resume, wait's progress stream, and the
# read receipt an agent's reading sends.  Usage: mcp_http.sh PATH_TO_PAPO.
PAPO=${1:?usage: mcp_http.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "bo online" until_true 15 online ana bo
M=${URL[ana]}/mcp
ACC='Accept: application/json, text/event-stream'
CT='Content-Type: application/json'
# rpc SID JSON [CURL ARGS]: POSTs one message; status in $code, body in $T/body.
rpc() {
	local sid=$1 body=$2; shift 2
	code=$(curl -sS --max-time 30 -o "$T/body" -D "$T/hdr" -w '%{http_code}' \
		-H "$ACC" -H "$CT" ${sid:+-H "MCP-Session-Id: $sid"} --data-binary "$body" "$@" "$M")
}
jqt() { jq -e "$@" >/dev/null; }
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
check "bad params: -32602" jqt '.error.code == -32602' "$T/body"
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
head -c 70000 /dev/zero | tr '\0' 'x' >"$T/big"
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

# The notification stream: priming event, then pushed messages.
curl -sN --max-time 6 -H 'Accept: text/event-stream' -H "MCP-Session-Id: $SID" "$M" >"$T/get1" &
get1=$!
sleep 0.5
papo bo say "one for the agent" >/dev/null
papo bo say "two for the agent" >/dev/null
check "priming event: an id and empty data" until_true 3 grep -qE '^data: ?$' "$T/get1"
check "pushed as notifications/claude/channel" until_true 3 grep -q 'notifications/claude/channel.*"content":"two for the agent"' "$T/get1"
check "meta carries from and id" grep -q '"meta":{"from":"bo","id":"[a-z2-7]\{10\}"' "$T/get1"
wait "$get1"
first=$(grep -A1 '^id: ' "$T/get1" | grep -B1 'one for the agent' | head -1 | cut -d' ' -f2)
curl -sN --max-time 2 -H 'Accept: text/event-stream' -H "MCP-Session-Id: $SID" -H "Last-Event-ID: $first" "$M" >"$T/get2"
check "Last-Event-ID replays what was missed" grep -q '"content":"two for the agent"' "$T/get2"
check "and not what was had" bash -c "! grep -q 'one for the agent' '$T/get2'"
check "once" test "$(grep -c 'two for the agent' "$T/get2")" = 1

# Shown to the agent: bo gets read receipts.
ids_bo=$(api bo '/api/history?limit=10' | jq -r '.messages[] | select(.text | endswith("for the agent")) | .id')
read_ok() { for i in $ids_bo; do grep "\"id\":\"$i\"" "$T/bo/log.jsonl" | grep -q '"state":"read"' || return 1; done; }
check "bo got read receipts for what the agent was shown" until_true 5 read_ok

# wait: returns as soon as a message comes; with a progress token, as a
# stream whose progress notifications come every 10 s.
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

# DELETE ends the session; it is then unknown.
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "MCP-Session-Id: $SID" "$M")
check "DELETE: 200" test "$code" = 200
rpc "$SID" '{"jsonrpc":"2.0","id":12,"method":"ping"}'
check "after DELETE: 404" test "$code" = 404

# Shutdown: an open stream is told when to come back (retry:).
rpc "" "$init"
SID=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
curl -sN --max-time 10 -H 'Accept: text/event-stream' -H "MCP-Session-Id: $SID" "$M" >"$T/get3" &
get3=$!
sleep 0.5
stop ana
wait "$get3"
check "retry: before the stream closes on shutdown" grep -q '^retry: [0-9]' "$T/get3"
stop bo
finish
