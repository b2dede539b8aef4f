#!/usr/bin/env bash
# badinput.sh: a catalogue of malformed inputs for the parsers a daemon
# exposes (the HTTP API's bodies and queries, JSON-RPC at /mcp, invites
# given to serve and join), table-driven: each input gets its status and a
# clear error naming what is wrong, nothing malformed reaches the log, and
# the daemon serves on after every one; wrong TURN settings stop serve
# from starting, with the reason.  The frame decoder has its own
# table in tests/test_frame.c (truncated, flipped bytes, forged authors,
# wrong room, every limit) and the fuzz targets in tests/fuzz/.
# Usage: badinput.sh PATH_TO_PAPO.  Prints "N passed, N failed".
PAPO=${1:?usage: badinput.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN PAPO_TOKEN

start ana || { finish; exit 1; }
join bo "$(invite ana)"
start bo || { finish; exit 1; }
check "bo online" until_true 20 online ana bo
U=${URL[ana]}
CT='Content-Type: application/json'
ACC='Accept: application/json, text/event-stream'

# alive: the daemon answers /healthz and takes a good message.
alive() {
	[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$U/healthz")" = 200 ] &&
	[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 -H "$CT" \
		--data-binary '{"text":"still here"}' "$U/api/send")" = 200 ]
}
# row NAME WANT_STATUS ERROR_REGEX CURL_ARGS...: one request; its status
# must be WANT and its body {"error": text matching ERROR_REGEX}.
row() {
	local name=$1 want=$2 re=$3 got; shift 3
	got=$(curl -sS --max-time 20 -o "$T/body" -w '%{http_code}' "$@" 2>"$T/curlerr")
	if [ "$got" = "$want" ] && jq -e --arg re "$re" \
		'(keys == ["error"]) and (.error | test($re))' "$T/body" >/dev/null 2>&1
	then ok; else fail "$name: got $got $(head -c 300 "$T/body"), wanted $want /$re/"; fi
}
big() { head -c "$1" /dev/zero | tr '\0' "${2:-a}"; }
deep() { printf '%*s' "$1" '' | tr ' ' '['; printf '%*s' "$1" '' | tr ' ' ']'; }

# POST /api/send: every way a body can be wrong.
send_row() { row "send: $1" "$2" "$3" -H "$CT" --data-binary "$4" "$U/api/send"; }
send_row "empty body"          400 'not valid JSON' ''
send_row "truncated"           400 'not valid JSON' '{"text":"hel'
send_row "trailing garbage"    400 'not valid JSON' '{"text":"x"} {"text":"y"}'
send_row "not an object"       400 'JSON object'    '["text","x"]'
send_row "a bare string"       400 'JSON object'    '"hello"'
send_row "text missing"        400 'text is missing' '{"to":"bo"}'
send_row "text a number"       400 'text must be a string' '{"text":42}'
send_row "text null"           400 'text must be a string' '{"text":null}'
send_row "text an object"      400 'text must be a string' '{"text":{"a":1}}'
send_row "text empty"          400 'text is empty'  '{"text":""}'
send_row "unknown field"       400 "unknown field 'sender'" '{"text":"x","sender":"bo"}'
send_row "field twice"         400 'key "text" twice' '{"text":"x","text":"y"}'
send_row "to a number"         400 'to must be a string' '{"text":"x","to":7}'
send_row "to empty"            400 "member's name or id" '{"text":"x","to":""}'
send_row "to nobody"           404 "no member is named 'nobody'.*bo" '{"text":"x","to":"nobody"}'
send_row "reply_to malformed"  400 'reply_to must be a message id' '{"text":"x","reply_to":"nope!"}'
send_row "reply_to too long"   400 'reply_to must be a message id' '{"text":"x","reply_to":"abcdefgh234"}'
send_row "invalid UTF-8"       400 'not valid UTF-8' $'{"text":"caf\xc3"}'
send_row "overlong UTF-8"      400 'not valid UTF-8' $'{"text":"\xc0\xaf"}'
send_row "UTF-16 surrogate"    400 'not valid UTF-8' $'{"text":"\xed\xa0\x80"}'
send_row "a NUL escape"        400 'NUL'            '{"text":"cut\u0000here"}'
send_row "nested too deep"     400 'not valid JSON' "{\"text\":$(deep 3000)}"
send_row "text over 48 KiB"    413 'at most 49152'  "{\"text\":\"$(big 49153)\"}"
row "send: body over 64 KiB" 413 "at most 65536 are allowed \\(a message's text, at most 49152\\)" -H "$CT" --data-binary "{\"text\":\"$(big 70000)\"}" "$U/api/send"
row "send: a NUL byte in the body" 400 'not valid JSON' -H "$CT" --data-binary @<(printf '{"text":"a\0b"}') "$U/api/send"
row "send: not JSON's type" 415 'application/json' -H 'Content-Type: text/plain' --data-binary '{"text":"x"}' "$U/api/send"
check "after the bad sends, ana serves on" alive

# GET /api/history: queries.
hist_row() { row "history: $1" 400 "$2" "$U/api/history?$3"; }
hist_row "limit zero"       'limit must be'    'limit=0'
hist_row "limit too big"    'limit must be'    'limit=501'
hist_row "limit negative"   'limit must be'    'limit=-1'
hist_row "limit a word"     'limit must be'    'limit=ten'
hist_row "limit overflow"   'limit must be'    'limit=99999999999999999999999'
hist_row "before a word"    'milliseconds'     'before=yesterday'
hist_row "since too big"    'milliseconds'     'since=9007199254740993'
hist_row "unknown param"    "unknown parameter 'order'" 'order=desc'
hist_row "from too long"    "member's name or id" "from=$(big 80 x)"
check "after the bad queries, ana serves on" alive

# /mcp: JSON-RPC.  mrow NAME HTTP_STATUS JQ_TEST BODY: the answer's status
# and a jq test on its body.
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bad","version":"1"}}}'
SID=$(curl -sS -D - -o /dev/null -H "$ACC" -H "$CT" --data-binary "$init" "$U/mcp" |
	grep -i '^mcp-session-id:' | cut -d' ' -f2 | tr -d '\r')
check "an MCP session" test -n "$SID"
mrow() {
	local name=$1 want=$2 test=$3 body=$4 got
	got=$(curl -sS --max-time 20 -o "$T/body" -w '%{http_code}' -H "$ACC" -H "$CT" \
		-H "MCP-Session-Id: $SID" --data-binary "$body" "$U/mcp" 2>"$T/curlerr")
	if [ "$got" = "$want" ] && jq -e "$test" "$T/body" >/dev/null 2>&1
	then ok; else fail "mcp: $name: got $got $(head -c 300 "$T/body"), wanted $want and $test"; fi
}
rpc_err() { # rpc_err NAME HTTP CODE REGEX BODY
	mrow "$1" "$2" "(.jsonrpc == \"2.0\") and (.error.code == $3) and (.error.message | test(\"$4\"))" "$5"
}
tool_err() { # tool_err NAME REGEX ARGUMENTS_JSON_OF_A_SEND
	mrow "$1" 200 ".result.isError == true and (.result.content[0].text | test(\"$2\"))" \
		"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"send\",\"arguments\":$3}}"
}
call() { echo "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":$1}"; }
rpc_err "empty body"        400 -32700 'not valid JSON' ''
rpc_err "truncated"         400 -32700 'not valid JSON' '{"jsonrpc":"2.0","id":1,"meth'
rpc_err "trailing garbage"  400 -32700 'not valid JSON' '{"jsonrpc":"2.0","id":1,"method":"ping"} x'
rpc_err "nested too deep"   400 -32700 'not valid JSON' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":$(deep 3000)}}"
rpc_err "a NUL escape"      400 -32700 'NUL' '{"jsonrpc":"2.0","id":1,"method":"pi\u0000ng"}'
rpc_err "a batch"           400 -32600 'batch' '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'
rpc_err "a bare string"     400 -32600 'object' '"ping"'
rpc_err "no jsonrpc"        400 -32600 'JSON-RPC 2.0' '{"id":1,"method":"ping"}'
rpc_err "jsonrpc 1.0"       400 -32600 'JSON-RPC 2.0' '{"jsonrpc":"1.0","id":1,"method":"ping"}'
rpc_err "id an object"      400 -32600 'JSON-RPC 2.0' '{"jsonrpc":"2.0","id":{},"method":"ping"}'
rpc_err "method a number"   400 -32600 'JSON-RPC 2.0' '{"jsonrpc":"2.0","id":1,"method":7}'
rpc_err "unknown method"    200 -32601 'no/such'  '{"jsonrpc":"2.0","id":1,"method":"no/such"}'
rpc_err "params an array"   200 -32602 'params must be an object' '{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}'
rpc_err "no such tool"      200 -32602 "no tool named 'nope'" "$(call '{"name":"nope"}')"
rpc_err "tool name a number" 200 -32602 'name' "$(call '{"name":5}')"
rpc_err "arguments a list"  200 -32602 'arguments' "$(call '{"name":"send","arguments":[]}')"
# A mistake in a tool's input is a tool error naming the argument (MCP
# 2025-11-25, SEP-1303: the model corrects it), not -32602.
terr() { # terr NAME REGEX BODY
	mrow "$1" 200 ".result.isError == true and (.result.content[0].text | test(\"$2\")) and (has(\"error\") | not)" "$3"
}
terr "send: text a number" 'text must be a string' "$(call '{"name":"send","arguments":{"text":7}}')"
terr "send: unknown argument" "unknown argument 'sender'" "$(call '{"name":"send","arguments":{"text":"x","sender":"bo"}}')"
terr "history: limit -1" 'limit must be' "$(call '{"name":"history","arguments":{"limit":-1}}')"
terr "history: limit 1.5" 'limit must be' "$(call '{"name":"history","arguments":{"limit":1.5}}')"
terr "wait: timeout_s 10000" 'timeout_s must be' "$(call '{"name":"wait","arguments":{"timeout_s":10000}}')"
terr "wait: timeout_s a word" 'timeout_s must be' "$(call '{"name":"wait","arguments":{"timeout_s":"soon"}}')"
tool_err "send: text empty" 'empty' '{"text":""}'
tool_err "send: invalid UTF-8" 'UTF-8' $'{"text":"caf\xc3"}'
tool_err "send: text over 48 KiB" '49152' "{\"text\":\"$(big 49153)\"}"
tool_err "send: to nobody" 'bo' '{"text":"x","to":"nobody"}'
tool_err "send: reply_to malformed" 'reply_to' '{"text":"x","reply_to":"zz"}'
check "after the bad JSON-RPC, ana serves on" alive
mrow "the session still works" 200 '.id == 2 and .result == {}' '{"jsonrpc":"2.0","id":2,"method":"ping"}'

# Nothing malformed reached the log: ana's history holds exactly the good
# messages ("still here", one per alive check), and bo converges to it.
n_good=$(texts ana | grep -c -x 'still here')
check "only good messages in ana's history (got $(texts ana | wc -l))" \
	test "$(texts ana | wc -l)" -eq "$n_good"
check "bo has them all" until_true 20 bash -c "[ \$(curl -s '${URL[bo]}/api/history?limit=500' | jq '.messages | length') -eq $n_good ]"

# Wrong invites: serve with PAPO_INVITE and join refuse them with the
# reason, and leave no room behind.
good=$(invite ana)
for bad in "" "papo1" "papo2${good#papo1}" "${good%?}" "${good}a" "${good:0:40}" \
	"$(big 5000 a)" "$(tr a-z A-Z <<<"$good")x" $'papo1\xff\xfe'; do
	expect 1 "join '${bad:0:20}...'" -- env PAPO_HOME="$T/nope" "$PAPO" join "$bad" --name x
	has "$T/err" '^papo: .*invite' "join '${bad:0:20}...' says what is wrong with the invite"
	[ ! -e "$T/nope/room.json" ] && ok || fail "join '${bad:0:20}' left a room"
done
expect 1 "serve with a bad PAPO_INVITE" -- env PAPO_HOME="$T/nope" \
	PAPO_INVITE="${good%?}" timeout 10 "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0
has "$T/err" '^papo: .*invite' "serve says the invite is wrong"
[ ! -e "$T/nope/room.json" ] && ok || fail "serve with a bad invite left a room"
# Wrong TURN settings: serve refuses to start, saying what is wrong.
turn_bad() { # turn_bad DESCRIPTION PATTERN ENV...
	local what=$1 pat=$2; shift 2
	expect 1 "serve with $what" -- env PAPO_HOME="$T/turnbad" "$@" \
		timeout 10 "$PAPO" serve --name x --http 127.0.0.1:0 --listen 127.0.0.1:0
	has "$T/err" "$pat" "serve with $what says why"
}
turn_bad "a TURN port of 0" '^papo: TURN server: turn:127\.0\.0\.1:0: the port must be 1 to 65535$' \
	PAPO_TURN=turn:127.0.0.1:0 PAPO_TURN_USER=u PAPO_TURN_PASS=p
turn_bad "turns:" '^papo: TURN server: turns:127\.0\.0\.1: TURN over TLS .* not supported' \
	PAPO_TURN=turns:127.0.0.1 PAPO_TURN_USER=u PAPO_TURN_PASS=p
turn_bad "an http URL" '^papo: TURN server: http://x: a TURN server is turn:HOST\[:PORT\]$' \
	PAPO_TURN=http://x PAPO_TURN_USER=u PAPO_TURN_PASS=p
turn_bad "no TURN credentials" '^papo: the TURN server turn:127\.0\.0\.1 needs PAPO_TURN_USER and PAPO_TURN_PASS, or PAPO_TURN_SECRET$' \
	PAPO_TURN=turn:127.0.0.1 PAPO_TURN_USER=u
turn_bad "TURN credentials without a server" '^papo: .*without a TURN server' \
	PAPO_TURN_USER=u PAPO_TURN_PASS=p
turn_bad "a TURN password of 200 bytes" '^papo: the TURN password is longer than 127 bytes$' \
	PAPO_TURN=turn:127.0.0.1 PAPO_TURN_USER=u PAPO_TURN_PASS="$(big 200 p)"
# A relay an invite brought that cannot be used (here port 0) does not
# stop the joiner: it starts without one, saying why in its log.
PAPO_HOME=$T/rv "$PAPO" new --name rv >/dev/null
jq '.relay = {url: "turn:127.0.0.1:0", user: "u", pass: "p", secret: ""}' \
	"$T/rv/room.json" >"$T/rv.json" && mv "$T/rv.json" "$T/rv/room.json"
join rj "$(PAPO_HOME=$T/rv "$PAPO" invite)"
check "the joiner keeps the invite's relay" \
	jq -e '.relay.url == "turn:127.0.0.1:0"' "$T/rj/room.json"
if start rj; then
	check "rj runs with no relay: me.turn off" bash -c \
		"curl -s '${URL[rj]}/api/status' | jq -e '.me.turn.state == \"off\"'"
	has "$T/rj.err" "warn: relay: the invite's TURN server cannot be used, going on without one: turn:127\.0\.0\.1:0: the port must be 1 to 65535" \
		"rj's log says why the invite's relay is not used"
	stop rj
fi
# A damaged relay in room.json: serve names the file and the field.
jq '.relay = {url: 7}' "$T/rj/room.json" >"$T/rj.json" && mv "$T/rj.json" "$T/rj/room.json"
expect 1 "serve with a damaged relay in room.json" -- env PAPO_HOME="$T/rj" \
	timeout 10 "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0
has "$T/err" 'room\.json is damaged: "relay" is malformed' "serve says the relay in room.json is damaged"
# Duplicate keys, at any depth, are refused by every JSON body before a
# handler reads it (cJSON would take the first, other readers the last):
# naming the key, and changing nothing.
dup_row() { row "duplicate key: $1" 400 "$2" -H "$CT" --data-binary "$4" "$U$3"; }
dup_row "admin: name twice"        'key "name" twice'  /api/admin  '{"name":"nobody","name":"bo"}'
dup_row "remove: name twice"       'key "name" twice'  /api/remove '{"name":"nobody","name":"bo"}'
dup_row "send: to twice"           'key "to" twice'    /api/send   '{"text":"x","to":"nobody","to":"bo"}'
dup_row "send: nested in a value"  'key "a" twice'     /api/send   '{"text":{"a":1,"a":2}}'
not_admin() { curl -s "$U/api/status" | jq -e '[.admins[]?.name] | index("bo") == null' >/dev/null; }
check "bo is still no admin" not_admin
check "bo is still a member" online ana bo
rpc_err "duplicate key: method twice" 400 -32700 'key .method. twice' '{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}'
rpc_err "duplicate key: deep in params" 400 -32700 'key .text. twice' "$(call '{"name":"send","arguments":{"text":"x","text":"y"}}')"
check "ana serves on at the end" alive
stop bo
stop ana
finish
