#!/usr/bin/env bash
# epochs.sh: how long a change of the room's key takes to reach every
# member (docs/PERFORMANCE.md, "Key changes"), on loopback: rooms of 3
# and of 10 members; the owner's POST /api/rotate (then /api/remove of
# the last member) against the moment each other member's /api/events
# shows the new epoch (bench_room watch "epoch N").  The request is
# written by a bash already connected, its clock read just before
# ($EPOCHREALTIME), so no program's start is counted.  Prints a markdown
# table; nothing passes or fails on time.
#
# Usage: bash tests/bench/epochs.sh [--quick]   (PAPO: default build/papo)
. "$(dirname "$0")/common.sh"
bench_args epochs.sh "$@"
bench_need bench_room
. "$ROOT/tests/e2e/lib.sh"
RUNS=$([ "$QUICK" = 1 ] && echo 3 || echo 9)
export PAPO_LOG=warn

die() { echo "epochs.sh: $*" >&2; exit 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-";
	else if (NR % 2) print v[(NR + 1) / 2];
	else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s–%s", lo, hi }'; }

# change OWNER EPOCH ROUTE JSON WATCHED...: POSTs JSON to the owner's
# ROUTE and appends to $T/each the ms until each WATCHED member shows
# EPOCH, to $T/last the ms until the last of them does.
change() {
	local owner=$1 epoch=$2 route=$3 json=$4 m t0 t1 max=0 d
	shift 4
	local -A w
	for m in "$@"; do
		"$BENCH/bench_room" watch "${URL[$m]}" "epoch $epoch" 30 >"$T/w-$m" 2>>"$T/watch.err" &
		w[$m]=$!
	done
	for m in "$@"; do
		until_true 10 grep -q ready "$T/w-$m" || die "the watcher on $m did not start"
	done
	t0=$(bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		req=$(printf "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" "$2" "$1" "${#3}" "$3")
		t=$EPOCHREALTIME
		printf "%s" "$req" >&3
		answer=$(cat <&3)
		case $answer in *\"epoch\"*) echo "${t/./}000" ;; *) echo "$answer" >&2; exit 1 ;; esac' \
		_ "${URL[$owner]##*:}" "$route" "$json" 2>"$T/post") ||
		die "POST $route failed: $(cat "$T/post")"
	for m in "$@"; do
		wait "${w[$m]}" || die "$m did not show epoch $epoch in 30 s"
		t1=$(tail -1 "$T/w-$m")
		d=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f\n", d / 1e6 }')
		echo "$d" >>"$T/each"
		max=$(awk -v a="$max" -v b="$d" 'BEGIN { print (b > a ? b : a) }')
	done
	echo "$max" >>"$T/last"
}

# room N: N members, m0 the owner, everyone online at m0's.
room() {
	local n=$1 i
	papo m0 new --name m0 >/dev/null
	start m0
	for i in $(seq 1 $((n - 1))); do
		join "m$i" "$(invite m0)"
		start "m$i"
	done
	for i in $(seq 1 $((n - 1))); do
		until_true 30 online m0 "m$i" || die "m$i is not online at m0's"
		until_true 30 online "m$i" m0 || die "m0 is not online at m$i's"
	done
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(uname -sr); load $(cut -d' ' -f1 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
echo "| members | what | to the last member: median (range) | to each member: median | epoch frame |"
echo "|---|---|---|---|---|"
for n in 3 10; do
	room "$n"
	others=()
	for i in $(seq 1 $((n - 1))); do others+=("m$i"); done
	: >"$T/each"; : >"$T/last"
	for e in $(seq 1 "$RUNS"); do
		change m0 "$e" /api/rotate '{}' "${others[@]}"
	done
	bytes=$(jq '.epochs | max_by(.n) | .frame | length' "$T/m0/epochs.json")
	printf '| %s | `papo rotate` (n = %s) | %s ms (%s) | %s ms | %s bytes |\n' "$n" "$RUNS" \
		"$(median <"$T/last")" "$(spread <"$T/last")" "$(median <"$T/each")" "$bytes"
	: >"$T/each"; : >"$T/last"
	last=m$((n - 1))
	change m0 $((RUNS + 1)) /api/remove "{\"name\":\"$last\"}" "${others[@]:0:$((n - 2))}"
	bytes=$(jq '.epochs | max_by(.n) | .frame | length' "$T/m0/epochs.json")
	printf '| %s | `papo remove` (n = 1) | %s ms | %s ms | %s bytes |\n' "$n" \
		"$(median <"$T/last")" "$(median <"$T/each")" "$bytes"
	stop_all
	for i in $(seq 0 $((n - 1))); do rm -rf "${T:?}/m$i"; unset "URL[m$i]"; done
done
