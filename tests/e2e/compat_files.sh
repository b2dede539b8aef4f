#!/usr/bin/env bash
# compat_files.sh: shared files (issue 24) in a room with a member on the
# previous release (tests/compat/PREVIOUS), as users see it:
#  - new a shares a file with the text "here is x";
#  - old b, which knows nothing of files, gets the message: its history
#    holds the text, and the trailer shown as text, a line with
#    "papo-file:" and the file's name;
#  - new c gets the message naming the file, fetches it (from a: b holds
#    nothing) and its bytes are a's;
#  - a message from old b still reaches a and c.
# Usage: compat_files.sh PATH_TO_PAPO PREVDIR (where the previous release
# is built; PAPO_OLD=PATH uses that binary instead).
PAPO_NEW=${1:?usage: compat_files.sh PATH_TO_PAPO PREVDIR}
PREVDIR=${2:?usage: compat_files.sh PATH_TO_PAPO PREVDIR}
. "$(dirname "$0")/compat_lib.sh"

# named NAME REF: a message in NAME's history names REF.
named() {
	api "$1" '/api/history?limit=500' |
		jq -e --arg r "$2" '[.messages[].files[]?.ref] | index($r) != null' >/dev/null
}
state_is() {
	[ "$(curl -sS --max-time 30 "${URL[$1]}/api/blobs/$2/state" | jq -r '.state // empty')" = "$3" ]
}
# trailer NAME FILE: NAME's history has a line with papo-file: and FILE.
trailer() { texts "$1" | grep -F 'papo-file:' | grep -qF -- "$2"; }

as_new a c
as_old b
expect 0 "new a makes the room" -- papo a new --name a --room files
up a || exit 1
enter b "$(invite a)"; up b || exit 1
enter c "$(invite a)"; up c || exit 1
for m in a b c; do for o in a b c; do
	[ "$m" = "$o" ] || check "$m sees $o online" until_true 30 online "$m" "$o"
done; done

# New a shares x.bin (1 MiB: above PAPO_FILES_AUTO, fetched on request).
head -c $((1024 * 1024)) /dev/urandom >"$T/x.bin"
code=$(curl -sS --max-time 120 -o "$T/up" -w '%{http_code}' -X POST \
	-H 'Content-Type: application/octet-stream' --data-binary "@$T/x.bin" \
	"${URL[a]}/api/blobs?name=x.bin")
ref=$(jq -r '.ref // empty' "$T/up" 2>/dev/null)
check "new a takes the upload (got $code: $(cat "$T/up"))" test -n "$ref"
code=$(post a /api/send "{\"text\":\"here is x\",\"files\":[\"$ref\"]}")
check "new a sends the message naming it (got $code: $(cat "$T/body"))" test "${code:0:1}" = 2

# Old b: the text, and the trailer as text.
check "old b gets the text" until_true 30 bash -c \
	"curl -sS '${URL[b]}/api/history?limit=500' | jq -r '.messages[].text' | grep -qxF 'here is x'"
check "old b's history shows a papo-file: line naming x.bin: $(texts b | tr '\n' '|')" \
	trailer b x.bin
expect 0 "old b's papo history" -- papo b history -n 50
has "$T/out" "here is x" "old b's papo history shows the text"
has "$T/out" "x\.bin.*papo-file:|papo-file:.*x\.bin" "old b's papo history shows the trailer"

# New c: the file, fetched from a.
check "new c gets the message naming the file" until_true 30 named c "$ref"
check "new c's message has the text alone" until_true 10 has_text c "here is x"
curl -sS --max-time 30 -o /dev/null -X POST -H 'Content-Type: application/json' \
	-d '{}' "${URL[c]}/api/blobs/$ref/fetch"
if until_true 60 state_is c "$ref" here; then ok; else
	fail "new c's fetch: not here: $(curl -sS "${URL[c]}/api/blobs/$ref/state")"; fi
code=$(curl -sS --max-time 60 -o "$T/dl" -w '%{http_code}' "${URL[c]}/api/blobs/$ref")
check "new c serves the file (got $code)" test "$code" = 200
check "new c's bytes are a's" cmp -s "$T/dl" "$T/x.bin"
# Old b holds nothing of it: its store has no such file.
check "old b has no file stored" test -z "$(find "$T/b" -type f -name "$ref*")"

# Old b still talks to both.
says b "from old b"
check "new a gets old b's message" until_true 30 has_text a "from old b"
check "new c gets old b's message" until_true 30 has_text c "from old b"
check "no complaint in old b's log about the files message: $(complaints "$T/b.err")" \
	test -z "$(complaints "$T/b.err")"
stop_all
finish
