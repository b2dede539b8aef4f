#!/usr/bin/env bash
# relay.sh: members with no direct path talk through a TURN relay the user
# chose (PAPO_TURN), in the lab of lab.sh (network namespaces, nftables
# NATs) with coturn as the TURN server.  Every daemon listens on
# 0.0.0.0:7700, logs at debug level ($T/NAME.err) and, but c3, has
# PAPO_TURN=turn:203.0.113.5:3478 PAPO_TURN_USER=u PAPO_TURN_PASS=p.
#
#   turn 203.0.113.5: coturn (lab_turn)
#   r1, r3, r6: public hosts (203.0.113.11...), each a room's maker
#   a1 behind nat1a: a cone NAT dropping unsolicited inbound
#   b1 behind nat1b: a symmetric NAT dropping unsolicited inbound
#   f2 behind nat2f: a cone NAT dropping unsolicited inbound
#   g2 behind nat2g: a symmetric NAT dropping unsolicited inbound; no
#     PAPO_TURN of its own
#   c3 behind nat3: a cone NAT; its TURN password is wrong
#   d6, e6 behind nat6d, nat6e: cone NATs dropping unsolicited inbound,
#     which the internet router keeps apart until case 6 lets them meet
#
# The promises under test (docs/REACHABILITY.md, "The relay"):
#  1. a1 (cone) and b1 (symmetric) join r1's room; they cannot punch, so
#     they reach each other relay to relay: each shows the other with path
#     "relay" (a numeric rtt_ms), and me.turn is allocated (`papo status`:
#     "relay: allocated at 203.0.113.5:PORT on 203.0.113.5:3478").  r1
#     stops: within 10 s messages go both ways, `papo say` answering
#     delivered, and the paths stay "relay"; so does one of 40 kB (full
#     packets in TURN's wrapping).
#  4. Then the TURN server is killed (r1 still stopped): a say answers
#     queued, on each side; me.turn comes to say failed, with the reason
#     (no answer).  turnserver starts again on the same address: both
#     allocate again (a new relayed address: coturn keeps nothing), and,
#     once r1 is back to tell them of those, the queued messages arrive,
#     each exactly once on both sides; a1 and b1 are relayed again, and
#     after r1 stops once more they still talk.
#  2. f2 makes a room and serve prints the invite once the relay has
#     answered: it carries f2's relayed address and the relay (URL and
#     credentials).  g2, with no PAPO_TURN, joins it, nobody public in the
#     room: g2 uses the invite's relay (me.turn.from "invite", `papo
#     status` "(from the invite)"), reaches f2 relay to relay, and they
#     talk both ways.  With PAPO_TURN_SHARE=off f2's invite leaves the
#     relay out.
#  3. c3's TURN password is wrong: its status says me.turn failed with a
#     reason naming the credentials, its log says so in one line, and it
#     talks to r3 (direct, both ways) as if no relay were set.
#  6. d6 and e6 (cone NATs both) join r6's room while the internet keeps
#     their NATs apart: no punch works, they are relayed (path "relay").
#     r6 stops; they talk through the relay.  Then the way between the
#     NATs opens, r6 still stopped: their path becomes "punched" (the
#     punch arranged over the relayed connection, with the addresses the
#     TURN server sees them at), while each of them says something every
#     2 s throughout; r6 returns and nothing changes but that; every
#     message is in both histories exactly once.
#  7. j7 (symmetric NAT) makes a room; k7 (symmetric NAT) joins from its
#     invite, which has j7's relayed address beside its private one (no
#     public member): k7 reaches j7 through the relay before its dial to
#     the private address has timed out (5 s; until then it was not
#     dialled at the relayed one: docs/PERFORMANCE.md, "The relay"), and
#     they talk.
#
# Needs root, iproute2, nftables and turnserver (coturn).  Without them
# it prints "SKIPPED: reason" and exits 77, which ctest shows as skipped.
# Usage: relay.sh PATH_TO_PAPO
PAPO=${1:?usage: relay.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN \
	PAPO_HTTP PAPO_TURN_SECRET
export PAPO_LOG=debug
export PAPO_TURN=turn:203.0.113.5:3478 PAPO_TURN_USER=u PAPO_TURN_PASS=p
began=$(date +%s)
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

relayed_both() {
	status_is "$1" "$(m "$2") | .online and .path == \"relay\"" &&
		status_is "$2" "$(m "$1") | .online and .path == \"relay\""
}
not_listening() { ! lab_listening "$1" "$2"; }

# 1 and 4: a1 (cone) and b1 (symmetric) through the relay.
cone_symmetric() {
	local t0 dt x y q1 q2 n
	room r1 a1 b1 || return
	for x in r1 a1 b1; do
		eventually 20 "$x" '.me.turn.state == "allocated" and
			(.me.turn.relayed | startswith("203.0.113.5:")) and
			.me.turn.server == "203.0.113.5:3478" and .me.turn.reason == null and
			(.me.addrs[-1] == .me.turn.relayed)' \
			"$x: me.turn allocated on 203.0.113.5:3478, its relayed address advertised last"
	done
	t0=$(date +%s%N)
	if until_true 30 relayed_both a1 b1; then
		ok
		note "a1 and b1 relayed $(ms_since "$t0") ms after all three allocated"
	else
		fail "within 30 s a1 (cone) and b1 (symmetric) do not both show the other with path relay;" \
			"a1: $(shown a1); b1: $(shown b1)"
	fi
	for x in "a1 b1" "b1 a1"; do
		set -- $x
		# Its own: dialled, or punched when b1's dial met a punch of
		# r1's under way (a slow start); never through the relay.
		now_is r1 "$(m "$1") | .online and (.path | IN(\"direct\", \"punched\"))" \
			"r1 reaches $1 on a path of its own (it beats the relay)"
	done
	stop r1
	t0=$(date +%s%N)
	talk a1 b1 "r1 stopped"
	dt=$(ms_since "$t0")
	check "with r1 stopped, a1 and b1 exchanged messages both ways through the relay within 10 s (took $dt ms)" \
		test "$dt" -le 10000
	for x in "a1 b1" "b1 a1"; do
		set -- $x
		now_is "$1" "$(m "$2") | .online and .path == \"relay\" and
			(.rtt_ms | type) == \"number\" and .protocol == 5" \
			"with r1 stopped, $1 shows $2 online, path relay, a numeric rtt_ms, protocol 5"
	done
	# A message of 40,000 bytes: full-size packets through the relay.
	x="a1's long one $(head -c 40000 /dev/zero | tr '\0' x)"
	say_ok a1 "$x" ' delivered to .*\bb1\b' "a message of 40 kB from a1 is delivered through the relay"
	check "b1's history has a1's 40 kB message" until_true 10 history_has b1 "$x"
	lab_papo a1 status >"$T/papo-status-a1" 2>&1
	has "$T/papo-status-a1" '^  b1  online .* path: relay, [0-9.]+ ms' \
		"papo status on a1 says b1's path is relay, with its RTT"
	has "$T/papo-status-a1" '^relay: allocated at 203\.0\.113\.5:[0-9]+ on 203\.0\.113\.5:3478$' \
		"papo status on a1 has the relay line"

	# 4. The TURN server killed mid-room, r1 still stopped.
	crash turn
	until_true 10 not_listening turn 3478
	q1="a1 to b1 while the relay is down" q2="b1 to a1 while the relay is down"
	say_ok a1 "$q1" ' queued' "with the TURN server gone, a1's say answers queued"
	say_ok b1 "$q2" ' queued' "with the TURN server gone, b1's say answers queued"
	t0=$(date +%s%N)
	for x in a1 b1; do
		eventually 90 "$x" '.me.turn.state == "failed" and
			(.me.turn.reason | test("no answer")) and .me.turn.relayed == null and
			(.me.addrs | all(startswith("203.0.113.5:") | not))' \
			"$x: me.turn failed (no answer from the server), no relayed address advertised"
	done
	note "a1 and b1 showed the relay failed $(ms_since "$t0") ms after the first queued say"
	n=$(grep -c 'relay: 203.0.113.5:3478 failed' "$T/a1.err")
	check "a1 logged the relay's failure in one line ($n)" test "$n" = 1
	lab_turn_start turn
	t0=$(date +%s%N)
	for x in a1 b1; do
		eventually 120 "$x" '.me.turn.state == "allocated"' \
			"$x allocates again once turnserver is back on the same address"
	done
	note "a1 and b1 allocated again $(ms_since "$t0") ms after turnserver started again"
	# Nothing can tell a1 and b1 each other's new relayed address but a
	# member reachable by both: r1.
	lab_start r1 || return
	t0=$(date +%s%N)
	for x in "b1 $q1" "a1 $q2"; do
		set -- $x
		y=${x#* }
		if until_true 60 history_has "$1" "$y"; then ok; else
			fail "within 60 s of r1 starting again, $1's history lacks '$y'; $(status_is "$1" true; shown "$1")"
		fi
	done
	note "the queued messages arrived $(ms_since "$t0") ms after r1 started again"
	if until_true 60 relayed_both a1 b1; then ok; else
		fail "a1 and b1 are not relayed again after the TURN server's restart;" \
			"a1: $(shown a1); b1: $(shown b1)"
	fi
	stop r1
	talk a1 b1 "relayed again, r1 stopped again"
	sleep 2   # time tested: no second copy within 2 s
	for x in a1 b1; do
		once "$x" "$q1"
		once "$x" "$q2"
	done
	stop a1
	stop b1
}

# 2. Behind NATs both, nobody public: the invite carries the relay.
invite_relay() {
	local inv printed rc
	lab_papo f2 new --name f2 >/dev/null
	lab_start f2 || return
	eventually 20 f2 '.me.turn.state == "allocated" and .me.turn.from == "settings"' \
		"f2: me.turn allocated, from its settings"
	inv=$(lab_papo f2 invite)
	# The banner waits for the relay; serve's output, not a terminal,
	# holds no invite, and papo invite has the relayed address.
	until_true 10 grep -q '^room: ' "$T/f2.out"
	check "serve printed no invite into its log" test -z "$(grep papo1 "$T/f2.out")"
	check "papo invite is serve.json's, with the relayed address" \
		test "$(jq -r .invite "$T/f2/serve.json")" = "$inv"
	lab_papo g2 join "$inv" --name g2 >/dev/null
	check "g2's room.json keeps the invite's relay" \
		jq -e '.relay == {url: "turn:203.0.113.5:3478", user: "u", pass: "p", secret: ""}' \
		"$T/g2/room.json"
	# g2 has no relay of its own (and lab_start must run in this shell,
	# whose child the daemon is).
	unset PAPO_TURN PAPO_TURN_USER PAPO_TURN_PASS
	lab_start g2; rc=$?
	export PAPO_TURN=turn:203.0.113.5:3478 PAPO_TURN_USER=u PAPO_TURN_PASS=p
	[ "$rc" = 0 ] || return
	eventually 20 g2 '.me.turn.state == "allocated" and .me.turn.from == "invite" and
		.me.turn.server == "203.0.113.5:3478"' \
		"g2 (no PAPO_TURN): me.turn allocated on the invite's relay"
	lab_papo g2 status >"$T/papo-status-g2" 2>&1
	has "$T/papo-status-g2" '^relay: allocated at 203\.0\.113\.5:[0-9]+ on 203\.0\.113\.5:3478 \(from the invite\)$' \
		"papo status on g2 says the relay came from the invite"
	eventually 20 g2 "$(m f2) | .online and .path == \"relay\"" \
		"g2 reaches f2 through the relay"
	eventually 20 f2 "$(m g2) | .online and .path == \"relay\"" \
		"f2 reaches g2 through the relay"
	talk f2 g2 "the relay from the invite"
	stop g2
	stop f2
	PAPO_TURN_SHARE=off lab_start f2 || return
	eventually 20 f2 '.me.turn.state == "allocated"' "f2 allocated again"
	rm -rf "$T/probe"
	PAPO_HOME="$T/probe" "$PAPO" join "$(lab_papo f2 invite)" --name p >/dev/null
	check "with PAPO_TURN_SHARE=off the invite has no relay" \
		jq -e 'has("relay") | not' "$T/probe/room.json"
	stop f2
}

# 3. Wrong TURN credentials on one side.
wrong_password() {
	local n
	lab_papo r3 new --name r3 >/dev/null
	lab_start r3 || return
	lab_papo c3 join "$(lab_papo r3 invite)" --name c3 >/dev/null
	PAPO_TURN_PASS=wrong lab_start c3 || return
	eventually 20 c3 '.me.turn.state == "failed" and
		(.me.turn.reason | test("user or password")) and .me.turn.relayed == null' \
		"c3 (a wrong password): me.turn failed, the reason naming the credentials"
	note "c3's relay: $(jq -c .me.turn "$T/status-c3")"
	lab_papo c3 status >"$T/papo-status-c3" 2>&1
	has "$T/papo-status-c3" '^relay: failed \(401 .*wrong TURN user or password\)$' \
		"papo status on c3 says the relay failed, and why"
	eventually 20 c3 "$(m r3) | .online and .path == \"direct\"" \
		"c3 reaches r3 directly all the same"
	eventually 20 r3 "$(m c3) | .online and .path == \"direct\"" \
		"r3 reaches c3 directly"
	talk c3 r3 "with c3's relay refused"
	sleep 6   # time tested: retries within 6 s log nothing more
	n=$(grep -c 'relay:.*failed' "$T/c3.err")
	check "c3's log has the failure in one line, not once per retry ($n): $(grep 'relay:' "$T/c3.err" | head -3)" \
		test "$n" = 1
	has "$T/c3.err" 'warn: relay: 203\.0\.113\.5:3478 failed: 401 .*wrong TURN user or password' \
		"c3's log line gives the reason"
	stop c3
	stop r3
}

# 6. Relayed, then a punched path appears.
relay_then_punch() {
	local t0 x y pid n bad
	lab_block nat6d nat6e
	room r6 d6 e6 || return
	t0=$(date +%s%N)
	if until_true 40 relayed_both d6 e6; then
		ok
		note "d6 and e6 (kept apart) relayed $(ms_since "$t0") ms after starting"
	else
		fail "within 40 s d6 and e6, whose NATs are kept apart, are not relayed;" \
			"d6: $(shown d6); e6: $(shown e6)"
	fi
	stop r6
	talk d6 e6 "relayed, r6 stopped"
	# Each says something every 2 s while the path changes.
	chatter() {
		local k=0
		while [ ! -e "$T/chatter.stop" ]; do
			k=$((k + 1))
			lab_papo d6 say "d6 chatter $k" >/dev/null 2>&1
			lab_papo e6 say "e6 chatter $k" >/dev/null 2>&1
			echo "$k" >"$T/chatter.n"
			sleep 2   # time tested: a line each every 2 s
		done
	}
	rm -f "$T/chatter.stop"
	chatter &
	pid=$!
	sleep 4   # time tested: chatter on the relay before the way opens
	# The way opens; nobody is connected to both: the punch is arranged
	# over the relayed connection, with the addresses the TURN server
	# sees them at.
	lab_unblock nat6d nat6e
	t0=$(date +%s%N)
	punched_both() {
		status_is d6 "$(m e6) | .online and .path == \"punched\"" &&
			status_is e6 "$(m d6) | .online and .path == \"punched\""
	}
	# Punching rests 60 s after three failed attempts, which the blocked
	# way made: the next one comes within some 80 s.
	if until_true 100 punched_both; then
		ok
		note "d6 and e6 punched $(ms_since "$t0") ms after their NATs could meet, with r6 stopped"
	else
		fail "within 100 s of the way opening, d6 and e6 do not both show the other punched;" \
			"d6: $(shown d6) $(grep -h 'punch:' "$T/d6.err" | tail -3 | tr '\n' '|');" \
			"e6: $(shown e6) $(grep -h 'punch:' "$T/e6.err" | tail -3 | tr '\n' '|')"
	fi
	sleep 6   # time tested: chatter on the punched path
	touch "$T/chatter.stop"
	wait "$pid"
	lab_start r6 || return
	talk d6 e6 "punched, r6 back"
	for x in "d6 e6" "e6 d6"; do
		set -- $x
		eventually 10 "$1" "$(m "$2") | .online and .path == \"punched\" and
			(.rtt_ms | type) == \"number\"" \
			"with r6 back, $1 still shows $2 punched"
		# (punched too, when the member that brought news of r6's
		# return started a punch before r6's own dial greeted).  r6's
		# dials pass $1's NAT only while $1's last dial to r6 (every
		# 30 s at most, backing off) keeps its mapping, 30 s in Linux's
		# conntrack: else $1's next dial finds r6, up to 35 s on.
		eventually 40 "$1" "$(m r6) | .online and (.path | IN(\"direct\", \"punched\"))" \
			"$1 reaches r6 on a path of its own, not the relay"
	done
	n=$(cat "$T/chatter.n")
	note "each said $n lines while the path changed"
	sleep 2   # time tested: the last lines arrive, no copy comes, within 2 s
	for x in d6 e6; do
		lab_papo "$x" history --json -n 500 >"$T/hist-$x.json"
		bad=$(jq -r '[.messages[].text | select(test("^(d6|e6) chatter "))] |
			group_by(.) | map(select(length != 1) | "\(.[0]) x\(length)") | .[]' "$T/hist-$x.json")
		check "$x: no chatter line twice: $bad" test -z "$bad"
		bad=$(jq -r '[.messages[].text | select(test("^(d6|e6) chatter "))] | unique | length' "$T/hist-$x.json")
		check "$x: every chatter line ($bad of $((2 * n)))" test "$bad" = "$((2 * n))"
	done
	stop r6
	stop d6
	stop e6
}

# 7. A joiner behind a symmetric NAT, from a relayed member's invite.
joiner() {
	local inv relayed addrs
	lab_papo j7 new --name j7 >/dev/null
	lab_start j7 || return
	eventually 20 j7 '.me.turn.state == "allocated"' "j7: me.turn allocated"
	relayed=$(jq -r .me.turn.relayed "$T/status-j7")
	inv=$(lab_papo j7 invite)
	addrs=$(invite_addrs "$inv" | tr '\n' ' ')
	case " $addrs" in
	*" $relayed "*) ok ;;
	*) fail "j7's invite lacks its relayed address $relayed: $addrs" ;;
	esac
	lab_papo k7 join "$inv" --name k7 >/dev/null
	lab_start k7 || return
	eventually 30 k7 "$(m j7) | .online and .path == \"relay\"" \
		"k7 reaches j7 through the relay"
	check "k7 was relayed to j7 before its dial to j7's private address timed out: $(grep -m1 'connection (not greeted) out closed' "$T/k7.err")" \
		bash -c "! grep -q 'connection (not greeted) out closed' '$T/k7.err'"
	talk j7 k7 "k7 joined from j7's invite"
	stop k7
	stop j7
}

lab_up
lab_turn turn 203.0.113.5
lab_public r1 203.0.113.11
lab_public r3 203.0.113.13
lab_public r6 203.0.113.16
lab_nat nat1a cone 203.0.113.21 drop
lab_host a1 nat1a
lab_nat nat1b symmetric 203.0.113.22 drop
lab_host b1 nat1b
lab_nat nat2f cone 203.0.113.24 drop
lab_host f2 nat2f
lab_nat nat2g symmetric 203.0.113.25 drop
lab_host g2 nat2g
lab_nat nat3 cone 203.0.113.23
lab_host c3 nat3
lab_nat nat6d cone 203.0.113.26 drop
lab_host d6 nat6d
lab_nat nat6e cone 203.0.113.27 drop
lab_host e6 nat6e
lab_nat nat7j symmetric 203.0.113.28
lab_host j7 nat7j
lab_nat nat7k symmetric 203.0.113.29
lab_host k7 nat7k
note "lab up after $(( $(date +%s) - began )) s"

cone_symmetric
note "cases 1 and 4 done after $(( $(date +%s) - began )) s"
invite_relay
note "case 2 done after $(( $(date +%s) - began )) s"
wrong_password
note "case 3 done after $(( $(date +%s) - began )) s"
relay_then_punch
note "case 6 done after $(( $(date +%s) - began )) s"
joiner
note "case 7 done after $(( $(date +%s) - began )) s"
for p in "$T"/*.pid; do
	[ -e "$p" ] && [ "$(basename "$p")" != turn.pid ] && stop "$(basename "$p" .pid)"
done
note "took $(( $(date +%s) - began )) s"
finish
