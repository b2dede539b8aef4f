#!/usr/bin/env bash
# search.sh: the search benchmark (docs/PERFORMANCE.md, "Search"): gen_log
# writes a log of N messages (default 1,000,000; --quick 100,000) for a
# room of two, whose store_open then builds the index from nothing (its
# time and the process's peak RSS: the rebuild); the index deleted, a
# daemon started on it (its start, the rebuild beside the room: when
# search answers, and /api/status's latency meanwhile); a daemon started
# with the index in step (the start's time, and its quick_check's beside
# the room, searched meanwhile); GET /api/search
# p50/p99 over RUNS requests for a rare word, a common word and a phrase;
# the index's size against the log's; what indexing adds to a message
# (test_index's timing of ix_add).  Usage: PAPO=path bash
# tests/bench/search.sh [--quick]
. "$(dirname "$0")/common.sh"
bench_args search.sh "$@"
bench_need gen_log
. "$ROOT/tests/e2e/lib.sh"
N=1000000 RUNS=50
[ "$QUICK" = 1 ] && N=100000 RUNS=20

# start_slow NAME: lib.sh's start, waiting as long as a rebuild takes.
start_slow() {
	rm -f "$T/$1/serve.json"
	PAPO_HOME=$T/$1 "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
		--name "$1" >>"$T/$1.out" 2>>"$T/$1.err" </dev/null &
	echo $! >"$T/$1.pid"
	until_true 900 test -s "$T/$1/serve.json" || { echo "$1 did not start"; exit 1; }
	URL[$1]=$(jq -r .http "$T/$1/serve.json")
}
pct() { # pct P: the P-th percentile of the numbers on stdin
	sort -n | awk -v p="$1" '{ v[NR] = $1 } END { i = int((NR - 1) * p / 100) + 1; print v[i] }'
}
PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
PAPO_HOME=$T/bo "$PAPO" join "$(PAPO_HOME=$T/ana "$PAPO" invite)" --name bo >/dev/null
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(uname -sr); $(date -u +%Y-%m-%d)"
echo "log of $N messages (gen_log), the index built by its store_open:"
/usr/bin/time -f 'peak RSS of gen_log (generation + store_open + rebuild)	%M	KB' \
	"$BENCH/gen_log" "$T/ana" "$T/bo" "$N" 2>&1 | sed 's/^/  /'
# The rebuild alone: the index deleted, the store opened again.
rm -f "$T/ana/search.db"*
echo "  log.jsonl: $(du -m "$T/ana/log.jsonl" | cut -f1) MB"
s0=$(date +%s%N)
start_slow ana
s1=$(date +%s%N)
echo "  start with the index deleted (replay; the rebuild goes on beside the room): $(( (s1 - s0) / 1000000 )) ms"
# Until search answers: the room's /api/status meanwhile, each 0.2 s.
: >"$T/busy"
while [ "$(curl -s -o /dev/null -w '%{http_code}' "${URL[ana]}/api/search?q=parser&limit=1")" = 503 ]; do
	curl -s -o /dev/null -w '%{time_total}\n' "${URL[ana]}/api/status" >>"$T/busy"
	sleep 0.2
done
s2=$(date +%s%N)
echo "  search answers $(( (s2 - s0) / 1000000 )) ms after the start; $(grep -o 'search index rebuilt.*' "$T/ana.err" | tail -1)"
[ -s "$T/busy" ] && echo "  /api/status during the rebuild ($(wc -l <"$T/busy") asked): p50 $(pct 50 <"$T/busy" | awk '{print $1 * 1000}') ms, max $(sort -n "$T/busy" | tail -1 | awk '{print $1 * 1000}') ms"
echo "  peak RSS of the daemon after the rebuild: $(grep VmHWM /proc/$(cat "$T/ana.pid")/status | awk '{print $2}') KB"
echo "  search.db: $(du -m "$T/ana/search.db" | cut -f1) MB ($(du -b "$T/ana/search.db" | cut -f1) bytes vs the log's $(du -b "$T/ana/log.jsonl" | cut -f1))"
stop ana
s0=$(date +%s%N)
start_slow ana
s1=$(date +%s%N)
echo "  start with the index in step (its mark read; quick_check beside the room): $(( (s1 - s0) / 1000000 )) ms"
until_true 60 grep -q 'search index is whole' "$T/ana.err"
echo "  $(grep -o 'the search index is whole.*' "$T/ana.err" | tail -1)"
for q in 'q=54321' 'q=parser' "q=$(jq -rn '"\"tests pass\"" | @uri')" 'q=frame*' 'q=review&files=1' 'q=review&from=nobody' 'q=review&from=bo' ; do
	api ana "/api/search?$q&limit=20" >/dev/null
	for i in $(seq 1 "$RUNS"); do
		curl -s -o "$T/r" -w '%{time_total}\n' "${URL[ana]}/api/search?$q&limit=20"
	done >"$T/times"
	hits=$(jq '.messages | length' "$T/r")
	printf '  search %-28s p50 %6.1f ms  p99 %6.1f ms  (%s hits on the page)\n' "$(printf '%b' "${q//%/\\x}")" \
		"$(pct 50 <"$T/times" | awk '{print $1 * 1000}')" "$(pct 99 <"$T/times" | awk '{print $1 * 1000}')" "$hits"
done
stop ana
"$(dirname "$PAPO")/tests/test_index" 2>/dev/null | grep 'add a message' | sed 's/^/  /'
