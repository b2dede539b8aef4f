#!/usr/bin/env bash
# portmap.sh: node/net/portmap.c against a real router, miniupnpd 2.3, in the
# lab of lab.sh.  tests/portmap_probe runs a portmap as the daemon will
# (a UDP socket on 0.0.0.0:7700, the loop, SIGTERM to stop) and prints a
# line for each change and each datagram it receives.
#
#   stun 203.0.113.3 and .4: coturn, the RFC 5780 STUN server miniupnpd
#     needs (lab.sh, lab_upnpd, says why); p 203.0.113.11: a public host
#   a behind nata (WAN 203.0.113.21): miniupnpd with UPnP-IGD and NAT-PMP
#   b behind natb (WAN 203.0.113.22): miniupnpd with NAT-PMP only
#   c behind natc (WAN 203.0.113.23): no miniupnpd at all
#   d behind natd (WAN 100.64.0.24, carrier-grade NAT space): miniupnpd
#   e1, e2 behind nate (WAN 203.0.113.25): miniupnpd with UPnP-IGD only
#
# The promises under test:
#  1. UPnP-IGD: a's probe says "mapped method upnp external
#     203.0.113.21:7700"; miniupnpd's nftables chain and lease file hold
#     the mapping, with the description "papo"; a datagram from p to
#     203.0.113.21:7700 reaches the probe's socket; asked for a lease of
#     4 s, the probe renews it (the lease file's expiry moves on, and a
#     datagram still arrives after three leases).  On SIGTERM it prints
#     "stopped", exits 0, and the mapping is gone from the chain and the
#     lease file.  Mapped again for an hour and stopped, a datagram from
#     p no longer reaches a socket on a's port 7700 (a probe with
#     PAPO_PORTMAP=off, which only listens).  Stopped half a second after
#     its start, while discovering, it exits as cleanly and leaves no
#     mapping.
#  2. NAT-PMP: with UPnP off in miniupnpd, b's probe maps by natpmp at
#     203.0.113.22:7700, reached from p; removed on SIGTERM.
#  3. No router: c's probe says "failed reason no UPnP or NAT-PMP router
#     answered" within 10 s and keeps running; SIGTERM still stops it.
#     Stopped in the middle of that search, it waits 2 s at most, says
#     so, and exits 0.
#  4. A private external address: d's mapping at 100.64.0.24 is not
#     usable, and the reason says why; with PAPO_PORTMAP_PRIVATE=1 (the
#     test setting) it is, and p's datagram reaches d.
#  5. A refusal: with e1 holding UDP 7700 on nate (UPnP only), e2's
#     probe fails with "the router refused: 718 ConflictInMappingEntry",
#     and logs that once.
#
# Needs root, iproute2, nftables, miniupnpd (miniupnpd-nftables) and
# turnserver (coturn).  Without them it prints "SKIPPED: reason" and
# exits 77, which ctest shows as skipped.
# Usage: portmap.sh PATH_TO_PORTMAP_PROBE
PROBE=${1:?usage: portmap.sh PATH_TO_PORTMAP_PROBE}
PAPO=$PROBE   # lib.sh and lab.sh want one; no papo daemon runs here
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
unset PAPO_PORTMAP PAPO_PORTMAP_PRIVATE PAPO_PORTMAP_LEASE

lab_up
command -v miniupnpd >/dev/null || lab_skip "no miniupnpd (apt-get install miniupnpd-nftables)"
command -v turnserver >/dev/null || lab_skip "no turnserver (apt-get install coturn)"
PORT=7700

# probe NAME TAG [VAR=VALUE...]: the probe in NAME's namespace, its
# output in $T/TAG.out and $T/TAG.err.
probe() {
	local n=$1 tag=$2; shift 2
	ip netns exec "${LABNS[$n]}" env PAPO_LOG=debug "$@" "$PROBE" "$PORT" \
		>"$T/$tag.out" 2>"$T/$tag.err" </dev/null &
	echo $! >"$T/$tag.pid"
}
# stop_probe TAG: SIGTERM; it must print "stopped" and exit 0 within 5 s
# (portmap_free waits 2 s at most for the router).
stop_probe() {
	local pid rc; pid=$(cat "$T/$1.pid")
	kill -TERM "$pid"
	if ! until_true 5 bash -c "! kill -0 $pid 2>/dev/null"; then
		fail "$1: still running 5 s after SIGTERM"
		kill -KILL "$pid"
	fi
	wait "$pid"; rc=$?
	rm -f "$T/$1.pid"
	check "$1: exit 0 on SIGTERM (got $rc): $(tail -2 "$T/$1.err")" test "$rc" -eq 0
	has "$T/$1.out" '^stopped$' "$1: says stopped"
}
# state TAG: the probe's last state line.
state() { grep '^state ' "$T/$1.out" | tail -1; }
settled() { grep -qE '^state (mapped|failed)' "$T/$1.out"; }
# expect_state TAG LINE DESCRIPTION: within 15 s the probe's state is LINE.
expect_state() {
	until_true 15 settled "$1"
	if [ "$(state "$1")" = "$2" ]; then ok; else
		fail "$3: '$(state "$1")', wanted '$2'; $(tail -3 "$T/$1.err")"
	fi
}
# send FROM IP TEXT: one UDP datagram from FROM's namespace to IP:PORT.
send() {
	lab_in "$1" bash -c "printf '%s' '$3' >/dev/udp/$2/$PORT"
}
# got TAG TEXT: the probe received TEXT.
got() { grep -q ": $2\$" "$T/$1.out"; }
# reaches FROM IP TAG TEXT: a datagram from FROM to IP:PORT reaches the
# probe TAG (sent each second for up to 5 s: the first may meet an ARP
# wait).
reaches() {
	local i
	for i in 1 2 3 4 5; do
		send "$1" "$2" "$4"
		until_true 1 got "$3" "$4" && return 0
	done
	return 1
}
# rules NAT: miniupnpd's DNAT rules on NAT.
rules() {
	lab_in "$1" nft list chain inet miniupnpd prerouting_miniupnpd
}
# lease NAT: miniupnpd's lease line for UDP PORT, e.g.
# "UDP:7700:192.168.1.10:7700:1700000000:papo".
lease() { grep "^UDP:$PORT:" "$T/upnpd-$1.leases" 2>/dev/null; }
# expiry NAT: that lease's expiry (seconds since 1970).
expiry() { lease "$1" | cut -d: -f5; }

lab_stun stun 203.0.113.3 203.0.113.4
lab_public p 203.0.113.11
lab_nat nata cone 203.0.113.21
lab_host a nata
lab_nat natb cone 203.0.113.22
lab_host b natb
lab_nat natc cone 203.0.113.23
lab_host c natc
lab_nat natd cone 100.64.0.24
lab_host d natd
lab_nat nate cone 203.0.113.25
lab_host e1 nate
lab_host e2 nate
lab_upnpd nata both
lab_upnpd natb natpmp
lab_upnpd natd both
lab_upnpd nate upnp
note "lab ready"

# 1. UPnP-IGD, renewed, removed.
probe a a PAPO_PORTMAP_LEASE=4
expect_state a "state mapped method upnp external 203.0.113.21:$PORT" \
	"a maps by UPnP at nata's WAN address"
has "$T/a.out" '^state asking$' "a says asking first"
rules nata >"$T/rules-a" 2>&1
has "$T/rules-a" "iif \"wan\" .* dport $PORT dnat ip to 192.168.1.10:$PORT" \
	"nata's chain forwards UDP $PORT to a"
check "nata's lease file holds a's mapping, 'papo': $(cat "$T/upnpd-nata.leases" 2>&1)" \
	bash -c "grep -q '^UDP:$PORT:192.168.1.10:$PORT:[0-9]*:papo\$' '$T/upnpd-nata.leases'"
check "a datagram from p to 203.0.113.21:$PORT reaches a's socket" \
	reaches p 203.0.113.21 a one
first=$(expiry nata)
sleep 12   # time tested: three 4 s leases
check "a's lease (4 s) was renewed: expiry $first, now $(expiry nata)" \
	test "$(expiry nata)" -gt "$((first + 4))"
check "after three leases a datagram from p still reaches a" \
	reaches p 203.0.113.21 a two
check "renewals print no new state line: $(grep -c '^state ' "$T/a.out") lines" \
	test "$(grep -c '^state ' "$T/a.out")" -eq 2
stop_probe a
rules nata >"$T/rules-a" 2>&1
check "the mapping is gone from nata's chain: $(cat "$T/rules-a")" \
	bash -c "! grep -q 'dport $PORT' '$T/rules-a'"
check "the mapping is gone from nata's lease file: $(lease nata)" \
	test -z "$(lease nata)"
# Again with the lease of an hour, so that only the removal can end it
# before the datagram below.
probe a a2
expect_state a2 "state mapped method upnp external 203.0.113.21:$PORT" \
	"a maps again, for an hour"
check "a's lease is an hour: expires $(expiry nata), now $(date +%s)" \
	test "$(expiry nata)" -gt "$(( $(date +%s) + 3000 ))"
check "a datagram from p reaches a" reaches p 203.0.113.21 a2 one
stop_probe a2
check "the hour's mapping is gone from nata's lease file: $(lease nata)" \
	test -z "$(lease nata)"
# A socket on a's port that maps nothing: it hears the LAN, not p.
probe a a-off PAPO_PORTMAP=off
until_true 5 settled a-off || until_true 5 grep -q '^state off' "$T/a-off.out"
has "$T/a-off.out" '^state off reason turned off \(PAPO_PORTMAP=off\)$' \
	"PAPO_PORTMAP=off: state off with the reason"
check "the listener hears its own LAN" reaches nata 192.168.1.10 a-off lan
# Time tested: nothing reaches a within 2 s.
send p 203.0.113.21 three; sleep 0.5; send p 203.0.113.21 three; sleep 2
check "after the removal p's datagram no longer reaches a" \
	bash -c "! grep -q ': three\$' '$T/a-off.out'"
stop_probe a-off
# Stopped while still discovering (UPnP's search lasts 2 s): it ends
# within PORTMAP_STOP_MS, cleanly, and leaves no mapping behind.
probe a a3
sleep 0.5   # time tested: inside the 2 s search
stop_probe a3
sleep 1   # time tested: no mapping made later either
check "a stop during discovery leaves no mapping: $(lease nata)" \
	test -z "$(lease nata)"
note "1 done"

# 2. NAT-PMP only.
probe b b
expect_state b "state mapped method natpmp external 203.0.113.22:$PORT" \
	"b maps by NAT-PMP at natb's WAN address"
check "natb's lease file holds b's mapping: $(cat "$T/upnpd-natb.leases" 2>&1)" \
	bash -c "grep -q '^UDP:$PORT:192.168.2.10:$PORT:' '$T/upnpd-natb.leases'"
check "a datagram from p to 203.0.113.22:$PORT reaches b" \
	reaches p 203.0.113.22 b four
stop_probe b
check "b's mapping is gone from natb's lease file: $(lease natb)" \
	test -z "$(lease natb)"
note "2 done"

# 3. No router.
began=$(date +%s)
probe c c
expect_state c "state failed reason no UPnP or NAT-PMP router answered" \
	"c finds no router"
took=$(( $(date +%s) - began ))
check "c's verdict came within 10 s (took $took s)" test "$took" -le 10
has "$T/c.err" 'port mapping failed: no UPnP or NAT-PMP router answered' \
	"c logs the failure"
sleep 2   # time tested: still running 2 s later
check "c's probe keeps running after the failure" kill -0 "$(cat "$T/c.pid")"
stop_probe c
# Stopped while searching a LAN without a router (which takes 4 s): it
# waits 2 s, says so, and exits cleanly all the same.
probe c c2
sleep 0.5   # time tested: inside the 4 s search
stop_probe c2
has "$T/c2.err" 'stopped without waiting more than 2000 ms for the router' \
	"c2 says it did not wait for the search"
note "3 done"

# 4. A private external address.
probe d d
expect_state d "state mapped method upnp reason external address 100.64.0.24 is shared address space (100.64.0.0/10, carrier-grade NAT): not advertised" \
	"d's mapping at 100.64.0.24 is not usable"
stop_probe d
probe d d-private PAPO_PORTMAP_PRIVATE=1
expect_state d-private "state mapped method upnp external 100.64.0.24:$PORT" \
	"PAPO_PORTMAP_PRIVATE=1: d's mapping is usable"
check "a datagram from p to 100.64.0.24:$PORT reaches d" \
	reaches p 100.64.0.24 d-private five
stop_probe d-private
note "4 done"

# 5. A router that refuses.
probe e1 e1
expect_state e1 "state mapped method upnp external 203.0.113.25:$PORT" \
	"e1 maps UDP $PORT on nate"
probe e2 e2
expect_state e2 "state failed reason the router refused: 718 ConflictInMappingEntry" \
	"e2 is refused: e1 holds the port"
check "e2 logs the refusal once: $(cat "$T/e2.err")" \
	test "$(grep -c 'port mapping failed: the router refused: 718 ConflictInMappingEntry' "$T/e2.err")" -eq 1
stop_probe e2
stop_probe e1
note "5 done"

finish
