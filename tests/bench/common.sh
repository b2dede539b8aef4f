#!/usr/bin/env bash
# common.sh: what the benchmark scripts share, sourced before anything
# else: their one argument ([--quick]), where papo and the benchmark
# programs are, and the check that they are built.
#
#   bench_args SCRIPT "$@"      sets QUICK (1 with --quick), ROOT (the
#                               source tree), PAPO ($PAPO, default
#                               build/papo) and BENCH ($PAPO_BENCH, default
#                               the tests/bench/ of papo's build)
#   bench_need PROGRAM...       exits 1 unless papo and each
#                               $BENCH/PROGRAM are built
bench_args() {
	BENCH_SCRIPT=$1; shift
	QUICK=0
	case "${1:-}" in
	--quick) QUICK=1 ;;
	"") ;;
	*) echo "usage: bash tests/bench/$BENCH_SCRIPT [--quick]" >&2; exit 2 ;;
	esac
	ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	PAPO=${PAPO:-$ROOT/build/papo}
	PAPO=$(realpath "$PAPO" 2>/dev/null || echo "$PAPO")
	BENCH=${PAPO_BENCH:-$(dirname "$PAPO")/tests/bench}
}
bench_need() {
	local b
	for b in "$PAPO" "${@/#/$BENCH/}"; do
		if [ ! -x "$b" ]; then
			echo "$BENCH_SCRIPT: $b is missing: build first (cmake --build build)" >&2
			exit 1
		fi
	done
}
