#!/bin/bash
# seeds.sh: ctest sim_seeds: replays every run of seeds.txt (the
# simulator's failures once found, docs/SIMULATOR.md) and fails if any
# of them fails its invariants again.
# usage: seeds.sh PAPO_SIM SEEDS_TXT
set -u
sim=$1
fail=0
n=0

while read -r line; do
	case $line in '' | '#'*) continue ;; esac
	n=$((n + 1))
	# The line as printed after "replay:", the binary built in its place.
	if ! out=$("$sim" ${line#papo-sim }); then
		echo "FAIL: $line"
		fail=1
	fi
	echo "$line"
	echo "$out" | grep -E '^(after the heal|settled|FAIL)'
done <"$2"
[ "$n" -gt 0 ] || { echo "FAIL: no run in $2"; fail=1; }
exit $fail
