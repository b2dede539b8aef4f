#!/usr/bin/env bash
# field.sh: the field benchmark (docs/PERFORMANCE.md, "In the field"):
# issue 21's lab tests, tests/e2e/field_*.sh, run RUNS times each (default
# 5), one after another; every timing they print ("WHAT: 1.2 s") is
# gathered and its median, minimum and maximum printed, and the path MTU
# each found on 1500, 1420 and 1280-byte links.  The tests check their
# bounds themselves; a run that failed a check is counted and its timings
# kept (a timing of "never" is left out and counted).  Root and nftables,
# as the tests.
#
# Usage: field.sh BUILD_DIR [RUNS]
set -u
B=${1:?usage: field.sh BUILD_DIR [RUNS]}
RUNS=${2:-5}
B=$(realpath "$B")
E=$(cd "$(dirname "$0")/../e2e" && pwd)
T=$(mktemp -d /tmp/papo-bench-field.XXXXXX)
trap 'rm -rf "$T"' EXIT
# FIELD_KEEP=FILE: the timings gathered, kept there too.
cases=(
	"field_paths.sh $B/papo $B/tests/ctflush rebind"
	"field_paths.sh $B/papo $B/tests/ctflush move"
	"field_sleep.sh $B/papo"
	"field_return.sh $B/papo"
	"field_mtu.sh $B/papo"
)
failed=0
for r in $(seq 1 "$RUNS"); do
	for c in "${cases[@]}"; do
		set -- $c
		if ! bash "$E/$1" "${@:2}" >"$T/out" 2>&1; then
			failed=$((failed + 1))
			echo "run $r: $c failed: $(grep -m3 '^FAIL' "$T/out" | cut -c1-200)" >&2
		fi
		grep -E '^field_[a-z_.]+( [a-z]+)?: .*: [0-9]+(\.[0-9]+)? s$' "$T/out" >>"$T/times"
		grep -E 'path MTU to' "$T/out" >>"$T/mtus"
		grep -E ': never \(bound' "$T/out" >>"$T/never"
	done
	echo "round $r of $RUNS done" >&2
done
[ -z "${FIELD_KEEP:-}" ] || cp "$T/times" "$FIELD_KEEP"
echo "field benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $RUNS runs each, $failed failed runs"
echo "median  min  max  n  what (seconds)"
sed -E 's/: ([0-9.]+) s$/\t\1/' "$T/times" | sort -t$'\t' -k1,1 -s |
	awk -F'\t' '
	function flush(  i, j, x) {
		if (n == 0) return
		for (i = 2; i <= n; i++) {      # insertion sort (mawk: no asort)
			x = v[i]
			for (j = i - 1; j >= 1 && v[j] > x; j--)
				v[j + 1] = v[j]
			v[j + 1] = x
		}
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "%6.1f %5.1f %5.1f %2d  %s\n", m, v[1], v[n], n, k
		delete v; n = 0
	}
	$1 != k { flush(); k = $1 }
	{ v[++n] = $2 }
	END { flush() }'
echo "path MTU found (largest UDP payload), by link:"
sed -E 's/.*MTU ([0-9]+): .*path MTU to [a-z0-9]+: ([0-9]+) .*/\1 \2/' "$T/mtus" |
	sort | uniq -c | awk '{printf "  link %s: %s (%d paths)\n", $2, $3, $1}'
[ -s "$T/never" ] && { echo "never happened:"; sort "$T/never" | uniq -c; }
exit 0
