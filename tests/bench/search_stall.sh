#!/usr/bin/env bash
# search_stall.sh: what the heaviest search does to the rest of a daemon
# (docs/PERFORMANCE.md, "Search that cannot stall the node"), side by
# side for two binaries in one run: a room of N messages (gen_log, 4,000
# by default), then, in a loop for S seconds (4), 4 clients sending the
# query the issue found (340 one-letter prefixes, "c* c* ..."; refused at
# once where it is bounded) and 4 sending the heaviest allowed (16
# two-letter prefixes of gen_log's words), while /api/status is asked
# every 100 ms: the searches' codes and times, and status's p50 / max.
# Usage: bash tests/bench/search_stall.sh OLD_PAPO NEW_PAPO GEN_LOG [N] [S]
OLD=${1:?usage: search_stall.sh OLD_PAPO NEW_PAPO GEN_LOG [N] [S]}
NEW=${2:?usage: search_stall.sh OLD_PAPO NEW_PAPO GEN_LOG [N] [S]}
GEN_LOG=${3:?usage: search_stall.sh OLD_PAPO NEW_PAPO GEN_LOG [N] [S]}
N=${4:-4000}
SECS=${5:-4}
PAPO=$NEW
. "$(dirname "$0")/../e2e/lib.sh"

urlq() { jq -rn --arg v "$1" '$v | @uri'; }
q340=$(urlq "$(printf 'c* %.0s' $(seq 340))")
q16=$(urlq 'th* bu* is* gr* ag* af* mo* pa* in* fi* ca* yo* lo* te* pl* me*')

# pct FILE P: the P-th percentile of the numbers in FILE (one a line).
pct() { sort -n "$1" | awk -v p="$2" '{ v[NR] = $1 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print v[i] }'; }

echo "| binary | query | searches | codes | search p50 / max (s) | /api/status p50 / max (ms) |"
echo "|---|---|---:|---|---|---|"
for which in old new; do
	bin=$OLD
	[ "$which" = new ] && bin=$NEW
	rm -rf "$T/a" "$T/b"
	PAPO=$bin
	papo a new --name a >/dev/null
	start a
	join b "$(invite a)"
	stop a
	"$GEN_LOG" "$T/a" "$T/b" "$N" >/dev/null
	rm -f "$T/a/search.db"*
	start a
	until_true 60 eval 'test "$(curl -s -o /dev/null -w "%{http_code}" "${URL[a]}/api/search?q=build")" = 200'
	for q in q340 q16; do
		: >"$T/s"
		: >"$T/st"
		pids=()
		for w in 1 2 3 4; do
			( end=$((SECONDS + SECS))
			  while [ "$SECONDS" -lt "$end" ]; do
				curl -sS --max-time 120 -o /dev/null -w '%{http_code} %{time_total}\n' \
					"${URL[a]}/api/search?q=${!q}&limit=200" >>"$T/s"
			  done ) &
			pids+=($!)
		done
		end=$((SECONDS + SECS))
		while [ "$SECONDS" -lt "$end" ]; do
			curl -sS --max-time 120 -o /dev/null -w '%{time_total}\n' "${URL[a]}/api/status" >>"$T/st"
			sleep 0.1
		done
		wait "${pids[@]}"
		cut -d' ' -f2 "$T/s" >"$T/stimes"
		awk '{ print $1 * 1000 }' "$T/st" >"$T/stms"
		echo "| $which | $q | $(wc -l <"$T/s") | $(cut -d' ' -f1 "$T/s" | sort | uniq -c | awk '{ printf "%s%s x %s", (NR > 1 ? ", " : ""), $1, $2 }') | $(pct "$T/stimes" 50) / $(pct "$T/stimes" 100) | $(pct "$T/stms" 50) / $(pct "$T/stms" 100) |"
	done
	stop a
done
finish >/dev/null
