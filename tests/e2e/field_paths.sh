#!/usr/bin/env bash
# field_paths.sh: issue 21's case 2, paths that change, in the lab of
# lab.sh: rui public (203.0.113.10), ana behind the cone NAT nata
# (203.0.113.21), bo behind the cone NAT natb (203.0.113.22), every daemon
# with PAPO_LAN=off PAPO_PORTMAP=off.  ana and bo have a punched path;
# both send a message every 0.5 s throughout; then the fault, one a run:
#
#   rebind  nata's mapping moves to another port (lab_rebind: its
#           masquerade maps port 7700 to 27700, one mapping for every
#           peer, as a cone NAT after a reboot, and its conntrack table
#           is emptied): ana's old public address is dead.
#   move    ana leaves nata for natc (203.0.113.23), with a new address
#           and a new default route (lab_move): a laptop leaving home
#           Wi-Fi for a phone's hotspot.
#
# What a user must see:
#  - a message sent each way right after the fault arrives within 5 s;
#  - within 10 s, neither ana's nor bo's status claims a direct or
#    punched path that carries nothing ("via rui" is fine; a claimed path
#    must show packets from the other side's public address at both ends
#    within a second: direct_live in field_lib.sh);
#  - within 20 s, the direct path is back: path direct or punched at both,
#    carrying packets both ways;
#  - every message sent before, during and after is in the other's
#    history exactly once;
#  - then rui stops, and ana and bo still talk to each other.
# The bounds are goals: the test allows FIELD_SLACK times them (field_lib.sh).
# The timings are printed ("rebind: first message after the fault ...").
#
# Needs root, iproute2 and nftables.  Without them it prints
# "SKIPPED: reason" and exits 77.
# Usage: field_paths.sh PATH_TO_PAPO PATH_TO_CTFLUSH rebind|move
PAPO=${1:?usage: field_paths.sh PATH_TO_PAPO PATH_TO_CTFLUSH rebind|move}
LAB_CTFLUSH=${2:?usage: field_paths.sh PATH_TO_PAPO PATH_TO_CTFLUSH rebind|move}
CASE=${3:?usage: field_paths.sh PATH_TO_PAPO PATH_TO_CTFLUSH rebind|move}
. "$(dirname "$0")/field_lib.sh"
FIELD="field_paths.sh $CASE"
case $CASE in rebind | move) ;; *) echo "$FIELD: no such case" >&2; exit 2 ;; esac

field_lab natc
for n in ana bo; do field_count "$n"; done
field_room
eventually 20 ana "$(m bo).path | $DIRECT" "ana has a punched path to bo"
eventually 20 bo "$(m ana).path | $DIRECT" "bo has a punched path to ana"
say "before: ana sees bo $(jq -c "$(m bo) | {path, rtt_ms}" "$T/status-ana"), observed $(jq -r .me.observed "$T/status-ana")"

field_senders ana bo
sleep 1
check "ana and bo's path carries packets both ways before the fault" direct_live ana bo
case $CASE in
rebind) lab_rebind nata 27700 ;;
move) lab_move ana natc ;;
esac
F=$(ms)
say "$CASE at $(date +%T.%N | cut -c1-12)"
# The lab's own check that the fault happened: rui receives ana's
# packets from the new mapping (port 27700 of nata, or natc).
case $CASE in
rebind) from="ip saddr 203.0.113.21 udp sport 27700" ;;
move) from="ip saddr 203.0.113.23 meta l4proto udp" ;;
esac
lab_net ip netns exec "${LABNS[rui]}" nft add table ip fieldnew
lab_net ip netns exec "${LABNS[rui]}" nft add chain ip fieldnew in \
	'{ type filter hook input priority filter; }'
lab_net ip netns exec "${LABNS[rui]}" nft add rule ip fieldnew in $from counter
send_bg ana "ana right after the $CASE"
send_bg bo "bo right after the $CASE"
crossed "$CASE: after the fault, the first" "$F" 5 15 \
	"ana right after the $CASE" "bo right after the $CASE"

newpk=$(ip netns exec "${LABNS[rui]}" nft -j list chain ip fieldnew in |
	jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add')
check "lab: after the $CASE rui receives ana's packets from the new address ($from: $newpk packets)" \
	test "${newpk:-0}" -gt 0

# Status: honest within 10 s of the fault, at both.
for x in "ana bo" "bo ana"; do
	read -r a b <<<"$x"
	t=$(until_true $(( 10 * FIELD_SLACK - ($(ms) - F) / 1000 )) honest "$a" "$b" && ms)
	status_is "$a" . || true
	within "$CASE: $a's status for $b honest (no dead direct path claimed):" "$F" "$t" 10 \
		"$a's status: $(shown "$a")"
done

# The direct path back: both sides, carrying packets both ways.
t=$(until_true $(( 20 * FIELD_SLACK - ($(ms) - F) / 1000 )) direct_live ana bo && ms)
status_is ana . ; status_is bo .
t2=$( [ -n "$t" ] && until_true 5 direct_live bo ana && ms)
within "$CASE: direct path ana-bo back (both sides):" "$F" "$t2" 20 \
	"ana's status: $(shown ana); bo's status: $(shown bo); ana heard $(heard ana "$(public_of bo)") from bo's address, bo $(heard bo "$(public_of ana)") from ana's"
say "after: ana sees bo $(jq -c "$(m bo) | {path, rtt_ms}" "$T/status-ana"), observed $(jq -r .me.observed "$T/status-ana"), addrs $(jq -c .me.addrs "$T/status-ana")"

field_stop
wait_bg
all_once ana bo 40
all_once bo ana 40
once bo "ana right after the $CASE"
once ana "bo right after the $CASE"

# Without the introducer.
stop rui
R=$(ms)
send_bg ana "ana after rui left"
send_bg bo "bo after rui left"
crossed "$CASE: after rui left," "$R" 5 15 "ana after rui left" "bo after rui left"
eventually 10 ana "$(m bo).online" "after rui left, ana sees bo online"
eventually 10 bo "$(m ana).online" "after rui left, bo sees ana online"
wait_bg
stop_all
finish
