#!/usr/bin/env bash
# lib.sh: what the end-to-end scripts share: temporary homes, starting and
# stopping real `papo serve` daemons on 127.0.0.1 with ports of their own
# choosing, waiting for conditions, and counting checks.  Source it after
# setting PAPO to the binary.  Needs curl and jq.
set -u
T=$(mktemp -d /tmp/papo-e2e.XXXXXX)
# Tests send traffic only to loopback and to namespaces they made: no LAN
# beacons and no asking a router for a port on this machine's own
# interfaces (lab.sh turns both on inside its namespaces).
export PAPO_LAN=off PAPO_PORTMAP=off
# The tests send far faster than an agent may (PAPO_RATE's default is
# 20/min,10): a rate no test reaches, unless a script sets its own
# (limits.sh does).
export PAPO_RATE=${PAPO_RATE:-1000000/s}
passed=0 failed=0
declare -A URL QPORT

cleanup() {
	local p
	for p in "$T"/*.pid; do
		[ -e "$p" ] && kill -KILL "$(cat "$p")" 2>/dev/null
	done
	wait 2>/dev/null
	# PAPO_TEST_KEEP=DIR: the daemons' logs are kept there (a failure's
	# story, with PAPO_LOG=debug).
	if [ -n "${PAPO_TEST_KEEP:-}" ]; then
		mkdir -p "$PAPO_TEST_KEEP" && cp "$T"/*.err "$PAPO_TEST_KEEP"/ 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT

ok()   { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
note() { echo "${0##*/}: $*"; }   # note TEXT: a line of the test's progress
is() { # is WANT GOT DESCRIPTION: with the start of $T/body, when there is one
	if [ "$2" = "$1" ]; then ok; else
		fail "$3: got '$2', wanted '$1'$([ -s "$T/body" ] &&
			printf ' (body: %s)' "$(head -c 300 "$T/body")")"; fi
}
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
	local what=$1; shift
	if "$@"; then ok; else fail "$what"; fi
}
finish() {
	# Under ASan+UBSan, a daemon's leak or error report fails the run.
	local f
	for f in "$T"/*.err; do
		[ -e "$f" ] || continue
		if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$f"; then
			fail "sanitizer report in $(basename "$f"): $(grep -m1 -E 'Sanitizer|runtime error' "$f")"
		fi
	done
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
# until_true SECONDS COMMAND...: polls every 0.1 s until the command succeeds.
until_true() {
	local deadline=$(( $(date +%s%N) + $1 * 1000000000 )); shift
	while ! "$@"; do
		[ "$(date +%s%N)" -gt "$deadline" ] && return 1
		sleep 0.1
	done
}
# until_ok SECONDS WHAT COMMAND...: a check that WHAT comes true (the
# command succeeds) within SECONDS.  This, not a fixed sleep, is how a
# script waits for something: a sleep long enough for a loaded machine
# is wasted time on an idle one, and a short one is a flake.  A sleep is
# left only where time itself is tested, with a comment saying so.
until_ok() {
	local s=$1 what=$2; shift 2
	if until_true "$s" "$@"; then ok; else fail "$what: not within $s s"; fi
}

# expect STATUS DESCRIPTION -- COMMAND...: runs it, keeps its stdout in
# $T/out and stderr in $T/err, and checks its exit status.
expect() {
	local want=$1 what=$2; shift 3
	"$@" >"$T/out" 2>"$T/err"
	local got=$?
	if [ "$got" -eq "$want" ]; then ok; else
		fail "$what: exit $got, wanted $want; stderr: $(cat "$T/err")"; fi
}
has() { # has FILE PATTERN DESCRIPTION
	if grep -q -E -- "$2" "$1"; then ok; else fail "$3: '$2' not in: $(cat "$1")"; fi
}
lines() { # lines FILE N DESCRIPTION
	local n; n=$(wc -l <"$1")
	if [ "$n" -eq "$2" ]; then ok; else fail "$3: $n lines, wanted $2: $(cat "$1")"; fi
}

home() { echo "$T/$1"; }
papo() { local n=$1; shift; PAPO_HOME=$T/$n "$PAPO" "$@"; }

# start NAME [serve args...]: starts a daemon in $T/NAME and waits for it.
# The QUIC port it picked is kept, so that a restart comes back on it.
start() {
	local n=$1; shift
	local listen=127.0.0.1:${QPORT[$n]:-0}
	rm -f "$T/$n/serve.json"
	PAPO_LAN=off PAPO_PORTMAP=off PAPO_HOME=$T/$n "$PAPO" serve --http 127.0.0.1:0 --listen "$listen" \
		--name "$n" "$@" >>"$T/$n.out" 2>>"$T/$n.err" </dev/null &
	echo $! >"$T/$n.pid"
	# START_WAIT: the seconds a start may take (20; more where a start
	# has much to do, a large log to read or cut).  A daemon that did
	# not start in time is killed, so that it cannot start later beside
	# what the test does next.
	if ! until_true "${START_WAIT:-20}" test -s "$T/$n/serve.json"; then
		fail "$n did not start in ${START_WAIT:-20} s: $(tail -3 "$T/$n.err")"
		crash "$n"
		return 1
	fi
	URL[$n]=$(jq -r .http "$T/$n/serve.json")
	QPORT[$n]=$(jq -r .quic "$T/$n/serve.json" | sed 's/.*://')
}
stop() { # stop NAME: SIGTERM; the daemon must end cleanly (exit 0)
	local pid rc; pid=$(cat "$T/$1.pid")
	kill -TERM "$pid" 2>/dev/null
	until_true 20 bash -c "! kill -0 $pid 2>/dev/null"
	wait "$pid" 2>/dev/null
	rc=$?
	[ "$rc" -eq 0 ] || fail "$1 exited with $rc on SIGTERM: $(tail -3 "$T/$1.err")"
	rm -f "$T/$1.pid"
}
stop_all() { # stop_all: stop for every daemon still running
	local p
	for p in "$T"/*.pid; do
		[ -e "$p" ] && stop "$(basename "$p" .pid)"
	done
}
crash() { # crash NAME: SIGKILL, as a power cut would
	local pid; pid=$(cat "$T/$1.pid")
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$T/$1.pid"
}
invite() { jq -r .invite "$T/$1/serve.json"; }
join() { # join NAME INVITE: a new member's home
	PAPO_HOME=$T/$1 "$PAPO" join "$2" --name "$1" >/dev/null
}
api() { local n=$1; shift; curl -sS --max-time 30 "${URL[$n]}$@"; }
# MCP over HTTP through curl, for the scripts that set M (the /mcp URL):
# rpc SID JSON [CURL ARGS] POSTs one message (no session header when SID
# is empty); the status in $code, the body in $T/body, headers in $T/hdr.
ACC='Accept: application/json, text/event-stream'
CT='Content-Type: application/json'
rpc() {
	local sid=$1 body=$2; shift 2
	code=$(curl -sS --max-time 40 -o "$T/body" -D "$T/hdr" -w '%{http_code}' \
		-H "$ACC" -H "$CT" ${sid:+-H "MCP-Session-Id: $sid"} --data-binary "$body" "$@" "$M")
}
jqt() { jq -e "$@" >/dev/null; }   # jqt FILTER [FILE]: jq as a test
# agent_wait NAME [JQ]: what NAME's agent is given by MCP's wait (revision
# 2026-07-28, no session; the daemon's default agent), one a line as JQ
# shows a message (.text): what it had not been given yet.
agent_wait() {
	local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
	curl -sS --max-time 20 -H "$ACC" -H "$CT" -H 'MCP-Protocol-Version: 2026-07-28' \
		-H 'Mcp-Method: tools/call' -H 'Mcp-Name: wait' \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{$meta,\"name\":\"wait\",\"arguments\":{\"timeout_s\":1}}}" \
		"${URL[$1]}/mcp" | jq -r ".result.structuredContent.messages[] | ${2:-.text}"
}
# post NAME ROUTE JSON: POSTs JSON to NAME's ROUTE; prints the HTTP
# status, keeps the body in $T/body.
post() {
	curl -s --max-time 30 -o "$T/body" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -d "$3" "${URL[$1]}$2"
}

# online A B: A sees B online.
online() {
	api "$1" /api/status | jq -e --arg b "$2" \
		'.members[] | select(.name == $b) | .online == true' >/dev/null
}
offline() { ! online "$@"; }
# texts NAME: the texts of NAME's history, oldest first, one a line.
texts() { api "$1" '/api/history?limit=500' | jq -r '.messages[].text'; }
has_text() { texts "$1" | grep -qxF -- "$2"; }
count() { api "$1" /api/status | jq .messages; }   # count NAME: its messages
# Many rooms in one daemon: NAME's list of rooms, a room's id by its
# name, a room's texts, and whether NAME sees MEMBER online in ROOM.
rooms_json() { api "$1" /api/rooms; }
room_id() { rooms_json "$1" | jq -r --arg n "$2" '.rooms[] | select(.name == $n) | .id'; }
texts_in() { api "$1" "/api/rooms/$2/history?limit=500" | jq -r '.messages[].text'; }
has_in() { texts_in "$1" "$2" | grep -qxF -- "$3"; }
online_in() {
	api "$1" "/api/rooms/$2/status" | jq -e --arg b "$3" \
		'.members[] | select(.name == $b) | .online == true' >/dev/null
}

# What the reliability tests check of a member once all have converged.
# log_ids NAME: the ids of the messages in NAME's log.jsonl, sorted.  While
# the daemon runs its last line may be half written; fromjson? leaves it out.
log_ids() { jq -R -r 'fromjson? | select(.t == "msg") | .id' "$T/$1/log.jsonl" | sort; }
# history_once NAME: /api/history (up to 500) has as many messages as the
# status counts, each once; the sorted ids are kept in $T/hist-NAME.
history_once() {
	local status want
	status=$(api "$1" /api/status)
	echo "$(basename "$0"): $1: $(jq -c '{messages, outbox}' <<<"$status")"
	api "$1" '/api/history?limit=500' | jq -r '.messages[].id' | sort >"$T/hist-$1"
	want=$(jq '[.messages, 500] | min' <<<"$status")
	check "$1: /api/history gives $want messages" test "$(wc -l <"$T/hist-$1")" -eq "$want"
	check "$1: /api/history has each once" test "$(uniq -d "$T/hist-$1" | wc -l)" -eq 0
}
# log_whole NAME: after a clean stop, NAME's log.jsonl is whole lines of
# msg and ack frames, each message once, every id of $T/promised in it,
# /api/history's ids ($T/hist-NAME) too, and the store never skipped a
# damaged line; the sorted ids are kept in $T/log-NAME.
log_whole() {
	local n=$1 log=$T/$1/log.jsonl bad dup miss skipped
	check "$n: log.jsonl ends with a newline" test "$(tail -c 1 "$log" | od -An -c | tr -d ' ')" = '\n'
	bad=$(jq -R -r 'try (fromjson | empty) catch .' "$log" 2>&1 | head -c 300)
	check "$n: every line of log.jsonl is JSON: $bad" test -z "$bad"
	bad=$(jq -r 'select(.t != "msg" and .t != "ack") | .t' "$log" | head -3)
	check "$n: every line is a msg or an ack: $bad" test -z "$bad"
	log_ids "$n" >"$T/log-$n"
	dup=$(uniq -d "$T/log-$n" | head -5 | tr '\n' ' ')
	check "$n: each message is in log.jsonl once: $dup" test -z "$dup"
	miss=$(comm -23 "$T/promised" "$T/log-$n" | head -5 | tr '\n' ' ')
	check "$n: no answered send is missing: $miss" test -z "$miss"
	check "$n: /api/history's ids are in log.jsonl" test -z "$(comm -23 "$T/hist-$n" "$T/log-$n")"
	skipped=$(grep -m 3 'line skipped' "$T/$n.err")
	check "$n: no damaged line in the middle of a log: $skipped" test -z "$skipped"
}
