#!/usr/bin/env bash
# reach.sh: members behind NATs, in the lab of lab.sh (network namespaces,
# nftables NATs).  Every daemon there listens on 0.0.0.0:7700.
#
#   r1 203.0.113.11, r2 203.0.113.12, d 203.0.113.14: public hosts
#   a behind nata, a cone NAT (WAN 203.0.113.21)
#   b behind natb, a symmetric NAT (WAN 203.0.113.22)
#   c behind natc, a symmetric NAT (WAN 203.0.113.23) that drops unsolicited
#     inbound but forwards its WAN UDP port 7700 to c
#
# The promises under test:
#  1. Observed address, cone NAT: once a is connected to r1 and r2, its
#     status says nat "cone" and observed 203.0.113.21:PORT, that address
#     comes first in me.addrs and in the invite a prints; r1 and r2 show a
#     with path "direct", protocol 5 (the newest) and a numeric rtt_ms.
#  2. Symmetric NAT: b says nat "symmetric", observed null, and advertises
#     no address of its router; a and b (two NATs, no way through) see
#     each other online with path "via r1" or "via r2", in the JSON and in
#     `papo status`.
#  3. No NAT: r1 says nat "open".
#  4. --advertise behind a port forward: c (a room of its own) serves with
#     --advertise 203.0.113.23:7700; its invite starts with it; d joins from
#     that invite, and c and d exchange messages both ways, directly.
#  5. Old daemons in a new room (loopback, lib.sh's start): daemons with
#     PAPO_PROTOCOL=1 and PAPO_PROTOCOL=2 and two new ones exchange
#     messages; a new one shows them with protocol 1 and 2 and the other
#     new one with protocol 5; the old ones see each other and the new
#     ones online (presence reaches them unsigned, as they know it).
#  6. Invites without loopback: a daemon on 0.0.0.0 prints an invite
#     without 127.0.0.1 or [::1]; one listening only on loopback keeps
#     127.0.0.1; PAPO_ADVERTISE's addresses come first, in order.
# An invite is read as a joiner reads it: `papo join` in a fresh home, whose
# room.json lists the invite's addresses as "bootstrap".
#
# Needs root, iproute2 and nftables.  Without them it prints
# "SKIPPED: reason" and exits 77, which ctest shows as skipped.
# Usage: reach.sh PATH_TO_PAPO
PAPO=${1:?usage: reach.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN PAPO_HTTP
began=$(date +%s)


no_loopback() { test -n "$1" && ! grep -qE '^(127\.|\[::1\]:)' <<<"$1"; }
oneline() { tr '\n' ' ' <<<"$1"; }

# Cases 1, 2, 3 and r1's part of 6 share a room: r1 made it; r2, a and b
# join from r1's invite.
nat_room() {
	local inv addrs observed n via
	lab_papo r1 new --name r1 >/dev/null
	lab_start r1 || return
	inv=$(lab_papo r1 invite)

	# 6. A daemon on 0.0.0.0 prints no loopback address.
	addrs=$(invite_addrs "$inv")
	check "r1's invite carries its address 203.0.113.11:7700: $(oneline "$addrs")" \
		grep -qx '203\.0\.113\.11:7700' <<<"$addrs"
	check "r1's invite (listening on 0.0.0.0) has no loopback address: $(oneline "$addrs")" \
		no_loopback "$addrs"

	# 1. a, behind a cone NAT, learns the address its router gives it.
	for n in r2 a; do
		lab_papo "$n" join "$inv" --name "$n" >/dev/null
		lab_start "$n" || return
	done
	eventually 30 a "[$(m r1), $(m r2) | .online] == [true, true]" \
		"a, behind a cone NAT, sees r1 and r2 online"
	eventually 15 a "[$(m r1), $(m r2) | .path] == [\"direct\", \"direct\"]" \
		"a's status shows path direct to r1 and to r2"
	eventually 20 a '.me.nat == "cone"' "a's status says nat cone"
	eventually 5 a '.me.observed | startswith("203.0.113.21:")' \
		"a's status says observed 203.0.113.21:PORT, its NAT's public address"
	observed=$(jq -r .me.observed "$T/status-a")
	note "a: nat $(jq -r .me.nat "$T/status-a"), observed $observed, addrs $(jq -c .me.addrs "$T/status-a")"
	eventually 5 a '.me.observed != null and .me.addrs[0] == .me.observed' \
		"a's me.addrs starts with its observed address $observed"
	addrs=$(invite_addrs "$(lab_papo a invite)")
	check "a's invite starts with its observed address $observed: $(oneline "$addrs")" \
		test "$(head -n 1 <<<"$addrs")" = "$observed"
	check "a's invite has no loopback address: $(oneline "$addrs")" \
		no_loopback "$addrs"
	for n in r1 r2; do
		eventually 10 "$n" "$(m a) | .path == \"direct\" and .protocol == 5 and
			(.rtt_ms | type) == \"number\"" \
			"$n shows a with path direct, protocol 5 and a numeric rtt_ms"
	done

	# 2. b, behind a symmetric NAT, is seen on another port by each
	# peer: it has no address to give.
	lab_papo b join "$inv" --name b >/dev/null
	lab_start b || return
	eventually 30 b "[$(m r1), $(m r2) | .path] == [\"direct\", \"direct\"]" \
		"b, behind a symmetric NAT, shows path direct to r1 and to r2"
	eventually 20 b '.me.nat == "symmetric"' "b's status says nat symmetric"
	eventually 5 b '.me | has("observed") and .observed == null' \
		"b's status says observed null"
	note "b: nat $(jq -r .me.nat "$T/status-b"), observed $(jq -r .me.observed "$T/status-b"), addrs $(jq -c .me.addrs "$T/status-b")"
	eventually 5 b '.me.addrs | length > 0 and all(startswith("203.0.113.22:") | not)' \
		"b's me.addrs has no address of its NAT (203.0.113.22)"
	eventually 10 r1 "$(m b) | .path == \"direct\" and .protocol == 5" \
		"r1 shows b with path direct and protocol 5"
	# Between a's NAT and b's there is no way through: each sees the
	# other online through r1 or r2.
	via='.online and (.path | test("^via r[12]$")) and .rtt_ms == null and .protocol == null'
	eventually 20 a "$(m b) | $via" \
		"a sees b online with path via r1 or via r2, rtt_ms and protocol null"
	eventually 10 b "$(m a) | $via" \
		"b sees a online with path via r1 or via r2, rtt_ms and protocol null"
	lab_papo a status >"$T/out" 2>&1
	has "$T/out" '^ +b .*via r[12]' "papo status on a shows b's path via r1 or r2"
	has "$T/out" '^ +r1 .*direct' "papo status on a shows r1's path direct"

	# 3. r1 has no NAT: its peers see it at its own address.
	eventually 20 r1 '.me.nat == "open"' "r1, a public host, says nat open"
	eventually 5 r1 '.me.addrs[0] == "203.0.113.11:7700"' \
		"r1's me.addrs starts with 203.0.113.11:7700"
	check "r1's me.addrs has no loopback address: $(jq -c .me.addrs "$T/status-r1")" \
		no_loopback "$(jq -r '.me.addrs[]' "$T/status-r1")"
}

# 4. c, behind a NAT that lets nothing in but its port 7700, advertises
# that port; d joins from c's invite, in a room of their own.
port_forward() {
	local inv addrs
	lab_papo c new --name c >/dev/null
	lab_start c --advertise 203.0.113.23:7700 || return
	inv=$(lab_papo c invite)
	addrs=$(invite_addrs "$inv")
	check "c's invite starts with its --advertise address 203.0.113.23:7700: $(oneline "$addrs")" \
		test "$(head -n 1 <<<"$addrs")" = 203.0.113.23:7700
	eventually 5 c '.me.addrs[0] == "203.0.113.23:7700"' \
		"c's me.addrs starts with its --advertise address"
	lab_papo d join "$inv" --name d >/dev/null
	lab_start d || return
	eventually 30 d "$(m c) | .online and .path == \"direct\"" \
		"d, joining from c's invite, shows c online with path direct"
	eventually 30 c "$(m d) | .online and .path == \"direct\"" \
		"c shows d online with path direct"
	lab_papo c say "c to d, from behind the port forward" >"$T/out" 2>&1 ||
		fail "papo say on c: $(cat "$T/out")"
	check "d's history has c's message" \
		until_true 20 history_has d "c to d, from behind the port forward"
	lab_papo d say "d to c, through the port forward" >"$T/out" 2>&1 ||
		fail "papo say on d: $(cat "$T/out")"
	check "c's history has d's message" \
		until_true 20 history_has c "d to c, through the port forward"
}

# 5. Old daemons (protocol 1 only, 2 only) in a room of new ones, on loopback;
# and 6.'s daemon that listens only on loopback.
old_daemon() {
	local inv addrs
	papo new2a new --name new2a >/dev/null
	start new2a || return
	inv=$(papo new2a invite)
	addrs=$(invite_addrs "$inv")
	check "new2a's invite (listening on 127.0.0.1 only) carries 127.0.0.1:${QPORT[new2a]}: $(oneline "$addrs")" \
		grep -qx "127\.0\.0\.1:${QPORT[new2a]}" <<<"$addrs"
	join new2b "$inv"
	start new2b || return
	join old1 "$inv"
	PAPO_PROTOCOL=1 start old1 || return
	join old2 "$inv"
	PAPO_PROTOCOL=2 start old2 || return
	eventually 30 new2a "[$(m old1), $(m old2), $(m new2b) | .online] == [true, true, true]" \
		"new2a sees old1 (protocol 1), old2 (protocol 2) and new2b online"
	eventually 30 old1 "[$(m new2a), $(m new2b), $(m old2) | .online] == [true, true, true]" \
		"old1 sees new2a, new2b and old2 online"
	eventually 30 old2 "[$(m new2a), $(m new2b), $(m old1) | .online] == [true, true, true]" \
		"old2 sees new2a, new2b and old1 online"
	papo old2 say "from the version 2 daemon" >"$T/out" 2>&1 ||
		fail "papo say on old2: $(cat "$T/out")"
	check "new2b's history has old2's message" \
		until_true 20 history_has new2b "from the version 2 daemon"
	check "old1's history has old2's message" \
		until_true 20 history_has old1 "from the version 2 daemon"
	papo old1 say "from the old daemon" >"$T/out" 2>&1 ||
		fail "papo say on old1: $(cat "$T/out")"
	check "new2a's history has old1's message" \
		until_true 20 history_has new2a "from the old daemon"
	papo new2a say "from a new daemon" >"$T/out" 2>&1 ||
		fail "papo say on new2a: $(cat "$T/out")"
	check "old1's history has new2a's message" \
		until_true 20 history_has old1 "from a new daemon"
	eventually 10 new2a "$(m old1) | .path == \"direct\" and .protocol == 1" \
		"new2a shows old1 with path direct and protocol 1"
	check "old2's history has new2a's message" \
		until_true 20 history_has old2 "from a new daemon"
	eventually 10 new2a "$(m old2) | .path == \"direct\" and .protocol == 2" \
		"new2a shows old2 with path direct and protocol 2"
	eventually 10 new2a "$(m new2b) | .path == \"direct\" and .protocol == 5" \
		"new2a shows new2b with path direct and protocol 5"
}

# 6. PAPO_ADVERTISE: comma-separated, first in the invite, in order.
advertise_env() {
	local addrs
	papo adv new --name adv >/dev/null
	PAPO_ADVERTISE=198.51.100.1:7001,198.51.100.2:7002 start adv || return
	addrs=$(invite_addrs "$(papo adv invite)")
	check "with PAPO_ADVERTISE, the invite starts with 198.51.100.1:7001 then 198.51.100.2:7002: $(oneline "$addrs")" \
		test "$(head -n 2 <<<"$addrs" | tr '\n' ' ')" = "198.51.100.1:7001 198.51.100.2:7002 "
}

lab_up
lab_public r1 203.0.113.11
lab_public r2 203.0.113.12
lab_public d 203.0.113.14
lab_nat nata cone 203.0.113.21
lab_host a nata
lab_nat natb symmetric 203.0.113.22
lab_host b natb
lab_nat natc symmetric 203.0.113.23 drop
lab_host c natc
lab_forward natc 7700 c
note "lab up: r1, r2, d public; a behind a cone NAT, b behind a symmetric one, c behind a symmetric one that drops unsolicited inbound but forwards port 7700"

nat_room
note "cases 1-3 done after $(( $(date +%s) - began )) s"
port_forward
note "case 4 done after $(( $(date +%s) - began )) s"
old_daemon
advertise_env
# Every daemon still running must end cleanly on SIGTERM.
stop_all
note "took $(( $(date +%s) - began )) s"
finish
