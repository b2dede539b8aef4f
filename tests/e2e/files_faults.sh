#!/usr/bin/env bash
# files_faults.sh: shared files (issue 24) when things go wrong, as users
# see them through the HTTP API.  Each case has a room of its own:
#  1 bad:     a holder that serves chunks that do not verify (papo-testing,
#             PAPO_TEST_BAD_CHUNKS=1): nothing of it is taken, nothing
#             half-written is served; the honest author back, the file
#             comes whole;
#  2 quota:   PAPO_FILES_QUOTA below a file: the upload is refused (413)
#             and leaves nothing; a fetch of it fails naming the limit;
#  3 full:    the fetcher's PAPO_HOME on a 6 MiB tmpfs, a 10 MiB file: the
#             fetch fails saying the disk is full, no file is left, the
#             daemon goes on; the tmpfs grown, the fetch is tried again by
#             itself and completes (root for the mount; else that case
#             alone is skipped, saying so);
#  4 relay:   the author offline, another member holding it: fetched from
#             that member;
#  5 nobody:  nobody online holds it: the fetch waits, saying so, and goes
#             on by itself when the author comes back;
#  6 unknown: references that name nothing, or are malformed: 404/400
#             with a clear error; a send naming one sends nothing;
#  7 twice:   two uploads of one file at once: two references, both read
#             back identical and fetched by another member;
#  8 removed: a removed member gets neither the messages nor the files
#             shared after its removal, and its fetch of an older file
#             does not complete (its connections are refused);
#  9 resume:  kill -9 in the middle of a 200 MiB fetch: the state right
#             after the restart shows the chunks on disk, the fetch goes
#             on by itself from them, and the file is identical (first, a
#             16 MiB upload must take under 10 s: uploads once crawled at
#             8 KiB a spin of the HTTP loop, 5e1afde).
# Usage: files_faults.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING [CASE...]
# (every case but resume when none is named; tests/CMakeLists.txt runs
# resume as a test of its own).
PAPO=${1:?usage: files_faults.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING [CASE...]}
PAPO_T=${2:?usage: files_faults.sh PATH_TO_PAPO PATH_TO_PAPO_TESTING [CASE...]}
shift 2
CASES=${*:-bad quota full relay nobody unknown twice removed}
. "$(dirname "$0")/lib.sh"

# The tmpfs of case 3 is unmounted before lib.sh's cleanup removes $T.
MOUNTS=()
unmount_all() {
	local p m
	for p in "$T"/*.pid; do
		[ -e "$p" ] && kill -KILL "$(cat "$p")" 2>/dev/null
	done
	wait 2>/dev/null
	for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
	MOUNTS=()
}
trap 'unmount_all; cleanup' EXIT

# start_t NAME [serve args...]: NAME's daemon is papo-testing.
start_t() { PAPO=$PAPO_T start "$@"; }
# mkfile NAME MIB: $T/NAME, MIB MiB of random bytes.
mkfile() { head -c "$(($2 * 1024 * 1024))" /dev/urandom >"$T/$1"; }
# upload NAME FILE: NAME shares $T/FILE; its reference is printed (the
# answer is in $T/up, the status in $T/upcode).
upload() {
	curl -sS --max-time 120 -o "$T/up" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/octet-stream' \
		--data-binary "@$T/$2" "${URL[$1]}/api/blobs?name=$2" >"$T/upcode"
	jq -r '.ref // empty' "$T/up" 2>/dev/null
}
# share NAME FILE TEXT: NAME uploads $T/FILE and sends TEXT naming it;
# the reference is in $ref.
share() {
	local code
	ref=$(upload "$1" "$2")
	if [ -z "$ref" ]; then
		fail "$1 could not upload $2: $(cat "$T/upcode") $(cat "$T/up")"
		return 1
	fi
	code=$(post "$1" /api/send "{\"text\":\"$3\",\"files\":[\"$ref\"]}")
	[ "${code:0:1}" = 2 ] || { fail "$1 could not send '$3': $code $(cat "$T/body")"; return 1; }
}
# named NAME REF: a message in NAME's history names REF.
named() {
	api "$1" '/api/history?limit=500' |
		jq -e --arg r "$2" '[.messages[].files[]?.ref] | index($r) != null' >/dev/null
}
# fstate NAME REF: the file's state JSON at NAME (/api/blobs/REF/state).
fstate() { curl -sS --max-time 30 "${URL[$1]}/api/blobs/$2/state"; }
state_of() { fstate "$1" "$2" | jq -r '.state // empty'; }
state_is() { [ "$(state_of "$1" "$2")" = "$3" ]; }
# fetch NAME REF: POST /api/blobs/REF/fetch; the status is printed.
fetch() {
	curl -s --max-time 30 -o "$T/body" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -d '{}' \
		"${URL[$1]}/api/blobs/$2/fetch"
}
# same NAME REF FILE: GET /api/blobs/REF at NAME is 200 with $T/FILE's bytes.
same() {
	local code
	code=$(curl -s --max-time 120 -o "$T/dl" -w '%{http_code}' "${URL[$1]}/api/blobs/$2")
	[ "$code" = 200 ] && cmp -s "$T/dl" "$T/$3"
}
# complete NAME REF: the complete blob REF is in NAME's home (any room).
complete() { [ -n "$(find "$T/$1" -type f -name "$2" 2>/dev/null)" ]; }
not() { ! "$@"; }
# homefiles NAME: the files of NAME's home where an upload's bytes could
# be left (the spool, the rooms' blob stores), sorted; the state files
# beside them come and go on their own (CI once caught agents.json
# written meanwhile, and once a NAME.json.tmp rewrite in flight).
homefiles() { find "$T/$1" -type f \( -path '*/spool/*' -o -path '*/blobs/*' \) | sort; }
# wait_state SECONDS NAME REF STATE DESCRIPTION: NAME's file REF comes to
# STATE in time; else a failure showing the state it has.
wait_state() {
	if until_true "$1" state_is "$2" "$3" "$4"; then ok; else
		fail "$5: not $4 after $1 s: $(fstate "$2" "$3")"; fi
}
# error_is NAME REF REGEX: the state's error at NAME matches REGEX.
error_is() { fstate "$1" "$2" | jq -e --arg re "$3" '.error | test($re; "i")' >/dev/null; }
named_both() { named "$1" "$2" && named "$1" "$3"; }
# room3 A B C: A makes a room, B and C join by A's invite; all online.
room3() {
	papo "$1" new --name "$1" >/dev/null
	start "$1" || return 1
	join "$2" "$(invite "$1")"
	join "$3" "$(invite "$1")"
}
# all_online NAME...: each sees every other online.
all_online() {
	local m o
	for m; do for o; do
		[ "$m" = "$o" ] || check "$m sees $o online" until_true 30 online "$m" "$o"
	done; done
}

case_bad() {
	echo "== 1: a holder sending wrong chunks"
	room3 a1 b1 c1 || return
	start_t b1 && start c1 || return
	all_online a1 b1 c1
	mkfile f1 3
	share a1 f1 "one" || return
	check "b1 gets the message naming the file" until_true 30 named b1 "$ref"
	check "c1 gets the message naming the file" until_true 30 named c1 "$ref"
	fetch b1 "$ref" >/dev/null
	wait_state 60 b1 "$ref" here "b1 (honest yet) fetches the file"
	# b1 now serves what it holds, every chunk spoiled.
	stop b1
	PAPO_TEST_BAD_CHUNKS=1 start_t b1 || return
	check "c1 sees the lying b1 online" until_true 30 online c1 b1
	stop a1
	check "c1 sees a1 offline" until_true 30 offline c1 a1
	code=$(fetch c1 "$ref")
	check "c1's fetch is taken (got $code: $(cat "$T/body"))" test "${code:0:1}" = 2
	check "a chunk from b1 does not verify (c1.err or b1.err says 'does not match')" \
		until_true 60 grep -q 'does not match' "$T/c1.err" "$T/b1.err"
	# The fetch settles: it waits for an honest holder.
	wait_state 30 c1 "$ref" waiting "c1's fetch waits, the liar dropped"
	echo "what the logs say: $(grep -h -m1 'does not match' "$T/c1.err" "$T/b1.err")"
	check "the file is not here at c1" test "$(state_of c1 "$ref")" != here
	code=$(curl -s --max-time 30 -o "$T/body" -w '%{http_code}' "${URL[c1]}/api/blobs/$ref")
	check "GET of the file at c1 is 404 while only the liar holds it (got $code)" test "$code" = 404
	check "c1 has no complete blob $ref" not complete c1 "$ref"
	start a1 || return
	wait_state 90 c1 "$ref" here "c1 completes once a1 is back"
	check "c1's bytes are a1's" same c1 "$ref" f1
}

case_quota() {
	echo "== 2: a file larger than the limit"
	papo a2 new --name a2 >/dev/null
	PAPO_FILES_QUOTA=1M start a2 || return
	mkfile f2 2
	local before after
	before=$(api a2 /api/status | jq -r .files.bytes)
	homefiles a2 >"$T/a2.files"
	ref=$(upload a2 f2)
	check "a 2 MiB upload under a 1M quota is 413 (got $(cat "$T/upcode"))" \
		test "$(cat "$T/upcode")" = 413
	check "the 413 says the limit: $(cat "$T/up")" \
		jqt '.error | test("limit")' "$T/up"
	check "no reference is given" test -z "$ref"
	after=$(api a2 /api/status | jq -r .files.bytes)
	check "files.bytes unchanged ($before then $after)" test "$before" = "$after"
	check "the quota shows on status" test "$(api a2 /api/status | jq -r .files.quota)" = 1048576
	homefiles a2 >"$T/a2.after"
	check "no file is left behind in a2's home:$(comm -13 "$T/a2.files" "$T/a2.after" | tr '\n' ' ')" \
		cmp -s "$T/a2.files" "$T/a2.after"
	# Now a2 without the quota shares it; b2 with the quota fetches it.
	stop a2
	start a2 || return
	join b2 "$(invite a2)"
	PAPO_FILES_QUOTA=1M start b2 || return
	all_online a2 b2
	share a2 f2 "two" || return
	check "b2 gets the message" until_true 30 named b2 "$ref"
	fetch b2 "$ref" >/dev/null
	wait_state 30 b2 "$ref" failed "b2's fetch fails"
	check "its error names the limit: $(fstate b2 "$ref" | jq -r .error)" \
		error_is b2 "$ref" limit
	check "b2 has no complete blob $ref" test -z "$(find "$T/b2" -type f -name "$ref*" ! -name '*.meta')"
}

case_full() {
	echo "== 3: a disk that fills mid-transfer"
	if [ "$(id -u)" != 0 ]; then
		echo "case full SKIPPED: mounting a tmpfs needs root (CI runs as root)"
		return
	fi
	mkdir -p "$T/c3"
	if ! mount -t tmpfs -o size=6m tmpfs "$T/c3"; then
		fail "cannot mount a tmpfs on $T/c3"
		return
	fi
	MOUNTS+=("$T/c3")
	papo a3 new --name a3 >/dev/null
	start a3 || return
	join c3 "$(invite a3)"
	start c3 || return
	all_online a3 c3
	mkfile f3 10
	share a3 f3 "three" || return
	check "c3 gets the message" until_true 30 named c3 "$ref"
	fetch c3 "$ref" >/dev/null
	wait_state 60 c3 "$ref" failed "c3's fetch fails"
	local e; e=$(fstate c3 "$ref" | jq -r '.error // empty')
	echo "c3's error: $e"
	check "its error says the disk is full (or the limit): '$e'" \
		grep -qiE 'full|space|limit|quota' <<<"$e"
	check "... and that it is tried again by itself: '$e'" \
		grep -q 'tried again every 30 s' <<<"$e"
	check "c3 has no complete blob $ref" test -z "$(find "$T/c3" -type f -name "$ref")"
	check "c3 still answers /api/status" jqt '.files' <<<"$(api c3 /api/status)"
	post a3 /api/send '{"text":"after the full disk"}' >/dev/null
	check "c3 still gets messages" until_true 30 has_text c3 "after the full disk"
	# Room on the disk again: the fetch goes on by itself (issue 37).
	mount -o remount,size=64m "$T/c3"
	wait_state 90 c3 "$ref" here "once the disk has room, c3's fetch completes by itself"
	check "... identical" same c3 "$ref" f3
	stop c3
	umount "$T/c3" && MOUNTS=()
}

case_relay() {
	echo "== 4: the author offline, another member holding it"
	room3 a4 b4 c4 || return
	start b4 && start c4 || return
	all_online a4 b4 c4
	mkfile f4 3
	share a4 f4 "four" || return
	check "b4 gets the message" until_true 30 named b4 "$ref"
	fetch b4 "$ref" >/dev/null
	wait_state 60 b4 "$ref" here "b4 fetches it"
	stop a4
	check "c4 sees a4 offline" until_true 30 offline c4 a4
	check "c4 has the message" until_true 30 named c4 "$ref"
	fetch c4 "$ref" >/dev/null
	wait_state 60 c4 "$ref" here "c4 fetches it from b4"
	check "c4's bytes are a4's" same c4 "$ref" f4
}

case_nobody() {
	echo "== 5: nobody online holds it"
	papo a5 new --name a5 >/dev/null
	start a5 || return
	join c5 "$(invite a5)"
	start c5 || return
	all_online a5 c5
	mkfile f5 3
	share a5 f5 "five" || return
	check "c5 gets the message" until_true 30 named c5 "$ref"
	stop a5
	check "c5 sees a5 offline" until_true 30 offline c5 a5
	fetch c5 "$ref" >/dev/null
	wait_state 30 c5 "$ref" waiting "c5's fetch waits"
	check "saying nobody online holds it: $(fstate c5 "$ref" | jq -r .error)" \
		error_is c5 "$ref" '^no member online holds'
	start a5 || return
	wait_state 90 c5 "$ref" here "c5's file comes once a5 is back, unasked"
	check "c5's bytes are a5's" same c5 "$ref" f5
}

case_unknown() {
	echo "== 6: references that name nothing"
	papo a6 new --name a6 >/dev/null
	start a6 || return
	local none code n0
	none=$(printf 'a%.0s' $(seq 52))
	code=$(curl -s --max-time 30 -o "$T/body" -D "$T/hdr" -w '%{http_code}' "${URL[a6]}/api/blobs/$none")
	check "GET of a reference nobody shared is 404 (got $code)" test "$code" = 404
	check "as JSON with an error: $(cat "$T/body")" jqt '.error | length > 0' "$T/body"
	check "served as application/json" grep -qi '^content-type: application/json' "$T/hdr"
	code=$(curl -s --max-time 30 -o "$T/body" -w '%{http_code}' "${URL[a6]}/api/blobs/$none/state")
	check "its state is 404 too (got $code: $(cat "$T/body"))" test "$code" = 404
	for bad in abc "$(printf 'A%.0s' $(seq 52))" "${none}a" "$(printf '1%.0s' $(seq 52))"; do
		code=$(curl -s --max-time 30 -o "$T/body" -w '%{http_code}' "${URL[a6]}/api/blobs/$bad")
		check "malformed reference '$bad' is 400 or 404 (got $code)" test "$code" = 400 -o "$code" = 404
		check "with an error saying what a reference is: $(cat "$T/body")" \
			jqt '.error | test("reference")' "$T/body"
	done
	n0=$(api a6 /api/status | jq -r .messages)
	code=$(post a6 /api/send "{\"text\":\"names nothing\",\"files\":[\"$none\"]}")
	check "a send naming an unknown reference is 404 (got $code)" test "$code" = 404
	check "saying no such file was shared: $(cat "$T/body")" jqt '.error | test("no file")' "$T/body"
	check "nothing was sent" test "$(api a6 /api/status | jq -r .messages)" = "$n0"
	check "nothing in the history" not has_text a6 "names nothing"
}

case_twice() {
	echo "== 7: two uploads of the same file at once"
	papo a7 new --name a7 >/dev/null
	start a7 || return
	join b7 "$(invite a7)"
	start b7 || return
	all_online a7 b7
	mkfile f7 5
	local u pids=()
	for u in 1 2; do
		curl -sS --max-time 120 -o "$T/up$u" -X POST --data-binary "@$T/f7" \
			-H 'Content-Type: application/octet-stream' "${URL[a7]}/api/blobs?name=f7" &
		pids+=($!)
	done
	wait "${pids[@]}"
	local r1 r2
	r1=$(jq -r '.ref // empty' "$T/up1"); r2=$(jq -r '.ref // empty' "$T/up2")
	check "both uploads answer a reference ($(cat "$T/up1"); $(cat "$T/up2"))" test -n "$r1" -a -n "$r2"
	check "two references (each upload its own key)" test "$r1" != "$r2"
	check "the first reads back identical at a7" same a7 "$r1" f7
	check "the second reads back identical at a7" same a7 "$r2" f7
	code=$(post a7 /api/send "{\"text\":\"seven\",\"files\":[\"$r1\",\"$r2\"]}")
	check "a7 sends both (got $code)" test "${code:0:1}" = 2
	check "b7 gets the message naming both" until_true 30 named_both b7 "$r1" "$r2"
	fetch b7 "$r1" >/dev/null
	fetch b7 "$r2" >/dev/null
	wait_state 60 b7 "$r1" here "b7 fetches the first"
	wait_state 60 b7 "$r2" here "b7 fetches the second"
	check "b7's first is identical" same b7 "$r1" f7
	check "b7's second is identical" same b7 "$r2" f7
}

case_removed() {
	echo "== 8: a removed member asking for a file"
	room3 a8 b8 c8 || return
	start b8 && start c8 || return
	all_online a8 b8 c8
	mkfile f8old 3
	share a8 f8old "before the removal" || return
	local old=$ref
	check "c8 gets the message of before" until_true 30 named c8 "$old"
	expect 0 "a8 (the owner) removes c8" -- papo a8 remove c8
	check "c8 knows it was removed" until_true 30 grep -q 'removed from the room' "$T/c8.err"
	mkfile f8new 3
	share a8 f8new "after the removal" || return
	check "b8 gets the message of after" until_true 30 named b8 "$ref"
	fetch b8 "$ref" >/dev/null
	wait_state 60 b8 "$ref" here "b8 fetches the new file"
	check "c8 never got the message of after" not has_text c8 "after the removal"
	code=$(curl -s --max-time 30 -o "$T/body" -w '%{http_code}' "${URL[c8]}/api/blobs/$ref/state")
	check "c8 knows nothing of the new file (got $code: $(cat "$T/body"))" test "$code" = 404
	code=$(fetch c8 "$ref")
	check "c8 cannot fetch the new file (got $code: $(cat "$T/body"))" test "$code" = 404
	check "c8 has no blob of the new file" test -z "$(find "$T/c8" -type f -name "$ref*")"
	# The old file: c8 may ask, but nobody lets it in; it waits.
	fetch c8 "$old" >/dev/null
	wait_state 60 c8 "$old" waiting "c8's fetch of the older file waits, nobody serving it"
	check "the older file is not here at c8" test "$(state_of c8 "$old")" != here
	check "c8 has no complete blob of the older file" test -z "$(find "$T/c8" -type f -name "$old")"
}

# moving NAME REF: NAME's fetch of REF is under way or done.
moving() { local st; st=$(state_of "$1" "$2"); [ "$st" = fetching ] || [ "$st" = here ]; }

case_resume() {
	echo "== 9: kill -9 mid-fetch, and resume"
	papo a9 new --name a9 >/dev/null
	start a9 || return
	join b9 "$(invite a9)"
	start b9 || return
	all_online a9 b9
	# Uploads first: 16 MiB over loopback take well under 10 s when the
	# HTTP side reads a body as fast as it comes (before 5e1afde, ~40 s:
	# POST /api/blobs ran at ~430 KB/s, 8 KiB a backed-off spin).
	local t0 secs
	mkfile f9s 16
	t0=$(date +%s%N)
	ref=$(upload a9 f9s)
	secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
	check "a 16 MiB upload is taken (got $(cat "$T/upcode"))" test -n "$ref"
	check "a 16 MiB upload over loopback takes under 10 s (took $secs s)" test "$secs" -lt 10
	# 200 MiB: 800 chunks, a fetch of 2 to 10 s on loopback; polled every
	# 0.1 s, it is caught between 10 % and 90 %.  With uploads as slow as
	# above, 200 MiB would not even be uploaded in the test's time: then
	# 24 MiB (96 chunks).  RESUME_MIB sets the size.
	local mib=${RESUME_MIB:-200}
	if [ -z "${RESUME_MIB:-}" ] && [ "$secs" -ge 10 ]; then
		mib=24
		echo "uploads are slow ($secs s for 16 MiB): the file is $mib MiB, not 200"
	fi
	mkfile f9 "$mib"
	share a9 f9 "nine" || return
	check "b9 gets the message" until_true 30 named b9 "$ref"
	fetch b9 "$ref" >/dev/null
	local s have n caught=0
	local deadline=$(( $(date +%s) + 120 ))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		s=$(fstate b9 "$ref")
		have=$(jq -r '.chunks_have // 0' <<<"$s"); n=$(jq -r '.chunks // 0' <<<"$s")
		if [ "$n" -gt 0 ] && [ $((have * 10)) -gt "$n" ] && [ $((have * 10)) -lt $((n * 9)) ]; then
			crash b9
			caught=1
			break
		fi
		[ "$(jq -r .state <<<"$s")" = here ] && break
		sleep 0.1   # b9's progress looked at every 0.1 s
	done
	check "b9 was killed midway (at $have of $n chunks; make RESUME_MIB bigger if not)" test "$caught" = 1
	[ "$caught" = 1 ] || return
	echo "b9 killed at $have of $n chunks of $mib MiB"
	local on_disk; on_disk=$(find "$T/b9" -type f -name "$ref.part" | wc -l)
	check "b9 left $ref.part on disk to resume from" test "$on_disk" = 1
	start b9 || return
	local first; first=$(fstate b9 "$ref")
	# Chunks are committed (synced, then recorded) every 32 and every
	# second (docs/FILES.md, "Committing"): a kill loses at most the 31
	# written since the last commit, which are fetched again.
	local kept=$((have - 31))
	echo "b9's first state after the restart: $(jq -c '{state, chunks, chunks_have}' <<<"$first")"
	check "the first state after the restart shows the chunks committed on disk, at least $kept of the $have it had when killed (got $(jq -c '{state, chunks_have}' <<<"$first"))" \
		test "$(jq -r '.chunks_have // 0' <<<"$first")" -ge "$kept" -a "$kept" -gt 0
	# The fetch goes on by itself (no new request), from the disk.
	check "b9's fetch goes on by itself" until_true 30 moving b9 "$ref"
	s=$(fstate b9 "$ref")
	check "it goes on from the $kept chunks or more it kept, not from 0 (got $(jq -c '{state, chunks_have}' <<<"$s"))" \
		test "$(jq -r '.chunks_have // 0' <<<"$s")" -ge "$kept"
	wait_state 150 b9 "$ref" here "b9's fetch completes by itself"
	check "b9's bytes are a9's" same b9 "$ref" f9
}

for c in $CASES; do
	"case_$c"
	stop_all
done
finish
