#!/usr/bin/env bash
# field_guards.sh: what held up when issue 21 tried papo in the field, kept
# as guards, in the lab of lab.sh: rui public (203.0.113.10), ana behind
# the cone NAT nata, bo behind the cone NAT natb; every daemon with
# PAPO_LAN=off PAPO_PORTMAP=off.  One case a run:
#
#   loss     ana's link loses 10 %, then 30 %, of its frames each way,
#            with 150 ms of delay (+/- 10 ms) and 5 % reordering (the
#            impair program, tests/tools/impair.c, between ana and nata:
#            this kernel has no netem).  ana and bo each send 15 messages
#            a round: every one reaches the other once, within 60 s (the
#            time until the last arrived is printed).
#   timeout  nata and natb forget a UDP mapping after 20 s of silence
#            (nf_conntrack_udp_timeout and _stream); after 60 s with no
#            message (FIELD_SILENCE) ana and bo still see each other
#            online and a message each way arrives within 5 s.
#   ipv6     IPv6 only: rui6 (2001:db8::10) and ana6 (2001:db8::11)
#            public, bo6 behind natb's stateful IPv6 firewall (inbound new
#            dropped); all see each other online and exchange messages.
#
# Needs root, iproute2 and nftables.  Without them it prints
# "SKIPPED: reason" and exits 77.
# Usage: field_guards.sh PATH_TO_PAPO PATH_TO_IMPAIR loss|timeout|ipv6
PAPO=${1:?usage: field_guards.sh PATH_TO_PAPO PATH_TO_IMPAIR loss|timeout|ipv6}
LAB_IMPAIR=${2:?usage: field_guards.sh PATH_TO_PAPO PATH_TO_IMPAIR loss|timeout|ipv6}
CASE=${3:?usage: field_guards.sh PATH_TO_PAPO PATH_TO_IMPAIR loss|timeout|ipv6}
. "$(dirname "$0")/field_lib.sh"
FIELD="field_guards.sh $CASE"

case_loss() {
	local loss a b k t0 x p
	field_lab
	field_room
	for loss in 10 30; do
		lab_impair ana "$loss" 150 5 10
		say "ana's link: $loss % loss, 150 ms delay (+/- 10), 5 % reordering"
		rm -f "$T/sent-ana" "$T/sent-bo"
		t0=$(ms)
		for k in $(seq 1 15); do
			# Both at once; not a bare wait: the daemons are jobs too.
			send ana "ana $loss% $k" & p=$!
			send bo "bo $loss% $k"
			wait "$p"
			sleep 0.2
		done
		for x in "ana bo" "bo ana"; do
			read -r a b <<<"$x"
			all_once "$a" "$b" 60
		done
		say "$loss %: all 30 in both histories $(secs "$t0") s after the first send"
	done
	lab_impair ana 0 0 0
	talk ana bo "on a clean link again"
	lab_unimpair ana
	say "impair's counts: $(grep impair: "$T/impair-ana.log" | tail -4 | tr '\n' ' ')"
}

case_timeout() {
	local s=${FIELD_SILENCE:-60} t0 t
	field_lab
	lab_udp_timeout nata 20
	lab_udp_timeout natb 20
	field_room
	eventually 20 ana "$(m bo).path | $DIRECT" "ana has a path of its own to bo"
	say "ana to bo: $(jq -c "$(m bo) | {path, rtt_ms}" "$T/status-ana"); $s s of silence, UDP mappings kept 20 s"
	sleep "$s"
	now_is ana "[$(m rui), $(m bo) | .online] == [true, true]" \
		"after $s s of silence ana still sees rui and bo online"
	now_is bo "$(m ana).online" "after $s s of silence bo still sees ana online"
	say "after the silence, ana to bo: $(jq -c "$(m bo) | {path, rtt_ms}" "$T/status-ana")"
	t0=$(ms); send ana "ana after the silence"
	t=$(arrival 10 bo "ana after the silence")
	within "ana to bo after $s s of silence:" "$t0" "$t" 5 "bo's status: $(status_is bo .; shown bo)"
	t0=$(ms); send bo "bo after the silence"
	t=$(arrival 10 ana "bo after the silence")
	within "bo to ana after $s s of silence:" "$t0" "$t" 5 "ana's status: $(status_is ana .; shown ana)"
	once bo "ana after the silence"
	once ana "bo after the silence"
}

case_ipv6() {
	local n
	lab_up
	lab_nat natb cone 203.0.113.22
	lab_v6 natb fw
	lab_public6 rui6 2001:db8::10
	lab_public6 ana6 2001:db8::11
	lab_host6 bo6 natb
	say "rui6 ${LABIP6[rui6]}, ana6 ${LABIP6[ana6]}, bo6 ${LABIP6[bo6]} behind natb's IPv6 firewall"
	room rui6 ana6 bo6 || { finish; exit 1; }
	check "rui6's invite carries its IPv6 address: $(invite_addrs "$(lab_papo rui6 invite)" | tr '\n' ' ')" \
		grep -q '2001:db8::10' <<<"$(invite_addrs "$(lab_papo rui6 invite)")"
	for n in rui6 ana6 bo6; do
		eventually 30 "$n" '[.members[].online] | length == 2 and all' "$n sees every member online"
		say "$n: $(jq -c '[.members[] | {name, path}]' "$T/status-$n")"
	done
	talk ana6 bo6 "over IPv6"
	talk bo6 rui6 "over IPv6"
	talk rui6 ana6 "over IPv6"
}

case $CASE in
loss) case_loss ;;
timeout) case_timeout ;;
ipv6) case_ipv6 ;;
*) echo "field_guards.sh: no case '$CASE'" >&2; exit 2 ;;
esac
stop_all
finish
