#!/usr/bin/env bash
# files.sh: shared files between daemons on loopback (docs/PERFORMANCE.md,
# "Files"): a file's throughput from one member to another against curl
# of the same file from a local HTTP server in the same run; the RSS of
# both daemons while a large file goes through; a room of 10 where 9
# members fetch one file at once (what the author uploads, when the last
# one has it); the time from `papo say --file` to the first chunk at
# another member.  Prints markdown on stdout, progress on stderr.
#
#   bash tests/bench/files.sh [--quick]
#
# PAPO (default build/papo); SIZE_MB (default 100, --quick 20); BIG_MB for
# the memory row (default 1024, --quick 200); RUNS (default 3); ONLY, a
# comma-separated choice of the parts: loop, first, memory, fanout.
set -u
cd "$(dirname "$0")/../.."
PAPO=$(realpath "${PAPO:-build/papo}")
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
SIZE_MB=${SIZE_MB:-$([ $QUICK = 1 ] && echo 20 || echo 100)}
BIG_MB=${BIG_MB:-$([ $QUICK = 1 ] && echo 200 || echo 1024)}
RUNS=${RUNS:-3}
FAN=${FAN:-10}
. tests/e2e/lib.sh
log() { echo "files.sh: $*" >&2; }
want() { [ -z "${ONLY:-}" ] || [[ ",$ONLY," == *",$1,"* ]]; }
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }
mbs() { awk -v mb="$1" -v s="$2" 'BEGIN {printf "%.1f", mb / s}'; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$(cat "$T/$1.pid")/status"; }
state() { api "$1" "/api/blobs/$2/state" | jq -r "$3"; }
upload() { # upload NAME FILE: the reference
	curl -sS -X POST -T "$2" \
		"${URL[$1]}/api/blobs?name=$(basename "$2")" | jq -r .ref
}
fetch() { post "$1" "/api/blobs/$2/fetch" '{}' >/dev/null; }
wait_here() { # wait_here NAME REF: polls every 20 ms
	until [ "$(state "$1" "$2" .state)" = here ]; do sleep 0.02; done
}

# A local HTTP server for curl's side of the ratio.
serve_dir() {
	python3 - "$1" >"$T/http.port" 2>/dev/null <<'EOF' &
import http.server, socketserver, sys, os, functools
os.chdir(sys.argv[1])
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
h.log_message = lambda *a: None
with socketserver.TCPServer(("127.0.0.1", 0), h) as s:
    print(s.server_address[1], flush=True)
    s.serve_forever()
EOF
	echo $! >"$T/httpd.srv"
	until_true 10 test -s "$T/http.port"
}

mkdir -p "$T/files"
log "making a ${SIZE_MB} MiB file"
head -c "${SIZE_MB}M" /dev/urandom >"$T/files/f.bin"
serve_dir "$T/files"
# The server first, then lib.sh's cleanup (which waits for every child).
trap 'kill "$(cat "$T/httpd.srv")" 2>/dev/null; cleanup' EXIT
HTTP=http://127.0.0.1:$(cat "$T/http.port")

papo a new --name a >/dev/null
start a
join b "$(invite a)"
start b
until_true 30 online a b || { echo "b never saw a online" >&2; exit 1; }

echo "## Files, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, ${SIZE_MB} MiB"
echo
if want loop; then
echo "| run | share at a (s) | fetch a to b (s) | MB/s | curl from HTTP (s) | MB/s | fetch / curl |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for run in $(seq "$RUNS"); do
	log "run $run: share"
	t0=$(now); ref=$(upload a "$T/files/f.bin"); t1=$(now)
	post a /api/send "{\"text\":\"run $run\",\"files\":[\"$ref\"]}" >/dev/null
	until_true 20 test "$(state b "$ref" .state)" = named
	log "run $run: fetch"
	t2=$(now); fetch b "$ref"; wait_here b "$ref"; t3=$(now)
	t4=$(now); curl -sS -o /dev/null "$HTTP/f.bin"; t5=$(now)
	curl -sS -o "$T/got" "${URL[b]}/api/blobs/$ref"
	cmp -s "$T/got" "$T/files/f.bin" || { echo "run $run: b's copy differs" >&2; exit 1; }
	rm -f "$T/got"
	share=$(secs "$t0" "$t1"); fe=$(secs "$t2" "$t3"); cu=$(secs "$t4" "$t5")
	echo "$fe" >>"$T/fetch.s"; echo "$cu" >>"$T/curl.s"; echo "$share" >>"$T/share.s"
	echo "| $run | $share | $fe | $(mbs "$SIZE_MB" "$fe") | $cu | $(mbs "$SIZE_MB" "$cu") | $(awk -v a="$fe" -v b="$cu" 'BEGIN {printf "%.1f", a / b}') |"
done
fe=$(median <"$T/fetch.s"); cu=$(median <"$T/curl.s"); sh=$(median <"$T/share.s")
echo "| median | $sh | $fe | $(mbs "$SIZE_MB" "$fe") | $cu | $(mbs "$SIZE_MB" "$cu") | $(awk -v a="$fe" -v b="$cu" 'BEGIN {printf "%.1f", a / b}') |"
echo

fi

# Time to the first byte: b fetches every file at once (PAPO_FILES_AUTO=all).
if want first; then
stop b
PAPO_FILES_AUTO=all start b
until_true 30 online a b
echo "| run | \`papo say --file\` to b's first chunk (s) | to b having it all (s) |"
echo "|---|---:|---:|"
for run in $(seq "$RUNS"); do
	cp "$T/files/f.bin" "$T/files/g$run.bin"
	t0=$(now)
	papo a say --file "$T/files/g$run.bin" "first byte $run" >/dev/null &
	sayer=$!
	ref=""
	until [ -n "$ref" ]; do
		ref=$(api b '/api/history?limit=1' | jq -r --arg t "first byte $run" \
			'.messages[] | select(.text == $t) | .files[0].ref // empty')
		sleep 0.01
	done
	until [ "$(state b "$ref" .chunks_have)" -ge 1 ] 2>/dev/null; do sleep 0.01; done
	t1=$(now)
	wait_here b "$ref"; t2=$(now)
	wait "$sayer"
	echo "$(secs "$t0" "$t1")" >>"$T/first.s"
	echo "| $run | $(secs "$t0" "$t1") | $(secs "$t0" "$t2") |"
	rm -f "$T/files/g$run.bin"
done
echo "| median | $(median <"$T/first.s") | |"
echo
fi

# Memory: a large file through both daemons, RSS sampled every 100 ms.
if want memory; then
log "memory: a ${BIG_MB} MiB file"
stop b
start b
until_true 30 online a b
head -c "${BIG_MB}M" /dev/urandom >"$T/big.bin"
ra0=$(rss a); rb0=$(rss b)
peak() { # peak NAME FILE: samples NAME's RSS into FILE until stopped
	while kill -0 "$(cat "$T/$1.pid")" 2>/dev/null; do rss "$1" >>"$2"; sleep 0.1; done
}
peak a "$T/a.rss" & pa=$!
peak b "$T/b.rss" & pb=$!
t0=$(now); ref=$(upload a "$T/big.bin"); t1=$(now)
post a /api/send "{\"text\":\"big\",\"files\":[\"$ref\"]}" >/dev/null
until_true 20 test "$(state b "$ref" .state)" = named
t2=$(now); fetch b "$ref"; wait_here b "$ref"; t3=$(now)
kill "$pa" "$pb" 2>/dev/null; wait "$pa" "$pb" 2>/dev/null
ra1=$(sort -n "$T/a.rss" | tail -1); rb1=$(sort -n "$T/b.rss" | tail -1)
echo "| ${BIG_MB} MiB | RSS before (KiB) | peak while sharing and serving (KiB) | rise (MiB) |"
echo "|---|---:|---:|---:|"
echo "| a, the author | $ra0 | $ra1 | $(awk -v a="$ra0" -v b="$ra1" 'BEGIN {printf "%.1f", (b - a) / 1024}') |"
echo "| b, the fetcher | $rb0 | $rb1 | $(awk -v a="$rb0" -v b="$rb1" 'BEGIN {printf "%.1f", (b - a) / 1024}') |"
echo
echo "Sharing took $(secs "$t0" "$t1") s, fetching $(secs "$t2" "$t3") s ($(mbs "$BIG_MB" "$(secs "$t2" "$t3")") MB/s)."
echo
rm -f "$T/big.bin"
fi
stop_all

# A room of FAN: one shares, the others fetch at once.
want fanout || exit 0
log "fan-out: $FAN members"
rm -rf "$T/a" "$T/b"
papo m0 new --name m0 >/dev/null
start m0
inv=$(invite m0)
for k in $(seq 1 $((FAN - 1))); do join "m$k" "$inv"; start "m$k"; done
for k in $(seq 1 $((FAN - 1))); do until_true 60 online m0 "m$k"; done
sleep 2
ref=$(upload m0 "$T/files/f.bin")
post m0 /api/send "{\"text\":\"fan\",\"files\":[\"$ref\"]}" >/dev/null
for k in $(seq 1 $((FAN - 1))); do until_true 30 test "$(state "m$k" "$ref" .state)" = named; done
t0=$(now)
pids=()
for k in $(seq 1 $((FAN - 1))); do fetch "m$k" "$ref" & pids+=($!); done
wait "${pids[@]}"
for k in $(seq 1 $((FAN - 1))); do wait_here "m$k" "$ref"; done
t1=$(now)
stored=$(api m0 /api/status | jq -r '.files.served')
echo "| room of $FAN, ${SIZE_MB} MiB | bytes the author served | × the file | time until the last has it (s) |"
echo "|---|---:|---:|---:|"
echo "| $((FAN - 1)) fetch at once | $stored | $(awk -v s="$stored" -v m="$SIZE_MB" 'BEGIN {printf "%.2f", s / (m * 1048576)}') | $(secs "$t0" "$t1") |"
for k in $(seq 1 $((FAN - 1))); do
	echo "m$k served $(api "m$k" /api/status | jq -r '.files.served')" >&2
done

stop_all
