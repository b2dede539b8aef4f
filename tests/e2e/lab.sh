#!/usr/bin/env bash
# lab.sh: a small internet in network namespaces, for tests of members
# behind NATs.  Source it after lib.sh (it uses T, fail, finish, until_true,
# URL and PAPO), then call lab_up.
#
#   "internet" namespace: a router (203.0.113.1 on each of its links);
#                               every public host and NAT has a link of
#                               its own to it, so any two are one routed
#                               hop apart, as on the real internet.
#   lab_public NAME IP          a public host: eth0 with IP/32 on its link
#                               to the router, default route via it.
#   lab_nat NAME FLAVOUR WAN_IP [drop]
#                               a NAT router: "wan" with WAN_IP/32 on its
#                               link to the router, "lan" a bridge with
#                               192.168.K.1/24
#                               (K = 1 for the first router, 2 for the
#                               next...), ip_forward on, and in nftables:
#                                 cone       masquerade on wan (Linux keeps
#                                            the source port when it can:
#                                            one mapping for every peer)
#                                 symmetric  masquerade random,fully-random
#                                            (a new random port for each
#                                            peer)
#                                 drop       unsolicited inbound from wan is
#                                            dropped (ct state new), but
#                                            what lab_forward lets in
#   lab_host NAME NAT           a host behind NAT: eth0 with 192.168.K.10,
#                               .11... on NAT's lan, default route via
#                               192.168.K.1.
#   lab_forward NAT PORT HOST   NAT's WAN UDP PORT goes to HOST's PORT
#                               (DNAT).
#
#   lab_start NAME [ARGS...]    `papo serve` in NAME's namespace, QUIC on
#                               0.0.0.0:$LAB_PORT (7700 on every host),
#                               HTTP on 127.0.0.1:0 there, PAPO_HOME=$T/NAME;
#                               sets URL[NAME].  Environment variables of
#                               the caller pass through.
#   lab_api NAME PATH [CURL ARGS...]   curl of NAME's HTTP API, from inside
#                               its namespace.
#   lab_papo NAME ARGS...       the papo CLI in NAME's namespace and home.
#   invite_addrs INVITE         the invite's addresses, one a line, as a
#                               joiner reads them.
#   (lab_api and lab_papo work for lib.sh's loopback daemons too: a name
#   with no namespace runs in this one.)
#
# NAME is a lower-case letter and up to 11 letters or digits.  The
# namespaces are papo-lab-PID-NAME, unique to this run; the interfaces
# (eth0, wan, lan, u-NAME at the router, h-NAME on a NAT's bridge) are made
# straight inside them and never exist outside, so deleting the namespaces
# on exit removes all of it, daemons first (lib.sh's cleanup kills every
# $T/*.pid).  Without root, ip or nft, lab_up prints
# "SKIPPED: reason" and exits 77.
LAB=papo-lab-$$
LAB_PORT=7700
# Inside the lab's namespaces LAN discovery is on, as for a user (lib.sh
# turns it off for daemons on this machine's own network; its start()
# still does).  A caller may say PAPO_LAN=off for one daemon.
export PAPO_LAN=on
LAB_NAMESPACES=()
LAB_NATS=0
declare -A LABNS LABIP LABNET LABHOSTS

lab_down() {
	local ns
	for ns in "${LAB_NAMESPACES[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
}
trap 'rc=$?; cleanup; lab_down; exit $rc' EXIT
trap 'exit 1' INT TERM HUP

lab_skip() { echo "SKIPPED: $*"; exit 77; }

# lab_net COMMAND...: a step of building the lab; a failure ends the test.
lab_net() {
	"$@" 2>"$T/lab.err" || { fail "lab: $*: $(cat "$T/lab.err")"; finish; exit 1; }
}

# lab_ns NAME: a new namespace for NAME, with its loopback up.
lab_ns() {
	local n=$1 ns=$LAB-$1
	[[ $n =~ ^[a-z][a-z0-9]{0,11}$ ]] || { fail "lab: bad name '$n'"; finish; exit 1; }
	[ -z "${LABNS[$n]:-}" ] || { fail "lab: '$n' made twice"; finish; exit 1; }
	LAB_NAMESPACES+=("$ns")
	ip netns add "$ns" 2>"$T/lab.err" || return 1
	LABNS[$n]=$ns
	lab_net ip -n "$ns" link set lo up
}

lab_up() {
	[ "$(id -u)" -eq 0 ] || lab_skip "network namespaces need root"
	command -v ip >/dev/null || lab_skip "no ip command (iproute2)"
	command -v nft >/dev/null || lab_skip "no nft command (nftables)"
	lab_ns inet || lab_skip "ip netns add failed: $(cat "$T/lab.err")"
	ip netns exec "${LABNS[inet]}" nft add table ip probe 2>"$T/lab.err" ||
		lab_skip "nftables does not work in a namespace: $(cat "$T/lab.err")"
	lab_net ip netns exec "${LABNS[inet]}" nft delete table ip probe
	# The internet is a router: every host and NAT is on a link of its
	# own to it, one hop apart, as on the real internet (a NAT's low-TTL
	# punch must die between the two NATs).
	lab_net ip netns exec "${LABNS[inet]}" sh -c \
	    'echo 1 >/proc/sys/net/ipv4/ip_forward'
}

# lab_uplink NAME NS IF IP: a link of its own from NS (interface IF, with
# IP) to the internet router (interface u-NAME, with 203.0.113.1), and
# NS's default route through it.
lab_uplink() {
	local n=$1 ns=$2 ifname=$3 ip=$4
	lab_net ip link add "$ifname" netns "$ns" type veth peer name "u-$n" \
	    netns "${LABNS[inet]}"
	lab_net ip -n "$ns" addr add "$ip/32" dev "$ifname"
	lab_net ip -n "$ns" link set "$ifname" up
	lab_net ip -n "$ns" route add 203.0.113.1/32 dev "$ifname"
	lab_net ip -n "$ns" route add default via 203.0.113.1 dev "$ifname"
	lab_net ip -n "${LABNS[inet]}" addr add 203.0.113.1/32 dev "u-$n"
	lab_net ip -n "${LABNS[inet]}" link set "u-$n" up
	lab_net ip -n "${LABNS[inet]}" route add "$ip/32" dev "u-$n"
}

# lab_wire NS IF NS2 IF2 BRIDGE2: a veth pair, IF in NS and IF2 in NS2,
# IF2 a port of NS2's BRIDGE2; both ends up.
lab_wire() {
	lab_net ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
	lab_net ip -n "$3" link set "$4" master "$5"
	lab_net ip -n "$3" link set "$4" up
	lab_net ip -n "$1" link set "$2" up
}

lab_public() {
	local n=$1 ip=$2
	lab_ns "$n" || { fail "lab: ip netns add: $(cat "$T/lab.err")"; finish; exit 1; }
	lab_uplink "$n" "${LABNS[$n]}" eth0 "$ip"
	LABIP[$n]=$ip
}

lab_nat() {
	local n=$1 flavour=$2 wan=$3 drop=${4:-} ns masq k
	case $flavour in
	cone) masq='masquerade' ;;
	symmetric) masq='masquerade random,fully-random' ;;
	*) fail "lab: NAT flavour '$flavour' is neither cone nor symmetric"; finish; exit 1 ;;
	esac
	case $drop in
	'' | drop) ;;
	*) fail "lab: '$drop' is not drop"; finish; exit 1 ;;
	esac
	lab_ns "$n" || { fail "lab: ip netns add: $(cat "$T/lab.err")"; finish; exit 1; }
	ns=${LABNS[$n]}
	LAB_NATS=$((LAB_NATS + 1)); k=$LAB_NATS
	lab_uplink "$n" "$ns" wan "$wan"
	lab_net ip -n "$ns" link add lan type bridge forward_delay 0
	lab_net ip -n "$ns" addr add "192.168.$k.1/24" dev lan
	lab_net ip -n "$ns" link set lan up
	lab_net ip netns exec "$ns" sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward'
	{
		echo 'table ip lab {'
		echo '  chain prerouting { type nat hook prerouting priority dstnat; }'
		echo '  chain postrouting { type nat hook postrouting priority srcnat;'
		echo "    oifname \"wan\" $masq; }"
		if [ "$drop" = drop ]; then
			echo '  chain forward { type filter hook forward priority filter;'
			echo '    ct state established,related accept;'
			echo '    iifname "wan" ct status dnat accept;'
			echo '    iifname "wan" ct state new drop; }'
			echo '  chain input { type filter hook input priority filter;'
			echo '    ct state established,related accept;'
			echo '    iifname "wan" ct state new drop; }'
		fi
		echo '}'
	} >"$T/nft-$n"
	lab_net ip netns exec "$ns" nft -f "$T/nft-$n"
	LABIP[$n]=$wan LABNET[$n]=192.168.$k LABHOSTS[$n]=0
}

lab_host() {
	local n=$1 nat=$2 ip
	[ -n "${LABNET[$nat]:-}" ] || { fail "lab: no NAT router '$nat'"; finish; exit 1; }
	lab_ns "$n" || { fail "lab: ip netns add: $(cat "$T/lab.err")"; finish; exit 1; }
	LABHOSTS[$nat]=$(( LABHOSTS[$nat] + 1 ))
	ip=${LABNET[$nat]}.$(( 9 + LABHOSTS[$nat] ))
	lab_wire "${LABNS[$n]}" eth0 "${LABNS[$nat]}" "h-$n" lan
	lab_net ip -n "${LABNS[$n]}" addr add "$ip/24" dev eth0
	lab_net ip -n "${LABNS[$n]}" route add default via "${LABNET[$nat]}.1"
	LABIP[$n]=$ip
}

lab_forward() {
	local nat=$1 port=$2 host=$3
	lab_net ip netns exec "${LABNS[$nat]}" nft add rule ip lab prerouting \
		iifname wan udp dport "$port" dnat to "${LABIP[$host]}:$port"
}

# lab_in NAME COMMAND...: runs the command in NAME's namespace (in this
# one when NAME has none: lib.sh's loopback daemons).
lab_in() {
	local n=$1; shift
	if [ -n "${LABNS[$n]:-}" ]; then
		ip netns exec "${LABNS[$n]}" "$@"
	else
		"$@"
	fi
}

lab_start() {
	local n=$1; shift
	local in=()
	[ -z "${LABNS[$n]:-}" ] || in=(ip netns exec "${LABNS[$n]}")
	rm -f "$T/$n/serve.json"
	# Not through lab_in: $! must be the daemon's own pid (ip netns exec
	# execs it), not that of a subshell.
	"${in[@]}" env PAPO_HOME="$T/$n" "$PAPO" serve --http 127.0.0.1:0 \
		--listen "0.0.0.0:$LAB_PORT" --name "$n" "$@" \
		>>"$T/$n.out" 2>>"$T/$n.err" </dev/null &
	echo $! >"$T/$n.pid"
	if ! until_true 20 test -s "$T/$n/serve.json"; then
		fail "$n did not start: $(tail -3 "$T/$n.err")"
		kill -KILL "$(cat "$T/$n.pid")" 2>/dev/null
		wait "$(cat "$T/$n.pid")" 2>/dev/null
		rm -f "$T/$n.pid"
		return 1
	fi
	URL[$n]=$(jq -r .http "$T/$n/serve.json")
}

lab_api() {
	local n=$1 path=$2; shift 2
	lab_in "$n" curl -sS --max-time 30 "${URL[$n]}$path" "$@"
}

lab_papo() {
	local n=$1; shift
	lab_in "$n" env PAPO_HOME="$T/$n" "$PAPO" "$@"
}

# invite_addrs INVITE: the invite's addresses, one a line, in order, as a
# joiner reads them (room.json's "bootstrap" after papo join in a fresh
# home).
invite_addrs() {
	local h; h=$(mktemp -d "$T/probe.XXXXXX")
	if ! PAPO_HOME=$h "$PAPO" join "$1" --name probe >/dev/null 2>"$h.err"; then
		echo "papo join failed: $(cat "$h.err")"
		return 1
	fi
	jq -r '.bootstrap[]' "$h/room.json"
}
