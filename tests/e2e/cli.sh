#!/usr/bin/env bash
# cli.sh: papo new / join / invite as a person types them, in temporary
# PAPO_HOMEs.  Usage: cli.sh PATH_TO_PAPO.  Prints "N passed, N failed".
set -u
PAPO=${1:?usage: cli.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

export PAPO_LISTEN=127.0.0.1:7778
unset PAPO_NAME PAPO_HOME

# papo new prints an invite and keeps its files private.
export PAPO_HOME=$T/ana
expect 0 "new" -- "$PAPO" new --name ana --about "reviews C"
has "$T/out" '^papo1[a-z2-7]+$' "new prints the invite on a line of its own"
INVITE=$(grep -E '^papo1' "$T/out")
for f in identity room.json; do
	mode=$(stat -c %a "$PAPO_HOME/$f" 2>/dev/null)
	[ "$mode" = 600 ] && ok || fail "$f has mode '$mode', wanted 600"
done
mode=$(stat -c %a "$PAPO_HOME")
[ "$mode" = 700 ] && ok || fail "PAPO_HOME has mode $mode, wanted 700"

# new again adds a room beside the first (home/rooms/ID), which stays
# the home's first; --force replaces the first room instead.
expect 0 "new again adds a room" -- "$PAPO" new --name ana --room second
has "$T/out" 'new room created' "new says it made the room"
n=$(ls "$PAPO_HOME/rooms" | wc -l)
[ "$n" = 1 ] && ok || fail "rooms/ holds $n rooms, wanted 1"
mode=$(stat -c %a "$PAPO_HOME/rooms/$(ls "$PAPO_HOME/rooms")/room.json")
[ "$mode" = 600 ] && ok || fail "the second room.json has mode '$mode', wanted 600"
rm -rf "$PAPO_HOME/rooms"
expect 0 "new --force" -- "$PAPO" new --name ana --force
INVITE2=$(grep -E '^papo1' "$T/out")
[ "$INVITE" != "$INVITE2" ] && ok || fail "--force made the same room"
INVITE=$INVITE2

# invite prints the same room, the address given, one line.
expect 0 "invite" -- "$PAPO" invite
lines "$T/out" 1 "invite is one line"
[ "$(cat "$T/out")" = "$INVITE" ] && ok || fail "invite differs from new's"
expect 0 "invite --listen" -- "$PAPO" invite --listen 127.0.0.1:9999
[ "$(cat "$T/out")" != "$INVITE" ] && ok || fail "--listen did not change the invite"

# The invite printed by new joins, in another home.
export PAPO_HOME=$T/bo
expect 0 "join" -- "$PAPO" join "$INVITE" --name bo
has "$T/out" 'joined the room as bo' "join says what it did"
room_a=$(grep -o '"room":[[:space:]]*"[^"]*"' "$T/ana/room.json")
room_b=$(grep -o '"room":[[:space:]]*"[^"]*"' "$T/bo/room.json")
[ -n "$room_a" ] && [ "$room_a" = "$room_b" ] && ok || fail "rooms differ: $room_a / $room_b"
has "$T/bo/room.json" '"bootstrap":[[:space:]]*\[[[:space:]]*"127.0.0.1:7778"' "joiner keeps the inviter's address"
# The joiner's own invite is for the same room.
expect 0 "joiner's invite" -- "$PAPO" invite
INVITE_B=$(cat "$T/out")
export PAPO_HOME=$T/cy
expect 0 "join through the joiner" -- "$PAPO" join "$INVITE_B" --name cy
has "$T/cy/room.json" "$(echo "$room_a" | sed 's/[]["]/./g')" "third member in the same room"
# Joining again refuses without --force.
expect 1 "join again" -- "$PAPO" join "$INVITE" --name cy
has "$T/err" "already in room .*nothing to join" "second join of the same room says there is nothing to join"

# A mangled invite fails with exit 1 and a one-line reason.
export PAPO_HOME=$T/dee
mangle() { # mangle INVITE POS CHAR
	printf '%s%s%s' "${1:0:$2}" "$3" "${1:$(($2 + 1))}"
}
c=${INVITE:20:1}; r=a; [ "$c" = a ] && r=b
for bad in "$(mangle "$INVITE" 20 "$r")" "${INVITE:0:60}" "papo2${INVITE:5}" \
	"$(mangle "$INVITE" 30 1)" "$(mangle "$INVITE" 30 '!')" "" "   "; do
	expect 1 "mangled invite '$bad'" -- "$PAPO" join "$bad" --name dee
	lines "$T/err" 1 "mangled invite: one-line reason"
	has "$T/err" '^papo: invite ' "mangled invite: says what is wrong with the invite"
done
expect 1 "typo" -- "$PAPO" join "$(mangle "$INVITE" 20 "$r")" --name dee
has "$T/err" 'mistyped or cut short' "a typo is called a typo"
expect 1 "bad char" -- "$PAPO" join "$(mangle "$INVITE" 30 1)" --name dee
has "$T/err" "character 31, '1'" "a bad character is pointed at"
[ ! -e "$T/dee/room.json" ] && ok || fail "a failed join left a room behind"

# Usage errors exit 2; --help exits 0 for every command.
expect 2 "no command" -- "$PAPO"
expect 2 "unknown command" -- "$PAPO" frobnicate
has "$T/err" "unknown command 'frobnicate'" "unknown command is named"
expect 2 "new without --name" -- "$PAPO" new
has "$T/err" 'usage: papo new' "usage shown"
expect 2 "join without invite" -- "$PAPO" join --name x
expect 2 "unknown option" -- "$PAPO" new --name x --colour blue
expect 2 "option of another command" -- "$PAPO" invite --name x
expect 2 "stray argument" -- "$PAPO" invite extra
for cmd in new join invite; do
	expect 0 "$cmd --help" -- "$PAPO" "$cmd" --help
	has "$T/out" "usage: papo $cmd" "$cmd --help shows its usage"
done
expect 0 "help" -- "$PAPO" --help
has "$T/out" 'papo join INVITE' "help lists the commands"

# Bad names and settings are refused with the reason.
expect 1 "long name" -- "$PAPO" new --name "$(printf 'x%.0s' $(seq 65))"
has "$T/err" 'at most 64' "name limit is stated"
expect 1 "control char in name" -- "$PAPO" new --name "$(printf 'a\tb')"
expect 1 "bad listen" -- env PAPO_LISTEN=nowhere "$PAPO" new --name x
has "$T/err" 'not ADDR:PORT' "listen format is stated"
expect 2 "bad PAPO_LOG" -- env PAPO_LOG=loud "$PAPO" invite
expect 0 "PAPO_NAME" -- env PAPO_NAME=eve PAPO_HOME="$T/eve" "$PAPO" new
has "$T/eve/room.json" '"name":[[:space:]]*"eve"' "PAPO_NAME names the member"

# A room named by its maker: the name travels in the invite, to every
# joiner and the joiners' own invites; without one, papo-XXXXXXXX.
expect 0 "new --room" -- env PAPO_HOME="$T/rn1" "$PAPO" new --name ana --room "équipe ops"
has "$T/rn1/room.json" '"room":[[:space:]]*"équipe ops"' "the maker's room.json has the name"
RINV=$(grep -E '^papo1' "$T/out")
expect 0 "join a named room" -- env PAPO_HOME="$T/rn2" "$PAPO" join "$RINV" --name bo
has "$T/rn2/room.json" '"room":[[:space:]]*"équipe ops"' "the joiner's room.json has the name"
expect 0 "the joiner's invite" -- env PAPO_HOME="$T/rn2" "$PAPO" invite
expect 0 "join through the joiner" -- env PAPO_HOME="$T/rn3" "$PAPO" join "$(cat "$T/out")" --name cy
has "$T/rn3/room.json" '"room":[[:space:]]*"équipe ops"' "the name passes on through the joiner's invite"
expect 0 "PAPO_ROOM" -- env PAPO_HOME="$T/rn4" PAPO_ROOM=ops "$PAPO" new --name ana
has "$T/rn4/room.json" '"room":[[:space:]]*"ops"' "PAPO_ROOM names the room"
expect 1 "a room name of 65 bytes" -- env PAPO_HOME="$T/rn5" "$PAPO" new --name ana --room "$(printf 'r%.0s' $(seq 65))"
has "$T/err" 'room name must be 1 to 64 bytes' "the room name's limit is stated"
expect 1 "a control character in the room name" -- env PAPO_HOME="$T/rn5" "$PAPO" new --name ana --room "$(printf 'a\tb')"
has "$T/err" 'room name must be' "the room name's rule is stated"
[ ! -e "$T/rn5/room.json" ] && ok || fail "a refused room name left a room"

# --force while papo serve runs on the home is refused, and nothing
# changes; once it stopped, the old room's files go aside, said where,
# and the daemon starts in the new room with none of the old messages.
start fx || exit 1
check "fx's message stored" test "$(post fx /api/send '{"text":"old room"}')" = 200
cp "$T/fx/room.json" "$T/fx-room.json"
for cmd in "join $INVITE --name fx --force" "new --name fx --force"; do
	expect 1 "$cmd while serving" -- env PAPO_HOME="$T/fx" "$PAPO" $cmd
	has "$T/err" "papo serve \(pid [0-9]+\) is running on $T/fx; stop it first" "$cmd: a running daemon is named"
	check "$cmd while serving: room.json unchanged" cmp -s "$T/fx/room.json" "$T/fx-room.json"
done
stop fx
expect 0 "join --force after the stop" -- env PAPO_HOME="$T/fx" "$PAPO" join "$INVITE" --name fx --force
has "$T/err" "old room's files were moved into $T/fx/old-[a-z2-7]{8}-[0-9]{8}-[0-9]{6}\$" "join --force says where the old room went"
aside=$(ls -d "$T"/fx/old-* 2>/dev/null | head -1)
for f in room.json log.jsonl; do
	check "the old room's $f is aside" test -s "$aside/$f"
done
check "the old room's log is gone from the home" test ! -e "$T/fx/log.jsonl"
check "the old room.json is the one aside" cmp -s "$aside/room.json" "$T/fx-room.json"
check "identity stays" test -s "$T/fx/identity"
start fx || exit 1
check "the new room has none of the old room's messages" test -z "$(texts fx)"
stop fx
expect 0 "new --force" -- env PAPO_HOME="$T/fx" "$PAPO" new --name fx --force
has "$T/err" "moved into $T/fx/old-" "new --force says where the old room went"
check "two rooms aside" test "$(ls -d "$T"/fx/old-* | wc -l)" -eq 2
# Joining the room one is already in is not a --force matter.
expect 1 "join one's own room again" -- env PAPO_HOME="$T/bo" "$PAPO" join "$INVITE" --name bo --force
has "$T/err" "already in room .*nothing to join" "joining one's own room says so"
check "joining one's own room moved nothing aside" test -z "$(ls -d "$T"/bo/old-* 2>/dev/null)"

# papo say and history as a person uses them (issue 22, item 22).
start sx || exit 1
export PAPO_HOME=$T/sx
printf 'first line\nsecond line\n' | "$PAPO" say - >"$T/out" 2>"$T/err"
check "say - exits 0" test $? -eq 0
is_text() { [ "$(api sx '/api/history?limit=1' | jq -r '.messages[-1].text')" = "$1" ]; }
check "say - sends what stdin holds, one final newline taken off" is_text "$(printf 'first line\nsecond line')"
expect 0 "history" -- "$PAPO" history -n 1
has "$T/out" '^[0-9-]{10} [0-9:]{8} [a-z2-7]{10} sx: first line$' "history prints a text's first line on the message's line"
has "$T/out" '^    second line$' "history prints the next lines whole, indented"
lines "$T/out" 2 "a message of two lines takes two lines"
expect 1 "say of 50,000 bytes" -- "$PAPO" say "$(head -c 50000 /dev/zero | tr '\0' a)"
is_err() { [ "$(cat "$T/err")" = "$1" ]; }
check "the limit named is the text's, with what to do: $(cat "$T/err")" is_err "papo: the text is 50000 bytes; at most 49152 (48 KiB) are allowed: share a longer one as a file (papo say --file PATH)"
head -c 70000 /dev/zero | tr '\0' a | "$PAPO" say - >/dev/null 2>"$T/err"
check "the limit named for 70,000 bytes from stdin is the text's: $(cat "$T/err")" is_err "papo: the text is 70000 bytes; at most 49152 (48 KiB) are allowed: share a longer one as a file (papo say --file PATH)"
expect 1 "say of 49,000 control characters" -- "$PAPO" say "$(head -c 49000 /dev/zero | tr '\0' '\001')"
has "$T/err" '^papo: the text is 49000 bytes, but written out \(49000 control characters as 6-byte .u escapes.*send it with fewer control characters, or as a file \(papo say --file PATH\)$' \
	"49,000 control characters: the CLI says why and what to do"
{ printf '{"text":"'; head -c 49000 /dev/zero | tr '\0' '\001'; printf '"}'; } >"$T/ctl.json"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$T/ctl.json" "${URL[sx]}/api/send")
check "49,000 raw control characters through the API: 413, not 500 ($code $(cat "$T/body"))" test "$code" = 413
has "$T/body" '"error":"text is 49000 bytes, but written out \(49000 control characters' "the API's 413 says why"
check "no message of control characters stored" test "$(api sx /api/status | jq .messages)" = 1
expect 0 "status" -- "$PAPO" status
has "$T/out" '; keeping at most [0-9]+ messages a minute from any other member$' "status's limits line is a whole sentence"
stop sx
# README's tour names only members it made.
made=$(grep -oE -- '--name [a-z]+' "$(dirname "$0")/../../README.md" | awk '{print $2}' | sort -u | tr '\n' ' ')
for n in $(grep -oE 'papo (remove|admin) [a-z]+|"name":"[a-z]+"' "$(dirname "$0")/../../README.md" | grep -oE '[a-z]+"?$' | tr -d '"' | sort -u); do
	case " $made " in *" $n "*) ok ;; *) fail "README's tour names $n, a member it never made ($made)" ;; esac
done
# Hints: a home with no room is told how to get one, not to start serve.
expect 1 "say in a home with no room" -- env PAPO_HOME="$T/noroom" "$PAPO" say hi
has "$T/err" "^papo: $T/noroom has no room yet: join one with 'papo join INVITE --name NAME' \(or make one with 'papo new --name NAME'\), then start 'papo serve'\$" \
	"a home with no room says how to join one first"

# Commands that need a room say how to make one.
export PAPO_HOME=$T/nobody
expect 1 "invite without room" -- "$PAPO" invite
has "$T/err" "papo new --name NAME" "missing room explained"
# A damaged room file is named, not trusted.
mkdir -p "$T/broken" && echo '{"room":' >"$T/broken/room.json"
expect 1 "damaged room.json" -- env PAPO_HOME="$T/broken" "$PAPO" invite
has "$T/err" 'room.json is damaged' "damaged file named"

# The front (docs/ARCHITECTURE.md, "The front program"): papo runs the
# commands that only talk to a running daemon itself, and hands the
# others to papo-full, which it finds beside it.  A papo copied alone
# still runs status, say, hook and history while the daemon runs; a
# command it hands on (history with the daemon stopped reads the disk)
# says what it misses.  The daemon is papo to ps, and serve.json's pid
# is the process that was started.
unset PAPO_HOME
papo fr new --name fr >/dev/null
start fr
mkdir -p "$T/alone" && cp "$PAPO" "$T/alone/papo"
expect 0 "status from a papo with no papo-full" -- env PAPO_HOME="$T/fr" "$T/alone/papo" status
has "$T/out" '^me: fr ' "status from the front names this member"
expect 0 "say from a papo with no papo-full" -- env PAPO_HOME="$T/fr" "$T/alone/papo" say "from the front"
echo '{"hook_event_name":"UserPromptSubmit","prompt":"hi"}' >"$T/event"
expect 0 "hook from a papo with no papo-full" -- bash -c \
    'PAPO_HOME=$1 exec "$2" hook <"$3"' _ "$T/fr" "$T/alone/papo" "$T/event"
expect 1 "version from a papo with no papo-full" -- "$T/alone/papo" version
has "$T/err" "^papo: cannot run papo-full \\($T/alone/papo-full, or $T/alone/.*/papo-full\\): " "a command handed on says where papo-full was looked for"
expect 0 "history from a papo with no papo-full" -- env PAPO_HOME="$T/fr" "$T/alone/papo" history
has "$T/out" 'fr: from the front' "history from the front shows its say"
[ "$(cat "/proc/$(cat "$T/fr.pid")/comm")" = papo ] && ok ||
    fail "the daemon is '$(cat "/proc/$(cat "$T/fr.pid")/comm")' to ps, not papo"
[ "$(jq .pid "$T/fr/serve.json")" = "$(cat "$T/fr.pid")" ] && ok ||
    fail "serve.json's pid is not the started process's"
stop fr
expect 1 "history of a stopped daemon from a papo with no papo-full" -- env PAPO_HOME="$T/fr" "$T/alone/papo" history
has "$T/err" "^papo: cannot run papo-full " "history with the daemon stopped is papo-full's"
expect 0 "history of a stopped daemon through papo-full" -- env PAPO_HOME="$T/fr" "$PAPO" history
has "$T/out" 'fr: from the front' "papo-full reads the front's say from the disk"

finish
