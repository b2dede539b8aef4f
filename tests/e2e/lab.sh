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
#   lab_stun NAME IP IP2        a public host with two addresses, running
#                               coturn as an RFC 5780 STUN server on both
#                               (ports 3478 and 3479): what miniupnpd
#                               needs to believe a WAN in 203.0.113.0/24.
#   lab_turn NAME IP            a public host running coturn as a TURN
#                               server on IP:3478 (UDP, long-term
#                               credentials u:p, realm papo), its log in
#                               $T/NAME.log; lab_turn_start NAME starts it
#                               again on the same address after a kill
#                               (crash NAME).
#   lab_count NAME [MIN]        nftables counters of the UDP packets and
#                               bytes NAME's eth0 sends and receives, those
#                               of at least MIN bytes only if given (table
#                               "ip labcountMIN" in its namespace; bytes
#                               are IP lengths: IP and UDP headers
#                               included); lab_counted NAME [MIN] prints
#                               them as "IN_PACKETS IN_BYTES OUT_PACKETS
#                               OUT_BYTES".
#   lab_block A B / lab_unblock A B
#                               the internet router drops (or no longer
#                               drops) what A and B (public hosts or NATs)
#                               send each other.
#   lab_upnpd NAT [both|upnp|natpmp]
#                               miniupnpd 2.3 on NAT (UPnP-IGD and NAT-PMP,
#                               or one of them) for the hosts of its LAN,
#                               with its rules in NAT's table "inet
#                               miniupnpd", its conf, log and lease file in
#                               $T/upnpd-NAT.{conf,log,leases}.  Needs
#                               lab_stun first and a NAT made without drop
#                               (see lab_upnpd below for why).
#
# Links that hold up less well (issue 21's field tests):
#   lab_impair NAME LOSS DELAY_MS REORDER [JITTER_MS] [up|down|both]
#                               the link from NAME (a public host, a NAT's
#                               WAN or a host behind a NAT) to the router
#                               above it loses LOSS %, delays DELAY_MS
#                               (+/- JITTER_MS) and lets REORDER % overtake,
#                               up (from NAME), down (to NAME) or both
#                               (default).  How: the router's end of the
#                               veth pair moves into a namespace of its own,
#                               NAME's "x" namespace, and a new veth (same
#                               name, MAC, addresses and routes at the
#                               router) joins it there; tests/tools/impair
#                               ($LAB_IMPAIR, set by the caller) copies the
#                               frames between the two, AF_PACKET sockets,
#                               as this kernel has no netem.  Called again,
#                               it changes the impairment (the forwarder is
#                               restarted; its counts go to
#                               $T/impair-NAME.log); lab_impair NAME 0 0 0 is
#                               a clean link.  lab_unimpair NAME ends the
#                               forwarder (SIGTERM; it must end cleanly):
#                               the link is then cut.  lab_move does not
#                               handle an impaired host.
#   lab_mtu NAME MTU            the MTU of NAME's link to the router above
#                               it, both ends (and the forwarder's, if
#                               impaired).
#   lab_nofrag ROUTER [blackhole]
#                               ROUTER ("inet" or a NAT) drops every IPv4
#                               and IPv6 fragment it receives (table inet
#                               labfrag, prerouting at priority -500:
#                               before conntrack reassembles them), as many
#                               firewalls do; with blackhole, it drops the
#                               ICMP "fragmentation needed" and ICMPv6
#                               "packet too big" it would forward too (a
#                               PMTU black hole).  lab_frags ROUTER prints
#                               the fragments it dropped: "IPV4 IPV6".
#   lab_rebind NAT [PORT]       NAT's mapping of the daemons' port moves: a
#                               cone NAT that lost its state (a reboot)
#                               and maps UDP port $LAB_PORT of its hosts to
#                               PORT now (default 20000 + $LAB_PORT, then
#                               30000 + ... on each call), one mapping for
#                               every peer as before; other ports keep
#                               theirs.  Its conntrack table is emptied, so
#                               every flow takes the new mapping at its
#                               next packet.  (A port range for every flow
#                               would make it symmetric: Linux picks a
#                               random port of a range for each new flow
#                               when the host's own is outside it.)
#                               The conntrack tool is not installed here,
#                               nftables has no command to empty the table
#                               and /proc no file: tests/tools/ctflush
#                               ($LAB_CTFLUSH, set by the caller) asks
#                               ctnetlink (IPCTNL_MSG_CT_DELETE with no
#                               tuple), which works in a namespace.
#   lab_move HOST NAT2          HOST (made by lab_host) leaves its NAT for
#                               NAT2, as a laptop leaving home Wi-Fi for a
#                               phone's hotspot: its eth0 goes away (with
#                               its address and route) and a new one comes
#                               up on NAT2's LAN with the next address there
#                               and a default route via NAT2; an IPv6
#                               address too if NAT2 has IPv6.
#   lab_udp_timeout NAT SECONDS [STREAM_SECONDS]
#                               NAT forgets a UDP mapping after SECONDS of
#                               silence (nf_conntrack_udp_timeout, and
#                               _stream, default the same, in its
#                               namespace; they apply to existing mappings
#                               at their next packet).
#
# IPv6 (2001:db8::/32; the router is 2001:db8::1 on each of its links, as
# 203.0.113.1; no NAT):
#   lab_v6 NAME [fw]            NAME (made already) gets IPv6 too.  A public
#                               host or a NAT's WAN: 2001:db8::X/128 where X
#                               is the last number of its IPv4 address
#                               (203.0.113.21 -> 2001:db8::21), routes as
#                               for IPv4.  A NAT: its LAN 2001:db8:K::1/64
#                               (K as in 192.168.K), routed to it by the
#                               router, forwarding on; with fw, a stateful
#                               firewall there (table ip6 labfw6: inbound
#                               new from wan dropped, established and
#                               related accepted).  A host behind a NAT
#                               with IPv6: 2001:db8:K::N/64 (N as in its
#                               IPv4 address), default route via the NAT.
#                               Sets LABIP6[NAME].
#   lab_public6 NAME IP6        a public host with IPv6 only (IP6/128).
#   lab_host6 NAME NAT          a host with IPv6 only behind NAT (which
#                               lab_v6 gave IPv6): 2001:db8:K::N/64.
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
#   status_is NAME FILTER       NAME's /api/status satisfies the jq filter
#                               (kept in $T/status-NAME).
#   eventually SECONDS NAME FILTER DESCRIPTION
#                               a check: NAME's status comes to satisfy
#                               FILTER within SECONDS; a failure shows
#                               what `shown NAME` gives of the last one.
#   now_is NAME FILTER DESCRIPTION   the same check, once, now.
#   m NAME                      the jq filter for member NAME in a status.
#   say_ok NAME TEXT PATTERN DESCRIPTION
#                               a check: `papo say TEXT` on NAME answers
#                               something matching PATTERN.
#   history_count NAME TEXT     how many times NAME's history (the last
#                               500) lists TEXT; history_has NAME TEXT: at
#                               least once; once NAME TEXT: a check that
#                               it is there exactly once.
#   talk A B WHY                a check both ways: A says "A to B, WHY",
#                               answered delivered to B, and B's history
#                               has it within 10 s; then B to A.
#   room R MEMBER...            R makes a room (papo new) and serves; each
#                               member joins R's invite and serves.
#   (lab_api and lab_papo work for lib.sh's loopback daemons too: a name
#   with no namespace runs in this one.)
#
#   ms                          milliseconds since the epoch (for timings:
#                               secs FROM_MS [TO_MS] prints the seconds
#                               between them, one decimal).
#
# NAME is a lower-case letter and up to 11 letters or digits (10 for a
# name lab_impair is given: its forwarder's namespace is xNAME).  The
# namespaces are papo-lab-PID-NAME, unique to this run; the interfaces
# (eth0, wan, lan, u-NAME at the router, h-NAME on a NAT's bridge) are made
# straight inside them and never exist outside, so deleting the namespaces
# on exit removes all of it, daemons first (lib.sh's cleanup kills every
# $T/*.pid).  Without root, ip or nft, lab_up prints
# "SKIPPED: reason" and exits 77.
LAB=papo-lab-$$
LAB_PORT=7700
# Inside the lab's namespaces LAN discovery and port mapping are on, as
# for a user (lib.sh turns them off for daemons on this machine's own
# network; its start() still does).  A caller may say PAPO_LAN=off or
# PAPO_PORTMAP=off for one daemon.
export PAPO_LAN=on PAPO_PORTMAP=on
LAB_NAMESPACES=()
LAB_NATS=0
declare -A LABNS LABIP LABNET LABHOSTS LABIP6 LABNET6 LABUP LABPEER LABNATOF
# LABUP[NAME]: NAME's interface towards the router above it (eth0 or wan);
# LABPEER[NAME]: "NS IF", that link's other end (the internet router's
# u-NAME, or h-NAME on a NAT's bridge); LABNATOF[HOST]: the NAT a host is
# behind.

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
	LABUP[$n]=$ifname LABPEER[$n]="${LABNS[inet]} u-$n"
	lab_net ip -n "$ns" link set "$ifname" up
	if [ -n "$ip" ]; then
		lab_net ip -n "$ns" addr add "$ip/32" dev "$ifname"
		lab_net ip -n "$ns" route add 203.0.113.1/32 dev "$ifname"
		lab_net ip -n "$ns" route add default via 203.0.113.1 dev "$ifname"
	fi
	LABIP[$n]=$ip
	lab_router_end "$n"
}

# lab_router_end NAME: the internet router's end of NAME's uplink, u-NAME:
# up, with the router's addresses and the routes to NAME (IPv4, and IPv6
# once lab_v6 gave NAME some).
lab_router_end() {
	local n=$1 r=${LABNS[inet]}
	lab_net ip -n "$r" link set "u-$n" up
	if [ -n "${LABIP[$n]:-}" ]; then
		lab_net ip -n "$r" addr add 203.0.113.1/32 dev "u-$n"
		lab_net ip -n "$r" route add "${LABIP[$n]}/32" dev "u-$n"
	fi
	if [ -n "${LABIP6[$n]:-}" ]; then
		lab_net ip -n "$r" -6 addr add 2001:db8::1/128 dev "u-$n" nodad
		lab_net ip -n "$r" -6 route add "${LABIP6[$n]}/128" dev "u-$n"
		[ -z "${LABNET6[$n]:-}" ] || lab_net ip -n "$r" -6 route add \
		    "${LABNET6[$n]}::/64" via "${LABIP6[$n]}" dev "u-$n"
	fi
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
	LABIP[$n]=$ip LABUP[$n]=eth0 LABPEER[$n]="${LABNS[$nat]} h-$n"
	LABNATOF[$n]=$nat
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

# status_is NAME FILTER: NAME's /api/status satisfies the jq filter; the
# answer is kept in $T/status-NAME for the failure message.
status_is() {
	lab_api "$1" /api/status >"$T/status-$1" 2>&1 &&
		jq -e "$2" "$T/status-$1" >/dev/null 2>&1
}
# shown NAME: what a failure message shows of NAME's last status: me, the
# punch counters, and each member's fields about its path.
shown() {
	jq -c '{me: (.me | {name, addrs, observed, nat, portmap, turn}), punch,
		members: [.members[]? | with_entries(select(.key | IN("name",
		"online", "path", "rtt_ms", "protocol", "last_seen")))]}' \
		"$T/status-$1" 2>/dev/null || cat "$T/status-$1"
}
eventually() {
	if until_true "$1" status_is "$2" "$3"; then ok; else
		fail "$4; $2's status: $(shown "$2")"
	fi
}
now_is() {
	if status_is "$1" "$2"; then ok; else fail "$3; $1's status: $(shown "$1")"; fi
}
m() { echo "(.members[] | select(.name == \"$1\"))"; }
say_ok() {
	lab_papo "$1" say "$2" >"$T/say-$1" 2>&1
	if grep -qE -- "$3" "$T/say-$1"; then ok; else
		fail "$4: papo say on $1 answered: $(cat "$T/say-$1")"
	fi
}
history_count() {
	lab_papo "$1" history --json -n 500 | jq --arg t "$2" \
		'[.messages[] | select(.text == $t)] | length'
}
history_has() { [ "$(history_count "$1" "$2" 2>/dev/null)" -ge 1 ] 2>/dev/null; }
once() {
	local n; n=$(history_count "$1" "$2")
	check "$1's history has '$2' once (has it $n times)" test "$n" = 1
}
talk() {
	local a=$1 b=$2 why=$3 x y
	for x in "$a $b" "$b $a"; do
		set -- $x
		y="$1 to $2, $why"
		say_ok "$1" "$y" " delivered to .*\\b$2\\b" "$1 to $2 ($why) is delivered"
		check "$2's history has '$y'" until_true 10 history_has "$2" "$y"
	done
}
room() {
	local r=$1 n inv; shift
	lab_papo "$r" new --name "$r" >/dev/null
	lab_start "$r" || return
	inv=$(lab_papo "$r" invite)
	for n in "$@"; do
		lab_papo "$n" join "$inv" --name "$n" >/dev/null
		lab_start "$n" || return
	done
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

# lab_listening NAME PORT: something in NAME's namespace listens on UDP
# PORT.
lab_listening() {
	[ -n "$(lab_in "$1" ss -Hlun "sport = :$2")" ]
}

lab_stun() {
	local n=$1 ip=$2 ip2=$3
	command -v turnserver >/dev/null || lab_skip "no turnserver (apt-get install coturn)"
	lab_public "$n" "$ip"
	lab_net ip -n "${LABNS[$n]}" addr add "$ip2/32" dev eth0
	lab_net ip -n "${LABNS[inet]}" route add "$ip2/32" dev "u-$n"
	# Two listening addresses of one family turn on coturn's RFC 5780
	# (CHANGE-REQUEST answered from the other address and port).
	# Started from a subshell, so that it is no job of this shell's and
	# its end at cleanup (kill -KILL) is not announced.
	(ip netns exec "${LABNS[$n]}" turnserver -n --stun-only --no-cli \
		--no-tls --no-dtls --no-tcp -L "$ip" -L "$ip2" -p 3478 \
		--userdb "$T/$n.db" --pidfile "$T/$n.tpid" \
		--log-file "$T/$n.log" --simple-log --no-stdout-log \
		>>"$T/$n.out" 2>>"$T/$n.err" </dev/null &
	echo $! >"$T/$n.pid")
	until_true 10 lab_listening "$n" 3479 ||
		{ fail "lab: turnserver did not start: $(tail -3 "$T/$n.log")"; finish; exit 1; }
	LAB_STUN=$ip
}

# miniupnpd 2.3.1 (Debian 12's miniupnpd-nftables) and the lab, measured:
# - It refuses to map while the WAN address is in a reserved range, and
#   203.0.113.0/24 is one; ext_ip= refuses such an address too, and there
#   is no ext_allow_private_ipv4 option before 2.3.4.  What works is
#   ext_perform_stun=yes: at start it sends four Binding requests to the
#   STUN server (plain, change port, change IP, change both) and maps only
#   if all four answers come back with the WAN address and the same
#   ports: "unrestricted full-cone NAT 1:1".  So the server must answer
#   CHANGE-REQUEST, from a second address: coturn does with two
#   listening IPs (lab_stun).  The address clients are then told is the
#   one STUN saw: the WAN address itself, as no NAT is above it.
# - The answers from the second address are unsolicited for conntrack, so
#   a NAT already dropping unsolicited inbound (lab_nat ... drop) fails
#   that check: "Port forwarding is now disabled".
# - With the nftables backend it adds its rules to chains that must exist:
#   the tables and chains below (names set in its conf), family inet.
lab_upnpd() {
	local nat=$1 what=${2:-both} ns upnp=yes natpmp=yes c=$T/upnpd-$1
	ns=${LABNS[$nat]:-}
	[ -n "${LABNET[$nat]:-}" ] || { fail "lab: no NAT router '$nat'"; finish; exit 1; }
	[ -n "${LAB_STUN:-}" ] || { fail "lab: lab_upnpd needs lab_stun first"; finish; exit 1; }
	command -v miniupnpd >/dev/null || lab_skip "no miniupnpd (apt-get install miniupnpd-nftables)"
	case $what in
	both) ;;
	upnp) natpmp=no ;;
	natpmp) upnp=no ;;
	*) fail "lab: '$what' is not both, upnp or natpmp"; finish; exit 1 ;;
	esac
	{
		echo 'table inet miniupnpd {'
		echo '  chain miniupnpd { }'
		echo '  chain prerouting_miniupnpd { }'
		echo '  chain postrouting_miniupnpd { }'
		echo '  chain forward { type filter hook forward priority filter;'
		echo '    jump miniupnpd; }'
		echo '  chain prerouting { type nat hook prerouting priority dstnat;'
		echo '    jump prerouting_miniupnpd; }'
		echo '  chain postrouting { type nat hook postrouting priority srcnat;'
		echo '    jump postrouting_miniupnpd; }'
		echo '}'
	} >"$c.nft"
	lab_net ip netns exec "$ns" nft -f "$c.nft"
	# Mappings only for the LAN's own hosts, to themselves (secure_mode);
	# min_lifetime 1 lets a test ask NAT-PMP for a lease of seconds.
	cat >"$c.conf" <<-EOF
		ext_ifname=wan
		listening_ip=lan
		http_port=0
		ipv6_disable=yes
		enable_upnp=$upnp
		enable_natpmp=$natpmp
		ext_perform_stun=yes
		ext_stun_host=$LAB_STUN
		ext_stun_port=3478
		upnp_table_name=miniupnpd
		upnp_nat_table_name=miniupnpd
		lease_file=$c.leases
		min_lifetime=1
		secure_mode=yes
		system_uptime=no
		uuid=$(cat /proc/sys/kernel/random/uuid)
		allow 1024-65535 ${LABNET[$nat]}.0/24 1024-65535
		deny 0-65535 0.0.0.0/0 0-65535
	EOF
	(ip netns exec "$ns" miniupnpd -f "$c.conf" -d -P "$c.mpid" \
		>>"$c.log" 2>&1 </dev/null &
	echo $! >"$c.pid")
	if ! until_true 15 grep -qE 'Port forwarding is now (en|dis)abled' "$c.log" ||
	    ! grep -q 'Port forwarding is now enabled' "$c.log" ||
	    { [ $upnp = yes ] && ! until_true 5 grep -q 'HTTP listening' "$c.log"; } ||
	    { [ $natpmp = yes ] && ! until_true 5 grep -q 'Listening for NAT-PMP' "$c.log"; }; then
		fail "lab: miniupnpd on $nat did not start mapping: $(tail -5 "$c.log")"
		finish; exit 1
	fi
}

# coturn 4.6 and the lab, measured: a relayed address in 203.0.113.0/24
# is a peer like any other (no --allowed-peer-ip needed), and it relays
# between two of its own relayed addresses (members on one server reach
# each other relay to relay).  -v logs each session and permission.
lab_turn() {
	command -v turnserver >/dev/null || lab_skip "no turnserver (apt-get install coturn)"
	lab_public "$1" "$2"
	lab_turn_start "$1"
}

lab_turn_start() {
	local n=$1 ip=${LABIP[$1]}
	# From a subshell, as lab_stun: no job of this shell's.
	(ip netns exec "${LABNS[$n]}" turnserver -n --listening-ip "$ip" \
		--relay-ip "$ip" --listening-port 3478 --lt-cred-mech --user u:p \
		--realm papo --no-tls --no-dtls --no-tcp --no-cli \
		--pidfile "$T/$n.tpid" --userdb "$T/$n.db" -v \
		--log-file "$T/$n.log" --simple-log --no-stdout-log \
		>>"$T/$n.out" 2>>"$T/$n.err" </dev/null &
	echo $! >"$T/$n.pid")
	until_true 10 lab_listening "$n" 3478 ||
		{ fail "lab: turnserver did not start: $(tail -3 "$T/$n.log")"; finish; exit 1; }
}

lab_count() {
	local ns=${LABNS[$1]} t=labcount${2:-} min=()
	[ -z "${2:-}" ] || min=(ip length ">=" "$2")
	lab_net ip netns exec "$ns" nft add table ip "$t"
	lab_net ip netns exec "$ns" nft add chain ip "$t" in \
		'{ type filter hook input priority filter; }'
	lab_net ip netns exec "$ns" nft add chain ip "$t" out \
		'{ type filter hook output priority filter; }'
	lab_net ip netns exec "$ns" nft add rule ip "$t" in \
		iifname eth0 meta l4proto udp "${min[@]}" counter
	lab_net ip netns exec "$ns" nft add rule ip "$t" out \
		oifname eth0 meta l4proto udp "${min[@]}" counter
}

lab_counted() {
	ip netns exec "${LABNS[$1]}" nft -j list table ip "labcount${2:-}" | jq -r '
		[.nftables[] | .rule? // empty | .expr[] | .counter? // empty] |
		"\(.[0].packets) \(.[0].bytes) \(.[1].packets) \(.[1].bytes)"'
}

# The internet router's filter: a table made on first use.
lab_block() {
	if [ -z "${LAB_FILTER:-}" ]; then
		lab_net ip netns exec "${LABNS[inet]}" nft add table ip labfw
		lab_net ip netns exec "${LABNS[inet]}" nft add chain ip labfw \
			forward '{ type filter hook forward priority filter; }'
		LAB_FILTER=1
	fi
	lab_net ip netns exec "${LABNS[inet]}" nft add rule ip labfw forward \
		ip saddr "${LABIP[$1]}" ip daddr "${LABIP[$2]}" drop comment "\"$1-$2\""
	lab_net ip netns exec "${LABNS[inet]}" nft add rule ip labfw forward \
		ip saddr "${LABIP[$2]}" ip daddr "${LABIP[$1]}" drop comment "\"$2-$1\""
}

lab_unblock() {
	local h
	for h in $(ip netns exec "${LABNS[inet]}" nft -a list chain ip labfw forward |
	    grep -E "comment \"($1-$2|$2-$1)\"" | sed 's/.*# handle //'); do
		lab_net ip netns exec "${LABNS[inet]}" nft delete rule ip labfw forward handle "$h"
	done
}

ms() { date +%s%3N; }
secs() { # secs FROM_MS [TO_MS]
	local d=$(( ${2:-$(ms)} - $1 ))
	printf '%d.%d' $(( d / 1000 )) $(( (d % 1000) / 100 ))
}

# lab_peer_end NAME: sets up the far end of NAME's link (a new veth) as
# it was made: on the NAT's bridge for a host, or with the router's
# addresses and routes for an uplink.
lab_peer_end() {
	local n=$1 pns pif
	read -r pns pif <<<"${LABPEER[$n]}"
	if [ -n "${LABNATOF[$n]:-}" ]; then
		lab_net ip -n "$pns" link set "$pif" master lan
		lab_net ip -n "$pns" link set "$pif" up
	else
		lab_router_end "$n"
	fi
}

lab_impair() {
	local n=$1 loss=$2 delay=$3 reorder=$4 jitter=${5:-0} dir=${6:-both}
	local x=x$1 pns pif mac mtu o pid
	[ -n "${LABPEER[$n]:-}" ] || { fail "lab: '$n' has no link to impair"; finish; exit 1; }
	[ -x "${LAB_IMPAIR:-}" ] || { fail "lab: LAB_IMPAIR is not the impair program: '${LAB_IMPAIR:-}'"; finish; exit 1; }
	case $dir in
	up) o=ab ;; down) o=ba ;; both) o=both ;;
	*) fail "lab: '$dir' is not up, down or both"; finish; exit 1 ;;
	esac
	read -r pns pif <<<"${LABPEER[$n]}"
	if [ -z "${LABNS[$x]:-}" ]; then
		# Splice the forwarder's namespace into the link: the far end
		# moves there as "ia" (facing NAME), a new veth "ib" there
		# takes its place at the far end, with its name, MAC and MTU.
		lab_ns "$x" || { fail "lab: ip netns add: $(cat "$T/lab.err")"; finish; exit 1; }
		mac=$(ip -n "$pns" -j link show "$pif" | jq -r '.[0].address')
		mtu=$(ip -n "$pns" -j link show "$pif" | jq -r '.[0].mtu')
		lab_net ip -n "$pns" link set "$pif" down
		lab_net ip -n "$pns" link set "$pif" netns "${LABNS[$x]}"
		lab_net ip -n "${LABNS[$x]}" link set "$pif" name ia
		lab_net ip link add "$pif" netns "$pns" address "$mac" mtu "$mtu" \
		    type veth peer name ib netns "${LABNS[$x]}" mtu "$mtu"
		lab_net ip -n "${LABNS[$x]}" link set ia up
		lab_net ip -n "${LABNS[$x]}" link set ib up
		lab_peer_end "$n"
	else
		lab_unimpair "$n"
	fi
	(ip netns exec "${LABNS[$x]}" "$LAB_IMPAIR" -l "$loss" -d "$delay" \
		-j "$jitter" -r "$reorder" -o "$o" ia ib \
		>>"$T/impair-$n.log" 2>&1 </dev/null &
	echo $! >"$T/impair-$n.pid")
	sleep 0.2   # time tested: it did not end at once (bad arguments, no device)
	pid=$(cat "$T/impair-$n.pid")
	kill -0 "$pid" 2>/dev/null ||
		{ fail "lab: impair on $n did not start: $(tail -3 "$T/impair-$n.log")"; finish; exit 1; }
}

# lab_unimpair NAME: ends NAME's forwarder (SIGTERM, which it must end
# with exit 0): the link carries nothing until lab_impair runs again.
lab_unimpair() {
	local pid
	[ -e "$T/impair-$1.pid" ] || return 0
	pid=$(cat "$T/impair-$1.pid")
	kill -TERM "$pid" 2>/dev/null
	until_true 5 bash -c "! kill -0 $pid 2>/dev/null" ||
		fail "lab: impair on $1 did not end on SIGTERM"
	rm -f "$T/impair-$1.pid"
	grep -q 'impair: ba:' "$T/impair-$1.log" ||
		fail "lab: impair on $1 ended without its counts: $(tail -3 "$T/impair-$1.log")"
}

lab_mtu() {
	local n=$1 mtu=$2 pns pif
	[ -n "${LABPEER[$n]:-}" ] || { fail "lab: '$n' has no link"; finish; exit 1; }
	read -r pns pif <<<"${LABPEER[$n]}"
	lab_net ip -n "${LABNS[$n]}" link set "${LABUP[$n]}" mtu "$mtu"
	lab_net ip -n "$pns" link set "$pif" mtu "$mtu"
	if [ -n "${LABNS[x$n]:-}" ]; then
		lab_net ip -n "${LABNS[x$n]}" link set ia mtu "$mtu"
		lab_net ip -n "${LABNS[x$n]}" link set ib mtu "$mtu"
	fi
}

lab_nofrag() {
	local r=$1 how=${2:-} ns=${LABNS[$1]:-}
	[ -n "$ns" ] || { fail "lab: no router '$r'"; finish; exit 1; }
	{
		echo 'table inet labfrag {'
		echo '  chain pre { type filter hook prerouting priority -500;'
		echo '    ip frag-off & 0x3fff != 0 counter drop;'
		echo '    exthdr frag exists counter drop; }'
		if [ "$how" = blackhole ]; then
			echo '  chain fwd { type filter hook forward priority filter;'
			echo '    icmp type destination-unreachable icmp code frag-needed counter drop;'
			echo '    icmpv6 type packet-too-big counter drop; }'
		fi
		echo '}'
	} >"$T/nft-frag-$r"
	lab_net ip netns exec "$ns" nft -f "$T/nft-frag-$r"
}

# lab_frags ROUTER: how many fragments ROUTER's lab_nofrag dropped, IPv4
# then IPv6.
lab_frags() {
	ip netns exec "${LABNS[$1]}" nft -j list chain inet labfrag pre | jq -r '
		[.nftables[] | .rule? // empty | .expr[] | .counter? // empty |
		.packets] | join(" ")'
}

lab_rebind() {
	local nat=$1 port=${2:-} ns=${LABNS[$1]:-}
	[ -n "${LABNET[$nat]:-}" ] || { fail "lab: no NAT router '$nat'"; finish; exit 1; }
	[ -x "${LAB_CTFLUSH:-}" ] || { fail "lab: LAB_CTFLUSH is not the ctflush program: '${LAB_CTFLUSH:-}'"; finish; exit 1; }
	if [ -z "$port" ]; then
		LABREBIND[$nat]=$(( ${LABREBIND[$nat]:-1} + 1 ))
		port=$(( LABREBIND[$nat] * 10000 + LAB_PORT ))
	fi
	lab_net ip netns exec "$ns" nft flush chain ip lab postrouting
	lab_net ip netns exec "$ns" nft add rule ip lab postrouting \
		oifname wan udp sport "$LAB_PORT" masquerade to ":$port"
	lab_net ip netns exec "$ns" nft add rule ip lab postrouting \
		oifname wan masquerade
	lab_net ip netns exec "$ns" "$LAB_CTFLUSH"
}
declare -A LABREBIND

lab_move() {
	local n=$1 nat=$2 ns=${LABNS[$1]:-} ip k
	[ -n "${LABNATOF[$n]:-}" ] || { fail "lab: '$n' is no host behind a NAT"; finish; exit 1; }
	[ -n "${LABNET[$nat]:-}" ] || { fail "lab: no NAT router '$nat'"; finish; exit 1; }
	# Deleting one end of a veth deletes the other (h-NAME on the old
	# NAT's bridge) with it.
	lab_net ip -n "$ns" link del eth0
	LABHOSTS[$nat]=$(( LABHOSTS[$nat] + 1 ))
	k=$(( 9 + LABHOSTS[$nat] ))
	ip=${LABNET[$nat]}.$k
	lab_wire "$ns" eth0 "${LABNS[$nat]}" "h-$n" lan
	lab_net ip -n "$ns" addr add "$ip/24" dev eth0
	lab_net ip -n "$ns" route add default via "${LABNET[$nat]}.1"
	LABIP[$n]=$ip LABPEER[$n]="${LABNS[$nat]} h-$n" LABNATOF[$n]=$nat
	if [ -n "${LABNET6[$nat]:-}" ]; then
		LABIP6[$n]=${LABNET6[$nat]}::$k
		lab_net ip -n "$ns" -6 addr add "${LABIP6[$n]}/64" dev eth0 nodad
		lab_net ip -n "$ns" -6 route add default via "${LABNET6[$nat]}::1" dev eth0
	else
		LABIP6[$n]=
	fi
}

lab_udp_timeout() {
	local ns=${LABNS[$1]} s=$2 st=${3:-$2}
	lab_net ip netns exec "$ns" sh -c "echo $s >/proc/sys/net/netfilter/nf_conntrack_udp_timeout &&
		echo $st >/proc/sys/net/netfilter/nf_conntrack_udp_timeout_stream"
}

# lab_v6_on NS: IPv6 forwarding on in NS (a router).
lab_v6_on() {
	lab_net ip netns exec "$1" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/forwarding'
}

lab_v6() {
	local n=$1 fw=${2:-} ns=${LABNS[$1]:-} nat k up
	[ -n "$ns" ] || { fail "lab: no '$n' to give IPv6"; finish; exit 1; }
	case $fw in
	'' | fw) ;;
	*) fail "lab: '$fw' is not fw"; finish; exit 1 ;;
	esac
	lab_v6_on "${LABNS[inet]}"
	nat=${LABNATOF[$n]:-}
	if [ -n "$nat" ]; then
		[ -n "${LABNET6[$nat]:-}" ] || { fail "lab: $nat has no IPv6 (lab_v6 $nat)"; finish; exit 1; }
		k=${LABIP[$n]##*.}
		LABIP6[$n]=${LABNET6[$nat]}::$k
		lab_net ip -n "$ns" -6 addr add "${LABIP6[$n]}/64" dev eth0 nodad
		lab_net ip -n "$ns" -6 route add default via "${LABNET6[$nat]}::1" dev eth0
		return
	fi
	up=${LABUP[$n]}
	LABIP6[$n]=2001:db8::${LABIP[$n]##*.}
	lab_net ip -n "$ns" -6 addr add "${LABIP6[$n]}/128" dev "$up" nodad
	lab_net ip -n "$ns" -6 route add 2001:db8::1/128 dev "$up"
	lab_net ip -n "$ns" -6 route add default via 2001:db8::1 dev "$up"
	lab_v6_router "$n"
	if [ -n "${LABNET[$n]:-}" ]; then
		# A NAT: a /64 on its LAN, routed to it; IPv6 is not translated.
		k=${LABNET[$n]##*.}
		LABNET6[$n]=2001:db8:$k
		lab_v6_on "$ns"
		lab_net ip -n "$ns" -6 addr add "${LABNET6[$n]}::1/64" dev lan nodad
		lab_net ip -n "${LABNS[inet]}" -6 route add "${LABNET6[$n]}::/64" \
		    via "${LABIP6[$n]}" dev "u-$n"
		if [ "$fw" = fw ]; then
			{
				echo 'table ip6 labfw6 {'
				echo '  chain forward { type filter hook forward priority filter;'
				echo '    ct state established,related accept;'
				echo '    iifname "wan" ct state new drop; }'
				echo '}'
			} >"$T/nft6-$n"
			lab_net ip netns exec "$ns" nft -f "$T/nft6-$n"
		fi
	fi
}

# lab_v6_router NAME: the router's IPv6 end of NAME's uplink.
lab_v6_router() {
	local n=$1 r=${LABNS[inet]}
	lab_net ip -n "$r" -6 addr add 2001:db8::1/128 dev "u-$n" nodad
	lab_net ip -n "$r" -6 route add "${LABIP6[$n]}/128" dev "u-$n"
}

lab_public6() {
	local n=$1 ip6=$2 ns
	lab_ns "$n" || { fail "lab: ip netns add: $(cat "$T/lab.err")"; finish; exit 1; }
	ns=${LABNS[$n]}
	lab_v6_on "${LABNS[inet]}"
	lab_uplink "$n" "$ns" eth0 ""
	LABIP6[$n]=$ip6
	lab_net ip -n "$ns" -6 addr add "$ip6/128" dev eth0 nodad
	lab_net ip -n "$ns" -6 route add 2001:db8::1/128 dev eth0
	lab_net ip -n "$ns" -6 route add default via 2001:db8::1 dev eth0
	lab_v6_router "$n"
}

lab_host6() {
	local n=$1 nat=$2 k
	[ -n "${LABNET6[$nat]:-}" ] || { fail "lab: $nat has no IPv6 (lab_v6 $nat)"; finish; exit 1; }
	lab_ns "$n" || { fail "lab: ip netns add: $(cat "$T/lab.err")"; finish; exit 1; }
	LABHOSTS[$nat]=$(( LABHOSTS[$nat] + 1 ))
	k=$(( 9 + LABHOSTS[$nat] ))
	lab_wire "${LABNS[$n]}" eth0 "${LABNS[$nat]}" "h-$n" lan
	LABIP6[$n]=${LABNET6[$nat]}::$k
	lab_net ip -n "${LABNS[$n]}" -6 addr add "${LABIP6[$n]}/64" dev eth0 nodad
	lab_net ip -n "${LABNS[$n]}" -6 route add default via "${LABNET6[$nat]}::1" dev eth0
	LABIP[$n]= LABUP[$n]=eth0 LABPEER[$n]="${LABNS[$nat]} h-$n" LABNATOF[$n]=$nat
}
