#!/usr/bin/env bash
# retention.sh: the retention benchmark (docs/PERFORMANCE.md, "Retention"):
# gen_log writes a log of N messages (default 100,000) for a room of two,
# then compact cuts it to the newest K (default 1,000) and prints the
# time and the peak RSS, RUNS times (default 3) on fresh copies.
#
# Usage: retention.sh BUILD_DIR [N] [K] [RUNS]   (BUILD_DIR: a Release
# build, e.g. cmake -S . -B build -DCMAKE_BUILD_TYPE=Release).
set -eu
B=${1:?usage: retention.sh BUILD_DIR [N] [K] [RUNS]}
N=${2:-100000}
K=${3:-1000}
RUNS=${4:-3}
PAPO=$B/papo
T=$(mktemp -d /tmp/papo-bench-ret.XXXXXX)
trap 'rm -rf "$T"' EXIT
PAPO_HOME=$T/a "$PAPO" new --name a >/dev/null
PAPO_HOME=$T/b "$PAPO" join "$(PAPO_HOME=$T/a "$PAPO" invite)" --name b >/dev/null
"$B/tests/bench/gen_log" "$T/a" "$T/b" "$N" >"$T/gen"
cp "$T/a/log.jsonl" "$T/log"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(uname -sr); $(date -u +%Y-%m-%d)"
for i in $(seq 1 "$RUNS"); do
	cp "$T/log" "$T/a/log.jsonl"
	echo "run $i:"
	"$B/tests/bench/compact" "$T/a" "$K" | sed 's/^/  /'
done
