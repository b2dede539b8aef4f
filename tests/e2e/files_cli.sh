#!/usr/bin/env bash
# files_cli.sh: shared files through the commands (README.md, "A tour"):
# papo say --file of a small file and of a 5 MiB one, the other member's
# history showing the message and its files, the small one fetched there
# at once, papo get of the big one saved identical, a second papo get
# refusing to replace it, --file - from stdin, a reference naming
# nothing, nobody online holding a file, and PAPO_FILES_AUTO=0.
# Usage: files_cli.sh PATH_TO_PAPO.
PAPO=${1:?usage: files_cli.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

state() { api "$1" "/api/blobs/$2/state" | jq -r .state; }
# ref_of FILE NAME: the REF on papo say's line for the file NAME.
ref_of() { sed -n "s/^  file $2, [0-9]* bytes: \([a-z2-7]\{52\}\)$/\1/p" "$1"; }

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
check "ana and bo meet" until_true 30 online ana bo

printf 'a small file\n' >"$T/small.txt"
head -c $((5 * 1024 * 1024)) /dev/urandom >"$T/big.bin"
expect 0 "papo say --file small --file big TEXT" -- \
	papo ana say --file "$T/small.txt" --file "$T/big.bin" "two files"
cp "$T/out" "$T/said"
has "$T/said" '^[a-z2-7]{10} delivered to bo$' "say prints what it printed before"
has "$T/said" '^  file small.txt, 13 bytes: [a-z2-7]{52}$' "say prints the small file's line"
has "$T/said" '^  file big.bin, 5242880 bytes: [a-z2-7]{52}$' "say prints the big file's line"
SMALL=$(ref_of "$T/said" small.txt)
BIG=$(ref_of "$T/said" big.bin)

# bo's history: the message, its text alone, and its two files.
check "bo has the message" until_true 20 has_text bo "two files"
api bo '/api/history?limit=5' >"$T/hist"
check "bo's history: the message names both files" \
	jqt --arg s "$SMALL" --arg b "$BIG" \
	'.messages[-1].files | map(.ref) == [$s, $b]' "$T/hist"
check "bo's history: their names and sizes" \
	jqt '.messages[-1].files | map([.name, .size]) == [["small.txt", 13], ["big.bin", 5242880]]' "$T/hist"
expect 0 "papo history at bo" -- papo bo history -n 5
has "$T/out" "small.txt \(13 bytes(, [a-z]+)?\) $SMALL" "papo history shows the small file"
has "$T/out" "big.bin \(5.0 MiB, named\) $BIG" "papo history shows the big file, not fetched"

# The small file is fetched at once; the big one only when asked.
check "the small file is here at bo at once" until_true 20 eval 'test "$(state bo "$SMALL")" = here'
curl -sS "${URL[bo]}/api/blobs/$SMALL" -o "$T/small.got"
check "bo's copy of the small file is identical" cmp -s "$T/small.txt" "$T/small.got"
check "the big file is only named at bo" test "$(state bo "$BIG")" = named

mkdir -p "$T/dl"
(cd "$T/dl" && PAPO_HOME=$T/bo "$PAPO" get "$BIG") >"$T/get.out" 2>"$T/get.err"
rc=$?
check "papo get of the big file: exit 0, not $rc ($(cat "$T/get.err"))" test "$rc" -eq 0
check "papo get saves it identical, by its name" cmp -s "$T/big.bin" "$T/dl/big.bin"
check "no .part is left" test ! -e "$T/dl/big.bin.part"
has "$T/get.out" "^saved big.bin \(5.0 MiB\) to big.bin$" "papo get says where it saved"
has "$T/get.err" "100%" "papo get shows its progress (plain lines off a terminal)"
check "the big file is here at bo now" test "$(state bo "$BIG")" = here

(cd "$T/dl" && PAPO_HOME=$T/bo "$PAPO" get "$BIG") >"$T/get.out" 2>"$T/get.err"
rc=$?
check "a second papo get refuses to replace the file: exit 1, not $rc" test "$rc" -eq 1
has "$T/get.err" "exists" "... and says it exists"
check "... leaving it as it was" cmp -s "$T/big.bin" "$T/dl/big.bin"
expect 0 "papo get -o DIR saves by the file's name there" -- papo bo get "$SMALL" -o "$T/dl"
check "... identical" cmp -s "$T/small.txt" "$T/dl/small.txt"
ROOM=$(api bo /api/rooms | jq -r '.rooms[0].name')
expect 0 "papo get --room ROOM" -- papo bo get "$SMALL" -o "$T/dl/roomed.txt" --room "$ROOM"
check "... identical" cmp -s "$T/small.txt" "$T/dl/roomed.txt"
code=$(curl -sS -o "$T/body" -w '%{http_code}' "${URL[bo]}/api/rooms/$ROOM/blobs/$SMALL/state")
check "a file's state under /api/rooms/ROOM/: 200 ($code)" test "$code" = 200
expect 0 "papo get -o PATH --force" -- papo bo get "$BIG" -o "$T/dl/big.bin" --force
check "--force replaces it with the same bytes" cmp -s "$T/big.bin" "$T/dl/big.bin"

# What an interrupted papo get left in PATH.REF8.part is gone on from (a
# download from the start, appended, would not make the file).
PART="$T/dl/again.bin.${BIG:0:8}.part"
head -c 3000000 "$T/big.bin" >"$PART"
expect 0 "papo get over a .part left before" -- papo bo get "$BIG" -o "$T/dl/again.bin"
check "... goes on from it: the file is identical" cmp -s "$T/big.bin" "$T/dl/again.bin"
check "... and the .part is gone" test ! -e "$PART"

# A file from stdin, named by --name.
head -c 4000 /dev/urandom >"$T/piped.bin"
PAPO_HOME=$T/ana "$PAPO" say --file - --name piped.bin "from stdin" <"$T/piped.bin" >"$T/said" 2>"$T/err"
rc=$?
check "papo say --file - --name: exit 0, not $rc ($(cat "$T/err"))" test "$rc" -eq 0
has "$T/said" '^  file piped.bin, 4000 bytes: [a-z2-7]{52}$' "the piped file's line"
PIPED=$(ref_of "$T/said" piped.bin)
check "the piped file is here at bo" until_true 20 eval 'test "$(state bo "$PIPED")" = here'
expect 0 "papo get of the piped file" -- papo bo get "$PIPED" -o "$T/dl/piped.bin"
check "the piped file is identical" cmp -s "$T/piped.bin" "$T/dl/piped.bin"
expect 2 "--file - without --name" -- papo ana say --file - "x"
has "$T/err" "needs --name" "... says --name is needed"
expect 1 "a file that cannot be read" -- papo ana say --file "$T/missing" "x"
has "$T/err" "cannot read" "... says so"

# Through the API: a file only named is 404 with its state; ?fetch=1
# fetches it (202), its progress goes out on /api/events as "file"
# events, and once here it is served.
head -c $((1024 * 1024)) /dev/urandom >"$T/api.bin"
expect 0 "ana shares a file for the API" -- papo ana say --file "$T/api.bin" "by the API"
APIREF=$(ref_of "$T/out" api.bin)
check "bo has its message" until_true 20 has_text bo "by the API"
curl -sS -N "${URL[bo]}/api/events" >"$T/events" 2>/dev/null &
events=$!
code=$(curl -sS -o "$T/body" -w '%{http_code}' "${URL[bo]}/api/blobs/$APIREF")
check "a file only named: 404 ($code)" test "$code" = 404
check "... with its state and an error" jqt '.state == "named" and (.error | type == "string")' "$T/body"
code=$(curl -sS -o "$T/body" -w '%{http_code}' "${URL[bo]}/api/blobs/$APIREF?fetch=1")
check "?fetch=1 starts the fetch: 202 ($code: $(cat "$T/body"))" test "$code" = 202
check "... answering its state" jqt '.ref and .size == 1048576' "$T/body"
check "the fetched file is served" until_true 30 \
	bash -c "curl -sf -o $T/api.got ${URL[bo]}/api/blobs/$APIREF"
check "... identical" cmp -s "$T/api.bin" "$T/api.got"
check "the fetch went out on /api/events as file events" \
	until_true 10 grep -q '^event: file$' "$T/events"
kill "$events" 2>/dev/null
wait "$events" 2>/dev/null

# A reference no message names; a file nobody online holds.
NONE=$(printf 'a%.0s' $(seq 52))
expect 1 "papo get of a reference naming nothing" -- papo bo get "$NONE" -o "$T/dl/none"
has "$T/err" "names file $NONE" "... says no message names it"
head -c $((1024 * 1024)) /dev/urandom >"$T/later.bin"
expect 0 "ana shares one more file" -- papo ana say --file "$T/later.bin" "later"
LATER=$(ref_of "$T/out" later.bin)
check "bo has its message" until_true 20 has_text bo "later"
stop ana
check "bo sees ana gone" until_true 30 offline bo ana
expect 1 "papo get with no member online holding the file" -- papo bo get "$LATER" -o "$T/dl/later.bin"
has "$T/err" "no member online holds" "... says nobody online holds it"
check "... and saves nothing" test ! -e "$T/dl/later.bin"
start ana
check "ana comes back" until_true 30 online bo ana
expect 0 "papo get --wait once ana is back" -- papo bo get "$LATER" -o "$T/dl/later.bin" --wait
check "the file fetched once its holder came back is identical" cmp -s "$T/later.bin" "$T/dl/later.bin"

# PAPO_FILES_AUTO=0: not even a small file is fetched at once.
stop bo
PAPO_FILES_AUTO=0 start bo
check "bo is back, fetching nothing at once" until_true 30 online ana bo
printf 'tiny\n' >"$T/tiny.txt"
expect 0 "ana shares a tiny file" -- papo ana say --file "$T/tiny.txt" "tiny"
TINY=$(ref_of "$T/out" tiny.txt)
check "bo has its message" until_true 20 has_text bo "tiny"
sleep 2   # time tested: bo fetches nothing within 2 s
check "with PAPO_FILES_AUTO=0 the tiny file is only named at bo ($(state bo "$TINY"))" \
	test "$(state bo "$TINY")" = named
expect 0 "... and papo get fetches it" -- papo bo get "$TINY" -o "$T/dl/tiny.txt"
check "... identical" cmp -s "$T/tiny.txt" "$T/dl/tiny.txt"

stop_all
finish
