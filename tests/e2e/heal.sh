#!/usr/bin/env bash
# heal.sh: a room above 8 members cut in two halves, then healed, in the
# lab of lab.sh (network namespaces): twelve public hosts p1..p12, each
# on a link of its own to the internet router, where the cut is made.
#
# Above 8 members each member keeps a few neighbours; cut apart, each
# half fills its neighbours within itself.  The promises under test
# (docs/PROTOCOL.md, "Dialling and neighbours": probing):
#  1. During the cut each half shows the other offline.
#  2. Within HEAL_S seconds of the heal, every member shows every other
#     online again, and holds the message sent in each half during the
#     cut.
#
# Needs root, iproute2 and nftables.  Without them it prints
# "SKIPPED: reason" and exits 77, which ctest shows as skipped.
# Usage: heal.sh PATH_TO_PAPO.  Environment: CUT_S (seconds the halves
# are apart, default 60), HEAL_S (default 60).
PAPO=${1:?usage: heal.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN PAPO_HTTP
N=12 CUT_S=${CUT_S:-60} HEAL_S=${HEAL_S:-60}
A=$(seq -f 'p%g' 1 $((N / 2)))
B=$(seq -f 'p%g' $((N / 2 + 1)) $N)
began=$(date +%s)

# ips NAMES...: their addresses, as an nftables set.
ips() {
	local n s=
	for n in "$@"; do s="$s${s:+, }${LABIP[$n]}"; done
	echo "{ $s }"
}
# all_online NAME: NAME shows the N-1 others online.
all_online() {
	status_is "$1" "[.members[] | select(.online)] | length == $((N - 1))"
}
# offline_of NAME NAMES...: NAME shows every one of NAMES offline.
offline_of() {
	local who=$1 n q='true'; shift
	for n in "$@"; do q="$q and ($(m "$n") | .online | not)"; done
	status_is "$who" "$q"
}
# online_count NAME: how many others NAME shows online.
online_count() {
	lab_api "$1" /api/status | jq '[.members[] | select(.online)] | length'
}

lab_up
for i in $(seq 1 $N); do
	lab_public "p$i" "203.0.113.$((30 + i))"
done
# shellcheck disable=SC2086
room p1 $(seq -f 'p%g' 2 $N) || finish

for n in $A $B; do
	check "$n shows the $((N - 1)) others online" until_true 90 all_online "$n"
done
note "formed after $(($(date +%s) - began)) s"

# The cut: the router drops what goes between the halves.
cut_at=$(date +%s)
# shellcheck disable=SC2086
{
	echo "table ip cut {"
	echo "  chain forward { type filter hook forward priority filter;"
	echo "    ip saddr $(ips $A) ip daddr $(ips $B) drop"
	echo "    ip saddr $(ips $B) ip daddr $(ips $A) drop"
	echo "  }"
	echo "}"
} >"$T/cut.nft"
lab_net ip netns exec "${LABNS[inet]}" nft -f "$T/cut.nft"

# 1. Each half shows the other offline (life shown lasts 25.5 s above 8).
for n in $A; do
	# shellcheck disable=SC2086
	check "$n shows the other half offline during the cut" \
		until_true 60 offline_of "$n" $B
done
for n in $B; do
	# shellcheck disable=SC2086
	check "$n shows the other half offline during the cut" \
		until_true 60 offline_of "$n" $A
done
note "apart after $(($(date +%s) - cut_at)) s"
lab_papo p2 say "sent in the first half during the cut" >"$T/out" 2>&1 ||
	fail "papo say on p2: $(cat "$T/out")"
lab_papo p$N say "sent in the second half during the cut" >"$T/out" 2>&1 ||
	fail "papo say on p$N: $(cat "$T/out")"
left=$((cut_at + CUT_S - $(date +%s)))
[ "$left" -le 0 ] || sleep "$left"   # time tested: the cut lasts CUT_S

# 2. Healed: one room again within HEAL_S.
lab_net ip netns exec "${LABNS[inet]}" nft delete table ip cut
heal_at=$(ms)
whole() {
	local n
	for n in $A $B; do
		all_online "$n" || return 1
		history_has "$n" "sent in the first half during the cut" || return 1
		history_has "$n" "sent in the second half during the cut" || return 1
	done
}
if until_true "$HEAL_S" whole; then
	ok
	note "one room again $(secs "$heal_at") s after the heal"
else
	counts=
	for n in $A $B; do counts="$counts $n:$(online_count "$n")"; done
	fail "not one room within $HEAL_S s of the heal: members online as each shows it:$counts"
fi
stop_all
note "done in $(($(date +%s) - began)) s"
finish
