#!/usr/bin/env bash
# files_guard.sh: shared files against what another member or a local
# user may plant (issue 37, items 3, 4 and 6), as users see them:
#  - papo get never writes through a link planted at its part, nor into
#    another user's file or an unrelated NAME.part, and still resumes
#    its own part;
#  - a name starting with '.' or '-' is saved only by -o; a format
#    character (U+202E) never reaches a name;
#  - phantom files: files nobody holds, named by one member's messages,
#    start at most 32 fetches at another member (the rest only named),
#    and those are dropped within a bound once a member said it holds
#    nothing (a minute; 8 s here, by papo-testing's
#    PAPO_TEST_UNOFFERED_MS); /api/send refuses a text that forges a
#    file's line;
#  - /api/blobs/REF without a room is the default room's, as ?room=
#    naming it;
#  - papo say --file refuses a FIFO at once, shares a /proc file whole;
#  - an empty file shared twice keeps each share's name;
#  - PAPO_FILES_AUTO=all shows as "all" in status.
# Usage: files_guard.sh PATH_TO_PAPO_TESTING.
PAPO=${1:?usage: files_guard.sh PATH_TO_PAPO_TESTING}
. "$(dirname "$0")/lib.sh"
export PAPO_TEST_UNOFFERED_MS=8000

state() { api "$1" "/api/blobs/$2/state" | jq -r .state; }
# ref_of FILE NAME: the REF on papo say's line for the file NAME.
ref_of() { sed -n "s/^  file $2, [0-9]* bytes: \([a-z2-7]\{52\}\)$/\1/p" "$1"; }
# upload NAME FILE SHOWN: NAME adds $T/FILE shown as SHOWN; prints its REF.
upload() {
	curl -sS --max-time 30 -X POST --data-binary "@$T/$2" \
		"${URL[$1]}/api/blobs?name=$(jq -rn --arg s "$3" '$s|@uri')" | jq -r .ref
}
fetching() { api "$1" /api/status | jq '.files.fetching | length'; }

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "ana and bo meet" until_true 30 online ana bo

# --- item 3: the part of papo get.
head -c 300000 /dev/urandom >"$T/notes.txt"
expect 0 "ana shares notes.txt" -- papo ana say --file "$T/notes.txt" "notes"
NOTES=$(ref_of "$T/out" notes.txt)
PART="notes.txt.${NOTES:0:8}.part"
mkdir -p "$T/shared"
echo "the victim's own file" >"$T/victim"
cp "$T/victim" "$T/victim.orig"
ln -s "$T/victim" "$T/shared/$PART"
check "bo has the message" until_true 20 has_text bo "notes"
(cd "$T/shared" && PAPO_HOME=$T/bo "$PAPO" get "$NOTES") >"$T/out" 2>"$T/err"
rc=$?
check "papo get with a link planted at its part: exit 1, not $rc" test "$rc" -eq 1
has "$T/err" "symbolic link" "... says the part is a link"
check "... the file the link points to is untouched" cmp -s "$T/victim" "$T/victim.orig"
check "... and nothing is saved" test ! -e "$T/shared/notes.txt"
rm "$T/shared/$PART"
# The name before issue 37 (NAME.part), planted: not touched at all.
ln -s "$T/victim" "$T/shared/notes.txt.part"
echo "an unrelated file of the user's" >"$T/mine.part.orig"
expect 0 "papo get with notes.txt.part planted" -- bash -c \
	"cd '$T/shared' && PAPO_HOME='$T/bo' '$PAPO' get $NOTES"
check "... saves the file identical" cmp -s "$T/notes.txt" "$T/shared/notes.txt"
check "... leaves the link's target untouched" cmp -s "$T/victim" "$T/victim.orig"
check "... and its own part is gone" test ! -e "$T/shared/$PART"
rm "$T/shared/notes.txt"
# Another user's file at the part: refused.
touch "$T/shared/$PART"
chown 65534 "$T/shared/$PART" 2>/dev/null
if [ "$(stat -c %u "$T/shared/$PART")" != "$(id -u)" ]; then
	expect 1 "papo get over another user's file at its part" -- bash -c \
		"cd '$T/shared' && PAPO_HOME='$T/bo' '$PAPO' get $NOTES"
	has "$T/err" "not a part papo get left" "... says it is not its part"
	check "... that file is left empty" test ! -s "$T/shared/$PART"
else
	echo "another user's part SKIPPED: chown needs root"
fi
rm -f "$T/shared/$PART"
# Its own part, from an interrupted papo get: gone on from.
head -c 100000 "$T/notes.txt" >"$T/shared/$PART"
expect 0 "papo get over its own part" -- bash -c \
	"cd '$T/shared' && PAPO_HOME='$T/bo' '$PAPO' get $NOTES"
check "... the file is identical" cmp -s "$T/notes.txt" "$T/shared/notes.txt"

# --- item 6: names.
echo "alias ls='rm -rf ~'" >"$T/rc"
for shown in .bashrc -rf; do
	ref=$(upload ana rc "$shown")
	check "a file named '$shown' is added" test ${#ref} = 52
	post ana /api/send "{\"text\":\"named $shown\",\"files\":[\"$ref\"]}" >/dev/null
	check "bo has the '$shown' message" until_true 20 has_text bo "named $shown"
	mkdir -p "$T/n$shown"
	(cd "$T/n$shown" && PAPO_HOME=$T/bo "$PAPO" get "$ref") >"$T/out" 2>"$T/err"
	rc=$?
	check "papo get of '$shown' without -o: exit 1, not $rc" test "$rc" -eq 1
	has "$T/err" "name you choose with -o PATH" "... says to give -o PATH"
	check "... saves nothing" test -z "$(ls -A "$T/n$shown")"
	expect 0 "papo get of '$shown' with -o" -- papo bo get "$ref" -o "$T/n$shown/chosen"
	check "... saves it there" cmp -s "$T/rc" "$T/n$shown/chosen"
done
bidi=$(printf 'photo\xe2\x80\xaegnp.exe')
ref=$(upload ana rc "$bidi")
check "a name with U+202E is added" test ${#ref} = 52
name=$(api ana "/api/blobs/$ref/state" | jq -r .name)
check "... named without it: '$name'" test "$name" = "photo_gnp.exe"

# --- item 4: forged file lines.
KEY=$(printf 'a%.0s' $(seq 52))
FORGED=$(printf 'look\n\n\xf0\x9f\x93\x8e x.txt (5 bytes, text/plain) papo-file:%s:%s' "$KEY" "$KEY")
code=$(post ana /api/send "$(jq -n --arg t "$FORGED" '{text: $t}')")
check "/api/send of a text forging a file's line: 400 ($code)" test "$code" = 400
check "... saying why" jqt '.error | test("name files")' "$T/body"
code=$(post ana /api/send "$(jq -n --arg t "$FORGED" '{text: ($t + "\nand more")}')")
check "a text with such a line inside it is sent ($code)" test "$code" = 200

# --- item 4: phantom fetches.  bo away, ana shares 48 small files in
# three messages, then loses them: bo comes back to 48 files nobody
# holds.
stop bo
phantoms=()
for m in 1 2 3; do
	refs=()
	for k in $(seq 16); do
		head -c 64 /dev/urandom >"$T/ph"
		r=$(upload ana ph "ph$m-$k.bin")
		refs+=("\"$r\"")
		phantoms+=("$r")
	done
	post ana /api/send "{\"text\":\"phantoms $m\",\"files\":[$(IFS=,; echo "${refs[*]}")]}" >/dev/null
done
# (lost while ana is stopped: her messages name files nobody holds, as
# a member's forged lines would)
stop ana
for r in "${phantoms[@]}"; do rm -f "$T/ana/blobs/$r"*; done
check "ana holds none of them now" test -z "$(for r in "${phantoms[@]}"; do ls "$T/ana/blobs/$r" 2>/dev/null; done)"
start ana
start bo
check "bo gets the three messages" until_true 30 has_text bo "phantoms 3"
sleep 2   # time tested: what bo fetches 2 s later
n=$(fetching bo)
check "bo fetches at most 32 of one member's files nobody offers ($n)" test "$n" -le 32 -a "$n" -ge 16
check "... the rest only named, counted in status" \
	jqt '.files.not_fetched >= 16' <<<"$(api bo /api/status)"
check "bo's status stays small ($(api bo /api/status | wc -c) bytes)" \
	test "$(api bo /api/status | wc -c)" -lt 30000
t_drop=$SECONDS
none_fetching() { test "$(fetching bo)" = 0; }
check "within 30 s (8 s in this build) the fetches nobody offers are dropped" until_true 30 none_fetching
echo "files_guard: dropped after $((SECONDS - t_drop)) s" >&2
check "... counted in status" jqt '.files.dropped >= 16' <<<"$(api bo /api/status)"
ref=$(api bo '/api/history?limit=50' | jq -r '[.messages[] | select(.text == "phantoms 1")][0].files[0].ref')
check "... such a file is only named again" test "$(state bo "$ref")" = named

# --- item 6: /api/blobs/REF and the room.
expect 0 "ana makes a second room" -- papo ana new --name ana2 --room second
printf 'in the second room\n' >"$T/second.txt"
expect 0 "ana shares a file in it" -- papo ana say --room second --file "$T/second.txt" "second"
SECOND=$(ref_of "$T/out" second.txt)
DEFAULT=$(api ana /api/rooms | jq -r '.rooms[] | select(.default) | .name')
code=$(curl -sS -o /dev/null -w '%{http_code}' "${URL[ana]}/api/blobs/$SECOND")
check "a second room's file without ?room: 404, as in the default room ($code)" test "$code" = 404
code=$(curl -sS -o /dev/null -w '%{http_code}' "${URL[ana]}/api/blobs/$SECOND?room=$DEFAULT")
check "... and with ?room= naming the default room: 404 ($code)" test "$code" = 404
code=$(curl -sS -o "$T/got" -w '%{http_code}' "${URL[ana]}/api/blobs/$SECOND?room=second")
check "... with ?room=second: 200 ($code), the file" test "$code" = 200
check "... identical" cmp -s "$T/second.txt" "$T/got"
code=$(curl -sS -o "$T/got" -w '%{http_code}' "${URL[ana]}/api/blobs/$NOTES")
check "a default room's file without ?room: 200 ($code)" test "$code" = 200
code=$(curl -sS -o "$T/got" -w '%{http_code}' "${URL[ana]}/api/blobs/$NOTES?room=$DEFAULT")
check "... and with ?room= naming it: 200 ($code)" test "$code" = 200
check "... identical" cmp -s "$T/notes.txt" "$T/got"

# --- item 6: what papo say --file reads.
mkfifo "$T/fifo"
timeout 10 env PAPO_HOME="$T/ana" "$PAPO" say --file "$T/fifo" "fifo" >"$T/out" 2>"$T/err"
rc=$?
check "papo say --file FIFO ends at once: exit 1, not $rc" test "$rc" -eq 1
has "$T/err" "not a regular file" "... saying it is not a regular file"
cat /proc/version >"$T/version"
expect 0 "papo say --file /proc/version" -- papo ana say --file /proc/version "proc"
has "$T/out" "^  file version, $(stat -c %s "$T/version") bytes: " "... shares it whole, not empty"

# --- item 6: an empty file shared twice.
: >"$T/first.txt"
: >"$T/second-empty.txt"
expect 0 "ana shares an empty first.txt" -- papo ana say --file "$T/first.txt" "empty one"
expect 0 "ana shares an empty second-empty.txt" -- papo ana say --file "$T/second-empty.txt" "empty two"
has "$T/out" "^  file second-empty.txt, 0 bytes: " "say names the second by its name"
EMPTY=$(ref_of "$T/out" second-empty.txt)
check "bo has the second message" until_true 20 has_text bo "empty two"
check "... naming second-empty.txt" jqt \
	'[.messages[] | select(.text == "empty two")][0].files[0].name == "second-empty.txt"' \
	<<<"$(api bo '/api/history?limit=20')"
mkdir -p "$T/empty"
expect 0 "papo get of the empty file at bo" -- bash -c \
	"cd '$T/empty' && PAPO_HOME='$T/bo' '$PAPO' get $EMPTY"
check "... saves it by the latest name" test -e "$T/empty/second-empty.txt" -a ! -s "$T/empty/second-empty.txt"

# --- item 6: PAPO_FILES_AUTO=all.
stop bo
PAPO_FILES_AUTO=all start bo
check "with PAPO_FILES_AUTO=all status says \"all\"" \
	jqt '.files.auto == "all"' <<<"$(api bo /api/status)"
stop bo
PAPO_FILES_AUTO=1M start bo
check "with PAPO_FILES_AUTO=1M status says 1048576" \
	jqt '.files.auto == 1048576' <<<"$(api bo /api/status)"

stop_all
finish
