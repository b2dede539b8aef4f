#!/usr/bin/env bash
# field_mtu.sh: issue 21's case 1 and issue 37's item 7, small MTUs, in
# the lab of lab.sh.  Two rooms behind the same two NATs (every daemon
# with PAPO_LAN=off PAPO_PORTMAP=off):
#
#   IPv4: rui public (203.0.113.10), ana behind the cone NAT nata
#         (203.0.113.21), bo behind the cone NAT natb (203.0.113.22);
#   IPv6 only: rui6 public (2001:db8::10), ana6 behind nata
#         (2001:db8:1::11), bo6 behind natb (2001:db8:2::11): routed, no
#         NAT.
#
# The internet router drops every IPv4 and IPv6 fragment (lab_nofrag
# inet: many firewalls do, and IPv6 routers never fragment), so a
# datagram larger than the path only arrives if papo sends it no larger.
# For each MTU of nata's and natb's uplinks, 1500, 1420, 1280 and 1200
# (both ends, lab_mtu), all six daemons start again (fresh connections),
# and:
#  - the first messages, sent as soon as the daemons are up (ana to bo, bo
#    to ana, and ana6 to bo6, bo6 to ana6), each arrive within 2 s (issue
#    37: 9.4 s at 1280);
#  - in each room, the members behind the NATs see each other online;
#  - a 40 KiB message (papo say takes up to 48 KiB) and an ordinary one
#    go each way between ana and bo, between ana6 and bo6, and from rui
#    and rui6 to the members behind the NATs: each arrives within 20 s,
#    once (the times are printed);
#  - where /api/status's members[] have a path MTU ("mtu": the largest
#    UDP payload the connection found), it is printed and must be at most
#    what the link carries: MTU - 28 on IPv4, MTU - 48 on IPv6, or
#    QUIC's minimum of 1200 on a link below it (no failure when the field
#    is absent); a build without DF (`papo doctor`: the portable one)
#    below 1228, where the router passes fragments, is told apart: its
#    probes pass fragmented, its path MTU may exceed the link (printed).
# An MTU below 1228 carries no IPv4 datagram of QUIC's 1,200-byte
# minimum: there the internet router lets fragments through (it only
# counts them), as a router that fragments does, and papo must send its
# datagrams of that minimum without DF so that the NAT fragments them
# (docs/REACHABILITY.md, "Small MTUs"): every message above still
# arrives, and the router must have counted fragments.  Linux has no IPv6
# on a link below 1280 (nor does IPv6 allow one), so those rounds leave
# out rui6, ana6 and bo6 and must come last (the NATs' IPv6 addresses
# are gone).  The fragments the router dropped (or passed) are printed
# per round.
#
# Needs root, iproute2 and nftables.  Without them it prints
# "SKIPPED: reason" and exits 77.
# Usage: field_mtu.sh PATH_TO_PAPO [MTU...]
PAPO=${1:?usage: field_mtu.sh PATH_TO_PAPO [MTU...]}
shift
MTUS=${*:-1500 1420 1280 1200}
. "$(dirname "$0")/field_lib.sh"
# Whether this build sends with DF (papo doctor's platform line).
DF=yes
PAPO_HOME=$T/doctor "$PAPO" doctor 2>/dev/null | grep -q '^platform .*UDP with no DF' && DF=no
say "this build sends UDP $([ $DF = yes ] && echo with || echo without) DF"

lab_up
lab_public rui 203.0.113.10
lab_nat nata cone 203.0.113.21
lab_nat natb cone 203.0.113.22
lab_host ana nata
lab_host bo natb
lab_v6 nata
lab_v6 natb
lab_public6 rui6 2001:db8::10
lab_host6 ana6 nata
lab_host6 bo6 natb
lab_nofrag inet
say "IPv6: rui6 ${LABIP6[rui6]}, ana6 ${LABIP6[ana6]}, bo6 ${LABIP6[bo6]}"

big() { # big NAME TAG: a text of 40 KiB
	local head="$1 40KiB $2 "
	printf '%s' "$head"
	head -c $(( 40960 - ${#head} )) /dev/zero | tr '\0' 'x'
}

# exchange A B TAG OVERHEAD MTU: the big and the small message, A to B.
exchange() {
	local a=$1 b=$2 tag=$3 t0 tb ts text mtu
	text=$(big "$a" "$tag")
	t0=$(ms)
	send_bg "$a" "$text"
	send_bg "$a" "$a small $tag"
	ts=$(arrival $(( 20 * FIELD_SLACK )) "$b" "$a small $tag")
	tb=$(arrival $(( 20 * FIELD_SLACK )) "$b" "$text")
	within "MTU $5: $a to $b, ordinary message:" "$t0" "$ts" 20 \
		"$b's status: $(status_is "$b" .; shown "$b")"
	within "MTU $5: $a to $b, 40 KiB message:" "$t0" "$tb" 20 \
		"$a's status: $(status_is "$a" .; shown "$a"); fragments dropped (IPv4 IPv6): $(lab_frags inet)"
	[ -z "$tb" ] || check "$b's history has $a's 40 KiB message ($tag) once" \
		test "$(history_count "$b" "$text")" = 1
	[ -z "$ts" ] || once "$b" "$a small $tag"
	status_is "$a" . || true
	mtu=$(jq -r "$(m "$b").mtu // empty" "$T/status-$a")
	if [ -n "$mtu" ]; then
		fits=$(( $5 - $4 ))
		[ "$fits" -ge 1200 ] || fits=1200
		say "MTU $5: $a's path MTU to $b: $mtu (link carries $(( $5 - $4 )))"
		# Without DF (the portable build: papo doctor says so), a
		# router that passes fragments, as below 1228 here, lets
		# probes larger than the link through, fragmented: the
		# path MTU may then exceed the link, and the messages
		# above (and the fragments counted) are what is checked.
		if [ "$DF" = no ] && [ "$5" -lt 1228 ]; then
			say "MTU $5: no DF in this build: $a's path MTU to $b is $mtu, fragmented on the link"
		else
			check "MTU $5: $a's path MTU to $b, $mtu, fits the link ($fits)" \
				test "$mtu" -le "$fits"
		fi
	fi
}

# firsts MTU A B...: A's first message to B and B's to A (each pair of
# names), sent at once; each must arrive within 2 s.
firsts() {
	local mtu=$1 t0 a b; shift
	declare -A at
	t0=$(ms)
	for a in "$@"; do send_bg "$a" "$a first at $mtu"; done
	while [ $# -gt 0 ]; do
		a=$1 b=$2; shift 2
		at[$a]=$(arrival $(( 2 * FIELD_SLACK )) "$b" "$a first at $mtu")
		at[$b]=$(arrival $(( 2 * FIELD_SLACK )) "$a" "$b first at $mtu")
		within "MTU $mtu: $a's first message at $b:" "$t0" "${at[$a]}" 2 \
			"$b's status: $(status_is "$b" .; shown "$b")"
		within "MTU $mtu: $b's first message at $a:" "$t0" "${at[$b]}" 2 \
			"$a's status: $(status_is "$a" .; shown "$a")"
	done
}

# Below 1228 the router passes fragments, counting them (see above).
lab_frag_pass() {
	lab_net ip netns exec "${LABNS[inet]}" nft flush chain inet labfrag pre
	lab_net ip netns exec "${LABNS[inet]}" nft add rule inet labfrag pre \
		ip frag-off \& 0x3fff != 0 counter
	lab_net ip netns exec "${LABNS[inet]}" nft add rule inet labfrag pre \
		exthdr frag exists counter
}

first=1 v6=1
for mtu in $MTUS; do
	if [ -z "$first" ]; then stop_all; fi
	[ "$mtu" -ge 1280 ] || v6=
	[ "$mtu" -ge 1228 ] || lab_frag_pass
	lab_mtu nata "$mtu"
	lab_mtu natb "$mtu"
	if [ -n "$first" ]; then
		room rui ana bo || { finish; exit 1; }
		room rui6 ana6 bo6 || { finish; exit 1; }
		first=
	elif [ -n "$v6" ]; then
		for n in rui ana bo rui6 ana6 bo6; do lab_start "$n" || { finish; exit 1; }; done
	else
		for n in rui ana bo; do lab_start "$n" || { finish; exit 1; }; done
	fi
	f0=$(lab_frags inet)
	firsts "$mtu" ana bo ${v6:+ana6 bo6}
	eventually 30 ana "$(m bo).online" "MTU $mtu: ana sees bo online"
	eventually 30 bo "$(m ana).online" "MTU $mtu: bo sees ana online"
	if [ -n "$v6" ]; then
		eventually 30 ana6 "$(m bo6).online" "MTU $mtu: ana6 sees bo6 online"
		eventually 30 bo6 "$(m ana6).online" "MTU $mtu: bo6 sees ana6 online"
		say "MTU $mtu: ana to bo $(jq -c "$(m bo) | {path, mtu}" "$T/status-ana"), ana6 to bo6 $(jq -c "$(m bo6) | {path, mtu}" "$T/status-ana6")"
	else
		say "MTU $mtu: ana to bo $(jq -c "$(m bo) | {path, mtu}" "$T/status-ana"); no IPv6 below 1280"
	fi
	exchange ana bo "v4-$mtu" 28 "$mtu"
	exchange bo ana "v4-$mtu" 28 "$mtu"
	exchange rui ana "v4-$mtu" 28 "$mtu"
	if [ -n "$v6" ]; then
		exchange ana6 bo6 "v6-$mtu" 48 "$mtu"
		exchange bo6 ana6 "v6-$mtu" 48 "$mtu"
		exchange rui6 bo6 "v6-$mtu" 48 "$mtu"
	fi
	wait_bg
	f1=$(lab_frags inet)
	if [ "$mtu" -ge 1228 ]; then
		say "MTU $mtu: fragments the router dropped (IPv4 IPv6): before $f0, after $f1"
	else
		say "MTU $mtu: fragments the router passed (IPv4 IPv6): $f1"
		check "MTU $mtu: QUIC's datagrams crossed the link as IPv4 fragments ($f1)" \
			test "${f1%% *}" -gt 0
	fi
done
stop_all
finish
