#!/usr/bin/env bash
# reach2.sh: direct paths found without a public address, in the lab of
# lab.sh (network namespaces, nftables NATs): hole punching through a
# mutual member, presence that tells the truth about paths, and LAN
# discovery by multicast beacon.  Every daemon listens on 0.0.0.0:7700 and
# logs at debug level ($T/NAME.err, the "punch:" lines).  Each case has
# homes and hosts of its own:
#
#   r1, r2, r3, r5, r6: public hosts (203.0.113.11...), each a room's maker
#   a1, b1 behind nat1a, nat1b: cone NATs that drop unsolicited inbound
#   a2, b2 behind nat2a, nat2b: cone NATs that let it in (to nothing)
#   a3, b3 behind nat3: one LAN, one cone NAT
#   l1 ... l4 behind nat4: one LAN; 203.0.113.250 answers nobody
#   a5 behind nat5a, a cone NAT; b5 behind nat5b, a symmetric one
#   m6 and x6 (no daemon, a source of junk) behind nat6
#
# The promises under test:
#  1. Punching through cone NATs that drop unsolicited inbound: a1 and b1
#     join r1's room and exchange messages; within 40 s of seeing each
#     other online, each shows the other with path "punched" (rtt_ms a
#     number, protocol 5), and its punch counters say so.  Once r1 stops
#     (SIGTERM), a1 and b1 still exchange messages both ways within 10 s,
#     `papo say` answering delivered, and still show path "punched"; so
#     they do 35 s after the punch (members greet each other again on
#     their connections every 30 s).
#  2. The same through cone NATs without the drop.
#  3. Two members on one LAN behind one NAT, met through r3: after r3
#     stops they still talk both ways, and each shows the other on a path
#     of its own ("lan" by the contract; "direct" is reported as such).
#  4. LAN discovery: l1 serves with --advertise 203.0.113.250:7700, and l2
#     joins an invite of l1's room that holds that address only; they find
#     each other by beacon (path "lan") and exchange messages.  With
#     PAPO_LAN=off, l3 and l4 (the same again, on the same LAN) do not:
#     after 20 s l4 shows l3 offline and `papo say` answers queued (not
#     that no other member has joined).
#  5. Presence: a5 (cone) and b5 (symmetric) see each other online "via
#     r5"; within 5 s of r5 stopping each shows the other offline, path
#     "none", last_seen kept; a say answers queued (and does not claim
#     that no other member has joined); r5 starts again (same
#     home, same port) and the queued message reaches b5, once.
#  6. Bad input: 100 random 57-byte datagrams that start with 0x21 (a
#     punch's length and first byte) to m6's QUIC port, and 100 random
#     79-byte ones to the beacon group 239.255.77.76:7776 on its LAN: m6
#     counts the former in punch.datagrams_bad and nothing else changes.
#
# Needs root, iproute2, nftables and socat.  Without root, ip or nft it
# prints "SKIPPED: reason" and exits 77, which ctest shows as skipped.
# Usage: reach2.sh PATH_TO_PAPO
PAPO=${1:?usage: reach2.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN PAPO_HTTP
# LAN discovery is on in the lab, as for a user (case 4 turns it off).
export PAPO_LAN=on
export PAPO_LOG=debug
began=$(date +%s)
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# punch_lines NAME: NAME's last punch: log lines, on one line.
punch_lines() { grep -h 'punch:' "$T/$1.err" 2>/dev/null | tail -4 | tr '\n' '|'; }
# mid ID: the jq filter for a member in a status, by its id.
mid() { echo "(.members[] | select(.id == \"$1\"))"; }

# say_queued NAME TEXT PEER: `papo say TEXT` on NAME answers queued, and
# does not claim that nobody else joined (PEER has).
say_queued() {
	lab_papo "$1" say "$2" >"$T/say-$1" 2>&1
	if grep -qE -- ' queued' "$T/say-$1"; then ok; else
		fail "with no path to $3, papo say on $1 answers queued: it answered: $(cat "$T/say-$1")"
	fi
	if ! grep -q 'no other member has joined' "$T/say-$1"; then ok; else
		fail "papo say on $1 says no other member has joined, but $3 has: $(cat "$T/say-$1")"
	fi
}
# invite_only INVITE IP PORT: the same invite (room secret, inviter) with
# IP:PORT as its only address (docs/PROTOCOL.md, "Invite": version,
# secret, inviter, count, addresses, 4 bytes of a 16-byte BLAKE2b).
invite_only() {
	local body raw=$T/invite.raw new=$T/invite.new o1 o2 o3 o4 sum
	body=$(tr a-z A-Z <<<"${1#papo1}")
	while [ $(( ${#body} % 8 )) -ne 0 ]; do body+='='; done
	base32 -d <<<"$body" >"$raw" 2>/dev/null || return 1
	head -c 65 "$raw" >"$new"
	IFS=. read -r o1 o2 o3 o4 <<<"$2"
	printf "$(printf '\\x%02x' 1 4 "$o1" "$o2" "$o3" "$o4" $(( $3 >> 8 )) $(( $3 & 255 )))" >>"$new"
	sum=$(b2sum -l 128 "$new" | cut -c 1-8)
	printf "$(printf '\\x%s' "${sum:0:2}" "${sum:2:2}" "${sum:4:2}" "${sum:6:2}")" >>"$new"
	echo "papo1$(base32 -w 0 "$new" | tr -d = | tr A-Z a-z)"
}

# junk HOST IP PORT LEN COUNT [FIRST]: COUNT random datagrams of LEN bytes
# (the first byte FIRST, in hex, when given) from HOST to IP:PORT, ten at a
# time.
junk() {
	local host=$1 ip=$2 port=$3 len=$4 count=$5 first=${6:-} i f=$T/junk
	for (( i = 0; i < count; i++ )); do
		if (( i % 10 == 0 )); then : >"$f"; fi
		if [ -n "$first" ]; then
			printf "\\x$first" >>"$f"
			head -c $(( len - 1 )) /dev/urandom >>"$f"
		else
			head -c "$len" /dev/urandom >>"$f"
		fi
		if (( i % 10 == 9 || i == count - 1 )); then
			lab_in "$host" socat -u -b "$len" "OPEN:$f" "UDP-SENDTO:$ip:$port" ||
				fail "socat from $host to $ip:$port failed"
			sleep 0.05   # time tested: a burst of 10 every 0.05 s
		fi
	done
}

# 1, 2. a and b behind two cone NATs punch through r, then do without it.
punching() {
	local r=$1 a=$2 b=$3 how=$4 t0 tp dt x
	room "$r" "$a" "$b" || return
	eventually 30 "$a" "$(m "$b") | .online" "$a sees $b online (through $r)"
	eventually 30 "$b" "$(m "$a") | .online" "$b sees $a online (through $r)"
	t0=$(date +%s%N)
	talk "$a" "$b" "while $r is up"
	punched() {
		status_is "$a" "$(m "$b") | .path == \"punched\"" &&
			status_is "$b" "$(m "$a") | .path == \"punched\""
	}
	tp=$(date +%s%N)
	if until_true 40 punched; then
		ok
		tp=$(date +%s%N)
		note "$a and $b ($how) show each other punched $(ms_since "$t0") ms after both were online"
	else
		fail "within 40 s $a and $b ($how) do not both show the other with path punched;" \
			"$a: $(shown "$a") $(punch_lines "$a");" \
			"$b: $(shown "$b") $(punch_lines "$b")"
	fi
	for x in "$a $b" "$b $a"; do
		set -- $x
		now_is "$1" "$(m "$2") | .online and .path == \"punched\" and
			(.rtt_ms | type) == \"number\" and .protocol == 5" \
			"$1 shows $2 online, path punched, a numeric rtt_ms, protocol 5"
		now_is "$1" '.punch.punched >= 1' "$1's punch.punched counts the connection"
	done
	x=$(jq -n --slurpfile a "$T/status-$a" --slurpfile b "$T/status-$b" \
		'[$a[0].punch, $b[0].punch] | (map(.asked) | add) >= 1 and
		(map(.answered) | add) >= 1')
	check "one of $a and $b asked and the other answered: $(jq -c .punch "$T/status-$a") $(jq -c .punch "$T/status-$b")" \
		test "$x" = true

	stop "$r"
	t0=$(date +%s%N)
	talk "$a" "$b" "after $r stopped"
	dt=$(ms_since "$t0")
	check "with $r stopped, $a and $b exchanged messages both ways within 10 s (took $dt ms)" \
		test "$dt" -le 10000
	now_is "$a" "$(m "$b") | .online and .path == \"punched\"" \
		"with $r stopped, $a still shows $b online, path punched"
	now_is "$b" "$(m "$a") | .online and .path == \"punched\"" \
		"with $r stopped, $b still shows $a online, path punched"
	note "$a punch: $(jq -c .punch "$T/status-$a")"
	note "$b punch: $(jq -c .punch "$T/status-$b")"
	# Every 30 s members greet each other again on the connections they
	# have (anti-entropy): the path stays what it is.
	# Time tested: 35 s, a greeting round and more.
	dt=$(( 35000 - $(ms_since "$tp") ))
	[ "$dt" -le 0 ] || sleep "$(( dt / 1000 + 1 ))"
	for x in "$a $b" "$b $a"; do
		set -- $x
		now_is "$1" "$(m "$2") | .online and .path == \"punched\"" \
			"35 s after the punch (a greeting again on the same connection), $1 still shows $2 with path punched"
	done
	stop "$a"
	stop "$b"
}

# 3. Two members behind one NAT, on its LAN.
one_lan() {
	local pa pb
	room r3 a3 b3 || return
	eventually 30 a3 "[$(m r3), $(m b3) | .online] == [true, true]" \
		"a3 sees r3 and b3 (its LAN neighbour) online"
	eventually 30 b3 "[$(m r3), $(m a3) | .online] == [true, true]" \
		"b3 sees r3 and a3 online"
	stop r3
	eventually 5 a3 "$(m r3) | .online == false and .path == \"none\"" \
		"a3 shows r3 offline, path none, once r3 stopped"
	talk a3 b3 "on their LAN, r3 stopped"
	eventually 15 a3 "$(m b3) | .online and (.path | IN(\"lan\", \"direct\"))" \
		"a3 shows b3 online on a path of its own (lan or direct)"
	pa=$(jq -r "$(m b3) | .path" "$T/status-a3")
	eventually 15 b3 "$(m a3) | .online and (.path | IN(\"lan\", \"direct\"))" \
		"b3 shows a3 online on a path of its own (lan or direct)"
	pb=$(jq -r "$(m a3) | .path" "$T/status-b3")
	note "on one LAN: a3 shows b3 with path '$pa', b3 shows a3 with path '$pb' (the contract says lan)"
	stop a3
	stop b3
}

# 4. LAN discovery from an invite without a reachable address.
beacons() {
	local inv addrs id
	lab_papo l1 new --name l1 >/dev/null
	lab_start l1 --advertise 203.0.113.250:7700 || return
	id=$(lab_api l1 /api/status | jq -r .me.id)
	inv=$(invite_only "$(lab_papo l1 invite)" 203.0.113.250 7700)
	addrs=$(invite_addrs "$inv")
	check "the invite for l2 holds only 203.0.113.250:7700: $(tr '\n' ' ' <<<"$addrs")" \
		test "$addrs" = 203.0.113.250:7700
	lab_papo l2 join "$inv" --name l2 >/dev/null
	lab_start l2 || return
	eventually 30 l2 "$(mid "$id") | .online and .path == \"lan\"" \
		"l2, whose invite holds no reachable address, finds l1 by beacon: online, path lan"
	eventually 10 l1 "$(m l2) | .online and .path == \"lan\"" \
		"l1 shows l2 online, path lan"
	talk l1 l2 "found by beacon"
	stop l1
	stop l2

	# The same with PAPO_LAN=off on both: nothing finds the way.
	lab_papo l3 new --name l3 >/dev/null
	PAPO_LAN=off lab_start l3 --advertise 203.0.113.250:7700 || return
	id=$(lab_api l3 /api/status | jq -r .me.id)
	inv=$(invite_only "$(lab_papo l3 invite)" 203.0.113.250 7700)
	lab_papo l4 join "$inv" --name l4 >/dev/null
	PAPO_LAN=off lab_start l4 || return
	sleep 20   # time tested: nothing finds the way within 20 s
	now_is l4 "$(mid "$id") | .online == false" \
		"with PAPO_LAN=off, after 20 s l4 still shows its inviter l3 offline"
	now_is l3 '[.members[] | select(.online)] | length == 0' \
		"with PAPO_LAN=off, after 20 s l3 sees no member online"
	say_queued l4 "l4, not found" l3
	stop l3
	stop l4
}

# 5. Presence through r5 only, then no path, then r5 again.
presence() {
	local t0 dt x text="a5 to b5 while r5 is away" n
	room r5 a5 b5 || return
	eventually 30 a5 "$(m b5) | .online and .path == \"via r5\"" \
		"a5 (cone) sees b5 (symmetric) online, path via r5"
	eventually 30 b5 "$(m a5) | .online and .path == \"via r5\"" \
		"b5 sees a5 online, path via r5"
	stop r5
	t0=$(date +%s%N)
	for x in "a5 b5" "b5 a5"; do
		set -- $x
		eventually 5 "$1" "$(m "$2") | .online == false and .path == \"none\" and
			(.last_seen | type) == \"number\"" \
			"within 5 s of r5 stopping, $1 shows $2 offline, path none, last_seen kept"
	done
	note "a5 and b5 show each other offline $(ms_since "$t0") ms after r5 stopped"
	say_queued a5 "$text" b5
	note "with no path to b5, papo say on a5 answered: $(cat "$T/say-a5")"
	lab_start r5 || return
	t0=$(date +%s%N)
	if until_true 60 history_has b5 "$text"; then
		ok
		note "the queued message reached b5 $(ms_since "$t0") ms after r5 started again"
	else
		fail "within 60 s of r5 starting again, b5's history lacks '$text';" \
			"a5: $(status_is a5 true; shown a5) b5: $(status_is b5 true; shown b5)"
	fi
	sleep 2   # time tested: no second copy within 2 s
	n=$(history_count b5 "$text")
	check "b5's history has the queued message once (has it $n times)" test "$n" = 1
	n=$(history_count a5 "$text")
	check "a5's history has it once (has it $n times)" test "$n" = 1
	stop r5
	stop a5
	stop b5
}

# 6. Junk on the QUIC port and in the beacon group.
bad_input() {
	local before after ip=${LABIP[m6]}
	room r6 m6 || return
	eventually 30 m6 "$(m r6) | .online and .path == \"direct\"" \
		"m6 shows r6 online, path direct"
	eventually 10 r6 "$(m m6) | .online and .path == \"direct\"" \
		"r6 shows m6 online, path direct"
	status_is m6 true
	before=$(jq -c '{punch: (.punch | del(.datagrams_bad)),
		members: [.members[] | {name, id, online, path}]}' "$T/status-m6")
	junk x6 "$ip" 7700 57 100 21
	junk x6 239.255.77.76 7776 79 100
	eventually 10 m6 '.punch.datagrams_bad >= 100' \
		"m6's punch.datagrams_bad counts the 100 bad punch datagrams"
	note "m6 punch after the junk: $(jq -c .punch "$T/status-m6")"
	sleep 1   # time tested: nothing changed 1 s after the junk
	status_is m6 true
	after=$(jq -c '{punch: (.punch | del(.datagrams_bad)),
		members: [.members[] | {name, id, online, path}]}' "$T/status-m6")
	check "nothing else in m6's status changed: before $before, after $after" \
		test "$before" = "$after"
	check "m6 still runs" kill -0 "$(cat "$T/m6.pid")"
	now_is r6 "$(m m6) | .online and .path == \"direct\"" \
		"r6 still shows m6 online, path direct"
	talk m6 r6 "after the junk"
	stop r6
	stop m6
}

command -v socat >/dev/null || { fail "no socat (case 6 sends datagrams with it)"; finish; exit 1; }
lab_up
lab_public r1 203.0.113.11
lab_public r2 203.0.113.12
lab_public r3 203.0.113.13
lab_public r5 203.0.113.15
lab_public r6 203.0.113.16
lab_nat nat1a cone 203.0.113.21 drop
lab_host a1 nat1a
lab_nat nat1b cone 203.0.113.22 drop
lab_host b1 nat1b
lab_nat nat2a cone 203.0.113.23
lab_host a2 nat2a
lab_nat nat2b cone 203.0.113.24
lab_host b2 nat2b
lab_nat nat3 cone 203.0.113.25
lab_host a3 nat3
lab_host b3 nat3
lab_nat nat4 cone 203.0.113.26
lab_host l1 nat4
lab_host l2 nat4
lab_host l3 nat4
lab_host l4 nat4
lab_nat nat5a cone 203.0.113.27
lab_host a5 nat5a
lab_nat nat5b symmetric 203.0.113.28
lab_host b5 nat5b
lab_nat nat6 cone 203.0.113.29
lab_host m6 nat6
lab_host x6 nat6
note "lab up after $(( $(date +%s) - began )) s"

punching r1 a1 b1 "cone NATs that drop unsolicited inbound"
note "case 1 done after $(( $(date +%s) - began )) s"
punching r2 a2 b2 "cone NATs without the drop"
note "case 2 done after $(( $(date +%s) - began )) s"
one_lan
note "case 3 done after $(( $(date +%s) - began )) s"
beacons
note "case 4 done after $(( $(date +%s) - began )) s"
presence
note "case 5 done after $(( $(date +%s) - began )) s"
bad_input
note "case 6 done after $(( $(date +%s) - began )) s"
# Every daemon still running must end cleanly on SIGTERM.
stop_all
note "took $(( $(date +%s) - began )) s"
finish
