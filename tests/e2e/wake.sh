#!/usr/bin/env bash
# wake.sh: what an agent is given, and how an idle one is woken, without
# an agent harness (tests/agents drives the real Claude Code): ana's
# agent talks to ana's daemon; bo speaks.
#  - 2026-07-28 waits (no session) get what came between them, once;
#  - what the agent was not given survives ana's restart, and what came
#    while ana was down arrives after it, each message once;
#  - GET /api/wake answers once per burst of messages to an idle agent,
#    never while a wait is pending, and status says whether the wake was
#    taken;
#  - papo mcp inside Claude Code (CLAUDE_CODE_MESSAGING_SOCKET set) posts
#    one line per burst into that inbox socket: the auth line, then a user
#    message naming bo and the first words, and to call wait;
#  - papo hook: SessionStart/UserPromptSubmit add what waits as context,
#    Stop exits 2 with the wake line;
#  - ?agent=NAME keeps another agent's apart; a damaged agents.json is
#    kept aside and the daemon starts.
# Usage: wake.sh PATH_TO_PAPO.  Needs socat.
PAPO=${1:?usage: wake.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN CLAUDE_CODE_MESSAGING_SOCKET CLAUDE_CODE_MESSAGING_TOKEN

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "bo online" until_true 15 online ana bo

# mwait NAME TIMEOUT [AGENT]: a 2026-07-28 wait on NAME's /mcp; the texts
# it returned, one a line, in $T/got (and the answer in $T/wait.json).
mwait() {
	local q=
	[ -n "${3:-}" ] && q="?agent=$3"
	curl -s --max-time 70 "${URL[$1]}/mcp$q" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: wait' \
		-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":'"$2"'},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
		>"$T/wait.json"
	jq -r '.result.structuredContent.messages[].text' "$T/wait.json" >"$T/got"
}
got_is() { [ "$(tr '\n' '|' <"$T/got")" = "$1" ]; }
say() { papo bo say "$1" >/dev/null; }
mstatus() { # mstatus NAME JQ: the status tool's structuredContent, over 2026-07-28
	curl -s --max-time 10 "${URL[$1]}/mcp" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: status' \
		-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' |
		jq -e ".result.structuredContent | $2" >/dev/null
}

# 1. Between waits: bo speaks before the first and between two.
say "before the first wait"
mwait ana 5
check "the first wait returns what came before it" got_is "before the first wait|"
say "between two waits"
until_ok 5 "ana has bo's message before the next wait" mstatus ana '.unread == 1'
mwait ana 5
check "the next wait returns what came between: $(cat "$T/got")" got_is "between two waits|"
mwait ana 1
check "and nothing twice" got_is ""
# Nothing shows a pending wait, so its request is given 0.5 s to arrive.
(sleep 0.5; say "during a wait") &
mwait ana 10
wait $!
check "a pending wait returns what comes during it" got_is "during a wait|"

# 2. A restart: one message left unread before it, one while ana is down.
say "unread at the stop"
until_true 5 mstatus ana '.unread == 1' || fail "ana had one unread before the stop"
stop ana
say "while ana is down"
start ana
check "bo online again" until_true 15 online ana bo
check "the message sent while ana was down arrives" until_true 20 has_text ana "while ana is down"
mwait ana 5
check "after the restart a wait returns both, once, in order: $(tr '\n' '|' <"$T/got")" \
	got_is "unread at the stop|while ana is down|"
check "agents.json names the daemon's agent" jqt '.agents[] | select(.name == "")' "$T/ana/agents.json"
mwait ana 1
check "nothing again" got_is ""

# 3. /api/wake: once per burst, not while a wait is pending.
curl -s --max-time 30 "${URL[ana]}/api/wake?timeout_s=20&by=test" >"$T/wake1" &
w1=$!
sleep 2       # time tested: idle is 1.5 s without a wait (mcp_wake.c)
t0=$(date +%s%N)
say "wake me"
wait $w1
t1=$(date +%s%N)
check "a message to an idle agent wakes it: $(cat "$T/wake1")" jqt '.wake == true and .unread == 1 and .from == ["bo"] and (.text | test("wake me") and test("wait"))' "$T/wake1"
echo "wake: bo's say to the wake's answer: $(( (t1 - t0) / 1000000 )) ms"
check "status says the wake was not taken yet" mstatus ana '.wake.by == "test" and .wake.taken == false'
say "more of the same burst"
curl -s --max-time 10 "${URL[ana]}/api/wake?timeout_s=2&by=test" >"$T/wake2"
check "the same burst wakes no more: $(cat "$T/wake2")" jqt '.wake == false and .unread == 2' "$T/wake2"
mwait ana 5
check "wait gives the burst" got_is "wake me|more of the same burst|"
check "status says the wake was taken" mstatus ana '.wake.taken == true and .unread == 0'
# A pending wait: the message is its, no wake.
curl -s --max-time 30 "${URL[ana]}/api/wake?timeout_s=6&by=test" >"$T/wake3" &
w3=$!
# As above: 0.5 s for the wait's request to arrive first.
(sleep 0.5; say "for the pending wait") &
mwait ana 10
wait $w3
check "a pending wait takes the message" got_is "for the pending wait|"
check "and nothing wakes the agent: $(cat "$T/wake3")" jqt '.wake == false' "$T/wake3"

# 4. papo mcp in Claude Code: a fake inbox socket records what it gets.
SOCK=$T/inbox.sock
socat -u UNIX-LISTEN:"$SOCK",fork OPEN:"$T/inbox",creat,append 2>"$T/socat.err" &
echo $! >"$T/socat.pid"
until_true 5 test -S "$SOCK" || fail "the fake inbox did not listen"
coproc BR { PAPO_HOME=$T/ana CLAUDE_CODE_MESSAGING_SOCKET=$SOCK CLAUDE_CODE_MESSAGING_TOKEN=tok123 exec "$PAPO" mcp 2>"$T/bridge.err"; }
echo "$BR_PID" >"$T/bridge.pid"
echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wake-test","version":"1"}}}' >&"${BR[1]}"
IFS= read -r -t 10 -u "${BR[0]}" line || fail "papo mcp did not answer initialize"
sleep 2   # time tested: the agent idle (1.5 s without a wait) before the burst
for i in $(seq 1 20); do say "burst $i"; done
check "the inbox got a wake" until_true 10 grep -q '"type":"user"' "$T/inbox"
sleep 2   # time tested: no second wake comes for the same burst
check "one burst, one wake: $(grep -c '"type":"user"' "$T/inbox") posts" test "$(grep -c '"type":"user"' "$T/inbox")" -eq 1
check "the auth line first, with the token" jqt -s '.[0] == {"type":"auth","token":"tok123"}' "$T/inbox"
check "the wake names bo, the first words, and says to call wait" \
	jqt -s '.[1].message.role == "user" and (.[1].message.content | test("from bo") and test("burst 1") and test("wait"))' "$T/inbox"
echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${BR[1]}"
echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":5}}}' >&"${BR[1]}"
n=0
while IFS= read -r -t 10 -u "${BR[0]}" line; do
	echo "$line" >>"$T/bridge.out"
	if jq -e '.id == 2' <<<"$line" >/dev/null 2>&1; then
		n=$(jq '.result.structuredContent.messages | length' <<<"$line"); break
	fi
done
check "the woken agent's wait gives all 20: $n" test "$n" -eq 20
check "papo mcp passed no channel push to a client that declared none" \
	bash -c "! grep -q 'notifications/claude/channel' '$T/bridge.out'"
: >"$T/inbox"
# A wait pending through papo mcp: no wake.
echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":10}}}' >&"${BR[1]}"
sleep 2.5   # time tested: a wait pending longer than the idle 1.5 s
say "while papo mcp waits"
got3=
while IFS= read -r -t 12 -u "${BR[0]}" line; do
	if jq -e '.id == 3' <<<"$line" >/dev/null 2>&1; then
		got3=$(jq -r '.result.structuredContent.messages[0].text' <<<"$line"); break
	fi
done
check "the pending wait got it" test "$got3" = "while papo mcp waits"
sleep 2   # time tested: no wake comes for what the pending wait took
check "no wake while a wait was pending" test ! -s "$T/inbox"
exec {BR[1]}>&-
until_true 10 bash -c "! kill -0 $(cat "$T/bridge.pid") 2>/dev/null" || fail "papo mcp did not end"
rm -f "$T/bridge.pid"

# 5. papo hook.
hook() { # hook EVENT: papo hook with that event on stdin; out in $T/hook.out, err $T/hook.err
	echo "{\"hook_event_name\":\"$1\",\"session_id\":\"s-1\"}" |
		PAPO_HOME=$T/ana timeout 60 "$PAPO" hook >"$T/hook.out" 2>"$T/hook.err"
}
hook SessionStart
check "SessionStart with nothing waiting: exit 0, nothing said" test $? -eq 0 -a ! -s "$T/hook.out"
say "hello hooks"
until_true 5 mstatus ana '.unread == 1' || fail "one unread for the hooks"
hook UserPromptSubmit
check "UserPromptSubmit adds what waits as context" \
	jq -e '.hookSpecificOutput.hookEventName == "UserPromptSubmit" and (.hookSpecificOutput.additionalContext | test("hello hooks") and test("wait"))' "$T/hook.out"
# A pid file left by a hook long gone, naming another program now.
sleep 60 &   # not a wait: a process that is not a papo hook
other=$!
mkdir -p "$T/ana/hooks" && echo "$other" >"$T/ana/hooks/s-1.pid"
hook Stop
rc=$?
check "Stop: exit 2 for a waiting message" test "$rc" -eq 2
check "a stale pid file's process that is not a papo hook is left alone" kill -0 "$other"
kill "$other" 2>/dev/null; wait "$other" 2>/dev/null
check "Stop: the wake line on stderr" grep -q "hello hooks" "$T/hook.err"
mwait ana 2
check "the message is still wait's to give" got_is "hello hooks|"
# bo speaks to an idle agent (time tested: 1.5 s without a wait), once
# the hook's wake is pending.
( sleep 2; until_true 20 mstatus ana '.wake.waiting == true'
  date +%s%N >"$T/said"; say "wakes the stopped agent" ) &
hook Stop
rc=$?
t1=$(date +%s%N)
t0=$(cat "$T/said" 2>/dev/null || echo "$t1")
check "a Stop hook waiting in the background exits 2 when bo speaks" test "$rc" -eq 2
check "with bo's words" grep -q "wakes the stopped agent" "$T/hook.err"
echo "wake: a Stop hook ended $(( (t1 - t0) / 1000000 )) ms after bo's say was started"
mwait ana 2

# 6. Another agent (?agent=) is given messages apart; a damaged
# agents.json is kept aside.
mwait ana 0 other
say "for both agents"
mwait ana 5
check "the daemon's agent gets it" got_is "for both agents|"
mwait ana 5 other
check "so does the agent named other" got_is "for both agents|"
for i in $(seq 1 70); do
	code=$(curl -s -o /dev/null -w '%{http_code}' "${URL[ana]}/api/wake?timeout_s=0&agent=a$i")
	[ "$code" = 200 ] || break
done
check "a daemon keeps 64 agents: the 63rd new name is refused (503), not the 62nd: $i" test "$i" -eq 63 -a "$code" = 503
check "a bad agent name is a clear 400" test "$(curl -s -o /dev/null -w '%{http_code}' "${URL[ana]}/api/wake?timeout_s=0&agent=a%20b")" = 400
stop ana
echo '{not json' >"$T/ana/agents.json"
start ana
check "a damaged agents.json is kept aside" test -s "$T/ana/agents.json.bad"
check "and the daemon says so" grep -q "agents.json is damaged" "$T/ana.err"
check "the daemon serves" mstatus ana '.unread == 0'
mwait ana 1
check "and gives nothing old again (as a home from before agents.json)" got_is ""
say "after the damage"
mwait ana 5
check "what comes after is given" got_is "after the damage|"

kill "$(cat "$T/socat.pid")" 2>/dev/null; wait "$(cat "$T/socat.pid")" 2>/dev/null; rm -f "$T/socat.pid"
stop_all
finish
