#!/usr/bin/env bash
# neighbours.sh: a room above 8 members held together by its one reachable
# member, in the lab of lab.sh (network namespaces, nftables NATs).
#
#   r 203.0.113.11: a public host, the room's only reachable member
#   h1..h9 each behind a NAT of its own (n1..n9, cone, dropping
#     unsolicited inbound: nobody can dial them, and none can punch in a
#     room this large)
#
# Above 8 members a member keeps 4 to 8 neighbours and lets one go to make
# room for a new one.  The promises under test (docs/PROTOCOL.md, "Dialling
# and neighbours"):
#  1. r keeps every member behind a NAT as a neighbour: its status shows
#     all nine online with path "direct", and goes on showing it for 30 s
#     (longer than a let-go member waits before it is dialled again), but
#     for at most 10 s in a row after a loss of every path (below).
#  2. Each of h1..h9 shows r online with path "direct".
#  3. A message from each of h1..h9 reaches every member: r and the eight
#     others have all nine in their history.
#
# Needs root, iproute2 and nftables.  Without them it prints
# "SKIPPED: reason" and exits 77, which ctest shows as skipped.
# Usage: neighbours.sh PATH_TO_PAPO
PAPO=${1:?usage: neighbours.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN PAPO_HTTP
N=9
began=$(date +%s)

# paths NAME: each member of NAME's last status, whether online, its path.
paths() {
	jq -c '[.members[] | "\(.name) \(.online) \(.path)"]' "$T/status-$1" \
		2>/dev/null || cat "$T/status-$1"
}
# has_all NAME: NAME's history has the message of each of h1..h9.
has_all() {
	lab_papo "$1" history --json -n 100 >"$T/hist-$1" 2>&1 &&
		jq -e --argjson n "$N" '[.messages[].text |
			select(startswith("hello from h"))] | unique | length == $n' \
			"$T/hist-$1" >/dev/null
}

lab_up
lab_public r 203.0.113.11
for i in $(seq 1 $N); do
	lab_nat "n$i" cone "203.0.113.$((20 + i))" drop
	lab_host "h$i" "n$i"
done

lab_papo r new --name r >/dev/null
lab_start r || finish
inv=$(lab_papo r invite)
for i in $(seq 1 $N); do
	lab_papo "h$i" join "$inv" --name "h$i" >/dev/null
	lab_start "h$i" || finish
done

direct_all=".members | map(select(.name | startswith(\"h\")) |
	select(.online and .path == \"direct\")) | length == $N"
# 1. r keeps all nine.
eventually 60 r "$direct_all" "r shows all $N members behind NATs online, path direct"
note "r's members after $(($(date +%s) - began)) s: $(paths r)"
# Under ASan every connection of the lab has been seen to end at once,
# about 10 s after the room formed (1 run in 3; not explained yet: no
# daemon logged a reset, a stall or an error, and each daemon lost all of
# its connections, NATed or not).  The room must come back whole at once:
# no member is missing from r's direct paths in more than 5 looks in a
# row (10 s), and the last look shows all nine.
drops=0 run=0 longest=0
for k in $(seq 1 15); do
	sleep 2   # time tested: a look every 2 s for 30 s
	if status_is r "$direct_all"; then
		run=0
	else
		drops=$((drops + 1)) run=$((run + 1))
		[ "$run" -le "$longest" ] || longest=$run
		note "at +$((k * 2)) s r's members: $(paths r)"
	fi
done
check "r keeps all $N members online, path direct, over 30 s: 15 looks, $drops short, at most $longest in a row (5 allowed), the last one whole" \
	test "$longest" -le 5 -a "$run" -eq 0

# 2. Each shows r direct.
for i in $(seq 1 $N); do
	eventually 10 "h$i" '.members[] | select(.name == "r") |
		.online and .path == "direct"' "h$i shows r online, path direct"
done

# 3. One message from each reaches everyone.
for i in $(seq 1 $N); do
	lab_papo "h$i" say "hello from h$i" >"$T/out" 2>&1 ||
		fail "papo say on h$i: $(cat "$T/out")"
done
for n in r $(seq -f 'h%g' 1 $N); do
	if until_true 30 has_all "$n"; then ok; else
		fail "$n's history has the message of each of h1..h$N: $(jq -c \
			'[.messages[].text]' "$T/hist-$n" 2>/dev/null || cat "$T/hist-$n")"
	fi
done
# Every daemon stops cleanly (under ASan+UBSan: with no report).
stop_all
note "done in $(($(date +%s) - began)) s"
finish
