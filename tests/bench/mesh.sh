#!/usr/bin/env bash
# mesh.sh: what the benchmarks of many daemons share (rooms_mesh.sh,
# bigroom.sh), sourced after tests/e2e/lib.sh.  They read N (the
# daemons, d1..dN) and PIDS (their pids).
#
#   cpu_ns           CPU time (ns, every thread, schedstat) of PIDS, summed
#   switches         their context switches, summed
#   rss_kb           their RSS (KB), summed
#   fig FILE LABEL   bench_print's line as "p50 / p99 / max" in ms
#   settled ROOMS    every daemon is in ROOMS rooms and sees the N - 1
#                    others online in each
#   behind           what each daemon sees, for the error when not settled
cpu_ns() {
	local p; for p in "${PIDS[@]}"; do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}
switches() {
	local p; for p in "${PIDS[@]}"; do cat /proc/"$p"/task/*/status 2>/dev/null; done |
		awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }'
}
rss_kb() {
	local p; for p in "${PIDS[@]}"; do cat /proc/"$p"/status; done |
		awk '/^VmRSS:/ { s += $2 } END { print s + 0 }'
}
fig() {
	grep -F -- "$2	" "$1" | head -1 |
		awk -F'\t' '{ printf "%.1f / %.1f / %.1f", $2, $3, $5 }'
}
# A member is online with a connection of its own or through another's (a
# room above 8 members keeps 4 to 8 neighbours, node/room/member.c), so
# this is the room's view, not a full mesh.
settled() {
	local i want=$(( $1 * (N - 1) ))
	for i in $(seq 1 "$N"); do
		api "d$i" /api/rooms | jq -e --argjson r "$1" --argjson w "$want" \
			'(.rooms | length) == $r and ([.rooms[].online] | add) == $w' >/dev/null || return 1
	done
}
behind() {
	local i
	for i in $(seq 1 "$N"); do
		api "d$i" /api/rooms | jq -r --arg d "d$i" \
			'"\($d): online " + ([.rooms[] | "\(.name)=\(.online)/\(.members)"] | join(" "))'
	done
}
