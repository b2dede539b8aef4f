#!/usr/bin/env bash
# mesh.sh: a room of eight members on one machine; 100 messages from
# members picked at random; every member ends with the same 100 messages.
# Usage: mesh.sh PATH_TO_PAPO [MEMBERS] [MESSAGES]
PAPO=${1:?usage: mesh.sh PATH_TO_PAPO [MEMBERS] [MESSAGES]}
N=${2:-8} MSGS=${3:-100}
. "$(dirname "$0")/lib.sh"

PAPO_HOME=$T/m1 "$PAPO" new --name m1 >/dev/null
start m1
for i in $(seq 2 "$N"); do
	# Each joins through the one before it: the mesh has to spread names.
	join "m$i" "$(invite "m$((i - 1))")"
	start "m$i"
done
all_online() {
	local i n
	for i in $(seq 1 "$N"); do
		n=$(api "m$i" /api/status | jq '[.members[] | select(.online)] | length')
		[ "$n" = $((N - 1)) ] || return 1
	done
}
check "all $N members see the $((N - 1)) others online" until_true 60 all_online
if [ "$N" -gt 8 ]; then
	# Above eight members each keeps a bounded set of neighbours.  A
	# member between two of them (one let it go, its dial of another
	# under way: on a loaded machine 32 daemons do that) may have none
	# for a moment: it must have 1 to 8 soon.
	neighbours_ok() {
		d=$(api "$1" /api/status | jq '[.members[] | select(.direct)] | length')
		[ "$d" -ge 1 ] && [ "$d" -le 8 ]
	}
	for i in $(seq 1 "$N"); do
		if until_true 30 neighbours_ok "m$i"; then ok; else
			fail "m$i has 1 to 8 neighbours, not $d (for 30 s)"; fi
	done
fi

for k in $(seq 1 "$MSGS"); do
	from=m$(( (RANDOM % N) + 1 ))
	papo "$from" say "message $k from $from" --json >/dev/null ||
		fail "say from $from failed"
done
same_history() {
	local i n
	for i in $(seq 1 "$N"); do
		n=$(texts "m$i" | grep -c '^message ')
		[ "$n" = "$MSGS" ] || return 1
	done
}
check "every member has the $MSGS messages" until_true 60 same_history
ref=$(texts m1 | sort | md5sum)
for i in $(seq 2 "$N"); do
	check "m$i holds the same set as m1" test "$(texts "m$i" | sort | md5sum)" = "$ref"
	check "m$i holds each once" test "$(texts "m$i" | sort | uniq -d | wc -l)" = 0
done
for i in $(seq 1 "$N"); do stop "m$i"; done
finish
