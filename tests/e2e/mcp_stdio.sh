#!/usr/bin/env bash
# mcp_stdio.sh: `papo mcp` as an MCP client that spawns stdio servers
# sees it: one JSON-RPC message a line each way; initialize, a send
# delivered to the other member, a room message pushed as a
# notifications/claude/channel line; requests answered side by side (a
# blocking wait does not hold up others); a message written before the
# answer to initialize still goes out, after it; a daemon restart behind
# its back; closing stdin ends the process (exit 0) and the session; with
# no daemon running it starts one; the token; --help and usage errors;
# the front program runs it for a daemon at http://.
# Usage: mcp_stdio.sh PATH_TO_PAPO.
PAPO=${1:?usage: mcp_stdio.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN PAPO_HTTP PAPO_LISTEN PAPO_INVITE

# The client declares it takes channel pushes: papo mcp passes them on
# (to a client that declares nothing it passes none: wake.sh).
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"claude/channel":{}}},"clientInfo":{"name":"mcp_stdio.sh","version":"1"}}}'
init_plain='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp_stdio.sh","version":"1"}}}'
initialized='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call() { # call ID TOOL ARGS: a tools/call request
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"
}

# The bridge runs as a coprocess: send writes a line to its stdin, recv
# reads its stdout until a line passes a jq filter (keeping every line
# in $T/bridge.out).
jqt() { jq -e "$@" >/dev/null 2>&1; }   # jqt FILTER [FILE]: a quiet test
send() { printf '%s\n' "$1" >&"${BR[1]}"; }
# read -t times out from the start of the read, not between bytes: a
# line that arrives just before the second is up comes in two parts, and
# what came is kept for the next read.
recv() { # recv SECONDS JQ_FILTER: the matching line in $line
	local deadline=$(( $(date +%s) + $1 )) filter=$2 part= rc
	line=
	while [ "$(date +%s)" -le "$deadline" ]; do
		IFS= read -r -t 1 -u "${BR[0]}" part
		rc=$?
		line+=$part
		if [ "$rc" -gt 128 ]; then continue; fi
		[ "$rc" -eq 0 ] || break   # end of file
		echo "$line" >>"$T/bridge.out"
		jq -e "$filter" <<<"$line" >/dev/null 2>&1 && return 0
		line=
	done
	line=
	return 1
}
# close_stdin SECONDS: closes the bridge's stdin; it must exit 0 in time.
close_stdin() {
	local fd=${BR[1]} pid=$BR_PID rc
	exec {fd}>&-
	if until_true "$1" bash -c "! kill -0 $pid 2>/dev/null"; then ok; else
		fail "papo mcp still runs $1 s after its stdin closed"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid"
	rc=$?
	rm -f "$T/bridge.pid"
	if [ "$rc" -eq 0 ]; then ok; else
		fail "papo mcp exited with $rc"; fi
}
# alive PID: a process runs with that pid (never "kill 0": the group).
alive() { [[ $1 =~ ^[1-9][0-9]*$ ]] && kill -0 "$1" 2>/dev/null; }
# session_gone NAME SID: NAME's daemon answers 404 to that session.
session_gone() {
	local code
	code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' \
		-H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-H "MCP-Session-Id: $2" -H 'MCP-Protocol-Version: 2025-11-25' \
		--data-binary '{"jsonrpc":"2.0","id":9,"method":"ping"}' \
		"${URL[$1]}/mcp")
	[ "$code" = 404 ]
}

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "bo online" until_true 15 online ana bo
check "ana online for bo" until_true 15 online bo ana

# --help and usage.
expect 0 "papo mcp --help" -- papo bo mcp --help
has "$T/out" '^usage: papo mcp \[--channels\] \[--agent NAME\] \[--room ROOM\] \[--new-room\]$' "help names the command"
has "$T/out" 'stdio' "help says what it speaks"
expect 2 "papo mcp with an argument" -- papo bo mcp extra
has "$T/err" "unexpected argument 'extra'" "the usage error says why"

# An agent's session, through bo's daemon.
coproc BR { PAPO_HOME=$T/bo PAPO_LOG=debug exec "$PAPO" mcp 2>"$T/bridge.err"; }
echo "$BR_PID" >"$T/bridge.pid"   # lib.sh's cleanup kills it if a check dies
send "$init"
# Without an answer to initialize, nothing after it means anything.
if ! recv 10 '.id == 1 and (.result.serverInfo | type == "object")'; then
	fail "initialize is answered: $(tail -3 "$T/bridge.err")"
	finish
	exit 1
fi
ok
check "with the protocol version asked for" jqt '.jsonrpc == "2.0" and .result.protocolVersion == "2025-11-25"' <<<"${line:-null}"
check "with the channel capability" jqt '.result.capabilities.experimental["claude/channel"]' <<<"${line:-null}"
# The front answers for a daemon at http:// itself: no hand-over to
# papo-full and its libraries, for every agent session's start.
check "papo mcp runs in the front, not papo-full" test "$(readlink "/proc/$BR_PID/exe")" = "$(realpath "$PAPO")"
sid=$(sed -n 's/.*session \([!-~]*\), protocol.*/\1/p' "$T/bridge.err" | tail -1)
check "the bridge logged its session id: '$sid'" test -n "$sid"
send "$initialized"
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
check "tools/list names the five tools" recv 5 '.id == 2 and ([.result.tools[].name] | sort == ["fetch","history","send","status","wait"])'
send "$(call 3 send '{"text":"from stdio"}')"
check "send is delivered to ana" recv 15 '.id == 3 and .result.structuredContent.state == "delivered"'
check "ana has it" until_true 10 has_text ana "from stdio"

# A room message reaches the agent as a notification line.  Nothing
# shows that the bridge's stream from bo is open: it is given 0.5 s.
sleep 0.5
papo ana say "to the agent" >/dev/null
check "a notifications/claude/channel line with ana's text within 5 s" \
	recv 5 '.method == "notifications/claude/channel" and .params.content == "to the agent"'
check "its meta says who wrote it" jqt '.params.meta.from == "ana"' <<<"${line:-null}"
# This client declared channels: the push gave it, and wait does not
# repeat it.
send "$(call 40 wait '{"timeout_s":1}')"
check "a client that takes pushes is not given it again by wait" \
	recv 8 '.id == 40 and .result.structuredContent.messages == []'

# Requests run side by side: a status asked while a wait blocks is
# answered first.
send "$(call 4 wait '{"timeout_s":4}')"
sleep 0.3   # nothing shows a pending wait: 0.3 s for it to reach bo
send "$(call 5 status '{}')"
check "status answered while wait blocks" recv 3 '.id == 5 or .id == 4'
check "and it is status's answer" jqt '.id == 5 and (.result.structuredContent.members | length) == 1' <<<"${line:-null}"
check "then wait times out" recv 8 '.id == 4 and (.result | type == "object")'

# What the bridge cannot send is still answered.
send 'this is not json'
check "a line that is not JSON: -32700" recv 5 '.id == null and .error.code == -32700'

# Every line of stdout is one JSON-RPC message.
check "every line is a JSON-RPC object" jqt -s 'all(.jsonrpc == "2.0")' "$T/bridge.out"

# bo's daemon restarts (on another HTTP port): the bridge finds it again,
# makes a new session, and answers as before.
stop bo
start bo
check "bo online again" until_true 15 online ana bo
send "$(call 6 status '{}')"
check "status after a restart of the daemon" recv 15 '.id == 6 and (.result.structuredContent.me.name == "bo")'
sleep 1   # as above: for the bridge's new stream to open
papo ana say "after the restart" >/dev/null
check "notifications come again after the restart" \
	recv 10 '.method == "notifications/claude/channel" and .params.content == "after the restart"'
sid2=$(sed -n 's/.*session \([!-~]*\), protocol.*/\1/p' "$T/bridge.err" | tail -1)
check "a new session: '$sid2'" test -n "$sid2" -a "$sid2" != "$sid"

# Closing stdin ends the bridge, and its session on the daemon.
close_stdin 3
check "bo's daemon forgot the session" session_gone bo "$sid2"
check "nothing but JSON-RPC on stdout" jqt -s 'all(.jsonrpc == "2.0")' "$T/bridge.out"

# papo mcp --channels: the session asks for pushes, but its client
# declared nothing: the push is shown, and the message stays for wait
# (a client that refuses channels, as Claude Code does by default,
# would lose it otherwise).
# (An agent of its own: what the sessions above left unread is not its.)
coproc BR { PAPO_HOME=$T/bo exec "$PAPO" mcp --channels --agent ch 2>"$T/bridge-ch.err"; }
echo "$BR_PID" >"$T/bridge.pid"
send "$init_plain"
check "--channels: initialized" recv 10 '.id == 1'
send "$initialized"
send "$(call 2 status '{}')"
check "--channels: status says no proven channels, nothing unread" \
	recv 5 '.id == 2 and .result.structuredContent.channels == false and .result.structuredContent.unread == 0'
sleep 0.5   # as above: for the bridge's stream to open
papo ana say "pushed to a channel client" >/dev/null
check "--channels: the push comes" \
	recv 5 '.method == "notifications/claude/channel" and .params.content == "pushed to a channel client"'
send "$(call 3 wait '{"timeout_s":1}')"
check "--channels: wait still gives it" recv 5 '.id == 3 and (.result.structuredContent.messages | map(.text)) == ["pushed to a channel client"]'
close_stdin 3

# Claude Code probes with server/discover of 2026-07-28 first: over stdio
# papo says which revisions it speaks, and the client initializes.
printf '%s\n' '{"jsonrpc":"2.0","id":"probe","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	"$init" | PAPO_HOME=$T/bo timeout 10 "$PAPO" mcp >"$T/probe" 2>"$T/probe.err"
check "a 2026-07-28 probe gets -32022 with the revisions spoken" \
	jqt -s 'map(select(.id == "probe"))[0].error | .code == -32022 and (.data.supported | index("2025-11-25")) and .data.requested == "2026-07-28"' "$T/probe"
check "and the initialize after it is answered" jqt -s 'map(select(.id == 1))[0].result.protocolVersion == "2025-11-25"' "$T/probe"

# A client that writes everything at once and closes stdin: the messages
# after initialize wait for its answer (they need the session), and the
# answers still come out before the bridge exits.
printf '%s\n' "$init" "$initialized" '{"jsonrpc":"2.0","id":2,"method":"ping"}' \
	"$(call 3 history '{"limit":5}')" |
	PAPO_HOME=$T/bo timeout 10 "$PAPO" mcp >"$T/piped" 2>"$T/piped.err"
check "piped: exit 0" test $? -eq 0
check "piped: initialize, ping and history answered" \
	jqt -s 'map(.id) | sort == [1,2,3]' "$T/piped"
check "piped: history has ana's message" \
	jqt -s '.[] | select(.id == 3) | .result.structuredContent.messages | map(.text) | index("to the agent") != null' "$T/piped"

# With a token: the bridge passes PAPO_TOKEN on; a wrong one gets an
# error answer, not silence.
stop bo
start bo --token s3cret-token-0123456789abcdefghij
printf '%s\n' "$init" | PAPO_HOME=$T/bo PAPO_TOKEN=s3cret-token-0123456789abcdefghij timeout 10 "$PAPO" mcp >"$T/tok" 2>"$T/tok.err"
check "the right token: initialized" jqt '.id == 1 and .result.serverInfo' "$T/tok"
printf '%s\n' "$init" | PAPO_HOME=$T/bo PAPO_TOKEN=wrong timeout 10 "$PAPO" mcp >"$T/tok" 2>"$T/tok.err"
check "a wrong token: an error answer for id 1" jqt '.id == 1 and .error.code == -32603 and (.error.message | test("401"))' "$T/tok"

# No daemon runs: papo mcp starts one, which stays.
PAPO_HOME=$T/cy "$PAPO" new --name cy >/dev/null
coproc BR { PAPO_HOME=$T/cy PAPO_HTTP=127.0.0.1:0 PAPO_LISTEN=127.0.0.1:0 exec "$PAPO" mcp 2>"$T/bridge2.err"; }
echo "$BR_PID" >"$T/bridge.pid"
send "$init"
check "without a daemon: initialize is answered" recv 15 '.id == 1 and (.result.serverInfo | type == "object")'
check "serve.json now exists" test -s "$T/cy/serve.json"
dpid=$(jq -r .pid "$T/cy/serve.json" 2>/dev/null)
alive "$dpid" && echo "$dpid" >"$T/cy-daemon.pid"
check "its daemon runs: pid '$dpid'" alive "$dpid"
check "its output went to serve.log" grep -q '^mcp: http://127.0.0.1:' "$T/cy/serve.log"
check "the bridge said so on stderr" grep -q 'started papo serve' "$T/bridge2.err"
close_stdin 3
check "the daemon outlives papo mcp" alive "$dpid"
if alive "$dpid"; then
	kill -TERM "$dpid"
	check "it stops on SIGTERM" until_true 10 bash -c "! kill -0 $dpid 2>/dev/null"
	check "and removes serve.json" test ! -e "$T/cy/serve.json"
fi
rm -f "$T/cy-daemon.pid"

# A daemon that cannot start: one line on stderr, exit 1.
PAPO_HOME=$T/dz "$PAPO" new --name dz >/dev/null
expect 1 "papo mcp when papo serve cannot start" -- \
	env PAPO_HOME="$T/dz" PAPO_HTTP=0.0.0.0:0 PAPO_LISTEN=127.0.0.1:0 "$PAPO" mcp </dev/null
lines "$T/err" 1 "one line on stderr"
has "$T/err" '^papo: papo serve did not start: .*token' "it says why"

# A home with no room (claude mcp add papo -- papo mcp, before papo new):
# papo mcp makes no room of its own, alone, named after the login; it
# says what to run instead, and makes nothing.
expect 1 "papo mcp in a home that does not exist" -- \
	env PAPO_HOME="$T/none" PAPO_HTTP=127.0.0.1:0 PAPO_LISTEN=127.0.0.1:0 "$PAPO" mcp </dev/null
lines "$T/err" 1 "one line on stderr"
has "$T/err" "^papo: .*/none has no room.*'papo new'.*'papo join INVITE'.*'papo setup CLIENT'.*'papo mcp --new-room'" "it says what to run instead"
check "nothing was made" test ! -e "$T/none"
mkdir -m 700 "$T/empty"
expect 1 "papo mcp in an empty home" -- \
	env PAPO_HOME="$T/empty" PAPO_HTTP=127.0.0.1:0 PAPO_LISTEN=127.0.0.1:0 "$PAPO" mcp </dev/null
has "$T/err" "^papo: .*/empty has no room" "it says the home has no room"
check "the empty home stays empty (no room, no daemon)" test -z "$(ls -A "$T/empty")"
# Asked with --new-room, it starts papo serve, which makes the room.
coproc BR { PAPO_HOME=$T/nr PAPO_HTTP=127.0.0.1:0 PAPO_LISTEN=127.0.0.1:0 exec "$PAPO" mcp --new-room 2>"$T/bridge3.err"; }
echo "$BR_PID" >"$T/bridge.pid"
send "$init"
check "--new-room: initialize is answered" recv 20 '.id == 1 and (.result.serverInfo | type == "object")'
check "--new-room: a room was made" test -s "$T/nr/room.json"
dpid=$(jq -r .pid "$T/nr/serve.json" 2>/dev/null)
alive "$dpid" && echo "$dpid" >"$T/nr-daemon.pid"
close_stdin 3
if alive "$dpid"; then
	kill -TERM "$dpid"
	check "its daemon stops on SIGTERM" until_true 10 bash -c "! kill -0 $dpid 2>/dev/null"
fi
rm -f "$T/nr-daemon.pid"

stop ana
stop bo
finish
