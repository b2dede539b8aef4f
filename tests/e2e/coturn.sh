#!/usr/bin/env bash
# coturn.sh: the relay docker/ ships (docker/turnserver.conf, started by
# docker/coturn-entrypoint.sh as the image does, as the unprivileged
# "turnserver" user when the system has it) serves a room whose members
# are all behind symmetric NATs, with the REST secret; in the lab of
# lab.sh.  The config is used as shipped: no listening or relay address
# is given (coturn takes those of its host, as on a VPS), and the lab's
# "public" addresses, 203.0.113.0/24, are a documentation range the config
# denies, so the relay is started with TURN_ALLOWED_PEER_IP for them, as
# docker/README.md says a trial on a private network does.
#
#   turn 203.0.113.5: the shipped coturn
#   a behind nata, b behind natb: symmetric NATs dropping unsolicited
#     inbound; a has PAPO_TURN=turn:203.0.113.5:3478, PAPO_TURN_SECRET
#     and PAPO_TURN_USER=a; b has nothing set: it uses the relay of a's
#     invite, as host B of docker/compose.yaml does
#   c behind natc: a cone NAT; its PAPO_TURN_SECRET is wrong
#
# The promises under test (docker/README.md, "A relay for the room on a
# small VPS"):
#  1. The entrypoint refuses a missing, empty, short or spaced
#     TURN_SECRET and a TURN_ALLOWED_PEER_IP or TURN_EXTERNAL_IP that is no
#     address, with one line saying which, starting nothing.
#  2. The relay listens on UDP 3478 and on no TCP port at all (no TCP, no
#     TLS, no CLI); the config it runs with holds the secret and is
#     readable by its user alone.
#  3. Denied peers: started without TURN_ALLOWED_PEER_IP, the README's
#     check (turnutils_uclient -y: two allocations sending to each other)
#     from behind a NAT gets no data through, as the relay's own addresses
#     are in the documentation range it denies (403 Forbidden IP).
#     Started with it (and TURN_EXTERNAL_IP), the check passes: every
#     packet back.
#  4. a makes the room; its invite, taken once a is allocated, carries its
#     relayed address and the relay; b joins with it and uses that relay
#     (me.turn.from "invite").  No member is reachable directly,
#     and no other member exists: a and b reach each other relay to relay
#     (path "relay"), say things both ways (delivered), also 48 kB in one
#     message (near the most papo takes; the relay allows 64 kB/s a
#     session), and `papo status` shows the relay line.  The relay's log
#     has both allocations under REST user names (EXPIRY:a: b uses the
#     user the invite handed on) and holds no message text.
#  5. c's secret is wrong: its relay fails with 401, the reason naming the
#     shared secret.
#
# Needs root, iproute2, nftables and turnserver (coturn).  Without them
# it prints "SKIPPED: reason" and exits 77, which ctest shows as skipped.
# Usage: coturn.sh PATH_TO_PAPO
PAPO=${1:?usage: coturn.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lab.sh"
DOCKER=$(cd "$(dirname "$0")/../../docker" && pwd)
unset PAPO_TOKEN PAPO_ADVERTISE PAPO_PROTOCOL PAPO_INVITE PAPO_LISTEN \
	PAPO_HTTP PAPO_TURN PAPO_TURN_SECRET PAPO_TURN_USER PAPO_TURN_PASS \
	PAPO_TURN_SHARE TURN_SECRET TURN_EXTERNAL_IP \
	TURN_ALLOWED_PEER_IP
export PAPO_LOG=debug
SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
TURN=turn:203.0.113.5:3478
ALLOW=203.0.113.0-203.0.113.255
began=$(date +%s)

command -v turnserver >/dev/null || lab_skip "no turnserver (apt-get install coturn)"
command -v turnutils_uclient >/dev/null || lab_skip "no turnutils_uclient (coturn)"

# The relay runs as the image runs it: the unprivileged user Debian's
# coturn package makes, in a run directory of its own.
# Its two files are copied into a directory of its own, which it can read
# wherever the checkout is (a home of mode 0700, say), and it runs there.
RUN=$T/turn/run
AS=()
mkdir -m 0700 "$T/turn"
cp "$DOCKER/turnserver.conf" "$DOCKER/coturn-entrypoint.sh" "$T/turn/"
if id turnserver >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	AS=(setpriv --reuid=turnserver --regid=turnserver --clear-groups)
	chmod 0711 "$T"
	chown -R turnserver: "$T/turn"
fi

# entrypoint [VAR=VALUE...] [-- TURNSERVER ARGS...]: coturn-entrypoint.sh
# with the shipped config, in this namespace, as the relay's user.
entrypoint() {
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -eq 0 ] || shift
	(cd "$T/turn" && exec env -u TURN_SECRET TURN_CONF="$T/turn/turnserver.conf" \
		TURN_RUNDIR="$RUN" "${envs[@]}" "${AS[@]}" sh "$T/turn/coturn-entrypoint.sh" "$@")
}

# refused WHAT WHY VAR=VALUE...: the entrypoint refuses these settings
# with one line saying WHY, and starts or writes nothing.
refused() {
	local what=$1 why=$2; shift 2
	expect 64 "the entrypoint refuses $what" -- entrypoint "$@"
	has "$T/err" "^coturn-entrypoint: .*$why" "the entrypoint says why it refuses $what"
	lines "$T/err" 1 "the entrypoint's refusal of $what is one line"
	check "nothing was started or written for $what" test ! -e "$RUN"
}

# 1. Bad settings.
refusals() {
	refused "no TURN_SECRET" "set TURN_SECRET"
	refused "an empty TURN_SECRET" "set TURN_SECRET" TURN_SECRET=
	refused "a short TURN_SECRET" "too short \\(5 characters" TURN_SECRET=short
	refused "a TURN_SECRET with spaces" "visible ASCII" "TURN_SECRET=has a space in it, ok"
	refused "a bad TURN_ALLOWED_PEER_IP" "TURN_ALLOWED_PEER_IP is not an address" \
		TURN_SECRET="$SECRET" "TURN_ALLOWED_PEER_IP=10.0.0.1;x"
	refused "a bad TURN_EXTERNAL_IP" "TURN_EXTERNAL_IP is not an address" \
		TURN_SECRET="$SECRET" "TURN_EXTERNAL_IP=\$(id)"
}

# turn_start [VAR=VALUE...]: the shipped relay on the lab's host "turn".
turn_start() {
	rm -f "$T/turn.log"
	# From a subshell, as lab.sh starts its servers: no job of this
	# shell's.  ip netns exec execs env, which execs the rest: the pid
	# is turnserver's in the end.
	(cd "$T/turn" || exit
	ip netns exec "${LABNS[turn]}" env -u TURN_SECRET \
		TURN_CONF="$T/turn/turnserver.conf" TURN_RUNDIR="$RUN" \
		TURN_SECRET="$SECRET" "$@" "${AS[@]}" sh "$T/turn/coturn-entrypoint.sh" \
		>>"$T/turn.log" 2>&1 </dev/null &
	echo $! >"$T/turn.pid")
	until_true 10 lab_listening turn 3478 ||
		{ fail "the shipped turnserver did not start: $(tail -5 "$T/turn.log")"; return 1; }
}

# uclient NAME: the README's check, from NAME's namespace; its output in
# $T/uclient-NAME.
uclient() {
	lab_in "$1" timeout 60 turnutils_uclient -y -c -n 20 -W "$SECRET" \
		203.0.113.5 >"$T/uclient-$1" 2>&1
}
not_listening() { ! lab_listening "$1" "$2"; }

# 2 and 3: what the relay listens on, and denied peers.
listening_and_denied() {
	local tcp perm
	turn_start || return
	tcp=$(lab_in turn ss -Hltn)
	check "the relay listens on no TCP port (no TCP, TLS or CLI): $tcp" test -z "$tcp"
	lab_in turn ss -Hlun 'sport = :3478' >"$T/turn-udp"
	has "$T/turn-udp" ' 203\.0\.113\.5:3478 ' "the relay listens on UDP 203.0.113.5:3478, its host's address"
	check "the config with the secret is in the run directory" \
		grep -qx "static-auth-secret=$SECRET" "$RUN/turnserver.conf"
	perm=$(stat -c '%a %U' "$RUN/turnserver.conf")
	check "only the relay's user reads it ($perm)" \
		test "$perm" = "600 $( [ ${#AS[@]} -gt 0 ] && echo turnserver || echo root)"
	check "the secret is on no command line" \
		bash -c "! grep -q -- '$SECRET' /proc/$(cat "$T/turn.pid")/cmdline"
	uclient a
	has "$T/uclient-a" '403 \(Forbidden IP\)' \
		"without TURN_ALLOWED_PEER_IP, the relay refuses its own addresses, in the denied 203.0.113.0/24, as peers (403 Forbidden IP)"
	check "and nothing went through: $(tail -2 "$T/uclient-a")" \
		bash -c "! grep -q 'Total lost packets' '$T/uclient-a'"
	crash turn
	check "the relay is gone once killed" until_true 10 not_listening turn 3478
	# (TURN_EXTERNAL_IP as on a host behind a 1:1 NAT, here the host's
	# own address: the relayed addresses stay what they are.)
	turn_start TURN_ALLOWED_PEER_IP="$ALLOW" TURN_EXTERNAL_IP=203.0.113.5 || return
	has "$RUN/turnserver.conf" "^allowed-peer-ip=$ALLOW$" \
		"TURN_ALLOWED_PEER_IP is in the config the relay runs with"
	has "$RUN/turnserver.conf" "^external-ip=203\.0\.113\.5$" \
		"TURN_EXTERNAL_IP is in the config the relay runs with"
	uclient a
	has "$T/uclient-a" 'tot_send_msgs=40, tot_recv_msgs=40$' \
		"with it, the README's check sends 40 packets through the relay and gets 40 back"
	has "$T/uclient-a" 'Total lost packets 0 \(' "the README's check loses no packet"
}

relayed_both() {
	status_is "$1" "$(m "$2") | .online and .path == \"relay\"" &&
		status_is "$2" "$(m "$1") | .online and .path == \"relay\""
}
allocated() { status_is "$1" '.me.turn.state == "allocated"'; }

# 4. Two members behind symmetric NATs, nobody else, through the relay.
room_through_relay() {
	local inv x y t0 n
	lab_papo a new --name a >/dev/null
	PAPO_TURN=$TURN PAPO_TURN_SECRET=$SECRET PAPO_TURN_USER=a lab_start a || return
	eventually 20 a '.me.turn.state == "allocated" and
		(.me.turn.relayed | startswith("203.0.113.5:")) and
		.me.turn.server == "203.0.113.5:3478" and .me.turn.reason == null' \
		"a (symmetric NAT) is allocated on the shipped relay, a relayed address on 203.0.113.5"
	inv=$(lab_papo a invite)
	y=$(jq -r .me.turn.relayed "$T/status-a")
	invite_addrs "$inv" >"$T/invite-a"
	has "$T/invite-a" "^${y//./\\.}$" "a's invite carries its relayed address $y"
	lab_papo b join "$inv" --name b >/dev/null
	t0=$(date +%s%N)
	lab_start b || return
	if until_true 40 relayed_both a b; then
		ok
		note "a and b relayed $(( ($(date +%s%N) - t0) / 1000000 )) ms after b started"
	else
		fail "within 40 s a and b (symmetric NATs, nobody else) do not show each other relayed;" \
			"a: $(shown a); b: $(shown b)"
	fi
	now_is b '.me.turn.state == "allocated" and .me.turn.from == "invite" and
		.me.turn.server == "203.0.113.5:3478"' \
		"b, with no relay set, is allocated on the relay of a's invite"
	for x in "a b" "b a"; do
		set -- $x
		y="$1 to $2 through the shipped relay"
		say_ok "$1" "$y" " delivered to .*\\b$2\\b" "$y is delivered"
		check "$2's history has '$y'" until_true 10 history_has "$2" "$y"
		now_is "$1" "$(m "$2") | .online and .path == \"relay\" and
			(.rtt_ms | type) == \"number\"" "$1 shows $2 relayed, with its RTT"
	done
	x="a's long one $(head -c 48000 /dev/zero | tr '\0' y)"
	say_ok a "$x" ' delivered to .*\bb\b' "48 kB from a (near the most a message holds) is delivered through the relay"
	check "b's history has a's 48 kB message" until_true 20 history_has b "$x"
	note "turnserver's resident memory while relaying for a and b: $(awk '/^VmRSS/ { print $2, $3 }' "/proc/$(cat "$T/turn.pid")/status")"
	lab_papo b status >"$T/papo-status-b" 2>&1
	has "$T/papo-status-b" '^relay: allocated at 203\.0\.113\.5:[0-9]+ on 203\.0\.113\.5:3478 \(from the invite\)$' \
		"papo status on b has the relay line: the relay of a's invite"
	has "$T/papo-status-b" '^  a  online .* path: relay, [0-9.]+ ms' \
		"papo status on b says a's path is relay"
	# What the relay keeps of them: allocations under REST user names; b
	# uses the user a's invite handed on with the relay (a's, "a").
	n=$(grep -E 'session [0-9]+: realm <papo> user <[0-9]+:a>: incoming packet ALLOCATE processed, success' \
		"$T/turn.log" | sed 's/: realm.*//' | sort -u | wc -l)
	check "the relay's log has a's and b's allocations under REST user names EXPIRY:a ($n sessions)" \
		test "$n" -ge 2
	check "no message text is in the relay's log" \
		bash -c "! grep -q 'through the shipped relay' '$T/turn.log'"
	stop a
	stop b
}

# 5. A wrong secret.
wrong_secret() {
	lab_papo c new --name c >/dev/null
	PAPO_TURN=$TURN PAPO_TURN_SECRET=not-the-secret-of-this-relay lab_start c || return
	eventually 20 c '.me.turn.state == "failed" and
		(.me.turn.reason | test("^401 .*shared secret"))' \
		"c (a wrong secret): the relay fails with 401, naming the shared secret"
	stop c
}

lab_up
refusals
lab_public turn 203.0.113.5
lab_nat nata symmetric 203.0.113.21 drop
lab_host a nata
lab_nat natb symmetric 203.0.113.22 drop
lab_host b natb
lab_nat natc cone 203.0.113.23
lab_host c natc
note "lab up after $(( $(date +%s) - began )) s"

listening_and_denied
room_through_relay
wrong_secret
note "took $(( $(date +%s) - began )) s"
finish
