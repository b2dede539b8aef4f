#!/bin/bash
# short.sh: ctest sim_short: the simulator (docs/SIMULATOR.md) on a room of
# 32 for 120 simulated seconds.  Seeds 1, 2 and 3 stop a member halfway,
# each run twice: every run passes its invariants (every running member
# sees every other online at the end, the stopped one offline everywhere
# within today's bound, two messages reach everyone) and the two runs of
# a seed print the same trace hashes and figures.  Then an idle room:
# no running member ever shown offline once the room settled.
# usage: short.sh PAPO_SIM
set -u
sim=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0

for seed in 1 2 3; do
	for run in a b; do
		if ! "$sim" --seed "$seed" --members 32 --time 120 \
		    --scenario stop --msgs 2 --hashes >"$out/$seed$run"; then
			echo "FAIL: seed $seed, run $run:"
			cat "$out/$seed$run"
			fail=1
		fi
		grep -v '^sim cost' "$out/$seed$run" >"$out/$seed$run.cmp"
	done
	if ! diff "$out/${seed}a.cmp" "$out/${seed}b.cmp"; then
		echo "FAIL: seed $seed gave two different runs"
		fail=1
	fi
	grep -c '^trace ' "$out/${seed}a.cmp" | grep -qx 12 ||
	    { echo "FAIL: seed $seed: not 12 trace hashes"; fail=1; }
done
# Different seeds, different runs: the seed reaches what it should.
if cmp -s "$out/1a.cmp" "$out/2a.cmp"; then
	echo "FAIL: seeds 1 and 2 gave the same run"
	fail=1
fi
if ! "$sim" --seed 4 --members 32 --time 120 --scenario idle >"$out/idle"; then
	echo "FAIL: idle:"
	cat "$out/idle"
	fail=1
fi
cat "$out/1a" "$out/idle"
exit $fail
