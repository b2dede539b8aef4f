#!/usr/bin/env bash
# newcomer.sh: what a newcomer hit in a day with papo (issue 37), as they
# see it at the command line, each fixed:
#  - a text that starts with '-' is a text (item 9); a blank one is not
#    sent, a reply to an id nobody wrote is refused, a typo gets a "did
#    you mean"; completion offers the daemon's rooms and members (item
#    24);
#  - --token leaves no token in /proc/PID/cmdline (item 2); the CLI's
#    token error names PAPO_TOKEN (item 24);
#  - a second room needs no --name again (item 21); status --room prints
#    that room's fingerprint (item 12); --room takes the start of a name
#    in any case (item 24);
#  - papo tail prints the last N, then what comes, labelled by room when
#    it follows several (item 13);
#  - papo rename: the other member learns the new name (item 15);
#  - the daemon's log says which room a line is about, its banner a line
#    a room (item 20);
#  - papo doctor checks the ports the running daemon uses (item 17);
#  - leaving a room and joining it again gives this member's own earlier
#    messages back (item 10);
#  - a newer invite for a room the home holds takes the newer key into
#    it, and papo serve starts again (item 5);
#  - papo history, and history -q, with the daemon stopped print what
#    they print with it running (item 18).
# Usage: newcomer.sh PATH_TO_PAPO
PAPO=${1:?usage: newcomer.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

TOKEN=s3cret-t0ken-0123456789abcdefghij
papo ana new --name ana >/dev/null
start ana --token "$TOKEN" || { finish; exit 1; }
export PAPO_TOKEN=$TOKEN
api() { local n=$1; shift; curl -sS --max-time 30 -H "Authorization: Bearer $TOKEN" "${URL[$n]}$@"; }

# --- item 2: the token is not in the daemon's command line.
pid=$(cat "$T/ana.pid")
check "--token is not left in /proc/PID/cmdline" \
	bash -c "! tr '\\0' ' ' </proc/$pid/cmdline | grep -qF $TOKEN"
expect 1 "the CLI without PAPO_TOKEN" -- env -u PAPO_TOKEN PAPO_HOME="$T/ana" "$PAPO" status
has "$T/err" "set PAPO_TOKEN" "the token error names PAPO_TOKEN"

# --- item 9 and 24: texts, replies, typos.
expect 0 "papo say '- item one' (a Markdown list)" -- papo ana say "- item one"
expect 0 "papo say -- '-n 5'" -- papo ana say -- "-n 5"
expect 0 "papo say '-> arrow'" -- papo ana say "-> arrow"
last_texts() { api ana '/api/history?limit=3' | jq -r '.messages[].text'; }
check "the three texts are sent as written" test "$(last_texts | tr '\n' '|')" = "- item one|-n 5|-> arrow|"
expect 1 "a blank text" -- papo ana say "   "
has "$T/err" "only blank space" "a blank text is not sent, and the CLI says why"
check "... nothing sent" test "$(last_texts | tail -1)" = "-> arrow"
expect 1 "a reply to an id nobody wrote" -- papo ana say "x" --reply-to abcdefghij
has "$T/err" "no message abcdefghij in this room to reply to" "the unknown reply id is refused"
expect 2 "a mistyped command" -- papo ana sya hi
has "$T/err" "did you mean 'papo say'" "a typo gets the nearest command"
lines "$T/err" 1 "... in one line, not the whole usage"
expect 2 "a mistyped option" -- papo ana say hi --too bo
has "$T/err" "did you mean '--to'" "a mistyped option gets the nearest option"
expect 2 "an unknown option" -- papo ana say hi --zzzzzz
has "$T/err" "goes after '--'" "an unknown option says how to send a text that starts with '-'"

# --- item 21, 12, 24: a second room.
expect 0 "papo new --room Second-Review without --name" -- papo ana new --room Second-Review
has "$T/out" "you are ana" "the new room takes the name this member has"
fp1=$(papo ana status | sed -n 's/^room: .*fingerprint \([a-z2-7]*\).*/\1/p')
fp2=$(papo ana status --room Second-Review | sed -n 's/^room: .*fingerprint \([a-z2-7]*\).*/\1/p')
check "status --room prints that room's fingerprint ($fp1, $fp2)" test -n "$fp2" -a "$fp1" != "$fp2"
expect 0 "--room takes the start of a name in any case" -- papo ana say "in second" --room second
check "... the message is in that room" until_true 5 has_in ana Second-Review "in second"

# --- item 13: papo tail.
papo ana tail -n 2 >"$T/tail1" 2>&1 &
tp=$!
papo ana tail -n 2 --all-rooms >"$T/tail2" 2>&1 &
tp2=$!
# Each prints its last 2 once its event stream is open.
tails_open() { [ "$(grep -c . "$T/tail1")" -ge 2 ] && [ "$(grep -c . "$T/tail2")" -ge 2 ]; }
until_ok 10 "both tails print their last 2" tails_open
papo ana say "live" >/dev/null
papo ana say "live there" --room Second-Review >/dev/null
check "tail -n 2 prints the last 2, then the new one" until_true 10 bash -c \
	"grep -c . $T/tail1 | grep -qx 3 && grep -q 'ana: -n 5\$' $T/tail1 && grep -q 'ana: -> arrow\$' $T/tail1 && grep -q 'ana: live\$' $T/tail1"
check "tail --all-rooms labels each line with its room" until_true 10 bash -c \
	"grep -q '^\\[Second-Review\\] .*ana: live there\$' $T/tail2 && grep -q '^\\[papo-[a-z2-7]*\\] .*ana: live\$' $T/tail2"
kill "$tp" "$tp2" 2>/dev/null
wait "$tp" "$tp2" 2>/dev/null

# --- item 15 and 20: a second member, a rename, the log's rooms.
join bo "$(invite ana)"
start bo || { finish; exit 1; }
check "ana sees bo" until_true 20 bash -c "curl -s -H 'Authorization: Bearer $TOKEN' '${URL[ana]}/api/status' | jq -e '.members[] | select(.name == \"bo\" and .online)' >/dev/null"
expect 0 "papo rename" -- papo bo rename bob
has "$T/out" "bo is now bob" "rename says what changed"
check "ana learns bob's new name" until_true 20 bash -c "curl -s -H 'Authorization: Bearer $TOKEN' '${URL[ana]}/api/status' | jq -e '.members[] | select(.name == \"bob\")' >/dev/null"
papo bo say "from bob" >/dev/null
check "bob's new message bears his new name at ana" until_true 10 bash -c \
	"curl -s -H 'Authorization: Bearer $TOKEN' '${URL[ana]}/api/history?limit=5' | jq -e '.messages[] | select(.text == \"from bob\" and .from == \"bob\")' >/dev/null"
has "$T/ana.err" "^papo: info: room papo-[a-z2-7]+: " "ana's log names the room of a room's line"

# --- item 24: completion offers the rooms and members the daemon knows.
COMPFILE=$(cd "$(dirname "$0")/../../dist/completions" && pwd)/papo.bash
comp() { # comp WORD...: what bash completes after them, one a line
	PATH=$(dirname "$PAPO"):$PATH PAPO_HOME=$T/ana bash -c \
	    '. "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _papo; printf "%s\n" "${COMPREPLY[@]}"' \
	    "$COMPFILE" "$@"
}
comp papo say hi --room '' >"$T/comp1"
check "bash completes --room with the rooms' names: $(tr '\n' ' ' <"$T/comp1")" grep -qx Second-Review "$T/comp1"
comp papo admin '' >"$T/comp2"
check "bash completes admin with the members' names: $(tr '\n' ' ' <"$T/comp2")" grep -qx bob "$T/comp2"

# --- item 17: doctor checks the ports in use (--http 127.0.0.1:0 here).
expect 0 "papo doctor with the daemon on ports of its own choosing" -- papo ana doctor
check "... reports nothing broken" bash -c "! grep -qiE '^(fail|broken|error)' $T/out"

# --- item 10: leave, join again, own messages back.
for i in 1 2 3 4; do papo bo say "bob's own $i" >/dev/null; done
ana_owns() { test "$(texts ana | grep -c "^bob's own [1-4]\$")" = 4; }
check "ana holds bob's four" until_true 20 ana_owns
ROOM=$(papo bo rooms --json | jq -r '.rooms[0].id')
expect 0 "bo leaves the room" -- papo bo leave "$ROOM"
expect 0 "bo joins it again" -- papo bo join "$(papo ana invite)" --name bob
owns() { test "$(texts bo | grep -c "^bob's own [1-4]\$")" = 4; }
check "bo's own earlier messages come back" until_true 30 owns

# --- item 5: a newer invite for the room held.
stop bo
expect 0 "ana rotates the key while bo is away" -- papo ana rotate
papo ana say "after the rotation" >/dev/null
NEW=$(papo ana invite)
expect 0 "bo joins the newer invite of the room his home holds" -- papo bo join "$NEW"
check "bo's home has no second folder of that room" test ! -d "$T/bo/rooms/$ROOM"
start bo || { finish; exit 1; }
check "bo's daemon starts and reads what was said under the new key" until_true 30 has_text bo "after the rotation"
check "... with his history kept" has_text bo "bob's own 1"
before=$(find "$T/bo" -maxdepth 2 -type d | sort)
papo cy new --name cy >/dev/null
expect 1 "bo joins a room under a name too long" -- papo bo join "$(papo cy invite)" --name "$(printf 'b%.0s' $(seq 100))"
check "a refused join leaves no folder" test "$(find "$T/bo" -maxdepth 2 -type d | sort)" = "$before"

# --- item 18: history with the daemon stopped, as with it running.
papo ana history -n 5 >"$T/h_on"
papo ana history -q own -n 2 >"$T/q_on"
papo ana history -n 2 --json >"$T/j_on"
stop_all
expect 0 "papo history with the daemon stopped" -- papo ana history -n 5
# (the room's key changes, lines with " -- ", are the running daemon's)
grep -v '^[0-9-]* [0-9:]* -- ' "$T/h_on" >"$T/h_on_msgs"
check "... prints the messages it printed running" bash -c "cmp -s $T/out $T/h_on_msgs || { diff $T/out $T/h_on_msgs >&2; false; }"
expect 0 "papo history -q with the daemon stopped" -- papo ana history -q own -n 2
check "... finds what it found running, with the hint that pages back" \
	bash -c "cmp -s $T/out $T/q_on && grep -q '^(earlier ones: add --before' $T/out"
expect 0 "papo history --json with the daemon stopped" -- papo ana history -n 2 --json
check "... the same messages" test "$(jq -c '[.messages[] | {id, from, ts, text}]' "$T/out")" = "$(jq -c '[.messages[] | {id, from, ts, text}]' "$T/j_on")"
expect 1 "--all-rooms with the daemon stopped" -- papo ana history -q own --all-rooms
has "$T/err" "needs the daemon running" "... says it needs the daemon"

# --- item 20: a daemon in two rooms says which in its banner, a line a room.
: >"$T/ana.out"
start ana --token "$TOKEN" || { finish; exit 1; }
has "$T/ana.out" "^room: Second-Review, fingerprint [a-z2-7]{8}, as ana; 'papo invite --room Second-Review' prints its invite\$" \
	"the banner names the second room"
has "$T/ana.out" "^room: papo-[a-z2-7]{8}, fingerprint [a-z2-7]{8}, as ana; " "... and the first"
stop ana
finish
