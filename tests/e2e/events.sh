#!/usr/bin/env bash
# events.sh: GET /api/events and `papo tail` as a script sees them: a
# message, a receipt and presence changes arrive as server-sent events
# with ids; Last-Event-ID resumes with what was missed, once; tail
# follows, and comes back after the daemon restarts.
# Usage: events.sh PATH_TO_PAPO.
PAPO=${1:?usage: events.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"

# A client follows ana's events from the start.
curl -sN "${URL[ana]}/api/events" >"$T/events" 2>/dev/null &
echo $! >"$T/curl1.pid"
PAPO_HOME=$T/ana "$PAPO" tail >"$T/tail" 2>"$T/tail.err" &
echo $! >"$T/tail.pid"
PAPO_HOME=$T/ana "$PAPO" tail --json >"$T/tailj" 2>&1 &
echo $! >"$T/tailj.pid"
# Nothing shows that papo tail's stream is open while the room is empty:
# the two are given 0.5 s before bo comes.
sleep 0.5
start bo
check "bo online" until_true 15 online ana bo
papo bo say "hello ana" --json >/dev/null
papo ana say "hello bo" --json >/dev/null

ev_has() { grep -q -- "$1" "$T/events"; }
check "the stream opens with a retry hint" until_true 5 grep -q '^retry: [0-9]' "$T/events"
check "a presence event says bo is online" until_true 5 ev_has '"name":"bo","online":true'
check "a message event carries bo's text" until_true 5 ev_has '"text":"hello ana"'
check "and one carries what ana said herself" until_true 5 ev_has '"from":"ana".*"text":"hello bo"'
check "a receipt event says bo stored ana's message" until_true 5 ev_has '"by":"bo".*"state":"delivered"'
check "events are named" grep -q '^event: message$' "$T/events"
check "events are named" grep -q '^event: receipt$' "$T/events"
ids=$(grep '^id: ' "$T/events" | cut -d' ' -f2)
check "every event has an id: $ids" test "$(grep -c '^id: ' "$T/events")" -eq "$(grep -c '^event: ' "$T/events")"
check "ids are unique" test "$(sort <<<"$ids" | uniq -d | wc -l)" -eq 0
check "ids count up" test "$(sed 's/.*-//' <<<"$ids" | tr '\n' ' ')" = "$(seq -s ' ' 1 "$(wc -l <<<"$ids")") "

# Resuming: a client that saw the first event gets the rest, once.
first=$(head -1 <<<"$ids")
curl -sN --max-time 2 -H "Last-Event-ID: $first" "${URL[ana]}/api/events" >"$T/resumed"
check "the resumed stream lacks what the client had" bash -c "! grep -q '^id: $first\$' '$T/resumed'"
check "and has the message it missed, once" test "$(grep -c '"text":"hello ana"' "$T/resumed")" = 1
check "and every later event" test "$(grep -c '^id: ' "$T/resumed")" = $(( $(wc -l <<<"$ids") - 1 ))
# An id from before the daemon started (another run) replays everything kept.
curl -sN --max-time 2 -H "Last-Event-ID: 1-1" "${URL[ana]}/api/events" >"$T/old"
check "an id of another run replays all" test "$(grep -c '^id: ' "$T/old")" = "$(wc -l <<<"$ids")"

# tail prints the message as history does; --json prints every event.
check "tail prints bo's message" until_true 5 grep -qE '^[0-9-]+ [0-9:]+ [a-z2-7]{10} bo: hello ana$' "$T/tail"
check "tail --json prints the events" until_true 5 grep -q '"event":"receipt"' "$T/tailj"

# bo leaves: a presence event says so.
stop bo
check "a presence event says bo is offline" until_true 5 ev_has '"name":"bo","online":false'

# The daemon restarts: the stream is told to retry, and tail comes back
# and goes on (with a new HTTP port: it reads serve.json again).
stop ana
check "the stream ended when the daemon stopped" until_true 5 bash -c "! kill -0 $(cat "$T/curl1.pid") 2>/dev/null"
start ana
start bo
check "bo back" until_true 15 online ana bo
papo bo say "after the restart" --json >/dev/null
check "tail goes on after the restart" until_true 15 grep -q 'bo: after the restart$' "$T/tail"
check "and printed the first message once" test "$(grep -c 'bo: hello ana$' "$T/tail")" = 1
kill "$(cat "$T/tail.pid")" "$(cat "$T/tailj.pid")" 2>/dev/null
rm -f "$T/tail.pid" "$T/tailj.pid" "$T/curl1.pid"

# tail with no daemon says so; in a home with no room, how to get one.
expect 1 "tail in a home with no room" -- env PAPO_HOME="$T/nobody" "$PAPO" tail
has "$T/err" "has no room yet: join one" "tail says to join a room first"

# With a token the stream needs it too.
stop bo
stop ana
start ana --token s3cret-0123456789abcdefghijklmnopq
check "events need the token" test "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "${URL[ana]}/api/events")" = 401
check "and open with it" test "$(curl -sN -o /dev/null -w '%{http_code}' --max-time 1 -H 'Authorization: Bearer s3cret-0123456789abcdefghijklmnopq' "${URL[ana]}/api/events")" = 200
stop ana
expect 1 "tail without a daemon" -- env PAPO_HOME="$T/ana" "$PAPO" tail
has "$T/err" "no papo serve is running" "tail says no daemon runs"
finish
