#!/usr/bin/env bash
# mapped.sh: a daemon behind a home router that maps ports (miniupnpd 2.3,
# UPnP-IGD and NAT-PMP), in the lab of lab.sh.
#
#   stun 203.0.113.3 and .4: coturn, the STUN server miniupnpd needs
#   a behind nata (WAN 203.0.113.21): miniupnpd; nata lets nothing in
#     that it did not map (no conntrack entry, no forward)
#   b behind natb (WAN 203.0.113.22): a cone NAT dropping unsolicited
#     inbound, no port mapping
#
# The promises under test (docs/REACHABILITY.md, "Port mapping"):
#  1. a's status says portmap "mapped", method "upnp", external
#     203.0.113.21:7700 (and `papo status` says so in a line), and that
#     address comes first in me.addrs and in the invite `papo invite`
#     prints.
#  2. b joins from that invite, with nobody else in the room and no relay:
#     each shows the other online with path "direct", and messages go
#     both ways.
#  3. On a's clean stop the mapping is gone from nata (its lease file and
#     its nftables chain).
#  4. PAPO_PORTMAP=off: a's status says portmap "off" with the reason, and
#     its invite has no address of nata.
#
# Needs root, iproute2, nftables, miniupnpd (miniupnpd-nftables) and
# turnserver (coturn).  Without them it prints "SKIPPED: reason" and exits
# 77, which ctest shows as skipped.
# Usage: mapped.sh PATH_TO_PAPO
PAPO=${1:?usage: mapped.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN \
	PAPO_HTTP PAPO_PORTMAP PAPO_PORTMAP_PRIVATE

lease() { grep "^UDP:$LAB_PORT:" "$T/upnpd-nata.leases" 2>/dev/null; }

lab_up
command -v miniupnpd >/dev/null || lab_skip "no miniupnpd (apt-get install miniupnpd-nftables)"
command -v turnserver >/dev/null || lab_skip "no turnserver (apt-get install coturn)"
lab_stun stun 203.0.113.3 203.0.113.4
lab_nat nata cone 203.0.113.21
lab_host a nata
lab_nat natb cone 203.0.113.22 drop
lab_host b natb
lab_upnpd nata both

# 1. a's mapping, advertised first.
lab_papo a new --name a >/dev/null
lab_start a || finish
mapped=203.0.113.21:$LAB_PORT
eventually 20 a ".me.portmap | .state == \"mapped\" and .method == \"upnp\" and
	.external == \"$mapped\" and .reason == null" \
	"a's status says portmap mapped by upnp at $mapped"
eventually 5 a ".me.addrs[0] == \"$mapped\"" "a's me.addrs starts with $mapped"
lab_papo a status >"$T/out" 2>&1
has "$T/out" "^port mapping: mapped by upnp at $mapped\$" \
	"papo status on a says the port mapping"
inv=$(lab_papo a invite)
addrs=$(invite_addrs "$inv")
check "a's invite starts with $mapped: $(tr '\n' ' ' <<<"$addrs")" \
	test "$(head -n 1 <<<"$addrs")" = "$mapped"
check "nata's lease file holds a's mapping: $(cat "$T/upnpd-nata.leases" 2>&1)" \
	bash -c "grep -q '^UDP:$LAB_PORT:192.168.1.10:$LAB_PORT:.*:papo\$' '$T/upnpd-nata.leases'"

# 2. b joins from it directly.
lab_papo b join "$inv" --name b >/dev/null
lab_start b || finish
eventually 20 b '.members[] | select(.name == "a") | .online and .path == "direct"' \
	"b shows a online with path direct"
eventually 10 a '.members[] | select(.name == "b") | .online and .path == "direct"' \
	"a shows b online with path direct"
lab_papo b say "b to a through a's mapped port" >"$T/out" 2>&1 ||
	fail "papo say on b: $(cat "$T/out")"
check "a's history has b's message" \
	until_true 20 history_has a "b to a through a's mapped port"
lab_papo a say "a to b" >"$T/out" 2>&1 || fail "papo say on a: $(cat "$T/out")"
check "b's history has a's message" until_true 20 history_has b "a to b"

# 3. A clean stop removes the mapping.
stop a
check "a's mapping is gone from nata's lease file: $(lease)" test -z "$(lease)"
lab_in nata nft list chain inet miniupnpd prerouting_miniupnpd >"$T/rules" 2>&1
check "a's mapping is gone from nata's chain: $(cat "$T/rules")" \
	bash -c "! grep -q 'dport $LAB_PORT' '$T/rules'"

# 4. PAPO_PORTMAP=off.
PAPO_PORTMAP=off lab_start a || finish
eventually 10 a '.me.portmap | .state == "off" and (.reason | test("PAPO_PORTMAP=off"))' \
	"with PAPO_PORTMAP=off a's status says portmap off, and why"
addrs=$(invite_addrs "$(lab_papo a invite)")
check "a's invite has no address of nata: $(tr '\n' ' ' <<<"$addrs")" \
	bash -c "! grep -q '^203\.0\.113\.21:' <<<'$addrs'"
sleep 2   # time tested: nothing mapped within 2 s
check "nothing was mapped with PAPO_PORTMAP=off: $(lease)" test -z "$(lease)"

for n in a b; do
	[ -e "$T/$n.pid" ] && stop "$n"
done
finish
