#!/usr/bin/env bash
# files_api.sh: shared files through the HTTP API (README.md, "Over
# HTTP"; docs/FILES.md): uploads of 0 B, 1 B, 300 KiB and 20 MiB read
# back identical; byte ranges (first byte, across a chunk's edge, last
# byte, open-ended, suffix) and one outside the file (416); an upload
# cut short leaves no spool; a file damaged on disk has its download
# cut short; a reference naming nothing is 404; an upload over the
# room's quota is 413 and kept nowhere; a send naming files badly sends
# nothing.
# Usage: files_api.sh PATH_TO_PAPO.
PAPO=${1:?usage: files_api.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"

# upload NAME FILE [QUERY]: POSTs FILE to NAME's /api/blobs (streamed by
# curl); the status in $code, the answer in $T/body.
upload() {
	code=$(curl -sS --max-time 120 -o "$T/body" -w '%{http_code}' -T "$2" \
		-X POST "${URL[$1]}/api/blobs?name=$(basename "$2")${3:-}")
}
# get NAME REF [CURL ARGS]: GET /api/blobs/REF into $T/got, headers in
# $T/hdr, the status in $code.
get() {
	local n=$1 ref=$2; shift 2
	code=$(curl -sS --max-time 120 -o "$T/got" -D "$T/hdr" -w '%{http_code}' \
		"$@" "${URL[$n]}/api/blobs/$ref")
}
spool_empty() { [ -z "$(ls -A "$T/$1/spool" 2>/dev/null)" ]; }

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana

# Files of every size that matters: none, one byte, more than one chunk
# (256 KiB), and many chunks.
: >"$T/zero.bin"
printf 'x' >"$T/one.bin"
head -c $((300 * 1024)) /dev/urandom >"$T/mid.bin"
head -c $((20 * 1024 * 1024)) /dev/urandom >"$T/big.bin"
declare -A REF
for f in zero one mid big; do
	upload ana "$T/$f.bin"
	check "$f.bin: uploaded, 201 ($code: $(head -c 200 "$T/body"))" test "$code" = 201
	REF[$f]=$(jq -r .ref "$T/body")
	check "$f.bin: its answer names it and its size" \
		jqt --arg n "$f.bin" --argjson s "$(stat -c %s "$T/$f.bin")" \
		'.name == $n and .size == $s and (.ref | test("^[a-z2-7]{52}$")) and (.type | type == "string")' "$T/body"
	get ana "${REF[$f]}"
	check "$f.bin: read back, 200 ($code)" test "$code" = 200
	check "$f.bin: read back identical" cmp -s "$T/$f.bin" "$T/got"
done
check "the spool is empty once the node took the files" spool_empty ana
has "$T/hdr" '^Accept-Ranges: bytes' "a file says it takes ranges"
has "$T/hdr" "^Content-Disposition: attachment; filename=\"big.bin\"; filename\*=UTF-8''big.bin" \
	"a file comes as an attachment with its name"
has "$T/hdr" '^Content-Length: 20971520' "a file's length is said"

# A type given with the upload is the one it is served with.
printf 'hello\n' >"$T/note.txt"
upload ana "$T/note.txt" '&type=text/plain'
check "a typed upload: 201 ($code)" test "$code" = 201
get ana "$(jq -r .ref "$T/body")"
has "$T/hdr" '^Content-Type: text/plain' "a file is served with its type"

# Ranges of the 300 KiB file (307,200 bytes; its chunks meet at 262,144).
M=${REF[mid]} SIZE=307200
range() { # range DESCRIPTION HEADER FIRST LAST: 206, Content-Range, the bytes
	get ana "$M" -H "Range: $2"
	check "$1: 206 ($code)" test "$code" = 206
	has "$T/hdr" "^Content-Range: bytes $3-$4/$SIZE" "$1: its Content-Range"
	tail -c +$(($3 + 1)) "$T/mid.bin" | head -c $(($4 - $3 + 1)) >"$T/want"
	check "$1: the bytes asked" cmp -s "$T/want" "$T/got"
}
range "the first byte" "bytes=0-0" 0 0
range "the middle, across a chunk's edge" "bytes=262000-263000" 262000 263000
range "the last byte" "bytes=307199-307199" 307199 307199
range "open-ended" "bytes=100000-" 100000 307199
range "a suffix" "bytes=-5000" 302200 307199
range "past the end, cut to it" "bytes=300000-999999" 300000 307199
get ana "$M" -H "Range: bytes=307200-"
check "a range outside the file: 416 ($code)" test "$code" = 416
has "$T/hdr" "^Content-Range: bytes \*/$SIZE" "416 says the file's size"
get ana "$M" -H "Range: bytes=0-1,5-6"
check "several ranges: the whole file, 200 ($code)" test "$code" = 200
check "several ranges: the whole file" cmp -s "$T/mid.bin" "$T/got"

# A reference that names nothing.
NONE=$(printf 'a%.0s' $(seq 52))
get ana "$NONE"
check "a reference naming nothing: 404 ($code)" test "$code" = 404
check "... with an error" jqt '.error | type == "string"' "$T/got"
code=$(curl -sS -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/blobs/$NONE/state")
check "its state: 404 ($code)" test "$code" = 404
code=$(curl -sS -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/blobs/not-a-ref")
check "a malformed reference: 400 ($code)" test "$code" = 400
code=$(curl -sS -o "$T/body" -w '%{http_code}' "${URL[ana]}/api/blobs/${REF[mid]}/state")
check "a file held here: its state, 200 ($code)" test "$code" = 200
check "... here, with its size" jqt '.state == "here" and .size == 307200' "$T/body"
code=$(curl -sS -o "$T/body" -w '%{http_code}' -X POST "${URL[ana]}/api/blobs?type=text/plain" --data-binary x)
check "an upload with no name: 400 ($code)" test "$code" = 400

# A send naming the files, then sends naming them badly: nothing sent.
n0=$(count ana)
code=$(post ana /api/send "{\"text\":\"four files\",\"files\":[\"${REF[zero]}\",\"${REF[one]}\",{\"ref\":\"${REF[mid]}\",\"name\":\"renamed.bin\"},\"${REF[big]}\"]}")
check "a send naming four files: 200 ($code: $(head -c 200 "$T/body"))" test "$code" = 200
check "its answer carries the files" jqt '.files | length == 4' "$T/body"
api ana '/api/history?limit=1' >"$T/hist"
check "history: the message's text is without the lines naming the files" \
	jqt '.messages[-1].text == "four files"' "$T/hist"
check "history: its files, with the name given" \
	jqt '[.messages[-1].files[].name] == ["zero.bin", "one.bin", "renamed.bin", "big.bin"]' "$T/hist"
n1=$(count ana)
check "the send is stored" test "$n1" -eq $((n0 + 1))
code=$(post ana /api/send '{"text":"x","files":"not an array"}')
check "files not an array: 400 ($code)" test "$code" = 400
code=$(post ana /api/send '{"text":"x","files":[7]}')
check "a file that is no reference: 400 ($code)" test "$code" = 400
code=$(post ana /api/send "{\"text\":\"x\",\"files\":[{\"ref\":\"${REF[one]}\",\"size\":1}]}")
check "a file object with an unknown field: 400 ($code)" test "$code" = 400
code=$(post ana /api/send "{\"text\":\"x\",\"files\":[\"$NONE\"]}")
check "a reference the room does not hold: 404 ($code: $(cat "$T/body"))" test "$code" = 404
check "no bad send was stored" test "$(count ana)" -eq "$n1"

# A file damaged on disk: the read that finds it cuts the connection, so
# that the client sees a short answer (curl: exit 18), never a whole one.
head -c 1000000 /dev/urandom >"$T/damaged.bin"
upload ana "$T/damaged.bin"
DREF=$(jq -r .ref "$T/body")
check "the file to damage is stored in blobs/" test -f "$T/ana/blobs/$DREF"
printf '\377\377\377\377' | dd of="$T/ana/blobs/$DREF" bs=1 seek=600000 conv=notrunc 2>/dev/null
curl -sS -o "$T/got" "${URL[ana]}/api/blobs/$DREF" 2>/dev/null
rc=$?
check "a damaged file's download is cut: curl exit 18, not $rc" test "$rc" -eq 18
check "... before its end" test "$(stat -c %s "$T/got")" -lt 1000000
check "the daemon says why in its log" grep -q "its download is cut" "$T/ana.err"

# A client killed mid-upload leaves no spool behind.
mkfifo "$T/fifo"
(head -c $((2 * 1024 * 1024)) /dev/urandom; sleep 60) >"$T/fifo" &   # not a wait: holds the upload open
writer=$!
curl -sS -T - -X POST "${URL[ana]}/api/blobs?name=cut.bin" <"$T/fifo" >/dev/null 2>&1 &
client=$!
check "a slow upload is spooled as it comes" \
	until_true 20 bash -c "[ \"\$(cat $T/ana/spool/* 2>/dev/null | wc -c)\" -ge 1048576 ]"
kill -KILL "$client"
kill "$writer" 2>/dev/null
wait "$client" "$writer" 2>/dev/null
check "the client killed mid-upload leaves the spool empty" until_true 10 spool_empty ana
check "the daemon still serves" until_true 5 bash -c "curl -sf ${URL[ana]}/healthz >/dev/null"
stop ana

# A room whose quota is 1 MiB: a 2 MiB upload is refused, and kept
# nowhere.
PAPO_HOME=$T/q "$PAPO" new --name q >/dev/null
PAPO_FILES_QUOTA=1M start q
head -c $((2 * 1024 * 1024)) /dev/urandom >"$T/over.bin"
upload q "$T/over.bin"
check "an upload over the quota: 413 ($code: $(cat "$T/body"))" test "$code" = 413
check "... says why" jqt '.error | test("quota|limit")' "$T/body"
check "... leaves the spool empty" spool_empty q
check "... and no file of its size anywhere in the home" \
	test -z "$(find "$T/q" -type f -size +1000k)"
upload q "$T/mid.bin"
check "a file inside the quota still passes: 201 ($code)" test "$code" = 201
stop q

finish
