#!/usr/bin/env bash
# private.sh: private messages as three members see them
# (docs/PROTOCOL.md, "Private messages"): `papo say --to bo` is read by
# ana and bo only; carol, who stores and passes it on, holds nothing
# readable of it in her history, search, event stream or log; bo, away
# when it was sent, gets it from carol's copy; --public is the room's;
# MCP's send with to is private too; a private message needs an
# addressee, and one to a removed member is refused.
# Usage: private.sh PATH_TO_PAPO.
PAPO=${1:?usage: private.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

# ids NAME: the ids of NAME's history; search NAME WORDS: hit ids.
ids() { api "$1" '/api/history?limit=500' | jq -r '.messages[].id'; }
search() { api "$1" "/api/search?q=$2" | jq -r '.messages[].id'; }
in_log() { grep -q "\"id\":\"$2\"" "$T/$1/log.jsonl"; }
priv_of() { # priv_of NAME ID: "private text" of ID in NAME's history
	api "$1" '/api/history?limit=500' | jq -r --arg i "$2" \
		'.messages[] | select(.id == $i) | "\(.private) \(.text)"'
}
sees() { [ "$(priv_of "$1" "$2")" = "$3" ]; }   # sees NAME ID "PRIVATE TEXT"
hidden() { ! ids "$1" | grep -qx "$2"; }        # hidden NAME ID
lacks() { ! grep -q "$@"; }                     # lacks GREP-ARGS... FILE
file_is() { # file_is NAME ID FILENAME: ID's first file at NAME
	[ "$(api "$1" '/api/history?limit=500' | jq -r --arg i "$2" \
		'.messages[] | select(.id == $i) | .files[0].name // empty')" = "$3" ]
}

papo ana new --name ana >/dev/null
start ana
join bo "$(invite ana)"
join carol "$(invite ana)"
start bo
start carol
for m in bo carol; do
	check "ana sees $m online" until_true 20 online ana $m
	check "$m sees ana online" until_true 20 online $m ana
done
check "bo sees carol online" until_true 20 online bo carol
curl -sN "${URL[carol]}/api/events" >"$T/carol.events" 2>/dev/null &
curl -sN "${URL[bo]}/api/events" >"$T/bo.events" 2>/dev/null &

note "ana says to bo, privately"
expect 0 "papo say --to bo" -- papo ana say --to bo "zebra crossing at noon" --json
id=$(jq -r .id "$T/out")
check "the send has an id ($id)" test -n "$id"
check "bo's history has it, private, readable" \
	until_true 15 sees bo "$id" "true zebra crossing at noon"
is "true zebra crossing at noon" "$(priv_of ana "$id")" "ana reads her own"
check "carol stores it (in her log)" until_true 15 in_log carol "$id"
check "carol's log holds no word of it" lacks zebra "$T/carol/log.jsonl"
acked_by() { api ana '/api/history?limit=500' | jq -r --arg i "$1" \
	'[.messages[] | select(.id == $i) | .receipts[]? | select(.state == "delivered") | .by] | unique | join(",")'; }
acked_is() { [ "$(acked_by "$1")" = "$2" ]; }
until_true 10 acked_is "$id" bo
is bo "$(acked_by "$id")" "ana's receipts say delivered to bo, not to carol who cannot open it"
check "carol's history does not show it" hidden carol "$id"
check "carol's search finds nothing" test -z "$(search carol zebra)"
api bo "/api/search?q=zebra" >"$T/body"
is "$id" "$(search bo zebra)" "bo's search finds it"
is "$id" "$(search ana zebra)" "ana's search finds it"
check "bo's event stream had it" until_true 10 grep -q "zebra crossing" "$T/bo.events"
agent_wait bo '"\(.private) \(.text)"' >"$T/bo.agent"
has "$T/bo.agent" "^true zebra crossing at noon$" "bo's agent is given it by MCP wait, private"
# A public message after it: once carol's stream shows that, it would
# have shown the private one before it.
expect 0 "a room message" -- papo ana say "lunch is ready"
check "carol's stream has the room message" until_true 10 grep -q "lunch is ready" "$T/carol.events"
check "carol's stream has nothing of the private one" \
	lacks -e zebra -e "$id" "$T/carol.events"
agent_wait carol '"\(.private) \(.text)"' >"$T/carol.agent"
has "$T/carol.agent" "^false lunch is ready$" "carol's agent is given the room message"
check "carol's agent is given nothing of the private one" lacks -e zebra "$T/carol.agent"
expect 0 "papo history on bo" -- papo bo history
has "$T/out" "ana → bo \(private\): zebra crossing at noon" "bo's papo history marks it private"
expect 0 "papo history on carol" -- papo carol history
check "carol's papo history has no line of it" lacks -e zebra -e '→ bo' "$T/out"

note "a file with a private message is private too"
printf 'the vault code is 4411\n' >"$T/secret-plan.txt"
expect 0 "papo say --to bo --file" -- papo ana say --to bo --file "$T/secret-plan.txt" "the plan" --json
fid=$(jq -r .id "$T/out")
ref=$(jq -r '.files[0].ref' "$T/out")
check "the send names the file ($ref)" test "${#ref}" = 52
check "bo's history has the file" until_true 15 file_is bo "$fid" secret-plan.txt
check "carol stores the message" until_true 15 in_log carol "$fid"
check "carol's log names no file" lacks -e secret-plan -e "$ref" "$T/carol/log.jsonl"
expect 0 "bo gets the file" -- papo bo get "$ref" -o "$T/bo-plan.txt" --wait
check "bo's copy is the file" cmp -s "$T/secret-plan.txt" "$T/bo-plan.txt"
code=$(curl -s -o "$T/body" -w '%{http_code}' "${URL[carol]}/api/blobs/$ref/state")
is 404 "$code" "carol's daemon knows no such file"
check "carol holds no copy" test -z "$(ls "$T/carol/blobs" 2>/dev/null | grep -v '^\.' | grep "$ref")"

note "--public: addressed to bo, read by the room"
expect 0 "papo say --to bo --public" -- papo ana say --to bo --public "open note for bo" --json
pub=$(jq -r .id "$T/out")
check "carol reads the public one" \
	until_true 15 sees carol "$pub" "false open note for bo"
expect 2 "--public without --to is refused" -- papo ana say --public "x"
has "$T/err" "--public goes with --to" "the refusal says why"
code=$(post ana /api/send '{"text":"x","to":"bo","public":"yes"}')
is 400 "$code" "public must be a boolean"

note "the API's send with to is private"
code=$(post ana /api/send '{"text":"api private kiwi","to":"bo"}')
is 200 "$code" "POST /api/send with to"
kiwi=$(jq -r .id "$T/body")
check "bo has the API's private message" \
	until_true 15 sees bo "$kiwi" "true api private kiwi"
check "carol stores it" until_true 15 in_log carol "$kiwi"
check "carol's search finds no kiwi" test -z "$(search carol kiwi)"

note "bo away: he gets it from carol's copy"
stop bo
expect 0 "ana says to bo while he is away" -- papo ana say --to bo "mango delivery" --json
away=$(jq -r .id "$T/out")
check "carol stores it" until_true 15 in_log carol "$away"
stop ana
start bo
check "bo sees carol online" until_true 20 online bo carol
check "bo gets it from carol" \
	until_true 20 sees bo "$away" "true mango delivery"
check "carol still shows nothing of it" hidden carol "$away"
start ana
check "ana sees bo online" until_true 20 online ana bo

note "refusals"
code=$(post ana /api/send '{"text":"x","to":"nobody"}')
is 404 "$code" "a private message to no member"
expect 0 "ana removes carol" -- papo ana remove carol
code=$(post ana /api/send '{"text":"after removal","to":"carol"}')
check "a private message to removed carol is refused (got $code)" \
	test "$code" = 403 -o "$code" = 404
expect 0 "ana to bo after carol's removal" -- papo ana say --to bo "after the removal" --json
late=$(jq -r .id "$T/out")
check "bo reads it" until_true 15 sees bo "$late" "true after the removal"
check "carol holds nothing of it" lacks -e "$late" -e 'after the removal' "$T/carol/log.jsonl"

stop_all
expect 0 "papo history on bo, daemon stopped" -- papo bo history
# With the daemon stopped, the addressee is shown by its id.
has "$T/out" "ana → [a-z2-7]{52} \(private\): mango delivery" "offline history opens bo's private messages"
expect 0 "papo history on carol, daemon stopped" -- papo carol history
check "carol's offline history shows none" lacks -e zebra -e mango -e kiwi "$T/out"
finish
